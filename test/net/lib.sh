# shellcheck shell=bash
# lib.sh - sourced by every network test of ldmd.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the path of ldmd, the path of ldm6_peer.
#
# Gives the test its own scratch directory (under $PQ_TEST_DIR, else
# /dev/shm) with its own queue and its own registry file ($LDM_REGISTRY),
# starts ldmd on ports the kernel picks (-P 0; the port is read from the
# log), so tests may run in parallel, and kills everything it started, by
# pid, at the end.  The helpers stop the test at the first failure with a
# message that says what was run and what it printed, and the server log.
# What the suites share (the scratch directory, cleanup, fail, run,
# expect_*, wait_until) is in test/lib/common.sh; here is what only this
# suite needs.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

LDMD=$(cd "$(dirname "${1:?path of ldmd}")" && pwd)/$(basename "$1")
PEER=$(cd "$(dirname "${2:?path of ldm6_peer}")" && pwd)/$(basename "$2")
scratch_init ldmdnet "${PQ_TEST_DIR:-/dev/shm}"
LDMD_PID=
KILL_AT_EXIT=(LDMD_PID)
# A command ldmd is started under (it must exec it), e.g. (taskset -c 0):
# ldmd runs one feed hub per CPU it may use (docs/protocol.md 6.9).
LDMD_WRAP=()
Q=$SCRATCH/ldm.pq
LOG=$SCRATCH/ldmd.log
CONF=$SCRATCH/ldmd.conf
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path></server>"
# fail shows the end of each file, the server's log too.
FAIL_LOGS=(OUT ERR LOG)
FAIL_SHOW='tail'
cd "$SCRATCH" || exit 1

# count FILE TEXT: lines of FILE with TEXT.
count() {
  grep -cF -- "$2" "$1"
}

# logged N TEXT: has the server's log at least N lines with TEXT (for
# wait_until)?
logged() {
  (($(count "$LOG" "$2") >= $1))
}

# What lets a test wait for products to arrive in a queue:
# holds QUEUE N: does QUEUE hold at least N products?
holds() {
  local n
  n=$("$PEER" count -q "$1" 2>/dev/null) && ((n >= $2))
}

# has_ident QUEUE IDENT...: does QUEUE hold a product of each IDENT (the
# whole ident, e.g. last/0)?
has_ident() {
  local q=$1
  shift
  "$PEER" dump -q "$q" 2>/dev/null | awk -v want="$*" '
    BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) need[w[i]] = 1 }
    $2 in need { delete need[$2]; n-- } END { exit n > 0 }'
}

# background [peer] CMD...: as common.sh's, but `background peer CMD ARGS`
# starts the test peer program itself (not the peer function, whose
# subshell would have the pid), so that $BG is its pid.
background() {
  if [[ $1 == peer ]]; then
    set -- "$PEER" "$2" -p "$PORT" "${@:3}"
  fi
  "$@" &
  BG=$!
  BG_PIDS+=("$BG")
}

# make_queue SIZE: a fresh queue of SIZE bytes.
make_queue() {
  "$PEER" mkqueue -q "$Q" -s "${1:-20000000}" || fail "cannot make the queue"
}

# start_ldmd [OPTIONS...]: ldmd in the foreground on 127.0.0.1 and ::1
# (when this host has IPv6) with a kernel-chosen port; sets PORT, LDMD_PID.
start_ldmd() {
  local addrs=(-I 127.0.0.1)
  [[ $HAVE_V6 == 1 ]] && addrs+=(-I ::1)
  : >"$LOG"
  "${LDMD_WRAP[@]}" "$LDMD" -f -l "$LOG" -P 0 "${addrs[@]}" "$@" "$CONF" 2>>"$SCRATCH/ldmd.err" &
  LDMD_PID=$!
  wait_until 10 grep -q 'listening on 127.0.0.1 port' "$LOG" ||
    fail "ldmd did not start"
  PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" |
    head -1)
  [[ -n $PORT ]] || fail "no port in the log"
}

# children_of PID: the pids of PID's children, one a line, by their parent
# pid in /proc (no procps needed).  A process that ends while the loop runs
# is skipped (one awk over every /proc/N/stat would stop at its file).
children_of() {
  local parent=$1 f line ppid
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue
    read -r _ ppid _ <<<"${line##*) }"
    if [[ $ppid == "$parent" ]]; then
      f=${f#/proc/}
      echo "${f%/stat}"
    fi
  done
}

# cpu_ticks PID: user and system time of PID in clock ticks (0 if gone).
cpu_ticks() {
  local st
  st=$(cat "/proc/$1/stat" 2>/dev/null) || {
    echo 0
    return
  }
  read -r -a f <<<"${st##*) }" # fields from the state on: utime is [11]
  echo $((f[11] + f[12]))
}

# busy_child: a child of ldmd that has used a second of CPU (matching a
# slow pattern), in BUSY.
busy_child() {
  local p
  for p in $(children_of "$LDMD_PID"); do
    if (($(cpu_ticks "$p") >= $(getconf CLK_TCK))); then
      BUSY=$p
      return 0
    fi
  done
  return 1
}

# slow_match_setup: what keeps a connection process busy matching
# (busystop.sh, slowmatch.sh): SLOW, a pattern without back-references
# that glibc's regexec() takes seconds on against the first 250-character
# identifier it meets; a queue of 20 products of every feedtype with such
# identifiers; ldmd.conf allowing loopback.  A NOTIFYME of SLOW in 31
# specs (-N 31), each compiled apart, then keeps its process busy for a
# minute or more.
slow_match_setup() {
  # shellcheck disable=SC2034 # read by the tests
  SLOW='(.{0,60}){10}(.{0,60}){10}(.{0,60}){10}(.{0,60}){10}y'
  make_queue 20000000
  printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$' >"$CONF"
  expect_rc 0 "$PEER" insert -q "$Q" -n 20 -s 100 -f ANY \
    -i "$(printf 'ab%.0s' {1..125})"
}

# stop_ldmd [SECONDS [WHEN]]: SIGTERM; ldmd must exit 0 within SECONDS
# (15); WHEN ("of an episode") ends the message if it does not.
stop_ldmd() {
  local st limit=${1:-15}
  kill -TERM "$LDMD_PID"
  wait_until "$limit" bash -c "! kill -0 $LDMD_PID 2>/dev/null" ||
    fail "ldmd did not stop on SIGTERM within $limit s${2:+ $2}"
  wait "$LDMD_PID"
  st=$?
  LDMD_PID=
  [[ $st == 0 ]] || fail "ldmd exited $st on SIGTERM"
  if grep -qaE 'Sanitizer|runtime error:' "$SCRATCH/ldmd.err" "$LOG"; then
    fail "the sanitizers found an error in ldmd: $(head -c 3000 "$SCRATCH/ldmd.err")"
  fi
}

# peer CMD [options]: the test peer against our server.
peer() {
  local cmd=$1
  shift
  "$PEER" "$cmd" -p "$PORT" "$@"
}

HAVE_V6=0
if "$PEER" have-ipv6; then
  HAVE_V6=1
fi
