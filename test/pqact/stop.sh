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
  expect_in "$SCRATCH/log.$sig" "exiting: 1 products"
  same "$DATA/live.out" one
  ok "SIG$sig stops a waiting pqact in $ms ms; products filed as they came"
done
