#!/usr/bin/env bash
# pqact -e and FILE -edex (our pqutils/pqact/pqact.1, EDEX NOTICES): the
# System V ring of notices AWIPS's edexBridge reads, read here by
# edexreader, which attaches and reads as edexBridge does (its ftok keys,
# semget, shmget sized by sem[0], shmat, sem[1] polled, the ring gone
# round its way) with its own copy of LDM's slot layout.
#   1. A reader attached from the start sees the empty slot 0 of a new
#      ring, then every notice once, in order, with its path (as the
#      action gives it, absolute or relative) and identifier, across the
#      wrap at 5000 (7200 notices, in batches the reader keeps up with);
#      FILE without -edex gives none; a second pqact -e on the same ring
#      meanwhile is refused, and changes nothing.
#   2. A reader stopped while 3600 notices are written (the ring goes
#      round meanwhile) takes them all when it goes on.
#   3. A reader stopped while 6000 are written has lost all but the newest
#      1000 (5000 slots): pqact never waits for it, and files every
#      product.
#   4. pqact killed (kill -9) and started again while the reader stays:
#      the ring is kept, notices go on after the last, none twice.
#   5. SIGTERM: "Deleting shared segment.", the segment and semaphores
#      are gone (ipcs), the reader sees the ring go.
#   6. No reader: pqact -e files 6000 products all the same; a reader that
#      attaches later takes what the ring holds; a ring left by a killed
#      pqact that nobody reads is started again (slot 0 empty, sem[1] 0).
#   7. AWIPS's -k and -s make other keys; a -k of two characters is a usage
#      error.
# Each test names its rings by a file of its scratch directory
# (PQACT_EDEX_FTOK_PATH) whose keys no ring has yet, so that tests run in
# parallel, and removes whatever has those keys at exit (ipcrm).  Waits
# are for events (lines, files, logs, process states), never for a time.
source "$(dirname "$0")/lib.sh" "$@"
READER=$(cd "$(dirname "${4:?path of edexreader}")" && pwd)/$(basename "$4")
cd "$SCRATCH" || fail "cd"
tab=$'\t'
LOG=$SCRATCH/log
FAIL_LOGS=(LOG:log ERR:stderr RERR:reader PERR:pqact)
RERR=$SCRATCH/reader.err
PERR=$SCRATCH/pqact.err # the background pqacts' stderr (sanitizers)
IPC_KEYS=() # "shmkey semkey" of every ring this test may make

# ipc_cleanup: remove the test's rings, after its processes.
ipc_cleanup() {
  local p k s
  for p in "${BG_PIDS[@]}"; do
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  for k in "${IPC_KEYS[@]}"; do
    read -r k s <<<"$k"
    ipcrm -M "$k" 2>/dev/null
    ipcrm -S "$s" 2>/dev/null
  done
}
trap 'st=$?; ipc_cleanup; cleanup "$st"' EXIT

# free_keys [-k c -s c]: a file of the scratch directory no ring has the
# keys of yet, in KEYFILE (another file, another inode, other keys).
free_keys() {
  local i
  for ((i = 0; i < 50; i++)); do
    KEYFILE=$SCRATCH/ftok.$i
    : >"$KEYFILE"
    if "$READER" "$@" keys "$KEYFILE" >"$SCRATCH/keys"; then
      IPC_KEYS+=("$(cat "$SCRATCH/keys")")
      return 0
    fi # else in use by another: not ours to remove
  done
  fail "no free ring keys in 50 files"
}
free_keys
export PQACT_EDEX_FTOK_PATH=$KEYFILE

expect_rc 0 pqcreate -s 32M -S 30000 -q "$Q"
mkdir -p in

cat >"$CONF" <<CONF
EXP${tab}^P([0-9]+)\$${tab}FILE${tab}-edex -close${tab}$DATA/each/P\\1
EXP${tab}^P[0-9]+[05]\$${tab}FILE${tab}-edex${tab}app/every5
EXP${tab}^P([0-9]+)\$${tab}FILE${tab}-close${tab}plain/P\\1
CONF

