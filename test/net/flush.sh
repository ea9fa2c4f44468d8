#!/usr/bin/env bash
# The flush at the end of the queue does not hold a feed back
# (docs/protocol.md, section 6.5): the upstream sends its NULLPROC and
# goes back to the queue without waiting for the answer, so products
# inserted before the downstream has answered go out at once; and a
# NULLPROC still unanswered is not followed by another (at most one is
# outstanding).  Here the downstreams never answer: a primary feed and a
# NOTIFYME each get the first product, the NULLPROC after it, then three
# products inserted after that NULLPROC, and no second NULLPROC.  (An
# upstream that waited for the answer would send nothing more for 60 s.)
source "$(dirname "$0")/lib.sh" "$@"

make_queue
cat >"$CONF" <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
EOF2
start_ldmd

# check_unanswered KIND SEED: the peer of KIND (feedme, notifyme) got 4
# products (their data from SEED and SEED+1) and a single NULLPROC, which
# it never answered.
check_unanswered() {
  local kind=$1 seed=$2 out=$1.out
  background peer "$kind" -G -n 4 -f EXP -P "^$kind" -o 0 -t 60 >"$out"
  local pid=$BG
  # The request's class starts at the second the peer read the clock: a
  # product inserted before that, in the same second or not, is not asked
  # for.
  wait_until 20 grep -q '^OK' "$out" || fail "$kind: no OK: $(cat "$out")"
  expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 20000 -f EXP -i "$kind-first" -z "$seed"
  wait_until 20 grep -q '^NULLPROC-HELD' "$out" ||
    fail "$kind: no NULLPROC after the first product: $(cat "$out")"
  expect_rc 0 "$PEER" insert -q "$Q" -n 3 -s 20000 -f EXP -i "$kind-later" -z $((seed + 1))
  wait_until 20 grep -q '^RECEIVED 4 BAD 0' "$out" ||
    fail "$kind: the products inserted after an unanswered NULLPROC did not come: $(cat "$out")"
  wait "$pid" || fail "$kind: the peer failed: $(cat "$out")"
  local n
  n=$(grep -c '^NULLPROC-HELD' "$out")
  ((n == 1)) || fail "$kind: $n NULLPROCs while the first was unanswered"
}

check_unanswered feedme 1
ok "primary feed: products after an unanswered NULLPROC came at once, no second NULLPROC"
check_unanswered notifyme 3
ok "NOTIFYME: notifications after an unanswered NULLPROC came at once, no second NULLPROC"
stop_ldmd
