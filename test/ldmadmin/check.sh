#!/usr/bin/env bash
# ldmadmin check, LDM's cron check, with a real server and queue: each of
# its exit codes with its message, in LDM's order: 2 when the server does
# not run (whatever the queue), 4 when it runs but no product arrives (an
# empty queue, then a newest product older than /insertion-check-interval),
# 5 when data arrives but the queue is too small for /server/max-latency
# (left unchanged when /reconciliation-mode is "do nothing", grown when it
# is "increase queue"), and 0, "green",
# when all three pass; never 3 (LDM's clock check is left out).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\n' >"$CONF"

# check_exits N TEXT: ldmadmin check exits N with TEXT on stderr.
check_exits() {
  admin check
  ((rc == $1)) || fail "'ldmadmin check' exited $rc, expected $1"
  expect_in "$ERR" "$2"
}

admin_ok mkqueue
check_exits 2 "the LDM server is not running"
admin_ok start -P 0
check_exits 4 "the queue $Q holds no product: is data arriving?"
old_us=$((($(date +%s) - 600) * 1000000))
"$HELPER" insert-at "$Q" "$old_us" old-product || fail "pqclihelper insert-at"
check_exits 4 "more than /insertion-check-interval (300 s)"
# Both old and too small (20 products inserted 10 minutes ago overflow
# the 14 slots: an MVRT of 600 s): insertion comes first, 4.
for i in $(seq 20); do
  "$HELPER" insert-at "$Q" $((old_us + i)) "old.$i" || fail "pqclihelper insert-at"
done
[[ $(pqmon -S -q "$Q" | awk '{ print $1 }') == 1 ]] || fail "20 products did not fill 14 slots"
check_exits 4 "more than /insertion-check-interval (300 s)"
expect_not_in "$ERR" "too small"
admin_ok stop
admin_ok mkqueue -c
admin_ok start -P 0
ok "2: not running; 4: no data (before 5)"

# Fresh products fill the 2M queue past full: MVRT 0 s, less than 3600 s.
fill_fresh
cp "$Q" before.pq
cp "$LDM_REGISTRY" before.xml
check_exits 5 "the queue $Q is too small for /server/max-latency"
expect_in "$ERR" '/reconciliation-mode is "do nothing"'
cmp -s "$Q" before.pq || fail "check changed the queue"
cmp -s "$LDM_REGISTRY" before.xml || fail "check changed the registry"
ok "5: the queue too small, nothing changed"

# Unless /reconciliation-mode asks: then check grows the queue (4 times at
# most: an MVRT of 0 s wants more), and still exits 5, the server running.
cap=$(pqmon -S -q "$Q" | awk '{ print $2 }')
run regutil -s 'increase queue' /reconciliation-mode
((rc == 0)) || fail "regutil -s exited $rc"
check_exits 5 "at most 4 times its size in one run"
(($(pqmon -S -q "$Q" | awk '{ print $2 }') == 4 * cap)) || fail "check did not grow the queue"
admin_ok isrunning
run regutil -s 'do nothing' /reconciliation-mode
ok "5: in mode \"increase queue\", check grows the queue"

# A new queue that has never been full, with a new product: green.
admin_ok stop
admin_ok mkqueue -c
admin_ok start -P 0
run pqinsert big.1
((rc == 0)) || fail "pqinsert exited $rc"
check_exits 0 "all is well (green)"
expect_in "$ERR" "has never been full"
admin_ok stop
check_exits 2 "the LDM server is not running"
ok "0: green; 2 again once stopped"
