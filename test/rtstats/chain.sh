#!/usr/bin/env bash
# The origins a collector relies on, end to end, between our servers on
# 127.0.0.1: A (the collector's LDM: ALLOW, ACCEPT EXP) feeds B, whose
# REQUEST stores each product with its origin rewritten
# "<origin>_v_127.0.0.1"; rtstats reads B's queue and reports to A.  In
# A's queue, each report's 5th field and identifier carry the relayed
# origin (where the product entered the IDD, and from where B got it), and
# the report itself has the origin "<reporting host>_v_<name of
# 127.0.0.1>", as LDM's ldmd writes both.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
BLOG=$SCRATCH/b.log
BLDMD_PID=
KILL_AT_EXIT+=(BLDMD_PID)

start_ldmd 0
echo "REQUEST IDS|HDS \".*\" 127.0.0.1:$PORT" >"$SCRATCH/b.conf"
mkdir -p b
cd b || fail "cd b"
background "$LDMD_DIR/ldmd" -f -l "$BLOG" -P 0 -I 127.0.0.1 -q "$LQ" \
  "$SCRATCH/b.conf" 2>>"$SCRATCH/b.err"
BLDMD_PID=$BG
cd "$SCRATCH" || fail "cd"
wait_until 15 grep -qs 'is willing to be a primary feeder' "$BLOG" ||
  fail "B's requester did not start: $(cat "$BLOG")"

# Products that entered the IDD at noaaport.test and at radar.test, put
# into A's queue, from which B gets them.
# All in one hour (hour_safe): n1 and n2 are one bin, r1 another.
A=$(hour_safe 20)
LQ_B=$LQ
LQ=$RQ
insert IDS $((A - 20)) noaaport.test n1 100
insert IDS $((A - 10)) noaaport.test n2 200
insert HDS "$A" radar.test r1 300
LQ=$LQ_B
# relayed: how many products in B's queue came from A.
relayed() {
  pqcat -v -O -q "$LQ" -l - 2>&1 >/dev/null | grep -c '_v_127\.0\.0\.1$'
}
three_relayed() { (($(relayed) >= 3)); }
wait_until 15 three_relayed || fail "B did not get the 3 products"

expect_rc 0 rtstats -l - -v -o 3600 -i 0 -H "$MYNAME" -h "127.0.0.1:$PORT"
expect_in "$ERR" "sent 2 reports"
reports
((nreports == 2)) || fail "$nreports reports, not 2: $(cat "$SCRATCH/reports")"
check_line "$(report_of IDS noaaport.test_v_127.0.0.1)" IDS \
  noaaport.test_v_127.0.0.1 2 300
check_line "$(report_of HDS radar.test_v_127.0.0.1)" HDS \
  radar.test_v_127.0.0.1 1 300
ok "relayed origins in the reports (<origin>_v_<upstream>); the reports' own ${MYNAME}_v_$PEERNAME"

kill -TERM "$BLDMD_PID"
wait_exit "$BLDMD_PID" 20
BLDMD_PID=
((rc == 0)) || fail "B exited $rc on SIGTERM"
sanitizer_check "$SCRATCH/b.err"
sanitizer_check "$BLOG"
stop_ldmd
ok "both servers stopped cleanly"
