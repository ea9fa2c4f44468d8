#!/usr/bin/env bash
# wasreceived.sh - wasReceived answers by its exit status whether matching
# products were inserted in the last offset seconds: by feedtype, pattern
# and window (an old insertion, made with pqclihelper insert-at, falls
# outside it; a late product, created long ago but inserted now, is
# inside); it is silent when it answers; it says why and exits 2 when it
# cannot answer (no queue, bad usage, a bad pattern).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

# 1. An empty queue: nothing received.
expect_rc 0 pqcreate -s 1M -q "$Q"
expect_rc 1 wasReceived -q "$Q"
[[ ! -s $OUT && ! -s $ERR ]] || fail "wasReceived was not silent"
ok "empty queue: 1"

# 2. One product inserted two hours ago (EXP, "old.one").
now_us=$(($(date +%s) * 1000000))
"$HELPER" insert-at "$Q" $((now_us - 7200 * 1000000)) old.one ||
  fail "pqclihelper insert-at failed"
expect_rc 1 wasReceived -q "$Q" -f EXP
expect_rc 1 wasReceived -q "$Q" -f EXP -o 3600
expect_rc 0 wasReceived -q "$Q" -f EXP -o 10000
[[ ! -s $OUT && ! -s $ERR ]] || fail "wasReceived was not silent"
expect_rc 0 wasReceived -q "$Q" -p '^old\.' -o 10000
expect_rc 1 wasReceived -q "$Q" -f HDS -o 10000
ok "the window: inserted 2 h ago is outside 3600 s, inside 10000 s"

# 3. New products: by feedtype and pattern.
printf 'bulletin' >new.txt
expect_rc 0 pqinsert -q "$Q" -f IDS -p SAUS80.KWBC new.txt
expect_rc 0 wasReceived -q "$Q" -f 'IDS|DDPLUS' -o 60
expect_rc 0 wasReceived -q "$Q" -p '^SAUS' -o 60
expect_rc 1 wasReceived -q "$Q" -p '^SAUS' -f HDS -o 60
expect_rc 1 wasReceived -q "$Q" -p '^WWUS'
expect_rc 0 wasReceived -q "$Q" -v -l - -p 'KWBC$'
expect_in "$ERR" "received: "
expect_in "$ERR" " IDS 000  SAUS80.KWBC"
ok "by feedtype and pattern; -v names the product"

# 4. A product created two hours ago but inserted now counts (insertion
# time decides).
"$HELPER" insert-old "$Q" 1 7200 late || fail "pqclihelper insert-old failed"
expect_rc 0 wasReceived -q "$Q" -p '^late\.' -o 60
ok "a product relayed late counts when it arrives"

# 5. No answer: exit 2 with a reason.
expect_rc 2 wasReceived -q "$SCRATCH/none.pq" -l -
[[ -s $ERR ]] || fail "no message for a missing queue"
expect_rc 2 wasReceived -q "$Q" -p '('
[[ -s $ERR ]] || fail "no message for a bad pattern"
expect_rc 2 wasReceived -q "$Q" -f NOSUCHFEED
expect_rc 2 wasReceived -q "$Q" -o abc
expect_rc 2 wasReceived -q "$Q" extra
expect_in "$ERR" 'unexpected argument "extra"'
expect_rc 0 wasReceived -h
expect_in "$OUT" "usage: wasReceived"
ok "exit 2 with a message when it cannot answer"
