#!/usr/bin/env bash
# ingester.sh - noaaportIngester as a program: LDM's vectors from standard
# input into a queue with LDM's product lines, a second run finding every
# product already there, the usage errors LDM gives, SIGUSR1's statistics
# while it runs, and SIGTERM on an input that never ends: what was read is
# kept, the statistics are logged, exit 0.
source "$(dirname "$0")/lib.sh" "$@"

# 1. The vector stream, with LDM's own lines for it.
LOG=$SCRATCH/basic.log
expect_rc 0 noaaportIngester -q "$Q" -n -l "$LOG" <"$VEC/nwstg-basic.sbn"
grep -P '^(NOTE|WARN|ERROR)\t' "$VEC/nwstg-basic.log" | cut -f2 >"$SCRATCH/want"
# Our lines: the message after the level's column (94), without the
# statistics and start-up lines, which the vectors leave out.
cut -c95- "$LOG" | grep -v -e '^Starting up' -e '^Copyright' \
  -e '^FIFO EOF' -e '^$' -e '^---' -e '^Ingestion' -e '^    ' >"$SCRATCH/got"
diff "$SCRATCH/want" "$SCRATCH/got" >"$OUT" ||
  fail "the log differs from LDM's (want < > got)"
[[ $(queue_count) == 13 ]] || fail "the queue holds $(queue_count), not 13"
expect_in "$LOG" "Ingestion Statistics:"
expect_in "$LOG" "FIFO EOF"
ok "vector products and LDM's lines"

# pqcat -c knows the NWSTG rule (MD5 after the 11-byte header): no
# mismatch for the ingester's products, but one for a framed product
# whose signature is neither (pqinsert -i: the identifier's MD5).
expect_rc 0 pqcat -q "$Q" -c -l -
expect_not_in "$ERR" "signature mismatch"
printf '\001\r\r\n123 \r\r\nbody\r\r\n\003' >"$SCRATCH/framed"
pqinsert -q "$Q" -i -p FRAMED "$SCRATCH/framed" >/dev/null 2>&1 ||
  fail "pqinsert failed"
expect_rc 0 pqcat -q "$Q" -c -l -
expect_in "$ERR" "signature mismatch"
[[ $(grep -c "signature mismatch" "$ERR") == 1 ]] ||
  fail "pqcat -c: more than the one mismatch"
ok "pqcat -c: NOAAPORT's signature rule"

# 2. Again: every product is a duplicate, and the queue unchanged.
LOG2=$SCRATCH/again.log
expect_rc 0 noaaportIngester -q "$Q" -n -l "$LOG2" <"$VEC/nwstg-basic.sbn"
[[ $(grep -c ' already in queue \[' "$LOG2") == 13 ]] ||
  fail "not 13 'already in queue' lines"
[[ $(inserted "$LOG2") == 0 ]] || fail "a duplicate was inserted"
ok "duplicates refused"

# 3. Usage errors, as LDM's.
expect_rc 1 noaaportIngester -q "$Q" extra
expect_in "$ERR" "Extraneous command-line argument"
expect_rc 1 noaaportIngester -q "$Q" -l - -m 224.0.1.11
expect_in "$ERR" "Invalid NBS channel: 11"
expect_rc 1 noaaportIngester -q "$Q" -l - -m 10.0.0.1
expect_in "$ERR" "Invalid multicast address"
expect_rc 1 noaaportIngester -q "$Q" -R 0
expect_in "$ERR" "Invalid receive buffer size"
expect_rc 1 noaaportIngester -q "$Q" -Z
expect_rc 1 noaaportIngester -q "$SCRATCH/none.pq" -l - </dev/null
expect_in "$ERR" "pq_open failed"
ok "usage errors"

# 4. An input that never ends (a FIFO held open): SIGUSR1 logs the
# statistics while it runs; SIGTERM stops it with what it read kept.
pqcreate -c -s 20M -q "$Q" >/dev/null 2>&1 || fail "pqcreate failed"
mkfifo "$SCRATCH/in"
LOG3=$SCRATCH/fifo.log
exec 7<>"$SCRATCH/in" # a writer first (read-write: no wait), kept open
# from FILE ARGS...: the ingester reading FILE (a background command's
# standard input is otherwise /dev/null); exec keeps $BG its pid.
from() {
  local in=$1
  shift
  exec noaaportIngester "$@" <"$in"
}
background from "$SCRATCH/in" -q "$Q" -n -l "$LOG3"
ING=$BG
cat "$VEC/nwstg-basic.sbn" >&7
wait_until 20 eval '[[ $(inserted "$LOG3") == 13 ]]' ||
  fail "$(inserted "$LOG3") of 13 products inserted while the input stays open: $(tail -3 "$LOG3")"
kill -USR1 "$ING"
wait_until 20 grep -q "Ingestion Statistics:" "$LOG3" ||
  fail "no statistics after SIGUSR1"
expect_in "$LOG3" "            Inserted      13"
stop_expect "$ING" noaaportIngester TERM 10 0
exec 7>&-
[[ $(queue_count) == 13 ]] || fail "the queue holds $(queue_count), not 13"
[[ $(grep -c "Ingestion Statistics:" "$LOG3") == 2 ]] ||
  fail "no statistics at exit"
ok "SIGUSR1 and SIGTERM"
