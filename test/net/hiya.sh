#!/usr/bin/env bash
# The receiving side of pushes (HIYA, as ldmsend and pqsend use it): the
# products arrive in the queue byte-identical, by HEREIS and by COMINGSOON
# + BLKDATA, with the origin rewritten "<origin>_v_<peer>"; duplicates are
# dropped silently (a COMINGSOON for one gets DONT_SEND); products older
# than the max latency are refused and counted; ACCEPT decides what is
# taken (RECLASS when it takes less than offered, AUTH_TOOWEAK when it takes
# nothing); a subscriber sees pushed products at once.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 50000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT EXP|IDS .* ^127\.0\.0\.1$
ACCEPT EXP|IDS .* ^::1$
ACCEPT NEXRAD3 ^SDUS ^127\.0\.0\.1$
EOF
start_ldmd -m 600

background peer notifyme -f EXP -o 0 -n 10 -t 20 >noti.out
noti=$BG
wait_until 10 grep -q '^OK' noti.out || fail "notifyme got no OK"

expect_rc 0 peer hiya -f EXP -n 5 -s 7000 -i small -q "$Q"
(($(count "$OUT" SENT-HEREIS) == 5)) || fail "hereis push: $(cat "$OUT")"
(($(count "$OUT" identical) == 5)) || fail "hereis push: $(cat "$OUT")"
expect_in "$OUT" "peer.test_v_"
ok "HEREIS push: 5 products byte-identical, origin rewritten"

expect_rc 0 peer hiya -f EXP -n 5 -s 2500000 -i large -c -b 100000 -q "$Q" -z 2
(($(count "$OUT" SENT-COMINGSOON) == 5)) || fail "comingsoon push: $(cat "$OUT")"
(($(count "$OUT" identical) == 5)) || fail "comingsoon push: $(cat "$OUT")"
ok "COMINGSOON + BLKDATA push: 5 products of 2.5 MB byte-identical"

wait "$noti" || fail "the subscriber missed pushed products: $(cat noti.out)"
ok "a subscriber saw the 10 pushed products"

# The same products again: silently dropped, COMINGSOON told DONT_SEND.
expect_rc 0 peer hiya -f EXP -n 5 -s 7000 -i small -q "$Q"
expect_rc 0 peer hiya -f EXP -n 5 -s 2500000 -i large -c -b 100000 -z 2
(($(count "$OUT" DONT_SEND) == 5)) || fail "duplicates: $(cat "$OUT")"
wait_until 5 grep -q '10 duplicates\|5 duplicates' "$LOG" ||
  fail "duplicates not counted"
expect_not_in "$LOG" "WARN  hereis: duplicate"
ok "duplicates dropped silently (DONT_SEND for COMINGSOON)"

# Too old for the max latency (600 s): refused, counted.
expect_rc 1 peer hiya -f EXP -n 2 -s 300 -i stale -a 3600 -q "$Q" -z 3
(($(count "$OUT" MISSING) == 2)) || fail "stale: $(cat "$OUT")"
wait_until 5 grep -q '2 too old' "$LOG" || fail "too-old not counted"
ok "products older than the max latency refused"

# ACCEPT narrows an offer: RECLASS with the ACCEPT's class.
expect_rc 0 peer hiya -f 'EXP|NEXRAD3|HDS' -n 1 -s 100 -i narrow -z 4
expect_in "$OUT" "RECLASS 2 {EXP,\".*\"} {NEXRAD3,\"^SDUS\"}"
ok "RECLASS when ACCEPT takes less than the offer"

# Nothing acceptable: refused with AUTH_TOOWEAK.
expect_rc 4 peer hiya -f HDS -n 1 -s 100 -i refused
expect_in "$OUT" "DENIED reject=1 auth=5"
ok "an offer ACCEPT takes nothing of is refused"

if [[ $HAVE_V6 == 1 ]]; then
  expect_rc 0 peer hiya -h ::1 -f IDS -n 3 -s 999 -i v6 -q "$Q" -z 5
  (($(count "$OUT" identical) == 3)) || fail "::1 push: $(cat "$OUT")"
  expect_in "$OUT" "peer.test_v_"
  ok "IPv6: push over ::1"
else
  skip_part "IPv6 (a push over ::1): no ::1 on this host"
fi
stop_ldmd
ok "stopped"
