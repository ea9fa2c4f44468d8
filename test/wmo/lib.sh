# shellcheck shell=bash
# lib.sh - sourced by the shell tests of pqing (pqing.sh, serial.sh).
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the programs (pqing and its names, pqcreate,
# pqcat), the directory of wmogen.
#
# Gives the test its scratch directory and registry (test/lib/common.sh)
# and the helpers below: fresh (a new queue $Q), products (what the queue
# holds, as wmogen writes it), check CASE (the queue holds CASE's expected
# products), holds_at_least N, ingest CASE NAME ARGS... (pqing as NAME on
# CASE's stream).

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
BIN=$(cd "${1:?directory of the programs}" && pwd)
TOOLS=$(cd "${2:?directory of wmogen}" && pwd)
scratch_init pqing /dev/shm
write_registry pqing-test.example.org
export PATH=$BIN:$TOOLS:$PATH
FAIL_LOGS=(OUT ERR LOG:log GOT:got WANT:expected)
cd "$SCRATCH" || fail "cd $SCRATCH"

# fresh: a new empty queue $Q.
n_queue=0
fresh() {
  n_queue=$((n_queue + 1))
  Q=$SCRATCH/q$n_queue.pq
  pqcreate -c -s 4M -q "$Q" >/dev/null 2>&1 || fail "pqcreate $Q"
}

# products: the queue's products as wmogen writes them (feedtype, seqno,
# identifier, size, signature), in insertion order.
products() {
  pqcat -q "$Q" -L -x -l /dev/null |
    sed -E 's/^([0-9a-f]{32}) +([0-9]+) [^ ]+ ([^ ]+) ([0-9]+)  (.*)$/\3\t\4\t\5\t\2\t\1/'
}

# holds_at_least N: the queue holds N products or more.
holds_at_least() {
  (($(products | wc -l) >= $1))
}

# check CASE: the queue holds exactly CASE's expected products.
check() {
  WANT=$SCRATCH/$1.want
  GOT=$SCRATCH/$1.got
  products >"$GOT"
  [[ -s $WANT ]] || fail "wmogen expects nothing of $1"
  diff "$WANT" "$GOT" >"$OUT" || fail "$1: the products differ from wmogen's"
}

# ingest CASE NAME ARGS...: make CASE's stream, run pqing as NAME on it
# into a fresh queue (log in $LOG), require exit 0.
ingest() {
  local kase=$1 name=$2
  shift 2
  expect_rc 0 wmogen make "$kase" "$kase.wmo" "$kase.want"
  fresh
  LOG=$SCRATCH/$kase.log
  expect_rc 0 "$BIN/$name" -v -l "$LOG" -q "$Q" "$@" "$kase.wmo"
  sanitizer_check "$LOG"
}

