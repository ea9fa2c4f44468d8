#!/usr/bin/env bash
# sub_refuse.sh - what nats2pq does with each message the stream may hold,
# against a real nats-server, the messages of our making (natshelper):
# a good product in the body and one in chunks are inserted, byte for
# byte; a duplicate signature is acknowledged and dropped; a header
# missing, a body of the wrong size, chunks whose MD5 is not Ldm-Data-Md5,
# a chunk missing and a product larger than the queue are each logged,
# naming the product, and terminated, and none of them is in the queue.
# A second run gets nothing: every message was acknowledged or terminated,
# none is delivered again; and the one after the refused ones came in
# order.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"

write_registry testhost
nats_start s 0
U=$NATS_URL_NOW
B=$SCRATCH/b.pq
expect_rc 0 pqcreate -c -s 16M -q "$B"
# pq2nats on an empty queue makes the two streams, as at a real site.
expect_rc 0 pqcreate -c -s 1M -q "$SCRATCH/a.pq"
expect_rc 0 pq2nats -q "$SCRATCH/a.pq" -u "$U" -n -l -

md5() { md5sum "$1" | cut -c1-32; }
sig_of() { printf '%s' "$1" | md5sum | cut -c1-32; }

# pub IDENT FILE SIG [HEADER=VALUE | -HEADER...]: a product message on
# ldm.EXP whose body is FILE ("-": none), with every header pq2nats puts on
# it (Ldm-Size the data's), but those the arguments replace or remove.
pub() {
  local ident=$1 file=$2 sig=$3 size=0
  shift 3
  [[ $file == - ]] || size=$(stat -c %s "$file")
  local -a h=("Ldm-Ident=$ident" Ldm-Origin=helper
    Ldm-Created=1764676800.000001 Ldm-Seqno=7 Ldm-Feedtype=EXP
    "Ldm-Signature=$sig" "Ldm-Size=$size")
  local x
  for x in "$@"; do
    if [[ $x == -* ]]; then
      h=("${h[@]/#${x#-}=*/}")
    else
      h=("${h[@]/#${x%%=*}=*/}")
      h+=("$x")
    fi
  done
  local -a hh=()
  for x in "${h[@]}"; do
    [[ -z $x ]] || hh+=("$x")
  done
  expect_rc 0 "$NATSHELPER" pub "$U" ldm.EXP "$file" "${hh[@]}"
}

# pub_chunks FILE SIG SKIP: FILE's data as chunks of 1 MB on the chunk
# subjects of SIG, but chunk SKIP (-1: none).
pub_chunks() {
  local file=$1 sig=$2 skip=$3 i=0 c
  rm -f "$SCRATCH"/chunk.*
  split -b 1000000 -d -a 2 "$file" "$SCRATCH/chunk."
  for c in "$SCRATCH"/chunk.*; do
    ((i == skip)) ||
      expect_rc 0 "$NATSHELPER" pub "$U" "ldm_chunks.$sig.$i" "$c" \
        "Nats-Msg-Id=$sig.$i"
    i=$((i + 1))
  done
  echo "$i"
}

D=$SCRATCH/data
mkdir -p "$D"
printf 'hello, world' >"$D/good"
head -c 2500000 /dev/urandom >"$D/big"
head -c 2500000 /dev/urandom >"$D/big2"
printf 'the last one' >"$D/last"

# 1: good, in the body.
pub GOOD "$D/good" "$(md5 "$D/good")"
# 2: the same signature again (no Nats-Msg-Id: the stream keeps both).
pub GOOD-AGAIN "$D/good" "$(md5 "$D/good")"
# 3: no identifier.
pub NOIDENT "$D/good" "$(sig_of 3)" -Ldm-Ident
# 4: a body one byte shorter than Ldm-Size.
pub SHORT "$D/good" "$(sig_of 4)" Ldm-Size=13
# 5: good, in 3 chunks.
n=$(pub_chunks "$D/big" "$(md5 "$D/big")" -1)
((n == 3)) || fail "split made $n chunks, not 3"
pub BIG - "$(md5 "$D/big")" Ldm-Size=2500000 Ldm-Chunks=3 \
  "Ldm-Data-Md5=$(md5 "$D/big")"
