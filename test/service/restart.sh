#!/usr/bin/env bash
# Restarts under load: a writer inserts products one by one (pqinsert)
# while the service is stopped and started RESTARTS times (default 50)
# with the unit's command lines (each stop saves the queue, each start
# finds it there).  Then the writer stops, a last stop saves, /dev/shm is
# wiped and a start restores: the queue holds every product the writer
# was told was inserted, once each, in the order they were inserted, with
# their bytes (the data compared with the files, pqcat -c's MD5, pqcheck
# -C).  The queue is large enough that nothing is evicted.
QUEUE_SIZE=60M QUEUE_SLOTS=60000
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
restarts=${RESTARTS:-50}
files=40000
mkdir f || fail "mkdir"
head -c $((files * 1000)) /dev/urandom | split -b 1000 -a 5 -d - f/f ||
  fail "cannot make the files"

unit_start
# The writer: one pqinsert a file; each file it was told is in the queue
# goes to "inserted", a failure to "failed".
# shellcheck disable=SC2016 # the writer's own variables
background bash -c 'for f in f/f*; do
  [[ -e stop ]] && exit 0
  if pqinsert -q "$0" "$f" 2>>writer.err; then echo "$f" >>inserted
  else echo "$f" >>failed; fi
done' "$Q"
writer=$BG
count() { [[ -f inserted ]] && wc -l <inserted || echo 0; }
more_than() { (($(count) > $1)); }
for ((i = 1; i <= restarts; i++)); do
  n=$(count)
  wait_until 20 more_than "$n" || fail "round $i: the writer inserted nothing in 20 s"
  unit_stop
  expect_in post.1 "saved "
  n=$(count)
  wait_until 20 more_than "$n" || fail "round $i: the writer inserted nothing while ldmd was down"
  unit_start
  expect_in pre.1 "exists: used as it is"
done
touch stop
wait_until 30 gone "$writer" || fail "the writer does not stop"
wait "$writer"
[[ ! -s failed ]] || fail "pqinsert failed for $(wc -l <failed) files: $(head -c 2000 writer.err)"
n=$(count)
((n < files)) || fail "the writer ran out of files: the load did not last"
ok "$restarts restarts while the writer inserted $n products"

unit_stop
expect_in post.1 "saved $n products"
wipe
unit_start
expect_in pre.1 "restored $n of $n products"
idents >got
cmp -s inserted got || fail "the queue's products are not those inserted, in order: $(diff inserted got | head -5)"
cmp -s <(xargs cat <inserted) <(pqcat -q "$Q" 2>/dev/null) ||
  fail "the products' data differ from the files inserted"
expect_rc 0 pqcat -c -q "$Q"
expect_not_in "$ERR" "mismatch"
expect_rc 0 pqcheck -C -q "$Q"
unit_stop
ok "after the restarts, a stop, a wiped /dev/shm and a start: all $n products, in order, intact"
