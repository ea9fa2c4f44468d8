#!/usr/bin/env bash
# ulogger (pqutils/ops/ulogger.1): its lines are the programs' own (the
# same columns as a line pqcat writes to the same log), in the LDM log
# (the registry's /log/file) by default; words as one message, standard
# input and -f line by line; each priority name and number to its level,
# debug and info written too; -t, -s, -l -; control characters escaped; a
# line longer than 4096 bytes in pieces; refusals (unknown priority or
# facility, -f with words, an unreadable file).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

TS='[0-9]{8}T[0-9]{6}\.[0-9]{6}Z'
expect_rc 0 ulogger -t site hello world
[[ ! -s $OUT && ! -s $ERR ]] || fail "ulogger wrote to stdout or stderr without -s"
in_file "$LOG" "^$TS site\[[0-9]+\] +ulogger\.c:main:[0-9]+ +NOTE  hello world\$" ||
  fail "no NOTE line 'hello world' tagged site in $LOG"
# The columns are the shared logger's: a line another program writes to
# the same log has its level and text at the same places.
run pqcat -l "$LOG" -q "$SCRATCH/no-such.pq"
grep -q "ERROR" "$LOG" || fail "pqcat wrote no ERROR line to compare with"
col() { awk -v w="$2" '{ i = index($0, w); if (i) { print i; exit } }' "$1"; }
mine=$(grep 'hello world' "$LOG" | col /dev/stdin "NOTE  hello")
theirs=$(grep 'ERROR' "$LOG" | col /dev/stdin "ERROR")
[[ -n $mine && $mine == "$theirs" ]] ||
  fail "the level's column differs: ulogger $mine, pqcat $theirs"
ok "the LDM log by default, in the programs' format and columns"

: >"$LOG"
for pair in emerg:FATAL alert:FATAL crit:FATAL err:ERROR error:ERROR \
  warning:WARN warn:WARN notice:NOTE info:INFO debug:DEBUG panic:FATAL \
  local7.err:ERROR USER.Info:INFO 3:ERROR 4:WARN 6:INFO 7:DEBUG; do
  p=${pair%%:*}
  lev=${pair#*:}
  expect_rc 0 ulogger -t t -p "$p" "prio $p"
  in_file "$LOG" " $lev +prio $p\$" || fail "-p $p: no $lev line"
done
ok "priorities: names, facility.level, numbers; debug and info written"

: >"$LOG"
printf 'one\ntwo\tthree\n\nesc\033[31mred\n' | run ulogger -t in
((rc == 0)) || fail "ulogger from stdin exited $rc"
in_file "$LOG" "NOTE  one\$" || fail "no line 'one'"
in_file "$LOG" 'NOTE  two\\x09three$' || fail "the TAB not escaped"
in_file "$LOG" 'NOTE  esc\\x1b\[31mred$' || fail "the ESC not escaped"
(($(grep -c ' in\[' "$LOG") == 4)) || fail "not one message per input line (4)"
printf 'from a file\n' >msg.txt
expect_rc 0 ulogger -t f -f msg.txt
in_file "$LOG" "f\[[0-9]+\] .*NOTE  from a file\$" || fail "-f: no line"
ok "standard input and -f: a message per line, control characters escaped"

: >"$LOG"
{
  head -c 5000 /dev/zero | tr "\0" a
  echo
  head -c 4096 /dev/zero | tr "\0" b
  echo
} >long.txt
expect_rc 0 ulogger -t long -f long.txt
(($(grep -c 'long\[' "$LOG") == 3)) ||
  fail "lines of 5000 and 4096 bytes are not three messages"
in_file "$LOG" "NOTE  a{4096}\$" || fail "no 4096-byte first piece"
in_file "$LOG" "NOTE  a{904}\$" || fail "no 904-byte second piece"
in_file "$LOG" "NOTE  b{4096}\$" || fail "no 4096-byte line of b"
ok "a line over 4096 bytes: in pieces; one of 4096 bytes: whole, no empty message"

expect_rc 0 ulogger -l - -t err -s to stderr
grep -qE "^$TS err\[[0-9]+\] .*NOTE  to stderr\$" "$ERR" || fail "-l -: no log line on stderr"
expect_in "$ERR" "err: to stderr"
expect_rc 0 ulogger -l "$SCRATCH/other.log" -t o -i elsewhere
in_file "$SCRATCH/other.log" "NOTE  elsewhere\$" || fail "-l file: no line"
expect_not_in "$LOG" "elsewhere"
ok "-l, -s, -i"

expect_rc 1 ulogger -p bogus x
expect_in "$ERR" "unknown priority name: bogus"
expect_rc 1 ulogger -p nofac.err x
expect_in "$ERR" "unknown facility name: nofac"
expect_rc 1 ulogger -f msg.txt words
expect_rc 1 ulogger -f "$SCRATCH/none.txt"
expect_in "$ERR" "No such file"
expect_rc 1 ulogger -z
expect_rc 0 ulogger -h
expect_in "$OUT" "usage: ulogger"
ok "refusals"
