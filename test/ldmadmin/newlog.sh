#!/usr/bin/env bash
# ldmadmin newlog with a real ldmd started by ldmadmin, products flowing
# (a feeder child serving notifyme, an EXEC pqact writing its own -l log,
# relative to LDMHOME, with -d elsewhere): both logs rotated at once (LDM
# issue #116), the old lines in .1, the new ones, from the same processes,
# in fresh files; the count kept over several rotations (and lowered),
# .2 on compressed as logrotate names them (an existing .K.gz shifted); -l
# rotates that one file only; bad -n values refused; the logs an ldmd.conf names (-l FILE,
# -lFILE, -vl FILE, through INCLUDE; never "-"); a missing log; the server
# stopped (rotated, no signal); /log/rotate at start; a bad /log/count.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

mkdir -p "$LDMHOME/logs" "$LDMHOME/data" || fail "mkdir"
PQLOG=$LDMHOME/logs/pqact.log
NLOG=$SCRATCH/notifyme.log
FAIL_LOGS=(OUT:stdout ERR:stderr LOG:ldmd.log PQLOG:pqact.log)
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\nEXEC\t"pqact -v -l logs/pqact.log -d data %s"\n' \
  "$PQACT_CONF" >"$CONF"
regutil -u 3 /log/count || fail "regutil -u 3 /log/count"

admin_ok mkqueue
admin_ok start -x -P 0
pid=$(server_pid)
port=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" | head -1)
[[ -n $port ]] || fail "no port in the log"

# Products flowing: one every 0.1 s (a load, not a synchronization), to
# pqact and, through a feeder child of ldmd, to notifyme.
background notifyme -v -l "$NLOG" -h "127.0.0.1:$port"
# shellcheck disable=SC2016 # the inner shell's
background bash -c 'i=0; while :; do echo "$i" | pqinsert -q "$1" -p "flow.$i" || exit 1
  i=$((i + 1)); sleep 0.1; done' sh "$Q"

# pid_of FILE ERE: the pid of the last line of FILE matching ERE.
pid_of() {
  grep -E -- "$2" "$1" 2>/dev/null | tail -1 | sed 's/^[^ ]* [^[]*\[\([0-9]*\)\].*/\1/'
}
FEED='sent .* flow\.'
PQACT_LINE='FILE: flow\.'
# fresh: both logs have new lines, from a feeder and from pqact.
fresh() {
  grep -qE -- "$FEED" "$LOG" 2>/dev/null && grep -qE -- "$PQACT_LINE" "$PQLOG" 2>/dev/null
}
wait_until 20 fresh || fail "no product lines from the feeder and pqact"
feeder=$(pid_of "$LOG" "$FEED")
pqact=$(pid_of "$PQLOG" "$PQACT_LINE")
[[ -n $feeder && -n $pqact ]] || fail "no pid in the product lines"
ok "products flow: the feeder (pid $feeder) and pqact (pid $pqact) log them"

admin_ok newlog
expect_in "$ERR" "rotated $LOG (keeping 3)"
expect_in "$ERR" "rotated logs/pqact.log (keeping 3)"
expect_in "$ERR" "sent SIGUSR1 to the LDM server (pid $pid)"
grep -qE -- "$FEED" "$LOG.1" || fail "the old feeder lines are not in ldmd.log.1"
grep -qE -- "$PQACT_LINE" "$PQLOG.1" || fail "the old pqact lines are not in pqact.log.1"
wait_until 20 fresh || fail "no new product lines in the fresh ldmd.log and pqact.log"
[[ $(pid_of "$LOG" "$FEED") == "$feeder" ]] ||
  fail "the fresh ldmd.log has no line of the feeder $feeder (a child that did not reopen?)"
[[ $(pid_of "$PQLOG" "$PQACT_LINE") == "$pqact" ]] ||
  fail "the fresh pqact.log has no line of pqact $pqact"
expect_in "$LOG" "SIGUSR1: log file reopened"
[[ $(pid_of "$LOG" "SIGUSR1: log file reopened") == "$pid" ]] ||
  fail "the reopening line is not the server's"
ok "newlog: both logs rotated, the same processes write to the fresh files"

# Several rotations with /log/count 3: .1 plain, .2 and .3 compressed,
# never a .4.
for i in 1 2 3 4; do
  wait_until 20 fresh || fail "rotation $i: no new lines to rotate"
  admin_ok newlog
  for f in "$LOG" "$PQLOG"; do
    [[ -s $f.1 ]] || fail "rotation $i: no $f.1"
    [[ ! -e $f.4 && ! -e $f.4.gz ]] || fail "rotation $i: $f.4 kept with /log/count 3"
    [[ ! -e $f.2 ]] || fail "rotation $i: $f.2 not compressed"
  done
done
for f in "$LOG" "$PQLOG"; do
  for k in 2 3; do
    gzip -t "$f.$k.gz" 2>/dev/null || fail "no sound $f.$k.gz: $(ls "$(dirname "$f")")"
  done
done
zgrep -qE -- "$FEED" "$LOG.3.gz" || fail "ldmd.log.3.gz holds no product line"
# A lower count: the files past it go.
wait_until 20 fresh || fail "no new lines"
admin_ok newlog -n 2 -l "$LOG"
[[ -e $LOG.2.gz && ! -e $LOG.3.gz && ! -e $LOG.3 ]] || fail "newlog -n 2 kept $LOG.3.gz: $(ls "$(dirname "$LOG")")"
ok "count kept: .1, .2.gz, .3.gz and never .4; -n 2 removes .3.gz"

