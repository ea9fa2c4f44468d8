#!/usr/bin/env bash
# noaaport.sh - noaaportIngester's figures in ldmd's live figures
# (docs/metrics.md, "Ingesters"), end to end on 127.0.0.1: ldmd serving its
# figures, one ingester started by its EXEC and one started beside it, both
# inserting into its queue LDM's vectors (nwstg-basic: 14 frames, 13
# products; nwstg-errors: 23 frames, 2 missed, 19 products) read from FIFOs
# the test holds open, so that the ingesters are still running when
# /metrics and /status.json are read.  Their frames, missed frames and
# products by feedtype must be there with the vectors' values, and the
# products in the per-feedtype series; an ingester killed with SIGKILL must
# leave the figures at once and its products stay in the feeds' totals.
# As root, in a network namespace of the test's own (as
# test/ingest/multicast.sh), also a third ingester on a multicast group
# fed by sbnsend on loopback: its receiver's datagrams, bytes, socket
# queue and buffer, no drops, and the vector's products as duplicates;
# and one with the smallest buffer, stopped while a stream comes: the
# kernel's drops counted.
#
# Usage: noaaport.sh LDMD LDM6_PEER NOAAPORTINGESTER PROMCHECK [SBNSEND]
if [[ ${NP_IN_NETNS:-} != 1 && -n ${5:-} ]] && ((EUID == 0)) &&
  command -v unshare >/dev/null && command -v ip >/dev/null &&
  unshare -n true 2>/dev/null; then
  NP_IN_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
if [[ ${NP_IN_NETNS:-} == 1 ]]; then
  if ! { ip link set lo up && ip link set lo multicast on &&
    ip route add 224.0.0.0/4 dev lo; }; then
    echo "cannot set up loopback multicast" >&2
    exit 1
  fi
fi

# shellcheck source-path=SCRIPTDIR source=../net/lib.sh
source "$(dirname "$0")/../net/lib.sh" "$1" "$2"
# shellcheck source-path=SCRIPTDIR source=../net/relay_lib.sh
source "$(dirname "$0")/../net/relay_lib.sh"
ING=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
PROMCHECK=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
VEC=$(cd "$(dirname "$0")/../ingest/vectors" && pwd)
SBNSEND=
[[ -n ${5:-} ]] && SBNSEND=$(cd "$(dirname "$5")" && pwd)/$(basename "$5")
command -v curl >/dev/null || fail "curl is not installed (scripts/dev.sh installs it)"

# addr: where the server serves its figures (from its log).
addr() {
  srv_log np | sed -n 's|.*serving metrics on http://\([^/]*\)/metrics.*|\1|p' |
    tail -1
}

# scrape: /metrics into np.prom, which must pass the checker.
scrape() {
  curl -sS -f -o np.prom "http://$(addr)/metrics" ||
    srv_fail np "cannot scrape at $(addr)"
  "$PROMCHECK" np.prom >np.check 2>&1 ||
    fail "/metrics is not valid Prometheus text: $(cat np.check)"
}

# value ERE: scrape, print the sum of the samples whose line matches ERE
# (anchored at the start); "none" when no line does.
value() {
  scrape
  awk -v re="^$1" '$0 ~ re { s += $NF; n++ }
    END { if (n) printf "%d\n", s; else print "none" }' np.prom
}

# is ERE VALUE: is the value so?
is() {
  [[ $(value "$1") == "$2" ]]
}

# stopped PID: is every thread of PID stopped (state T)?
stopped() {
  local f st
  for f in /proc/"$1"/task/*/stat; do
    st=$(cat "$f" 2>/dev/null) || return 1
    st=${st##*) }
    [[ ${st:0:1} == T ]] || return 1
  done
}

# is_above ERE N: is the value a number above N?
is_above() {
  local v
  v=$(value "$1")
  [[ $v != none ]] && ((v > $2))
}

# expect ERE VALUE TEXT: it must be, now.
expect() {
  is "$1" "$2" || fail "$3: $1 is $(value "$1"), not $2 (see np.prom)"
}

D=$(srv_dir np)
srv_init np
sed -i "s|</registry>|  <metrics><http-address>0</http-address></metrics>\n</registry>|" \
  "$D/registry.xml"
export LDM_REGISTRY=$D/registry.xml
# The FIFOs, each with a writer first (read-write: no wait), kept open.
mkfifo "$D/a.in" "$D/b.in"
exec 7<>"$D/a.in" 8<>"$D/b.in"
cat >"$D/ingest-a.sh" <<EOS
#!/bin/sh
exec "$ING" -n -l "$D/a.log" <"$D/a.in"
EOS
chmod +x "$D/ingest-a.sh"
printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$' "EXEC \"$D/ingest-a.sh\"" | srv_conf np
srv_start np
[[ -n $(addr) ]] || srv_fail np "no metrics address in the log"
"$ING" -n -l "$D/b.log" <"$D/b.in" &
B=$!
BG_PIDS+=("$B")

# Both attach and show before any frame comes: channel "stdin", no frames.
wait_until 20 is 'ldmd_noaaport_frames_total\{.*channel="stdin"' 0 ||
  fail "the ingesters' figures are not in /metrics: $(grep noaaport np.prom | head -5)"
wait_until 20 bash -c "[[ \$(grep -c '^ldmd_noaaport_frames_total{' np.prom) == 2 ]] || { curl -sS -o np.prom http://$(addr)/metrics; false; }" ||
  fail "not two ingesters in /metrics: $(grep '^ldmd_noaaport_frames_total' np.prom)"
A=$(sed -n 's/^ldmd_noaaport_frames_total{pid="\([0-9]*\)".*/\1/p' np.prom |
  grep -vx "$B")
