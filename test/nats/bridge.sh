#!/usr/bin/env bash
# bridge.sh - queue A -> pq2nats -> nats-server -> nats2pq -> queue B, both
# programs following (as under ldmd), on loopback: products of 1 byte, of
# a few KiB on three feedtypes (three subjects) inserted in turns, of
# 1 MiB and of 25 MiB (chunked: more than the server's max_payload) arrive
# in B byte for byte, in order per subject, each once; SIGTERM stops both
# with exit 0.  nats2pq is started first: it waits for the stream that
# pq2nats makes.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"

bridge_setup 5000

start_sub sub -q "$B" -u "$U" -v
start_pub pub -q "$A" -u "$U"
wait_until 30 grep -q "durable consumer nats2pq made" "$SCRATCH/sub.log" ||
  fail "nats2pq did not make its consumer within 30 s"

D=$SCRATCH/data
mkdir -p "$D"
printf 'x' >"$D/one"
make_products "$D" small 300 3000
make_products "$D" mib 3 1048576
make_products "$D" big 1 $((25 * 1048576))

insert_products "$A" EXP ONE "$D/one"
# 30 runs of 10 small products, the feedtypes in turns.
n=0
for ((r = 0; r < 10; r++)); do
  for ft in IDS NEXRAD3 HDS; do
    files=()
    for ((i = 0; i < 10; i++)); do
      files+=("$D/small.$((n + i))")
    done
    insert_products "$A" "$ft" "S$ft$r" "${files[@]}"
    n=$((n + 10))
  done
done
insert_products "$A" NEXRAD2 MIB "$D"/mib.*
insert_products "$A" NGRID BIG "$D/big.0"
total=$((1 + 300 + 3 + 1))
(($(q_count "$A") == total)) || fail "A holds $(q_count "$A"), not $total"

bridge_finish "$total"
same_queues "$A" "$B"
expect_in "$SCRATCH/sub.log" "$total products inserted"
expect_in "$SCRATCH/sub.log" "0 duplicates, 0 refused"
ok "$total products, 1 B to 25 MiB, byte for byte and in order per subject"
