#!/usr/bin/env bash
# ldmd as a process: -n checks a configuration (a bad line names its file
# and line); EXEC and REQUEST entries are started; the connection limit refuses the
# connection past it with a log line; SIGUSR1 reopens the log (after
# rotation); SIGTERM during feeds and a push stops the server and every
# child within seconds, with no ERROR line, and leaves a queue that passes
# every check without repair; without -f and -l -, ldmd daemonizes and prints the daemon's pid.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 60000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT ANY .* ^127\.0\.0\.1$
EXEC "sleep 300"
REQUEST IDS .* upstream.example.com
EOF
expect_rc 0 "$LDMD" -l - -n "$CONF"
printf 'ALLOW ANY ^127\\.0\\.0\\.1$\nALLOW ANY\n' >bad.conf
expect_rc 1 "$LDMD" -l - -n bad.conf
expect_in "$ERR" "bad.conf:2:"
# A misspelt keyword in column 1 is an error at its line, not two more
# patterns of the ALLOW above it.
printf 'ALLOW ANY ^127\\.0\\.0\\.1$\nREQEUST ANY\n' >typo.conf
expect_rc 1 "$LDMD" -l - -n typo.conf
expect_in "$ERR" 'typo.conf:2: "REQEUST" in column 1 is not a keyword'
printf '# nothing\n' >empty.conf
expect_rc 1 "$LDMD" -l - -n empty.conf
expect_in "$ERR" "effectively empty"
expect_rc 1 "$LDMD" -l - -n "$SCRATCH/missing.conf"
expect_in "$ERR" "missing.conf"
ok "-n: a good file passes; a bad line or a non-keyword in column 1 names file:line; empty and missing fail"

# -I replaces the registry's /server/ip-addr, which is then not read: one
# that cannot be read (too long) stops ldmd only without -I.
printf '<registry><server><ip-addr>%s</ip-addr></server></registry>\n' \
  "$(printf 'a%.0s' {1..300})" >longip.xml
expect_rc 0 env LDM_REGISTRY="$SCRATCH/longip.xml" "$LDMD" -l - -n \
  -I 127.0.0.1 "$CONF"
expect_rc 1 env LDM_REGISTRY="$SCRATCH/longip.xml" "$LDMD" -l - -n "$CONF"
expect_in "$ERR" "/server/ip-addr"
ok "-I: the registry's /server/ip-addr is not read"

start_ldmd -M 3
wait_until 5 grep -q "started EXEC'd process" "$LOG" || fail "EXEC not started"
wait_until 5 grep -q "started requester process" "$LOG" ||
  fail "requester not started"
ok "EXEC and requester started"

# Three idle subscribers use the 3 connections (-M 3): the 4th is refused.
background peer notifyme -f EXP -o 0 -t 60 >n1.out
background peer feedme -f EXP -o 0 -t 60 >n2.out
background peer notifyme -f EXP -o 0 -t 60 >n3.out
n3=$BG
# (Their own "Starting Up(" lines, LDM's.)
wait_until 10 logged 3 'Starting Up(' ||
  fail "subscribers not started"
expect_rc 1 peer call -V 6 -R 0
wait_until 5 grep -q "because too many clients" "$LOG" ||
  fail "the 4th connection was not refused"
ok "the connection limit (-M 3) refuses the 4th connection, with a log line"

# Log rotation: SIGUSR1 makes ldmd and its children reopen the file.
mv "$LOG" "$LOG.1"
kill -USR1 "$LDMD_PID"
wait_until 5 signal_taken "$LDMD_PID" USR1 || fail "ldmd did not take SIGUSR1"
expect_rc 1 peer call -V 6 -R 0 # refused again: logged by the top level
wait_until 5 grep -q "too many clients" "$LOG" ||
  fail "SIGUSR1 did not reopen the log"
ok "SIGUSR1: the log file is reopened"

# SIGTERM while two feeds wait and a push is running.
kill "$n3"
wait "$n3" 2>/dev/null
wait_until 10 logged 1 'products sent' ||
  fail "the third subscriber's upstream did not end"
# ... and ldmd reaped it (its zombie gone), so that its place under -M 3 is
# free for the push: a connection before the reap is refused.
up3=$(grep 'products sent' "$LOG" | tail -1 | sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p')
[[ -n $up3 ]] || fail "no pid in the third subscriber's upstream's log line"
wait_until 10 bash -c "[[ ! -e /proc/$up3 ]]" ||
  fail "ldmd did not reap the third subscriber's upstream ($up3)"
background peer hiya -f IDS -n 100000000 -s 2000 -i flood >flood.out
wait_until 10 grep -q "^OK" flood.out || fail "the push did not start"
wait_until 10 holds "$Q" 200 ||
  fail "the push did not bring 200 products into the queue"
before=$(wc -l <"$LOG")
start=$(date +%s%N)
stop_ldmd
ms=$((($(date +%s%N) - start) / 1000000))
((ms < 5000)) || fail "stopping took $ms ms"
# A clean stop is no error: a wait that the stop cut short (poll's EINTR in
# each connection process) says nothing of it.
tail -n +$((before + 1)) "$LOG" >stop.log
grep -q ' ERROR ' stop.log && fail "ERROR lines at a clean stop: $(grep ' ERROR ' stop.log | head -5)"
expect_in "$LOG" "stopping:"
expect_in "$LOG" "exiting"
expect_not_in "$LOG" "did not stop"
expect_in "$LOG" "EXEC'd process"
(($(count "$LOG" "products sent") >= 3)) ||
  fail "the children did not log into the reopened file"
expect_in "$LOG" "products received"
for p in "${BG_PIDS[@]}"; do
  wait "$p" 2>/dev/null
done
BG_PIDS=()
expect_rc 0 "$PEER" check -q "$Q"
ok "SIGTERM: everything stopped in $ms ms; $(cat "$OUT")"

# Daemon mode: the pid on stdout, the server detached and serving.
printf 'ALLOW ANY ^127\\.0\\.0\\.1$\n' >"$CONF"
: >"$LOG"
expect_rc 0 "$LDMD" -l "$LOG" -P 0 -I 127.0.0.1 -W "$SCRATCH/ldmd.pid" "$CONF"
dpid=$(head -1 "$OUT")
[[ $dpid =~ ^[0-9]+$ ]] || fail "no pid printed: $(cat "$OUT")"
LDMD_PID=$dpid # killed at exit if the test fails
wait_until 5 grep -q 'listening on' "$LOG" || fail "the daemon did not start"
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG")
[[ $(cat "$SCRATCH/ldmd.pid") == "$dpid" ]] || fail "pid file"
expect_rc 0 peer call -V 6 -R 0
kill -TERM "$dpid"
wait_until 15 bash -c "! kill -0 $dpid 2>/dev/null" || fail "the daemon did not stop"
LDMD_PID=
[[ ! -e $SCRATCH/ldmd.pid ]] || fail "the pid file stayed"
ok "daemon mode: pid printed and written, serving, stopped by SIGTERM"
