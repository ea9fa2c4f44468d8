#!/usr/bin/env bash
# Damaged data never goes downstream (docs/security.md, "Damaged products"):
# with 8 bytes flipped inside the data of a small and of a large product in
# the queue file, ldmd's feeds (primary HEREIS, alternate COMINGSOON +
# BLKDATA, LDM-5) send every other product, the ones after the damaged ones
# included, each byte-identical (the downstream checks every product's MD5),
# never the damaged ones, and log each damaged product once per feed (ERROR:
# insertion time, signature, identifier).  A NOTIFYME, which sends no data,
# still announces all of them.  A product inserted after the damage is sent
# too: the feed went on.
# Then /server/check-sent (docs/security.md, "Checked once, trusted
# after"): bytes changed in two products after the feeds had found them
# sound go downstream under ONCE, the default (the feeds trust the mark:
# the downstream's MD5 check sees them), and are refused again, logged,
# by every feed under EACH.
# Arguments: ldmd, ldm6_peer, pqclihelper (where a product's data lies).
source "$(dirname "$0")/lib.sh" "$@"
HELPER=$(cd "$(dirname "${3:?path of pqclihelper}")" && pwd)/$(basename "$3")

make_queue 50000000
cat >"$CONF" <<'EOF'
# test configuration
ALLOW ANY ^127\.0\.0\.1$ .*
EOF

