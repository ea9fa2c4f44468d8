#!/usr/bin/env bash
# A stalled downstream of the feed hub (ldmd/server/hub.h) hurts no one.
# The hub is one process for every plain primary feed, so a downstream
# that reads nothing must not stop it, hold a product, or block a writer:
# its socket full, it leaves its group and waits for EPOLLOUT on its own
# cursor, holding no lock (hub.c: "no lock is held while a socket is
# full").
#
# Two feeds, both served by the hub, both of every EXP product (classes
# EXP "." and EXP ".*": the same class from one address would replace the
# older feed, ldmd/server/feeds.h): S reads nothing (its
# receive buffer as small as can be: ldm6_peer feedme -X 0), N reads
# everything.  A 3 MB product first: the hub's socket to S fills in the
# middle of it.  Then a writer wraps the 8 MB queue four times (eight
# rounds of 20 products of 200 KB; each round waits for N to have its last
# product, so that N's own pace never loses a product).
#   - every insertion succeeds (the writers are never blocked);
#   - the product S is stuck in the middle of leaves the queue (nothing
#     holds it), and once N has everything the queue's readers hold no
#     product at all (ldm6_peer held: pq_stats_held());
#   - N gets every product, once, intact;
#   - F, a third feed, floods the hub with calls it ignores: N still gets
#     a product while F floods;
#   - S's feed, stuck in the middle of a record, is dropped once it has
#     taken nothing for 60 s ("took nothing for 60 s: closing"), and its
#     connection process says how it ended.  That waits about a minute.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 8000000
printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$' >"$CONF"
# On one CPU ldmd runs one hub (one per CPU: docs/protocol.md 6.9), so
# that S, N and F share it, as the test means them to.
LDMD_WRAP=(taskset -c 0)
start_ldmd -v
hub_pid=$(sed -n 's/.*started feed hub process \([0-9]*\): feed hub.*/\1/p' "$LOG")
[[ -n $hub_pid ]] || fail "no feed hub started"

# send_queue: the most bytes any of ldmd's established connections has not
# had taken by its peer (tx_queue in /proc/net/tcp; the local port is
# ldmd's).
send_queue() {
  local hex addr st queues max=0 q
  hex=$(printf '%04X' "$PORT")
  while read -r _ addr _ st queues _; do
    if [[ $addr == *:$hex && $st == 01 ]]; then
      q=$((16#${queues%%:*}))
      ((q > max)) && max=$q
    fi
  done </proc/net/tcp
  echo "$max"
}
socket_filling() {
  (($(send_queue) > 20000))
}
held_count() {
  "$PEER" held -q "$Q" | awk '$1 == "HELD" { print $2 }'
}
held_none() {
  (($(held_count) == 0))
}
in_queue() {
  "$PEER" dump -q "$Q" | grep -q "^$1 "
}
has() {
  grep -q "^HEREIS [0-9a-f]* [0-9]* $1 .* ok$" n.out
}

background peer feedme -X 0 -f EXP -P . -o 0 -n -1 -t 150 >s.out
s_pid=$BG
background peer feedme -f EXP -o 0 -n -1 -t 150 >n.out
n_pid=$BG
wait_until 20 grep -q '^STALLED' s.out || fail "S's feed did not start"
wait_until 20 grep -q '^OK' n.out || fail "N's feed did not start"
wait_until 20 logged 2 "feeding " ||
  fail "the hub did not take both feeds: $(grep -i hub "$LOG")"

expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 3000000 -f EXP -i big -z 1
grep -q '^INSERTED [0-9a-f]* big/0 PQ_OK$' "$OUT" || fail "big/0 not inserted"
big=$(awk '{print $2}' "$OUT")
cat "$OUT" >inserted
wait_until 30 has big/0 || fail "N did not get big/0: $(tail -3 n.out)"
wait_until 20 socket_filling ||
  fail "the socket to S holds nothing of big/0 ($(send_queue) bytes)"

for r in 1 2 3 4 5 6 7 8; do
  expect_rc 0 "$PEER" insert -q "$Q" -n 20 -s 200000 -f EXP -i "r$r" -z $((r + 1))
  cat "$OUT" >>inserted
  wait_until 30 has "r$r/19" ||
    fail "round $r: N did not get r$r/19: $(tail -3 n.out)"
done
n_ins=$(grep -c ' PQ_OK$' inserted)
((n_ins == 161)) || fail "$n_ins of 161 insertions succeeded: $(grep -v ' PQ_OK$' inserted | head -3)"
ok "161 insertions (32 MB through an 8 MB queue) all succeeded with S stalled"

in_queue "$big" && fail "big/0, which S is stuck in the middle of, is still in the queue"
wait_until 20 held_none || fail "$(held_count) products held with N caught up and S stuck"
socket_filling || fail "S's socket is no longer full ($(send_queue) bytes)"
ok "the product S is stuck on was evicted; nothing is held while S is stuck"

awk '$1 == "INSERTED" { print $2, $3 }' inserted | sort >n.want
awk '$1 == "HEREIS" && $NF == "ok" { print $2, $4 }' n.out | sort >n.got
diff n.want n.got >n.diff ||
  fail "N did not get every product once (< missing, > extra or twice): $(head -20 n.diff)"
! grep -q CORRUPT n.out || fail "N got damaged products"
ok "N got all 161 products once, intact, beside the stalled S"

# F floods the hub with calls (NULLPROC after the turn-around, legal and
# ignored) as fast as its socket takes them, for up to 60 s: N must still
# get a product while F floods (the hub reads a bounded number of records
# from one downstream per turn of its loop).
background peer feedme -F -f EXP -P '^none' -o 0 -t 60 >f.out
f_pid=$BG
wait_until 20 grep -q '^FLOODING' f.out || fail "F's feed did not start: $(cat f.out)"
wait_until 20 logged 3 "feeding " || fail "the hub did not take F's feed"
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 1000 -f EXP -i flood -z 19
wait_until 50 has flood/0 || fail "N got nothing while F flooded the hub"
gone "$f_pid" && fail "F's flood ended before N had the product: nothing shown"
kill "$f_pid"
wait "$f_pid" 2>/dev/null
ok "N got a product while F flooded the hub with calls"

# S's drop: 60 s without a byte taken (hub.c, LDMD_SYNC_TIMEOUT_MS), with
# a connection process's words for a record begun ("took nothing of
# IDENT for 60 s").
wait_until 100 grep -q " hub\[$hub_pid\] .*took nothing of big/0 for 60 s: closing" "$LOG" ||
  fail "the hub did not drop S"
wait_until 20 logged 1 'products sent (' ||
  fail "S's connection process did not end"
kill -0 "$hub_pid" 2>/dev/null || fail "the hub died"
held_none || fail "$(held_count) products held after S's drop"
# N still gets products after S's drop.
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 1000 -f EXP -i after -z 20
wait_until 30 has after/0 || fail "N got nothing after S's drop"
ok "S was dropped after 60 s; the hub went on serving N"
kill "$s_pid" "$n_pid" 2>/dev/null
wait "$s_pid" "$n_pid" 2>/dev/null
stop_ldmd
