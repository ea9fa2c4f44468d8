#!/usr/bin/env bash
# Two REQUESTs for the same feed to two upstreams share the work as LDM's
# do: the first in ldmd.conf starts primary (HEREIS), the other alternate
# (COMINGSOON, answered DONT_SEND for a product B has already, then
# BLKDATA for one it lacks).  Each product reaches B once.  Autoshift:
# when the alternate brings the products first and the primary only
# duplicates, both switch modes (evaluated every second here, LDM's 60 s
# by default).
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_SERVER_KEYS="<interval>1</interval>"
RELAY_REQUESTER_KEYS="<autoshift-interval>1</autoshift-interval><retry-max>1</retry-max>"
srv_init A1
srv_init A2
srv_init B
srv_upstream A1 A2
srv_conf B <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST NEXRAD2 ^radar 127.0.0.1:@A1@
REQUEST NEXRAD2 ^radar 127.0.0.1:@A2@
EOF2
srv_start B
Q1=$(srv_dir A1)/ldm.pq
Q2=$(srv_dir A2)/ldm.pq
QB=$(srv_dir B)/ldm.pq
wait_until 5 srv_log_has B "is willing to be an alternate feeder" ||
  srv_fail B "no alternate feed"
srv_log_has B "port ${SRV_PORT[A1]} is willing to be a primary feeder" ||
  srv_fail B "A1 is not the primary"
srv_log_has B "port ${SRV_PORT[A2]} is willing to be an alternate feeder" ||
  srv_fail B "A2 is not the alternate"

# The same 20 products (same data, so same signatures) into A1, then A2:
# the alternate's COMINGSOONs are all answered DONT_SEND.
expect_rc 0 "$PEER" insert -q "$Q1" -n 20 -s 30000 -f NEXRAD2 -i radar -z 5
wait_until 5 holds "$QB" 20 ||
  srv_fail B "B did not get the products from the primary"
expect_rc 0 "$PEER" insert -q "$Q2" -n 20 -s 30000 -f NEXRAD2 -i radar -z 5
# Ten more only in A2: the alternate must bring them (COMINGSOON + BLKDATA).
expect_rc 0 "$PEER" insert -q "$Q2" -n 10 -s 30000 -f NEXRAD2 -i radar-a2 -z 6
wait_until 5 holds "$QB" 30 ||
  srv_fail B "B did not get the products only A2 has"
ok "primary A1 and alternate A2: B got 30 distinct products"

# Now the products come to A2 first: it should become the primary, A1 the
# alternate.  A round puts 10 products into A2, waits until B has them
# (from A2), then puts the same into A1, whose feed brings B only
# duplicates; rounds go on until both requesters have switched modes.
switched() {
  srv_log_has B "switching data-product transfer-mode to primary" &&
    srv_log_has B "switching data-product transfer-mode to alternate"
}
want=30
for ((i = 1; i <= 8; i++)); do
  expect_rc 0 "$PEER" insert -q "$Q2" -n 10 -s 20000 -f NEXRAD2 -i radar-x$i -z $((10 + i))
  want=$((want + 10))
  wait_until 5 holds "$QB" "$want" ||
    srv_fail B "B did not get round $i from A2"
  expect_rc 0 "$PEER" insert -q "$Q1" -n 10 -s 20000 -f NEXRAD2 -i radar-x$i -z $((10 + i))
  ! wait_until 3 switched || break
done
srv_log_has B "switching data-product transfer-mode to primary" ||
  srv_fail B "the alternate did not become primary in $((i - 1)) rounds"
srv_log_has B "switching data-product transfer-mode to alternate" ||
  srv_fail B "the primary did not become alternate in $((i - 1)) rounds"
ok "autoshift after $i rounds: A2 (bringing products first) became primary, A1 alternate"

# One last product only A1 has and one only A2 has: once both are in B,
# each feed has brought B everything it had before them.
expect_rc 0 "$PEER" insert -q "$Q1" -n 1 -s 20000 -f NEXRAD2 -i radar-end1 -z 31
expect_rc 0 "$PEER" insert -q "$Q2" -n 1 -s 20000 -f NEXRAD2 -i radar-end2 -z 32
want=$((want + 2))
wait_until 10 has_ident "$QB" radar-end1/0 radar-end2/0 ||
  srv_fail B "B did not get the last product of each upstream"
srv_dump B b.dump
n=$(wc -l <b.dump)
((n == want)) || fail "B has $n products, not $want"
((n == $(awk '{print $1}' b.dump | sort -u | wc -l))) || fail "duplicates in B"
grep -q CORRUPT b.dump && fail "corrupt products in B"
srv_stop B
for s in A1 A2; do
  srv_stop $s
done
# A2's first feed was alternate; it had products declined.
srv_log A2 | grep -qE 'products sent .* [1-9][0-9]* declined' ||
  srv_fail A2 "A2 never had a product declined (DONT_SEND)"
srv_log B | grep -qE "port ${SRV_PORT[A2]}: [0-9]+ products received, [0-9]+ inserted \([0-9]+ bytes\), [1-9][0-9]* duplicates" ||
  srv_fail B "B's alternate requester counted no duplicate"
ok "B has $n products, each once; A2 saw DONT_SEND for the duplicates"
