#!/usr/bin/env bash
# pqact's state file, <conf>.state: its bytes are LDM's (three comment
# lines, then sec.usec); a restart after SIGTERM, or after kill -9 at the
# end of the queue, files every product inserted while pqact was down,
# once; a kill -9 in the middle of a stream of 2000 products loses none and
# files each at most once but the one under way; a state in the future is
# ignored (pqact starts at the end of the queue); -o overrides the state.
# Then LDM's warning when pqact reads the oldest product of a full queue,
# with how far behind the newest product it is, on a small queue that
# wraps while pqact is stopped (SIGSTOP).  Waits are for events (lines in
# files and logs, the process asleep or stopped), bounded.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
STATE=$CONF.state
HDR="# The following line contains the insertion-time of the last, successfully-
# processed data-product.  Do not modify it unless you know exactly what
# you're doing!"

expect_rc 0 pqcreate -s 8M -S 5000 -q "$Q"
printf 'EXP\t^P[0-9]+$\tFILE\tall\n' >"$CONF"

# insert FIRST LAST: products P<FIRST>..P<LAST> (four digits), data
# "P<n>\n", identifier P<n>, in one pqinsert.
insert() {
  local i names=()
  mkdir -p "$SCRATCH/p"
  for ((i = $1; i <= $2; i++)); do
    printf -v n 'P%04d' "$i"
    printf '%s\n' "$n" >"$SCRATCH/p/$n"
    names+=("$n")
  done
  (cd "$SCRATCH/p" && pqinsert -q "$Q" "${names[@]}") ||
    fail "pqinsert P$1..P$2 failed"
}

# lines_at_least FILE N
lines_at_least() {
  [[ -f $1 && $(wc -l <"$1") -ge $2 ]]
}

# each_once FIRST LAST [DUPS]: $DATA/all holds P<FIRST>..P<LAST>, each once
# but at most DUPS (default 0) of them twice, and nothing else.
each_once() {
  local want got dups
  want=$(for ((i = $1; i <= $2; i++)); do printf 'P%04d\n' "$i"; done)
  got=$(sort -u "$DATA/all")
  [[ $got == "$want" ]] || fail "all does not hold P$1..P$2 (missing: $(comm -23 <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ') extra: $(comm -13 <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' '))"
  dups=$(sort "$DATA/all" | uniq -d)
  [[ -z $dups || $(wc -l <<<"$dups") -le ${3:-0} ]] ||
    fail "filed more than once: $(echo "$dups" | head -5 | tr '\n' ' ')"
  [[ -z $(sort "$DATA/all" | uniq -c | awk '$1 > 2') ]] ||
    fail "a product filed three times or more"
}

# state_ok T0 T1: the state file is LDM's bytes (the three comment lines,
# then sec.usec of 6 digits and a newline, nothing else) for a time from
# T0 to T1 (seconds).
state_ok() {
  [[ -f $STATE ]] || fail "no state file $STATE"
  local rec sec
  rec=$(sed -n 4p "$STATE")
  [[ $rec =~ ^([0-9]+)\.[0-9]{6}$ ]] || fail "state record '$rec' is not sec.usec"
  sec=${BASH_REMATCH[1]}
  printf '%s\n%s\n' "$HDR" "$rec" | cmp -s - "$STATE" ||
    fail "the state file is not LDM's bytes: $(od -c "$STATE" | tail -4)"
  ((sec >= $1 && sec <= $2)) || fail "state time $sec not in [$1, $2]"
}

