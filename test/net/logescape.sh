#!/usr/bin/env bash
# Identifiers from the network reach the logs escaped (docs/security.md,
# "Logs"; ldm_log_escape() in ldmd/site/log.h): a product pushed with ESC,
# BEL, CR, LF and TAB in its identifier is logged by ldmd (-v: a line per
# product received) and by notifyme (-v: a line per notification) with
# "\x1b"-style escapes, on one line, and neither log file holds a control
# byte other than the newlines that end its lines.
# Arguments: ldmd, ldm6_peer, notifyme.
NOTIFYME=$(cd "$(dirname "${3:?path of notifyme}")" && pwd)/$(basename "$3")
source "$(dirname "$0")/lib.sh" "$@"

make_queue 20000000
printf 'ALLOW ANY ^127\\.0\\.0\\.1$\nACCEPT ANY .* ^127\\.0\\.0\\.1$\n' >"$CONF"
start_ldmd -v
background "$NOTIFYME" -v -l "$SCRATCH/nm.log" -h "127.0.0.1:$PORT" -f ANY \
  -o 3600
wait_until 10 logged 1 'Starting Up(' || fail "notifyme did not start"
# An identifier that would set a terminal's title, ring it, and start a
# line of its own that looks like an error of ldmd's.
evil=$'SAUS\e]0;pwned\aKWBC\e[2J\r\n20260101T000000.000000Z ldmd[1] x.c:f:1 ERROR forged\tend'
expect_rc 0 peer hiya -f IDS -n 1 -s 100 -i "$evil" -z 1
want='SAUS\x1b]0;pwned\x07KWBC\x1b[2J\x0d\x0a20260101T000000.000000Z ldmd[1] x.c:f:1 ERROR forged\x09end/0'
wait_until 10 grep -qF -- "$want" "$LOG" ||
  fail "ldmd did not log the identifier escaped"
wait_until 10 grep -qF -- "$want" "$SCRATCH/nm.log" ||
  fail "notifyme did not log the identifier escaped: $(cat "$SCRATCH/nm.log")"
for f in "$LOG" "$SCRATCH/nm.log"; do
  LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$f" &&
    fail "a control byte in $f: $(LC_ALL=C grep -n $'[\x01-\x09\x0b-\x1f\x7f]' "$f" | cat -v | head -3)"
  grep -q '^20260101T000000' "$f" && fail "a line of $f was forged"
done
ok "an identifier with control bytes is logged escaped, on one line, by ldmd and notifyme"
stop_ldmd
