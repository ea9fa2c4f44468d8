#!/usr/bin/env bash
# The upstream side of feeds (FEEDME, NOTIFYME), with real processes:
# subscribers see the products within their offset and those inserted after
# they connect; primary feeds get HEREIS, alternate ones COMINGSOON +
# BLKDATA, every byte verified by MD5; a DONT_SEND is respected; a feed
# resumes after a SIG; NOTIFICATIONs answered with PROC_UNAVAIL (as LDM's
# notifyme does) are dropped; ::1 works; a product inserted by another
# process reaches a subscriber in well under a millisecond.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 50000000
cat >"$CONF" <<'EOF'
# test configuration
ALLOW ANY ^127\.0\.0\.1$ .*
ALLOW ANY ^::1$
EOF
start_ldmd

# Old products (within the offset) and one outside it.
expect_rc 0 "$PEER" insert -q "$Q" -n 3 -s 2000 -f IDS -i old
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 2000 -f IDS -i ancient -a 7200 -z 7
background peer notifyme -o 600 -n 6 -t 20 -U >noti.out
noti=$BG
wait_until 10 grep -q '^OK' noti.out || fail "notifyme got no OK"
wait_until 10 grep -q 'old/2' noti.out || fail "notifyme did not get the old products"
expect_rc 0 "$PEER" insert -q "$Q" -n 3 -s 500 -f IDS -i new -z 2
wait "$noti" || fail "notifyme failed: $(cat noti.out)"
(($(count noti.out NOTIFICATION) == 6)) || fail "notifyme: $(cat noti.out)"
expect_not_in noti.out ancient
ok "notifyme: 3 products within the offset, 3 inserted after it connected"

# Primary: HEREIS for small and large products alike.
expect_rc 0 "$PEER" insert -q "$Q" -n 2 -s 3000000 -f EXP -i big -z 3
expect_rc 0 peer feedme -f EXP -o 600 -n 2 -t 20
(($(count "$OUT" "HEREIS") == 2)) || fail "primary: $(cat "$OUT")"
expect_in "$OUT" "3000000 big/1"
expect_not_in "$OUT" CORRUPT
ok "primary feed: HEREIS, 3 MB products byte-identical"

# Alternate: COMINGSOON + BLKDATA.
expect_rc 0 peer feedme -A -f EXP -o 600 -n 2 -t 20
(($(count "$OUT" "BLKDATA") == 2)) || fail "alternate: $(cat "$OUT")"
expect_not_in "$OUT" CORRUPT
expect_rc 0 peer feedme -A -D -f EXP -o 600 -n 2 -t 20
(($(count "$OUT" "COMINGSOON-DECLINED") == 2)) || fail "DONT_SEND: $(cat "$OUT")"
expect_not_in "$OUT" BLKDATA
ok "alternate feed: COMINGSOON + BLKDATA; DONT_SEND respected"

# LDM-5 FEEDME (the old `feedme`): every call answered; large products in
# 16 KiB packets.
expect_rc 0 peer feedme -V 5 -f EXP -o 600 -n 2 -t 20
(($(count "$OUT" "BLKDATA") == 2)) || fail "LDM-5: $(cat "$OUT")"
expect_not_in "$OUT" CORRUPT
expect_rc 0 "$PEER" insert -q "$Q" -n 2 -s 800 -f EXP -i small5 -z 9
expect_rc 0 peer feedme -V 5 -f EXP -P small5 -o 600 -n 2 -t 20
(($(count "$OUT" "HEREIS") == 2)) || fail "LDM-5 small: $(cat "$OUT")"
ok "LDM-5 FEEDME: HEREIS and COMINGSOON + 16 KiB BLKDATA packets, answered"

# Resume after a signature: only what follows it.
sig=$(grep 'old/0' noti.out | awk '{print $2}')
expect_rc 0 peer notifyme -f IDS -o 600 -S "$sig" -n 5 -t 10
expect_not_in "$OUT" "old/0"
expect_in "$OUT" "old/1"
ok "SIG= resume starts after that product"

# Pattern and feedtype filtering.
expect_rc 0 peer notifyme -f IDS -P '^new/[12]$' -o 600 -n 2 -t 10
(($(count "$OUT" NOTIFICATION) == 2)) || fail "pattern: $(cat "$OUT")"
ok "the class's pattern selects"

if [[ $HAVE_V6 == 1 ]]; then
  expect_rc 0 peer notifyme -h ::1 -f IDS -o 600 -n 6 -t 10
  (($(count "$OUT" NOTIFICATION) == 6)) || fail "::1: $(cat "$OUT")"
  ok "IPv6: notifyme over ::1"
else
  skip_part "IPv6 (notifyme over ::1): no ::1 on this host"
fi

# Latency from insert (another process) to notification.
expect_rc 0 peer latency -q "$Q" -n 50 -d 5 -L 5000
ok "$(grep LATENCY "$OUT")"

# A quiet subscriber's feed, idle (nothing it asks for comes), is closed
# by the server's SIGTERM, and the server stops cleanly.
background peer feedme -f EXP -P '^nothing$' -o 1 -t 30 -n 1 >quiet.out
quiet=$BG
wait_until 10 grep -q '^OK' quiet.out ||
  fail "the quiet subscriber's FEEDME was not answered: $(cat quiet.out)"
stop_ldmd
wait "$quiet"
st=$?
expect_in quiet.out "CLOSED"
((st == 1)) || fail "the quiet subscriber exited $st: $(cat quiet.out)"
expect_in "$LOG" "connection"
expect_not_in "$LOG" ERROR
ok "clean stop while a feed was idle: its connection closed by the server"
