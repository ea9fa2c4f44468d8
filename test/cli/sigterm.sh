#!/usr/bin/env bash
# Every queue utility stops promptly on SIGTERM or SIGINT whatever it is
# waiting for.  Each case puts a program into a wait that would last far
# longer than the bound (for ever, or 100 s), waits for the event that
# proves it is there (the FIFO open, bytes read, a log line, a thread
# asleep in poll or on a futex), sends the signal and requires the exit
# within STOP_S seconds with the status its man page gives:
#   pqinsert  a FIFO without a writer, a FIFO whose writer never ends,
#             standard input that never ends: 1, nothing inserted
#   pqcat     -i at the end of the queue (0); writing to a reader that does
#             not read (0)
#   pqcopy    in the middle of a copy (0, the copy cut short)
#   pqsave    writing to a standard output nobody reads (1, no snapshot)
#   pqmon     -i between reports (0)
#   pqexpire  -i between passes (0)
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
STOP_S=5
# What a thread waits in, by /proc/PID/task/*/wchan.  Broader than what the
# programs use (poll) on purpose: a program that waited in read(), write()
# or nanosleep() instead would be seen waiting, and then fail the stop.
POLL='poll_schedule|do_sys_poll|do_poll'
READ="$POLL|pipe_read|fifo_open|wait_for_partner"
WRITE="$POLL|pipe_write"
SLEEP="$POLL|nanosleep"
FUTEX='futex' # pq_wait(), a condition variable
W=                                       # a FIFO end the test holds
EXTRA_LOG=                               # the program's log (-l)
BG_ERR=$SCRATCH/bg.err                   # its stderr (sanitizer reports)
FAIL_LOGS=(OUT:stdout ERR:stderr EXTRA_LOG BG_ERR)

# rchar PID: bytes PID has read so far.
rchar() {
  awk '/^rchar:/ {print $2}' "/proc/$1/io"
}
# read_more PID N: has PID read N bytes more than $base?
read_more() {
  (($(rchar "$1") >= base + $2))
}
# program LOG CMD...: CMD in the background, its pid in $pid, its stderr
# in $BG_ERR; LOG (a file of $SCRATCH, or '' for none) is the log fail
# shows.
program() {
  EXTRA_LOG=${1:+$SCRATCH/$1}
  shift
  background "$@" 2>"$BG_ERR"
  pid=$BG
}
# stopped PROGRAM SIGNAL STATUS: stop_expect for $pid.
stopped() {
  stop_expect "$pid" "$1" "$2" "$STOP_S" "$3" "$BG_ERR"
}

expect_rc 0 pqcreate -s 20M -S 5000

# 1. pqinsert and a FIFO nobody has opened for writing: the open does not
# wait, the read does, and SIGTERM ends it.
mkfifo fifo1
program ins1.log pqinsert -l ins1.log fifo1
wait_until 10 has_open "$pid" fifo1 || fail "pqinsert did not open the FIFO"
wait_until 10 asleep_in "$pid" "$READ" || fail "pqinsert is not waiting for a writer"
stopped pqinsert TERM 1
expect_in ins1.log "interrupted: 0 of 1 files done"
ok "pqinsert waiting for a FIFO's writer: exit 1 $ms ms after SIGTERM"

# 2. A FIFO whose writer sent a little and keeps it open: SIGINT.
program ins2.log pqinsert -l ins2.log fifo1
wait_until 10 has_open "$pid" fifo1 || fail "pqinsert did not open the FIFO"
wait_until 10 asleep_in "$pid" "$READ" || fail "pqinsert is not waiting for a writer"
base=$(rchar "$pid")
exec {W}>fifo1
echo partial >&"$W"
wait_until 10 read_more "$pid" 8 || fail "pqinsert did not read the 8 bytes"
wait_until 10 asleep_in "$pid" "$READ" || fail "pqinsert is not waiting for more"
stopped pqinsert INT 1
exec {W}>&-
expect_in ins2.log "interrupted: 0 of 1 files done"
[[ $(mon_field 7) == 0 ]] || fail "the cut-short FIFO was inserted"
ok "pqinsert reading a FIFO that never ends: exit 1 $ms ms after SIGINT"

