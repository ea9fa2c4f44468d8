#!/usr/bin/env bash
# A bad peer ends only its own connection: malformed and truncated RPC
# records, a huge length word and garbage bytes each close that connection
# with a log line while a subscriber on another connection keeps receiving.
# The RPC surface as LDM's: NULLPROC of versions 4, 5 and 6; PROG_MISMATCH
# (4..6) for other versions; PROC_UNAVAIL for unknown procedures;
# GARBAGE_ARGS for arguments that do not decode; IS_ALIVE true for a live
# upstream's pid and false otherwise.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 10000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ALLOW ANY ^::1$
EOF
start_ldmd

background peer notifyme -f EXP -o 0 -n 4 -t 30 >noti.out
noti=$BG
wait_until 10 grep -q '^OK' noti.out || fail "notifyme got no OK"
upid=$(awk '/^OK/ {print $2}' noti.out)
expect_rc 0 "$PEER" insert -q "$Q" -n 2 -s 100 -f EXP -i before

for kind in huge garbage badheader; do
  expect_rc 0 peer hostile -k "$kind" -t 10
  expect_in "$OUT" "CLOSED"
done
expect_rc 0 peer hostile -k truncated
wait_until 5 grep -q "inside a record" "$LOG" || fail "no log line for truncation"
expect_in "$LOG" "RPC record longer than allowed"
expect_in "$LOG" "malformed ONC RPC message header"
(($(count "$LOG" "bad RPC record from") == 4)) || fail "expected 4 log lines"
ok "huge length word, garbage, bad header, truncated record: each closed, logged"

expect_rc 0 "$PEER" insert -q "$Q" -n 2 -s 100 -f EXP -i after -z 2
wait "$noti" || fail "the subscriber was disturbed: $(cat noti.out)"
ok "a subscriber on another connection kept receiving"

expect_rc 0 peer call -V 6 -R 0
expect_rc 0 peer call -V 5 -R 0
expect_rc 0 peer call -V 4 -R 0
expect_rc 1 peer call -V 7 -R 0
expect_in "$OUT" "accept_stat=2 low=4 high=6"
expect_rc 1 peer call -V 6 -R 99
expect_in "$OUT" "accept_stat=3"
expect_rc 1 peer call -V 4 -R 4
expect_in "$OUT" "accept_stat=3"
expect_rc 1 peer call -V 6 -R 4 -x 7 # FEEDME with a u_int: undecodable
expect_in "$OUT" "accept_stat=4"
ok "NULLPROC v4/v5/v6, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS"

# IS_ALIVE: a live upstream, then one that has gone.
background peer notifyme -f EXP -o 0 -t 30 >noti2.out
noti2=$BG
wait_until 10 grep -q '^OK' noti2.out || fail "second notifyme got no OK"
upid=$(awk '/^OK/ {print $2}' noti2.out)
expect_rc 0 peer call -V 6 -R 14 -x "$upid"
expect_in "$OUT" "ALIVE yes"
kill "$noti2"
wait "$noti2" 2>/dev/null
wait_until 10 bash -c "! kill -0 $upid 2>/dev/null" || fail "upstream $upid stayed"
expect_rc 0 peer call -V 6 -R 14 -x "$upid"
expect_in "$OUT" "ALIVE no"
expect_rc 0 peer call -V 6 -R 14 -x 1
expect_in "$OUT" "ALIVE no"
ok "IS_ALIVE: yes for a live upstream, no after it ended"

stop_ldmd
ok "stopped"