[[ -n $A ]] || fail "no pid for the EXEC'd ingester"
ok "the EXEC'd ingester ($A) and another ($B) attached to ldmd's figures"

cat "$VEC/nwstg-basic.sbn" >&7
cat "$VEC/nwstg-errors.sbn" >&8
pa="pid=\"$A\",channel=\"stdin\""
pb="pid=\"$B\",channel=\"stdin\""
wait_until 30 is "ldmd_noaaport_frames_total\\{$pa\\}" 14 ||
  fail "A's frames are $(value "ldmd_noaaport_frames_total\\{$pa\\}"), not 14"
wait_until 30 is "ldmd_noaaport_frames_total\\{$pb\\}" 23 ||
  fail "B's frames are $(value "ldmd_noaaport_frames_total\\{$pb\\}"), not 23"
# The products end with their last frame: wait for the last of each.
wait_until 30 is "ldmd_noaaport_products_total\\{$pa," 13 ||
  fail "A's products are $(value "ldmd_noaaport_products_total\\{$pa,"), not 13"
wait_until 30 is "ldmd_noaaport_products_total\\{$pb," 19 ||
  fail "B's products are $(value "ldmd_noaaport_products_total\\{$pb,"), not 19"
expect "ldmd_noaaport_missed_frames_total\\{$pa\\}" 0 "A's gaps"
expect "ldmd_noaaport_missed_frames_total\\{$pb\\}" 2 "B's gaps"
expect "ldmd_noaaport_bytes_total\\{$pa\\}" "$(stat -c %s "$VEC/nwstg-basic.sbn")" \
  "A's bytes"
expect "ldmd_noaaport_duplicates_total\\{$pa\\}" 0 "A's duplicates"
# By feedtype, as the vectors' products.tsv (IDS|DDPLUS: two bits, OTHER).
for fv in HDS:7 OTHER:3 NEXRAD3:2 NIMAGE:1; do
  expect "ldmd_noaaport_products_total\\{$pa,feed=\"${fv%:*}\"\\}" "${fv#*:}" \
    "A's ${fv%:*} products"
done
for fv in HDS:4 OTHER:10 NEXRAD3:1 NGRID:2 NOTHER:2; do
  expect "ldmd_noaaport_products_total\\{$pb,feed=\"${fv%:*}\"\\}" "${fv#*:}" \
    "B's ${fv%:*} products"
done
# The same products in the server's per-feedtype series.
for fv in HDS:11 OTHER:13 NEXRAD3:3 NIMAGE:1 NGRID:2 NOTHER:2; do
  expect "ldmd_feed_products_total\\{feed=\"${fv%:*}\"\\}" "${fv#*:}" \
    "the ${fv%:*} feed's products"
done
expect "ldmd_noaaport_receiver_datagrams_total" none "standard input's receivers"
ok "frames, gaps, bytes and products by feedtype in /metrics"

curl -sS -f -o np.json "http://$(addr)/status.json" || fail "no /status.json"
for want in "{\"pid\":$A,\"channel\":\"stdin\"," \
  '"frames":14,"missed_frames":0,' '"frames":23,"missed_frames":2,' \
  '"inserted":{"HDS":7,' '"NIMAGE":1,' '"NEXRAD3":2,' '"OTHER":3}' \
  '"receivers":[]'; do
  grep -qF -- "$want" np.json || fail "/status.json lacks $want: $(head -c 2000 np.json)"
done
ok "the ingesters in /status.json"

# A group's receiver (in the test's own network namespace only).
if [[ ${NP_IN_NETNS:-} == 1 ]]; then
  "$ING" -m 224.0.1.1 -I 127.0.0.1 -R 4000000 -n -l "$D/c.log" &
  C=$!
  BG_PIDS+=("$C")
  pc="pid=\"$C\",channel=\"224.0.1.1\""
  wait_until 20 grep -q 'Receive buffer size is' "$D/c.log" ||
    fail "the multicast ingester did not join the group"
  wait_until 20 is "ldmd_noaaport_frames_total\\{$pc\\}" 0 ||
    fail "the multicast ingester is not in /metrics"
  expect "ldmd_noaaport_receiver_buffer_bytes\\{$pc,receiver=\"224.0.1.1@127.0.0.1\"\\}" \
    "$(sed -n 's/.*Receive buffer size is \([0-9]*\) bytes.*/\1/p' "$D/c.log")" \
    "the receiver's buffer (as the log says)"
  "$SBNSEND" -g 224.0.1.1:1201 -i 127.0.0.1 -r 40 "$VEC/nwstg-basic.sbn" \
    2>sent.txt || fail "sbnsend failed: $(cat sent.txt)"
  sent=$(sed -n 's/^sbnsend: \([0-9]*\) datagrams sent.*/\1/p' sent.txt)
  [[ -n $sent ]] || fail "sbnsend did not say how many datagrams: $(cat sent.txt)"
  wait_until 30 is "ldmd_noaaport_duplicates_total\\{$pc\\}" 13 ||
    fail "the group's products are $(value "ldmd_noaaport_duplicates_total\\{$pc\\}") duplicates, not 13"
  rx="$pc,receiver=\"224.0.1.1@127.0.0.1\""
  expect "ldmd_noaaport_frames_total\\{$pc\\}" 14 "the group's frames"
  expect "ldmd_noaaport_receiver_datagrams_total\\{$rx\\}" "$sent" \
    "the receiver's datagrams (as sbnsend sent)"
  expect "ldmd_noaaport_receiver_bytes_total\\{$rx\\}" \
    "$(stat -c %s "$VEC/nwstg-basic.sbn")" "the receiver's bytes"
  expect "ldmd_noaaport_receiver_dropped_total\\{$rx\\}" 0 "the receiver's drops"
  qmax=$(value "ldmd_noaaport_receiver_queue_max_bytes\\{$rx\\}")
  if [[ $qmax == none ]] || ((qmax == 0)); then
    fail "the receiver's socket queue at most is $qmax"
  fi
  kill -TERM "$C"
  wait "$C" || fail "the multicast ingester exited $? on SIGTERM"
  wait_until 10 is "ldmd_noaaport_frames_total\\{$pc\\}" none ||
    fail "the stopped ingester's figures are still served"
  ok "a group's receiver: its datagrams, bytes, socket queue ($qmax bytes at most), no drops"

  # The kernel's drops: the smallest buffer (-R 1), the ingester stopped
  # while a stream comes, then a stream once it runs again (the drop count
  # comes with the datagrams read after the drops).
  "$ING" -m 224.0.1.1 -I 127.0.0.1 -R 1 -n -l "$D/d.log" &
  E=$!
  BG_PIDS+=("$E")
  pe="pid=\"$E\",channel=\"224.0.1.1\",receiver=\"224.0.1.1@127.0.0.1\""
  wait_until 20 grep -q 'Receive buffer size is' "$D/d.log" ||
    fail "the small-buffer ingester did not join the group"
  wait_until 20 is "ldmd_noaaport_receiver_dropped_total\\{$pe\\}" 0 ||
    fail "the small-buffer ingester is not in /metrics"
  kill -STOP "$E"
  wait_until 10 stopped "$E" || fail "the ingester did not stop on SIGSTOP"
  "$SBNSEND" -g 224.0.1.1:1201 -i 127.0.0.1 "$VEC/nwstg-basic.sbn" 2>/dev/null ||
    fail "sbnsend failed"
  kill -CONT "$E"
  "$SBNSEND" -g 224.0.1.1:1201 -i 127.0.0.1 -r 40 "$VEC/nwstg-basic.sbn" 2>/dev/null ||
    fail "sbnsend failed"
  wait_until 20 is_above "ldmd_noaaport_receiver_dropped_total\\{$pe\\}" 0 ||
    fail "no drop counted with a full buffer: $(grep "$E" np.prom)"
  drops=$(value "ldmd_noaaport_receiver_dropped_total\\{$pe\\}")
  kill -TERM "$E"
  wait "$E" || fail "the small-buffer ingester exited $? on SIGTERM"
  ok "datagrams the kernel dropped, the buffer full: $drops"
else
  skip_part "a network namespace needs root, unshare(1), ip(8) and sbnsend: no multicast receiver"
fi

# SIGKILL: its figures go at once; its products stay in the feeds.
kill -KILL "$B"
wait "$B" 2>/dev/null
wait_until 10 is "ldmd_noaaport_frames_total\\{$pb\\}" none ||
  fail "the killed ingester's figures are still served"
expect "ldmd_noaaport_frames_total\\{$pa\\}" 14 "A after B was killed"
expect 'ldmd_feed_products_total\{feed="HDS"\}' 11 "the HDS feed after B was killed"
ok "a killed ingester leaves the figures; its products stay in the feeds"

srv_stop np
grep -q 'Sanitizer\|runtime error:' "$D/a.log" "$D/b.log" &&
  fail "the sanitizers found an error in an ingester"
# Without ldmd: no figures file, the ingester runs as before.
[[ ! -e "$D/ldm.pq.metrics" ]] || fail "the figures file outlived ldmd"
"$ING" -l "$D/c.log" <"$VEC/nwstg-basic.sbn" || fail "the ingester failed without ldmd"
ok "without ldmd the ingester runs without figures"
