#!/usr/bin/env bash
# The refusals of ldmadmin that server.sh and queue.sh do not reach, each
# with its message and exit 1, and nothing changed: pqactHUP with no
# server and with a server that runs no pqact; log and tail with no log
# file; start when ldmd cannot listen (the port taken) and restart with a
# bad ldmd.conf (no server left, no pid file); mkqueue with a /queue/size
# that is not a size and with no queue directory; a registry that cannot
# be read (a command that needs a setting says so, config too).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

admin_fails pqactHUP -- 'the LDM server is not running: no pqact to signal'
admin_fails log -- "cannot read the log file $LOG"
admin_fails tail -- "cannot read the log file $LOG"
ok "pqactHUP, log and tail with no server and no log"

# mkqueue: a size in the registry's file that is not one (put there by
# hand: regutil -s refuses it), a queue directory that does not exist.
cp "$LDM_REGISTRY" "$SCRATCH/good.xml"
sed -i 's|<size>2M</size>|<size>2X</size>|' "$LDM_REGISTRY"
grep -q '<size>2X</size>' "$LDM_REGISTRY" || fail "the registry has no <size>2M</size> to spoil"
admin mkqueue
((rc == 1)) || fail "mkqueue with /queue/size 2X exited $rc, expected 1"
grep -qF '/queue/size in '"$LDM_REGISTRY"' is "2X": not a size' "$ERR" ||
  fail "mkqueue with /queue/size 2X did not say what is wrong: $(cat "$ERR")"
[[ ! -e $Q ]] || fail "mkqueue made $Q with a bad size"
cp "$SCRATCH/good.xml" "$LDM_REGISTRY"
expect_rc 0 regutil -s "$SCRATCH/nosuch/ldm.pq" /queue/path
admin_fails mkqueue -- "cannot make the queue $SCRATCH/nosuch/ldm.pq: no directory $SCRATCH/nosuch"
[[ ! -e $SCRATCH/nosuch ]] || fail "mkqueue made $SCRATCH/nosuch"
expect_rc 0 regutil -s "$Q" /queue/path
ok "mkqueue: a bad size, no directory"

# start when another server holds the port: ldmd cannot listen; start
# says so and leaves no pid file.
admin_ok mkqueue
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\n' >"$SCRATCH/nopqact.conf"
OTHER_LOG=$SCRATCH/other.log
background ldmd -f -l "$OTHER_LOG" -P 0 -q "$Q" "$SCRATCH/nopqact.conf"
other=$BG
wait_until 20 grep -q 'listening on 127.0.0.1 port' "$OTHER_LOG" ||
  fail "the other ldmd does not listen: $(cat "$OTHER_LOG")"
port=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$OTHER_LOG")
admin_fails start -P "$port" -- "the LDM server did not start: see its log, $LOG"
[[ ! -e $PIDFILE ]] || fail "a failed start left $PIDFILE"
stop_expect "$other" "the other ldmd" TERM 10 0 "$OTHER_LOG"
ok "start: a port taken by another server"

# pqactHUP with a server that runs no pqact.
admin_ok start -P 0 "$SCRATCH/nopqact.conf"
pid=$(server_pid)
admin_fails pqactHUP -- "the LDM server (pid $pid) runs no pqact"

# restart with a bad configuration: refused before the running server is
# stopped, which keeps serving.
printf 'NONSENSE entry\n' >"$SCRATCH/bad.conf"
admin_fails restart -P 0 "$SCRATCH/bad.conf" -- "the server's configuration $SCRATCH/bad.conf is not valid"
[[ $(server_pid) == "$pid" && -d /proc/$pid ]] || fail "a refused restart stopped the server $pid"
admin_ok stop
ok "pqactHUP with no pqact; restart checks the configuration before it stops the server"

# A registry that cannot be read: each command that needs a setting says
# which, and config says so.
printf '<registry>\n' >"$LDM_REGISTRY"
admin_fails config -- "cannot read the registry"
admin_fails mkqueue -- "cannot read /queue/path from the registry"
admin_fails checkinsertion -- "cannot read /queue/path from the registry"
[[ -f $Q ]] || fail "the queue went with the registry"
cp "$SCRATCH/good.xml" "$LDM_REGISTRY"
ok "a registry that cannot be read"
