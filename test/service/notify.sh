#!/usr/bin/env bash
# ldmd's word to systemd (sd_notify, ldmd/server/notify.h), with the unit's
# own command lines and notify_listen as the notification socket:
#   - READY=1 comes once the port accepts connections: the listener's gate
#     holds ldmd in the sendmsg(2) of its first notification, and a
#     connection made then succeeds (as do the pid file and ldmping after
#     it); it comes from ldmd's own pid, with a STATUS= line that says where
#     it listens, the queue and its entries;
#   - the program of an EXEC entry does not get NOTIFY_SOCKET;
#   - STOPPING=1 at SIGTERM, before the exit: the gate holds ldmd in that
#     notification, still running, and once let go it exits 0;
#   - without NOTIFY_SOCKET ldmd serves, sends nothing, logs nothing of it;
#   - with a NOTIFY_SOCKET nobody listens on (no such file; a socket whose
#     listener is gone) ldmd serves and stops as usual and logs one warning
#     for the whole run.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
PORT=$(regutil /server/port) || fail "regutil /server/port"

# An EXEC entry whose program writes the NOTIFY_SOCKET it got ("unset").
cat >envprobe <<'EOS'
#!/bin/sh
echo "${NOTIFY_SOCKET-unset}" >"$1.tmp" && mv "$1.tmp" "$1"
EOS
chmod +x envprobe || fail "chmod"
echo "EXEC \"$SCRATCH/envprobe $SCRATCH/exec.env\"" >>"$LDMHOME/etc/ldmd.conf"

# notified: lines ldmd's pid sent, without the pid.
notified() { sed -n "s/^$LDMD_PID //p" "$NOTES"; }
# held: ldmd waits in the sendmsg(2) of a notification, the gate closed
# (in the kernel function unix_wait_for_peer, or its caller where that is
# inlined); held_or_gone: that, or ldmd is gone.
held() { asleep_in "$LDMD_PID" '^unix_(wait_for_peer|dgram_sendmsg)$'; }
held_or_gone() { held || gone "$LDMD_PID"; }
connects() {
  local fd
  exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || return 1
  exec {fd}>&-
}
listening() { grep -q "listening on 127.0.0.1 port $PORT" "$LOG"; }
listening_or_gone() { listening || gone "$LDMD_PID"; }
exited() { ! kill -0 "$LDMD_PID" 2>/dev/null; }

# 1. The start, held at its first notification.
RUNS=1
unit_run ExecStartPre pre "start $RUNS"
notify_listen closed
unit_exec
wait_until 20 held_or_gone || fail "ldmd did not notify within 20 s"
gone "$LDMD_PID" && fail "ldmd exited before it notified"
connects || fail "ldmd notifies while its port $PORT refuses connections"
[[ $(cat ldmd.pid 2>/dev/null) == "$LDMD_PID" ]] ||
  fail "ldmd notifies before its pid file says $LDMD_PID: $(cat ldmd.pid 2>&1)"
[[ -z $(notified) ]] || fail "a notification passed the closed gate: $(notified)"
ok "ldmd's first notification comes when its port accepts and its pid file is written"

notify_gate open
unit_ready
[[ $(notified | head -1) == READY=1 ]] ||
  fail "ldmd's first notification is not READY=1: $(notified | head -1)"
status="STATUS=listening on 127.0.0.1 port $PORT; queue $Q; 0 REQUEST, 1 EXEC"
[[ $(notified | sed -n 2p) == "$status" ]] ||
  fail "the STATUS after READY=1 is '$(notified | sed -n 2p)', expected '$status'"
grep -v "^$LDMD_PID \|^# " "$NOTES" && fail "notifications from another process than ldmd's"
expect_rc 0 ldmping -i 0 -h "127.0.0.1:$PORT"
ok "READY=1 from ldmd's pid with '$status'; ldmping answered"

