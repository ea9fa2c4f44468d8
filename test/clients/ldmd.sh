#!/usr/bin/env bash
# The clients against the real server: ldmd on a kernel-chosen port on
# 127.0.0.1 (and ::1), with its own queue (pqcreate, pqinsert, pqcat) and
# registry.  ldmping gets RESPONDING; notifyme prints the queue's products
# exactly as pqcat -v does, and sees products pushed meanwhile; ldmsend's
# files come out of the queue byte-identical with the origin rewritten;
# ldmd's refusals and reclassifications reach the user.
source "$(dirname "$0")/lib.sh" "$1" "$2"
ldmd_test clients-test-host "$3" "$4"
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ALLOW NEXRAD3 ^::1$
ACCEPT EXP|NEXRAD3 .* ^127\.0\.0\.1$
ACCEPT ANY .* ^::1$
EOF

V6=0
have_ipv6 && V6=1

expect_rc 0 pqcreate -s 50M -S 1000 -q "$Q"
mkdir -p data
for i in 1 2 3; do head -c $((i * 1000)) /dev/urandom >"data/old$i"; done
expect_rc 0 pqinsert -f EXP -s 10 data/old1 data/old2 data/old3

addrs=(-I 127.0.0.1)
((V6)) && addrs+=(-I ::1)
ldmd_start "$LDMD_DIR/ldmd" "$LOG" -P 0 -m 3600 "${addrs[@]}" "$CONF"

# 1. ldmping.
expect_rc 0 ldmping -v -i 0 -h "127.0.0.1:$PORT"
msgs "$ERR" | grep -qE "^RESPONDING +[0-9]+\.[0-9]{6} +$PORT   127\.0\.0\.1    $" ||
  fail "ldmping row: $(msgs "$ERR")"
ok "ldmping: RESPONDING"

# 2. notifyme: the queue's products as pqcat -v prints them; then the ones
# ldmsend pushes, with the origin rewritten.
background notifyme -v -O -h "127.0.0.1:$PORT" -f EXP -o 3600 2>nm.log
nm=$BG
wait_until 15 eval "[[ \$(products nm.log | wc -l) -ge 3 ]]" ||
  fail "notifyme did not list the queue: $(cat nm.log)"
expect_rc 0 pqcat -v -O -q "$Q"
products "$ERR" >want
products nm.log >got
diff got want >diff.out || fail "notifyme and pqcat differ: $(cat diff.out)"
ok "notifyme lists the queue exactly as pqcat -v -O"

head -c 0 /dev/urandom >data/empty
head -c 777 /dev/urandom >data/small
head -c 5000000 /dev/urandom >data/big
expect_rc 0 ldmsend -v -h "127.0.0.1:$PORT" -s 100 data/empty data/small data/big
expect_in "$ERR" "Sending data/big, 5000000 bytes"
for f in empty small big; do
  run pqcat -q "$Q" -p "^data/$f\$"
  [[ $rc == 0 ]] || fail "pqcat of data/$f"
  cmp -s "$OUT" "data/$f" || fail "data/$f did not arrive byte-identical"
done
run pqcat -q "$Q" -c -p '^data/'
expect_not_in "$ERR" "mismatch"
wait_until 15 eval "[[ \$(products nm.log | wc -l) -ge 6 ]]" ||
  fail "notifyme did not see the pushed products"
products nm.log | tail -3 >got
grep -qE '^   5000000 [0-9]{14}\.[0-9]{6} EXP 102  data/big clients-test-host_v_' got ||
  fail "pushed product line: $(cat got)"
kill -TERM "$nm"
wait_exit "$nm" 10
((rc == 0)) || fail "notifyme exited $rc after SIGTERM"
sanitizer_check nm.log
ok "ldmsend: 3 files byte-identical in the queue; notifyme saw them pushed"

# 3. ldmd narrows an offer (RECLASS): ACCEPT EXP|NEXRAD3 of EXP|HDS.
printf narrowed >data/narrow
expect_rc 0 ldmsend -v -h "127.0.0.1:$PORT" -f 'EXP|HDS' data/narrow
expect_in "$ERR" "accepts only "
run pqcat -q "$Q" -p '^data/narrow$'
[[ $(cat "$OUT") == narrowed ]] || fail "data/narrow not in the queue"
ok "ldmsend follows ldmd's RECLASS"

# 4. ldmd refuses: nothing of HDS is accepted; a feedtype not allowed.
expect_rc 5 ldmsend -h "127.0.0.1:$PORT" -f HDS data/small
expect_in "$ERR" "127.0.0.1:$PORT refused HIYA: not allowed (AUTH_TOOWEAK)"
ok "ldmsend: refusal is exit 5 with the reason"

# 5. IPv6: ::1 may have NEXRAD3 only; asking for more is reclassified.
if ((V6)); then
  expect_rc 0 ldmping -v -i 0 -h "[::1]:$PORT"
  msgs "$ERR" | grep -qE "^RESPONDING .* ::1 " || fail "ldmping ::1: $(msgs "$ERR")"
  head -c 4000 /dev/urandom >data/radar
  expect_rc 0 ldmsend -h ::1 -P "$PORT" -f NEXRAD3 data/radar
  run pqcat -q "$Q" -p '^data/radar$'
  cmp -s "$OUT" data/radar || fail "data/radar not byte-identical over ::1"
  background notifyme -v -h "[::1]:$PORT" -f 'NEXRAD3|EXP' -o 3600 2>nm6.log
  nm=$BG
  wait_until 15 eval "products nm6.log | grep -q ' NEXRAD3 000  data/radar\$'" ||
    fail "notifyme over ::1 did not see data/radar: $(cat nm6.log)"
  expect_in nm6.log 'allows only'
  products nm6.log | grep -q ' EXP ' && fail "EXP shown although not allowed"
  kill -TERM "$nm"
  wait_exit "$nm" 10
  ((rc == 0)) || fail "notifyme over ::1 exited $rc"
  expect_rc 2 notifyme -h "[::1]:$PORT" -f HDS
  grep -qE 'refused NOTIFYME|none of the request is allowed' "$ERR" ||
    fail "no refusal message: $(cat "$ERR")"
  ok "IPv6: ldmping, ldmsend, notifyme reclassified and refused"
else
  skip_part "IPv6 (ldmping, ldmsend, notifyme over ::1): cannot listen on ::1"
fi

ldmd_stop "$LOG"
ok "ldmd stopped cleanly"
