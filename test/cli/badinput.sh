#!/usr/bin/env bash
# Every program, fed mistakes: unknown options, missing values, bad numbers,
# missing files, queues that are not queues (junk, a directory, a truncated
# file), a malformed registry.  Each must fail cleanly (no signal), with a
# message on stderr; -h must print the usage and exit 0.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

progs=(pqcreate pqinsert pqcat pqexpire pqmon pqcheck pqcopy pqsave pqrestore)

for p in "${progs[@]}"; do
  expect_rc 0 "$p" -h
  expect_in "$OUT" "usage: $p"
  expect_error "$p" -Q
  expect_in "$ERR" "unknown option -Q"
  expect_in "$ERR" "usage: $p"
  expect_error "$p" -q
  expect_in "$ERR" "needs a value"
done
ok "-h, unknown options, missing values"

expect_rc 0 pqcreate -s 1M
echo hello >file
expect_error pqinsert -f NOSUCH file
expect_in "$ERR" 'bad feedtype "NOSUCH"'
expect_error pqinsert -s -1 file
expect_error pqinsert -s 4294967296 file
expect_error pqinsert -s 12abc file
expect_error pqcat -p 'a(b'
expect_in "$ERR" "bad pattern"
expect_error pqcat -i -3
expect_error pqcat -o 1.5x
expect_error pqcat out1 out2
expect_error pqcat -f 'WMO|'
expect_error pqexpire -a 1e999 -i 0
expect_error pqmon -o abc
expect_error pqrestore -S x snap q.pq
expect_error pqcreate -s 1.5M
expect_error pqcreate -s ''
expect_error pqcreate -s 99999999999999999999999
expect_error pqcreate -q ''
ok "bad numbers, feedtypes, patterns"

# Queues that cannot be used.
echo "not a queue" >junk.pq
mkdir dir.pq
expect_rc 0 pqcreate -s 1M -q good.pq
head -c 10000 good.pq >truncated.pq
for q in none.pq junk.pq dir.pq truncated.pq; do
  expect_error pqinsert -q "$q" file
  expect_error pqcat -q "$q"
  expect_error pqexpire -i 0 -q "$q"
  expect_error pqmon -q "$q"
  expect_error pqmon -S -q "$q"
  expect_error pqcheck -q "$q"
  expect_error pqcopy "$q" good.pq
  expect_error pqcopy good.pq "$q"
  expect_error pqsave "$q" out.snap
done
expect_rc 2 pqinsert -q junk.pq file
expect_in "$ERR" "pq_open failed"
expect_rc 1 pqcat -q none.pq
expect_in "$ERR" "No such file or directory"
expect_rc 4 pqcheck -q truncated.pq
ok "missing, junk, directory and truncated queues"

# Missing input files.
expect_rc 3 pqinsert nosuch
expect_in "$ERR" "nosuch"
expect_rc 3 pqinsert -q good.pq "$(printf 'x%.0s' {1..300})"
expect_error pqrestore nosuch.snap r.pq
ok "missing input files"

# A malformed registry is reported when a default is needed from it, and
# does not matter when the command line names everything.
echo '<registry><queue><path>' >"$LDM_REGISTRY"
for p in pqcat pqmon pqcheck pqexpire pqcreate; do
  expect_error "$p"
  expect_in "$ERR" "registry"
done
expect_rc 0 pqcat -q good.pq
expect_rc 0 pqmon -S -q good.pq
ok "malformed registry"
