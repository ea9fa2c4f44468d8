#!/usr/bin/env bash
# A clean stop is no error: SIGTERM to ldmd while its connection processes
# wait in poll(2) (a feed whose downstream reads nothing, so that its
# upstream waits to write; connections that have sent nothing yet) ends
# those waits (ldm6_io_set_cancel()), and that is no failure: the log has
# no ERROR line and no "Interrupted system call" (ldmd/proto/rpc_io.h,
# LDM6_IO_STOPPED).
source "$(dirname "$0")/lib.sh" "$@"

make_queue 40000000
printf 'ALLOW ANY ^127\\.0\\.0\\.1$\n' >"$CONF"
# 20 MB of products: more than the loopback socket's buffers hold.
expect_rc 0 "$PEER" insert -q "$Q" -n 20 -s 1000000 -f IDS -i big -z 1
start_ldmd
background peer feedme -f ANY -o 3600 -t 60 -X 1 >feed.out
background peer hold -n 2 -t 60 >hold.out
wait_until 10 grep -q STALLED feed.out || fail "the downstream did not stall"
wait_until 10 logged 1 'Starting Up(' || fail "no upstream process"
up=$(grep -F 'Starting Up(' "$LOG" | tail -1 |
  sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p')
[[ -n $up ]] || fail "no pid in the upstream's log line"
# The upstream has filled the socket and waits in poll for room.
wait_until 20 asleep_in "$up" 'poll' ||
  fail "the upstream ($up) is not waiting in poll: $(cat /proc/"$up"/wchan)"
# three_children: does ldmd serve the three connections?
three_children() {
  (($(children_of "$LDMD_PID" | wc -l) >= 3))
}
wait_until 10 three_children || fail "not 3 connection processes"
stop_ldmd
expect_in "$LOG" "stopping:"
grep -q ' ERROR ' "$LOG" &&
  fail "ERROR lines at a clean stop: $(grep ' ERROR ' "$LOG" | head -5)"
expect_not_in "$LOG" "Interrupted system call"
ok "SIGTERM with a feed waiting to write and idle connections: no ERROR line"
