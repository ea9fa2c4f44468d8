#!/usr/bin/env bash
# The downstream side of a feed, between two of our servers: A has ALLOW,
# B a REQUEST from A.  Products inserted into A (before B starts, within
# the time offset, and while it runs) arrive in B byte-identical, in A's
# order, at once; products outside the request stay out; a restart of B
# (SIGTERM) resumes after the last product it has and repeats nothing;
# a RECLASS from A (it ALLOWs less than B asks) is followed; B's origin
# is rewritten "<origin>_v_<host>".
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_REQUESTER_KEYS="<retry-max>1</retry-max>"
srv_init A
srv_init B
srv_upstream A
QA=$(srv_dir A)/ldm.pq
QB=$(srv_dir B)/ldm.pq

# Before B exists: 20 products within the offset, one too old for it.
expect_rc 0 "$PEER" insert -q "$QA" -n 20 -s 3000 -f IDS -i early -z 1
expect_rc 0 "$PEER" insert -q "$QA" -n 1 -s 100 -f IDS -i ancient -a 7200 -z 2
expect_rc 0 "$PEER" insert -q "$QA" -n 5 -s 100 -f EXP -i other -z 3
srv_conf B <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
REQUEST IDS|DDPLUS "^(early|late|big)" 127.0.0.1:@A@
EOF
srv_start B
wait_until 10 holds "$QB" 20 ||
  srv_fail B "B did not get the 20 early products"
srv_log_has B "started requester process" || srv_fail B "no requester started"
srv_log_has B "is willing to be a primary feeder" || srv_fail B "no FEEDME OK"
ok "B's requester got the 20 products within the offset"

# While B runs: 200 products (some of 2 MB) arrive at once, in order.
expect_rc 0 "$PEER" insert -q "$QA" -n 200 -s 5000 -f IDS -i late -z 4
expect_rc 0 "$PEER" insert -q "$QA" -n 3 -s 2000000 -f DDPLUS -i big -z 5
wait_until 10 holds "$QB" 223 ||
  srv_fail B "B did not get the 203 later products"
# Latency: products inserted one at a time are in B at once.
expect_rc 0 "$PEER" insert -q "$QA" -n 20 -s 1000 -f IDS -i late-one -d 10 -z 6
wait_until 5 has_ident "$QB" late-one/19 ||
  srv_fail B "the single products did not arrive"
srv_same A B '$2 ~ /^(early|late|big)/'
expect_not_in B.dump ancient
expect_not_in B.dump other/
grep -q ' peer.test_v_127.0.0.1 ' B.dump || fail "origin not rewritten: $(head -2 B.dump)"
read -r p50 max n < <(latency_ms A.dump B.dump '^late-one/')
awk -v p="$p50" 'BEGIN { exit !(p < 50) }' || fail "A to B: p50 $p50 ms"
ok "243 products in B, byte-identical, in A's order, origin rewritten; one at a time: p50 $p50 ms, max $max ms"

# A restart of B (SIGTERM) resumes after the last product: nothing again.
# The 30 products inserted while B is down end with late2/29: once it is in
# B, everything A would send before it has arrived.
srv_stop B
expect_rc 0 "$PEER" insert -q "$QA" -n 30 -s 700 -f IDS -i late2 -z 7
srv_start B
wait_until 10 has_ident "$QB" late2/29 ||
  srv_fail B "B did not get the products inserted while it was down"
srv_log_has B "resuming after product" || srv_fail B "B did not resume"
srv_same A B '$2 ~ /^(early|late|big)/'

# RECLASS: A allows B only IDS; B asks for IDS|DDPLUS and follows.
srv_stop A
wait_until 5 srv_log_has B "connection closed by upstream" ||
  srv_fail B "B did not see A go"
srv_log_has B ": 30 products received, 30 inserted" ||
  srv_fail B "B's restarted requester got other than the 30 new products"
ok "restarted B resumed after its last product: 30 new ones, none again"

srv_conf A <<'EOF'
ALLOW IDS ^127\.0\.0\.1$
EOF
srv_start A "${SRV_PORT[A]}"
# The DDPLUS products go into A before the IDS ones: had A sent them, they
# would be in B before late3i/4.
expect_rc 0 "$PEER" insert -q "$QA" -n 5 -s 300 -f DDPLUS -i late3d -z 8
expect_rc 0 "$PEER" insert -q "$QA" -n 5 -s 300 -f IDS -i late3i -z 9
wait_until 15 has_ident "$QB" late3i/4 ||
  srv_fail B "B did not get the IDS products after the RECLASS"
srv_log_has B "product reclassification by upstream LDM" ||
  srv_fail B "no RECLASS logged"
srv_dump B b.dump
expect_not_in b.dump late3d
ok "RECLASS followed: only what A allows"

srv_stop B
srv_stop A
expect_rc 0 "$PEER" check -q "$QB"
ok "both servers stopped cleanly; B's queue is consistent"