expect_rc 0 "$PEER" insert -q "$Q" -n 5 -s 2000 -f EXP -i small -z 1
expect_rc 0 "$PEER" insert -q "$Q" -n 3 -s 3000000 -f EXP -i big -z 2
# sig IDENT: the signature of the product IDENT, as the queue holds it.
sig() {
  "$PEER" dump -q "$Q" | awk -v id="$1" '$2 == id {print $1}'
}
small_sig=$(sig small/2)
big_sig=$(sig big/1)
[[ -n $small_sig && -n $big_sig ]] || fail "no signatures in $Q"
# damage IDENT:OFFSET...: flip 8 bytes of each product's data at OFFSET.
damage() {
  local p off len
  for p in "$@"; do
    read -r off len < <("$HELPER" where "$Q" "${p%%:*}") ||
      fail "pqclihelper where ${p%%:*}"
    ((len > ${p##*:} + 8)) || fail "${p%%:*} is only $len bytes"
    flip_bytes "$Q" $((off + ${p##*:})) 8 || fail "cannot flip bytes of $Q"
  done
}
damage small/2:700 big/1:2000000
"$PEER" dump -q "$Q" >dump.out
(($(count dump.out CORRUPT) == 2)) || fail "the damage did not take: $(cat dump.out)"
start_ldmd

# feed NAME OPTIONS...: a FEEDME for the 6 sound products, every byte
# checked; none of the damaged ones.
feed() {
  local name=$1
  shift
  expect_rc 0 peer feedme "$@" -f EXP -o 600 -n 6 -t 30
  cp "$OUT" "$name.out"
  expect_not_in "$name.out" CORRUPT
  expect_not_in "$name.out" " small/2 "
  expect_not_in "$name.out" " big/1 "
  for id in small/0 small/1 small/3 small/4 big/0 big/2; do
    expect_in "$name.out" " $id "
  done
}
feed primary
(($(count primary.out HEREIS) == 6)) || fail "primary: $(cat primary.out)"
feed alternate -A
(($(count alternate.out BLKDATA) == 6)) || fail "alternate: $(cat alternate.out)"
feed ldm5 -V 5
(($(count ldm5.out " ok") == 6)) || fail "LDM-5: $(cat ldm5.out)"
ok "primary, alternate and LDM-5 feeds: the 6 sound products, not the 2 damaged"

wait_until 10 logged 3 "signature $big_sig: big/1" ||
  fail "the damaged big/1 was not logged once per feed"
(($(count "$LOG" "signature $small_sig: small/2") == 3)) ||
  fail "small/2 was not logged once per feed"
(($(count "$LOG" "signature $big_sig: big/1") == 3)) ||
  fail "big/1 was not logged once per feed"
grep "signature $small_sig: small/2" "$LOG" | grep -q "ERROR.*not sent to .*damaged product inserted 2" ||
  fail "the log line does not say what was not sent"
(($(grep "signature $small_sig: small/2" "$LOG" | grep -c "not sent to localhost (127\.0\.0\.1): ") == 3)) ||
  fail "a feed's log line does not name its downstream: $(grep "signature $small_sig" "$LOG")"
wait_until 10 logged 3 "2 damaged not sent" ||
  fail "a feed's last line does not count the damaged products"
ok "each damaged product logged once per feed (ERROR: time, signature, identifier)"

# The feed goes on past the damage: a product inserted after it comes too.
background peer feedme -f EXP -o 600 -n 7 -t 30 >live.out
live=$BG
wait_until 10 grep -q '^HEREIS.* big/2 ' live.out || fail "no products: $(cat live.out)"
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 1500 -f EXP -i after -z 3
wait "$live" || fail "the live feed failed: $(cat live.out)"
expect_in live.out " after/0 "
expect_not_in live.out CORRUPT
ok "a product inserted after the damage is sent on the same feed"

expect_rc 0 peer notifyme -f EXP -o 600 -n 9 -t 20
(($(count "$OUT" NOTIFICATION) == 9)) || fail "notifyme: $(cat "$OUT")"
ok "NOTIFYME (no data sent) announces every product"

# /server/check-sent ONCE (the default): small/3 and big/0 were found
# sound by the feeds above; bytes changed since go through (the downstream
# sees them fail their MD5), the two never found sound still do not.
small3_sig=$(sig small/3)
big0_sig=$(sig big/0)
damage small/3:900 big/0:1000000
expect_rc 1 peer feedme -f EXP -o 600 -n 7 -t 30
cp "$OUT" once.out
for id in small/3 big/0; do
  grep -q " $id .* CORRUPT\$" once.out || fail "ONCE: $id not sent as changed"
done
(($(count once.out CORRUPT) == 2)) || fail "ONCE: $(cat once.out)"
expect_not_in once.out " small/2 "
expect_not_in once.out " big/1 "
(($(count "$LOG" "signature $small3_sig: small/3") == 0)) ||
  fail "ONCE: small/3 was checked again"
ok "check-sent ONCE: a product found sound is trusted, damage after that check goes through"

# EACH: every feed checks every product again.
stop_ldmd
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path><check-sent>EACH</check-sent></server>"
start_ldmd
expect_rc 0 peer feedme -f EXP -o 600 -n 5 -t 30
cp "$OUT" each.out
expect_not_in each.out CORRUPT
for id in small/2 big/1 small/3 big/0; do
  expect_not_in each.out " $id "
done
for id in small/0 small/1 small/4 big/2 after/0; do
  expect_in each.out " $id "
done
wait_until 10 logged 1 "signature $big0_sig: big/0" ||
  fail "EACH: big/0 was not logged"
(($(count "$LOG" "signature $small3_sig: small/3") == 1)) ||
  fail "EACH: small/3 was not logged once"
ok "check-sent EACH: every feed checks every product, the changed ones are not sent"

# A primary feed of another feedtype hears nothing of the damaged EXP
# products: no ERROR line, no "damaged not sent" in its last line (the
# feed hub reads every product for all its feeds, and must charge a
# damaged one only to the feeds it is for).
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 1500 -f IDS -i other -z 4
nended=$(count "$LOG" "products sent")
nbad=$(count "$LOG" "not sent to")
expect_rc 0 peer feedme -f IDS -o 600 -n 1 -t 30
expect_in "$OUT" " other/0 "
wait_until 10 logged $((nended + 1)) "products sent" ||
  fail "the IDS feed's last line did not come"
(($(count "$LOG" "not sent to") == nbad)) ||
  fail "damage charged to a feed not asking for it: $(grep 'not sent to' "$LOG" | tail -4)"
last=$(grep "products sent" "$LOG" | tail -1)
[[ $last != *damaged* ]] || fail "the IDS feed's last line: $last"
ok "a damaged product is charged only to the feeds that ask for it"
