#!/usr/bin/env bash
# pqact's decoders that end or are ended (our pqutils/pqact/pqact.1,
# DECODERS): a decoder that exits 0 at once, reading nothing, is started
# again after the growing delay (at once, then 1, 2, 4 ... s), not in a
# loop.
# Waits are bounded and for events (files, logs, process states); the
# delays are checked from the decoders' own start times, as lower bounds,
# which load can only lengthen.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 8M -S 400 -q "$Q"
tab=$'\t'
S=$SCRATCH

# quick.sh FILE: record when it started, then exit 0 reading nothing.
cat >"$S/quick.sh" <<'SH'
#!/bin/sh
date +%s.%N >>"$1"
exit 0
SH
chmod +x "$S/quick.sh"

cat >"$CONF" <<CONF
EXP${tab}^quick${tab}PIPE${tab}$S/quick.sh $S/quick.starts
CONF

LOG=$S/log
FAIL_LOGS=(ERR:stderr LOG:log)
# stdout too: what the decoders inherit must not hold the test's output
background "$PQACT" -l "$LOG" -d "$DATA" -i 600 -t 10 "$CONF" >"$OUT" 2>"$ERR"
PQ=$BG
wait_until 10 asleep_in "$PQ" 'futex|poll|nanosleep' ||
  fail "pqact never waited for products"

lines() {
  [[ -f $1 ]] && (($(wc -l <"$1") >= $2))
}
now() { date +%s; }

# 1. A decoder that exits 0 at once: started at once the first time,
# then after 1 s, then 2 s (LDM's pqact and ours before restarted it at
# once, about a hundred times a second).
printf 'quick\n' >small
put EXP 1 "$(now)" 0 here "quick 1" small
wait_until 20 lines "$S/quick.starts" 4 ||
  fail "the decoder that exits at once was started $(wc -l <"$S/quick.starts" 2>/dev/null) times in 20 s"
gaps=$(awk 'NR > 1 { printf "%.3f ", $1 - prev } { prev = $1 }' "$S/quick.starts")
read -r g1 g2 g3 _ <<<"$gaps"
awk -v a="$g2" -v b="$g3" 'BEGIN { exit !(a >= 0.9 && b >= 1.9) }' ||
  fail "restarts of a decoder exiting 0 came after $gaps s (1 s and 2 s expected after the second)"
ok "a decoder that exits 0 at once is started again after $g1, $g2, $g3 s (backing off)"

stop_within "$PQ" TERM 5 pqact
((rc == 0)) || fail "pqact exited $rc after SIGTERM"
sanitizer_check "$ERR"
sanitizer_check "$LOG"
