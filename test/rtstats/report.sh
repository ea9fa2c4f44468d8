#!/usr/bin/env bash
# rtstats against our ldmd on 127.0.0.1 (a kernel-chosen port, an ACCEPT
# for EXP): products with chosen creation times, feedtypes and origins go
# into the local queue; the reports that ldmd stores in its own queue are
# read back with pqcat -v -O.  Each is an EXP product whose identifier is
# rtstats-<version>/<host>/<FEEDTYPE>/<origin>, whose origin ldmd rewrote
# to <host>_v_<name of 127.0.0.1>, and whose line splits into exactly 11
# fields with the bin's counts, bytes, latencies, feedtype, origin and
# version.
#   1. -o 3600 -i 0: one report per (hour, feedtype, origin), then exit 0;
#   2. following the queue with -I 1: reports come by themselves, only for
#      the bins that changed, with the hour's figures so far;
#   3. the server down: the failure is logged, rtstats goes on, and once
#      the server is back the figures binned meanwhile all arrive;
#   4. SIGUSR1 logs the bins; SIGTERM: exit 0 within 5 s.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

start_ldmd
ORIG=noaaport.x.edu_v_idd.y.edu
# Three IDS products of ORIG created at A - 90, A - 40 and A (sizes 100,
# 200, 300), where A is 10 s ago, or the last second of the previous hour
# if that would put them in two hours; two HDS of other.edu created 5 s
# ago; one NEXRAD3 of 70 minutes ago, in a bin of an hour before.
before=$(date +%s)
A=$((before - 10))
(((A - 90) / 3600 == A / 3600)) || A=$((A / 3600 * 3600 - 1))
insert IDS $((A - 90)) "$ORIG" ids1 100
insert IDS $((A - 40)) "$ORIG" ids2 200
insert IDS "$A" "$ORIG" ids3 300
insert HDS $((before - 5)) other.edu hds1 1000
insert HDS $((before - 5)) other.edu hds2 1000
insert NEXRAD3 $((before - 4200)) radar.edu n3 5000
after=$(($(date +%s) + 1))

# 1. Once, from an hour back.
expect_rc 0 rtstats -l - -v -o 3600 -i 0 -H "$MYNAME" -h "127.0.0.1:$PORT"
expect_in "$ERR" "sent 3 reports to 127.0.0.1:$PORT"
reports
((nreports == 3)) || fail "$nreports reports, not 3: $(cat "$SCRATCH/reports")"

# Each latency is its insertion (from before to after) minus its creation.
check_line "$(report_of IDS "$ORIG")" IDS "$ORIG" 3 600
[[ ${F[0]} == "$(utc "$A")" ]] || fail "newest creation time ${F[0]}"
[[ ${F[1]} > "$(utc $((before - 1)))" && ${F[1]} < "$(utc "$after")" ]] ||
  fail "insertion time ${F[1]} not from $before to $after"
lo=$((before - A)) hi=$((after - A))
between "${F[7]}" "$lo" "$hi" || fail "latest latency ${F[7]}, not $lo to $hi"
between "${F[8]}" "$lo + 43.33" "$hi + 43.34" || fail "mean latency ${F[8]}"
between "${F[9]%@*}" "$lo + 90" "$hi + 91" || fail "max latency ${F[9]}"
ok "IDS: 3 products, 600 bytes, latest, mean and max latency: ${F[*]}"

check_line "$(report_of HDS other.edu)" HDS other.edu 2 2000
between "${F[8]}" 5 $((after - before + 5)) || fail "HDS mean latency ${F[8]}"
check_line "$(report_of NEXRAD3 radar.edu)" NEXRAD3 radar.edu 1 5000
between "${F[9]%@*}" 4200 $((after - before + 4201)) || fail "NEXRAD3 max ${F[9]}"
[[ ${F[0]} == "$(utc $((before - 4200)))" ]] || fail "NEXRAD3 creation ${F[0]}"
ok "HDS and the hour-old NEXRAD3 in bins of their own"
# The origin that reaches a collector is rewritten by ldmd, as LDM's is.
ok "reports stored as EXP, ident rtstats-$VERSION/$MYNAME/..., origin ${MYNAME}_v_$PEERNAME"

# 2. Following the queue: a report cycle a second (-I 1), of what changed.
start_rtstats -v -I 1 -i 1 -H "$MYNAME" -h "127.0.0.1:$PORT"
wait_until 10 rtstats_started || fail "rtstats did not start"
t=$(date +%s)
insert IDS $((t - 20)) "$ORIG" ids4 400
insert HDS $((t - 1)) other.edu hds3 10
wait_until 20 bin_is IDS "$ORIG" 1 400 || fail "no report of ids4"
wait_until 20 bin_is HDS other.edu 1 10 || fail "no report of hds3"
check_line "$(report_of IDS "$ORIG")" IDS "$ORIG" 1 400
between "${F[7]}" 20 25 || fail "latest latency ${F[7]}"
check_line "$(report_of HDS other.edu)" HDS other.edu 1 10
ok "following: the new products reported by themselves"

# Created in the same second as ids4, inserted later: the newest.
insert IDS $((t - 20)) "$ORIG" ids5 600
wait_until 20 bin_is IDS "$ORIG" 2 1000 || fail "no report of ids4 + ids5"
check_line "$(report_of IDS "$ORIG")" IDS "$ORIG" 2 1000
between "${F[7]}" 20 25 || fail "latest after 2 products ${F[7]}"
between "${F[9]%@*}" 20 26 || fail "max after 2 products ${F[9]}"
(($(grep -c " rtstats-$VERSION/$MYNAME/HDS/other.edu " "$SCRATCH/reports") == 2)) ||
  fail "the unchanged HDS bin was reported again"
grep -q 'sent 1 reports' "$RLOG" || fail "no cycle of the IDS bin alone"
ok "a changed bin is reported again with the hour's figures; an unchanged one is not"

# SIGUSR1: every bin's line in the log.
kill -USR1 "$RT_PID"
wait_until 10 grep -qE 'NOTE  2 bins, [01] with figures to report' "$RLOG" ||
  fail "no list of the bins after SIGUSR1"
wait_until 10 grep -qE "NOTE  [0-9]{14} [0-9]{14} +$MYNAME +IDS +$ORIG +2 +1000 " "$RLOG" ||
  fail "the IDS bin is not in the list"
ok "SIGUSR1: the bins' lines logged"

# 3. The server goes away: logged, not fatal; back on the same port, it
# gets what was binned meanwhile.
stop_ldmd
insert HDS $((t - 1)) other.edu hds4 20
insert HDS $((t - 1)) other.edu hds5 30
refused="Connection refused (1 reports kept for the next try)"
wait_until 20 eval "[[ \$(grep -c '$refused' \"\$RLOG\") -ge 3 ]]" ||
  fail "rtstats did not log three refused connections"
gone "$RT_PID" && fail "rtstats died when the server was down"
start_ldmd "$PORT"
wait_until 20 bin_is HDS other.edu 3 60 ||
  fail "the figures binned while the server was down did not arrive"
check_line "$(report_of HDS other.edu)" HDS other.edu 3 60
ok "server down: logged, retried each cycle, nothing lost once it is back"

# 4. SIGTERM: a clean exit.
stop_expect "$RT_PID" rtstats TERM 5 0 "$SCRATCH/rtstats.err"
RT_PID=
expect_in "$RLOG" "Exiting"
sanitizer_check "$RLOG"
stop_ldmd
ok "SIGTERM: exit 0 in $ms ms"
