#!/usr/bin/env bash
# notifyme against fakeldm: the class it asks for; one product line per
# NOTIFICATION exactly as LDM prints them (with -O the origin, with -x the
# signature); NOTIFICATION never answered, NULLPROC answered, an unexpected
# FEEDME refused with PROC_UNAVAIL and a version-5 call with PROG_MISMATCH;
# RECLASS followed; every kind of refusal is exit 2 with a message; the
# silence limit; IPv6; SIGTERM is a clean exit 0.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
EXTRA_LOG=$SCRATCH/nm.log

cat >expected <<'EOF'
     21474 20231114221320.123456 NEXRAD3 042  SDUS54 KLZK 142213 /pN0QLZK
         0 20231114221321.000000 IDS|DDPLUS 1234  SAUS44 KWBC 142200
4294967295 20231114221322.999999 EXP|0x80000000 007  x y
EOF

# run_session ARGS...: notifyme ARGS against the running fake until the
# fake has seen the NULLPROC answer and some quiet; then SIGTERM.
run_session() {
  : >nm.log
  background notifyme "$@" 2>nm.log
  local nm=$BG
  wait_until 20 in_report $'quiet' || fail "the session did not complete"
  kill -TERM "$nm"
  wait_exit "$nm" 10
  ((rc == 0)) || fail "notifyme exited $rc after SIGTERM, expected 0"
  sanitizer_check nm.log
  stop_fake
}

# 1. Product lines, the class, the answers to the server's calls.
start_fake notify 127.0.0.1 -n 3
before=$(date +%s)
run_session -v -h "127.0.0.1:$PORT" -f 'WMO|NEXRAD3' -p '^S' -o 3600
products nm.log >got
diff got expected >diff.out || fail "product lines differ: $(cat diff.out)"
line=$(grep -P '^NOTIFYME\t' "$REPORT")
[[ $line == *$'feedtype=0x0800000f\tpattern=^S\t'* ]] ||
  fail "class sent: $line"
[[ $line == *$'to=2147483647.999999' ]] || fail "to of the class: $line"
from=$(sed -E 's/.*from=([0-9]+)\..*/\1/' <<<"$line")
((from >= before - 3600 - 2 && from <= before - 3600 + 5)) ||
  fail "from $from is not now - 3600 (now $before)"
in_report $'FEEDME\taccept_stat=3' || fail "FEEDME not refused with PROC_UNAVAIL"
in_report $'v5\taccept_stat=2\tlow=6\thigh=6' ||
  fail "a version-5 call not refused with PROG_MISMATCH 6-6"
in_report $'NULLPROC\tanswered\taccept_stat=0' || fail "NULLPROC not answered"
! in_report stray || fail "notifyme sent something it should not"
msgs nm.log >m
expect_in m "Starting Up: 127.0.0.1:$PORT: "
expect_in m ' TS_ENDT {{NEXRAD3|WMO, "^S"}}'
expect_in m "Exiting"
ok "LDM's product lines, the class, NOTIFICATION unanswered, NULLPROC answered"

# 2. Without -v nothing is shown (LDM: -v is needed to see products).
start_fake notify 127.0.0.1 -n 3
run_session -h "127.0.0.1:$PORT"
products nm.log >got
[[ ! -s got ]] || fail "product lines without -v"
ok "no product lines without -v"

# 3. -O appends the origin; -x puts the signature first.
start_fake notify 127.0.0.1 -n 1
run_session -v -O -h "127.0.0.1:$PORT"
products nm.log >got
[[ $(cat got) == "$(head -1 expected) noaaport.x.edu" ]] ||
  fail "-O line: $(cat got)"
start_fake notify 127.0.0.1 -n 1
run_session -x -h "127.0.0.1:$PORT"
products nm.log >got
[[ $(cat got) == "000102030405060708090a0b0c0d0e0f $(head -1 expected)" ]] ||
  fail "-x line: $(cat got)"
ok "-O origin and -x signature"

