# shellcheck shell=bash
# lib.sh - sourced by every shell test of the queue utilities.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the programs, the path of pqclihelper.
#
# Gives the test its own scratch directory (on /dev/shm when it can: queues
# are memory-mapped) with its own registry file through $LDM_REGISTRY, so no
# test ever reads or writes a system path, and removes it at the end.  The
# helpers stop the test at the first failure with a message that says what
# was run and what it printed.  What the suites share (the scratch
# directory, cleanup, fail, run, expect_*, wait_until, background) is in
# test/lib/common.sh; here is what only this suite needs.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

BIN=$(cd "${1:?directory of the programs}" && pwd)
# shellcheck disable=SC2034 # used by the tests
HELPER=$(cd "$(dirname "${2:?path of pqclihelper}")" && pwd)/$(basename "$2")
scratch_init pqcli /dev/shm
Q=$SCRATCH/ldm.pq
write_registry cli-test-host "  <queue>
    <path>$Q</path>
    <size>2M</size>
  </queue>"
export PATH=$BIN:$PATH
FAIL_LOGS=(OUT:stdout ERR:stderr)
FAIL_BYTES=3000

# expect_error CMD...: a clean failure: non-zero status that is not a
# signal (no crash), and a message on stderr.
expect_error() {
  run "$@"
  ((rc != 0)) || fail "'$*' exited 0, expected a failure"
  ((rc < 128)) || fail "'$*' died of a signal (status $rc)"
  [[ -s $ERR ]] || fail "'$*' failed without a message on stderr"
}

# make_files DIR N SIZE: N files of SIZE random bytes, DIR/f00000 ...
make_files() {
  mkdir -p "$1"
  head -c $(($2 * $3)) /dev/urandom | split -b "$3" -a 5 -d - "$1/f"
}

# mon_field N [QUEUE]: field N of `pqmon -S` for QUEUE (default $Q).
mon_field() {
  pqmon -S -q "${2:-$Q}" | awk -v n="$1" '{print $n}'
}

# prods_are N: does the queue hold N products (for wait_until)?
prods_are() {
  [[ $(mon_field 7) == "$1" ]]
}

# What lets a test wait for another process to be inside a blocking call,
# instead of for a time:

# asleep [QUEUE [N]]: are at least N (default 1) readers asleep in
# pq_wait() on QUEUE (default $Q), their bits set in hd_sleepers?
asleep() {
  local n
  n=$("$HELPER" sleepers "${1:-$Q}") && ((n >= ${2:-1}))
}

# waiting_for_lock FILE: is some process blocked in fcntl(F_OFD_SETLKW) for
# a lock on FILE (a "->" line of /proc/locks for its device and inode)?
# Used with `pqclihelper lock`, which holds the queue's control lock.
waiting_for_lock() {
  local dev ino
  read -r dev ino < <(stat -c '%d %i' "$1") || return 1
  awk -v id="$(printf '%02x:%02x:%d' $((dev >> 8)) $((dev & 0xff)) "$ino")" \
    '$2 == "->" && $0 ~ (" " id " ") { n++ } END { exit n == 0 }' /proc/locks
}

# has_open PID FILE: has PID FILE open (a link of /proc/PID/fd)?
has_open() {
  local f want
  want=$(readlink -f "$2")
  for f in /proc/"$1"/fd/*; do
    [[ $(readlink "$f" 2>/dev/null) == "$want" ]] && return 0
  done
  return 1
}
