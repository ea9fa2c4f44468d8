# shellcheck shell=bash
# lib.sh - sourced by the tests of the service (etc/ldmd.service and
# service/ldmd-queue).  Systemd does not run here, so the tests run the
# unit's own command lines as systemd would: every ExecStartPre in order,
# ExecStart in the background until ldmd says READY=1 (Type=notify: on the
# test's notification socket, NOTIFY_SOCKET, from ldmd's own pid as
# NotifyAccess=main wants), SIGTERM (the unit's KillSignal) and a wait
# bounded by its TimeoutStopSec, then every ExecStopPost.  The lines are
# read from the unit file, with the installed paths (/usr/sbin/ldmd,
# /usr/sbin/ldmd-queue) turned into this build's.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the source tree, the build tree, the path of notify_listen.
#
# It gives the test a scratch directory on /dev/shm (a tmpfs, as the
# package's queue), a scratch LDMHOME and registry (through $LDMHOME and
# $LDM_REGISTRY: no system path is read or written) whose queue is
# $SHM/ldm.pq, ldmd on 127.0.0.1 on a free port (free_port), and an
# ldmd.conf in $LDMHOME/etc.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SRC=$(cd "${1:?source tree}" && pwd)
BUILD=$(cd "${2:?build tree}" && pwd)
LISTEN=$(cd "$(dirname "${3:?path of notify_listen}")" && pwd)/$(basename "$3")
UNIT=$SRC/etc/ldmd.service
export LDMPQ_BINDIR=$BUILD/bin
export PATH=$BUILD/bin:$PATH
scratch_init service /dev/shm
# A systemd that runs the tests (a CI unit) must not be told anything.
unset NOTIFY_SOCKET

# The unit's ExecStart takes the registry's port, which may not be 0
# (kernel-chosen): the test picks one (free_port, common.sh).
SHM=$SCRATCH/shm
Q=$SHM/ldm.pq
# shellcheck disable=SC2034 # used by the tests
SNAP=$LDMHOME/var/queues/ldm.pq.snap
mkdir -p "$LDMHOME/etc" "$LDMHOME/var/queues" "$SHM" || fail "mkdir"
write_registry service-test-host "  <queue>
    <path>$Q</path>
    <size>${QUEUE_SIZE:-20M}</size>
    <slots>${QUEUE_SLOTS:-20000}</slots>
  </queue>
  <server>
    <ip-addr>127.0.0.1</ip-addr>
    <port>$(free_port)</port>
  </server>"
echo 'ALLOW ANY ^127\.0\.0\.1$' >"$LDMHOME/etc/ldmd.conf"
LDMD_PID=
NOTIFY_PID=
KILL_AT_EXIT=(LDMD_PID NOTIFY_PID)
RUNS=0
# The notification socket, as systemd's for the unit, and what came on it:
# "PID LINE" for each line of each datagram, "# ..." lines of the listener
# (notify_listen.c).
NOTIFY=$SCRATCH/notify.sock
NOTES=$SCRATCH/notify.out
: >"$NOTES"

