#!/usr/bin/env bash
# Signals as LDM users know them: a following pqcat writes a new product at
# once (woken by the queue, not a poll) and stops cleanly on SIGTERM or
# SIGINT; SIGUSR1 logs statistics, SIGUSR2 cycles the log level; SIGTERM
# stops pqinsert, pqcopy and pqrestore, leaving a queue that checks clean
# without repair.
#
# Each signal goes to a program known to be inside the call the signal
# must get it out of, so every check runs on every run: pqcat asleep in
# pq_wait() (its bit in hd_sleepers), pqinsert waiting for a FIFO's data
# among its files, pqcopy and pqrestore blocked on the destination queue's
# control lock, which `pqclihelper lock` holds (their request shows in
# /proc/locks).  The test then waits until the signal is taken (no longer
# pending) before it drops the lock.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 200M -S 5000

# Follow mode: pqcat asleep in pq_wait() writes a new product well before
# its 30 s poll.
background pqcat -i 30 -l cat.log cat.out
pid=$BG
wait_until 30 asleep || fail "pqcat -i 30 did not go to sleep on the queue"
echo first >p1
start=$(date +%s%N)
expect_rc 0 pqinsert p1
wait_until 30 grep -q first cat.out || fail "the follower never wrote the product"
lat=$((($(date +%s%N) - start) / 1000000))
((lat < 2000)) || fail "the follower took $lat ms"
kill -USR1 "$pid"
wait_until 30 grep -q "Number of products 1" cat.log || fail "no statistics on SIGUSR1"
kill -USR2 "$pid" # NOTE -> INFO: products are now logged
wait_until 30 signal_taken "$pid" USR2 || fail "pqcat did not take SIGUSR2"
echo second >p2
expect_rc 0 pqinsert p2
wait_until 30 grep -q ' p2$' cat.log || fail "SIGUSR2 did not raise the log level"
wait_until 30 asleep || fail "pqcat did not go back to sleep after p2"
start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid"
st=$?
ms=$((($(date +%s%N) - start) / 1000000))
[[ $st == 0 ]] || fail "pqcat exited $st on SIGTERM"
((ms < 2000)) || fail "pqcat took $ms ms to stop"
expect_in cat.log "Exiting"
expect_in cat.log "Number of products 2"
[[ $(cat cat.out) == $'first\nsecond' ]] || fail "follower output: $(cat cat.out)"
ok "follow: product out $lat ms after pqinsert began; stopped $ms ms after SIGTERM"

background pqcat -i 30 -l cat2.log cat2.out
wait_until 30 asleep || fail "the second pqcat did not go to sleep on the queue"
kill -INT "$BG"
wait "$BG"
[[ $? == 0 ]] || fail "pqcat exited non-zero on SIGINT"
expect_in cat2.log "Number of products 2"
ok "SIGINT"

# SIGTERM in the middle of a long run: pqinsert of 20 files, a FIFO, then
# 200 more.  It is stopped while it waits for the FIFO's data, which never
# comes: the stop ends that wait (cli_sigterm tests each such wait), so it
# must keep everything before the FIFO, put in nothing after it, say so,
# and exit 1.
make_files m 20 100000
make_files n 200 100000
mkfifo fifo
exec 3<>fifo # a writer that never writes: pqinsert waits for data
background pqinsert -l ins.log m/f* fifo n/f* 3>&- # no writer of its own
ins=$BG
wait_until 30 has_open "$ins" fifo || fail "pqinsert never opened the FIFO"
kill -TERM "$ins"
wait_until 30 gone "$ins" || fail "pqinsert did not stop on SIGTERM"
exec 3>&-
wait "$ins"
st=$?
[[ $st == 1 ]] || fail "pqinsert stopped by SIGTERM exited $st, not 1"
done=$(sed -n 's/.*interrupted: \([0-9]*\) of 221 files done.*/\1/p' ins.log)
[[ -n $done ]] || fail "pqinsert did not say it was interrupted: $(cat ins.log)"
((done >= 20 && done < 221)) || fail "pqinsert did $done of 221 files"
expect_rc 0 pqcheck -C
expect_rc 0 pqcat -c
expect_not_in "$ERR" "signature mismatch"
n=$(mon_field 7)
((n == 22)) || fail "the queue holds $n products: not the 20 files + p1 and p2"
ok "pqinsert stopped by SIGTERM after $done of 221 files (exit 1)"

# pqcopy and pqrestore, each held on the destination's control lock.
# hold_lock QUEUE: `pqclihelper lock` on it; its pid in $locker.
hold_lock() {
  background "$HELPER" lock "$1" >lock.out
  locker=$BG
  wait_until 30 grep -q locked lock.out || fail "cannot lock $1"
}
# release_lock: the locker killed, its lock gone with it.
release_lock() {
  kill "$locker"
  wait "$locker" 2>/dev/null
}
# stop_on_lock PROG STATUS DEST ARGS...: a fresh queue DEST whose control
# lock is held; PROG ARGS... started; SIGTERM once it waits for the lock,
# the lock released once it has taken the signal; it must exit STATUS.
stop_on_lock() {
  local prog=$1 want=$2 dest=$3 pid st
  shift 3
  expect_rc 0 pqcreate -s 200M -S 5000 -q "$dest"
  hold_lock "$dest"
  background "$prog" "$@"
  pid=$BG
  wait_until 30 waiting_for_lock "$dest" ||
    fail "$prog did not wait for the lock of $dest"
  kill -TERM "$pid"
  wait_until 30 signal_taken "$pid" TERM || fail "$prog did not take SIGTERM"
  release_lock
  wait "$pid"
  st=$?
  [[ $st == "$want" ]] || fail "$prog stopped by SIGTERM exited $st, not $want"
}
# holds_counted DEST COUNT PROG VERB: PROG, which VERB COUNT products,
# did fewer than the $n it was given; DEST checks clean and holds them.
holds_counted() {
  (($2 < n)) || fail "$3 $4 all $n products despite SIGTERM"
  expect_rc 0 pqcheck -C -q "$1"
  (($(mon_field 7 "$1") == $2)) ||
    fail "$1 does not hold the $2 products $3 counted"
}
expect_rc 0 pqsave "$Q" all.snap
stop_on_lock pqcopy 0 copy.pq -l copy.log "$Q" copy.pq
copied=$(sed -n 's/.*Number of products copied: \([0-9]*\).*/\1/p' copy.log)
[[ -n $copied ]] || fail "pqcopy did not count: $(cat copy.log)"
holds_counted copy.pq "$copied" pqcopy copied
ok "pqcopy stopped by SIGTERM: $copied of $n products copied"

stop_on_lock pqrestore 1 restored.pq -l restore.log all.snap restored.pq
restored=$(sed -n "s/.*interrupted after \([0-9]*\) of $n products.*/\1/p" restore.log)
[[ -n $restored ]] || fail "pqrestore did not say it was interrupted: $(cat restore.log)"
holds_counted restored.pq "$restored" pqrestore restored
ok "pqrestore stopped by SIGTERM after $restored of $n products (exit 1)"
ok "SIGTERM mid-run leaves clean queues"
