#!/usr/bin/env bash
# TLS and plain downstreams of one upstream that runs the feed hub
# (ldmd/server/hub.h): the hub takes only plain primary feeds, a TLS
# feed stays in its own connection process (ldmd/server/upstream.c,
# by_hub()).
#
# A (its feeds logged: -v; zero-copy off, the default, so the hub runs)
# serves B and C over TLS (REQUEST {tls}, A's certificate verified, as in
# tls.sh) and H and I over plain LDM-6, all at once, with products of
# every size (1 KB to 3 MB).
#   - each downstream gets every product of A, once, in A's order, byte
#     for byte (each dump checks every product's MD5);
#   - A's log: the hub took exactly as many feeds as there were plain ones
#     (every plain one, no TLS one), and each TLS feed's own connection
#     process (the one that logged "TLS connection from") sent the 405
#     products itself.
# The anti-DOS rule is off: the four ask for the same class from the same
# address (ldmd/server/feeds.h).
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"
tls_pki a b c

# shellcheck disable=SC2034 # relay_lib.sh's srv_init reads them
RELAY_REQUESTER_KEYS="<retry-min>1</retry-min><retry-max>1</retry-max>"
# shellcheck disable=SC2034
RELAY_SERVER_KEYS="<enable-anti-DOS>FALSE</enable-anti-DOS>"
for s in A B C H I; do
  srv_init $s 60000000 4000
done
srv_tls A a
srv_tls B b
srv_tls C c
srv_conf A <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
EOF2
SRV_OPTS[A]=-v
srv_start A
QA=$(srv_queue A)
srv_log A | grep -q 'started feed hub process' || srv_fail A "A runs no feed hub"
for s in B C; do
  srv_conf $s <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* {tls}127.0.0.1:@A@
EOF2
done
for s in H I; do
  srv_conf $s <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* 127.0.0.1:@A@
EOF2
done
for s in B C H I; do
  srv_start $s
done
expect_rc 0 "$PEER" insert -q "$QA" -n 200 -s 1000 -f IDS -i small -z 41
expect_rc 0 "$PEER" insert -q "$QA" -n 100 -s 70000 -f NEXRAD2 -i mid -z 42
expect_rc 0 "$PEER" insert -q "$QA" -n 5 -s 3000000 -f NEXRAD2 -i big -z 43
expect_rc 0 "$PEER" insert -q "$QA" -n 100 -s 20000 -f IDS -i tail -z 44
for s in B C H I; do
  wait_until 60 has_ident "$(srv_queue $s)" tail/99 ||
    srv_fail $s "$s did not get A's products"
  srv_same A $s
done
ok "B and C (TLS), H and I (plain) get A's 405 products (1 KB to 3 MB) byte for byte"

# The feeds' summaries, written when the downstreams go: every feed that
# started has ended.
for s in B C H I; do
  srv_stop $s
done
wait_until 20 feeds_all_ended A 4 || srv_fail A "A's feeds did not all end"
tls_pids=$(tls_conn_pids A)
((${#tls_pids} > 2)) || srv_fail A "A does not log the TLS connections"
tls_feeds=0
plain_feeds=0
tls_sent=0
while read -r line; do
  pid=$(sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p' <<<"$line")
  if [[ $tls_pids == *" $pid "* ]]; then
    tls_feeds=$((tls_feeds + 1))
  else
    plain_feeds=$((plain_feeds + 1))
  fi
done < <(srv_log A | grep 'Starting Up(')
while read -r line; do
  pid=$(sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p' <<<"$line")
  if [[ $tls_pids == *" $pid "* ]]; then
    n=$(sed -n 's/.* \([0-9]*\) products sent (.*/\1/p' <<<"$line")
    tls_sent=$((tls_sent + n))
  fi
done < <(srv_log A | grep 'products sent (')
((tls_feeds >= 2 && plain_feeds >= 2)) ||
  srv_fail A "$tls_feeds TLS and $plain_feeds plain feeds started, not 2 of each"
hub_took=$(srv_log A | grep -c ' hub\[[0-9]*\] .* feeding ')
((hub_took == plain_feeds)) ||
  srv_fail A "the hub took $hub_took feeds; $plain_feeds plain ones started"
((tls_sent >= 810)) ||
  srv_fail A "the TLS feeds' own processes sent $tls_sent products, not B's and C's 405 each"
ok "the hub took the $plain_feeds plain feeds and no TLS one; the $tls_feeds TLS feeds' own processes sent $tls_sent products"
srv_stop A
