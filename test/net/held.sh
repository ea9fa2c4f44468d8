#!/usr/bin/env bash
# No queue lock is held across the network: a product that an upstream is
# sending to a slow downstream can be evicted meanwhile.  (A product being
# read is locked, and a locked product is never evicted: writers jump over
# it.  ldmd's upstream used to keep the product locked through a
# COMINGSOON call that waits up to 60 s for its answer, and through the
# write of a HEREIS to a peer that does not read.)
#   A. Alternate feed, a downstream that never answers COMINGSOON: once
#      the COMINGSOON of product P has arrived, other writers fill the
#      queue, and P must leave it.
#   B. Primary feed, a downstream that reads nothing (its receive buffer
#      as small as can be): once ldmd's socket holds part of a product
#      larger than the socket buffers, writers fill the queue, and the
#      product must leave it; when the downstream goes, the upstream says
#      that the product left the queue while it was being sent.
#   C. The same downstream stops reading for a while, then reads again:
#      the product, sent in pieces found again in the queue, arrives whole.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 12000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
EOF
start_ldmd

# left_queue SIG: the queue no longer holds that product.
left_queue() {
  ! "$PEER" dump -q "$Q" | grep -q "^$1 "
}

# fill: products the feeds do not ask for (IDS), 1.5 times the queue.
fill() {
  "$PEER" insert -q "$Q" -n 18 -s 1000000 -f IDS -i "filler-$1" -z "$2" \
    >/dev/null || fail "cannot insert the fillers"
}

# send_queue: bytes of ldmd's established connection that the peer has not
# taken yet (tx_queue in /proc/net/tcp; the local port is ldmd's).
send_queue() {
  local hex sl addr rem st queues rest
  hex=$(printf '%04X' "$PORT")
  while read -r sl addr rem st queues rest; do
    if [[ $addr == *:$hex && $st == 01 ]]; then
      echo $((16#${queues%%:*}))
      return
    fi
  done </proc/net/tcp
  echo 0
}

socket_filling() {
  (($(send_queue) > 20000))
}

# A. COMINGSOON never answered.
background peer feedme -A -W -f EXP -o 0 -t 60 >alt.out
alt=$BG
wait_until 10 grep -q '^OK' alt.out || fail "the alternate feed got no OK"
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 20000 -f EXP -i held-alt -z 1
sig=$(awk '{print $2}' "$OUT")
wait_until 10 grep -q "^COMINGSOON-HELD held-alt/0 $sig" alt.out ||
  fail "no COMINGSOON for the product"
fill a 2
wait_until 10 left_queue "$sig" ||
  fail "the product waiting for COMINGSOON's answer was not evicted"
ok "A: the product of an unanswered COMINGSOON was evicted"
kill "$alt"
wait "$alt" 2>/dev/null
wait_until 10 logged 1 'products sent' ||
  fail "the alternate upstream did not end when its downstream left"

# B. A downstream that reads nothing.
background peer feedme -X 0 -f EXP -o 0 -t 60 >pri.out
pri=$BG
wait_until 10 grep -q '^STALLED' pri.out || fail "the primary feed did not start"
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 6000000 -f EXP -i held-pri -z 3
sig=$(awk '{print $2}' "$OUT")
wait_until 10 socket_filling ||
  fail "ldmd's socket holds nothing of the product ($(send_queue) bytes)"
fill b 4
wait_until 10 left_queue "$sig" ||
  fail "the product being sent to a stalled downstream was not evicted"
ok "B: the product being written to a stalled downstream was evicted"
kill "$pri"
wait "$pri" 2>/dev/null
wait_until 10 grep -q "held-pri/0 ($sig) left the queue while it was being sent" "$LOG" ||
  fail "no log line for the product that left the queue mid-send"
ok "B: the upstream said the product left the queue while being sent"

# C. A downstream that stops reading for 1.5 s, then reads again.
background peer feedme -X 0 -d 1500 -n 1 -f EXP -o 0 -t 60 >slow.out
slow=$BG
wait_until 10 grep -q '^STALLED' slow.out || fail "the third feed did not start"
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 6000000 -f EXP -i held-slow -z 5
sig=$(awk '{print $2}' "$OUT")
wait "$slow" || fail "the slow downstream did not get the product: $(cat slow.out)"
grep -q "^HEREIS $sig 6000000 held-slow/0 .* ok$" slow.out ||
  fail "the product did not arrive whole: $(cat slow.out)"
ok "C: a product sent in pieces, found again between them, arrived whole"
stop_ldmd
