#!/usr/bin/env bash
# pqinsert reads no input past the largest product the queue holds: the
# limit is exact (N bytes go in, N + 1 do not, N being the data size less
# the record of that product's origin and identifier); /dev/zero, standard
# input, a pipe and a FIFO whose writer never stops are each refused after
# N + 1 bytes, within a bounded time, with "<path>: larger than the largest
# product the queue holds (N bytes)" and exit 3, while the other files of
# the run still go in; a regular file is refused by its size.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 2M
cap=$(mon_field 2)
# The files below are as large as the queue's data area: a misread size
# must fail here, not fill the scratch file system.
[[ $cap =~ ^[0-9]+$ ]] && ((cap > 0 && cap <= 2 * 1024 * 1024)) ||
  fail "pqmon -S gives a data size of '$cap' for a 2M queue"
origin=cli-test-host # the registry's hostname (lib.sh)
# limit IDENT: the data size less the product's record, as pq/insert.c
# lays it out (56 bytes, origin and ident, rounded up to 8).
limit() {
  echo $((cap - (56 + ${#origin} + ${#1} + 7) / 8 * 8))
}
msg() {
  echo "$1: larger than the largest product the queue holds ($(limit "$2") bytes)"
}

# timed CMD...: run CMD with a 30 s bound; a hang is a failure of its own.
timed() {
  run timeout 30 "$@"
  ((rc != 124)) || fail "'$*' still ran after 30 s"
}

# 1. The exact limit, for a regular file (names of equal length).
n=$(limit exact)
head -c "$n" /dev/urandom >exact
head -c $((n + 1)) /dev/urandom >over1
timed pqinsert over1
((rc == 3)) || fail "a file one byte too big: exit $rc, expected 3"
expect_in "$ERR" "$(msg over1 over1)"
timed pqinsert exact
((rc == 0)) || fail "a file of exactly $n bytes: exit $rc, expected 0"
expect_rc 0 pqcat -c -p '^exact$'
cmp -s "$OUT" exact || fail "the $n-byte product came back different"
ok "limit exact: $n bytes in, $((n + 1)) refused by their size"

# 2. /dev/zero among other files: refused after N + 1 bytes, in bounded
# time; the files around it go in.
echo one >one
echo two >two
timed pqinsert one /dev/zero two
((rc == 3)) || fail "pqinsert one /dev/zero two: exit $rc, expected 3"
expect_in "$ERR" "$(msg /dev/zero /dev/zero)"
expect_rc 0 pqcat -p '^(one|two)$'
[[ $(cat "$OUT") == $'one\ntwo' ]] || fail "the files beside /dev/zero: $(cat "$OUT")"
ok "/dev/zero refused after $(limit /dev/zero) + 1 bytes; nothing else lost"

# 3. Standard input: /dev/zero, and a pipe of exactly N and of N + 1 bytes.
timed pqinsert </dev/zero
((rc == 3)) || fail "pqinsert </dev/zero: exit $rc, expected 3"
expect_in "$ERR" "$(msg 'standard input' STDIN)"
n=$(limit STDIN)
head -c "$n" /dev/urandom >stdin_exact
timed bash -c 'head -c "$1" /dev/zero | pqinsert' - $((n + 1))
((rc == 3)) || fail "a pipe of $((n + 1)) bytes: exit $rc, expected 3"
expect_in "$ERR" "$(msg 'standard input' STDIN)"
timed bash -c 'cat stdin_exact | pqinsert'
((rc == 0)) || fail "a pipe of exactly $n bytes: exit $rc, expected 0"
expect_rc 0 pqcat -p '^STDIN$'
cmp -s "$OUT" stdin_exact || fail "the $n bytes from a pipe came back different"
ok "standard input: /dev/zero and $((n + 1)) bytes refused, $n inserted"

# 4. A FIFO whose writer never stops: refused without waiting for its end.
mkfifo endless
# (The writer's open waits for pqinsert's; cat dies of SIGPIPE after.)
background bash -c 'exec cat /dev/zero >endless'
timed pqinsert endless
((rc == 3)) || fail "an endless FIFO: exit $rc, expected 3"
expect_in "$ERR" "$(msg endless endless)"
ok "an endless FIFO refused after $(limit endless) + 1 bytes"

# 5. A sparse file far larger than the queue: refused by its size.
truncate -s 50G sparse
timed pqinsert sparse
((rc == 3)) || fail "a 50 GB file: exit $rc, expected 3"
expect_in "$ERR" "$(msg sparse sparse)"
expect_rc 0 pqcheck
ok "a 50 GB file refused by its size; the queue checks clean"
