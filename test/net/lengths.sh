#!/usr/bin/env bash
# A product's record must hold the data it declares.  The test peer pushes
# (HIYA) crafted products whose records hold more or fewer bytes than they
# say: a HEREIS whose prod_info.sz is not the length of the data that
# follows (a short record gathered whole, a long one streamed into the
# queue), a BLKDATA whose length word is not the length of its data, and a
# BLKDATA that overruns, or falls short of, the size COMINGSOON announced.
# Each is refused: nothing of it is stored, an error names the product
# (identifier and signature) and the peer, and the connection closes, so
# the sender's NULLPROC is never answered; a short BLKDATA followed by
# NULLPROC leaves an incomplete product that is discarded, and that
# NULLPROC gets SYSTEM_ERR.  Honest pushes
# after them are stored.  (ldmd used to store the first 10 bytes of a
# HEREIS that declared 10 and carried 1,000, without a word.)
source "$(dirname "$0")/lib.sh" "$@"

make_queue 4000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT ANY .* ^127\.0\.0\.1$
EOF
start_ldmd
seed=100

# refused NAME WHY ARGS...: push one crafted product named NAME/0; ldmd
# must refuse it with a log line that says WHY.
refused() {
  local name=$1 why=$2 sig
  shift 2
  seed=$((seed + 1))
  run peer hiya -f EXP -n 1 -i "$name" -z "$seed" "$@"
  [[ $rc != 0 ]] || fail "$name: the push was confirmed: $(cat "$OUT")"
  sig=$(awk '/^SENT-/ {print $3}' "$OUT")
  [[ -n $sig ]] || fail "$name: nothing was sent: $(cat "$OUT")"
  wait_until 5 grep -qF "of $name/0 ($sig) from localhost (127.0.0.1): $why" \
    "$LOG" || fail "$name: no error naming the product, the peer and '$why'"
  expect_in "$LOG" "nothing stored, closing"
  (($("$PEER" count -q "$Q") == 0)) || fail "$name: something was stored"
  ok "$name refused: $why"
}

refused hereis-over "10 bytes declared, the record holds 1000" -s 1000 -Z 10
refused hereis-under "1000 bytes declared, the record holds 12" -s 10 -Z 1000
# Streamed (longer than 16 KiB): the data goes into the queue as it comes.
refused hereis-over-long "10 bytes declared, the record holds more" \
  -s 100000 -Z 10
refused hereis-over-long2 "90000 bytes declared, record longer than its contents" \
  -s 100000 -Z 90000
refused hereis-under-long "100000 bytes declared, record ends before its contents do" \
  -s 50000 -Z 100000
# A long one whose declared data has all come before it is read (ldmd then
# gives it its room in the queue at once): the reservation is dropped when
# the record turns out longer, and the queue is left sound.
refused hereis-over-inhand "290000 bytes declared, record longer than its contents" \
  -s 300000 -Z 290000
expect_rc 0 "$PEER" check -q "$Q"
# BLKDATA: its own length word against its data, and against COMINGSOON.
refused blkdata-word-short "500 bytes declared, the record holds 1000" \
  -c -b 0 -s 1000 -Y 500
refused blkdata-word-long "2000 bytes declared, the record holds 1000" \
  -c -b 0 -s 1000 -Y 2000
refused blkdata-over "2000 bytes declared, not the data COMINGSOON announced" \
  -c -b 0 -s 2000 -Z 1000
expect_in "$LOG" "a BLKDATA of 2000 bytes, past the size COMINGSOON announced"
refused blkdata-over-long "100000 bytes declared, not the data COMINGSOON announced" \
  -c -b 0 -s 100000 -Z 50000
refused blkdata-word-long2 "50000 bytes declared, record longer than its contents" \
  -c -b 0 -s 100000 -Y 50000

# Short of COMINGSOON's size, then NULLPROC: nothing more will come, and
# the NULLPROC does not confirm the product (SYSTEM_ERR).
seed=$((seed + 1))
run peer hiya -f EXP -n 1 -i blkdata-under -z "$seed" -c -b 0 -s 500 -Z 1000
[[ $rc != 0 ]] || fail "blkdata-under: the push was confirmed: $(cat "$OUT")"
expect_in "$OUT" "PUSHED 1 call not accepted"
wait_until 5 grep -qF "discarding incomplete product (NULLPROC came before the rest; 500 of its 1000 bytes came)" "$LOG" ||
  fail "the incomplete product was not discarded at NULLPROC"
expect_in "$LOG" "since its last NULLPROC were not stored: answering SYSTEM_ERR"
(($("$PEER" count -q "$Q") == 0)) || fail "blkdata-under: something was stored"
ok "a BLKDATA short of COMINGSOON's size: discarded at NULLPROC, not confirmed"

# Honest pushes still work, on new connections.
expect_rc 0 peer hiya -f EXP -n 3 -i honest -z 7 -s 1000 -q "$Q"
expect_rc 0 peer hiya -f EXP -n 2 -i honest-long -z 8 -s 100000 -c -b 0 -q "$Q"
(($("$PEER" count -q "$Q") == 5)) || fail "the honest products are not all stored"
ok "honest products stored"
stop_ldmd
