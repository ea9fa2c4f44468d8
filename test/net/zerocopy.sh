#!/usr/bin/env bash
# Zero-copy sending (docs/protocol.md, section 6.8): products of
# 16 KiB or more go to a plain primary feed from the queue file by
# sendfile(2), each pinned in the queue (held, so never evicted) until the
# downstream has its bytes.
#   A. Integrity: a writer recycles a small queue as fast as it can while
#      a downstream takes the products, stopping for 3 s on the way; every
#      product that arrives is checked byte for byte (its MD5 is its
#      signature), none is damaged, and the upstream says it sent them
#      from the queue file.  A product is evicted as soon as its pin is
#      released, so a pin released before the downstream has the bytes
#      shows here as a damaged product (as it did when tried).
#   B. A downstream that stops reading, its socket full, while writers
#      wrap the queue twice: the products it pins stay in the queue and
#      are few (bounded by 1/32 of the queue: 5 of 100 KB here, and the
#      one being read),
#      every writer's insert succeeds (they jump over the pins), and the
#      stalled downstream is dropped by the upstream's rules for a peer
#      that takes nothing (60 s for a record, or for the NULLPROC that
#      follows the last one); then nothing is held.
#   C. kill -9 of the upstream process in the middle of sending: the
#      queue is sound (pq_check()), nothing stays held, and a new feed
#      gets every product intact.
source "$(dirname "$0")/lib.sh" "$@"
# zero-copy is off by default (docs/protocol.md 6.8): this test turns it on
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path><zero-copy>TRUE</zero-copy></server>"

make_queue 16000000
printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$' >"$CONF"
start_ldmd

# held_count: the products readers (pins included) hold in the queue.
held_count() {
  "$PEER" held -q "$Q" | awk '$1 == "HELD" { print $2 }'
}
held_some() {
  (($(held_count) > 0))
}
held_none() {
  (($(held_count) == 0))
}

# ---- A. integrity under a writer that recycles the queue ---------------
# The downstream stops reading for 3 s after 20 products, while bytes of
# the products sent are in the sockets' buffers and the writer goes on.
background peer feedme -X 20 -d 3000 -f EXP -o 0 -n -1 -t 120 >a.out
fa=$BG
wait_until 10 grep -q '^OK' a.out || fail "the feed did not start"
# 2,000 products of 50 KB (100 MB) through a 16 MB queue: about six laps.
expect_rc 0 "$PEER" insert -q "$Q" -n 2000 -s 50000 -f EXP -i fast -z 11
# The feed goes on to the end, or is cut where a product the upstream had
# to copy (its pins all in use) left the queue before it was all sent
# (held.sh): either way, what arrived is checked.
a_done() {
  grep -qE '^HEREIS [0-9a-f]* 50000 fast/1999 |^CLOSED' a.out
}
wait_until 60 a_done || fail "the feed neither ended nor went on: $(tail -3 a.out)"
kill "$fa" 2>/dev/null
wait "$fa" 2>/dev/null
n_ok=$(grep -c '^HEREIS .* ok$' a.out)
n_bad=$(grep -c 'CORRUPT' a.out)
((n_bad == 0)) || fail "$n_bad products arrived damaged: $(grep -m3 CORRUPT a.out)"
((n_ok >= 21)) || fail "only $n_ok products arrived"
wait_until 20 logged 1 'from the queue file' ||
  fail "the upstream did not say it sent from the queue file"
zc=$(sed -n 's/.*, \([0-9]*\) from the queue file.*/\1/p' "$LOG" | tail -1)
((zc >= 10)) || fail "only $zc products went from the queue file"
ok "A: $n_ok products arrived intact from a queue recycled as fast as it goes, $zc from the queue file"

# ---- B. a stalled downstream while the queue wraps ----------------------
drops() {
  grep -cE 'took nothing|left the queue while it was being sent|nullproc to .* failed: timed out' "$LOG"
}
dropped() {
  (($(drops) > drops_before))
}
# It reads nothing, its receive buffer as small as can be.
drops_before=$(drops)
background peer feedme -X 0 -f EXP -o 0 -t 150 >b.out
fb=$BG
wait_until 10 grep -q '^STALLED' b.out || fail "the feed did not start"
expect_rc 0 "$PEER" insert -q "$Q" -n 40 -s 100000 -f EXP -i stall -z 12
# The upstream's socket fills, and it pins what it has handed over.
wait_until 20 held_some || fail "nothing is pinned for the stalled downstream"
# Writers wrap the queue twice over (products the feed does not ask for).
expect_rc 0 "$PEER" insert -q "$Q" -n 32 -s 1000000 -f IDS -i filler -z 13
h=$(held_count)
((h >= 1 && h <= 6)) || fail "$h products held for one stalled downstream"
pinned=$("$PEER" dump -q "$Q" | grep -c ' stall/')
((pinned >= 1)) || fail "the pinned products were evicted"
ok "B: a stalled downstream pins $h of its products (at most 1/32 of the queue); 32 MB of writes got by"
wait_until 100 dropped || fail "the stalled downstream was not dropped"
wait_until 30 held_none || fail "$(held_count) products still held after the drop"
kill "$fb" 2>/dev/null
wait "$fb" 2>/dev/null
ok "B: the stalled downstream was dropped after 60 s; its pins are gone"

# ---- C. kill -9 of the upstream in the middle of sending ----------------
before=" $(children_of "$LDMD_PID" | tr '\n' ' ') "
background peer feedme -X 0 -f EXP -o 0 -t 60 >c.out
fc=$BG
wait_until 10 grep -q '^STALLED' c.out || fail "the third feed did not start"
expect_rc 0 "$PEER" insert -q "$Q" -n 30 -s 100000 -f EXP -i kill -z 14
wait_until 20 held_some || fail "nothing is pinned for the third feed"
up=
for p in $(children_of "$LDMD_PID"); do
  [[ $before == *" $p "* ]] || up=$p
done
[[ -n $up ]] || fail "no upstream process to kill"
kill -KILL "$up"
wait_until 10 gone "$up" || fail "the upstream $up did not die"
wait_until 10 held_none || fail "$(held_count) products still held after kill -9"
expect_rc 0 "$PEER" sound -q "$Q"
expect_in "$OUT" "SOUND "
kill "$fc" 2>/dev/null
wait "$fc" 2>/dev/null
peer feedme -f EXP -P '^kill/' -o 3600 -n 30 -t 60 >c2.out ||
  fail "a new feed did not get the products: $(tail -3 c2.out)"
grep -q '^RECEIVED 30 BAD 0$' c2.out || fail "$(tail -1 c2.out)"
ok "C: kill -9 of the upstream mid-send: the queue is sound, nothing held, a new feed gets all 30 intact"
stop_ldmd
