#!/usr/bin/env bash
# pqsurf.sh - pqsurf with real processes: bulletins the test makes are
# inserted with pqinsert, pqsurf splits them into its private queue (seen
# with pqcat: LDM's identifiers and sequence numbers, the duplicate across
# two bulletins dropped, a malformed bulletin that does not stop it) and
# its pqact child files them as pqsurf.conf says; then, running, it splits
# a bulletin inserted later, expires the private queue, exits when its
# pqact dies, and stops on SIGTERM with LDM's statistics lines.
#
# Usage: pqsurf.sh BINDIR (the directory of the programs)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

BIN=$(cd "${1:?directory of the programs}" && pwd)
export PATH=$BIN:$PATH
scratch_init surf /dev/shm
Q=$SCRATCH/ldm.pq
SQ=$SCRATCH/pqsurf.pq
DATA=$SCRATCH/data
CONF=$SCRATCH/pqsurf.conf
LOG=$SCRATCH/pqsurf.log
mkdir -p "$DATA" "$LDMHOME"
write_registry surf-test-host "  <queue><path>$Q</path></queue>
  <surf-queue><path>$SQ</path></surf-queue>
  <pqsurf>
    <config-path>$CONF</config-path>
    <datadir-path>$DATA</datadir-path>
  </pqsurf>"
# shellcheck disable=SC2034 # read by fail (common.sh)
FAIL_LOGS=(LOG:pqsurf.log OUT ERR)
# surf_cleanup: cleanup kills the pqsurfs the test started (SIGKILL), which
# cannot stop their pqact children: those are killed here first, by pid,
# so that a test that fails while pqsurf runs leaves no pqact behind.
surf_cleanup() {
  local st=$? p c
  for p in "${BG_PIDS[@]}"; do
    for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
      kill -KILL "$c" 2>/dev/null
    done
  done
  cleanup "$st"
}
trap surf_cleanup EXIT

expect_rc 0 pqcreate -s 2M -q "$Q"
expect_rc 0 pqcreate -s 2M -S 13000 -q "$SQ"
printf '%s\n' \
  'IDS	^(metar|speci|aaxx|bbxx) ([^ ]*) ..(..)..' \
  '	FILE	-close	\1/\2.txt' >"$CONF"

# bulletin FILE TEXT: a bulletin's bytes (printf escapes in TEXT), with
# the start-of-heading and sequence-number lines before it and ETX after.
bulletin() {
  # shellcheck disable=SC2059 # the escapes are the point
  printf "\\001\\r\\r\\n123 \\r\\r\\n$2\\003" >"$SCRATCH/$1"
}
# insert FILE IDENT SEQNO [FEEDTYPE]
insert() {
  expect_rc 0 pqinsert -q "$Q" -f "${4:-IDS}" -p "$2" -s "$3" "$SCRATCH/$1"
}

bulletin bad 'SAUS99 \377\377\377 ////\r\r\nMETAR 12\r\r\n=====\r\r\nNIL'
bulletin b1 'SAUS70 KWBC 071200\r\r\nMETAR\r\r\nKDEN 071153Z 00000KT 10SM CLR 05/M03 A3012=\r\r\nKXYZ NIL=\r\r\nKBOU 071150Z 27005KT\r\r\n     10SM FEW100=\r\r\n'
# the same KDEN report from another centre, and a new one
bulletin b2 'SAUS44 KDEN 071200\r\r\nMETAR\r\r\nKDEN 071153Z 00000KT 10SM CLR 05/M03 A3012=\r\r\nKGLD 071153Z 18010KT 10SM=\r\r\n'
bulletin b3 'SMUS01 KWBC 071200\r\r\nAAXX 07121\r\r\n72201 32966 71504=\r\r\n72202 32970 80000=\r\r\n'
bulletin b4 'SMVD01 KWBC 071200\r\r\nBBXX\r\r\nWDB123 07181 99123 70456=\r\r\n'
bulletin b5 'SPUS70 KWBC 071215\r\r\nSPECI\r\r\nKDEN 071210Z 2SM BR=\r\r\n'
insert bad 'SAUS99 BAD' 99
insert b1 'SAUS70 KWBC 071200' 123
insert b2 'SAUS44 KDEN 071200' 124
insert b3 'SMUS01 KWBC 071200' 125
insert b4 'SMVD01 KWBC 071200' 126
insert b5 'SPUS70 KWBC 071215' 127
# not of the feedtypes read (IDS|DDS), nor of the pattern (other bytes:
# the input queue would refuse a second b1)
{ cat "$SCRATCH/b1"; echo 1; } >"$SCRATCH/b1ft"
{ cat "$SCRATCH/b1"; echo 2; } >"$SCRATCH/b1pat"
insert b1ft 'SAUS70 KWBC 071200 NOT' 128 NEXRAD3
insert b1pat 'UAUS70 KWBC 071200' 129

# ---- the command line ----
expect_rc 0 pqsurf -h
expect_in "$OUT" 'usage: pqsurf [options] [conffile]'
expect_rc 1 pqsurf -f NOSUCHFEED -i 0
expect_rc 1 pqsurf -Q "$Q" -i 0
expect_in "$ERR" "the private queue $Q is the input queue"
expect_rc 1 pqsurf -l - -Q "$SCRATCH/none.pq" -i 0
expect_in "$ERR" 'pq_open failed'
expect_rc 1 pqsurf -l - a.conf b.conf
ok "usage, a bad feedtype, the input queue as private queue, a missing queue"