wait_until 20 test -s exec.env || fail "the EXEC program did not run"
[[ $(cat exec.env) == unset ]] || fail "the EXEC program got NOTIFY_SOCKET=$(cat exec.env)"
ok "the EXEC program does not get NOTIFY_SOCKET"

# 2. The stop, held at its notification.
notify_gate close
kill -TERM "$LDMD_PID" || fail "cannot send SIGTERM to ldmd"
wait_until 20 held_or_gone || fail "ldmd did not notify within 20 s of SIGTERM"
gone "$LDMD_PID" && fail "ldmd exited on SIGTERM without notifying"
expect_not_in "$LOG" "exiting"
notify_gate open
limit=$(seconds "$(unit_key TimeoutStopSec)")
wait_until "$limit" exited || fail "ldmd still runs $limit s after SIGTERM"
wait "$LDMD_PID"
rc=$?
((rc == 0)) || fail "ldmd exited $rc on SIGTERM"
[[ $(notified | sed -n 3p) == STOPPING=1 && $(notified | sed -n 4p) == "STATUS=stopping: "* ]] ||
  fail "after READY=1, ldmd's notifications are not STOPPING=1 and its STATUS: $(notified)"
(($(notified | wc -l) == 4)) || fail "ldmd sent more than READY, STOPPING and two STATUS: $(notified)"
sanitizer_check "$LOG"
LDMD_PID=
unit_run ExecStopPost post "stop $RUNS"
ok "SIGTERM: STOPPING=1 while ldmd still runs, then exit 0"

# 3. No NOTIFY_SOCKET: every start that is not systemd's.
RUNS=2
before=$(wc -l <"$NOTES")
UNIT_NOTIFY='' unit_exec
wait_until 20 listening_or_gone || fail "without NOTIFY_SOCKET ldmd does not listen within 20 s"
listening || fail "without NOTIFY_SOCKET ldmd exited"
expect_rc 0 ldmping -i 0 -h "127.0.0.1:$PORT"
unit_stop
[[ $(wc -l <"$NOTES") == "$before" ]] ||
  fail "without NOTIFY_SOCKET the listener got: $(tail -n +$((before + 1)) "$NOTES")"
# Nothing but notices: no warning or error of any kind.
grep -E " (WARN|ERROR|FATAL) " "$LOG" && fail "without NOTIFY_SOCKET ldmd logged a warning or an error"
ok "without NOTIFY_SOCKET: served, stopped, nothing sent or logged"

# 4. A NOTIFY_SOCKET nobody listens on: no such file, then a socket whose
# listener is gone.
"$LISTEN" "$SCRATCH/dead.sock" >dead.out 2>&1 &
dead=$!
wait_until 10 grep -qx '# listening' dead.out || fail "the second listener does not listen"
kill "$dead" && wait "$dead"
[[ -S dead.sock ]] || fail "no socket dead.sock left"
for sock in "$SCRATCH/nobody.sock:No such file or directory" \
  "$SCRATCH/dead.sock:Connection refused"; do
  RUNS=$((RUNS + 1))
  UNIT_NOTIFY=${sock%%:*} unit_exec
  wait_until 20 listening_or_gone || fail "with NOTIFY_SOCKET ${sock%%:*} ldmd does not listen within 20 s"
  listening || fail "with NOTIFY_SOCKET ${sock%%:*} ldmd exited"
  expect_rc 0 ldmping -i 0 -h "127.0.0.1:$PORT"
  unit_stop
  warning="cannot notify systemd through NOTIFY_SOCKET ${sock%%:*}: ${sock#*:}; no more notifications"
  expect_in "$LOG" "$warning"
  # That warning once, as the only one: no other notification was tried.
  n=$(grep -cE " (WARN|ERROR|FATAL) " "$LOG")
  ((n == 1)) || fail "ldmd logged $n warnings or errors, not that one alone"
  ok "NOTIFY_SOCKET ${sock%%:*} (${sock#*:}): served, stopped with 0, one warning"
done