# -l: that file only.
ino() { stat -c %i "$1"; }
wait_until 20 fresh || fail "no new lines"
before=$(ino "$LOG") before1=$(ino "$LOG.1") pq=$(ino "$PQLOG")
admin_ok newlog -l logs/pqact.log
[[ $(ino "$LOG") == "$before" && $(ino "$LOG.1") == "$before1" ]] ||
  fail "newlog -l logs/pqact.log rotated ldmd.log"
[[ $(ino "$PQLOG.1") == "$pq" ]] || fail "newlog -l did not rotate pqact.log"
expect_not_in "$ERR" "rotated $LOG"
expect_in "$ERR" "sent SIGUSR1"
ok "newlog -l rotates that file only"

# Bad -n: refused before anything is rotated.
pq=$(ino "$PQLOG.1")
for n in 0 -1 abc 3x 1000 07 ''; do
  admin_fails newlog -n "$n" -- \
    "the number of log files to keep (-n) must be a whole number from 1 to 999, not \"$n\""
done
[[ $(ino "$PQLOG.1") == "$pq" ]] || fail "a refused newlog rotated"
admin_fails newlog -l - -- "-l -: standard error is not a file to rotate"
admin_ok newlog -n 2 -l nowhere.log
expect_in "$ERR" "no log file nowhere.log: nothing to rotate"
ok "bad -n refused, -l - refused, a missing log is not an error"

# logrotate's names (etc/logrotate.d/ldm: compress, delaycompress): an
# existing .2.gz is shifted to .3.gz, the old .1 becomes .2.gz.
echo current >x.log
echo one >x.log.1
echo two | gzip >x.log.2.gz
admin_ok newlog -n 4 -l "$SCRATCH/x.log"
[[ $(cat x.log.1) == current ]] || fail "x.log is not x.log.1"
[[ $(zcat x.log.2.gz) == one && ! -e x.log.2 ]] || fail "x.log.1 is not x.log.2.gz"
[[ $(zcat x.log.3.gz) == two ]] || fail "x.log.2.gz is not x.log.3.gz"
[[ ! -e x.log ]] || fail "x.log was made again (the programs make it when they reopen)"
ok "logrotate's naming: .2.gz shifted"

# The server stopped: rotated, and no signal.
admin_ok stop
kill -TERM "${BG_PIDS[@]}" 2>/dev/null
before=$(ino "$LOG")
admin_ok newlog
[[ $(ino "$LOG.1") == "$before" ]] || fail "the stopped server's log was not rotated"
expect_in "$ERR" "the LDM server is not running: the logs are rotated, no signal sent"
expect_not_in "$ERR" "sent SIGUSR1"
ok "server stopped: rotated, no signal"

# The logs an ldmd.conf names (the server stopped: nothing runs it):
# -lFILE, -vl FILE, one through INCLUDE (relative to the including file);
# "-" is never rotated, nor a word that is not a log option's.
mkdir -p conf.d
printf 'EXEC\t"pqact -linline.log x.conf"\nexec\t"notifyme -vl clustered.log"\nEXEC\t"pqact -l - -d -l"\nEXEC\t"ls -al"\nINCLUDE\tconf.d/more.conf\n' >"$CONF"
printf 'EXEC "pqmon -l logs/included.log"\n' >conf.d/more.conf
for f in inline.log clustered.log logs/included.log ./- al; do
  echo "$f" >"$LDMHOME/$f"
done
echo "$LOG" >"$LOG"
admin_ok newlog
for f in inline.log clustered.log logs/included.log; do
  [[ $(cat "$LDMHOME/$f.1" 2>/dev/null) == "$f" ]] || fail "$f was not rotated: $(cat "$ERR")"
done
[[ -e $LDMHOME/- && ! -e $LDMHOME/-.1 && -e $LDMHOME/al && ! -e $LDMHOME/al.1 ]] ||
  fail "newlog rotated \"-\" or a word that is no log"
ok "every log ldmd.conf names, through INCLUDE; never \"-\""

# /log/rotate (default 1): start rotates first; 0: it does not.
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\n' >"$CONF"
echo "before the start" >"$LOG"
before=$(ino "$LOG")
admin_ok start -P 0
[[ $(ino "$LOG.1") == "$before" ]] || fail "start did not rotate the log (/log/rotate 1)"
expect_in "$LOG" "listening on"
expect_not_in "$LOG" "before the start"
admin_ok stop
regutil -b FALSE /log/rotate || fail "regutil -b FALSE /log/rotate"
before=$(ino "$LOG")
admin_ok start -P 0
[[ $(ino "$LOG") == "$before" ]] || fail "start rotated the log with /log/rotate 0"
admin_ok stop
ok "/log/rotate: start rotates the logs first, or not"

# A bad /log/count: newlog and a rotating start refuse it.
regutil -b TRUE /log/rotate || fail "regutil -b TRUE /log/rotate"
regutil -u 0 /log/count || fail "regutil -u 0 /log/count"
admin_fails newlog -- \
  "the number of log files to keep (the registry's /log/count) must be a whole number from 1 to 999, not \"0\""
admin_fails start -P 0 -- "the registry's /log/count"
admin_fails isrunning -- ''
ok "a bad /log/count is refused by newlog and start"
