#!/usr/bin/env bash
# The hand-over of a feed to the feed hubs (docs/protocol.md 6.9) when no
# hub answers: with every hub stopped (SIGSTOP), a plain primary FEEDME is
# served by its own connection process after the 2 s wait, byte for byte;
# once the hubs run again, the late hand-over is dropped untouched (the
# downstream got each product once and nothing else), and the next feed
# goes to a hub again.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 50000000
cat >"$CONF" <<'EOF2'
# test configuration
ALLOW ANY ^127\.0\.0\.1$ .*
EOF2
start_ldmd -v
wait_until 10 logged 1 'feed hub serving the plain primary feeds' ||
  fail "no feed hub started"
# Every hub ldmd started (one per CPU): their start lines.
wait_until 10 eval '(($(count "$LOG" "started feed hub process") == $(count "$LOG" "feed hub serving")))' ||
  fail "the hubs did not all start"
hubs=$(sed -n 's/.*started feed hub process \([0-9]*\):.*/\1/p' "$LOG" | tr '\n' ' ')
[[ $hubs =~ ^[0-9]+( [0-9]+)*\ ?$ ]] || fail "the hubs' pids: '$hubs'"

expect_rc 0 "$PEER" insert -q "$Q" -n 3 -s 400000 -f EXP -i served -z 4

# No hub answers: the connection process serves the feed itself.
# shellcheck disable=SC2086 # one pid per hub
kill -STOP $hubs
expect_rc 0 peer feedme -f EXP -o 600 -n 3 -t 30
(($(count "$OUT" HEREIS) == 3)) || fail "the fallback feed: $(cat "$OUT")"
expect_not_in "$OUT" CORRUPT
expect_in "$LOG" "serving it here"
ok "every hub stopped: the connection process served the feed after the wait, byte for byte"

# The hubs again: the hand-over they find is too late and is dropped, its
# socket untouched; nothing more reached that downstream (it had exactly
# its 3 products, checked above, and ended on its own).
# shellcheck disable=SC2086
kill -CONT $hubs
wait_until 15 logged 1 'was handed over too late: dropped' ||
  fail "the hubs did not drop the late hand-over"
expect_not_in "$LOG" "feeding "
ok "the hubs dropped the late hand-over untouched"

# And the next feed is the hubs' again.
expect_rc 0 peer feedme -f EXP -o 600 -n 3 -t 30
(($(count "$OUT" HEREIS) == 3)) || fail "the feed after: $(cat "$OUT")"
expect_not_in "$OUT" CORRUPT
wait_until 10 grep -q 'hub\[.*feeding ' "$LOG" || fail "no hub took the next feed"
(($(count "$LOG" "serving it here") == 1)) || fail "another fallback: $(grep 'serving it here' "$LOG")"
ok "the next feed went to a hub"

stop_ldmd
