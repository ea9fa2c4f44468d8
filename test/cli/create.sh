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
ok "positional form and suffixes"

# Sizes are decimal, always (ldm_parse_size(), the registry's parser): a
# leading zero is only a zero (LDM's strtoul base 0 made 0500M octal, 320
# MB), and 0x is refused with a message that says so, where LDM took it.
expect_rc 0 pqcreate -f -s 0500M -q "$SCRATCH/zero.pq"
cap=$(pqmon -S -q "$SCRATCH/zero.pq" | awk '{print $2}')
((cap >= 500000000 && cap < 500000000 + 4096)) ||
  fail "-s 0500M: data capacity $cap, expected 500000000 rounded up to 4096"
rm -f "$SCRATCH/zero.pq"
expect_rc 0 pqcreate -s 0200704 -q "$SCRATCH/zero.pq"
[[ $(pqmon -S -q "$SCRATCH/zero.pq" | awk '{print $2}') == 200704 ]] ||
  fail "-s 0200704 is not 200704 bytes (octal would be 65988)"
rm -f "$SCRATCH/zero.pq"
expect_error pqcreate -s 0x10M -q "$SCRATCH/hex.pq"
[[ $rc == 1 ]] || fail "exit $rc for -s 0x10M, expected 1"
expect_in "$ERR" 'bad size "0x10M": not a size: sizes are decimal, 0x (hexadecimal) is not taken'
[[ ! -e $SCRATCH/hex.pq ]] || fail "-s 0x10M made a queue"
expect_error pqcreate -s 18446744073709551616 -q "$SCRATCH/big.pq"
expect_in "$ERR" 'too large'
expect_error pqcreate -s 18446744074G -q "$SCRATCH/big.pq"
expect_in "$ERR" 'too large'
ok "sizes are decimal: 0500M is 500 MB, 0x refused, overflow refused"

# Slot counts are integers as the registry reads them (ldm_parse_uint):
# 0100 is 100 slots on the command line and in /queue/slots (LDM's
# registry read 0100 as octal, 64), and 0x is refused with a message.
expect_rc 0 pqcreate -c -s 1M -S 0100 -q "$SCRATCH/oct.pq"
[[ $(pqmon -S -q "$SCRATCH/oct.pq" | awk '{print $5}') == 100 ]] ||
  fail "-S 0100 should give 100 slots"
expect_error pqcreate -c -s 1M -S 0x64 -q "$SCRATCH/oct.pq"
expect_in "$ERR" 'bad slot count "0x64": not an unsigned integer: integers are decimal, 0x (hexadecimal) is not taken'
cp "$LDM_REGISTRY" "$SCRATCH/registry.save"
expect_rc 0 regutil -s 0100 /queue/slots
expect_rc 0 regutil -T uint /queue/slots
[[ $(cat "$OUT") == 100 ]] || fail "regutil -T uint /queue/slots 0100 printed $(cat "$OUT")"
expect_rc 0 regutil -s 1M /queue/size
expect_rc 0 pqcreate -c -q "$SCRATCH/oct.pq"
[[ $(pqmon -S -q "$SCRATCH/oct.pq" | awk '{print $5}') == 100 ]] ||
  fail "/queue/slots 0100 should give 100 slots"
expect_error regutil -s 0x64 /queue/slots
cp "$SCRATCH/registry.save" "$LDM_REGISTRY"
ok "slot counts are decimal: 0100 is 100, 0x refused"

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
