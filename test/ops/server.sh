#!/usr/bin/env bash
# The tools that talk to a running server, with a real ldmd started by
# pqutils/ops/ldmadmin.sh on 127.0.0.1 (-P 0), whose EXEC is
# "keep_running pqact" with their own log files.  refresh_logging after
# newlog: the server and pqact (a grandchild, through keep_running) write
# to fresh files, the old lines stay in .1; refused with no server.
# uldbutil: a feeder (a second ldmd requesting from this one) and a
# notifier (notifyme) listed with LDM's fields, nothing once they have
# gone; -d says there is nothing to delete; exit 2 with the server stopped,
# 3 for a figures file it cannot read.  ldmadmin stop ends keep_running
# and its pqact without a restart.
source "$(dirname "$0")/lib.sh" "$@"
HELPER=${3:?path of pqclihelper}
cd "$SCRATCH" || fail "cd"
ADMIN=$OPS/ldmadmin.sh
PIDFILE=$LDMHOME/ldmd.pid
CONF=$SCRATCH/ldmd.conf
PQACT_CONF=$SCRATCH/pqact.conf
mkdir -p "$LDMHOME/logs" "$SCRATCH/data"
PQLOG=$LDMHOME/logs/pqact.log
KRLOG=$LDMHOME/logs/keep_running.log
printf 'ANY\t^(.*)\n\tFILE\t\\1\n' >"$PQACT_CONF"
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\nEXEC\t"keep_running -l logs/keep_running.log pqact -v -l logs/pqact.log -d %s %s"\n' \
  "$SCRATCH/data" "$PQACT_CONF" >"$CONF"
write_registry ops-test.example "  <queue>
    <path>$Q</path>
    <size>2M</size>
  </queue>
  <server>
    <config-path>$CONF</config-path>
    <ip-addr>127.0.0.1</ip-addr>
  </server>
  <pqact>
    <config-path>$PQACT_CONF</config-path>
  </pqact>
  <log>
    <file>$LOG</file>
  </log>"
FAIL_LOGS=(OUT:stdout ERR:stderr LOG:ldmd.log PQLOG:pqact.log KRLOG:keep_running.log)

server_pid() { [[ -r $PIDFILE ]] && cat "$PIDFILE"; }
trap 'pidfile_cleanup "$PIDFILE"' EXIT
admin() {
  run sh "$ADMIN" "$@"
  ((rc == 0)) || fail "ldmadmin $* exited $rc"
}

expect_rc 1 sh "$OPS/refresh_logging.sh"
expect_in "$ERR" "the LDM server is not running"
expect_rc 2 uldbutil
expect_in "$ERR" "the upstream LDM database doesn't exist"

admin mkqueue
admin start -P 0
pid=$(server_pid)
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" | head -1)
[[ -n $pid && -n $PORT ]] || fail "no pid or port"
insert() { printf '%s' "$1" | pqinsert -q "$Q" -p "$1" || fail "pqinsert $1"; }
# pqact starts at the end of the queue: insert once it follows it (asleep
# in pq_wait(), test/cli's helper counts those).
asleep() {
  local n
  n=$("$HELPER" sleepers "$Q") && ((n >= 1))
}
wait_until 20 asleep || fail "pqact does not follow the queue"
insert first
wait_until 20 in_file "$PQLOG" "FILE: .*first" || fail "pqact did not file 'first'"
pqact=$(grep "FILE: .*first" "$PQLOG" | tail -1 | sed 's/^[^ ]* [^[]*\[\([0-9]*\)\].*/\1/')
kr=$(sed -n 's/^[^ ]* keep_running\[\([0-9]*\)\].*/\1/p' "$KRLOG" | head -1)
[[ -n $pqact ]] || fail "no pid of pqact"
ok "ldmd runs keep_running pqact (pid $pqact)"

