#!/usr/bin/env bash
# One feed per downstream address and class (ldmd/server/feeds.h), with
# real requesters (ldmd servers with REQUEST entries) that all connect
# from 127.0.0.1, as downstream hosts behind one NAT address do.
#
#  1. B asks A for IDS|DDPLUS and C for IDS: overlapping classes from one
#     address coexist.  (LDM would take IDS out of C's request, leaving it
#     nothing.)  Both get every IDS product.
#  2. D and E ask A for the same class: E's feed replaces D's (A logs that
#     it terminated the redundant feed), D's requester connects again and
#     its feed would replace E's, which itself just replaced one: A keeps
#     both (two downstreams behind one address) with a warning, once, and
#     both get every product; no more replacement follows.
#  3. /server/enable-anti-DOS false: two requests of one class from one
#     address are both served, nothing is terminated.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_REQUESTER_KEYS="<retry-min>1</retry-min><retry-max>2</retry-max>"
srv_init A 20000000
srv_upstream A
QA=$(srv_dir A)/ldm.pq

# downstream NAME FEED: a server that requests FEED .* from A.
downstream() {
  srv_init "$1" 20000000
  srv_conf "$1" <<EOF
REQUEST $2 ".*" 127.0.0.1:@A@
ALLOW ANY ^127\.0\.0\.1$
EOF
  srv_start "$1"
}

# --- 1. overlapping classes ------------------------------------------------
downstream B 'IDS|DDPLUS'
# Each feed's line is LDM's "Starting Up(...)"; ldmd's own is not counted.
wait_until 10 srv_log_has A "Starting Up(" || srv_fail A "B's feed did not start"
downstream C IDS
wait_until 10 bash -c "(( \$(grep -cF 'Starting Up(' '$(srv_dir A)/ldmd.log') >= 2 ))" ||
  srv_fail A "C's feed did not start"
expect_rc 0 "$PEER" insert -q "$QA" -n 20 -s 500 -f IDS -i ids -z 31
wait_until 20 holds "$(srv_queue B)" 20 || srv_fail B "B did not get the 20 IDS products"
wait_until 20 holds "$(srv_queue C)" 20 || srv_fail C "C did not get the 20 IDS products"
srv_log_has A "terminating the redundant feed" &&
  srv_fail A "a feed of another class from the same address was terminated"
srv_log_has A "reclassifying" && srv_fail A "a request was reduced"
ok "overlapping classes from one address coexist: B and C have the 20 products"
srv_stop B
srv_stop C

# --- 2. one class, two downstreams behind one address ---------------------
downstream D NEXRAD3
wait_until 10 bash -c "(( \$(grep -cF 'Starting Up(' '$(srv_dir A)/ldmd.log') >= 3 ))" ||
  srv_fail A "D's feed did not start"
downstream E NEXRAD3
wait_until 10 srv_log_has A "terminating the redundant feed of process" ||
  srv_fail A "E's request did not replace D's feed"
wait_until 20 srv_log_has A "so two downstreams share that address (NAT) and would replace each other" ||
  srv_fail A "D's new request did not keep both feeds"
expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 500 -f NEXRAD3 -i nexrad -z 32
wait_until 20 holds "$(srv_queue D)" 10 || srv_fail D "D did not get the 10 products"
wait_until 20 holds "$(srv_queue E)" 10 || srv_fail E "E did not get the 10 products"
n=$(srv_log A | grep -c "terminating the redundant feed")
((n == 1)) || srv_fail A "$n feeds terminated, not 1: they replace each other"
ok "one class from two downstreams behind one address: one replacement, then both kept"
srv_stop D
srv_stop E
srv_stop A

# --- 3. anti-DOS off -------------------------------------------------------
RELAY_SERVER_KEYS="<enable-anti-DOS>FALSE</enable-anti-DOS>"
srv_init F 20000000
srv_upstream F
PORT=${SRV_PORT[F]}
background peer feedme -f EXP -o 3600 -n 5 -t 30 >"$SCRATCH/f1.out"
f1=$BG
wait_until 10 grep -q '^OK ' "$SCRATCH/f1.out" || fail "the first feedme was not served"
background peer feedme -f EXP -o 3600 -n 5 -t 30 >"$SCRATCH/f2.out"
f2=$BG
wait_until 10 grep -q '^OK ' "$SCRATCH/f2.out" || fail "the second feedme was not served"
expect_rc 0 "$PEER" insert -q "$(srv_queue F)" -n 5 -s 300 -f EXP -i exp -z 33
wait "$f1" || fail "the first feedme did not get its 5 products: $(cat "$SCRATCH/f1.out")"
wait "$f2" || fail "the second feedme did not get its 5 products: $(cat "$SCRATCH/f2.out")"
srv_log_has F "terminating the redundant feed" &&
  srv_fail F "a feed was terminated with /server/enable-anti-DOS false"
ok "anti-DOS off: two feeds of one class from one address, both served"
