#!/usr/bin/env bash
# Connection limits against abuse (docs/security.md, "Abuse"): real
# connections from loopback that ldmd must refuse early, before it forks,
# with a log line that names the limit; and a first call that must be whole
# within /server/first-call-limit of the connection's start, however the
# peer spends that time (sending nothing, or a byte at a time: slowloris).
#
#  1. /server/max-per-address 4: six connections held from 127.0.0.1, two
#     are closed at once with "too many connections from that address";
#     from ::1 (another address) three more are still taken.
#  2. -M 5 (in all): with five held, a sixth is refused with "too many
#     clients".
#  3. /server/first-call-limit 3: a silent peer and one that trickles a
#     NULLPROC a byte every 250 ms (11 s for its 44 bytes) are closed after
#     about 3 s with "no call from ... within 3 s"; a peer whose call is
#     whole in time is served and is not closed by the deadline later.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 2000000
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path>
    <max-per-address>4</max-per-address>
    <first-call-limit>60</first-call-limit></server>"
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ALLOW ANY ^::1$
EOF

# closed_count FILE: the connections the server closed, per hold's output.
closed_count() {
  grep -c '^CLOSED ' "$1"
}

# --- 1. per address --------------------------------------------------------
start_ldmd -v
background peer hold -n 6 -t 60 >"$SCRATCH/hold4.out"
held=$BG
wait_until 10 logged 2 "because too many connections from that address" ||
  fail "six connections from 127.0.0.1 with a limit of 4: not 2 refused"
expect_in "$LOG" "denying connection from 127.0.0.1 because too many connections from that address (4, /server/max-per-address 4)"
wait_until 5 bash -c "(( \$(grep -c '^CLOSED ' '$SCRATCH/hold4.out') >= 2 ))" ||
  fail "the refused connections were not closed: $(cat "$SCRATCH/hold4.out")"
# The held ones stay (the first-call deadline is 60 s here).
(($(closed_count "$SCRATCH/hold4.out") == 2)) ||
  fail "more than the refused connections closed: $(cat "$SCRATCH/hold4.out")"
ok "per address: 2 of 6 connections from 127.0.0.1 refused at once"
if [[ $HAVE_V6 == 1 ]]; then
  background peer hold -h ::1 -n 3 -t 60 >"$SCRATCH/hold6.out"
  wait_until 10 grep -q '^OPEN 3' "$SCRATCH/hold6.out" ||
    fail "cannot connect three times from ::1"
  # Served: a connection process each (4 from 127.0.0.1, 3 from ::1).  The
  # log says nothing yet: a connection is logged once its first byte has
  # come (plain or TLS: server_conn.c), and hold sends none.
  seven_served() { (($(children_of "$LDMD_PID" | wc -l) >= 7)); }
  wait_until 10 seven_served ||
    fail "the connections from ::1 were not all served: $(children_of "$LDMD_PID" | wc -l) connection processes"
  (($(count "$LOG" "denying connection from ::1") == 0)) ||
    fail "::1 was refused although its own count is below the limit"
  ok "per address: ::1 counted apart from 127.0.0.1"
else
  skip_part "no ::1 on this host: the per-address count of another address"
fi
kill "$held"
stop_ldmd

# --- 2. in all (-M) --------------------------------------------------------
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path>
    <max-per-address>100</max-per-address>
    <first-call-limit>60</first-call-limit></server>"
start_ldmd -v -M 5
background peer hold -n 5 -t 60 >"$SCRATCH/hold5.out"
five_served() { (($(children_of "$LDMD_PID" | wc -l) >= 5)); }
wait_until 10 five_served || fail "five connections with -M 5 were not all served"
run peer hold -n 1 -t 5
expect_in "$OUT" "CLOSED 0 after"
expect_in "$LOG" "denying connection from 127.0.0.1 because too many clients (5, -M or /server/max-clients)"
(($(closed_count "$SCRATCH/hold5.out") == 0)) ||
  fail "a connection within -M was closed: $(cat "$SCRATCH/hold5.out")"
ok "in all: the sixth connection refused with -M 5"
stop_ldmd

# --- 3. the first-call deadline (slowloris) -------------------------------
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path>
    <first-call-limit>3</first-call-limit></server>"
start_ldmd -v
# in_window FILE LO HI: did the server close FILE's connection after LO to
# HI ms?
in_window() {
  local ms
  ms=$(sed -n 's/^CLOSED after \([0-9]*\) ms.*/\1/p' "$1")
  [[ -n $ms ]] && ((ms >= $2 && ms <= $3))
}
background peer hostile -k silent -t 20 >"$SCRATCH/silent.out"
silent=$BG
background peer hostile -k trickle -d 250 -t 20 >"$SCRATCH/trickle.out"
trickle=$BG
wait "$silent" || fail "the silent peer was not closed: $(cat "$SCRATCH/silent.out")"
wait "$trickle" || fail "the trickling peer was not closed: $(cat "$SCRATCH/trickle.out")"
in_window "$SCRATCH/silent.out" 2500 8000 ||
  fail "the silent peer was not closed 3 s after it connected: $(cat "$SCRATCH/silent.out")"
in_window "$SCRATCH/trickle.out" 2500 8000 ||
  fail "the trickling peer was not closed 3 s after it connected: $(cat "$SCRATCH/trickle.out")"
grep -q 'CLOSED after [0-9]* ms, \(1[0-9]\|[1-9]\) bytes sent' "$SCRATCH/trickle.out" ||
  fail "the trickling peer did not send its bytes: $(cat "$SCRATCH/trickle.out")"
wait_until 5 logged 2 "within 3 s of connecting (/server/first-call-limit): closing" ||
  fail "no log line for the peers closed by the first-call deadline"
ok "slowloris: a silent and a trickling peer closed by the 3 s deadline"
# A peer that calls in time is served, and the deadline is gone after it:
# the notifyme waits 6 s, twice the deadline, for a product that never
# comes, and it is its own timeout that ends it, not the server.
expect_rc 0 peer call -V 6 -R 0
run peer notifyme -f ANY -o 3600 -n 1 -t 6
expect_in "$OUT" "OK "
expect_in "$OUT" "TIMEOUT after 0 products"
(($(count "$LOG" "within 3 s of connecting") == 2)) ||
  fail "a connection whose first call came in time was closed by the deadline"
ok "a first call in time: served, and not cut by the deadline later"
stop_ldmd
