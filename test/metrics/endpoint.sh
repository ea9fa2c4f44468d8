#!/usr/bin/env bash
# endpoint.sh - ldmd's live figures end to end (docs/metrics.md),
# with real processes on 127.0.0.1: two of our servers as a relay pair
# (up ALLOWs, down REQUESTs from up and ACCEPTs pushes), notifyme on up,
# ldmsend and the test peer pushing to down.  Products are inserted into
# up's queue and both servers' /metrics are scraped with curl: every
# scrape must pass the strict checker (promcheck), and the counters must
# move as products flow: per feed and per connection, the latency
# histogram, refusals (a duplicate sent with ldmsend, a too-old product),
# a reconnection (up's feeder killed), and the lag of a slow downstream
# (its requester SIGSTOPped: the lag rises; SIGCONT: it falls to 0).  Also:
# the endpoint is off by default (no port but LDM's), "PORT" binds
# loopback, and /status.json, / and errors answer as documented.
#
# Usage: endpoint.sh LDMD LDM6_PEER LDMSEND NOTIFYME PROMCHECK

# shellcheck source-path=SCRIPTDIR source=../net/lib.sh
source "$(dirname "$0")/../net/lib.sh" "$1" "$2"
# shellcheck source-path=SCRIPTDIR source=../net/relay_lib.sh
source "$(dirname "$0")/../net/relay_lib.sh"
LDMSEND=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
NOTIFYME=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
PROMCHECK=$(cd "$(dirname "$5")" && pwd)/$(basename "$5")
command -v curl >/dev/null || fail "curl is not installed (scripts/dev.sh installs it)"
RELAY_REQUESTER_KEYS='<retry-min>1</retry-min><retry-max>1</retry-max>'

# metrics_key NAME XML: add XML (elements under <metrics>) to NAME's
# registry.
metrics_key() {
  local reg
  reg=$(srv_dir "$1")/registry.xml
  sed -i "s|</registry>|  <metrics>$2</metrics>\n</registry>|" "$reg"
}

# addr NAME: where NAME serves its figures (from its log).
addr() {
  srv_log "$1" | sed -n 's|.*serving metrics on http://\([^/]*\)/metrics.*|\1|p' |
    tail -1
}

# scrape NAME: its /metrics into NAME.prom, which must pass the checker.
scrape() {
  curl -sS -f -o "$1.prom" "http://$(addr "$1")/metrics" ||
    srv_fail "$1" "cannot scrape $1 at $(addr "$1")"
  "$PROMCHECK" "$1.prom" >"$1.check" 2>&1 ||
    fail "$1's /metrics is not valid Prometheus text: $(cat "$1.check")"
  if command -v promtool >/dev/null; then
    promtool check metrics <"$1.prom" >"$1.promtool" 2>&1 ||
      fail "promtool refuses $1's /metrics: $(head -c 2000 "$1.promtool")"
  fi
}

# value NAME ERE: scrape NAME, print the sum of the values of the samples
# whose line matches ERE (anchored at the start).
value() {
  scrape "$1"
  awk -v re="^$2" '$0 ~ re { s += $NF; n++ } END { printf "%.6f\n", s }' \
    "$1.prom"
}

# is NAME ERE OP NUMBER: does value NAME ERE compare so (awk: == >= > <)?
is() {
  local v
  v=$(value "$1" "$2")
  awk -v v="$v" -v n="$4" "BEGIN { exit !(v $3 n) }"
}

# expect NAME ERE OP NUMBER TEXT: it must, at once.
expect() {
  is "$1" "$2" "$3" "$4" ||
    fail "$5: $2 is $(value "$1" "$2"), not $3 $4 (see $1.prom)"
}

# within SECONDS NAME ERE OP NUMBER TEXT: it must, within SECONDS.
within() {
  wait_until "$1" is "$2" "$3" "$4" "$5" ||
    fail "$6: $3 is $(value "$2" "$3"), not $4 $5 within $1 s (see $2.prom)"
}

# pid_of NAME KIND: the pid label of NAME's connection of that kind.
pid_of() {
  scrape "$1"
  sed -n "s/^ldmd_connection_info{pid=\"\([0-9]*\)\",kind=\"$2\".*/\1/p" \
    "$1.prom" | head -1
}

