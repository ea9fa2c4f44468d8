#!/usr/bin/env bash
# Announced products cost the queue nothing until their data comes
# (docs/security.md, "Announced products (COMINGSOON)").  A queue of 5 MB
# holds 12 products of 300,000 bytes.  A peer ACCEPTed for the feed
# announces a product of 4.5 MB by COMINGSOON and leaves; another
# announces 200 products of 40,000 bytes, one after the other, and sends
# none of their data; others send half of a long HEREIS or BLKDATA record
# of 2 MB and close.  After each, the queue holds the same 12 products,
# byte for byte (signatures, identifiers, insertion times), and ldmd says
# what it discarded.  Then products sent properly (HEREIS, COMINGSOON and
# BLKDATA) arrive; with /server/max-product-memory at 100K a product of
# 1 MB, whose data goes into the queue once 100,000 bytes of it have come,
# arrives too.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 5000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT ANY .* ^127\.0\.0\.1$
EOF
expect_rc 0 "$PEER" insert -q "$Q" -f EXP -n 12 -s 300000 -i held -z 1
"$PEER" dump -q "$Q" >before || fail "cannot read the queue"
(($(wc -l <before) == 12)) || fail "the queue does not hold the 12 products: $(cat before)"
start_ldmd

# unchanged WHAT: the queue still holds exactly what it held.
unchanged() {
  "$PEER" dump -q "$Q" >after || fail "$1: cannot read the queue"
  diff before after >diff.out ||
    fail "$1: the queue lost products: $(cat diff.out)"
  ok "$1: the queue still holds its 12 products"
}

ended=0
# left N: wait for ldmd's N-th discarded product of a connection that ended.
left() {
  ended=$((ended + 1))
  wait_until 10 logged "$ended" "discarding incomplete product" ||
    fail "ldmd did not discard the incomplete product ($1)"
}

run peer hiya -f EXP -n 1 -i big -z 2 -s 100 -Z 4500000 -c -b 0 -k announce
[[ $rc == 0 ]] || fail "announce: $(cat "$OUT")"
expect_in "$OUT" "ANNOUNCED big/0 4500000"
left "4.5 MB announced"
expect_in "$LOG" "0 of its 4500000 bytes came"
unchanged "a COMINGSOON of 4.5 MB, then the peer left"

run peer hiya -f EXP -n 200 -i small -z 3 -s 100 -Z 40000 -c -b 0 -k announce
[[ $rc == 0 ]] || fail "announcements: $(cat "$OUT")"
(($(count "$OUT" "ANNOUNCED small/") == 200)) ||
  fail "not every announcement was answered OK: $(tail -3 "$OUT")"
wait_until 10 logged 200 "0 of its 40000 bytes came" ||
  fail "ldmd did not discard the 200 announced products"
ended=$((ended + 200))
unchanged "200 COMINGSOONs of 40,000 bytes with no data"

run peer hiya -f EXP -n 1 -i cut-hereis -z 4 -s 2000000 -k cut
[[ $rc == 0 ]] || fail "cut HEREIS: $(cat "$OUT")"
expect_in "$OUT" "CUT after"
left "half a HEREIS"
unchanged "half the data of a HEREIS of 2 MB, then the peer left"

run peer hiya -f EXP -n 1 -i cut-blkdata -z 5 -s 2000000 -c -b 0 -k cut
[[ $rc == 0 ]] || fail "cut BLKDATA: $(cat "$OUT")"
expect_in "$OUT" "SENT-COMINGSOON cut-blkdata/0"
left "half a BLKDATA"
unchanged "half the data of a BLKDATA of 2 MB, then the peer left"

# Products sent properly arrive: a HEREIS gathered whole, a long HEREIS
# and a COMINGSOON and BLKDATA.
expect_rc 0 peer hiya -f EXP -n 2 -i good -z 6 -s 10000 -q "$Q"
expect_rc 0 peer hiya -f EXP -n 1 -i good-long -z 7 -s 200000 -q "$Q"
expect_rc 0 peer hiya -f EXP -n 2 -i good-cs -z 8 -s 300000 -c -b 0 -q "$Q"
ok "products sent properly after the hostile peers are stored"
stop_ldmd

# Past the memory bound the data goes into the queue as it comes.
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path>
    <max-product-memory>100K</max-product-memory></server>"
start_ldmd
expect_rc 0 peer hiya -f EXP -n 1 -i spill-cs -z 9 -s 1000000 -c -b 0 -q "$Q"
expect_rc 0 peer hiya -f EXP -n 1 -i spill-long -z 10 -s 1000000 -q "$Q"
ok "products of 1 MB with /server/max-product-memory 100K are stored"
stop_ldmd
