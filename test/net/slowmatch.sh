#!/usr/bin/env bash
# A slow pattern costs its peer, never the queue's writers
# (docs/security.md, "Patterns from peers").  A NOTIFYME whose pattern,
# well within pq_ere_tame()'s bound, takes glibc's regexec() seconds on
# the first 250-character identifier it meets (later ones reuse the states
# it built); in 31 specs, each compiled apart and matched against products
# of every feedtype, it keeps the connection process busy for minutes.  The queue's lock must not be held while it
# matches: an insert by another process meanwhile is done at once (within
# 10 s, where waiting for the match of one product against every spec
# would take minutes), and the product is there.
source "$(dirname "$0")/lib.sh" "$@"

slow_match_setup

start_ldmd
background peer notifyme -P "$SLOW" -N 31 -o 3600 -t 120
wait_until 30 busy_child ||
  fail "no child of ldmd got busy matching the pattern"
mapfile -t KIDS < <(children_of "$LDMD_PID")
BG_PIDS+=("${KIDS[@]}")

T0=$(date +%s%N)
expect_rc 0 timeout -k 5 10 "$PEER" insert -q "$Q" -n 1 -s 101 -f IDS -i fresh
ms=$((($(date +%s%N) - T0) / 1000000))
expect_rc 0 "$PEER" count -q "$Q"
[[ $(<"$OUT") == 21* ]] || fail "the queue holds '$(<"$OUT")', not 21 products"
kill -0 "$BUSY" 2>/dev/null ||
  fail "the busy child ($BUSY) ended before the insert was timed"
ok "an insert took $ms ms while connection process $BUSY matched a slow pattern"
stop_ldmd
