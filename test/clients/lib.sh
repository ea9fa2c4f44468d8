# shellcheck shell=bash
# lib.sh - sourced by every shell test of the LDM protocol clients
# (notifyme, ldmsend, ldmping).
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the programs, the path of fakeldm, and
# optionally the directories of ldmd and of pqcreate/pqinsert.
#
# Gives the test its own scratch directory with its own registry file
# (LDM_REGISTRY: no system path is ever read or written), starts fakeldm or
# the programs in the background with every process killed at the end, and
# stops the test at the first failure with what was run and what it
# printed.  Every wait is bounded.

set -u
BIN=$(cd "${1:?directory of the programs}" && pwd)
FAKE=$(cd "$(dirname "${2:?path of fakeldm}")" && pwd)/$(basename "$2")
NAME=$(basename "$0" .sh)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/ldmclients-$NAME.XXXXXX")
BG_PIDS=()

cleanup() {
  local p
  for p in "${BG_PIDS[@]}"; do
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  rm -rf "$SCRATCH"
}
trap cleanup EXIT

export LDMHOME=$SCRATCH/ldmhome
export LDM_REGISTRY=$SCRATCH/registry.xml
unset LDM_REGISTRY_DIR
cat >"$LDM_REGISTRY" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<registry>
  <hostname>clients-test-host</hostname>
</registry>
EOF
export PATH=$BIN:$PATH
OUT=$SCRATCH/out
ERR=$SCRATCH/err
REPORT=$SCRATCH/report

fail() {
  echo "FAIL ($NAME): $*" >&2
  local f
  for f in "$OUT" "$ERR" "$REPORT" "${EXTRA_LOG:-}"; do
    if [[ -n $f && -s $f ]]; then
      echo "--- $(basename "$f"):" >&2
      head -c 4000 "$f" >&2
    fi
  done
  exit 1
}

ok() {
  echo "ok: $*"
}

sanitizer_check() {
  if grep -qaE 'Sanitizer|runtime error:' "$1" 2>/dev/null; then
    fail "the sanitizers found an error (see $(basename "$1"))"
  fi
}

# run CMD...: run with stdout and stderr captured; sets rc.
run() {
  "$@" >"$OUT" 2>"$ERR"
  rc=$?
  sanitizer_check "$ERR"
}

# expect_rc CODE CMD...
expect_rc() {
  local want=$1
  shift
  run "$@"
  [[ $rc == "$want" ]] || fail "'$*' exited $rc, expected $want"
}

# expect_in FILE TEXT: FILE contains TEXT (a fixed string).
expect_in() {
  grep -qF -- "$2" "$1" || fail "$(basename "$1") lacks '$2'"
}

expect_not_in() {
  ! grep -qF -- "$2" "$1" || fail "$(basename "$1") has '$2'"
}

# wait_until SECONDS CMD...: poll CMD every 50 ms until it succeeds.
wait_until() {
  local limit=$1
  shift
  local end=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.05
  done
}

# background CMD...: start CMD, its pid in $BG (killed at exit).
background() {
  "$@" &
  BG=$!
  BG_PIDS+=("$BG")
}

# wait_exit PID SECONDS: wait for a background process; its status in rc.
wait_exit() {
  wait_until "$2" eval "! kill -0 $1 2>/dev/null" ||
    fail "process $1 did not exit within $2 s"
  wait "$1"
  rc=$?
}

# start_fake MODE ADDR ARGS...: start fakeldm (report in $REPORT, which is
# emptied); its port in $PORT, its pid in $FAKE_PID.
start_fake() {
  local mode=$1 addr=$2
  shift 2
  rm -f "$SCRATCH/port"
  : >"$REPORT"
  background "$FAKE" -m "$mode" -a "$addr" -p "$SCRATCH/port" -o "$REPORT" \
    "$@" 2>>"$SCRATCH/fake.err"
  FAKE_PID=$BG
  wait_until 10 test -s "$SCRATCH/port" || fail "fakeldm did not start"
  PORT=$(cat "$SCRATCH/port")
}

# stop_fake: wait for fakeldm to finish its connections (or kill it).
stop_fake() {
  if ! wait_until 25 eval "! kill -0 $FAKE_PID 2>/dev/null"; then
    kill -KILL "$FAKE_PID" 2>/dev/null
  fi
  wait "$FAKE_PID" 2>/dev/null
  sanitizer_check "$SCRATCH/fake.err"
}

# in_report TEXT: does the report have a line containing TEXT?
in_report() {
  grep -qF -- "$1" "$REPORT"
}

# dead_port: a port on which nothing listens (fakeldm's, after it exits).
dead_port() {
  rm -f "$SCRATCH/port"
  "$FAKE" -m ping -a "${1:-127.0.0.1}" -p "$SCRATCH/port" -c 0 \
    -o /dev/null || fail "fakeldm -c 0 failed"
  cat "$SCRATCH/port"
}

# have_ipv6: can we listen on ::1?
have_ipv6() {
  rm -f "$SCRATCH/port"
  "$FAKE" -m ping -a ::1 -p "$SCRATCH/port" -c 0 -o /dev/null 2>/dev/null
}

# msgs FILE: the message part of each log line (LDM's format puts it at
# column 94), one per line.
msgs() {
  cut -c95- "$1"
}

# products FILE: the product lines (LDM's s_prod_info) logged in FILE.
products() {
  msgs "$1" | grep -E '^([0-9a-f]{32} )? *[0-9]+ [0-9]{14}\.[0-9]{6} '
}
