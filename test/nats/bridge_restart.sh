#!/usr/bin/env bash
# bridge_restart.sh - each bridge program stopped and started again while
# products flow, by SIGKILL and by SIGTERM: pq2nats killed, nats2pq
# killed, nats2pq killed while it holds messages delivered and not
# acknowledged (frozen by SIGSTOP until the server says so), pq2nats
# stopped, nats2pq stopped, each started again at once, while an inserter
# adds products to queue A one at a time.  Every product
# reaches queue B once, byte for byte and in order per subject, and the
# stream holds each once (pq2nats's republished ones dropped by
# Nats-Msg-Id); a SIGTERM is exit 0.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"

bridge_setup 5000
N=1600
D=$SCRATCH/data
make_products "$D" p "$N" 2000

SUBARGS=(-q "$B" -u "$U" -v)
PUBARGS=(-q "$A" -u "$U")
start_pub pub "${PUBARGS[@]}"
start_sub sub "${SUBARGS[@]}"
background feed_a "$N" 2 "$D"
INS=$BG

# restart_at COUNT NAME SIGNAL STATUS: when B holds COUNT products, stop
# NAME with SIGNAL (it must exit STATUS) and start it again, its log
# going on; the inserter must still be running (the stream goes on).
restart_at() {
  local count=$1 name=$2 sig=$3 want=$4
  wait_count "$B" "$count" 60
  gone "$INS" && fail "the inserter ended before the restart of $name \
(at $count products): not mid-stream"
  pub_sub_stop "$name" "$sig" "$want"
  mv "$SCRATCH/$name.log" "$SCRATCH/$name.log.$sig.$count"
  if [[ $name == pub ]]; then
    start_pub pub "${PUBARGS[@]}"
  else
    start_sub sub "${SUBARGS[@]}"
  fi
  ok "$name SIG$sig with $count products in B, started again"
}
# kill_holding COUNT: when B holds COUNT products, freeze nats2pq; once the
# server has delivered it messages it has not acknowledged (its fetch
# waits at the server for a second: if none came, thaw it and try again),
# kill it and start it again.  Those messages come again from the server
# only after the ack wait, behind newer ones: the new nats2pq must take
# them first, for the order.
some_pending() { (($(ack_pending s) > 0)); }
none_pending() { (($(ack_pending s) == 0)); }
kill_holding() {
  local count=$1 try
  wait_count "$B" "$count" 60
  for ((try = 0; try < 10; try++)); do
    kill -STOP "${BRIDGE_PID[sub]}"
    wait_until 3 some_pending && break
    kill -CONT "${BRIDGE_PID[sub]}"
    wait_until 10 none_pending
  done
  ((try < 10)) || fail "nats2pq never held an unacknowledged message"
  gone "$INS" && fail "the inserter ended before the kill of nats2pq \
holding messages: not mid-stream"
  local held
  held=$(ack_pending s)
  pub_sub_stop sub KILL 137
  mv "$SCRATCH/sub.log" "$SCRATCH/sub.log.held"
  start_sub sub "${SUBARGS[@]}"
  wait_until 30 grep -q "not acknowledged: taking them again first" \
    "$SCRATCH/sub.log" || fail "nats2pq did not say it takes again the \
$held messages delivered before"
  ok "sub SIGKILL holding $held unacknowledged messages, started again"
}
restart_at 200 pub KILL 137
restart_at 400 sub KILL 137
kill_holding 600
restart_at 800 pub TERM 0
restart_at 1000 sub TERM 0

wait "$INS" || fail "the inserter failed"
(($(q_count "$A") == N)) || fail "A holds $(q_count "$A"), not $N"
bridge_finish "$N"
bridge_stream_check "$N"
ok "$N products, each once in B and in the stream, in order per subject"
