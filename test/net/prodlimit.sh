#!/usr/bin/env bash
# The largest product a peer may send (/server/max-product-size, here 50K:
# 50,000 bytes; by default what the queue can hold, as LDM).  A push of a
# larger product is refused whether it comes in a HEREIS gathered whole,
# in a long HEREIS streamed into the queue, or announced by COMINGSOON: an
# error names the product, the peer, its size and the limit, nothing is
# stored, the connection is closed.  A record longer than the limit and
# its overhead is refused by its length word, before any of it is read.
# Products up to the limit are stored.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 4000000
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path>
    <max-product-size>50K</max-product-size></server>"
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT ANY .* ^127\.0\.0\.1$
EOF
start_ldmd
seed=200

# too_big NAME SIZE ARGS...: push one product of SIZE bytes named NAME/0;
# ldmd must refuse it for its size (by the signature the sender printed,
# when it got as far as sending it: COMINGSOON is refused before).
too_big() {
  local name=$1 size=$2 sig
  shift 2
  seed=$((seed + 1))
  run peer hiya -f EXP -n 1 -i "$name" -z "$seed" -s "$size" "$@"
  [[ $rc != 0 ]] || fail "$name: the push was confirmed: $(cat "$OUT")"
  sig=$(awk '/^SENT-/ {print $3}' "$OUT")
  [[ -n $sig ]] || sig='[0-9a-f]{32}'
  wait_until 5 grep -qE "of $name/0 \($sig\) from localhost \(127\.0\.0\.1\): $size bytes declared, more than the largest product taken \(/server/max-product-size 50000\): nothing stored, closing" \
    "$LOG" || fail "$name: no error naming the product, its size and the limit"
  (($("$PEER" count -q "$Q") == 0)) || fail "$name: something was stored"
  ok "$name ($size bytes) refused"
}

too_big hereis 50001
too_big hereis-long 900000
too_big comingsoon 50001 -c -b 0
expect_in "$LOG" "refusing COMINGSOON of comingsoon/0"
# A record past the limit and the overhead (1 MiB): its length word
# refuses it.
run peer hiya -f EXP -n 1 -i huge -z 300 -s 1200000
[[ $rc != 0 ]] || fail "a record of 1.2 MB was taken"
wait_until 5 logged 1 "bad RPC record from localhost (127.0.0.1)" ||
  fail "the 1.2 MB record was not refused by its length"
(($("$PEER" count -q "$Q") == 0)) || fail "huge: something was stored"
ok "a record past the limit and its overhead refused by its length word"

expect_rc 0 peer hiya -f EXP -n 2 -i fits -z 9 -s 50000 -q "$Q"
expect_rc 0 peer hiya -f EXP -n 1 -i fits-cs -z 10 -s 50000 -c -b 0 -q "$Q"
(($("$PEER" count -q "$Q") == 3)) || fail "the products within the limit are not all stored"
ok "products of 50,000 bytes stored"
stop_ldmd