# ---- one pass (-i 0): split, then pqact over the private queue ----
expect_rc 0 pqsurf -l "$LOG" -v -i 0 -o 3600
expect_rc 0 pqcat -q "$SQ" -L
LIST=$SCRATCH/list
cp "$OUT" "$LIST"
for want in '123001  metar KDEN 071200' '123002  metar KBOU 071200' \
  '124002  metar KGLD 071200' '125001  aaxx 72201 071200' \
  '125002  aaxx 72202 071200' '126001  bbxx WDB123 071800' \
  '127001  speci KDEN 071215'; do
  expect_in "$LIST" "$want"
done
expect_not_in "$LIST" '124001'
(($(wc -l <"$LIST") == 7)) || fail "the private queue holds $(wc -l <"$LIST") observations, expected 7"
expect_in "$LOG" 'Product already in queue:'
expect_in "$LOG" 'Number of products 6'
expect_in "$LOG" 'Number of observations 8'
expect_in "$LOG" 'Number of dups 1'
expect_in "$LOG" 'Exiting'
ok "one pass: 7 observations with LDM's identifiers, the duplicate dropped"

# the files pqact made: each observation's body, LDM's bytes
want=$SCRATCH/want
printf 'METAR\r\r\nKDEN 071153Z 00000KT 10SM CLR 05/M03 A3012=\r\r\n' >"$want"
cmp -s "$want" "$DATA/metar/KDEN.txt" || fail "metar/KDEN.txt is not the KDEN report once"
printf 'METAR\r\r\nKBOU 071150Z 27005KT\r\r\n     10SM FEW100=\r\r\n' >"$want"
cmp -s "$want" "$DATA/metar/KBOU.txt" || fail "metar/KBOU.txt is not the two-line KBOU report"
printf 'AAXX 07121\r\r\n72202 32970 80000=\r\r\n' >"$want"
cmp -s "$want" "$DATA/aaxx/72202.txt" || fail "aaxx/72202.txt is not its SYNOP"
printf 'BBXX\r\r\nWDB123 07181 99123 70456=\r\r\n' >"$want"
cmp -s "$want" "$DATA/bbxx/WDB123.txt" || fail "bbxx/WDB123.txt is not its SHIP report"
printf 'SPECI\r\r\nKDEN 071210Z 2SM BR=\r\r\n' >"$want"
cmp -s "$want" "$DATA/speci/KDEN.txt" || fail "speci/KDEN.txt is not its SPECI"
[[ ! -e $DATA/metar/KXYZ.txt ]] || fail "the NIL report was filed"
ok "pqact filed each observation's body"

# without a pqact to run: LDM's line, and pqsurf exits with the child's 127
expect_rc 127 env PATH=/nonexistent "$BIN/pqsurf" -l - -i 0
expect_in "$ERR" 'Couldn'"'"'t execute decoder "pqact"; PATH=/nonexistent'
expect_in "$ERR" 'exited with status 127'
ok "no pqact in PATH: exit 127, said"

# ---- running: a later bulletin, the child's death ----
: >"$LOG"
background pqsurf -l "$LOG" -v -i 1
PQSURF=$BG
wait_until 30 grep -q 'TS_ENDT {{' "$LOG" ||
  fail "pqsurf did not start reading the queue within 30 s"
bulletin b6 'SAUS70 KWBC 071300\r\r\nMETAR\r\r\nKDEN 071253Z 36010KT 10SM=\r\r\n'
insert b6 'SAUS70 KWBC 071300' 130
wait_until 30 grep -q 071253Z "$DATA/metar/KDEN.txt" ||
  fail "the later bulletin's report was not filed within 30 s"
ok "a bulletin inserted while it runs is split and filed"
child=$(ps -o pid= --ppid "$PQSURF" | tr -d ' ')
[[ -n $child && $(cat "/proc/$child/comm") == pqact ]] ||
  fail "pqsurf has no pqact child"
kill -KILL "$child"
wait_until 30 gone "$PQSURF" || fail "pqsurf still runs 30 s after its pqact died"
wait "$PQSURF"
rc=$?
((rc == 1)) || fail "pqsurf exited $rc after its pqact was killed, expected 1"
expect_in "$LOG" "child $child terminated by signal 9"
sanitizer_check "$LOG"
ok "pqsurf exits 1 when its pqact is killed"

# ---- the expiry, then a stop ----
: >"$LOG"
# observations older than 0.0005 h (1.8 s), every second: all of them soon
background pqsurf -l "$LOG" -i 1 -a 0.0005
PQSURF=$BG
count() { pqcat -q "$SQ" -L 2>/dev/null | wc -l; }
# shellcheck disable=SC2016 # eval expands it, each time
wait_until 30 eval '(($(count) == 0))' ||
  fail "the private queue still holds $(count) observations 30 s later"
ok "the private queue is expired"
child=$(ps -o pid= --ppid "$PQSURF" | tr -d ' ')
[[ -n $child ]] || fail "pqsurf has no pqact child"
wait_until 30 grep -q 'pqact.*Starting Up' "$LOG" || fail "its pqact did not start"
stop_expect "$PQSURF" pqsurf TERM 30 0 "$LOG"
gone "$child" || fail "its pqact $child outlived pqsurf"
expect_in "$LOG" 'Exiting'
expect_in "$LOG" 'Number of dups 0'
expect_in "$LOG" '  Queue usage (bytes):'
ok "SIGTERM stops pqsurf and its pqact, exit 0"
