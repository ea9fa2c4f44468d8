#!/usr/bin/env bash
# Eviction when the queue is full: by bytes and by slots the oldest products
# go and the newest stay, in order; pqmon says the queue is full; a product
# a reader holds survives eviction, and a killed reader holds nothing.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

# By bytes: 60 files of 10 kB into a 100 kB queue.
expect_rc 0 pqcreate -s 100k -S 1000
make_files f 60 10000
expect_rc 0 pqinsert f/f*
expect_rc 0 pqcat -v
k=$(grep -c ' f/f' "$ERR")
((k >= 5 && k < 60)) || fail "$k products left in a 100 kB queue"
last=$(ls f/f* | tail -n "$k")
cat $last >expected
cmp -s "$OUT" expected || fail "the $k products left are not the newest $k"
read -r -a S < <(pqmon -S)
[[ ${S[0]} == 1 ]] || fail "pqmon -S isFull is not 1: ${S[*]}"
[[ ${S[6]} == "$k" ]] || fail "pqmon -S prodCurrent is not $k: ${S[*]}"
((S[3] <= S[1])) || fail "pqmon -S dataCurrent > dataCapacity: ${S[*]}"
ok "eviction by bytes keeps the newest $k of 60"

# By slots: 8 slots, 20 small files.
expect_rc 0 pqcreate -c -s 1M -S 8
make_files s 20 1000
expect_rc 0 pqinsert s/f*
expect_rc 0 pqcat
cat $(ls s/f* | tail -n 8) >expected
cmp -s "$OUT" expected || fail "8 slots did not keep the newest 8 products"
[[ $(mon_field 7) == 8 ]] || fail "prodCurrent $(mon_field 7) != 8"
[[ $(mon_field 6) == 8 ]] || fail "prodHighWater $(mon_field 6) != 8"
ok "eviction by slots"

# A held product is not evicted; a killed reader no longer holds it.
expect_rc 0 pqcreate -c -s 100k -S 1000
make_files h 60 10000
expect_rc 0 pqinsert h/f00000
background "$HELPER" read-hold "$Q" >held.out
wait_until 10 grep -q holding held.out || fail "the reader did not start"
expect_rc 0 pqinsert h/f000[1-3]*
expect_rc 0 pqcat -p '^h/f00000$'
cmp -s "$OUT" h/f00000 || fail "the held product was evicted"
kill -KILL "$BG"
wait "$BG" 2>/dev/null
expect_rc 0 pqcheck
expect_rc 0 pqinsert h/f0000[1-9] h/f0004* h/f0005*
expect_rc 0 pqcat -p '^h/f00000$'
[[ ! -s $OUT ]] || fail "the product of a killed reader was never evicted"
expect_rc 0 pqcheck -C
ok "held products survive, killed readers release"