# unit_key KEY: the values of KEY= in the unit's [Service] section, one a
# line, in order.
unit_key() {
  awk -v key="$1" '
    /^\[/ { service = ($0 == "[Service]") }
    service && index($0, key "=") == 1 { print substr($0, length(key) + 2) }
  ' "$UNIT"
}

# unit_cmd LINE: the words of the command line LINE with the package's
# paths made this build's, in the array CMD.  A line with what systemd
# would read differently from a shell's split (quotes, specifiers, $,
# a prefix such as - or @) fails the test: this parser does not know it.
unit_cmd() {
  local w
  [[ $1 != *[\"\'\$%\\]* && $1 != [-@+!:]* ]] ||
    fail "the unit's command line '$1' needs a real systemd parser"
  read -r -a CMD <<<"$1"
  for w in "${!CMD[@]}"; do
    case ${CMD[w]} in
    /usr/sbin/ldmd) CMD[w]=$BUILD/bin/ldmd ;;
    /usr/sbin/ldmd-queue) CMD[w]=$BUILD/service/ldmd-queue ;;
    /usr/bin/*) CMD[w]=$BUILD/bin/${CMD[w]#/usr/bin/} ;;
    /usr/*) fail "the unit names ${CMD[w]}, which this test does not know" ;;
    esac
  done
}

# seconds VALUE: a systemd time span of whole seconds (120, 120s, 2min) in
# seconds.
seconds() {
  case $1 in
  *min) echo $((${1%min} * 60)) ;;
  *s) echo "${1%s}" ;;
  *[!0-9]*) fail "time span '$1': not one this test reads" ;;
  *) echo "$1" ;;
  esac
}

# unit_run KEY NAME WHEN: each command line of KEY in order, each to
# succeed, its output in $SCRATCH/NAME.1, NAME.2...; WHEN says in a failure
# which start or stop it was.
unit_run() {
  local line n=0
  while IFS= read -r line; do
    n=$((n + 1))
    unit_cmd "$line"
    "${CMD[@]}" >"$SCRATCH/$2.$n" 2>&1 ||
      fail "$3: $1 '$line' exited $? ($(cat "$SCRATCH/$2.$n"))"
    sanitizer_check "$SCRATCH/$2.$n"
  done < <(unit_key "$1")
}

# notes_count LINE: how many lines of $NOTES are LINE.
notes_count() { grep -cxF -- "$1" "$NOTES"; }
# notes_more LINE N: more than N of them.
notes_more() { (($(notes_count "$1") > $2)); }

# notify_listen open|closed: start the listener on $NOTIFY, with its gate
# open or closed (see notify_gate), once per test, and wait until it
# listens.
notify_listen() {
  local gate=()
  [[ -z $NOTIFY_PID ]] || fail "notify_listen: the listener runs already"
  [[ $1 == closed ]] && gate=(-g)
  "$LISTEN" "${gate[@]}" "$NOTIFY" >>"$NOTES" 2>"$SCRATCH/notify.err" &
  NOTIFY_PID=$!
  wait_until 10 notes_more '# listening' 0 ||
    fail "notify_listen does not listen on $NOTIFY: $(cat "$SCRATCH/notify.err")"
}

# notify_gate close|open: close or open the listener's gate, and wait
# until it says it did.  While it is closed a notification waits in the
# sender's sendmsg(2) (notify_listen.c).
notify_gate() {
  local sig=USR1 what="# gate open" n
  [[ $1 == close ]] && sig=USR2 what="# gate closed"
  n=$(notes_count "$what")
  kill -"$sig" "$NOTIFY_PID" || fail "cannot signal notify_listen"
  wait_until 10 notes_more "$what" "$n" || fail "notify_listen did not $1 its gate"
}

# unit_exec: ExecStart in the background, as systemd starts a unit of
# Type=notify ($LDMD_PID; stdin /dev/null; stderr, where the unit logs, in
# $LOG): with NOTIFY_SOCKET the listener's (started if need be), or
# $UNIT_NOTIFY if that is set (empty: no NOTIFY_SOCKET, as any start but
# systemd's).
unit_exec() {
  local line sock=$NOTIFY env=()
  [[ $(unit_key Type) == notify && $(unit_key NotifyAccess) == main ]] ||
    fail "the unit is not Type=notify with NotifyAccess=main, as this test runs it"
  line=$(unit_key ExecStart)
  [[ -n $line && $line != *$'\n'* ]] || fail "the unit needs one ExecStart"
  unit_cmd "$line"
  if [[ -n ${UNIT_NOTIFY+set} ]]; then
    sock=$UNIT_NOTIFY
  elif [[ -z $NOTIFY_PID ]]; then
    notify_listen open
  fi
  [[ -z $sock ]] || env=("NOTIFY_SOCKET=$sock")
  LOG=$SCRATCH/ldmd.$RUNS.log
  FAIL_LOGS=(OUT ERR LOG NOTES)
  env "${env[@]}" "${CMD[@]}" </dev/null >/dev/null 2>"$LOG" &
  LDMD_PID=$!
}

# unit_ready: wait, as systemd does, for READY=1 from ldmd's own pid
# (NotifyAccess=main); fail if ldmd exits first or says nothing within 20 s
# (the test's bound; the unit's TimeoutStartSec is longer).
unit_ready() {
  wait_until 20 ready_or_gone || fail "start $RUNS: ldmd sent no READY=1 within 20 s"
  ready || fail "start $RUNS: ldmd exited without READY=1"
}
ready() { grep -qxF "$LDMD_PID READY=1" "$NOTES"; }
ready_or_gone() { ready || gone "$LDMD_PID"; }

# unit_start: as "systemctl start": each ExecStartPre (their output in
# $SCRATCH/pre.N), then ExecStart (unit_exec) until it is ready
# (unit_ready).
unit_start() {
  RUNS=$((RUNS + 1))
  unit_run ExecStartPre pre "start $RUNS"
  unit_exec
  unit_ready
}

# unit_stop: as "systemctl stop": KillSignal to ldmd, which must exit 0
# within TimeoutStopSec, then each ExecStopPost (output in $SCRATCH/post.N;
# $SCRATCH/post.1 is ldmd-queue's).
unit_stop() {
  local sig limit
  sig=$(unit_key KillSignal)
  limit=$(seconds "$(unit_key TimeoutStopSec)")
  stop_within "$LDMD_PID" "${sig#SIG}" "$limit" "ldmd (start $RUNS)"
  LDMD_PID=
  ((rc == 0)) || fail "stop $RUNS: ldmd exited $rc on $sig"
  sanitizer_check "$LOG"
  unit_run ExecStopPost post "stop $RUNS"
}

# wipe: the reboot, for the queue: the tmpfs directory emptied.
wipe() {
  rm -rf "$SHM" || fail "cannot remove $SHM"
  mkdir "$SHM" || fail "cannot make $SHM"
}

# idents: the identifiers of the products of $Q, oldest first, one a line (the last word of pqcat -v's product lines).
idents() {
  pqcat -v -l - -q "$Q" 2>&1 >/dev/null |
    awk '/cli_log_product/ { print $NF }'
}
