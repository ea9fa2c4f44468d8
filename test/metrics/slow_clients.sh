#!/usr/bin/env bash
# slow_clients.sh - the metrics endpoint's bounds on slow clients
# (docs/security.md, "The metrics endpoint"), with a real ldmd on
# 127.0.0.1 and slow clients made by trickle (trickle.c), each sending a
# request one byte a second whose headers never end.  Before the bounds,
# 16 such clients held every slot of the endpoint (its 10 s idle timeout
# restarts at each byte) and every scrape got an empty reply.  Now:
#   - while 100 slow clients trickle from 20 loopback addresses
#     (127.0.0.2-21, five each: within the per-address limit), and make
#     their connection again whenever the server ends it, a scraper from
#     127.0.0.1 gets a whole /metrics that passes the strict checker
#     (promcheck) within a few seconds, scrape after scrape, until every
#     slow client has been cut once; the log says so in a few lines, not
#     one a connection;
#   - one slow client that keeps sending is cut after the whole-request
#     bound (10 s), though it was never idle, and the log says so;
#   - /metrics/max-per-address, set to 6 here: of 7 slow clients from one
#     address, the server ends one at once and keeps 6;
#   - under a limit of 96 open files the endpoint takes 64 connections,
#     not 128, with a warning.
#
# Usage: slow_clients.sh LDMD LDM6_PEER PROMCHECK TRICKLE

# shellcheck source-path=SCRIPTDIR source=../net/lib.sh
source "$(dirname "$0")/../net/lib.sh" "$1" "$2"
PROMCHECK=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
TRICKLE=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
command -v curl >/dev/null || fail "curl is not installed (scripts/dev.sh installs it)"
REQUEST_S=10 # LDMD_MB_REQUEST_S, ldmd/server/metrics_bounds.h

make_queue 1000000
echo 'ALLOW ANY ^127\.0\.0\.1$' >"$CONF"
PER_ADDRESS=6 # /metrics/max-per-address: 5 of the 100 come from each address
sed -i "s|</registry>|  <metrics><http-address>127.0.0.1:0</http-address><max-per-address>$PER_ADDRESS</max-per-address></metrics>\n</registry>|" \
  "$LDM_REGISTRY"
start_ldmd
wait_until 10 grep -q 'serving metrics on http://' "$LOG" ||
  fail "ldmd does not serve its metrics"
ADDR=$(sed -n 's|.*serving metrics on http://\([^/]*\)/metrics.*|\1|p' "$LOG" |
  tail -1)
