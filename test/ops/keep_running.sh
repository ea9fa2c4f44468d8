#!/usr/bin/env bash
# keep_running (pqutils/ops/keep_running.1) with real processes, by events:
# each start of the program appends a line to a file the test counts, and
# the test waits (bounded) for the count, never for a time.  The back-off:
# the gaps between starts are at least -d, 2 -d, 4 -d, then -D (lower
# bounds only: a loaded host makes them longer, never shorter), LDM's
# restart line for each end; a run past -r restarts at once; SIGHUP, SIGUSR1
# and SIGUSR2 reach the program, SIGTERM stops it and keep_running (exit
# 0, no restart), also during a back-off wait; SIGUSR1 reopens
# keep_running's own log even when it was started with SIGUSR1 ignored (as
# ldmd starts EXEC programs); a program killed by a signal (status 128 + N);
# keep_running killed outright takes its program with it; a program that
# cannot start; options after the program's name are its own; usage
# errors.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
KLOG=$SCRATCH/keep_running.log
STARTS=$SCRATCH/starts
KERR=$SCRATCH/keep_running.err # its stderr: sanitizer reports
FAIL_LOGS=(OUT:stdout ERR:stderr KLOG:keep_running.log KERR:keep_running.err STARTS:starts)

# The back-off: a program that fails at once, five starts.
cat >fails.sh <<'SH'
date +%s%N >>"$1"
exit 3
SH
background keep_running -l "$KLOG" -d 0.2 -D 0.8 -r 30 sh fails.sh "$STARTS" 2>>"$KERR"
kr=$BG
wait_until 60 has_lines "$STARTS" 5 || fail "fewer than 5 starts within 60 s"
mapfile -t t <"$STARTS"
want=(200 400 800 800) # ms: -d, doubled, capped at -D
for i in 0 1 2 3; do
  gap=$(((t[i + 1] - t[i]) / 1000000))
  ((gap >= want[i])) || fail "start $((i + 2)) came $gap ms after the one before, under the ${want[i]} ms back-off"
done
n=$(grep -c "Process 'sh fails.sh $STARTS' terminated with status 3. Restarting" "$KLOG")
((n >= 4)) || fail "LDM's restart line $n times for 5 starts"
expect_in "$KLOG" "waiting 0.8 s before the restart"
expect_not_in "$KLOG" "waiting 1.6 s"
ok "back-off: gaps of at least 0.2, 0.4, 0.8, 0.8 s; LDM's line for each end"

stop_expect "$kr" keep_running TERM 10 0 "$KERR"
expect_in "$KLOG" "SIGTERM: exiting, 'sh fails.sh $STARTS' not restarted"
ok "SIGTERM during a back-off wait: exit 0 at once"

# past_ms T MS: more than MS milliseconds have passed since T (date +%s%N).
past_ms() {
  ((($(date +%s%N) - $1) / 1000000 > $2))
}

# A run longer than -r restarts at once: with -d 30, a back-off would hold
# the second start for 30 s.  The program's run is made long by waiting for
# a file of the test's (not a sleep): each start waits for its own go.N.
: >"$KLOG"
rm -f "$STARTS"
cat >long.sh <<'SH'
date +%s%N >>"$1"
n=$(wc -l <"$1")
while [ ! -e "go.$n" ]; do sleep 0.05; done
exit 4
SH
background keep_running -l "$KLOG" -d 30 -D 30 -r 0.3 sh long.sh "$STARTS" 2>>"$KERR"
kr=$BG
for n in 1 2 3; do
  wait_until 20 has_lines "$STARTS" "$n" || fail "no start $n"
  # the run must pass -r (0.3 s) before it ends: wait for that much of
  # the program's life to have passed, measured, not slept for
  t0=$(tail -1 "$STARTS")
  wait_until 10 past_ms "$t0" 400 || fail "the clock did not move 400 ms in 10 s"
  : >"go.$n"
done
wait_until 20 has_lines "$STARTS" 4 || fail "no fourth start within 20 s: a back-off after runs longer than -r?"
expect_not_in "$KLOG" "waiting"
ok "runs longer than -r: restarted at once, no back-off"
stop_expect "$kr" keep_running TERM 10 0 "$KERR"
: >go.4

# Signals: the program records what it gets.
rm -f "$STARTS" got
cat >traps.sh <<'SH'
trap 'echo HUP >>got' HUP
trap 'echo USR1 >>got' USR1
trap 'echo USR2 >>got' USR2
trap 'echo TERM >>got; exit 0' TERM
echo $$ >>"$1"
while :; do sleep 0.05 & wait $!; done
SH
: >"$KLOG"
background keep_running -l "$KLOG" -v bash traps.sh "$STARTS" 2>>"$KERR"
kr=$BG
wait_until 20 has_lines "$STARTS" 1 || fail "the program did not start"
child=$(head -1 "$STARTS")
expect_in "$KLOG" "(pid $child)"
for s in HUP USR1 USR2; do
  kill -"$s" "$kr" || fail "kill -$s"
  wait_until 10 in_file got "^$s\$" || fail "SIG$s did not reach the program"