# 4. RECLASS: the request is made again with the class returned.
start_fake notify 127.0.0.1 -r reclass -n 1
run_session -v -h "127.0.0.1:$PORT" -f ANY
[[ $(grep -cP '^NOTIFYME\t' "$REPORT") == 2 ]] || fail "NOTIFYME not re-issued"
grep -P '^NOTIFYME\t' "$REPORT" | tail -1 | grep -qP 'feedtype=0x08000000\tpattern=\^SDUS\t' ||
  fail "the second NOTIFYME is not the class returned"
msgs nm.log >m
expect_in m "allows only "
expect_in m '{{NEXRAD3, "^SDUS"}}: asking for that'
products nm.log >got
[[ $(cat got) == "$(head -1 expected)" ]] || fail "no product after RECLASS"
ok "RECLASS followed on the same connection"

# 5. Refusals: exit 2 with a message that names the server and the reason.
for answer in deny badpattern tooweak tooweak0 systemerr; do
  start_fake notify 127.0.0.1 -r "$answer"
  expect_rc 2 notifyme -h "127.0.0.1:$PORT"
  sanitizer_check "$ERR"
  case $answer in
  deny) expect_in "$ERR" "refused NOTIFYME: none of the request is allowed (empty RECLASS)" ;;
  badpattern) expect_in "$ERR" "refused NOTIFYME: bad pattern (BADPATTERN)" ;;
  tooweak*) expect_in "$ERR" "127.0.0.1:$PORT refused NOTIFYME: not allowed (AUTH_TOOWEAK)" ;;
  systemerr) expect_in "$ERR" "system error at the server (SYSTEM_ERR)" ;;
  esac
  stop_fake
done
ok "refusals (empty RECLASS, BADPATTERN, AUTH_TOOWEAK with and without xid, SYSTEM_ERR) exit 2"

# 6. The pattern LDM calls pathological loses its leading ".*".
start_fake notify 127.0.0.1 -n 0
run_session -h "127.0.0.1:$PORT" -p '.*.*SDUS'
in_report $'pattern=SDUS\t' || fail "pattern not adjusted: $(cat "$REPORT")"
msgs nm.log >m
expect_in m 'adjusting pathological regular expression ".*.*SDUS" to "SDUS"'
ok "leading .* stripped with a message"

# 7. Silence longer than -T ends the session; notifyme then waits to
# reconnect (and a SIGTERM during that wait is a clean exit).
start_fake notify 127.0.0.1 -n 1
: >nm.log
background notifyme -t 1 -T 2 -h "127.0.0.1:$PORT" 2>nm.log
nm=$BG
wait_until 20 grep -qF "reconnecting to 127.0.0.1:$PORT in 30 s" nm.log ||
  fail "no reconnection after 2 s of silence"
expect_in nm.log "nothing from 127.0.0.1:$PORT for 2 s"
kill -TERM "$nm"
wait_exit "$nm" 10
((rc == 0)) || fail "notifyme exited $rc after SIGTERM while waiting"
stop_fake
ok "silence limit -T, then a clean stop while waiting to reconnect"

# 8. IPv6: [::1]:port and -h ::1 -P port.
if have_ipv6; then
  start_fake notify ::1 -n 1
  run_session -v -h "[::1]:$PORT"
  products nm.log >got
  [[ $(cat got) == "$(head -1 expected)" ]] || fail "no product over IPv6"
  in_report $'from=::1' || fail "not connected over IPv6"
  start_fake notify ::1 -n 1
  run_session -v -h ::1 -P "$PORT"
  products nm.log >got
  [[ $(cat got) == "$(head -1 expected)" ]] || fail "no product with -h ::1 -P"
  expect_in nm.log "Starting Up: [::1]:$PORT:"
  ok "IPv6 as [::1]:port and -h ::1 -P port"
else
  skip_part "IPv6 (notifyme over ::1): cannot listen on ::1"
fi

# 9. The port from the registry when none is given.
start_fake notify 127.0.0.1 -n 1
cat >"$LDM_REGISTRY" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<registry><server><port>$PORT</port></server></registry>
EOF
run_session -v -h 127.0.0.1
products nm.log >got
[[ $(cat got) == "$(head -1 expected)" ]] || fail "registry port not used"
ok "the registry's /server/port as the default port"