MPORT=${ADDR##*:}
MPID=$(sed -n 's/.*started metrics server process \([0-9]*\).*/\1/p' "$LOG" |
  tail -1)
[[ -n $MPID ]] || fail "no metrics server process in the log"

# sockets PID: the sockets PID has open.
sockets() {
  local fd n=0
  for fd in /proc/"$1"/fd/*; do
    [[ $(readlink "$fd" 2>/dev/null) == socket:* ]] && n=$((n + 1))
  done
  echo "$n"
}

# last_tick FILE FIELD: FIELD (tick, open, sent, cut) of trickle's last
# tick line.
last_tick() {
  awk -v f="$2" '$1 == "tick" { for (i = 1; i < NF; i += 2) if ($i == f) v = $(i + 1) }
    END { print v + 0 }' "$1"
}

# scrape N: /metrics from 127.0.0.1 within 5 s, whole and valid.
scrape() {
  local t0=$SECONDS
  curl -sS -f --max-time 5 -o "scrape$1.prom" "http://$ADDR/metrics" \
    2>"scrape$1.err" ||
    fail "scrape $1 failed while slow clients trickle: $(cat "scrape$1.err")"
  "$PROMCHECK" "scrape$1.prom" >"scrape$1.check" 2>&1 ||
    fail "scrape $1 is not valid Prometheus text: $(cat "scrape$1.check")"
  grep -q '^ldmd_queue_up 1$' "scrape$1.prom" ||
    fail "scrape $1 is not whole (no ldmd_queue_up 1)"
  echo "scrape $1: $(wc -c <"scrape$1.prom") bytes in $((SECONDS - t0)) s or less"
}

# ---- 100 slow clients, and scrapes ---------------------------------------
background "$TRICKLE" -p "$MPORT" -n 100 -k 20 -b 2 -t 120 -r >many.out
MANY=$BG
# Each has had the time to connect and send a byte or two; on a server
# without the bounds most of them are refused and try again, which is the
# attack itself.
wait_until 20 bash -c "(( \$(awk '\$1 == \"tick\"' many.out | wc -l) >= 3 ))" ||
  fail "trickle does not run: $(tail -3 many.out)"
held=$(($(sockets "$MPID") - 1)) # less the listening socket
n=0
# Scrape while trickle's clock runs past the bound, until every slow
# client has been cut once (and has come again); bounded.
while (($(last_tick many.out tick) < REQUEST_S + 5 ||
  $(last_tick many.out cut) < 100)); do
  n=$((n + 1))
  ((n <= 200)) || fail "100 slow clients were not all cut after 200 scrapes: $(tail -1 many.out)"
  scrape "$n"
  s=$(($(sockets "$MPID") - 1))
  ((s > held)) && held=$s
done
((held >= 100)) || fail "the server held at most $held connections, not the 100 slow clients"
early=$(awk '$1 == "cut" && $4 < '$((REQUEST_S * 1000 - 500))' { n++ } END { print n + 0 }' many.out)
((early == 0)) ||
  fail "$early slow clients were ended before the bound: no room for them ($(grep -m1 '^cut' many.out))"
kill -TERM "$MANY"
wait "$MANY" 2>/dev/null
logged 1 "whose request took more than $REQUEST_S s" ||
  fail "no log line for the slow clients cut"
# A line per connection ended would be 100 and more each 10 s: at most 10
# of libmicrohttpd's a 10 s, and the counts.
warned=$(grep -c "metrics\[$MPID\].*WARN" "$LOG")
((warned <= 3 * (10 + 2))) ||
  fail "the metrics process logged $warned warnings in $(last_tick many.out tick) s"
ok "$n scrapes from 127.0.0.1 passed while 100 slow clients trickled ($held connections held at most, $warned warnings logged)"

# ---- one slow client that never stops sending ----------------------------
# From an address of its own (127.0.0.200): the 100 just stopped may not
# all be gone yet from the server's per-address count.
background "$TRICKLE" -p "$MPORT" -n 1 -b 200 -t $((REQUEST_S * 4)) >one.out
ONE=$BG
wait_until $((REQUEST_S * 4 + 10)) grep -q '^cut 0 after' one.out ||
  fail "a slow client that kept sending was not cut within $((REQUEST_S * 4)) s: $(tail -1 one.out)"
ms=$(sed -n 's/^cut 0 after \([0-9]*\) ms$/\1/p' one.out | head -1)
sent=$(awk '$1 == "cut" { exit } $1 == "tick" { s = $6 } END { print s + 0 }' one.out)
((ms >= REQUEST_S * 1000 - 500)) ||
  fail "the slow client was cut after $ms ms, before the bound of $REQUEST_S s"
((ms <= REQUEST_S * 1000 * 3)) ||
  fail "the slow client was cut after $ms ms, long past the bound of $REQUEST_S s"
((sent >= REQUEST_S - 2)) ||
  fail "the slow client sent only $sent bytes before it was cut: it was idle"
wait "$ONE" 2>/dev/null
ok "one slow client cut after $ms ms (the bound: $REQUEST_S s), having sent $sent bytes, one a second"

# ---- the per-address limit ----------------------------------------------
background "$TRICKLE" -p "$MPORT" -n $((PER_ADDRESS + 1)) -b 210 -t 30 >per.out
PER=$BG
# Each has been made, and the server has had its time to end one.
wait_until 20 grep -q '^tick 3 ' per.out || fail "trickle does not run: $(tail -1 per.out)"
kill -TERM "$PER"
wait "$PER" 2>/dev/null
line=$(grep -m1 '^tick 3 ' per.out)
[[ $line == "tick 3 open $PER_ADDRESS sent "*" cut 1" ]] ||
  fail "$((PER_ADDRESS + 1)) clients from one address with /metrics/max-per-address $PER_ADDRESS: '$line', not $PER_ADDRESS open and 1 ended"
ok "/metrics/max-per-address $PER_ADDRESS: the server ended the $((PER_ADDRESS + 1))th connection from one address ($(grep -m1 '^cut' per.out))"

stop_ldmd

# ---- few descriptors -----------------------------------------------------
# Started with a limit of 96 open files, which the metrics process
# inherits: it takes 96 - 32 connections, says so, and serves.
command -v prlimit >/dev/null || {
  skip_part "no prlimit(1) here: the connections cut to the descriptors"
  exit 0
}
printf '#!/bin/sh\nexec prlimit --nofile=96 -- "%s" "$@"\n' "$LDMD" >few_fds.sh
chmod +x few_fds.sh
LDMD=$SCRATCH/few_fds.sh
start_ldmd
wait_until 10 grep -q 'metrics: 64 connections at most, not 128: the limit on open files (RLIMIT_NOFILE) is 96' "$LOG" ||
  fail "no warning of the connections cut to the limit on open files"
ADDR=$(sed -n 's|.*serving metrics on http://\([^/]*\)/metrics.*|\1|p' "$LOG" |
  tail -1)
scrape few
ok "with 96 descriptors the endpoint takes 64 connections, says so, and serves"
stop_ldmd
