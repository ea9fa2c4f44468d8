#!/usr/bin/env bash
# rtstats on the wire, against fakeldm (test/clients/fakeldm.c), which
# reports every call: the HIYA offer is {TS_ZERO, TS_ENDT, {EXP, ".*"}};
# reports go as HEREIS, or as COMINGSOON + BLKDATA above max_hereis, each
# with its MD5 checked by the server, a sequence number one more than the
# last, the origin -H, and a final NULLPROC; RECLASS and DONT_SEND are
# honoured; a server that refuses us (AUTH_TOOWEAK) is logged, and rtstats
# goes on trying; SIGTERM and SIGINT end it at once, also while it waits
# for an answer.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
STOP_S=5
NET='poll_schedule|do_sys_poll|do_poll|futex'

A=$(hour_safe 2) # i1 and i2 in one bin whenever the test runs
insert IDS $((A - 2)) a.edu i1 100
insert IDS $((A - 1)) a.edu i2 100
insert HDS "$A" b.edu h1 100
once=(-l - -o 3600 -i 0 -H "$MYNAME")

# sent HOW: the reports fakeldm got, each HOW (HEREIS or BLKDATA) and
# intact, with the metadata of a report; their identifiers in sent.ids.
sent() {
  local how ident sz ok sum ft seq origin i=0
  grep -P '^(HEREIS|BLKDATA)\t' "$REPORT" >prods
  : >sent.ids
  while IFS=$'\t' read -r how ident sz ok sum ft seq origin _; do
    [[ $how == "$1" ]] || fail "sent as $how, not $1: $ident"
    [[ $ok == md5ok ]] || fail "MD5 of $ident"
    [[ $ft == 0x40000000 ]] || fail "feedtype $ft of $ident"
    [[ $origin == "$MYNAME" ]] || fail "origin $origin of $ident"
    [[ $seq == "$i" ]] || fail "seqno $seq of $ident, not $i"
    [[ $sz == "$(stat -c %s "got/$i")" ]] || fail "size $sz of $ident"
    read -r -a f <"got/$i"
    ((${#f[@]} == 11)) || fail "${#f[@]} fields in $ident: $(cat "got/$i")"
    [[ $ident == "rtstats-$VERSION/$MYNAME/${f[3]}/${f[4]}" ]] ||
      fail "ident $ident of $(cat "got/$i")"
    [[ $(md5sum <"got/$i" | cut -c1-32) == "$sum" ]] || fail "signature of $ident"
    echo "$ident" >>sent.ids
    i=$((i + 1))
  done <prods
  [[ $(grep -vE '^(closed|end)' "$REPORT" | tail -1) == NULLPROC ]] ||
    fail "the cycle does not end with NULLPROC"
}

# 1. OK with max_hereis 0xFFFFFFFF: HEREIS.
mkdir -p got
start_fake hiya 127.0.0.1 -d got
expect_rc 0 rtstats "${once[@]}" -h "127.0.0.1:$PORT"
stop_fake
line=$(grep -P '^HIYA\t' "$REPORT")
[[ $line == $'HIYA\tfeedtype=0x40000000\tpattern=.*\tfrom=0.000000\tto=2147483647.999999' ]] ||
  fail "offer: $line"
sent HEREIS
# In the bins' order: hour, then feedtype (HDS 0x4 before IDS 0x8).
[[ $(cat sent.ids) == "rtstats-$VERSION/$MYNAME/HDS/b.edu"$'\n'"rtstats-$VERSION/$MYNAME/IDS/a.edu" ]] ||
  fail "reports sent: $(cat sent.ids)"
ok "HIYA {TS_ZERO, TS_ENDT, {EXP, .*}}; 2 reports as HEREIS, intact; NULLPROC"

# 2. max_hereis 100, less than a report: COMINGSOON + BLKDATA.
rm -f got/*
start_fake hiya 127.0.0.1 -d got -H 100
expect_rc 0 rtstats "${once[@]}" -h "127.0.0.1:$PORT"
stop_fake
sent BLKDATA
(($(grep -c '^COMINGSOON' "$REPORT") == 2)) || fail "expected 2 COMINGSOON"
ok "above max_hereis: COMINGSOON + BLKDATA"

# 3. RECLASS: only the reports the server's pattern matches.
rm -f got/*
start_fake hiya 127.0.0.1 -d got -r reclass -R '/IDS/'
expect_rc 0 rtstats "${once[@]}" -h "127.0.0.1:$PORT"
stop_fake
sent HEREIS
[[ $(cat sent.ids) == "rtstats-$VERSION/$MYNAME/IDS/a.edu" ]] ||
  fail "sent after RECLASS: $(cat sent.ids)"
expect_in "$ERR" "127.0.0.1:$PORT does not want 1 of the reports: not sent"
ok "RECLASS: only the accepted reports"

# 4. DONT_SEND to HIYA: nothing sent, not an error.
start_fake hiya 127.0.0.1 -r dontsend
expect_rc 0 rtstats "${once[@]}" -h "127.0.0.1:$PORT"
stop_fake
! in_report HEREIS || fail "sent after DONT_SEND"
expect_in "$ERR" "wants none of the reports (DONT_SEND): 2 not sent"
ok "DONT_SEND: nothing sent, exit 0"

# 5. Refused (AUTH_TOOWEAK): -i 0 exits 3; following, it logs each
# refusal and keeps trying.
start_fake hiya 127.0.0.1 -r tooweak
expect_rc 3 rtstats "${once[@]}" -h "127.0.0.1:$PORT"
stop_fake
expect_in "$ERR" "127.0.0.1:$PORT refused HIYA: not allowed (AUTH_TOOWEAK) (2 reports kept for the next try)"
start_fake hiya 127.0.0.1 -r tooweak -c 3
start_rtstats -o 3600 -I 0.2 -H "$MYNAME" -h "127.0.0.1:$PORT"
stop_fake # it served 3 connections, each refused
wait_until 10 eval "[[ \$(grep -c 'refused HIYA: not allowed' \"\$RLOG\") -ge 3 ]]" ||
  fail "rtstats did not log 3 refusals"
gone "$RT_PID" && fail "rtstats died of a refusal"
stop_expect "$RT_PID" rtstats TERM "$STOP_S" 0 "$SCRATCH/rtstats.err"
ok "refusals: logged, retried, exit 3 only with -i 0"

# 6. Stops: waiting for the answer to HIYA from a server that answers
# nothing (SIGTERM), and waiting on the queue (SIGINT).
start_fake ping 127.0.0.1 -r mute
start_rtstats -o 3600 -I 0.2 -H "$MYNAME" -h "127.0.0.1:$PORT"
wait_until 10 in_report call || fail "rtstats made no call"
wait_until 10 asleep_in "$RT_PID" "$NET" || fail "rtstats is not waiting for the answer"
stop_expect "$RT_PID" rtstats TERM "$STOP_S" 0 "$SCRATCH/rtstats.err"
! grep -q ' ERROR ' "$RLOG" || fail "a stop was logged as an error: $(cat "$RLOG")"
expect_in "$RLOG" "interrupted: stopped while waiting for 127.0.0.1:$PORT to answer HIYA"
stop_fake # its one connection closed
ok "SIGTERM while waiting for HIYA's answer: exit 0 in $ms ms"

start_rtstats -I 1000 -H "$MYNAME" -h "127.0.0.1:$PORT"
wait_until 10 rtstats_started || fail "rtstats did not start"
wait_until 10 asleep_in "$RT_PID" "$NET" || fail "rtstats is not waiting on the queue"
stop_expect "$RT_PID" rtstats INT "$STOP_S" 0 "$SCRATCH/rtstats.err"
expect_in "$RLOG" "Exiting"
ok "SIGINT while waiting for products: exit 0 in $ms ms"
