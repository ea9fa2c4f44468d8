#!/usr/bin/env bash
# A stray 64-bit write over the header's roots loses nothing and is
# reported (issue 21, item 4).  In a queue of 100 products with room for
# many more: a 0 over the write head makes pqcheck -C fail invariant 14
# (exit 4); the next pqinsert is refused with a message (nothing evicted),
# the one after succeeds, and every product is still there.  With the last
# insertion time damaged too, pqcheck -C fails invariant 8, pqinsert is
# refused the same way, and pqcheck -F says what it changed (the write
# head, the last insertion time) and that it dropped nothing: the 100
# products are all there.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

# poke FIELD VALUE: VALUE as 8 little-endian bytes over the header field
# FIELD (pqclihelper offset), as a stray write would leave it.
poke() {
  local off i h s=""
  off=$("$HELPER" offset "$1") || fail "no offset for header field $1"
  for ((i = 0; i < 8; i++)); do
    printf -v h '\\x%02x' $((($2 >> (8 * i)) & 255))
    s+=$h
  done
  # shellcheck disable=SC2059 # only \x escapes: no % in the format
  printf "$s" | dd of="$Q" bs=1 seek="$off" conv=notrunc status=none ||
    fail "dd into $Q"
}

expect_rc 0 pqcreate -s 4M -S 1024
make_files f 100 2000
make_files g 2 2000
expect_rc 0 pqinsert f/f*
cp "$Q" pristine.pq
cat f/f* >all
cat f/f* g/f00000 >all_g

# 1. The write head set to 0, the start of the area, where the oldest lie.
poke head 0
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 14 failed"
expect_in "$ERR" "write head 0 is not in the free space after its region"
ok "a 0 over the write head: pqcheck -C fails invariant 14 (4)"
expect_rc 1 pqinsert g/f00000
expect_in "$ERR" "header damaged"
expect_in "$ERR" "nothing evicted"
expect_rc 0 pqinsert g/f00000
expect_rc 0 pqcheck -C
expect_rc 0 pqcat
cmp -s "$OUT" all_g || fail "a product was lost: pqcat is not the 101"
ok "the insert that met it was refused, evicting nothing; the next went in"

# 2. The head and the last insertion time both damaged.
cp pristine.pq "$Q"
poke head 0
poke last_key -1
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 8 failed"
expect_rc 1 pqinsert g/f00000
expect_in "$ERR" "nothing evicted"
expect_rc 0 pqcat
cmp -s "$OUT" all || fail "a product was lost after the refused insert"
ok "head and last insertion time damaged: -C (4, invariant 8), insert refused"
cp pristine.pq "$Q"
poke head 0
poke last_key -1
expect_rc 0 pqcheck -F
expect_in "$ERR" "write head moved from 0 (after slot 99) to"
expect_in "$ERR" "last insertion time was 18446744073709551615, now"
expect_in "$ERR" "dropped 0 damaged products; the header counted 100 products, the queue holds 100"
expect_rc 0 pqcheck -C
expect_rc 0 pqcat
cmp -s "$OUT" all || fail "pqcheck -F lost a product"
expect_rc 0 pqinsert g/f00000
expect_rc 0 pqcat
cmp -s "$OUT" all_g || fail "a product was lost after the repair"
ok "pqcheck -F says what it changed, drops nothing; the next insert goes in"
