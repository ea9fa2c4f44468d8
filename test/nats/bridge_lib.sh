# shellcheck shell=bash
# bridge_lib.sh - what the tests of the whole bridge (queue A -> pq2nats ->
# nats-server -> nats2pq -> queue B) share, beside test/nats/lib.sh (the
# servers), which it sources: making products, counting and comparing the
# products of two queues, and starting and stopping the two programs.
#
# Usage in a test:  source "$(dirname "$0")/bridge_lib.sh" "$@"
# (the arguments of lib.sh).  The environment names the helpers:
# PQCLIHELPER (test/cli/pqclihelper: `dump` lists a queue in insertion
# order) and NATSHELPER (test/nats/natshelper: publishes a message of the
# test's making).
#
#   make_products DIR PREFIX N SIZE   N files DIR/PREFIX.I of SIZE bytes
#                                     (at least 8), each different (its
#                                     number, then random bytes)
#   insert_products Q FEED IDENT FILE...  pqinsert them into Q, in order
#                                     (idents IDENT.SEQNO with several)
#   q_count Q                         the products in Q (pqmon -S)
#   wait_count Q N SECONDS            wait until Q holds at least N; fail
#                                     if it does not within SECONDS
#   q_dump Q                          one line a product in insertion
#                                     order: signature, size, creation
#                                     time, feedtype, seqno, identifier
#   same_queues A B                   fail unless B holds what A holds:
#                                     as many products, and for each
#                                     feedtype (each a subject) the same
#                                     products (metadata, signatures) in
#                                     the same order with the same bytes;
#                                     and each product's data match its
#                                     signature (pqcat -c)
#   start_pub NAME ARGS...            pq2nats ARGS in the background, its
#                                     log $SCRATCH/NAME.log; pid in PID_NAME
#   start_sub NAME ARGS...            the same for nats2pq
#   pub_sub_stop NAME SIGNAL STATUS   stop one of them, require STATUS
#   bridge_finish N                   wait until B holds N, stop pq2nats
#                                     and nats2pq (SIGTERM, status 0), fail
#                                     unless B still holds N
#   bridge_stream_check N             A's products each once in B, and N
#                                     in the stream LDM, in order per subject
#   stream_order A URL                fail unless the product stream LDM
#                                     (prefix ldm) holds A's products each
#                                     once and, subject by subject, in A's
#                                     order: where a disorder in B comes
#                                     from pq2nats's side (natspeek dump)
#   bridge_setup SLOTS                the registry, a server "s" (its URL
#                                     in U), empty 64 MiB queues A and B
#                                     of SLOTS slots each (paths in A, B)
#   feed_a N STEP DIR                 pqinsert DIR/p.0 .. p.N-1 into A one
#                                     at a time, as P0.. (feedtype IDS for
#                                     every STEP-th, else NEXRAD3)
#   ack_pending SERVER                messages the (one) consumer of the
#                                     server has delivered and not had
#                                     acknowledged (/jsz)

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

[[ -x ${PQCLIHELPER:-} ]] || fail "PQCLIHELPER does not name pqclihelper"
[[ -x ${NATSHELPER:-} ]] || fail "NATSHELPER does not name natshelper"
declare -A BRIDGE_PID

make_products() {
  local dir=$1 prefix=$2 n=$3 size=$4 i
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do
    {
      printf '%08d' "$i"
      head -c $((size - 8)) /dev/urandom
    } >"$dir/$prefix.$i"
  done
}

insert_products() {
  local q=$1 feed=$2 ident=$3
  shift 3
  expect_rc 0 pqinsert -q "$q" -f "$feed" -p "$ident" -l - "$@"
}

q_count() {
  local -a st
  read -r -a st < <(pqmon -S -q "$1" -l /dev/null) ||
    fail "pqmon -S -q $1 failed"
  echo "${st[6]}"
}

wait_count() {
  local q=$1 n=$2 limit=$3
  wait_until "$limit" eval "(( \$(q_count '$q') >= $n ))" ||
    fail "$(basename "$q") holds $(q_count "$q") products, not $n, after $limit s"
}

q_dump() {
  "$PQCLIHELPER" dump "$1" | cut -d' ' -f2- || fail "dump of $1 failed"
}