# NOTICES[n]: "path TAB ident" of the n-th notice (from 1), by the rules
# (EVERY5: whether the rule of app/every5 is in the table).
NOTICES=("")
EVERY5=1
# insert FIRST LAST: products P<FIRST>..P<LAST> (five digits), data the
# identifier and a newline, with the notices they give.
insert() {
  local i id names=()
  for ((i = $1; i <= $2; i++)); do
    printf -v id 'P%05d' "$i"
    printf '%s\n' "$id" >"in/$id"
    names+=("$id")
    NOTICES+=("$DATA/each/$id$tab$id")
    if ((EVERY5 && i % 5 == 0)); then
      NOTICES+=("app/every5$tab$id")
    fi
  done
  (cd in && pqinsert -f EXP -q "$Q" "${names[@]}") >"$OUT" 2>"$ERR" ||
    fail "pqinsert $1..$2 failed"
}
# expected FROM TO: the reader's lines for notices FROM..TO (slot = n mod
# 5000: the first notice of a new ring goes into slot 1).
expected() {
  local n
  for ((n = $1; n <= $2; n++)); do
    printf '%d\t%s\n' $((n % 5000)) "${NOTICES[n]}"
  done
}
lines_exactly() {
  [[ -f $1 ]] && (($(wc -l <"$1") == $2))
}
lines_at_least() {
  [[ -f $1 ]] && (($(wc -l <"$1") >= $2))
}
# same_lines GOT WANT: the reader's lines are these, or fail showing where.
same_lines() {
  cmp -s "$1" "$2" || fail "the reader's notices differ from the rules':
$(diff "$2" "$1" | head -20)"
}
log_has() {
  grep -qF -- "$1" "$LOG"
}
# starts: how many times pqact has logged where in the queue it starts.
starts() {
  grep -cE 'Starting (at tail-end of product-queue|from insertion-time)' "$LOG"
}
more_starts() {
  (($(starts) > $1))
}
# start_pqact ARGS: pqact in the background (PQ), once it waits at the
# end of the queue.
start_pqact() {
  local n
  : >>"$LOG"
  n=$(starts)
  background "$PQACT" -l "$LOG" -d "$DATA" -i 600 "$@" "$CONF" 2>>"$PERR"
  PQ=$BG
  wait_until 30 more_starts "$n" || fail "pqact did not start"
  wait_until 30 asleep_in "$PQ" 'futex|poll|nanosleep' ||
    fail "pqact never waited for products"
}
# start_reader OUT ARGS: the reader in the background (RD), once attached.
start_reader() {
  local out=$1
  shift
  background "$READER" "$@" read "$KEYFILE" "$out" 2>>"$RERR"
  RD=$BG
  wait_until 60 test -f "$out.attached" || fail "the reader did not attach"
}
# filed N: pqact has filed the product P<N> (the last rule's file).
filed() {
  local id
  printf -v id 'P%05d' "$1"
  [[ -f $DATA/$LAST_RULE/$id ]]
}
LAST_RULE=plain

# ---- 1. every notice once, in order, across the wrap ----
RD_OUT=$SCRATCH/notices
background "$READER" read "$KEYFILE" "$RD_OUT" 2>>"$RERR" # waits for the ring
RD=$BG
start_pqact -e
log_has "EDEX ring: 5000 slots, shared memory key $(cut -d' ' -f1 keys)" ||
  fail "pqact -e did not say its ring"
wait_until 60 test -f "$RD_OUT.attached" || fail "the reader did not attach"
[[ $(cat "$RD_OUT.attached") == 5000 ]] ||
  fail "sem[0] is $(cat "$RD_OUT.attached"), not 5000"
