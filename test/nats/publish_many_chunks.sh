#!/usr/bin/env bash
# publish_many_chunks.sh - a product of more chunks than pq2nats's books of
# messages in flight held at the start (four times -m, and 64: 128 entries
# with -m 1): with a server whose max_payload is 4096 bytes, a product of
# 1,000,000 bytes is 261 chunks.  pq2nats -m 1 -n publishes it and exits 0
# (it went round its full map for ever before); nats2pq, which first makes
# sure all 261 chunks are in the chunk stream, puts it in a second queue
# byte for byte.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"

write_registry testhost
nats_start s 0 "max_payload: 4096"
U=$NATS_URL_NOW
A=$SCRATCH/a.pq
B=$SCRATCH/b.pq
expect_rc 0 pqcreate -c -s 4M -q "$A"
expect_rc 0 pqcreate -c -s 4M -q "$B"
make_products "$SCRATCH/p" p 1 1000000
insert_products "$A" EXP BIG "$SCRATCH/p/p.0"

L=$SCRATCH/pub.log
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$L
expect_rc 0 timeout -k 10 60 pq2nats -q "$A" -u "$U" -S "$SCRATCH/state" -m 1 -n \
  -l "$L"
expect_in "$L" "exiting: 1 products published"
n=$("$NATSPEEK" count "$U" LDM_CHUNKS) || fail "natspeek count failed"
((n == 261)) || fail "the chunk stream holds $n messages, not 261"
ok "pq2nats -m 1 published a product of 261 chunks and exited"

L=$SCRATCH/sub.log
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$L
expect_rc 0 timeout -k 10 60 nats2pq -q "$B" -u "$U" -n -l "$L"
expect_in "$L" "1 products inserted (1000000 bytes), 0 duplicates, 0 refused"
same_queues "$A" "$B"
ok "nats2pq inserted it whole"
