#!/usr/bin/env bash
# pqact as it runs under ldmd: it follows the queue (a product inserted
# while it waits is filed at once, not at the next poll), and SIGTERM or
# SIGINT stop it promptly while it waits, with status 0 and its STDIOFILE
# output written.  Waits are bounded and for events (the file's content,
# the process asleep in the kernel, its exit), never for a time.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 1M -S 100 -q "$Q"
printf 'EXP\t^live\tSTDIOFILE\tlive.out\n' >"$CONF"
printf 'one\n' >one
printf 'two\n' >two

# has_bytes FILE EXPECTED: does FILE hold exactly EXPECTED's bytes?
has_bytes() {
  cmp -s "$1" "$2"
}

for sig in TERM INT; do
  rm -f "$DATA/live.out"
  background "$PQACT" -l "$SCRATCH/log.$sig" -d "$DATA" -i 600 2>"$ERR"
  pid=$BG
  wait_until 10 asleep_in "$pid" 'futex|poll|nanosleep' ||
    fail "pqact ($sig) never waited for products"
  put EXP 1 "$(date +%s)" 0 here "live $sig" one
  wait_until 10 has_bytes "$DATA/live.out" one ||
    fail "a product inserted while pqact waited was not filed within 10 s"
  wait_until 10 asleep_in "$pid" 'futex|poll|nanosleep' ||
    fail "pqact ($sig) did not wait again"
  stop_within "$pid" "$sig" 5
  ((rc == 0)) || fail "pqact exited $rc after SIG$sig"
  sanitizer_check "$ERR"
  expect_in "$SCRATCH/log.$sig" "1 products processed"
  grep -qE 'NOTE +Exiting$' "$SCRATCH/log.$sig" || fail "no 'Exiting' line (LDM's)"
  same "$DATA/live.out" one
  ok "SIG$sig stops a waiting pqact in $ms ms; products filed as they came"
done

# A pattern with back-references can keep regexec() busy for ever on one
# identifier (docs/security.md): the check warns about it, and SIGTERM still
# ends pqact, by SIGALRM if it is stuck matching (pqact.1, SIGNALS).
# cpu_ticks PID: the user and system clock ticks PID has used.
cpu_ticks() {
  awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null
}
# busy PID TICKS: has PID used more than TICKS clock ticks of CPU?
busy() {
  local t
  t=$(cpu_ticks "$1") && ((t > $2))
}
printf 'EXP\t(.*)(.*)(.*)(.*)(.*)(.*)(.*)(.*)\\8\\7\\6\\5\\4\\3\\2\\1x\tFILE\tslow.out\n' >slow.conf
printf 'EXP\t^after\tFILE\tafter.out\n' >>slow.conf
printf 'slow\n' >slow
put EXP 2 "$(date +%s)" 0 here "$(printf 'a%.0s' {1..118})/0" slow
put EXP 3 "$(date +%s)" 0 here after one
background "$PQACT" -l "$SCRATCH/log.slow" -d "$DATA" -o 100 -i 600 slow.conf 2>"$ERR"
pid=$BG
# Well past what a product takes (milliseconds): stuck in the match.
hz=$(getconf CLK_TCK)
wait_until 30 busy "$pid" "$hz" ||
  fail "pqact did not get busy on the slow pattern (cpu ticks: $(cpu_ticks "$pid"))"
[[ ! -e $DATA/after.out ]] || fail "pqact got past the slow pattern: not the case this tests"
stop_within "$pid" TERM 5 pqact
((rc == 128 + 14)) || fail "pqact stuck in regexec exited $rc after SIGTERM, not by SIGALRM (142)"
expect_in "$SCRATCH/log.slow" 'back-reference \8 in the pattern at line 1: matching it can take exponential time'
ok "SIGTERM ends pqact stuck matching a pattern with back-references in $ms ms; its warning at start"