# newlog then refresh_logging, as LDM's ldmadmin newlog did.
expect_rc 0 sh "$OPS/newlog.sh" "$LOG" 3
expect_rc 0 sh "$OPS/newlog.sh" "$PQLOG" 3
expect_rc 0 sh "$OPS/refresh_logging.sh"
wait_until 20 in_file "$LOG" "SIGUSR1: log file reopened" || fail "ldmd did not reopen its log"
# pqact gets the signal through ldmd and keep_running a moment after
# ldmd's line: products keep coming until one is in the fresh log.
n=0
fresh_line() {
  n=$((n + 1))
  insert "second.$n"
  in_file "$PQLOG" "FILE: .*second"
}
wait_until 20 fresh_line || fail "pqact wrote nothing to its fresh log"
grep -q "FILE: .*first" "$PQLOG.1" || fail "the old pqact lines are not in .1"
! grep -q "FILE: .*first" "$PQLOG" || fail "old lines in the fresh pqact log"
[[ $(grep "FILE: .*second" "$PQLOG" | tail -1 | sed 's/^[^ ]* [^[]*\[\([0-9]*\)\].*/\1/') == "$pqact" ]] ||
  fail "another pqact writes the fresh log: restarted rather than refreshed?"
ok "refresh_logging: ldmd and pqact (through keep_running) write to fresh files"

# uldbutil: a feeder and a notifier.
pqcreate -q "$SCRATCH/down.pq" -s 1M || fail "cannot make the downstream's queue"
printf 'REQUEST\tIDS|DDPLUS\t"^first"\t127.0.0.1:%s\n' "$PORT" >down.conf
background ldmd -f -l "$SCRATCH/down.log" -P 0 -I 127.0.0.1 -q "$SCRATCH/down.pq" down.conf
down=$BG
background notifyme -l "$SCRATCH/notifyme.log" -h "127.0.0.1:$PORT" -f HDS -p '^x'
noti=$BG
two_lines() {
  run uldbutil
  ((rc == 0)) && grep -q ' feeder ' "$OUT" && grep -q ' notifier ' "$OUT"
}
wait_until 30 two_lines || fail "uldbutil did not list a feeder and a notifier (rc $rc)"
grep -qE '^[0-9]+ 6 feeder (localhost|127\.0\.0\.1|[^ ]+) .*\{\{IDS\|DDPLUS, "\^first"\}\}$' "$OUT" ||
  fail "the feeder's line is not LDM's: $(cat "$OUT")"
grep -qE '^[0-9]+ 6 notifier [^ ]+ .*\{\{HDS, "\^x"\}\}$' "$OUT" ||
  fail "the notifier's line is not LDM's: $(cat "$OUT")"
(($(wc -l <"$OUT") == 2)) || fail "uldbutil listed more than the two: $(cat "$OUT")"
sort -n -c "$OUT" 2>/dev/null || fail "not ordered by pid"
ok "uldbutil lists the feeder and the notifier as LDM's"
stop_expect "$noti" notifyme TERM 10 0
stop_expect "$down" "downstream ldmd" TERM 20 0
only_none() {
  run uldbutil
  ((rc == 0)) && [[ ! -s $OUT ]]
}
wait_until 30 only_none || fail "uldbutil still lists gone feeds: $(cat "$OUT")"
expect_rc 0 uldbutil -d
expect_in "$ERR" "nothing to delete"
ok "gone feeds leave the list; -d has nothing to delete"

admin stop
wait_until 20 gone "$pqact" || fail "pqact still runs after the stop"
[[ -z $kr ]] || wait_until 20 gone "$kr" || fail "keep_running still runs after the stop"
expect_in "$KRLOG" "SIGTERM: stopping"
expect_not_in "$KRLOG" "Restarting"
expect_rc 2 uldbutil
expect_in "$ERR" "doesn't exist"
head -c 4096 /dev/urandom >"$Q.metrics"
expect_rc 3 uldbutil
expect_in "$ERR" "cannot be read"
expect_rc 1 uldbutil extra
ok "the stop ends keep_running and pqact; uldbutil's codes 2, 3 and 1"
