#!/usr/bin/env bash
# ldmd as a daemon: the command that starts it prints the daemon's pid and
# exits 0 once the daemon listens, also when it was started with SIGCHLD
# ignored (a disposition inherited across exec: the kernel then reaps the
# intermediate process by itself and its exit status cannot be read; ldmd
# used to read an uninitialised status there).  When the daemon fails to
# start (a pid file it cannot write) the command exits 1, whatever SIGCHLD
# is, and no daemon is left running.
source "$(dirname "$0")/lib.sh" "$@"

env --ignore-signal=CHLD true 2>/dev/null ||
  skip_test "this env(1) has no --ignore-signal"
DAEMON_PID=
KILL_AT_EXIT+=(DAEMON_PID)
make_queue 1000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
EOF
PIDFILE=$SCRATCH/ldmd.pid

# daemon HOW ARGS...: ldmd as a daemon, started plainly or with SIGCHLD
# ignored; sets rc, OUT (the daemon's pid), ERR.
daemon() {
  local how=$1 wrap=()
  shift
  [[ $how == nochld ]] && wrap=(env --ignore-signal=CHLD)
  : >"$LOG"
  run "${wrap[@]}" "$LDMD" -l "$LOG" -P 0 -I 127.0.0.1 "$@" "$CONF"
}

gone() {
  ! kill -0 "$1" 2>/dev/null
}

for how in plain nochld; do
  daemon "$how" -W "$PIDFILE"
  [[ $rc == 0 ]] || fail "$how: ldmd exited $rc when starting a daemon"
  DAEMON_PID=$(cat "$OUT")
  [[ $DAEMON_PID =~ ^[0-9]+$ ]] || fail "$how: no pid on standard output"
  [[ $(cat "$PIDFILE") == "$DAEMON_PID" ]] ||
    fail "$how: the pid file says $(cat "$PIDFILE"), stdout $DAEMON_PID"
  kill -0 "$DAEMON_PID" || fail "$how: the daemon $DAEMON_PID is not running"
  # The command returned once the daemon listened: the port is logged.
  PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" |
    head -1)
  [[ -n $PORT ]] || fail "$how: the command returned before the daemon listened"
  expect_rc 0 peer call -V 6 -R 0
  kill -TERM "$DAEMON_PID"
  wait_until 15 gone "$DAEMON_PID" || fail "$how: the daemon ignored SIGTERM"
  DAEMON_PID=
  ok "$how: exit 0 once the daemon listens; it serves and stops on SIGTERM"
done

for how in plain nochld; do
  daemon "$how" -W "$SCRATCH/no/such/directory/ldmd.pid"
  [[ $rc == 1 ]] || fail "$how: ldmd exited $rc, not 1, for a daemon that failed"
  expect_in "$LOG" "cannot write the pid file $SCRATCH/no/such/directory/ldmd.pid"
  pid=$(cat "$OUT")
  [[ $pid =~ ^[0-9]+$ ]] || fail "$how: no pid on standard output"
  wait_until 10 gone "$pid" || fail "$how: the daemon $pid that failed still runs"
  ok "$how: exit 1 when the daemon cannot write its pid file"
done
