#!/usr/bin/env bash
# pqutil (pqutils/ops/pqutil.1) as scripts use it.  -w: once it follows
# the queue (test/cli's helper counts the sleepers), a log line with LDM's
# product text for each product of -f's feedtype inserted from then on, at
# INFO without -v, none for the others nor for those inserted before;
# SIGINT and SIGTERM stop it (exit 0); -x adds the signature.  -C: the
# queue's minimum virtual residence time, set by filling the queue, is
# cleared (pqmon -S's field).  Refusals: the interactive mode, creating a
# queue, -C with -r, no queue.
source "$(dirname "$0")/lib.sh" "$@"
HELPER=${3:?path of pqclihelper}
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -q "$Q" -s 2M
insert() { printf '%s' "$2" | pqinsert -q "$Q" -f "$1" -p "$2" || fail "pqinsert $2"; }
insert IDS before.ids
asleep() {
  local n
  n=$("$HELPER" sleepers "$Q") && ((n >= 1))
}

# watch_with SIGNAL [OPTIONS...]: watch IDS|DDPLUS products, insert, check
# the lines, stop with SIGNAL.
watch_with() {
  local sig=$1 w
  shift
  local err=$SCRATCH/watch.$sig
  background pqutil -l - -r -f 'IDS|DDPLUS' "$@" -w "$Q" 2>"$err"
  w=$BG
  wait_until 10 asleep || fail "pqutil -w does not follow the queue: $(cat "$err")"
  insert IDS "ids.$sig"
  insert HDS "hds.$sig"
  insert DDPLUS "dd.$sig"
  wait_until 10 grep -q " dd\.$sig\$" "$err" || fail "no line of dd.$sig: $(cat "$err")"
  grep -qE "pqutil\[[0-9]+\] .* INFO  +([0-9a-f]{32} +)?[0-9]+ [0-9]{14}\.[0-9]{6} IDS [0-9]{3}  ids\.$sig\$" "$err" ||
    fail "no INFO line with LDM's product text for ids.$sig: $(cat "$err")"
  ! grep -q "hds\.$sig\|before\.ids" "$err" || fail "lines of products -f leaves out, or inserted before: $(cat "$err")"
  stop_expect "$w" "pqutil -w" "$sig" 10 0 "$err"
  WATCH_ERR=$err
}
watch_with INT
watch_with TERM -x
grep -qE "INFO  [0-9a-f]{32} +[0-9]+ [0-9]{14}" "$WATCH_ERR" || fail "-x: no signature in the lines"
ok "-w: the products of -f inserted from then on, LDM's text at INFO; SIGINT, SIGTERM; -x signatures"

# -C: fill the queue past full (its MVRT is then set), clear it.
head -c 200000 /dev/urandom >big.0
for i in $(seq 1 14); do
  { cat big.0; echo "$i"; } >"big.$i"
  pqinsert -q "$Q" "big.$i" || fail "pqinsert big.$i"
done
mvrt() { pqmon -S -q "$Q" | awk '{ print $10 }'; }
[[ $(mvrt) != -1 ]] || fail "no MVRT after filling the queue: $(pqmon -S -q "$Q")"
expect_rc 0 pqutil -l - -C "$Q"
[[ $(mvrt) == -1 ]] || fail "-C did not clear the MVRT: $(pqmon -S -q "$Q")"
ok "-C clears the minimum virtual residence time"

expect_rc 1 pqutil "$Q"
expect_in "$ERR" "the interactive commands are not provided"
expect_rc 1 pqutil -c -s 1M "$Q"
expect_in "$ERR" "pqcreate does"
expect_rc 1 pqutil -r -C "$Q"
expect_in "$ERR" "not with -r"
expect_rc 1 pqutil -l - -w "$SCRATCH/none.pq"
expect_rc 1 pqutil -f NOSUCHFEED -w "$Q"
expect_rc 0 pqutil -P -L -F -M -l - -C "$Q"
expect_rc 0 pqutil -h
expect_in "$OUT" "usage: pqutil"
ok "refusals; LDM's open flags taken"