# ---- a first run, from the end of the queue; SIGTERM ----
t0=$(date +%s)
background "$PQACT" -l "$SCRATCH/log1" -d "$DATA" -i 600 "$CONF"
pid=$BG
wait_until 10 asleep_in "$pid" 'futex|poll|nanosleep' || fail "pqact never waited"
expect_in "$SCRATCH/log1" "Starting at tail-end of product-queue"
insert 1 3
wait_until 10 lines_at_least "$DATA/all" 3 || fail "P0001..P0003 not filed"
# kept current while it runs: the state is already there
wait_until 10 test -s "$STATE" || fail "no state file while pqact runs"
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc after SIGTERM"
sanitizer_check "$SCRATCH/log1"
expect_in "$SCRATCH/log1" "Last product processed was inserted"
state_ok "$t0" "$(date +%s)"
[[ ! -e $STATE.tmp ]] || fail "the temporary state file was left"
each_once 1 3
ok "the state file is LDM's bytes after SIGTERM"

# ---- products inserted while it was down: filed at the restart ----
insert 4 6
pqact_run -i 0 "$CONF"
((rc == 0)) || fail "pqact -i 0 exited $rc"
expect_in "$ERR" "Starting from insertion-time $(date -u +%Y-%m-%d)"
expect_not_in "$ERR" "tail-end"
each_once 1 6
ok "resume after SIGTERM: the products inserted while down, once"

# ---- kill -9 at the end of the queue ----
background "$PQACT" -l "$SCRATCH/log3" -d "$DATA" -i 600 "$CONF"
pid=$BG
wait_until 10 asleep_in "$pid" 'futex|poll|nanosleep' || fail "pqact never waited"
insert 7 9
wait_until 10 lines_at_least "$DATA/all" 9 || fail "P0007..P0009 not filed"
wait_until 10 asleep_in "$pid" 'futex|poll|nanosleep' || fail "pqact did not wait again"
kill -KILL "$pid"
{ wait "$pid"; } 2>/dev/null
state_ok "$t0" "$(date +%s)"
insert 10 12
pqact_run -i 0 "$CONF"
((rc == 0)) || fail "pqact -i 0 exited $rc"
each_once 1 12
ok "resume after kill -9 at the end of the queue: nothing lost, nothing twice"

# ---- kill -9 in the middle of 2000 products ----
# 200 more entries per product keep pqact busy long enough to be killed
# while it files; the entry that counts comes first, so the product under
# way at the kill may be filed twice (once before, once after).
{
  printf 'EXP\t^P[0-9]+$\tFILE\tall\n'
  for ((i = 0; i < 200; i++)); do
    printf 'EXP\t^P\tFILE\t-overwrite -close\tjunk/%d\n' "$i"
  done
} >"$CONF"
insert 1001 3000
background "$PQACT" -l "$SCRATCH/log4" -d "$DATA" -i 600 "$CONF"
pid=$BG
wait_until 60 lines_at_least "$DATA/all" 300 || fail "pqact did not start on the 2000"
kill -KILL "$pid"
{ wait "$pid"; } 2>/dev/null
n=$(wc -l <"$DATA/all")
((n < 12 + 2000)) || fail "pqact filed all 2000 before the kill: no test (make it slower)"
state_ok "$t0" "$(date +%s)"
pqact_run -i 0 "$CONF"
((rc == 0)) || fail "pqact -i 0 exited $rc"
{
  seq -f 'P%04g' 1 12
  seq -f 'P%04g' 1001 3000
} | sort >"$SCRATCH/want"
sort -u "$DATA/all" | cmp -s - "$SCRATCH/want" || fail "after the kill -9 in the middle, products are missing or extra"
dups=$(sort "$DATA/all" | uniq -d | wc -l)
((dups <= 1)) || fail "$dups products filed twice after a kill -9 in the middle"
[[ -z $(sort "$DATA/all" | uniq -c | awk '$1 > 2') ]] || fail "a product filed three times"
ok "kill -9 after $((n - 12)) of 2000 products: none lost, $dups (at most the one under way) twice"

