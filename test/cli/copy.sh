#!/usr/bin/env bash
# pqcopy: products arrive with their insertion times, metadata and
# signatures unchanged and their data byte-identical; duplicates are skipped
# and counted; -f, -p and -o filter; the source defaults to the registry's.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 10M -S 500
"$HELPER" insert-old "$Q" 5 7200 old || fail "insert-old"
make_files f 20 1000
expect_rc 0 pqinsert f/f*
expect_rc 0 pqcreate -s 10M -S 500 -q dst.pq

expect_rc 0 pqcopy -v "$Q" dst.pq
expect_in "$ERR" "Number of products copied: 25"
"$HELPER" dump "$Q" >src.dump || fail "dump"
"$HELPER" dump dst.pq >dst.dump || fail "dump"
[[ $(wc -l <src.dump) == 25 ]] || fail "dump of the source"
cmp -s src.dump dst.dump || fail "insertion times or metadata differ:
$(diff src.dump dst.dump | head)"
pqcat -q "$Q" >src.data 2>/dev/null
pqcat -q dst.pq >dst.data 2>/dev/null
cmp -s src.data dst.data || fail "the copied data differ"
expect_rc 0 pqcheck -C -q dst.pq
ok "copy keeps insertion times, metadata and data"

expect_rc 0 pqcopy "$Q" dst.pq
expect_in "$ERR" "Number of products copied: 0"
expect_in "$ERR" "duplicates skipped: 25"
cmp -s <("$HELPER" dump dst.pq) dst.dump || fail "duplicates changed dst"
ok "duplicates skipped and counted"

expect_rc 0 pqcreate -s 1M -q p.pq
expect_rc 0 pqcopy -p '^old\.' "$Q" p.pq
expect_in "$ERR" "Number of products copied: 5"
expect_rc 0 pqcreate -s 1M -q o.pq
expect_rc 0 pqcopy -o 3600 "$Q" o.pq
expect_in "$ERR" "Number of products copied: 20"
expect_rc 0 pqcreate -s 1M -q ft.pq
expect_rc 0 pqcopy -f IDS "$Q" ft.pq
expect_in "$ERR" "Number of products copied: 0"
expect_rc 0 pqcreate -s 1M -q reg.pq
expect_rc 0 pqcopy reg.pq
expect_in "$ERR" "Number of products copied: 25"
ok "-p, -o, -f and the registry's source"

# An insertion time already taken in the destination by another product:
# that product keeps it, the copy gets a new one.
t=$(head -1 src.dump | cut -d' ' -f1)
expect_rc 0 pqcreate -s 1M -S 100 -q taken.pq
"$HELPER" insert-at taken.pq "$t" squatter || fail "insert-at"
expect_rc 0 pqcopy "$Q" taken.pq
expect_in "$ERR" "Number of products copied: 25"
expect_in "$ERR" "given a new insertion time: 1"
"$HELPER" dump taken.pq >taken.dump
grep -q "^$t .* squatter$" taken.dump || fail "the squatter lost its time: $(head -3 taken.dump)"
[[ $(grep -c "^$t " taken.dump) == 1 ]] || fail "two products at $t"
expect_rc 0 pqcheck -C -q taken.pq
ok "an insertion time already taken: the copy gets a new one"

# A product too big for the destination is reported; the rest is copied.
head -c 300000 /dev/urandom >big
expect_rc 0 pqinsert big
expect_rc 0 pqcreate -s 200k -q small.pq
expect_rc 1 pqcopy "$Q" small.pq
expect_in "$ERR" "product not copied"
expect_in "$ERR" "not copied: 1"
ok "too big for the destination: reported, exit 1"

expect_error pqcopy "$Q" none.pq
expect_in "$ERR" "No such file or directory"
expect_error pqcopy none.pq dst.pq
expect_error pqcopy
expect_error pqcopy a b c
expect_error pqcopy -q "$Q" a b
expect_error pqcopy -o x "$Q" dst.pq
expect_error pqcopy -p '(' "$Q" dst.pq
ok "bad input"