# 3. Standard input that never ends (a FIFO the test keeps open).
mkfifo fifo2
program ins3.log bash -c 'exec pqinsert -l ins3.log <fifo2'
exec {W}>fifo2 # returns once pqinsert's shell has opened the other end
echo partial >&"$W"
wait_until 10 asleep_in "$pid" "$READ" || fail "pqinsert is not waiting for standard input"
stopped pqinsert TERM 1
exec {W}>&-
expect_in ins3.log "interrupted: standard input not inserted"
[[ $(mon_field 7) == 0 ]] || fail "the cut-short standard input was inserted"
ok "pqinsert reading standard input that never ends: exit 1 $ms ms after SIGTERM"

# Products for the readers: 30 of 100 kB (3 MB).
make_files p 30 100000
expect_rc 0 pqinsert p/f*

# 4. pqcat -i at the end of the queue, asleep on the queue's futex word.
program cat1.log pqcat -x -i 100 -l cat1.log cat1.out
wait_until 10 grep -q "End of Queue" cat1.log || fail "pqcat never reached the end of the queue"
wait_until 10 asleep_in "$pid" "$FUTEX" || fail "pqcat is not waiting on the queue"
stopped pqcat TERM 0
expect_in cat1.log "Exiting"
[[ $(stat -c %s cat1.out) == 3000000 ]] || fail "pqcat -i did not write the 3 MB first"
ok "pqcat -i waiting for products: exit 0 $ms ms after SIGTERM"

# 5. pqcat writing 3 MB to a reader that never reads (the FIFO holds 64 kB).
mkfifo fifo3
program cat2.log bash -c 'exec pqcat -l cat2.log >fifo3'
exec {W}<fifo3 # the reader, who reads nothing
wait_until 10 asleep_in "$pid" "$WRITE" || fail "pqcat is not waiting for its reader"
stopped pqcat INT 0
exec {W}<&-
expect_in cat2.log "stopped with output the reader had not taken"
ok "pqcat blocked on its output: exit 0 $ms ms after SIGINT"

# 6. pqcopy in the middle of a copy of 3000 products.  It logs each product
# (-v) into a FIFO the test reads one line of and then leaves: the copy goes
# on only as far as the FIFO holds its log lines (64 kB, some 400), so it
# is still copying, blocked on its log, when SIGTERM comes.  Nobody drains
# the log: the stop must not wait on it (log lines it cannot take are
# dropped once the program is stopping).
"$HELPER" insert-old "$Q" 3000 10 many || fail "insert-old"
expect_rc 0 pqcreate -s 20M -S 5000 -q copy.pq
mkfifo copylog
program '' pqcopy -v -l copylog "$Q" copy.pq # its log is a FIFO
exec {W}<copylog
read -r -t 10 -u "$W" line || fail "pqcopy logged nothing"
wait_until 10 asleep_in "$pid" "$WRITE" || fail "pqcopy is not held by its log"
stopped pqcopy TERM 0
exec {W}<&-
n=$(mon_field 7 copy.pq)
((n > 0 && n < 3030)) || fail "pqcopy copied $n of 3030 products: not cut short"
expect_rc 0 pqcheck -C -q copy.pq
ok "pqcopy copying: exit 0 $ms ms after SIGTERM, $n of 3030 products copied"

# 7. pqsave writing the snapshot (3 MB and more) to a pipe nobody reads.
mkfifo fifo4
program save.log bash -c 'exec pqsave -l save.log "$1" - >fifo4' - "$Q"
exec {W}<fifo4
wait_until 10 asleep_in "$pid" "$WRITE" || fail "pqsave is not waiting for its reader"
stopped pqsave TERM 1
exec {W}<&-
expect_in save.log "interrupted: no snapshot written to -"
ok "pqsave blocked on standard output: exit 1 $ms ms after SIGTERM"

# 8. pqmon -i 100 between two reports.
program mon.log pqmon -i 100 -l mon.log
wait_until 10 grep -qE '^.{94} +[0-9]+ ' mon.log || fail "pqmon made no report"
wait_until 10 asleep_in "$pid" "$SLEEP" || fail "pqmon is not sleeping"
stopped pqmon TERM 0
expect_in mon.log "Exiting"
ok "pqmon -i between reports: exit 0 $ms ms after SIGTERM"

# 9. pqexpire -i 100 between two passes.
program expire.log pqexpire -x -a 1 -i 100 -l expire.log
wait_until 10 grep -q "pass: " expire.log || fail "pqexpire made no pass"
wait_until 10 asleep_in "$pid" "$SLEEP" || fail "pqexpire is not sleeping"
stopped pqexpire INT 0
expect_in expire.log "Exiting"
ok "pqexpire -i between passes: exit 0 $ms ms after SIGINT"
