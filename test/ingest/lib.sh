# shellcheck shell=bash
# lib.sh - sourced by every shell test of the NOAAPORT ingester.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the programs (noaaportIngester, pqcreate,
# pqcat), the directory of the test tools (sbngen, sbnsend).
#
# Gives the test its scratch directory with a queue ($Q, created) and its
# own registry (test/lib/common.sh), and the vectors' directory ($VEC).

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

BIN=$(cd "${1:?directory of the programs}" && pwd)
TOOLS=$(cd "${2:?directory of the test tools}" && pwd)
VEC=$(cd "$(dirname "${BASH_SOURCE[0]}")/vectors" && pwd)
scratch_init npingest /dev/shm
Q=$SCRATCH/ldm.pq
write_registry ingest-test-host.example.org "  <queue>
    <path>$Q</path>
    <size>20M</size>
  </queue>"
export PATH=$BIN:$TOOLS:$PATH
export TZ=UTC
FAIL_LOGS=(OUT:stdout ERR:stderr)
FAIL_BYTES=3000
pqcreate -c -s 20M -q "$Q" >/dev/null 2>&1 || fail "pqcreate failed"

# inserted FILE: how many "inserted" lines the log FILE has.
inserted() {
  local n
  n=$(grep -c ' inserted ' "$1" 2>/dev/null)
  echo "${n:-0}"
}

# queue_count: how many products the queue holds (pqcat -v logs a line
# each).
queue_count() {
  pqcat -q "$Q" -v -l - 2>&1 >/dev/null | grep -c " INFO "
}
