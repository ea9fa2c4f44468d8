#!/usr/bin/env bash
# bridge_server_kill.sh - nats-server killed (SIGKILL) while products flow
# from queue A through pq2nats, the server and nats2pq to queue B, and
# started again after more products have entered A: both programs stay up
# (reconnecting, their failures logged), and every product arrives in B
# exactly once, byte for byte and in order per subject; the stream holds
# each once.  The server is killed and restarted twice.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"

bridge_setup 5000
N=1200
D=$SCRATCH/data
make_products "$D" p "$N" 3000

start_pub pub -q "$A" -u "$U"
start_sub sub -q "$B" -u "$U" -v
background feed_a "$N" 3 "$D"
INS=$BG

# kill_server_at COUNT: when B holds COUNT products, kill the server; once
# 100 more products are in A, start it again.
kill_server_at() {
  local count=$1 a
  wait_count "$B" "$count" 60
  gone "$INS" && fail "the inserter ended before the server's kill \
(at $count products): not mid-stream"
  nats_kill s
  a=$(q_count "$A")
  wait_count "$A" $((a + 100)) 60
  nats_restart s
  for p in pub sub; do
    gone "${BRIDGE_PID[$p]}" && fail "$p exited while the server was down"
  done
  ok "server killed with $count products in B, started again"
}
kill_server_at 200
kill_server_at 600

wait "$INS" || fail "the inserter failed"
bridge_finish "$N"
bridge_stream_check "$N"
expect_in "$SCRATCH/sub.log" "disconnected from the NATS server"
ok "$N products, each once in B and in the stream, in order per subject"