for b in 0 1 2 3 4 5; do
  if ((b == 3)); then # a second pqact -e on the ring: refused, harmless
    printf 'EXP\t^NONE$\tNOOP\n' >none.conf
    expect_rc 0 "$PQACT" -e -l- -d "$DATA" -i 0 none.conf
    expect_in "$ERR" "another pqact (pid $PQ) writes the EDEX ring"
    expect_not_in "$ERR" "Deleting shared segment."
  fi
  insert $((b * 1000 + 1)) $((b * 1000 + 1000))
  want=$((${#NOTICES[@]})) # the empty slot 0, then the notices
  wait_until 60 lines_at_least "$RD_OUT" "$want" ||
    fail "batch $b: the reader has $(wc -l <"$RD_OUT") notices, not $want"
done
{
  printf '0\t\t\n'
  expected 1 7200
} >want1
same_lines "$RD_OUT" want1
same "$DATA/each/P05432" in/P05432
[[ $(wc -l <"$DATA/app/every5") == 1200 ]] || fail "app/every5 lacks products"
ok "a reader from the start: slot 0 empty, then 7200 notices once, in order, across the wrap at 5000; a second pqact -e refused"

# ---- 2. a reader stopped within the ring's reach ----
kill -STOP "$RD"
insert 6001 9000 # 3600 notices: 7201..10800, round the end again
wait_until 60 filed 9000 || fail "pqact did not file P09000"
wait_until 60 lines_exactly "$DATA/app/every5" 1800 ||
  fail "pqact did not append to app/every5"
kill -CONT "$RD"
wait_until 60 lines_at_least "$RD_OUT" 10801 ||
  fail "the reader behind has $(wc -l <"$RD_OUT") notices, not 10801"
expected 7201 10800 >>want1
same_lines "$RD_OUT" want1
ok "a reader 3600 notices behind takes them all, round the end"

# ---- 3. a reader lapped: the newest 1000 of 6000 ----
kill -STOP "$RD"
insert 9001 14000 # 6000 notices: 10801..16800
wait_until 60 filed 14000 || fail "pqact did not file P14000"
wait_until 60 lines_exactly "$DATA/app/every5" 2800 ||
  fail "pqact did not append to app/every5"
kill -CONT "$RD"
wait_until 60 lines_at_least "$RD_OUT" 11801 ||
  fail "the lapped reader has $(wc -l <"$RD_OUT") notices, not 11801"
expected 15801 16800 >>want1
same_lines "$RD_OUT" want1
[[ $(find "$DATA/each" -type f | wc -l) == 14000 ]] ||
  fail "pqact did not file every product while the reader was stopped"
ok "a reader 6000 behind has only the newest 1000; pqact filed everything without waiting"

# ---- 4. pqact killed and started again, the reader staying ----
kill -KILL "$PQ"
wait "$PQ" 2>/dev/null
"$READER" state "$KEYFILE" >ring.state || fail "the ring went with pqact's kill -9"
[[ $(cat ring.state) == "slots=5000 last=1800 readers=1" ]] ||
  fail "the ring after kill -9: $(cat ring.state)"
start_pqact -e
log_has "EDEX ring: going on in the ring that exists, read by 1 reader, after slot 1800" ||
  fail "pqact did not go on in the ring"
insert 14001 15000 # 1200 notices: 16801..18000
wait_until 60 lines_at_least "$RD_OUT" 13001 ||
  fail "after the restart the reader has $(wc -l <"$RD_OUT") notices, not 13001"
expected 16801 18000 >>want1
same_lines "$RD_OUT" want1
ok "pqact killed and started again: the same ring, notices go on, none twice"

# ---- 5. SIGTERM: the ring removed ----
stop_expect "$PQ" pqact TERM 30 0 "$LOG"
log_has "Deleting shared segment." || fail "no 'Deleting shared segment.'"
wait_until 30 gone "$RD" || fail "the reader did not see the ring go"
wait "$RD"
(($? == 3)) || fail "the reader did not exit 3 (ring removed)"
expect_rc 0 "$READER" keys "$KEYFILE"
ok "SIGTERM: 'Deleting shared segment.', the segment and semaphores gone"

# ---- 6. no reader ----
: >"$LOG"
NOTICES=("")
cat >"$CONF" <<CONF
EXP${tab}^P([0-9]+)\$${tab}FILE${tab}-edex -close${tab}$DATA/each/P\\1
CONF
EVERY5=0
LAST_RULE=each
start_pqact -e
rm -rf "$DATA/each"
insert 20001 26000 # 6000 notices, nobody reading
wait_until 60 filed 26000 || fail "pqact -e without a reader did not file P26000"
[[ $(find "$DATA/each" -type f | wc -l) == 6000 ]] ||
  fail "pqact -e without a reader did not file every product"
start_reader "$SCRATCH/late"
wait_until 30 lines_at_least "$SCRATCH/late" 1001 ||
  fail "the late reader has $(wc -l <"$SCRATCH/late") notices, not 1001"
expected 5000 6000 >want6 # slots 0..1000: the newest of the ring
same_lines "$SCRATCH/late" want6
ok "no reader: pqact -e files 6000 all the same; a reader attaching later takes slots 0..1000"
kill -TERM "$RD" && wait "$RD"
kill -KILL "$PQ"
wait "$PQ" 2>/dev/null
"$READER" state "$KEYFILE" >ring.state || fail "the ring went with pqact's kill -9"
[[ $(cat ring.state) == "slots=5000 last=1000 readers=0" ]] ||
  fail "the ring left by kill -9: $(cat ring.state)"
start_pqact -e
log_has "EDEX ring: the ring that exists has no reader: started again" ||
  fail "pqact did not start the ring nobody reads again"
"$READER" state "$KEYFILE" >ring.state
[[ $(cat ring.state) == "slots=5000 last=0 readers=1" ]] ||
  fail "the ring started again: $(cat ring.state)"
start_reader "$SCRATCH/again"
NOTICES=("")
insert 26001 26002
wait_until 30 lines_at_least "$SCRATCH/again" 3 ||
  fail "the reader of the ring started again has $(wc -l <"$SCRATCH/again") lines"
{
  printf '0\t\t\n'
  expected 1 2
} >want6b
same_lines "$SCRATCH/again" want6b
stop_expect "$PQ" pqact TERM 30 0 "$LOG"
wait_until 30 gone "$RD" || fail "the reader did not see the ring go"
expect_rc 0 "$READER" keys "$KEYFILE"
ok "a ring left by a killed pqact that nobody reads starts again: no old notice"

# ---- 7. AWIPS's -k and -s ----
free_keys -k X -s y
export PQACT_EDEX_FTOK_PATH=$KEYFILE
: >"$LOG"
start_pqact -e -k X -s y
start_reader "$SCRATCH/ks" -k X -s y
NOTICES=("")
insert 26003 26003
wait_until 30 lines_at_least "$SCRATCH/ks" 2 || fail "no notice through -k X -s y"
{
  printf '0\t\t\n'
  expected 1 1
} >want7
same_lines "$SCRATCH/ks" want7
stop_expect "$PQ" pqact TERM 30 0 "$LOG"
expect_rc 0 "$READER" -k X -s y keys "$KEYFILE"
expect_rc 1 "$PQACT" -e -k XY -q /dev/null "$CONF"
expect_in "$ERR" "-k takes one character"
ok "-k and -s: the ring of other keys; -k XY a usage error"
sanitizer_check "$PERR" "the sanitizers found an error in a pqact"
sanitizer_check "$RERR" "the sanitizers found an error in a reader"
