# shellcheck shell=bash
# lib.sh - sourced by the tests of the small tools (test/ops/tests.cmake).
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the built programs (every program of the
# build, ldmd's and the queue utilities' too), which goes first in PATH,
# and pqutils/ops/ of the source tree (the shell scripts, run from there).
#
# Gives the test its scratch directory and registry (test/lib/common.sh)
# naming a queue ($Q) and a log file ($LOG, the LDM log), and the helpers
# the tests share.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

BIN=$(cd "${1:?directory of the programs}" && pwd)
OPS=$(cd "${2:?pqutils/ops of the source tree}" && pwd)
export PATH=$BIN:$PATH
scratch_init ops /dev/shm
mkdir -p "$LDMHOME" "$SCRATCH/logs"
Q=$SCRATCH/ldm.pq
LOG=$SCRATCH/logs/ldmd.log
write_registry ops-test.example "  <queue>
    <path>$Q</path>
    <size>2M</size>
  </queue>
  <log>
    <file>$LOG</file>
  </log>"
FAIL_LOGS=(OUT:stdout ERR:stderr LOG:ldmd.log)

# lines FILE: the number of lines of FILE (0 if it does not exist).
lines() {
  if [[ -e $1 ]]; then wc -l <"$1"; else echo 0; fi
}

# has_lines FILE N: FILE has at least N lines (for wait_until).
has_lines() {
  (($(lines "$1") >= $2))
}

# in_file FILE ERE: a line of FILE matches ERE (for wait_until).
in_file() {
  grep -qE -- "$2" "$1" 2>/dev/null
}
