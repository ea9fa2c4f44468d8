#!/usr/bin/env bash
# "SIGHUP or SIGUSR1 reopens logs" (ldmadmin.1, newlog; ldmd.8), for every
# long-running program: each writes its -l log (relative), the log is
# renamed as a rotation does, the signal comes, and the same process's next
# lines land in a fresh file at the path, none in the renamed one.  Standalone:
# notifyme, ldmping (against the server ldmadmin started), pqmon, pqcat
# -i, pqexpire -i, pqact (SIGUSR1 and SIGHUP, with -d elsewhere).  Under
# ldmd, through newlog: a requester child, whose upstream is another ldmd.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

# An upstream ldmd of its own (foreground, a kernel-chosen port), whose
# queue the test inserts into.
UQ=$SCRATCH/up.pq
ULOG=$SCRATCH/up.log
pqcreate -s 2M -q "$UQ" || fail "pqcreate $UQ"
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\n' >up.conf
background ldmd -f -l "$ULOG" -P 0 -I 127.0.0.1 -q "$UQ" up.conf
wait_until 10 grep -q 'listening on 127.0.0.1 port' "$ULOG" || fail "the upstream ldmd did not start"
uport=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$ULOG" | head -1)

# The server under test requests everything from it.
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\nREQUEST\tANY\t".*"\t127.0.0.1:%s\n' "$uport" >"$CONF"
admin_ok mkqueue
admin_ok start -v -P 0
port=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" | head -1)
[[ -n $port ]] || fail "no port in the log"

# Products into both queues, one every 0.1 s (a load, not a
# synchronization).
# shellcheck disable=SC2016 # the inner shell's
background bash -c 'i=0; while :; do
  echo "$i" | pqinsert -q "$1" -p "flow.$i" || exit 1
  echo "$i" | pqinsert -q "$2" -p "up.$i" || exit 1
  i=$((i + 1)); sleep 0.1; done' sh "$Q" "$UQ"

mkdir -p logs elsewhere data
printf 'ANY\t^(.*)\n\tFILE\t\\1\n' >pqact.conf

# pid_of FILE ERE: the pid of the last line of FILE matching ERE.
pid_of() {
  grep -E -- "$2" "$1" 2>/dev/null | tail -1 | sed 's/^[^ ]* [^[]*\[\([0-9]*\)\].*/\1/'
}

# logged_by FILE ERE PID: is the last line of FILE matching ERE of PID?
logged_by() {
  [[ $(pid_of "$1" "$2") == "$3" ]]
}

# reopens NAME SIGNAL ERE CMD...: run CMD (its log logs/NAME.log, relative
# to the test's directory), wait for a line matching ERE, rename the log,
# send SIGNAL, wait for such a line of the same process in a fresh log.
reopens() {
  local name=$1 sig=$2 ere=$3 log=logs/$1.log
  shift 3
  rm -f "$log" "$log.1"
  background "$@"
  local p=$BG
  # A line of this process: its handlers are in place.
  wait_until 20 logged_by "$log" "$ere" "$p" ||
    fail "$name logged no '$ere': $(cat "$log" 2>&1)"
  mv "$log" "$log.1" || fail "mv $log"
  kill -"$sig" "$p" || fail "cannot send SIG$sig to $name"
  wait_until 20 grep -qsE -- "$ere" "$log" ||
    fail "$name: no new line in a fresh $log after SIG$sig (still writing to $log.1?)"
  [[ $(pid_of "$log" "$ere") == "$p" ]] || fail "$name: the fresh log's lines are not of pid $p"
  kill -TERM "$p"
  wait_until 10 gone "$p" || fail "$name did not stop on SIGTERM"
  ok "$name reopens its log on SIG$sig"
}

reopens notifyme USR1 ' flow\.' notifyme -v -l logs/notifyme.log -h "127.0.0.1:$port"
reopens ldmping USR1 'RESPONDING' ldmping -v -i 1 -l logs/ldmping.log -h "127.0.0.1:$port"
reopens pqmon USR1 'pqmon\[' pqmon -i 1 -l logs/pqmon.log -q "$Q"
reopens pqcat USR1 ' flow\.' pqcat -v -i 1 -l logs/pqcat.log -q "$Q" /dev/null
reopens pqexpire USR1 'pqexpire\[' pqexpire -i 1 -a 3600 -l logs/pqexpire.log -q "$Q"
# pqact changes to -d's directory: its relative log must be found again.
reopens pqact USR1 'FILE: flow\.' pqact -v -l logs/pqact.log -d elsewhere -q "$Q" pqact.conf
reopens pqact HUP 'FILE: flow\.' pqact -v -l logs/pqact.log -d elsewhere -q "$Q" pqact.conf
grep -q 'Rereading configuration file' logs/pqact.log ||
  fail "pqact's reread on SIGHUP is not in its fresh log"
[[ ! -e elsewhere/logs/pqact.log ]] || fail "pqact reopened its log under -d's directory"

# A requester child of the server: its lines (each product received, -v)
# go to the fresh log after newlog, from the same process.
RECV=' up\.[0-9]+$'
wait_until 20 grep -qsE -- "$RECV" "$LOG" || fail "the requester logged no product"
req=$(pid_of "$LOG" "$RECV")
admin_ok newlog
expect_in "$ERR" "sent SIGUSR1 to the LDM server"
wait_until 20 grep -qsE -- "$RECV" "$LOG" || fail "no requester line in the fresh log"
[[ $(pid_of "$LOG" "$RECV") == "$req" ]] ||
  fail "the fresh log's product lines are not of the requester $req"
grep -qE -- "$RECV" "$LOG.1" || fail "the requester's old lines are not in the rotated log"
ok "a requester child (pid $req) reopens the log on newlog's SIGUSR1"
admin_ok stop