# ---- a state in the future is ignored ----
printf 'EXP\t^P[0-9]+$\tFILE\tall\n' >"$CONF"
printf '%s\n%s.000000\n' "$HDR" $(($(date +%s) + 100000)) >"$STATE"
insert 3001 3001
pqact_run -i 0 "$CONF"
((rc == 0)) || fail "pqact -i 0 exited $rc"
expect_in "$ERR" "holds an insertion-time in the future"
expect_in "$ERR" "Starting at tail-end of product-queue"
grep -q P3001 "$DATA/all" && fail "a future state was not ignored: P3001 filed"
# and a negative one
printf '%s\n-5.000000\n' "$HDR" >"$STATE"
pqact_run -i 0 "$CONF"
expect_in "$ERR" "holds a negative insertion-time: ignored"
expect_in "$ERR" "Starting at tail-end of product-queue"
ok "a state in the future, or negative, is ignored: the end of the queue"

# ---- -o overrides the state ----
printf '%s\n%s\n' "$HDR" "$(date +%s.%6N)" >"$STATE" # after P3001's insertion
printf 'EXP\t^P[0-9]+$\tFILE\tagain\n' >"$CONF"
pqact_run -i 0 "$CONF"
[[ ! -e $DATA/again ]] || fail "a state of now: old products filed"
pqact_run -o "$ALL" -i 0 "$CONF"
expect_not_in "$ERR" "Starting from insertion-time"
{
  seq -f 'P%04g' 1 12
  seq -f 'P%04g' 1001 3001
} >"$SCRATCH/want"
sort "$DATA/again" | cmp -s - "$SCRATCH/want" || fail "-o did not take every product in the queue"
ok "-o overrides the state file"

# ---- the oldest product of a full queue ----
SMALL=$SCRATCH/small.pq
expect_rc 0 pqcreate -s 200k -S 10 -q "$SMALL"
printf 'EXP\t^W\tFILE\tw.out\n' >small.conf
background "$PQACT" -l "$SCRATCH/log5" -q "$SMALL" -d "$DATA" -i 600 small.conf
pid=$BG
wait_until 10 asleep_in "$pid" 'futex|poll|nanosleep' || fail "pqact never waited"
printf 'W00\n' >W00
expect_rc 0 pqinsert -q "$SMALL" W00
wait_until 10 lines_at_least "$DATA/w.out" 1 || fail "W00 not filed"
kill -STOP "$pid"
wait_until 10 eval "[[ \$(sed 's/.*) \(.\).*/\1/' /proc/$pid/stat) == T ]]" ||
  fail "pqact did not stop"
for ((i = 1; i <= 30; i++)); do
  printf -v n 'W%02d' "$i"
  printf '%s\n' "$n" >"$n"
done
expect_rc 0 pqinsert -q "$SMALL" W0[1-9] W[1-3][0-9]
kill -CONT "$pid"
wait_until 10 grep -q W30 "$DATA/w.out" || fail "W30 not filed after SIGCONT"
wait_until 10 grep -q 'Products might be deleted before being acted upon! Queue too small? System overloaded?' "$SCRATCH/log5" ||
  fail "no warning for the oldest product of a full queue"
expect_in "$SCRATCH/log5" "Processed oldest product in full queue: age="
expect_in "$SCRATCH/log5" "prod="
# LDM's two lines, word for word and whole (scripts grep for them), then ours
grep -qE 'WARN +Processed oldest product in full queue: age=[0-9.e+-]+ s, prod= +[0-9]+ [0-9]{14}\.[0-9]{6} EXP [0-9]{3}  W[0-9]{2}$' "$SCRATCH/log5" ||
  fail "the oldest-product warning is not LDM's: $(grep -F 'oldest product' "$SCRATCH/log5")"
grep -qE 'WARN +Products might be deleted before being acted upon! Queue too small\? System overloaded\?$' "$SCRATCH/log5" ||
  fail "the second warning is not LDM's whole line"
grep -qE 'WARN +[0-9.]+ s behind the newest product in the queue$' "$SCRATCH/log5" ||
  fail "the warning does not say how far behind pqact is"
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc"
[[ $(head -1 "$DATA/w.out") == W00 ]] || fail "w.out does not begin with W00"
ok "the oldest product of a full queue is warned about, with the lag"
