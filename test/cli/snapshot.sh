#!/usr/bin/env bash
# pqsave and pqrestore: a snapshot of a queue taken while a writer keeps
# inserting (and evicting) restores to a queue with the same products, the
# same insertion times and the same bytes (saving the restored queue gives
# the same snapshot); damaged, truncated and foreign files restore nothing.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 2M -S 2000
make_files f 4000 2000
expect_rc 0 pqinsert f/f00*

# The load: pqinsert runs over 4000 files again and again; the queue holds
# about 1000 of them, so it evicts all the time and evicted files go back in.
background bash -c "while [[ ! -e stop ]]; do for d in 0 1 2 3; do
  pqinsert -q '$Q' f/f0\${d}* 2>/dev/null; done; done"
load=$BG
# It runs once it puts in files the first pqinsert did not: f/f01*.
wait_until 30 eval '"$HELPER" dump "$Q" | grep -q " f/f01"' ||
  fail "the load did not start"

for round in 1 2 3; do
  expect_rc 0 pqsave "$Q" snap$round
  expect_in "$ERR" "saved "
  n=$(sed -n 's/.*saved \([0-9]*\) products.*/\1/p' "$ERR")
  # How many depends on the machine: the writer evicts the products the
  # walk has not reached yet (pqsave.1), and on a loaded machine it may
  # outrun the walk by far (14 of about 1000 seen under load 11).
  ((n > 0)) || fail "no product saved"
  expect_rc 0 pqrestore snap$round r$round.pq
  expect_in "$ERR" "restored $n of $n products"
  expect_rc 0 pqsave r$round.pq again$round
  cmp -s -i 64 snap$round again$round ||
    fail "round $round: the restored queue saves to a different snapshot"
  "$HELPER" dump r$round.pq >dump$round || fail "dump"
  [[ $(wc -l <dump$round) == "$n" ]] || fail "restored queue holds $(wc -l <dump$round), not $n"
  sort -n -c -u -k1,1 dump$round || fail "insertion times not increasing"
  expect_rc 0 pqcat -c -q r$round.pq
  expect_not_in "$ERR" "signature mismatch"
  expect_rc 0 pqcheck -C -q r$round.pq
  ok "round $round: $n products saved under load, restored identical"
done
# The writer really was running: the queue was full and kept evicting, so
# the snapshots of the first and last rounds hold different products.
touch stop
wait "$load"
[[ $(mon_field 1) == 1 ]] || fail "the load never filled the queue"
cmp -s dump1 dump3 && fail "the queue did not change between rounds 1 and 3"

# Quiet now: the restored queue holds exactly what the queue held, with the
# same insertion times, metadata and signatures.
expect_rc 0 pqsave "$Q" final.snap
"$HELPER" dump "$Q" >live.dump || fail "dump"
expect_rc 0 pqrestore final.snap final.pq
cmp -s live.dump <("$HELPER" dump final.pq) ||
  fail "the restored queue differs from the queue saved"
cmp -s <(pqcat -q "$Q" 2>/dev/null) <(pqcat -q final.pq 2>/dev/null) ||
  fail "the restored data differ"
ok "restored = saved: $(wc -l <live.dump) products, same insertion times"

# Restoring into an existing queue: duplicates skipped, exit 0.
expect_rc 0 pqrestore snap1 r1.pq
expect_in "$ERR" "restored 0 of"
expect_in "$ERR" "duplicates skipped"
cmp -s <("$HELPER" dump r1.pq) dump1 || fail "a second restore changed r1.pq"
# -s and -S size a queue the restore creates; standard output works.
expect_rc 0 pqrestore -s 5M -S 3000 snap1 sized.pq
[[ $(pqmon -S -q sized.pq | awk '{print $5}') == 3000 ]] || fail "-S ignored"
pqsave "$Q" - >stdout.snap 2>"$ERR" || fail "pqsave to stdout"
expect_rc 0 pqrestore stdout.snap -q fromstdout.pq
ok "existing queue, -s/-S, standard output"

# An empty queue.
expect_rc 0 pqcreate -s 1M -q empty.pq
expect_rc 0 pqsave empty.pq empty.snap
expect_rc 0 pqrestore empty.snap empty2.pq
expect_in "$ERR" "restored 0 of 0"
ok "empty queue"

# Damage of every kind: refused, nothing created, a clear message.
size=$(stat -c %s snap1)
cp snap1 flipped
printf '\xff' | dd of=flipped bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cmp -s flipped snap1 && printf '\x00' | dd of=flipped bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect_rc 1 pqrestore flipped bad1.pq
expect_in "$ERR" "nothing restored"
[[ ! -e bad1.pq ]] || fail "a damaged snapshot created a queue"
head -c $((size - 10)) snap1 >truncated
expect_rc 1 pqrestore truncated bad2.pq
expect_in "$ERR" "truncated"
head -c 64 snap1 >headonly
expect_rc 1 pqrestore headonly bad3.pq
expect_in "$ERR" "without its trailer"
head -c 30 snap1 >short
expect_rc 1 pqrestore short bad4.pq
expect_in "$ERR" "truncated"
cat snap1 snap1 >doubled
expect_rc 1 pqrestore doubled bad5.pq
head -c 5000 /dev/urandom >random
expect_rc 1 pqrestore random bad6.pq
expect_in "$ERR" "not a queue snapshot"
expect_rc 1 pqrestore none.snap bad7.pq
expect_in "$ERR" "No such file or directory"
# A record cut out of the middle: the chain checksum or the framing fails.
rec_end=$(( $(grep -abo 'PQSR' snap1 | sed -n 3p | cut -d: -f1) ))
rec_start=$(( $(grep -abo 'PQSR' snap1 | sed -n 2p | cut -d: -f1) ))
{ head -c "$rec_start" snap1; tail -c +$((rec_end + 1)) snap1; } >spliced
expect_rc 1 pqrestore spliced bad8.pq
ls bad*.pq >/dev/null 2>&1 && fail "a refused snapshot created a queue"
ok "damaged, truncated, doubled, spliced, foreign: refused"

expect_error pqsave "$Q" "$SCRATCH/no/such/dir/snap"
expect_error pqsave none.pq x.snap
[[ ! -e x.snap ]] || fail "a failed save left a file"
expect_error pqsave
expect_error pqsave -s 1M "$Q" y.snap
expect_error pqrestore -s 10X snap1 z.pq
expect_error pqrestore
[[ -z $(ls | grep '\.tmp') ]] || fail "temporary files left: $(ls | grep '\.tmp')"
ok "bad input"
