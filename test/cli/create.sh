#!/usr/bin/env bash
# pqcreate: both command-line forms, registry defaults, -v's line, clobber,
# and every refusal (bad size, too few slots, no room, existing file).
source "$(dirname "$0")/lib.sh" "$@"

# Defaults from the registry: path and size (2M).
expect_rc 0 pqcreate -v
[[ -f $Q ]] || fail "pqcreate without -q did not create the registry's $Q"
expect_in "$ERR" "Creating $Q, 2000000 bytes, 14 products."
[[ $(mon_field 2) -ge 2000000 ]] || fail "data capacity below 2000000"
[[ $(mon_field 5) == 14 ]] || fail "slots: $(mon_field 5), expected 14"
ok "registry defaults"

# Existing file: refused without -c (LDM: exit 1), replaced with -c.
expect_error pqcreate -s 1M -q "$Q"
[[ $rc == 1 ]] || fail "exit $rc for an existing queue, expected 1"
expect_in "$ERR" "create \"$Q\" failed"
expect_in "$ERR" "exists"
expect_rc 0 pqcreate -c -s 1M -S 100 -q "$Q"
[[ $(mon_field 5) == 100 ]] || fail "-S 100 gave $(mon_field 5) slots"
ok "clobber"

# Positional form, lowercase suffixes, -f accepted.
expect_rc 0 pqcreate -f 3m "$SCRATCH/b.pq"
[[ $(pqmon -S -q "$SCRATCH/b.pq" | awk '{print $5}') == 21 ]] ||
  fail "3m should give 3000000 / 140000 = 21 slots"
expect_rc 0 pqcreate -s 500k -q "$SCRATCH/c.pq"
expect_rc 0 pqcreate -s 0x100000 -q "$SCRATCH/hex.pq"
ok "positional form and suffixes"

# Refusals: clear message, exit 1, nothing left behind.
expect_error pqcreate -s 10X -q "$SCRATCH/x.pq"
expect_in "$ERR" 'bad size "10X"'
expect_error pqcreate -s -5 -q "$SCRATCH/x.pq"
expect_error pqcreate -s 1M -S 4 -q "$SCRATCH/x.pq"
[[ $rc == 1 ]] || fail "exit $rc for 4 slots, expected 1"
expect_in "$ERR" "too small"
expect_error pqcreate -s 1M -S 0 -q "$SCRATCH/x.pq"
expect_error pqcreate -s 1M -S many -q "$SCRATCH/x.pq"
expect_error pqcreate -s 100 -q "$SCRATCH/x.pq"
expect_in "$ERR" "too small"
expect_error pqcreate -s 1M -S 4000000000 -q "$SCRATCH/x.pq"
expect_error pqcreate -s 900G -q "$SCRATCH/x.pq"
expect_in "$ERR" "free"
[[ ! -e $SCRATCH/x.pq ]] || fail "a refused queue was left behind"
[[ -z $(ls "$SCRATCH" | grep -F '.new') ]] || fail "temporary file left"
expect_error pqcreate -s 1M -q "$SCRATCH/no/such/dir/q.pq"
expect_in "$ERR" "No such file or directory"
ok "refusals"

# Command-line mistakes.
expect_error pqcreate -z
expect_in "$ERR" "unknown option -z"
expect_error pqcreate -s
expect_in "$ERR" "needs a value"
expect_error pqcreate 1M a b
expect_error pqcreate -s 1M 2M "$SCRATCH/y.pq"
expect_error pqcreate -q "$SCRATCH/y.pq" 1M "$SCRATCH/z.pq"
expect_rc 0 pqcreate -h
expect_in "$OUT" "usage: pqcreate"
ok "command line"

# -l: log to a file.
expect_error pqcreate -l "$SCRATCH/log" -s 10X -q "$SCRATCH/x.pq"
expect_rc 1 pqcreate -l "$SCRATCH/log" -s 1M -S 4 -q "$SCRATCH/x.pq"
expect_in "$SCRATCH/log" "too small"
[[ ! -s $ERR ]] || fail "pqcreate -l FILE wrote to stderr"
expect_error pqcreate -l "$SCRATCH/no/dir/log" -s 1M -q "$SCRATCH/x.pq"
ok "logging to a file"

# A 1 GB queue is created in well under a second (allocated, not written).
start=$(date +%s%N)
expect_rc 0 pqcreate -c -s 1G -q "$SCRATCH/big.pq"
ms=$((($(date +%s%N) - start) / 1000000))
((ms < 2000)) || fail "pqcreate of 1 GB took $ms ms"
ok "1 GB queue in $ms ms"
