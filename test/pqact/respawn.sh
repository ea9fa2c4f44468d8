#!/usr/bin/env bash
# pqact's decoders that end or are ended (our pqutils/pqact/pqact.1,
# DECODERS): a decoder that exits 0 at once, reading nothing, is started
# again after the growing delay (at once, then 1, 2, 4 ... s), not in a
# loop; a decoder given up after -t is sent SIGTERM, and SIGKILL when it
# ignores that, with its process group, so nothing is left running.
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
# deaf.sh NAME: ignore SIGTERM, start a child that ignores it too, record
# both pids, and sleep reading nothing.
cat >"$S/deaf.sh" <<'SH'
#!/bin/sh
trap '' TERM
sleep 600 &
echo "$$ $!" >"$1.pids"
exec sleep 600
SH
chmod +x "$S/quick.sh" "$S/deaf.sh"

cat >"$CONF" <<CONF
EXP${tab}^quick${tab}PIPE${tab}$S/quick.sh $S/quick.starts
EXP${tab}^deaf${tab}PIPE${tab}$S/deaf.sh $S/deaf
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

# 2. A decoder that reads nothing for -t 10 s and ignores SIGTERM: given
# up, sent SIGTERM, then SIGKILL; its child (same process group) too.
head -c 1000000 /dev/urandom >big
for i in 1 2 3; do # more than its pipe holds
  put EXP 1 "$(now)" "$i" here "deaf $i" big
done
wait_until 10 test -s "$S/deaf.pids" || fail "the deaf decoder did not start"
read -r DEC KID <"$S/deaf.pids"
KILL_AT_EXIT+=(DEC KID) # should the test fail with them running
wait_until 30 grep -qF "write to decoder timed out" "$LOG" ||
  fail "a decoder that reads nothing for -t 10 s was not given up"
wait_until 20 grep -qF "sending SIGKILL" "$LOG" ||
  fail "a decoder that ignores SIGTERM was not sent SIGKILL"
wait_until 10 gone "$DEC" || fail "the decoder given up ($DEC) still runs"
wait_until 10 gone "$KID" || fail "the decoder's child ($KID) still runs"
expect_in "$LOG" "sending SIGTERM to child $DEC"
ok "a decoder given up after -t that ignores SIGTERM is killed, with its child"

stop_within "$PQ" TERM 5 pqact
((rc == 0)) || fail "pqact exited $rc after SIGTERM"
sanitizer_check "$ERR"
sanitizer_check "$LOG"
