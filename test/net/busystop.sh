#!/usr/bin/env bash
# A stop is bounded whatever a child is matching (docs/security.md,
# "Patterns from peers"; ldmd.8, SIGNALS).  A pattern without
# back-references is still matched in polynomial time only: this one, well
# within pq_ere_tame()'s bound, takes glibc's regexec(), which checks no
# flag, seconds on the first 250-character identifier it meets (later ones
# reuse the states it built).  A NOTIFYME with it in 31 specs, each
# compiled apart and matched against products of every feedtype, keeps its
# connection process busy for a minute or more, well past the stop's grace
# whatever the machine's load.  Then:
#  1. SIGTERM to ldmd: ldmd and every child gone within 5 s, ldmd exiting
#     0, the busy child killed (SIGKILL) and logged as a warning naming it;
#  2. SIGKILL to ldmd: its children get SIGTERM from the kernel
#     (PR_SET_PDEATHSIG) and nobody is left to send SIGKILL: the busy one
#     must end by itself within 5 s all the same.
# Waits are bounded polls; "busy" is seen in the child's CPU time.
source "$(dirname "$0")/lib.sh" "$@"

slow_match_setup

# all_gone PID...: has every PID exited?
all_gone() {
  local p
  for p in "$@"; do
    gone "$p" || return 1
  done
}

# gone_within MS PID...: poll until every PID is gone, at most MS
# milliseconds after T0 (date +%s%N); the time taken in ELAPSED (ms).
gone_within() {
  local limit=$1
  shift
  until all_gone "$@"; do
    ELAPSED=$((($(date +%s%N) - T0) / 1000000))
    ((ELAPSED <= limit)) || return 1
    sleep 0.05
  done
  ELAPSED=$((($(date +%s%N) - T0) / 1000000))
}

# start_busy: ldmd, and a NOTIFYME that keeps a connection process
# matching; sets BUSY and KIDS (every child of ldmd, killed at exit).
start_busy() {
  start_ldmd
  background peer notifyme -P "$SLOW" -N 31 -o 3600 -t 120
  wait_until 30 busy_child ||
    fail "no child of ldmd got busy matching the pattern"
  mapfile -t KIDS < <(children_of "$LDMD_PID")
  BG_PIDS+=("${KIDS[@]}")
}

# --- 1. SIGTERM ----------------------------------------------------------
start_busy
T0=$(date +%s%N)
kill -TERM "$LDMD_PID"
gone_within 5000 "$LDMD_PID" "${KIDS[@]}" ||
  fail "ldmd or a child (${KIDS[*]}) still runs 5 s after SIGTERM"
wait "$LDMD_PID"
st=$?
LDMD_PID=
((st == 0)) || fail "ldmd exited $st on SIGTERM"
expect_in "$LOG" "connection process $BUSY (127.0.0.1) did not stop within"
line=$(grep -F "process $BUSY (" "$LOG" | grep -F 'did not stop')
[[ $line == *" WARN"* ]] || fail "not logged as a warning: $line"
ok "SIGTERM: ldmd and its children gone in $ELAPSED ms; ${line#*WARN }"

# --- 2. SIGKILL: the children are on their own ---------------------------
start_busy
T0=$(date +%s%N)
kill -KILL "$LDMD_PID"
gone_within 5000 "${KIDS[@]}" ||
  fail "a child of a killed ldmd (${KIDS[*]}) still runs 5 s later"
wait "$LDMD_PID" 2>/dev/null
LDMD_PID=
ok "SIGKILL of ldmd: its busy child ended by itself in $ELAPSED ms"
