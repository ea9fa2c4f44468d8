#!/usr/bin/env bash
# pqcheck: the writer count is of live writers (3 while one is open, 0 once
# it is killed: never stuck); -C, read-only (the file is unchanged), reports
# what a killed writer left (its reservation, a change half done) as what
# the next writer repairs, exit 3, and damage (a broken record) by its
# invariant, exit 4; -F repairs and the queue checks clean after; writers
# and readers killed mid-run leave a queue that repairs to clean with every
# product intact.  The delays before the kills come from a seed, printed;
# PQ_TEST_SEED=N in the environment replays a run (seed_init, common.sh).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
seed_init

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
cp "$Q" before.pq
expect_rc 3 pqcheck -C -v
expect_in "$ERR" "1 reservation left by a dead writer; writers reclaim it"
expect_in "$ERR" "every invariant holds: 20 products, 0 reservations"
expect_not_in "$ERR" "repaired"
expect_not_in "$ERR" "reclaimed"
cmp -s "$Q" before.pq || fail "pqcheck -C changed the queue file"
expect_rc 0 pqcheck -F -v
expect_in "$ERR" "reclaimed 1 reservations of dead writers"
expect_in "$ERR" "The writer-counter of the product-queue is 0"
expect_rc 0 pqcheck -C
expect_rc 0 pqcat
cat f/f* >expected
cmp -s "$OUT" expected || fail "products changed by the repair"
ok "killed writer's reservation reported (-C, 3, read-only), reclaimed (-F)"

# A writer killed in the middle of a change, holding a reservation.
run "$HELPER" crash "$Q"
((rc == 128 + 9)) || fail "the crashing helper exited $rc, not by SIGKILL"
cp "$Q" before.pq
expect_rc 3 pqcheck -C
expect_in "$ERR" "left mid-change by a crashed process; the next process"
expect_in "$ERR" "1 reservation left by a dead writer"
expect_not_in "$ERR" "invariant"
cmp -s "$Q" before.pq || fail "pqcheck -C changed the queue file"
expect_rc 0 pqcheck
ok "writer killed mid-change: -C says the next writer repairs it (3)"
make_files g 1 1000
expect_rc 0 pqinsert g/f00000
expect_rc 0 pqcheck -C -v
expect_in "$ERR" "every invariant holds: 21 products, 0 reservations"
expect_not_in "$ERR" "crash left"
ok "the next writer repaired it: -C clean (0)"

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
  ((rc == 0 || rc == 3)) || fail "pqcheck -C exited $rc, not 0 or 3"
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
