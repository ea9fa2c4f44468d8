#!/usr/bin/env bash
# ldmadmin's server commands with a real ldmd on 127.0.0.1 (a port the
# kernel picks, -P 0): isrunning, start (its refusals: no queue, a bad
# ldmd.conf, a bad pqact.conf, already running, a stale pid file), stop
# (not running, a server that does not exit in time), restart, clean,
# the lock of the commands that change things, pqactHUP (the server's
# pqact rereads, a process of the same name that is not its child is left
# alone), log and tail.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

admin_fails isrunning -- ''
admin_fails stop -- 'the LDM server is not running'
admin_fails start -P 0 -- "the queue $Q does not exist: ldmadmin mkqueue"
admin_ok mkqueue
[[ -f $Q ]] || fail "mkqueue made no $Q"
ok "not running; start needs a queue"

# A bad ldmd.conf, then a bad pqact.conf: refused before any server runs.
cp "$CONF" "$SCRATCH/good.conf"
echo 'NONSENSE entry' >>"$CONF"
admin_fails start -P 0 -- "the server's configuration $CONF is not valid"
cp "$SCRATCH/good.conf" "$CONF"
cp "$PQACT_CONF" "$SCRATCH/good.pqact"
printf 'ANY\t(unclosed\n\tFILE\tx\n' >"$PQACT_CONF"
admin_fails start -P 0 -- "$PQACT_CONF is not a valid pqact configuration"
cp "$SCRATCH/good.pqact" "$PQACT_CONF"
[[ ! -e $PIDFILE ]] || fail "a refused start left $PIDFILE"
ok "start checks ldmd.conf and pqact.conf first"

admin_ok start -P 0
pid=$(server_pid)
[[ $(cat "/proc/$pid/comm") == ldmd ]] || fail "the pid file names $pid, not an ldmd"
expect_in "$ERR" "the LDM server is running (pid $pid)"
expect_in "$LOG" 'listening on 127.0.0.1 port'
admin_ok isrunning
admin_fails start -P 0 -- "the LDM server is already running (pid $pid)"
[[ $(server_pid) == "$pid" ]] || fail "a refused start changed the pid file"
admin_fails clean -- "the LDM server is running (pid $pid)"
admin_fails mkqueue -c -- 'the LDM server is running: ldmadmin stop'
admin_fails delqueue -y -- 'the LDM server is running: ldmadmin stop'
admin_fails queuecheck -- 'the LDM server is running: ldmadmin stop'
[[ -f $Q ]] || fail "the queue went while the server ran"
ok "start, isrunning, and the refusals while it runs"

# The lock: the server does not hold it; while another command holds it,
# a start waits, bounded, and says so.
LOCKFILE=$LDMHOME/.ldmadmin.lock
flock -n "$LOCKFILE" true || fail "the running server holds $LOCKFILE"
# The holder is one process (flock, then exec): killing it frees the lock.
# shellcheck disable=SC2016 # $1 is the inner shell's
background sh -c 'exec 8>>"$1" && flock 8 && exec sleep 300' sh "$LOCKFILE"
holder=$BG
wait_until 10 sh -c "! flock -n '$LOCKFILE' true" || fail "flock did not take $LOCKFILE"
LDMADMIN_LOCK_TIMEOUT=1 admin_fails stop -- \
  "another ldmadmin command holds $LOCKFILE (waited 1 s)"
admin_ok isrunning
kill -TERM "$holder"
wait_until 10 flock -n "$LOCKFILE" true || fail "the lock stayed held"
ok "one command at a time, the lock bounded"

# pqactHUP: the server's pqact rereads; a "pqact" that is not its child is
# not signalled (it would die of SIGHUP).
wait_until 10 grep -q 'pqact.*starting' "$LOG" ||
  wait_until 10 grep -q "pqact\[" "$LOG" || fail "pqact did not start"
mkdir "$SCRATCH/decoy"
cp "$(command -v sleep)" "$SCRATCH/decoy/pqact"
background "$SCRATCH/decoy/pqact" 300
decoy=$BG
named_pqact() { [[ $(cat "/proc/$1/comm" 2>/dev/null) == pqact ]]; }
wait_until 5 named_pqact "$decoy" ||
  fail "the decoy did not start"
admin_ok pqactHUP
expect_in "$ERR" 'sent SIGHUP to pqact'
wait_until 10 grep -q 'Rereading configuration file' "$LOG" ||
  fail "pqact did not reread its configuration after pqactHUP"
gone "$decoy" && fail "pqactHUP signalled a pqact that is not the server's"
ok "pqactHUP signals the server's pqact only"

# log and tail.
PAGER='cat' admin_ok log
expect_in "$OUT" 'listening on 127.0.0.1 port'
background sh "$ADMIN" tail >"$SCRATCH/tail.out" 2>&1
tailer=$BG
wait_until 10 grep -q 'listening on' "$SCRATCH/tail.out" ||
  fail "ldmadmin tail printed no log"
kill -TERM "$tailer"
ok "log and tail"

# stop, bounded: a stopped (SIGSTOP) server does not exit in time.
kill -STOP "$pid"
LDMADMIN_STOP_TIMEOUT=1 admin_fails stop -- \
  "the LDM server (pid $pid) did not stop within 1 s of SIGTERM"
kill -CONT "$pid"
wait_until 10 gone "$pid" || fail "the server did not exit after SIGCONT"
admin_fails isrunning -- ''
admin_ok clean
expect_in "$ERR" "no stale pid file"

admin_ok start -P 0
pid=$(server_pid)
admin_ok stop
expect_in "$ERR" "the LDM server (pid $pid) has stopped"
gone "$pid" || fail "stop returned before the server exited"
[[ ! -e $PIDFILE ]] || fail "stop left $PIDFILE"
admin_fails stop -- 'the LDM server is not running'
ok "stop waits for the exit, and is bounded"

# restart: from stopped, then from running (a new server).
admin_ok restart -P 0
pid1=$(server_pid)
admin_ok restart -P 0
pid2=$(server_pid)
[[ -n $pid2 && $pid2 != "$pid1" ]] || fail "restart kept the server $pid1"
gone "$pid1" || fail "restart left the old server $pid1"
admin_ok stop
ok "restart"

# A stale pid file (a live process that is not an ldmd): start refuses,
# clean removes it.
echo $$ >"$PIDFILE"
admin_fails isrunning -- ''
admin_fails start -P 0 -- "the pid file $PIDFILE exists but no server runs"
admin_ok clean
expect_in "$ERR" "removed the stale pid file $PIDFILE"
[[ ! -e $PIDFILE ]] || fail "clean left $PIDFILE"
ok "clean"