# 6: every chunk there, Ldm-Data-Md5 that of other data.
pub_chunks "$D/big2" "$(sig_of 6)" -1 >/dev/null
pub BADMD5 - "$(sig_of 6)" Ldm-Size=2500000 Ldm-Chunks=3 \
  "Ldm-Data-Md5=$(md5 "$D/big")"
# 7: chunk 1 of 3 missing.
pub_chunks "$D/big2" "$(sig_of 7)" 1 >/dev/null
pub HOLE - "$(sig_of 7)" Ldm-Size=2500000 Ldm-Chunks=3 \
  "Ldm-Data-Md5=$(md5 "$D/big2")"
# 8: 20 MB, more than the queue of 16 MB holds (refused before its chunks
# are looked for: there are none).
pub HUGE - "$(sig_of 8)" Ldm-Size=20000000 Ldm-Chunks=20 \
  "Ldm-Data-Md5=$(sig_of 8)"
# 9: good, after all of them.
pub LAST "$D/last" "$(md5 "$D/last")"

expect_rc 0 timeout 60 nats2pq -q "$B" -u "$U" -n -v -l "$SCRATCH/sub.log"
EXTRA_LOG=$SCRATCH/sub.log
L=$SCRATCH/sub.log
expect_in "$L" "3 products inserted (2500024 bytes), 1 duplicates, 5 refused"
expect_in "$L" "duplicate product: "
expect_in "$L" "message refused: missing header Ldm-Ident"
expect_in "$L" "product refused: body of 12 bytes where header Ldm-Size says 13: SHORT"
expect_in "$L" "product refused: md5 mismatch: the data's is $(md5 "$D/big2"), header Ldm-Data-Md5 says $(md5 "$D/big"): BADMD5"
expect_in "$L" "product refused: chunk 1 of 3 of HOLE is not in stream LDM_CHUNKS"
expect_in "$L" "product refused: 20000000 bytes, more than the"
expect_in "$L" "queue $B takes: HUGE"
ok "each refusal logged, naming the product"

q_dump "$B" >"$SCRATCH/dump"
EXTRA_LOG=$SCRATCH/dump
(($(wc -l <"$SCRATCH/dump") == 3)) || fail "the queue holds other than 3 products"
[[ $(cut -c1-32 "$SCRATCH/dump" | tr '\n' ' ') == \
"$(md5 "$D/good") $(md5 "$D/big") $(md5 "$D/last") " ]] ||
  fail "the queue does not hold GOOD, BIG and LAST in that order"
expect_in "$SCRATCH/dump" "EXP 007  GOOD"
expect_in "$SCRATCH/dump" "20251202120000.000001 EXP 007  LAST"
pqcat -q "$B" -p '^BIG$' -l /dev/null >"$SCRATCH/big.out"
cmp -s "$SCRATCH/big.out" "$D/big" || fail "BIG's data in the queue differ"
pqcat -q "$B" -p '^GOOD$' -l /dev/null >"$SCRATCH/good.out"
cmp -s "$SCRATCH/good.out" "$D/good" || fail "GOOD's data in the queue differ"
ok "good products inserted byte for byte, in order; refused ones absent"

# Nothing comes again: acknowledged and terminated messages are done with.
expect_rc 0 timeout 60 nats2pq -q "$B" -u "$U" -n -l "$SCRATCH/sub2.log"
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$SCRATCH/sub2.log
expect_in "$SCRATCH/sub2.log" "0 products inserted (0 bytes), 0 duplicates, 0 refused"
ok "a second run is given nothing"
