#!/usr/bin/env bash
# pqact under a low open-file limit (`ulimit -n 32`, more if the test
# inherited descriptors), with a table of 200 entries each appending to its
# own file, products coming round-robin so that every one needs a file
# that is not open: the outputs are kept within LDM's limit (the
# open-file limit less 7), the least recently used closed first; when
# open(2) fails with EMFILE anyway, because pqact's own
# descriptors or ones it inherited hold the rest, the least recently used
# is closed and the open retried.  Each case: every product's bytes in
# the right file (byte for byte), no error, pqact goes on.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
FAIL_SHOW='tail'
seed_init # the products' sizes: PQ_TEST_SEED=N replays them

N=200
# 32, plus the descriptors this shell would pass on to pqact (a runner's,
# not close-on-exec), so that the cases do not depend on how the test was
# started
held=0
for l in "/proc/$$/fdinfo"/*; do
  n=${l##*/}
  flags=$(sed -n 's/^flags:[[:space:]]*//p' "$l" 2>/dev/null) || continue
  ((n < 3 || n >= 1024 || (8#${flags:-0} & 02000000) != 0)) || held=$((held + 1))
done
LIMIT=$((32 + held))
MAX=$((LIMIT - 7)) # LDM's: (openMax() - 6) - 1
expect_rc 0 pqcreate -s 2M -S 1000 -q "$Q"
mkdir -p want

# table DIR: one entry per file, ^fNNN_ to DIR/fNNN, appended to.
table() {
  local i
  for ((i = 0; i < N; i++)); do
    printf 'EXP\t^f%03d_\tFILE\t%s/f%03d\n' "$i" "$1" "$i"
  done
}

# round R: one product per file, in file order, each of its own size;
# what LDM appends goes to want/fNNN too.
round() {
  local i f
  for ((i = 0; i < N; i++)); do
    f=$(printf 'f%03d' "$i")
    { printf '%s round %s\n' "$f" "$1"; head -c $((RANDOM % 200)) /dev/urandom; } >prod
    cat prod >>"want/$f"
    put EXP "$i" "$(date +%s)" 0 here "${f}_$1" prod
  done
}

# all_same DIR: every DIR/fNNN is want/fNNN, byte for byte.
all_same() {
  local i f
  for ((i = 0; i < N; i++)); do
    f=$(printf 'f%03d' "$i")
    cmp -s "$DATA/$1/$f" "want/$f" || return 1
  done
}

# low_limit CMD...: CMD under `ulimit -n $LIMIT`, in this process (a
# program, not a function, so that background's pid is CMD's).
# shellcheck disable=SC2016 # expanded by that bash
low_limit=(bash -c 'ulimit -n "$0" && exec "$@"' "$LIMIT")

# ---- 1: 400 products through a cache of 25, then exit ----
table out >"$CONF"
round 1
round 2
run "${low_limit[@]}" "$PQACT" -x -l- -d "$DATA" -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact under ulimit -n $LIMIT exited $rc"
expect_not_in "$ERR" "ERROR"
all_same out || fail "a file differs from what LDM writes (out/)"
lru=$(grep -c 'deleting least-recently-used FILE entry: path="out/' "$ERR")
closed=$(grep -c 'deleting closed FILE entry: path="out/' "$ERR")
((lru + closed == 2 * N)) || fail "$lru + $closed closes for $((2 * N)) opens"
((closed <= MAX && lru >= 2 * N - MAX)) ||
  fail "$closed outputs open at the end, more than $MAX"
ok "ulimit -n $LIMIT: $((2 * N)) products to $N files through at most $MAX outputs, least recently used closed first"

# ---- 2: a running pqact goes on ----
rm -f "$CONF.state" # start at the end, not after the last run
background "${low_limit[@]}" "$PQACT" -l "$SCRATCH/bg.log" -d "$DATA" -i 600 "$CONF"
wait_until 10 grep -qs "Starting at tail-end" "$SCRATCH/bg.log" ||
  fail "pqact did not start: $(cat "$SCRATCH/bg.log")"
round 3
wait_until 30 all_same out || fail "round 3 not filed right within 30 s"
open=0
for l in /proc/"$BG"/fd/*; do
  [[ $(readlink "$l") != "$DATA/out/"* ]] || open=$((open + 1))
done
((open > 0 && open <= MAX)) || fail "pqact holds $open outputs, not 1 to $MAX"
stop_within "$BG" TERM 10
((rc == 0)) || fail "pqact exited $rc after SIGTERM"
expect_not_in "$SCRATCH/bg.log" "ERROR"
ok "a running pqact under ulimit -n $LIMIT files a new round, $open outputs open"

# ---- 3: descriptors held by something else: EMFILE from open(2) ----
# 12 inherited descriptors (not close-on-exec) leave pqact room for fewer
# outputs than its limit says; all 600 products go to out2/.
table out2 >"$CONF"
# shellcheck disable=SC2016 # expanded by that bash
run "${low_limit[@]}" bash -c 'for i in $(seq 12); do exec {fd}</dev/null; done
  exec "$@"' leak "$PQACT" -x -l- -d "$DATA" -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact with 12 descriptors taken exited $rc"
expect_not_in "$ERR" "ERROR"
all_same out2 || fail "a file differs from what LDM writes (out2/)"
expect_in "$ERR" 'Too many open files: closing least-recently-used outputs to retry'
[[ $(grep -c 'WARN.*Too many open files' "$ERR") == 1 ]] ||
  fail "the EMFILE warning is not said once"
# each retry says how many were open: fewer than pqact's limit, so the
# kernel, not the limit, refused
grep -o 'Too many open files: closing the least-recently-used output ([0-9]* open)' \
  "$ERR" | grep -o '[0-9]*' >retries
(($(wc -l <retries) >= 2 * N)) || fail "only $(wc -l <retries) EMFILE retries logged"
while read -r n; do
  ((n < MAX)) || fail "an EMFILE retry with $n outputs open, not fewer than $MAX"
done <retries
ok "EMFILE with $(sort -u retries | tr '\n' ' ')outputs open: closed and retried, every byte filed"
