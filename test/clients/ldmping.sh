#!/usr/bin/env bash
# ldmping against fakeldm: LDM's header and rows exactly (elapsed time
# aside); a version-5 NULLPROC; quiet unless verbose, but slow answers and
# failures always shown; the states NAMED, ADDRESSED, H_CLNTED; exit 1 with
# -i 0 when a server does not respond; a server without version 5 pinged
# with version 6; repeated passes on one connection; IPv6; the registry's
# port.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

# row STATE PORT HOST [STAT]: LDM's row with the elapsed time as T.TTTTTT.
row() {
  printf '%10s %3s.%6s %4d   %-11s  %s' "$1" T TTTTTT "$2" "$3" "${4:-}"
}
# rows FILE: the rows logged in FILE, elapsed time masked.
rows() {
  msgs "$1" | grep -vF 'State    Elapsed' |
    sed -E 's/^(.{10}) +[0-9]+\.[0-9]{6} /\1   T.TTTTTT /'
}
header='     State    Elapsed Port   Remote_Host           rpc_stat'

# 1. Verbose: the header, one row at INFO, a version-5 NULLPROC.
start_fake ping 127.0.0.1
expect_rc 0 ldmping -v -i 0 -h "127.0.0.1:$PORT"
stop_fake
[[ $(msgs "$ERR" | head -1) == "$header" ]] || fail "header: $(msgs "$ERR" | head -1)"
[[ $(rows "$ERR") == "$(row RESPONDING "$PORT" 127.0.0.1)" ]] ||
  fail "row: '$(rows "$ERR")'"
grep -q ' INFO ' "$ERR" || fail "the row is not at INFO"
in_report $'call\tvers=5\tproc=0' || fail "not a version-5 NULLPROC"
ok "LDM's header and RESPONDING row; version-5 NULLPROC"

# 2. Not verbose (stderr is not a terminal): nothing for a quick answer,
# but a row for an answer slower than 1 s.
start_fake ping 127.0.0.1
expect_rc 0 ldmping -h "127.0.0.1:$PORT"
stop_fake
[[ ! -s $ERR ]] || fail "output when quiet: $(cat "$ERR")"
start_fake ping 127.0.0.1 -r slow
expect_rc 0 ldmping -q -i 0 "127.0.0.1:$PORT"
stop_fake
[[ $(rows "$ERR") == "$(row RESPONDING "$PORT" 127.0.0.1)" ]] ||
  fail "slow row: '$(rows "$ERR")'"
msgs "$ERR" | grep -qE '^RESPONDING +1\.[0-9]{6} ' || fail "elapsed not 1.x s"
ok "quiet by default off a terminal; slow answers still shown"

# 3. Failures: exit 1, rows at ERROR with how far it got.
dead=$(dead_port)
expect_rc 1 ldmping -i 0 -h "127.0.0.1:$dead"
[[ $(rows "$ERR") == "$(row ADDRESSED "$dead" 127.0.0.1 "cannot connect to 127.0.0.1 port $dead: Connection refused")" ]] ||
  fail "refused row: '$(rows "$ERR")'"
grep -q ' ERROR ' "$ERR" || fail "the failure is not at ERROR"
expect_rc 1 ldmping -i 0 -h nonexistent.invalid -P 388
rows "$ERR" | grep -qE '^     NAMED   T\.TTTTTT  388   nonexistent\.invalid  cannot resolve nonexistent\.invalid: ' ||
  fail "unresolved row: '$(rows "$ERR")'"
start_fake ping 127.0.0.1 -r mute
expect_rc 1 ldmping -i 0 -t 1 -h "127.0.0.1:$PORT"
stop_fake # its connection ends when ldmping gives up
[[ $(rows "$ERR") == "$(row H_CLNTED "$PORT" 127.0.0.1 "no answer to NULLPROC from 127.0.0.1:$PORT within 1 s")" ]] ||
  fail "mute row: '$(rows "$ERR")'"
start_fake ping 127.0.0.1 -r tooweak0
expect_rc 1 ldmping -i 0 -h "127.0.0.1:$PORT"
stop_fake
[[ $(rows "$ERR") == "$(row H_CLNTED "$PORT" 127.0.0.1 "127.0.0.1:$PORT refused NULLPROC: not allowed (AUTH_TOOWEAK)")" ]] ||
  fail "refused row: '$(rows "$ERR")'"
ok "NAMED, ADDRESSED, H_CLNTED (timeout, refusal): exit 1"

# 4. Like LDM's, a single pass stops at the first server not responding.
start_fake ping 127.0.0.1
expect_rc 1 ldmping -v -i 0 "127.0.0.1:$dead" "127.0.0.1:$PORT"
kill_fake
[[ $(rows "$ERR" | wc -l) == 1 ]] || fail "pinged past the failure"
! in_report call || fail "the second server was pinged"
ok "stops at the first failure with -i 0"

# 5. A server without version 5 is pinged with version 6.
start_fake ping 127.0.0.1 -r v6only
expect_rc 0 ldmping -v -i 0 "127.0.0.1:$PORT"
stop_fake
[[ $(rows "$ERR") == "$(row RESPONDING "$PORT" 127.0.0.1)" ]] ||
  fail "v6 row: '$(rows "$ERR")'"
in_report $'call\tvers=6\tproc=0' || fail "no version-6 NULLPROC"
ok "version 6 when version 5 is not served"

# 6. Repeated passes use one connection; SIGTERM stops them (exit 0).
start_fake ping 127.0.0.1
background ldmping -v -i 1 -h "127.0.0.1:$PORT" 2>pings.log
p=$BG
wait_until 15 eval "[[ \$(grep -c '^call' '$REPORT') -ge 3 ]]" ||
  fail "fewer than 3 passes"
kill -TERM "$p"
wait_exit "$p" 10
((rc == 0)) || fail "ldmping exited $rc after SIGTERM"
stop_fake
[[ $(grep -c '^connection' "$REPORT") == 1 ]] || fail "reconnected between passes"
[[ $(rows pings.log | sort -u) == "$(row RESPONDING "$PORT" 127.0.0.1)" ]] ||
  fail "rows of the passes: $(rows pings.log)"
sanitizer_check pings.log
ok "passes every -i seconds on one connection"

# 7. IPv6; the registry's port.
if have_ipv6; then
  start_fake ping ::1
  expect_rc 0 ldmping -v -i 0 -h "[::1]:$PORT"
  stop_fake
  [[ $(rows "$ERR") == "$(row RESPONDING "$PORT" ::1)" ]] ||
    fail "IPv6 row: '$(rows "$ERR")'"
  in_report $'from=::1' || fail "not over IPv6"
  start_fake ping ::1
  expect_rc 0 ldmping -v -i 0 -h ::1 -P "$PORT"
  stop_fake
  [[ $(rows "$ERR") == "$(row RESPONDING "$PORT" ::1)" ]] ||
    fail "IPv6 row with -P: '$(rows "$ERR")'"
  ok "IPv6 as [::1]:port and -h ::1 -P port"
else
  skip_part "IPv6 (ldmping over ::1): cannot listen on ::1"
fi
start_fake ping 127.0.0.1
cat >"$LDM_REGISTRY" <<EOF2
<?xml version="1.0" encoding="UTF-8"?>
<registry><server><port>$PORT</port></server></registry>
EOF2
expect_rc 0 ldmping -v -i 0 127.0.0.1
stop_fake
[[ $(rows "$ERR") == "$(row RESPONDING "$PORT" 127.0.0.1)" ]] ||
  fail "registry port row: '$(rows "$ERR")'"
ok "the registry's /server/port as the default port"
