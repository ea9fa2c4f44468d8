#!/usr/bin/env bash
# The feed hub (docs/protocol.md, section 6.9), where what it changes could
# be seen by a downstream or an operator:
#   A. A slow pattern costs its peer only (docs/security.md, "Patterns
#      from peers"): a FEEDME whose pattern glibc's regexec() takes
#      seconds on (SLOW in 31 specs, as slowmatch.sh's NOTIFYME) must not
#      hold back the feeds the hubs serve: with a feed already in every
#      hub, each gets a product inserted while that pattern is being
#      matched, within 20 s (a hub matching it would send its feeds
#      nothing for minutes).
#   B. A stop: the last line of a feed the hub served ("N products sent")
#      counts what the hub sent it, as a connection process's own feed
#      does, not 0.
#   C. A downstream's records are bounded as in its connection process.
#   D. Every message a downstream sent at once is read.
source "$(dirname "$0")/lib.sh" "$@"

# in_hub N: has the hub taken N feeds (its INFO line, ldmd -v)?
in_hub() {
  (($(grep -c '^[^ ]* hub\[.*INFO  feeding ' "$LOG") >= $1))
}

slow_match_setup
start_ldmd -v

# A. A feed in every hub (one per CPU: a feed goes to the first hub that
# reads the channel, so feeds are started until each hub has one), then a
# slow pattern, then a product for the first feeds.
nhubs=$(grep -c 'started feed hub process' "$LOG")
((nhubs >= 1)) || fail "no feed hub started"
# hubs_fed: how many hubs have taken a feed.
hubs_fed() {
  grep 'INFO  feeding ' "$LOG" | sed -n 's/^[^ ]* hub\[\([0-9]*\)\].*/\1/p' |
    sort -u | wc -l
}
nquick=0
while (($(hubs_fed) < nhubs && nquick < 10 * nhubs)); do
  # A class of its own: one equal to an older feed's replaces it (feeds.h)
  background peer feedme -f EXP -P "^fresh|^q$nquick\$" -o 0 -n 1 -t 120 \
    >"quick$nquick.out"
  nquick=$((nquick + 1))
  wait_until 20 in_hub "$nquick" || fail "the feed hubs did not take feed $nquick"
done
(($(hubs_fed) == nhubs)) ||
  fail "$nquick feeds went to $(hubs_fed) of the $nhubs hubs"
background peer feedme -P "$SLOW" -N 31 -o 3600 -t 120 >slow.out
wait_until 30 busy_child ||
  fail "no child of ldmd got busy matching the pattern"
mapfile -t KIDS < <(children_of "$LDMD_PID")
BG_PIDS+=("${KIDS[@]}")
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 1000 -f EXP -i fresh -z 1
for ((i = 0; i < nquick; i++)); do
  wait_until 20 grep -q '^RECEIVED 1 BAD 0' "quick$i.out" ||
    fail "feed $i in a hub did not get its product while a slow pattern was matched: $(cat "quick$i.out")"
done
ok "A: feeds in the hubs are not held back by another downstream's slow pattern"
stop_ldmd

# B. Three products to a feed in the hub, then a stop.
start_ldmd -v
background peer feedme -f EXP -P '^counted' -o 0 -n 100 -t 120 >count.out
wait_until 20 in_hub 1 || fail "the feed hub did not take the feed"
expect_rc 0 "$PEER" insert -q "$Q" -n 3 -s 1000 -f EXP -i counted -z 2
wait_until 20 eval '(($(grep -c "^HEREIS.* counted/" count.out) == 3))' ||
  fail "the feed did not get its 3 products: $(cat count.out)"

# C. A downstream whose feed the hub serves sends answers of a few bytes
# (LDMD_RECORD_HEAD at most): one that begins a record of 1 MiB is closed
# at once, as robust.sh's peers are, not waited for while the hub keeps up
# to 64 MiB of it.
background peer feedme -f EXP -P '^none' -o 0 -k long -t 60 >long.out
wait_until 20 in_hub 2 || fail "the feed hub did not take the second feed"
wait_until 20 grep -q '^CLOSED' long.out ||
  fail "a downstream that began a 1 MiB record was not closed: $(cat long.out)"
expect_in "$LOG" "RPC record longer than allowed"
ok "C: the hub closes a downstream that begins a record longer than a call may be"
stop_ldmd
grep -q ' 3 products sent (3000 bytes)' "$LOG" ||
  fail "the feed's last line does not count the 3 products: $(grep 'products sent' "$LOG")"
ok "B: after a stop, the last line of a feed the hub served counts what it sent"

# D. Whatever a downstream sent at once is read, however many messages:
#    200 calls in one write (each ignored, logged at DEBUG) are all read
#    within 20 s, not READ_BURST a turn and the rest only when more bytes
#    come (epoll does not see bytes already in the connection's buffer).
start_ldmd -x
background peer feedme -f EXP -P '^none' -o 0 -k chatty -n 1 -t 60 >chatty.out
wait_until 20 in_hub 1 || fail "the feed hub did not take the chatty feed"
wait_until 20 grep -q '^SENT chatty 200' chatty.out ||
  fail "the peer did not send its calls: $(cat chatty.out)"
wait_until 20 logged 200 "after the turn-around ignored" ||
  fail "$(count "$LOG" "after the turn-around ignored") of the 200 calls sent at once were read"
ok "D: the hub reads every message a downstream sent at once"
stop_ldmd