same_queues() {
  local a=$1 b=$2 ft ma mb
  q_dump "$a" >"$SCRATCH/dump.a"
  q_dump "$b" >"$SCRATCH/dump.b"
  (($(wc -l <"$SCRATCH/dump.a") == $(wc -l <"$SCRATCH/dump.b"))) ||
    fail "$(basename "$a") holds $(wc -l <"$SCRATCH/dump.a") products, \
$(basename "$b") $(wc -l <"$SCRATCH/dump.b")"
  awk '{ print $4 }' "$SCRATCH/dump.a" | sort -u >"$SCRATCH/feeds"
  while read -r ft; do
    awk -v f="$ft" '$4 == f' "$SCRATCH/dump.a" >"$SCRATCH/dump.a.$ft"
    awk -v f="$ft" '$4 == f' "$SCRATCH/dump.b" >"$SCRATCH/dump.b.$ft"
    diff "$SCRATCH/dump.a.$ft" "$SCRATCH/dump.b.$ft" >"$SCRATCH/dump.diff" ||
      EXTRA_LOG=$SCRATCH/dump.diff fail "the $ft products of $(basename "$b") \
are not those of $(basename "$a") in the same order (diff below)"
    ma=$(pqcat -f "$ft" -q "$a" -l /dev/null | md5sum)
    mb=$(pqcat -f "$ft" -q "$b" -l /dev/null | md5sum)
    [[ $ma == "$mb" ]] || fail "the data of the $ft products of \
$(basename "$b") differ from those of $(basename "$a")"
  done <"$SCRATCH/feeds"
  pqcat -c -q "$b" -l "$SCRATCH/pqcat_c.log" >/dev/null
  expect_not_in "$SCRATCH/pqcat_c.log" "signature mismatch"
}

_bridge_start() {
  local prog=$1 name=$2
  shift 2
  background "$prog" -l "$SCRATCH/$name.log" "$@"
  BRIDGE_PID[$name]=$BG
  EXTRA_LOG=$SCRATCH/$name.log
}

start_pub() {
  _bridge_start pq2nats "$@"
}

start_sub() {
  _bridge_start nats2pq "$@"
}

pub_sub_stop() {
  local name=$1 sig=$2 want=$3
  [[ -n ${BRIDGE_PID[$name]:-} ]] || fail "$name was not started"
  # shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
  EXTRA_LOG=$SCRATCH/$name.log
  if [[ $sig == KILL ]]; then
    kill -KILL "${BRIDGE_PID[$name]}"
    wait "${BRIDGE_PID[$name]}"
    rc=$?
  else
    stop_within "${BRIDGE_PID[$name]}" "$sig" 30 "$name"
  fi
  ((rc == want)) || fail "$name exited $rc after SIG$sig, expected $want"
  BRIDGE_PID[$name]=
}

ack_pending() {
  local n
  n=$(nats_jsz "$1" "consumers=true" |
    sed -n 's/.*"num_ack_pending": *\([0-9]*\).*/\1/p' | head -n 1)
  echo "${n:-0}"
}

stream_order() {
  local a=$1 url=$2 ft
  q_dump "$a" >"$SCRATCH/order.a"
  "$NATSPEEK" dump "$url" LDM ldm >"$SCRATCH/order.stream" ||
    fail "natspeek dump of the stream failed"
  awk '$2 != "H" { print $2, $3 }' "$SCRATCH/order.stream" >"$SCRATCH/order.s"
  awk '{ print $4 }' "$SCRATCH/order.a" | sort -u >"$SCRATCH/order.feeds"
  while read -r ft; do
    awk -v f="$ft" '$4 == f { print $6 }' "$SCRATCH/order.a" \
      >"$SCRATCH/order.a.$ft"
    awk -v s="ldm.$ft" '$1 == s { print $2 }' "$SCRATCH/order.s" \
      >"$SCRATCH/order.s.$ft"
    diff "$SCRATCH/order.a.$ft" "$SCRATCH/order.s.$ft" \
      >"$SCRATCH/order.diff" ||
      EXTRA_LOG=$SCRATCH/order.diff fail "the stream holds the $ft products \
of $(basename "$a") out of order or not once each: pq2nats's side (diff of \
the identifiers below)"
  done <"$SCRATCH/order.feeds"
}

bridge_finish() {
  local n=$1
  wait_count "$B" "$n" 120
  pub_sub_stop pub TERM 0
  pub_sub_stop sub TERM 0
  (($(q_count "$B") == n)) || fail "B holds $(q_count "$B"), not $n"
}

bridge_stream_check() {
  local n=$1 m
  stream_order "$A" "$U"
  same_queues "$A" "$B"
  m=$("$NATSPEEK" count "$U" LDM) || fail "natspeek count failed"
  ((m == n)) || fail "the stream holds $m messages, not $n"
}

bridge_setup() {
  write_registry testhost
  nats_start s 0
  # shellcheck disable=SC2034 # U, A and B are the tests'
  U=$NATS_URL_NOW
  A=$SCRATCH/a.pq
  B=$SCRATCH/b.pq
  expect_rc 0 pqcreate -c -s 64M -S "$1" -q "$A"
  expect_rc 0 pqcreate -c -s 64M -S "$1" -q "$B"
}

feed_a() {
  local n=$1 step=$2 dir=$3 i ft
  for ((i = 0; i < n; i++)); do
    ft=IDS
    ((i % step == 0)) || ft=NEXRAD3
    pqinsert -q "$A" -f "$ft" -p "P$i" -l /dev/null "$dir/p.$i" || exit 1
  done
}
