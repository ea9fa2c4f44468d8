#!/usr/bin/env bash
# sub_phantom.sh - a product message that announces a chunked product of
# 15 MB whose chunks were never published (anyone who may publish on the
# product stream's subjects can send one, docs/security.md "The NATS
# bridge") into a 16 MB queue that holds 8 products of 1.5 MB: nats2pq
# must find that the chunks are not there before it reserves room, so
# every product of the queue is still there afterwards; the phantom is
# logged, naming the missing chunk, and terminated; and a good product
# that pq2nats publishes after it arrives.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"

write_registry testhost
nats_start s 0
U=$NATS_URL_NOW
A=$SCRATCH/a.pq
B=$SCRATCH/b.pq
expect_rc 0 pqcreate -c -s 1M -q "$A"
expect_rc 0 pqcreate -c -s 16M -q "$B"
# pq2nats on an empty queue makes the two streams, as at a real site.
expect_rc 0 pq2nats -q "$A" -u "$U" -S "$SCRATCH/state" -n -l -

# B holds 8 products of 1.5 MB: 12 MB of its 16.
make_products "$SCRATCH/held" h 8 1500000
insert_products "$B" EXP HELD "$SCRATCH"/held/h.{0..7}
q_dump "$B" >"$SCRATCH/before"
(($(wc -l <"$SCRATCH/before") == 8)) || fail "B holds other than 8 products"

# The phantom: every header pq2nats puts on a chunked product's message,
# 15 MB in 15 chunks, and no chunk published.
sig=$(printf 'phantom' | md5sum | cut -c1-32)
expect_rc 0 "$NATSHELPER" pub "$U" ldm.EXP - Ldm-Ident=PHANTOM \
  Ldm-Origin=helper Ldm-Created=1764676800.000001 Ldm-Seqno=1 \
  Ldm-Feedtype=EXP "Ldm-Signature=$sig" Ldm-Size=15000000 Ldm-Chunks=15 \
  "Ldm-Data-Md5=$sig"

# A good product after it, the ordinary way.
printf 'after the phantom\n' >"$SCRATCH/good"
insert_products "$A" IDS GOOD "$SCRATCH/good"
expect_rc 0 pq2nats -q "$A" -u "$U" -S "$SCRATCH/state" -n -l -

L=$SCRATCH/sub.log
expect_rc 0 timeout 60 nats2pq -q "$B" -u "$U" -n -v -l "$L"
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$L
expect_in "$L" "product refused: chunk 0 of 15 of PHANTOM is not in stream LDM_CHUNKS"
expect_in "$L" "1 products inserted (18 bytes), 0 duplicates, 1 refused"
ok "the phantom is logged and refused, the good product after it inserted"

q_dump "$B" >"$SCRATCH/after"
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$SCRATCH/after
head -n 8 "$SCRATCH/after" | diff "$SCRATCH/before" - >"$SCRATCH/diff" ||
  EXTRA_LOG=$SCRATCH/diff fail "the products B held are not all there any \
more (diff of the queue before and after below)"
(($(wc -l <"$SCRATCH/after") == 9)) || fail "B holds other than 9 products"
expect_in "$SCRATCH/after" " IDS 000  GOOD"
ok "nothing evicted: the 8 products B held are there, then GOOD"
