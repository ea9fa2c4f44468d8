#!/usr/bin/env bash
# Signals as LDM users know them: a following pqcat writes a new product at
# once (woken by the queue, not a poll) and stops cleanly on SIGTERM or
# SIGINT; SIGUSR1 logs statistics, SIGUSR2 cycles the log level; SIGTERM
# stops pqinsert, pqcopy and pqrestore between products, leaving a queue
# that checks clean without repair.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 200M -S 5000

# Follow mode: a product appears in pqcat's output well before the 30 s poll.
background pqcat -i 30 -l cat.log cat.out
pid=$BG
sleep 0.5
echo first >p1
start=$(date +%s%N)
expect_rc 0 pqinsert p1
wait_until 5 grep -q first cat.out || fail "the follower never wrote the product"
lat=$((($(date +%s%N) - start) / 1000000))
((lat < 2000)) || fail "the follower took $lat ms"
kill -USR1 "$pid"
wait_until 5 grep -q "Number of products 1" cat.log || fail "no statistics on SIGUSR1"
kill -USR2 "$pid" # NOTE -> INFO: products are now logged
sleep 0.2
echo second >p2
expect_rc 0 pqinsert p2
wait_until 5 grep -q ' p2$' cat.log || fail "SIGUSR2 did not raise the log level"
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
sleep 0.3
kill -INT "$BG"
wait "$BG"
[[ $? == 0 ]] || fail "pqcat exited non-zero on SIGINT"
expect_in cat2.log "Number of products 2"
ok "SIGINT"

# SIGTERM in the middle of long runs: stop between products, close cleanly.
make_files m 1500 100000
background pqinsert -l ins.log m/f*
sleep 0.15
kill -TERM "$BG"
wait "$BG"
st=$?
if grep -q interrupted ins.log; then
  [[ $st == 1 ]] || fail "an interrupted pqinsert exited $st"
  ok "pqinsert stopped by SIGTERM (exit 1)"
fi
expect_rc 0 pqcheck -C
expect_rc 0 pqcat -c
expect_not_in "$ERR" "signature mismatch"
n=$(mon_field 7)

expect_rc 0 pqsave "$Q" all.snap
expect_rc 0 pqcreate -s 200M -S 5000 -q copy.pq
background pqcopy -l copy.log "$Q" copy.pq
sleep 0.05
kill -TERM "$BG"
wait "$BG"
expect_rc 0 pqcheck -C -q copy.pq
background pqrestore -l restore.log all.snap restored.pq
sleep 0.1
kill -TERM "$BG"
wait "$BG"
if [[ -e restored.pq ]]; then
  expect_rc 0 pqcheck -C -q restored.pq
fi
ok "SIGTERM mid-run leaves clean queues ($n products)"
