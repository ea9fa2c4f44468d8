# shellcheck shell=bash
# lib.sh - sourced by scour's tests.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Argument: the path of the scour program.
#
# Gives the test its scratch directory (test/lib/common.sh) under $TMPDIR or
# /tmp, not /dev/shm (scour refuses /dev/shm itself, and tests under it
# would not exercise what sites use), with a registry whose data directory
# is $DATA, and the helpers the tests share.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# shellcheck disable=SC2034 # used by the tests
SCOUR=$(cd "$(dirname "${1:?path of scour}")" && pwd)/$(basename "$1")
scratch_init scour
DATA=$SCRATCH/data
# shellcheck disable=SC2034 # used by the tests
OUTSIDE=$SCRATCH/outside
CONF=$SCRATCH/scour.conf
mkdir -p "$DATA" "$OUTSIDE" "$LDMHOME/etc"
write_registry scour-test-host "  <pqact>
    <datadir-path>$DATA</datadir-path>
  </pqact>
  <queue>
    <path>$SCRATCH/ldm.pq</path>
  </queue>"
NOW=$(date +%s)

# aged SECONDS PATH...: create each PATH (and its directory) if missing and
# set its modification time SECONDS ago.  A symbolic link gets its own time
# (touch -h), never its target's.
aged() {
  local s=$1 p
  shift
  for p in "$@"; do
    if [[ -L $p ]]; then
      touch -h -d "@$((NOW - s))" "$p" || fail "touch -h $p"
    else
      mkdir -p "$(dirname "$p")"
      touch -d "@$((NOW - s))" "$p" || fail "touch $p"
    fi
  done
}

# conf LINE...: write scour.conf, one argument a line.
conf() {
  printf '%s\n' "$@" >"$CONF"
}

# deleted PATH...: each PATH is gone (not even a dangling link).
deleted() {
  local p
  for p in "$@"; do
    [[ ! -e $p && ! -L $p ]] || fail "$p was not deleted"
  done
}

# kept PATH...: each PATH is still there.
kept() {
  local p
  for p in "$@"; do
    [[ -e $p || -L $p ]] || fail "$p was deleted"
  done
}

# tree DIR: every path below DIR with its type, sorted, for comparisons.
tree() {
  find "$1" -printf '%y %p\n' | sort
}