done
stop_expect "$kr" keep_running TERM 10 0 "$KERR"
expect_in got TERM
gone "$child" || fail "the program $child still runs"
(($(lines "$STARTS") == 1)) || fail "the program was restarted after SIGTERM"
expect_in "$KLOG" "SIGTERM: stopping 'bash traps.sh $STARTS' (pid $child)"
expect_in "$KLOG" "ended with status 0: exiting"
ok "SIGHUP, SIGUSR1, SIGUSR2 passed on; SIGTERM stops the program and keep_running"

# Started with SIGUSR1 ignored, as ldmd starts an EXEC: SIGUSR1 still
# reopens keep_running's own log (the program, which inherits the
# ignoring, is not killed by it).
rm -f "$STARTS" got
: >"$KLOG"
cat >stop_on_file.sh <<'SH'
echo $$ >>"$1"
while [ ! -e stop ]; do sleep 0.05; done
rm -f stop
exit 5
SH
# shellcheck disable=SC2016 # the inner shell's
background bash -c 'trap "" USR1 USR2; exec keep_running -l "$1" -d 0 -r 30 sh stop_on_file.sh "$2"' \
  sh "$KLOG" "$STARTS" 2>>"$KERR"
kr=$BG
wait_until 20 has_lines "$STARTS" 1 || fail "the program did not start"
mv "$KLOG" "$KLOG.1"
kill -USR1 "$kr" || fail "kill -USR1"
wait_until 10 signal_taken "$kr" USR1 || fail "keep_running did not take SIGUSR1"
: >stop
wait_until 20 has_lines "$STARTS" 2 || fail "no restart after the program's end"
wait_until 10 in_file "$KLOG" "terminated with status 5. Restarting" ||
  fail "the restart line is not in the reopened log"
expect_not_in "$KLOG.1" "terminated with status 5"
gone "$(head -1 "$STARTS")" || fail "the first program still runs"
ok "SIGUSR1, ignored when keep_running started, reopens its log"
stop_expect "$kr" keep_running TERM 10 0 "$KERR"

# A program killed by a signal: LDM's status, 128 + N, and its name.
: >"$KLOG"
rm -f "$STARTS"
cat >killed.sh <<'SH'
echo $$ >>"$1"
kill -KILL $$
SH
background keep_running -l "$KLOG" -d 0.1 -D 0.1 sh killed.sh "$STARTS" 2>>"$KERR"
kr=$BG
wait_until 20 in_file "$KLOG" "killed by signal 9" || fail "no line naming signal 9"
expect_in "$KLOG" "terminated with status 137. Restarting"
stop_expect "$kr" keep_running TERM 10 0 "$KERR"
ok "a program killed by SIGKILL: status 137, signal 9 named"

# keep_running killed outright: its program gets SIGTERM.
rm -f "$STARTS" got
background keep_running -l "$KLOG" bash traps.sh "$STARTS" 2>>"$KERR"
kr=$BG
wait_until 20 has_lines "$STARTS" 1 || fail "the program did not start"
child=$(head -1 "$STARTS")
kill -KILL "$kr"
wait "$kr" 2>/dev/null
wait_until 10 in_file got '^TERM$' || fail "the program did not get SIGTERM when keep_running died"
wait_until 10 gone "$child" || fail "the program $child outlived keep_running"
ok "keep_running killed: its program gets SIGTERM and ends"

# A program that cannot start; usage errors.
expect_rc 1 keep_running -l - no-such-program-here
expect_in "$ERR" "cannot run no-such-program-here: No such file or directory"
expect_rc 1 keep_running -l - ./fails.sh "$STARTS" # not executable
expect_in "$ERR" "Permission denied"
expect_rc 1 keep_running -l - -- -dash-program
expect_in "$ERR" "cannot run -dash-program"
# The program's own options are its own: sh's -e here, not an option of
# keep_running's (which would be refused as unknown).
rm -f "$STARTS"
: >"$KLOG"
background keep_running -l "$KLOG" -d 0.1 -D 0.1 sh -e fails.sh "$STARTS" 2>>"$KERR"
kr=$BG
wait_until 20 has_lines "$STARTS" 2 || fail "sh -e fails.sh did not run twice"
stop_expect "$kr" keep_running TERM 10 0 "$KERR"
expect_in "$KLOG" "Process 'sh -e fails.sh $STARTS' terminated with status 3"
expect_rc 1 keep_running
expect_in "$ERR" "no program to run"
expect_rc 1 keep_running -d 5 -D 1 true
expect_in "$ERR" "shorter than the first"
expect_rc 1 keep_running -d x true
expect_rc 1 keep_running -D 100000 true
expect_rc 0 keep_running -h
expect_in "$OUT" "usage: keep_running"
ok "refusals: a program that cannot run, no program, bad waits"
sanitizer_check "$KERR" "keep_running's stderr holds a sanitizer report"
