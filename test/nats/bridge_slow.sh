#!/usr/bin/env bash
# bridge_slow.sh - a slow or full queue B loses nothing.
#   1. nats2pq not running while pq2nats publishes 3000 products: started
#      afterwards, it takes them all, in order per subject, and exits (-n).
#   2. queue B full: a reader holds the one product that fills most of it,
#      so no product of the stream can go in (PQ_LOCKED): nats2pq keeps
#      the messages it was delivered, unacknowledged, says why it waits,
#      and once the reader lets go inserts each product, in order, once.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"

bridge_setup 8000
D=$SCRATCH/data

# ---- 1: nats2pq stopped while A publishes a lot ----
N=3000
make_products "$D" p "$N" 1000
half=$((N / 2))
insert_products "$A" IDS P "$D"/p.{0..1499}
insert_products "$A" NEXRAD3 Q "$D"/p.{1500..2999}
expect_rc 0 timeout 120 pq2nats -q "$A" -u "$U" -n -l "$SCRATCH/pub.log"
m=$("$NATSPEEK" count "$U" LDM) || fail "natspeek count failed"
((m == N)) || fail "the stream holds $m messages, not $N"
(($(q_count "$B") == 0)) || fail "B is not empty before nats2pq runs"
expect_rc 0 timeout 120 nats2pq -q "$B" -u "$U" -n -b 64 -l "$SCRATCH/sub.log"
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$SCRATCH/sub.log
same_queues "$A" "$B"
expect_in "$SCRATCH/sub.log" "$N products inserted"
ok "$N products published while nats2pq was stopped, all taken after ($half a feed)"

# ---- 2: queue B full, its room held by a reader ----
B2=$SCRATCH/b2.pq
expect_rc 0 pqcreate -c -s 1M -S 64 -q "$B2"
head -c 700000 /dev/urandom >"$D/filler"
insert_products "$B2" EXP FILLER "$D/filler"
background "$PQCLIHELPER" read-hold "$B2" >"$SCRATCH/held.out"
HOLDER=$BG
wait_until 10 grep -q holding "$SCRATCH/held.out" || fail "the reader did not start"
make_products "$D" big 8 600000
expect_rc 0 pqcreate -c -s 64M -S 100 -q "$SCRATCH/a2.pq"
insert_products "$SCRATCH/a2.pq" NGRID BIG "$D"/big.{0..7}
expect_rc 0 timeout 120 pq2nats -q "$SCRATCH/a2.pq" -u "$U" -s FULL -P full \
  -n -l "$SCRATCH/pub2.log"
start_sub sub2 -q "$B2" -u "$U" -s FULL -P full -d full -v
wait_until 30 grep -q "no room in queue $B2 for BIG.0 (600000 bytes)" \
  "$SCRATCH/sub2.log" || fail "nats2pq did not say it waits for room"
pending_full() { (($(ack_pending s) > 0)); }
wait_until 30 pending_full || fail "no message delivered and held"
(($(q_count "$B2") == 1)) || fail "B2 holds other than the filler"
! grep -qE 'INFO +600000 .* BIG\.0$' "$SCRATCH/sub2.log" ||
  fail "BIG.0 went in while the reader held the room"
ok "queue full: nats2pq holds $(ack_pending s) messages unacknowledged, waiting"
kill -KILL "$HOLDER"
wait "$HOLDER" 2>/dev/null
wait_until 60 grep -q "INFO .* BIG.7$" "$SCRATCH/sub2.log" ||
  fail "the products did not go in once the reader let go"
pub_sub_stop sub2 TERM 0
expect_in "$SCRATCH/sub2.log" "room in queue $B2 again"
expect_in "$SCRATCH/sub2.log" "8 products inserted (4800000 bytes), 0 duplicates, 0 refused"
grep -oE 'INFO +600000 .* BIG\.[0-9]$' "$SCRATCH/sub2.log" |
  sed 's/.* //' >"$SCRATCH/order"
[[ $(tr '\n' ' ' <"$SCRATCH/order") == "BIG.0 BIG.1 BIG.2 BIG.3 BIG.4 BIG.5 BIG.6 BIG.7 " ]] ||
  fail "the products went in as $(tr '\n' ' ' <"$SCRATCH/order"), not once each in order"
pqcat -q "$B2" -p '^BIG\.7$' -l /dev/null | cmp -s - "$D/big.7" ||
  fail "BIG.7 in B2 differs from what was published"
ok "the reader gone, the 8 products went in, in order, once each"
