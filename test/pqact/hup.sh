#!/usr/bin/env bash
# pqact's signals beside SIGTERM and SIGINT (stop.sh): SIGHUP rereads
# pqact.conf, and the new rules take effect for the next products (shown
# by the files they make); a file with errors is refused with LDM's
# messages and line numbers, and the old rules keep filing; open outputs
# stay open across a reread (as LDM's pqact); SIGUSR1 logs the statistics
# with how far behind the newest product pqact is; SIGUSR2 cycles the log
# level (NOTICE, INFO, DEBUG, NOTICE).  Each signal is sent to a pqact
# asleep waiting for products, and the test waits for the log line that
# says it was handled, or for the signal to be taken, never for a time.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
tab=$'\t'
LOG=$SCRATCH/log
FAIL_LOGS=(LOG:log OUT:stdout ERR:stderr)

expect_rc 0 pqcreate -s 1M -S 100 -q "$Q"

# put_now IDENT: a product IDENT whose data is "IDENT\n", created now.
put_now() {
  printf '%s\n' "$1" >"$SCRATCH/$1"
  put EXP 0 "$(date +%s)" 0 here "$1" "$SCRATCH/$1"
}

# count_in FILE TEXT: how many lines of FILE hold TEXT.
count_in() {
  grep -cF -- "$2" "$1" 2>/dev/null
}

# more_lines FILE TEXT N: more than N lines of FILE hold TEXT.
more_lines() {
  (($(count_in "$1" "$2") > $3))
}

# hup WHAT: send SIGHUP to pqact, then wait for the reread to end: the
# line WHAT logs after it (one more than before).
hup() {
  local before
  before=$(count_in "$LOG" "$1")
  kill -HUP "$pid" || fail "cannot send SIGHUP"
  wait_until 10 more_lines "$LOG" "$1" "$before" ||
    fail "no '$1' after SIGHUP"
}

asleep() {
  asleep_in "$pid" 'futex|poll|nanosleep'
}

printf 'EXP\t^A\tFILE\t-close\ta.out\n' >"$CONF"
background "$PQACT" -v -l "$LOG" -d "$DATA" -i 600
pid=$BG
wait_until 10 asleep || fail "pqact never waited"
put_now A1
wait_until 10 test -s "$DATA/a.out" || fail "A1 not filed"
[[ $(cat "$DATA/a.out") == A1 ]] || fail "a.out: $(cat "$DATA/a.out")"

# ---- a good file: the new rule for the next product ----
printf 'EXP\t^A\tFILE\tb.out\n' >"$CONF"
wait_until 10 asleep || fail "pqact did not wait"
hup "Successfully read configuration-file \"$CONF\""
expect_in "$LOG" "Rereading configuration file $CONF"
put_now A2
wait_until 10 test -s "$DATA/b.out" || fail "A2 not filed by the new rule"
[[ $(cat "$DATA/b.out") == A2 ]] || fail "b.out: $(cat "$DATA/b.out")"
[[ $(cat "$DATA/a.out") == A1 ]] || fail "the old rule filed A2 too"
fd_of_b() {
  local f
  for f in /proc/"$pid"/fd/*; do
    [[ $(readlink "$f") == "$DATA/b.out" ]] && echo "${f##*/}"
  done
}
bfd=$(fd_of_b)
[[ -n $bfd ]] || fail "b.out (no -close) is not open"
ok "SIGHUP with a good file: the new rule files the next product"

# ---- a bad file: its errors, with their lines; the old rules go on ----
cat >"$CONF" <<CONF
# line 1
EXP${tab}^A
EXP${tab}^A${tab}FILE${tab}c.out
EXP${tab}(x${tab}NOOP
CONF
wait_until 10 asleep || fail "pqact did not wait"
hup "keeping the rules read before from \"$CONF\""
expect_in "$LOG" "$CONF: syntax error at line 2, not enough fields"
expect_in "$LOG" "$CONF: regcomp error at line 4: \"(x\""
expect_in "$LOG" "error in configuration-file \"$CONF\""
put_now A3
wait_until 10 grep -q A3 "$DATA/b.out" || fail "the old rules stopped filing"
[[ $(cat "$DATA/b.out") == $'A2\nA3' ]] || fail "b.out: $(cat "$DATA/b.out")"
[[ ! -e $DATA/c.out ]] || fail "a rule of the bad file was used"
kill -0 "$pid" || fail "pqact died on a bad file"
[[ $(fd_of_b) == "$bfd" ]] || fail "b.out was closed or reopened by a refused reread"
ok "SIGHUP with a bad file: errors with their lines, the old rules still file"

# ---- outputs stay open across a good reread ----
printf 'EXP\t^A\tFILE\tb.out\nEXP\t^A\tFILE\t-close\tc.out\n' >"$CONF"
wait_until 10 asleep || fail "pqact did not wait"
hup "Successfully read configuration-file \"$CONF\""
[[ $(fd_of_b) == "$bfd" ]] || fail "b.out was closed by the reread (LDM keeps it open)"
put_now A4
wait_until 10 test -s "$DATA/c.out" || fail "A4 not filed by the new second rule"
wait_until 10 grep -q A4 "$DATA/b.out" || fail "A4 not appended to b.out"
[[ $(cat "$DATA/b.out") == $'A2\nA3\nA4' ]] || fail "b.out: $(cat "$DATA/b.out")"
[[ $(fd_of_b) == "$bfd" ]] || fail "b.out reopened"
ok "open outputs stay open across a reread"

# ---- SIGUSR1: statistics with the lag ----
wait_until 10 asleep || fail "pqact did not wait"
kill -USR1 "$pid"
wait_until 10 grep -qE 'number of products 4; [0-9.]+ s behind the newest product in the queue' "$LOG" ||
  fail "no statistics with the lag on SIGUSR1"
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc"
sanitizer_check "$LOG"
ok "SIGUSR1: statistics, with how far behind the newest product"

# ---- SIGUSR2: NOTICE -> INFO -> DEBUG -> NOTICE ----
LOG=$SCRATCH/log2
printf 'EXP\t^U\tFILE\tu.out\n' >"$CONF"
background "$PQACT" -l "$LOG" -d "$DATA" -i 600
pid=$BG
# level [LEVEL] PRODUCT: send SIGUSR2 unless LEVEL is "-", then insert
# PRODUCT and wait until it is filed.
usr2_then() {
  if [[ $1 != - ]]; then
    wait_until 10 asleep || fail "pqact did not wait"
    kill -USR2 "$pid"
    wait_until 10 signal_taken "$pid" USR2 || fail "SIGUSR2 not taken"
  fi
  put_now "$2"
  wait_until 10 grep -q "$2" "$DATA/u.out" || fail "$2 not filed"
}
wait_until 10 asleep || fail "pqact never waited"
usr2_then - U0
usr2_then y U1
usr2_then y U2
usr2_then y U3
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc"
! grep -q ' U0$' "$LOG" || fail "U0 logged at NOTICE"
grep -qE 'INFO +[0-9]+ [0-9.]+ EXP .* U1$' "$LOG" || fail "INFO after one SIGUSR2: U1 not logged"
grep -qE 'INFO +[0-9a-f]{32} .* U2$' "$LOG" ||
  fail "DEBUG after two SIGUSR2: U2 logged without its signature"
! grep -q ' U3$' "$LOG" || fail "U3 logged after the third SIGUSR2 (NOTICE)"
ok "SIGUSR2 cycles the level: NOTICE, INFO, DEBUG, NOTICE"
