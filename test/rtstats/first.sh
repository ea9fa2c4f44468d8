#!/usr/bin/env bash
# rtstats's first report waits for no gap, as LDM's does (its last-sent
# time starts at 0), with the default gap of 60 + 0..30 s between reports:
#   1. following the queue from its end, the first product is reported
#      within seconds of its insertion, not 60 s or more after the start;
#   2. with -o, what the queue held is reported at once, all of it in
#      one cycle.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

# Well under LDM's shortest gap (60 s), so that a first report that waited
# for one fails, and loose enough for a loaded machine.
BOUND=20
ORIG=noaaport.x.edu

start_ldmd 0

# 1. From the end of the queue: the first product.
start_rtstats -v -H "$MYNAME" -h "127.0.0.1:$PORT"
wait_until 10 rtstats_started || fail "rtstats did not start"
t=$(($(hour_safe 2) + 1)) # t - 3 to t - 1 in one hour: hds1, hds2 one bin
s0=$SECONDS
insert IDS $((t - 3)) "$ORIG" first 100
wait_until "$BOUND" bin_is IDS "$ORIG" 1 100 ||
  fail "the first product was not reported within $BOUND s: $(cat "$RLOG")"
check_line "$(report_of IDS "$ORIG")" IDS "$ORIG" 1 100
((nreports == 1)) || fail "$nreports reports, not 1: $(cat "$SCRATCH/reports")"
ok "following: the first product reported within $((SECONDS - s0 + 1)) s"
stop_expect "$RT_PID" rtstats TERM 5 0 "$SCRATCH/rtstats.err"
RT_PID=

# 2. With -o: the products of the last hour, those inserted while no
# rtstats ran included, all in the first cycle.
insert HDS $((t - 2)) other.edu hds1 1000
insert HDS $((t - 1)) other.edu hds2 2000
start_rtstats -v -o 3600 -H "$MYNAME" -h "127.0.0.1:$PORT"
wait_until "$BOUND" bin_is HDS other.edu 2 3000 ||
  fail "the queue's products were not reported within $BOUND s: $(cat "$RLOG")"
check_line "$(report_of HDS other.edu)" HDS other.edu 2 3000
# The IDS bin's line is again that of part 1: ldmd drops it as a
# duplicate (same signature), but rtstats sent it in the same cycle.
((nreports == 2)) || fail "$nreports reports, not 2: $(cat "$SCRATCH/reports")"
expect_in "$RLOG" "sent 2 reports to 127.0.0.1:$PORT"
ok "-o: what the queue held reported at once, in one cycle"

stop_expect "$RT_PID" rtstats TERM 5 0 "$SCRATCH/rtstats.err"
RT_PID=
sanitizer_check "$RLOG"
stop_ldmd
