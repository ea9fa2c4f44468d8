#!/usr/bin/env bash
# The LDM protocol clients stop promptly on SIGTERM or SIGINT whatever
# they wait for on the network, all on 127.0.0.1.  Each case puts a client
# into a wait that would last its whole timeout (10 to 60 s), waits for the
# event that proves it is there, sends the signal and requires the exit
# within STOP_S seconds with the status of its man page (notifyme 0,
# ldmsend 7, ldmping 0):
#   1. connecting: fakeldm -m full's backlog is full, so the client's
#      socket stays in SYN_SENT (seen in /proc/net/tcp by its inode);
#   2. waiting for the answer to NOTIFYME, HIYA or NULLPROC from a server
#      that reports the call (its report) and answers nothing;
#   3. ldmsend sending a 50 MB product to a server that stopped reading;
#   4. ldmping -i between passes.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
STOP_S=5
POLL='poll_schedule|do_sys_poll|do_poll'
# Broader than poll on purpose: a client waiting in connect(), read(),
# write() or a sleep would be seen waiting, and then fail the stop.
NET="$POLL|inet_wait_for_connect|wait_for_tcp_memory|sk_wait_data|nanosleep"
EXTRA_LOG=$SCRATCH/client.log
echo data >file

# syn_sent PID PORT: has PID a socket in SYN_SENT towards PORT?
syn_sent() {
  local f l inodes=" " hex
  hex=$(printf '%04X' "$2")
  for f in /proc/"$1"/fd/*; do
    l=$(readlink "$f" 2>/dev/null) || continue
    [[ $l == socket:\[*\] ]] && inodes+="${l//[^0-9]/} "
  done
  awk -v port="$hex" -v inodes="$inodes" '
    FNR > 1 && $4 == "02" && substr($3, length($3) - 3) == port &&
      index(inodes, " " $10 " ") { found = 1 }
    END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# calls_are N: has the fake reported N calls?
calls_are() {
  (($(grep -c '^call' "$REPORT") >= $1))
}
# client NAME ARGS...: start a client in the background, stderr in
# $EXTRA_LOG; its pid in $pid.
client() {
  : >"$EXTRA_LOG"
  background "$@" 2>"$EXTRA_LOG"
  pid=$BG
}
# stopped NAME SIGNAL STATUS: stop_expect for $pid, and no ERROR line (a
# stop is not a failure).
stopped() {
  stop_expect "$pid" "$1" "$2" "$STOP_S" "$3" "$EXTRA_LOG"
  ! grep -q ' ERROR ' "$EXTRA_LOG" || fail "$1 logged an error for a stop"
}
# client_of_fake PROG: PROG (notifyme, ldmsend or ldmping) against the
# fake on $PORT, in a wait that lasts its whole timeout, as client starts it.
client_of_fake() {
  case $1 in
  notifyme) client notifyme -h "127.0.0.1:$PORT" ;;
  ldmsend) client ldmsend -h "127.0.0.1:$PORT" file ;;
  ldmping) client ldmping -i 0 -h "127.0.0.1:$PORT" ;;
  *) fail "client_of_fake: no client $1" ;;
  esac
}
kill_fake() {
  kill "$FAKE_PID" 2>/dev/null
  wait "$FAKE_PID" 2>/dev/null
  sanitizer_check "$SCRATCH/fake.err"
}

# 1. Connecting to a server whose backlog is full.
start_fake full 127.0.0.1
in_report full || fail "fakeldm did not fill its backlog"
# Each case: PROGRAM:SIGNAL:STATUS.
for c in notifyme:TERM:0 ldmsend:INT:7 ldmping:TERM:0; do
  IFS=: read -r prog sig st <<<"$c"
  client_of_fake "$prog"
  wait_until 10 syn_sent "$pid" "$PORT" || fail "$prog is not connecting (no SYN_SENT socket)"
  wait_until 10 asleep_in "$pid" "$NET" || fail "$prog is not waiting for the connection"
  stopped "$prog" "$sig" "$st"
  ok "$prog connecting: exit $rc $ms ms after the signal"
done
msgs "$EXTRA_LOG" >m
[[ ! -s m ]] || fail "ldmping reported a server it did not finish: $(cat m)"
kill_fake

# 2. Waiting for the answer to the first call: a server that answers none.
start_fake ping 127.0.0.1 -r mute -c 3
n=0
for c in notifyme:INT:0 ldmsend:TERM:7 ldmping:TERM:0; do
  IFS=: read -r prog sig st <<<"$c"
  client_of_fake "$prog"
  n=$((n + 1))
  wait_until 10 calls_are "$n" || fail "$prog made no call"
  wait_until 10 asleep_in "$pid" "$NET" || fail "$prog is not waiting for the answer"
  stopped "$prog" "$sig" "$st"
  ok "$prog waiting for an answer: exit $rc $ms ms after the signal"
done
(($(grep -cP '^call\tvers=6\t' "$REPORT") == 2)) ||
  fail "notifyme and ldmsend did not call with version 6"
grep -qP '^call\tvers=5\t' "$REPORT" || fail "ldmping did not call"
kill_fake

# 3. ldmsend in the middle of sending 50 MB that the server does not read.
head -c 50000000 /dev/urandom >big
start_fake hiya 127.0.0.1 -r stall
client ldmsend -h "127.0.0.1:$PORT" big
wait_until 10 in_report stalled || fail "HIYA was not answered"
wait_until 20 asleep_in "$pid" "$NET" || fail "ldmsend is not waiting to send"
stopped ldmsend TERM 7
expect_in "$EXTRA_LOG" "interrupted"
kill_fake
ok "ldmsend sending to a server that does not read: exit 7 $ms ms after SIGTERM"

# 4. ldmping -i 100 between two passes.
start_fake ping 127.0.0.1
client ldmping -v -i 100 -h "127.0.0.1:$PORT"
wait_until 10 grep -q RESPONDING "$EXTRA_LOG" || fail "ldmping made no pass"
wait_until 10 asleep_in "$pid" "$NET" || fail "ldmping is not sleeping"
stopped ldmping TERM 0
kill_fake
ok "ldmping -i between passes: exit 0 $ms ms after SIGTERM"
