#!/usr/bin/env bash
# Patterns from peers (docs/security.md, "Patterns from peers").  A
# NOTIFYME and a FEEDME whose pattern has back-references, on which
# glibc's matcher is exponential, once pinned a connection process at 100%
# CPU for hours against one product with a 120-character identifier.  Such
# a pattern must be refused at once with BADPATTERN (the answer LDM gives a
# pattern it cannot use), logged with the peer and the pattern, and the
# server must go on serving: the next NOTIFYME gets that product at once.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 10000000
printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$' >"$CONF"
start_ldmd
# One product whose identifier is 120 characters: 118 "a" then "/0".
LONG=$(printf 'a%.0s' {1..118})
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 100 -f IDS -i "$LONG"
BACKREF='(.*)(.*)(.*)(.*)(.*)(.*)(.*)(.*)\8\7\6\5\4\3\2\1x'

# refused CALL: CALL with the pattern gets BADPATTERN (exit 5), logged.
refused() {
  expect_rc 5 peer "$1" -f IDS -P "$BACKREF" -o 3600 -n 1 -t 10
  expect_in "$OUT" BADPATTERN
  wait_until 10 logged "$2" 'bad pattern from' ||
    fail "no log line for the refused $1"
}
refused notifyme 1
refused feedme 2
# The pattern's backslashes may be escaped in the log: its groups suffice.
line=$(grep -F 'bad pattern from' "$LOG" | tail -1)
[[ $line == *127.0.0.1* && $line == *"${BACKREF%%\\*}"* &&
  $line == *"back-reference "*8* ]] ||
  fail "the log line does not name the peer, the pattern and why: $line"
ok "NOTIFYME and FEEDME with back-references: BADPATTERN, logged: ${line#*bad }"

# Responsive: no process left matching, and a NOTIFYME served at once.
expect_rc 0 peer notifyme -f IDS -P '^a+/0$' -o 3600 -n 1 -t 10
expect_in "$OUT" "$LONG/0"
ok "the server goes on serving"
stop_ldmd 5 "after refusing the patterns"
expect_not_in "$LOG" "did not stop"
ok "and stops cleanly"
