#!/usr/bin/env bash
# Damage is found and reported, never taken for a shorter queue: in a queue
# of 100 products, 64 bytes changed inside one product's data (pqcheck -C
# names invariant 15 and the product; pqcat -C reports it by identifier and
# insertion time, writes the 99 others and exits 1), 2 KiB of random bytes
# over the time index (pqcat exits 1 with a message; pqcheck -C: invariant
# 7) and 64 KiB over the slot table (pqcat exits 1; invariant 3).  After
# each, pqcheck -F repairs what the slots still hold.  8 bytes flipped inside
# one product's data are found without options: plain pqcat reports the
# product (insertion time, signature, identifier), writes the others and
# exits 1 (-N writes it as it is), and plain pqcheck reports it and exits 4;
# plain pqcheck names the invariant a damaged index fails.  The random bytes come
# from a seed, printed; PQ_TEST_SEED=N in the environment replays a run
# (seed_init, common.sh).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

seed_init

# noise N SEED: N pseudo-random bytes on stdout, the same for the same SEED.
noise() {
  local i h s=""
  RANDOM=$2
  for ((i = 0; i < $1; i++)); do
    printf -v h '\\x%02x' $((RANDOM & 255))
    s+=$h
  done
  printf "$s" # only \x escapes: no % in the format
}

# overwrite OFFSET N SEED: N pseudo-random bytes over the queue at OFFSET.
overwrite() {
  noise "$2" "$3" | dd of="$Q" bs=1 seek="$1" conv=notrunc status=none ||
    fail "dd into $Q"
  (($(stat -c %s "$Q") == size)) || fail "dd changed the size of $Q"
}

# A queue of 100 products with 1024 slots (a slot table of 64 KiB).
expect_rc 0 pqcreate -s 4M -S 1024
make_files f 100 2000
expect_rc 0 pqinsert f/f*
expect_rc 0 pqcheck -C -v
expect_in "$ERR" "every invariant holds: 100 products"
cp "$Q" pristine.pq
size=$(stat -c %s "$Q")
cat f/f* >all
read -r slots nodes < <("$HELPER" layout "$Q" | awk '{print $2, $4}')
[[ -n $slots && -n $nodes ]] || fail "no layout for $Q"

# 1. 64 bytes changed inside the data of one product.
read -r off len < <("$HELPER" where "$Q" f/f00042)
((len == 2000)) || fail "product f/f00042 is $len bytes, not 2000"
overwrite $((off + 1000)) 64 "$SEED"
cmp -s "$Q" pristine.pq && fail "the noise left the file unchanged"
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 15 failed"
expect_in "$ERR" "f/f00042"
expect_rc 1 pqcat -C
expect_in "$ERR" "damaged product inserted 2"
expect_in "$ERR" "f/f00042"
expect_in "$ERR" "damaged products not written: 1"
find f -type f ! -name f00042 | sort | xargs cat >others
cmp -s "$OUT" others || fail "pqcat -C did not write exactly the 99 others"
ok "64 bytes changed in a product: pqcheck -C (4, invariant 15), pqcat -C (1)"
expect_rc 0 pqcheck -F
expect_in "$ERR" "dropped 1 damaged products"
expect_rc 0 pqcheck -C -v
expect_in "$ERR" "every invariant holds: 99 products"
expect_rc 0 pqcat -C
cmp -s "$OUT" others || fail "the 99 sound products changed in the repair"
ok "pqcheck -F dropped the damaged product, kept the 99 others"

# 1b. 8 bytes flipped inside the data of one product: no option needed.
cp pristine.pq "$Q"
read -r off len < <("$HELPER" where "$Q" f/f00007)
((len == 2000)) || fail "product f/f00007 is $len bytes, not 2000"
flip_bytes "$Q" $((off + 500)) 8 || fail "cannot flip bytes of $Q"
sig=$(md5sum <f/f00007 | awk '{print $1}')
expect_rc 4 pqcheck
expect_in "$ERR" "damaged product inserted 2"
expect_in "$ERR" "signature $sig: f/f00007"
expect_in "$ERR" "holds 1 damaged product"
(($(grep -c "damaged product inserted" "$ERR") == 1)) ||
  fail "pqcheck reported the damaged product more than once"
expect_rc 1 pqcat
expect_in "$ERR" "damaged product inserted 2"
expect_in "$ERR" "signature $sig: f/f00007"
expect_in "$ERR" "damaged products not written: 1"
find f -type f ! -name f00007 | sort | xargs cat >others7
cmp -s "$OUT" others7 || fail "pqcat did not write exactly the 99 others"
expect_rc 0 pqcat -N
(($(stat -c %s "$OUT") == $(stat -c %s all))) || fail "pqcat -N left out data"
cmp -s "$OUT" all && fail "pqcat -N wrote sound bytes for the damaged product"
ok "8 bytes flipped in a product: plain pqcheck (4) and pqcat (1) report it"

# 2. 2 KiB of random bytes over the time index.
cp pristine.pq "$Q"
overwrite "$nodes" 2048 "$SEED"
expect_rc 1 pqcat
expect_in "$ERR" "pq_next failed"
expect_in "$ERR" "time index damaged"
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 7 failed"
expect_rc 4 pqcheck
expect_in "$ERR" "invariant 7 failed"
ok "2 KiB over the time index: pqcat (1, message), pqcheck [-C] (4, invariant 7)"
expect_rc 0 pqcheck -F
expect_rc 0 pqcat -C
cmp -s "$OUT" all || fail "the repaired queue does not hold the 100 products"
ok "pqcheck -F rebuilt the time index from the slots: 100 products"

# 3. 64 KiB of random bytes over the slot table.
cp pristine.pq "$Q"
overwrite "$slots" 65536 "$SEED"
expect_rc 1 pqcat
expect_in "$ERR" "pq_next failed"
expect_in "$ERR" "slot table damaged"
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 3 failed"
ok "64 KiB over the slot table: pqcat (1, message), pqcheck -C (4, invariant 3)"
expect_rc 0 pqcheck -F
expect_rc 0 pqcheck -C
expect_rc 0 pqcat -s
ok "pqcheck -F dropped the slots it could not trust: the queue is sound"
