#!/usr/bin/env bash
# cluster.sh - the bridge across a three-node JetStream cluster on loopback
# (pq2nats.1): pq2nats publishes queue A to a stream of 3 replicas (-R 3)
# and nats2pq feeds queue B from it, both given the three servers' URLs.
# While products flow, the stream's leader (the node that orders and
# acknowledges every publish: the hardest node to lose) is killed with
# SIGKILL; more products go in while it is down, under the leader the two
# others elect; then it is restarted and must catch up; then more products.
# Every product must be in B exactly once and byte-identical (its
# metadata line, with signature, the same as in A, and its data's MD5
# equal to that signature); the stream must hold each product message
# exactly once, on every node, the restarted one too (JetStream drops the
# duplicates that publishes retried across the failover would make, by
# Nats-Msg-Id).  Every wait is bounded and waits for an event the servers
# report (/jsz, /healthz) or the queue shows, never for a time.
#
# Arguments: as test/nats/lib.sh.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

A=$SCRATCH/a.pq
B=$SCRATCH/b.pq
PUBLOG=$SCRATCH/pq2nats.log
SUBLOG=$SCRATCH/nats2pq.log
FAIL_LOGS=(OUT:stdout ERR:stderr PUBLOG SUBLOG EXTRA_LOG)

# count Q: products in queue Q.
count() {
  pqmon -S -q "$1" | awk '{ print $7 }'
}

# holds Q N: does queue Q hold at least N products?
holds() {
  local n
  n=$(count "$1" 2>/dev/null) && ((n >= $2))
}

# batch DIR N SIZE: N files of SIZE random bytes (each its own content),
# inserted into A, one pqinsert for all.
batch() {
  mkdir -p "$SCRATCH/$1"
  head -c $(($2 * $3)) /dev/urandom | split -b "$3" -a 5 -d - "$SCRATCH/$1/f"
  (cd "$SCRATCH" && pqinsert -q "$A" "$1"/f*) >"$OUT" 2>"$ERR" ||
    fail "cannot insert $1 into A"
}

# Six distinct free ports: three for the clients, three for the routes.
ports=()
while ((${#ports[@]} < 6)); do
  p=$(free_port)
  [[ " ${ports[*]} " == *" $p "* ]] || ports+=("$p")
done
nats_cluster_start n "${ports[@]}"
ok "the cluster formed: $NATS_CLUSTER_URL"

run pqcreate -q "$A" -s 400M -S 20000
((rc == 0)) || fail "pqcreate A exited $rc"
run pqcreate -q "$B" -s 400M -S 20000
((rc == 0)) || fail "pqcreate B exited $rc"

# 1. The first products; the bridge starts and makes the stream (R 3).
batch b1 200 1000
total=200
background pq2nats -q "$A" -u "$NATS_CLUSTER_URL" -R 3 -S "$SCRATCH/pq2nats.state" \
  -l "$PUBLOG"
PUB=$BG
wait_until 30 nats_cluster_leader n LDM >/dev/null ||
  fail "the stream LDM has no leader all three nodes agree on within 30 s"
background nats2pq -q "$B" -u "$NATS_CLUSTER_URL" -l "$SUBLOG"
SUB=$BG
wait_until 60 holds "$B" "$total" ||
  fail "B holds $(count "$B") of the first $total products after 60 s"
ok "the first $total products crossed the cluster"

# 2. A larger batch (two of its products larger than the 1 MiB payload:
# chunked); once part of it has reached B, the stream leader is killed.
batch b2 4000 4000
head -c $((3 * 1024 * 1024)) /dev/urandom >"$SCRATCH/b2/big0"
head -c $((5 * 1024 * 1024 + 7)) /dev/urandom >"$SCRATCH/b2/big1"
(cd "$SCRATCH" && pqinsert -q "$A" b2/big0 b2/big1) >"$OUT" 2>"$ERR" ||
  fail "cannot insert the large products into A"
total=$((total + 4002))
wait_until 60 holds "$B" $((200 + 100)) ||
  fail "no product of the second batch reached B within 60 s"
leader=$(nats_cluster_leader n LDM) || fail "the stream has no leader"
nats_kill "$leader"
at_kill=$(count "$B")
((at_kill < total)) ||
  fail "all $total products were in B before the leader was killed: the kill was not during the stream (make the batch larger)"
ok "killed the stream leader $leader with $at_kill of $total products in B"
wait_until 30 nats_cluster_leader n LDM "$leader" >/dev/null ||
  fail "no new leader of LDM on the two other nodes within 30 s of killing $leader"
ok "new leader: $(nats_cluster_leader n LDM "$leader")"
batch b3 300 2000
total=$((total + 300))
wait_until 120 holds "$B" "$total" ||
  fail "B holds $(count "$B") of $total products 120 s after the leader was killed"
ok "all $total products in B with $leader down"

# 3. The old leader comes back and catches up; more products.  Its catch-up
# once took nats-server 2.9.10 157 s on this loaded machine (its log: RAFT
# "Wrong index", "could not store entry to WAL", "Expected first catchup
# entry to be a snapshot and peerstate, will retry", for LDM_CHUNKS), where
# it usually takes 1-3 s: so nats_restart's wait for /healthz is 240 s.
NATS_HEALTH_WAIT=240 nats_restart "$leader"
nats_node_current "$leader" ||
  fail "$leader, restarted, is not current (/healthz)"
batch b4 300 3000
total=$((total + 300))
wait_until 60 holds "$B" "$total" ||
  fail "B holds $(count "$B") of $total products after $leader came back"
ok "all $total products in B after $leader came back"

# Both bridges stop cleanly: state saved, exit 0.
stop_expect "$PUB" pq2nats TERM 20 0
stop_expect "$SUB" nats2pq TERM 20 0

# 4. Exactly once and byte-identical.  The metadata lines (signature,
# size, creation time, feedtype, seqno, identifier) of A and B are the same
# set, none twice in B; the data of each product in B has the MD5 its
# signature says (pqcat -c); two products compared byte for byte.
pqcat -L -x -q "$A" 2>/dev/null | sort >"$SCRATCH/a.list"
pqcat -L -x -q "$B" 2>/dev/null | sort >"$SCRATCH/b.list"
(($(wc -l <"$SCRATCH/a.list") == total)) ||
  fail "A holds $(wc -l <"$SCRATCH/a.list") products, expected $total"
dups=$(awk '{ print $1 }' "$SCRATCH/b.list" | uniq -d | wc -l)
((dups == 0)) || fail "$dups products are in B more than once"
diff "$SCRATCH/a.list" "$SCRATCH/b.list" >"$OUT" ||
  fail "the products of B are not those of A (diff in stdout)"
run pqcat -c -q "$B" -l -
((rc == 0)) || fail "pqcat -c on B exited $rc"
! grep -q 'signature mismatch' "$ERR" ||
  fail "products in B whose data is not what their signature says"
for f in b2/big1 b3/f00017; do
  pqcat -q "$B" -p "^$f\$" >"$SCRATCH/got" 2>/dev/null
  cmp -s "$SCRATCH/$f" "$SCRATCH/got" || fail "$f in B differs from the file"
done
ok "the $total products are in B once each, byte-identical"

for i in 1 2 3; do
  wait_until 30 eval "[[ \$(nats_stream_msgs n$i LDM) == $total ]]" ||
    fail "n$i's replica of LDM holds $(nats_stream_msgs n$i LDM) messages, expected $total (one per product)"
done
ok "each node's replica of LDM holds $total messages, one per product"
