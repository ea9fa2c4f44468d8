#!/usr/bin/env bash
# pqcheck: the writer count is of live writers (3 while one is open, 0 once
# it is killed: never stuck); -C finds what a killed writer left (its
# reservation) and damage (a broken record), naming the invariant, exit 4;
# -F repairs and the queue checks clean after; writers and readers killed
# mid-run leave a queue that repairs to clean with every product intact.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 10M -S 500
make_files f 20 1000
expect_rc 0 pqinsert f/f*
expect_rc 0 pqcheck -v
expect_in "$ERR" "The writer-counter of the product-queue is 0"
expect_rc 0 pqcheck -C -v
expect_in "$ERR" "every invariant holds: 20 products"
ok "clean queue"

# A writer holding a reservation, then killed.
background "$HELPER" hold "$Q" >hold.out
wait_until 10 grep -q reserved hold.out || fail "the writer did not start"
expect_rc 3 pqcheck -v
expect_in "$ERR" "The writer-counter of the product-queue is 1"
kill -KILL "$BG"
wait "$BG" 2>/dev/null
expect_rc 0 pqcheck
ok "writer count: 3 while open, 0 once killed"
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 12 failed"
expect_in "$ERR" "reservation of dead writer"
expect_in "$ERR" "pqcheck -F"
expect_rc 0 pqcheck -F -v
expect_in "$ERR" "reclaimed 1 reservations of dead writers"
expect_in "$ERR" "The writer-counter of the product-queue is 0"
expect_rc 0 pqcheck -C
expect_rc 0 pqcat
cat f/f* >expected
cmp -s "$OUT" expected || fail "products changed by the repair"
ok "killed writer's reservation found (-C, 4) and reclaimed (-F)"

# A reader killed while following the queue (asleep in pq_wait(), its bit
# set in hd_sleepers) leaves nothing behind.
background pqcat -i 30 -q "$Q" >/dev/null 2>&1
wait_until 10 asleep || fail "pqcat -i 30 did not go to sleep on the queue"
kill -KILL "$BG"
wait "$BG" 2>/dev/null
expect_rc 0 pqcheck
expect_rc 0 pqcheck -C
ok "killed reader"

# Writers killed at random points of a long run: 10 to 90 ms (the random
# part is the point) after each has the queue open.  Its last file is a
# FIFO that never ends (this shell holds it open for writing), so no writer
# can finish first: each must die of the SIGKILL.
make_files m 3000 50000
mkfifo never
exec 4<>never
expect_rc 0 pqcreate -c -s 4M -S 500
killed=0
for i in 1 2 3 4 5; do
  background pqinsert -q "$Q" m/f* never 4>&-
  wait_until 10 has_open "$BG" "$Q" || fail "pqinsert did not open the queue"
  sleep "0.0$((RANDOM % 9 + 1))"
  kill -KILL "$BG" 2>/dev/null
  wait "$BG" 2>/dev/null
  st=$?
  ((st == 137)) || fail "writer $i ended with status $st, not by the SIGKILL"
  killed=$((killed + 1))
  expect_rc 0 pqcheck
  run pqcheck -C
  ((rc == 0 || rc == 4)) || fail "pqcheck -C exited $rc"
  expect_rc 0 pqcheck -F
  expect_rc 0 pqcheck -C
  expect_rc 0 pqcat -c
  expect_not_in "$ERR" "signature mismatch"
done
exec 4>&-
ok "$killed writers killed mid-run: repaired to clean, products intact"

# A damaged product record: -C names invariant 13; -F drops the product.
expect_rc 0 pqcreate -c -s 1M -S 50
expect_rc 0 pqinsert f/f*
size=$(stat -c %s "$Q")
data=$(mon_field 2)
printf 'XXXX' | dd of="$Q" bs=1 seek=$((size - data)) conv=notrunc 2>/dev/null
expect_rc 4 pqcheck -C
expect_in "$ERR" "invariant 13 failed"
expect_rc 0 pqcheck -F
expect_in "$ERR" "dropped 1 damaged products"
expect_rc 0 pqcheck -C -v
expect_in "$ERR" "every invariant holds: 19 products"
ok "damaged record: found (4), dropped (-F)"

# Not a queue, a damaged header, no queue.
echo "not a queue" >junk.pq
expect_rc 4 pqcheck -q junk.pq
expect_in "$ERR" "pq_open failed"
expect_rc 0 pqcreate -c -s 1M -S 50
printf 'Z' | dd of="$Q" bs=1 seek=20 conv=notrunc 2>/dev/null
expect_rc 4 pqcheck
expect_rc 1 pqcheck -q "$SCRATCH/none.pq"
expect_in "$ERR" "No such file or directory"
expect_error pqcheck -Z
expect_error pqcheck extra
ok "not a queue (4), missing (1), bad options"
