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
# printed.  Every wait is bounded.  What the suites share (the scratch
# directory, cleanup, fail, run, expect_*, wait_until, background) is in
# test/lib/common.sh; here is what only this suite needs.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

BIN=$(cd "${1:?directory of the programs}" && pwd)
FAKE=$(cd "$(dirname "${2:?path of fakeldm}")" && pwd)/$(basename "$2")
scratch_init ldmclients
write_registry clients-test-host
export PATH=$BIN:$PATH
REPORT=$SCRATCH/report
# fail shows fakeldm's report too, and the test's own log in $EXTRA_LOG.
FAIL_LOGS=(OUT ERR REPORT EXTRA_LOG)
RUN_SANITIZER_NAMES='file'

# wait_exit PID SECONDS: wait for a background process; its status in rc.
wait_exit() {
  wait_until "$2" eval "! kill -0 $1 2>/dev/null" ||
    fail "process $1 did not exit within $2 s"
  wait "$1"
  rc=$?
}

# ldmd_start LDMD LOG ARGS...: our server in the foreground (ldmd -f -l
# LOG ARGS..., its stderr appended to $SCRATCH/ldmd.err), LOG emptied
# first, until it listens on 127.0.0.1; its port in $PORT, its pid in
# $LDMD_PID.
ldmd_start() {
  local ldmd=$1 log=$2
  shift 2
  : >"$log"
  background "$ldmd" -f -l "$log" "$@" 2>>"$SCRATCH/ldmd.err"
  LDMD_PID=$BG
  wait_until 10 grep -q 'listening on 127.0.0.1 port' "$log" ||
    fail "ldmd did not start: $(cat "$SCRATCH/ldmd.err")"
  PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$log" |
    head -1)
  [[ -n $PORT ]] || fail "no port in ldmd's log"
}

# ldmd_test HOSTNAME LDMD_DIR PQ_DIR: the setting of a test against our
# server: LDMD_DIR and PQ_DIR (pqcreate's, put first in PATH) made
# absolute; the scratch directory current; ldmd's queue $Q, its ldmd.conf
# $CONF (the test writes it) and its log $LOG (which fail shows), named by
# a registry with HOSTNAME; and, at exit, ldmd ($LDMD_PID, once started)
# let stop its children (up to 5 s) before everything is killed.
# shellcheck disable=SC2034 # the variables are the calling test's
ldmd_test() {
  LDMD_DIR=$(cd "${2:?directory of ldmd}" && pwd)
  PQ_DIR=$(cd "${3:?directory of pqcreate}" && pwd)
  export PATH=$PQ_DIR:$PATH
  cd "$SCRATCH" || fail "cd"
  Q=$SCRATCH/ldm.pq
  CONF=$SCRATCH/ldmd.conf
  LOG=$SCRATCH/ldmd.log
  EXTRA_LOG=$LOG
  LDMD_PID=
  write_registry "$1" "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path></server>"
  trap ldmd_cleanup EXIT
}

# ldmd_cleanup: ldmd_test's EXIT trap.
ldmd_cleanup() {
  local st=$?
  if [[ -n $LDMD_PID ]] && kill -TERM "$LDMD_PID" 2>/dev/null; then
    wait_until 5 gone "$LDMD_PID"
  fi
  cleanup "$st"
}

# ldmd_stop LOG: SIGTERM to $LDMD_PID (none: nothing to do), which must
# exit 0 within 20 s with no sanitizer report in LOG or its stderr.
ldmd_stop() {
  [[ -n $LDMD_PID ]] || return 0
  kill -TERM "$LDMD_PID"
  wait_exit "$LDMD_PID" 20
  LDMD_PID=
  ((rc == 0)) || fail "ldmd exited $rc on SIGTERM"
  sanitizer_check "$SCRATCH/ldmd.err"
  sanitizer_check "$1"
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
  # shellcheck disable=SC2034 # used by the tests
  PORT=$(cat "$SCRATCH/port")
}

# stop_fake: wait up to 25 s for fakeldm to serve its connections and exit
# 0; fail if it does not.
stop_fake() {
  local st
  if ! wait_until 25 gone "$FAKE_PID"; then
    kill -KILL "$FAKE_PID" 2>/dev/null
    wait "$FAKE_PID" 2>/dev/null
    fail "fakeldm did not finish its connections within 25 s"
  fi
  wait "$FAKE_PID"
  st=$?
  sanitizer_check "$SCRATCH/fake.err"
  ((st == 0)) || fail "fakeldm exited $st: $(head -c 500 "$SCRATCH/fake.err")"
}

# kill_fake: stop a fakeldm still waiting for a connection the test does
# not make; it must die of the SIGTERM.
kill_fake() {
  local st
  kill -TERM "$FAKE_PID"
  wait "$FAKE_PID"
  st=$?
  sanitizer_check "$SCRATCH/fake.err"
  ((st == 128 + 15)) || fail "fakeldm ended with status $st, not by SIGTERM"
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