# listen_ports PID...: the TCP ports the processes listen on.
listen_ports() {
  local p fd inodes=""
  for p in "$@"; do
    for fd in /proc/"$p"/fd/*; do
      fd=$(readlink "$fd" 2>/dev/null) || continue
      [[ $fd == socket:* ]] && inodes+=" ${fd//[^0-9]/}"
    done
  done
  awk -v inodes="$inodes" 'BEGIN { n = split(inodes, v, " ");
      for (i = 1; i <= n; i++) want[v[i]] = 1 }
    $4 == "0A" && ($10 in want) { split($2, a, ":"); print a[2] }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r hex; do
    echo $((16#$hex))
  done | sort -un
}

# ---- off by default ----------------------------------------------------
srv_init quiet
srv_upstream quiet
wait_until 5 test -s "$(srv_queue quiet).metrics" ||
  srv_fail quiet "no metrics file beside the queue"
srv_log_has quiet "serving metrics" && fail "metrics served without a key"
# shellcheck disable=SC2046
ports=$(listen_ports "${SRV_PID[quiet]}" $(children_of "${SRV_PID[quiet]}"))
[[ $ports == "${SRV_PORT[quiet]}" ]] ||
  fail "the server listens on '$ports', not only on LDM's port ${SRV_PORT[quiet]}"
srv_stop quiet
[[ ! -e "$(srv_queue quiet).metrics" ]] ||
  fail "the metrics file outlived the server"
ok "off by default: no HTTP port; the figures' file is made, and removed at stop"

# An address ldmd cannot use stops it at start, saying why.
metrics_key quiet '<http-address>127.0.0.1:99999</http-address>'
run env LDM_REGISTRY="$(srv_dir quiet)/registry.xml" "$LDMD" -f -l - -P 0 \
  -I 127.0.0.1 "$(srv_dir quiet)/ldmd.conf"
((rc == 1)) || fail "ldmd with a bad metrics address exited $rc, not 1"
expect_in "$ERR" 'invalid metrics address "127.0.0.1:99999"'
ok "a bad metrics address stops ldmd with a message"
if [[ $HAVE_V6 == 1 ]]; then
  sed -i 's|127.0.0.1:99999|[::1]:0|' "$(srv_dir quiet)/registry.xml"
  srv_start quiet
  [[ $(addr quiet) == "[::1]:"* ]] || fail "[::1]:0 bound $(addr quiet)"
  scrape quiet
  expect_in quiet.prom "ldmd_queue_up 1"
  srv_stop quiet
  ok "an IPv6 address: served on $(addr quiet)"
else
  skip_part "no ::1 on this host: the IPv6 address of the endpoint"
fi

# A file ldmd cannot make: figures off with a warning, unless they are to
# be served.
srv_init nofile
metrics_key nofile '<live-path>/nonexistent-dir-for-test/m.metrics</live-path>'
srv_upstream nofile
srv_log_has nofile "running without live figures" ||
  srv_fail nofile "no warning for a metrics file that cannot be made"
srv_stop nofile
sed -i 's|<live-path>/nonexistent|<http-address>0</http-address><live-path>/nonexistent|' \
  "$(srv_dir nofile)/registry.xml"
run env LDM_REGISTRY="$(srv_dir nofile)/registry.xml" "$LDMD" -f -l - -P 0 \
  -I 127.0.0.1 "$(srv_dir nofile)/ldmd.conf"
((rc == 1)) || fail "ldmd that cannot serve its figures exited $rc, not 1"
expect_in "$ERR" "cannot serve the live figures"
expect_in "$ERR" /nonexistent-dir-for-test/
ok "a metrics file that cannot be made: a warning, or a stop if it is served"

# ---- the relay pair ----------------------------------------------------
srv_init up 100000000 2000
srv_init down 100000000 2000
metrics_key up '<http-address>0</http-address>' # "PORT": loopback
metrics_key down '<http-address>127.0.0.1:0</http-address>'
srv_upstream up
[[ $(addr up) == 127.0.0.1:* ]] || fail "\"0\" bound $(addr up), not loopback"
srv_downstream down up IDS 'ACCEPT ANY ".*" ^127\.0\.0\.1$'
wait_until 10 is down 'ldmd_connection_info\{[^}]*kind="requester"' '==' 1 ||
  fail "down shows no requester connection"
ok "both serve their figures on loopback: up $(addr up), down $(addr down)"

# Endpoints other than /metrics.
curl -sS -f "http://$(addr down)/status.json" >status.json ||
  fail "no /status.json"
expect_in status.json '"connections":[{'
expect_in status.json '"kind":"requester"'
expect_in status.json '"queue":{"products":'
curl -sS -f "http://$(addr down)/" >index.txt || fail "no /"
expect_in index.txt /metrics
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://$(addr down)/nothing")
[[ $code == 404 ]] || fail "/nothing answered $code, not 404"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://$(addr down)/metrics")
[[ $code == 405 ]] || fail "POST /metrics answered $code, not 405"
ok "/status.json, / and the errors answer"

# ---- products flow -----------------------------------------------------
background "$NOTIFYME" -h "127.0.0.1:${SRV_PORT[up]}" -f IDS -o 60 -l notifyme.log
NOTI=$BG
within 10 up 'ldmd_connection_info\{[^}]*kind="notifyme"' '==' 1 \
  "up shows no notifyme connection"
# 20 products created 2 s before they are inserted into up.
expect_rc 0 "$PEER" insert -q "$(srv_queue up)" -n 20 -s 1000 -f IDS -a 2 \
  -i flow -z 1
wait_until 15 holds "$(srv_queue down)" 20 || srv_fail down "down lacks products"
within 5 down 'ldmd_feed_products_total\{feed="IDS"\}' '==' 20 \
  "down's IDS feed"
expect down 'ldmd_feed_bytes_total\{feed="IDS"\}' '==' 20000 "down's IDS bytes"
expect down 'ldmd_connection_products_total\{[^}]*kind="requester"' '==' 20 \
  "down's requester"
expect down 'ldmd_connection_bytes_total\{[^}]*kind="requester"' '==' 20000 \
  "down's requester bytes"
# Created 2 s before insertion into up: 2 to 2.5 s old at down.
expect down 'ldmd_feed_latency_seconds_count\{feed="IDS"\}' '==' 20 \
  "the latency histogram's count"
expect down 'ldmd_feed_latency_seconds_bucket\{feed="IDS",le="1"\}' '==' 0 \
  "products younger than 1 s"
expect down 'ldmd_feed_latency_seconds_bucket\{feed="IDS",le="5"\}' '==' 20 \
  "products younger than 5 s"
expect down 'ldmd_feed_latency_seconds_sum\{feed="IDS"\}' '>=' 40 \
  "the latency sum"
expect down 'ldmd_connection_latency_seconds_count\{[^}]*kind="requester"' \
  '==' 20 "the requester's latency count"
within 5 up 'ldmd_connection_products_total\{[^}]*kind="upstream"' '==' 20 \
  "up's feeder to down"
expect up 'ldmd_connection_bytes_total\{[^}]*kind="upstream"' '==' 20000 \
  "up's feeder bytes"
within 5 up 'ldmd_connection_products_total\{[^}]*kind="notifyme"' '==' 20 \
  "up's notifyme feeder"
expect up 'ldmd_connection_lag_seconds\{[^}]*kind="upstream"' '==' 0 \
  "the lag of a feeder that is caught up"
expect up 'ldmd_queue_products' '==' 20 "up's queue"
expect up 'ldmd_queue_capacity_slots' '==' 2000 "up's queue slots"
expect up 'ldmd_queue_used_slots' '==' 20 "up's queue slots used"
expect up 'ldmd_queue_held_products' '==' 0 "up's held products"
expect up 'ldmd_queue_oldest_age_seconds' '>' 0 "up's oldest product's age"
ok "products, bytes and latency move per feed and per connection"

# ---- refusals ----------------------------------------------------------
head -c 3000 /dev/urandom >file.dat
expect_rc 0 "$LDMSEND" -h "127.0.0.1:${SRV_PORT[down]}" -f IDS file.dat
expect_rc 0 "$LDMSEND" -h "127.0.0.1:${SRV_PORT[down]}" -f IDS file.dat
within 5 down 'ldmd_feed_refused_total\{feed="IDS",cause="duplicate"\}' '==' 1 \
  "the duplicate ldmsend sent"
expect down 'ldmd_feed_products_total\{feed="IDS"\}' '==' 21 \
  "down's IDS feed after ldmsend"
# Created two hours ago: past down's maximum latency (3600 s).
expect_rc 0 "$PEER" hiya -p "${SRV_PORT[down]}" -f IDS -n 1 -s 100 -a 7200 \
  -i old -z 2
within 5 down 'ldmd_feed_refused_total\{feed="IDS",cause="too_old"\}' '==' 1 \
  "the too-old product"
# Announced by COMINGSOON, larger than down's queue: refused before its
# data is sent (DONT_SEND), and the NULLPROC after it answered SYSTEM_ERR,
# since it was not stored (server.h): the peer exits 1.
expect_rc 1 "$PEER" hiya -p "${SRV_PORT[down]}" -f IDS -n 1 -c -b 0 \
  -s 150000000 -i huge -z 5
expect_in "$OUT" "DONT_SEND huge/0"
within 5 down 'ldmd_feed_refused_total\{feed="IDS",cause="too_big"\}' '==' 1 \
  "the product larger than the queue"
expect down 'ldmd_feed_refused_total\{feed="IDS",cause="unwanted"\}' '==' 0 \
  "unwanted products"
ok "refusals counted by cause: a duplicate (ldmsend), a too-old product, one too big"

# ---- a reconnection ----------------------------------------------------
feeder=$(pid_of up upstream)
[[ -n $feeder ]] || fail "no pid for up's feeder"
expect down 'ldmd_connection_reconnections_total\{[^}]*kind="requester"' '==' 0 \
  "reconnections before any"
kill -KILL "$feeder"
within 15 down 'ldmd_connection_reconnections_total\{[^}]*kind="requester"' \
  '==' 1 "the requester's reconnection after its feeder was killed"
within 10 up 'ldmd_connection_info\{[^}]*kind="upstream"' '==' 1 \
  "up's new feeder"
[[ $(pid_of up upstream) != "$feeder" ]] || fail "the killed feeder is still shown"
ok "a reconnection counted; the dead feeder's slot is gone"

# ---- a slow downstream -------------------------------------------------
req=$(pid_of down requester)
[[ -n $req ]] || fail "no pid for down's requester"
kill -STOP "$req"
# More than the socket buffers hold, then small products for a while: the
# feeder stays behind the queue's newest product.
expect_rc 0 "$PEER" insert -q "$(srv_queue up)" -n 40 -s 1000000 -f IDS \
  -i big -z 3
expect_rc 0 "$PEER" insert -q "$(srv_queue up)" -n 20 -s 100 -f IDS -d 100 \
  -i tick -z 4
if ! is up 'ldmd_connection_lag_seconds\{[^}]*kind="upstream"' '>' 1; then
  kill -CONT "$req"
  fail "the lag of a stopped downstream is $(value up \
    'ldmd_connection_lag_seconds\{[^}]*kind="upstream"'), not above 1 s"
fi
expect up 'ldmd_connection_lag_seconds\{[^}]*kind="notifyme"' '<' 1 \
  "the lag of notifyme, not stopped"
kill -CONT "$req"
within 30 up 'ldmd_connection_lag_seconds\{[^}]*kind="upstream"' '==' 0 \
  "the lag once the downstream goes on"
wait_until 30 has_ident "$(srv_queue down)" tick/19 ||
  srv_fail down "down did not catch up"
ok "a stopped downstream's lag rose past 1 s, and fell to 0 when it went on"

# ---- the metrics process dies: ldmd starts it again ----------------------
mpid=$(srv_log up | sed -n 's/.*started metrics server process \([0-9]*\).*/\1/p' |
  tail -1)
[[ -n $mpid ]] || srv_fail up "no metrics server process in up's log"
kill -KILL "$mpid"
wait_until 15 bash -c "[[ \$(grep -c 'started metrics server process' \
  '$(srv_dir up)/ldmd.log') -ge 2 ]]" || srv_fail up "the metrics process was not started again"
within 10 up 'ldmd_queue_up' '==' 1 "the restarted metrics process"
expect up 'ldmd_connection_info\{[^}]*kind="upstream"' '==' 1 \
  "up's feeder, seen by the restarted metrics process"
ok "a killed metrics process is started again and serves the same figures"

kill -TERM "$NOTI"
srv_stop down
srv_stop up
