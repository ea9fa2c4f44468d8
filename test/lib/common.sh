# shellcheck shell=bash
# common.sh - what the shell test suites (test/cli, test/clients, test/net)
# share.  Each suite's lib.sh sources it first, then adds its own helpers.
#
# It owns:
#   - the test's name ($NAME, the script's name without .sh);
#   - its scratch directory ($SCRATCH) and the EXIT trap (cleanup) that
#     kills, by pid, every process started with background, then removes
#     the directory (one every user can reach for a test that drops
#     root's privileges: SCRATCH_SHARED);
#   - its own registry file ($LDM_REGISTRY, $LDMHOME; LDM_REGISTRY_DIR
#     unset), so that no test ever reads or writes a system path;
#   - the helpers that stop the test at the first failure with what was run
#     and what it printed: fail, ok, sanitizer_check, run ($OUT, $ERR, $rc),
#     expect_rc, expect_in, expect_not_in;
#   - the bounded wait (wait_until) and background ($BG, $BG_PIDS);
#   - what the stop tests look at: asleep_in (a process waiting in the
#     kernel), stop_within (a signal, then a bounded wait for the exit)
#     and stop_expect (that, the exit status, and no sanitizer report);
#   - skips that show (skip_part, skip_test): a test that could not run
#     a part of itself here, or any of it, exits 77, which ctest reports
#     as skipped (every shell test is registered with SKIP_RETURN_CODE
#     77), once everything else passed; under CI=true a skip is a failure
#     instead.  These are the only way a test skips: no test exits 77
#     itself (test/lib/harness_check.sh skips checks it);
#   - random decisions that can be replayed (seed_init: $RANDOM seeded
#     from PQ_TEST_SEED, or a fresh seed, printed);
#   - what a test needs to wait for an event in another process rather
#     than for a time: signal_taken (a signal is no longer pending: the
#     process has taken it) and gone (a process has exited);
#   - free_port, for the servers whose port must be named in advance.
#
# A suite's lib.sh calls, in this order:
#   scratch_init PREFIX [DIR]    $SCRATCH, the trap, the environment, $OUT
#   write_registry HOST [XML]    the registry file
# and may set (each is read when it is used, so a test may change it):
#   FAIL_LOGS     what fail shows after its message: names of variables
#                 holding a file, each NAME or NAME:LABEL (default LABEL:
#                 the file's base name); unset or empty files are skipped.
#                 Default: OUT ERR.
#   FAIL_SHOW     head or tail: which end of each file fail shows (head).
#   FAIL_BYTES    how many bytes of each (4000).
#   KILL_AT_EXIT  names of variables holding a pid (or nothing) that
#                 cleanup kills too, after the background processes.
#   RUN_SANITIZER_NAMES  command (default) or file: what run's message
#                 names when the sanitizers reported on stderr.

set -u
NAME=$(basename "$0" .sh)
BG_PIDS=()
FAIL_LOGS=(OUT ERR)
FAIL_SHOW='head'
FAIL_BYTES=4000
KILL_AT_EXIT=()
RUN_SANITIZER_NAMES='command'
SKIPPED=()

# scratch_init PREFIX [DIR]: make $SCRATCH, PREFIX-$NAME.XXXXXX in DIR when
# DIR is a writable directory, else in $TMPDIR (or /tmp); remove it and kill
# what the test started at exit; point the registry and LDMHOME into it;
# set $OUT and $ERR, where run captures its command's output.
# A test whose processes drop root's privileges sets SCRATCH_SHARED=1
# first: its scratch is then made where every user can reach it, in DIR
# or $TMPDIR only if every user may search their whole path (a build in a
# clone under /root, mode 0700, is not), else in /tmp, and is mode 0711.
scratch_init() {
  local base=${2:-} b
  [[ -n $base && -d $base && -w $base ]] || base=${TMPDIR:-/tmp}
  if [[ ${SCRATCH_SHARED:-} == 1 ]]; then
    for b in "$base" "${TMPDIR:-/tmp}" /tmp; do
      base=$b
      [[ -d $b && -w $b ]] && searchable_by_all "$b" && break
    done
  fi
  SCRATCH=$(mktemp -d "$base/$1-$NAME.XXXXXX")
  [[ ${SCRATCH_SHARED:-} != 1 ]] || chmod 0711 "$SCRATCH"
  trap cleanup EXIT
  export LDMHOME=$SCRATCH/ldmhome
  export LDM_REGISTRY=$SCRATCH/registry.xml
  unset LDM_REGISTRY_DIR
  OUT=$SCRATCH/out
  ERR=$SCRATCH/err
}

# searchable_by_all DIR: may every user reach DIR: do others have search
# permission (o+x) on it and on every directory above it?
searchable_by_all() {
  local d mode
  d=$(cd "$1" 2>/dev/null && pwd -P) || return 1
  while :; do
    mode=$(stat -c %a "$d") || return 1
    (((8#$mode & 1) == 1)) || return 1
    [[ $d != / ]] || return 0
    d=$(dirname "$d")
  done
}

# cleanup [STATUS]: the EXIT trap (also called by the traps of
# test/net/relay_lib.sh and test/clients/ldmd.sh, which pass the status the
# test exited with).  A test that passed but skipped a part exits 77.
cleanup() {
  local st=${1:-$?} p v pids=("${BG_PIDS[@]}")
  for v in "${KILL_AT_EXIT[@]}"; do
    [[ -z ${!v:-} ]] || pids+=("${!v}")
  done
  for p in "${pids[@]}"; do
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  [[ -z ${SCRATCH:-} ]] || rm -rf "$SCRATCH"
  if ((st == 0 && ${#SKIPPED[@]} > 0)); then
    echo "SKIPPED ($NAME): $(printf '%s; ' "${SKIPPED[@]}")"
    exit 77
  fi
}

# write_registry HOST [XML]: the registry file, with hostname HOST and then
# XML (more elements, whole lines, indented) inside <registry>.
write_registry() {
  local rest=${2:-}
  # Tests run as root on hosts without the user ldm: ldmd is told to stay
  # root (/server/user, ldmd.8), unless the test names a user itself.
  if [[ $rest != *"<user>"* && $rest == *"<server>"* ]]; then
    rest=${rest/<server>/<server><user>root</user>}
  elif [[ $rest != *"<user>"* ]]; then
    rest+=${rest:+$'\n'}"  <server><user>root</user></server>"
  fi
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<registry>'
    echo "  <hostname>$1</hostname>"
    printf '%s\n' "$rest"
    echo '</registry>'
  } >"$LDM_REGISTRY"
}

# fail MESSAGE: say what failed, show the files of FAIL_LOGS, stop the test.
fail() {
  echo "FAIL ($NAME): $*" >&2
  local e v f
  for e in "${FAIL_LOGS[@]}"; do
    v=${e%%:*}
    f=${!v:-}
    if [[ -n $f && -s $f ]]; then
      if [[ $e == *:* ]]; then
        echo "--- ${e#*:}:" >&2
      else
        echo "--- $(basename "$f"):" >&2
      fi
      "$FAIL_SHOW" -c "$FAIL_BYTES" "$f" >&2
    fi
  done
  exit 1
}

ok() {
  echo "ok: $*"
}

# skip_part TEXT: a part of the test cannot run on this host (TEXT says
# which and why).  The rest goes on; the test then exits 77 (skipped)
# instead of 0.  Under CI=true, where the host is known to have what the
# tests need (IPv6 loopback, ...), it is a failure.
skip_part() {
  [[ ${CI:-} != true ]] || fail "$1 (a skip is a failure under CI=true)"
  echo "skipped: $1"
  SKIPPED+=("$1")
}

# skip_test TEXT: the test cannot run on this host at all (TEXT says why):
# skip_part, then exit now; the EXIT trap (cleanup, or a test's own trap
# that ends in it) makes that 77.  Without a trap yet, cleanup is set.
skip_test() {
  skip_part "$1"
  [[ -n $(trap -p EXIT) ]] || trap cleanup EXIT
  exit 0
}

# seed_init: for a test that decides something at random (a delay, a
# size, which bytes): seed bash's $RANDOM with PQ_TEST_SEED from the
# environment (the C tests' variable too), or without it a fresh seed, and
# print it, so that PQ_TEST_SEED=N replays a failing run.  Sets SEED.
# bash reseeds $RANDOM in every subshell (a pipe, $(...), &): draw the
# test's numbers in its own shell, or assign RANDOM in the subshell.
seed_init() {
  SEED=${PQ_TEST_SEED:-$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')}
  [[ $SEED =~ ^[0-9]+$ ]] || fail "PQ_TEST_SEED='$SEED' is not a number"
  RANDOM=$SEED
  echo "seed: $SEED (PQ_TEST_SEED=$SEED replays this run)"
}

# sanitizer_check FILE [MESSAGE]: fail if FILE holds a sanitizer report,
# with MESSAGE (by default, one that names FILE).
sanitizer_check() {
  if grep -qaE 'Sanitizer|runtime error:' "$1" 2>/dev/null; then
    fail "${2:-the sanitizers found an error (see $(basename "$1"))}"
  fi
}

# flip_bytes FILE OFFSET N: invert every bit of the N bytes of FILE at
# OFFSET (each byte changes, the size does not).
flip_bytes() {
  local b s="" hex
  hex=$(od -An -tx1 -v -j "$2" -N "$3" "$1") || return 1
  for b in $hex; do
    printf -v b '\\x%02x' $((0x$b ^ 0xff))
    s+=$b
  done
  # shellcheck disable=SC2059 # only \x escapes: no % in the format
  printf "$s" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# run CMD...: run with stdout and stderr captured; sets rc.
run() {
  "$@" >"$OUT" 2>"$ERR"
  rc=$?
  if [[ $RUN_SANITIZER_NAMES == file ]]; then
    sanitizer_check "$ERR"
  else
    sanitizer_check "$ERR" "'$*': the sanitizers found an error"
  fi
}

# expect_rc CODE CMD...: run and require that exit status.
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

# expect_not_in FILE TEXT: FILE does not contain TEXT.
expect_not_in() {
  ! grep -qF -- "$2" "$1" || fail "$(basename "$1") has '$2'"
}

# wait_until SECONDS CMD...: poll CMD every 50 ms until it succeeds; false
# if it has not within SECONDS.
wait_until() {
  local limit=$1
  shift
  local end=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.05
  done
}

# signal_taken PID SIGNAL: has PID taken SIGNAL (a name such as TERM, or a
# number), i.e. is it no longer pending for the process or any of its
# threads?  Once it is not, the kernel has delivered it: the thread that
# took it runs the handler before anything else.  False if PID is gone.
signal_taken() {
  local num=$2 f key mask
  [[ $num =~ ^[0-9]+$ ]] || num=$(kill -l "$2") || fail "no signal $2"
  [[ -r /proc/$1/status ]] || return 1
  for f in "/proc/$1/status" "/proc/$1"/task/*/status; do
    while read -r key mask; do
      [[ $key == SigPnd: || $key == ShdPnd: ]] || continue
      (((16#$mask >> (num - 1)) & 1)) && return 1
    done <"$f" 2>/dev/null
  done
  return 0
}

# gone PID: has PID exited (no such process, or a zombie its parent has
# not reaped: kill -0 succeeds on those)?
gone() {
  local state
  [[ -r /proc/$1/stat ]] || return 0
  state=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 0
  [[ -z $state || $state == Z || $state == X ]]
}

# pidfile_cleanup FILE: an EXIT trap for a test whose server names itself
# in a pid file (ldmadmin start): SIGTERM to that server, SIGKILL if it has
# not gone within 10 s, then cleanup with the test's exit status.
#   trap 'pidfile_cleanup "$PIDFILE"' EXIT
pidfile_cleanup() {
  local st=$? p
  [[ -r $1 ]] && p=$(cat "$1" 2>/dev/null)
  if [[ -n ${p:-} ]]; then
    kill -TERM "$p" 2>/dev/null
    wait_until 10 gone "$p" || kill -KILL "$p" 2>/dev/null
  fi
  cleanup "$st"
}

# free_port: a TCP port for a server whose port must be named in advance
# (a systemd unit's, a NATS cluster's).  Drawn at random below the kernel's
# ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), where no
# client connection or port-0 listener of a concurrent test is given one,
# and not bound by any socket of this host now (/proc/net/tcp and tcp6,
# any state).  Another program may still take it first: the server then
# fails to listen and the test says so.  Not from $RANDOM: how many tries
# it takes depends on the host, and a seeded test's draws must not.
free_port() {
  local low p hex i r
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null ||
    low=32768
  ((low > 12000)) || low=32768
  for ((i = 0; i < 200; i++)); do
    r=$(od -An -tu4 -N4 /dev/urandom | tr -d ' ') || fail "od /dev/urandom"
    p=$((10000 + r % (low - 10000)))
    printf -v hex '%04X' "$p"
    if ! awk -v h=":$hex" 'NR > 1 && substr($2, length($2) - 4) == h {
           found = 1 } END { exit !found }' /proc/net/tcp /proc/net/tcp6 \
      2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  fail "no free port found in 200 tries"
}

# background CMD...: start CMD, remember its pid in $BG (killed at exit).
background() {
  "$@" &
  BG=$!
  BG_PIDS+=("$BG")
}

# asleep_in PID ERE: is a thread of PID asleep (state S) in a kernel
# function whose name matches ERE (/proc/PID/task/*/wchan): poll_schedule
# for poll(2), futex for a futex or a condition variable, pipe_write...
asleep_in() {
  local t st
  for t in /proc/"$1"/task/*; do
    st=$(cat "$t/stat" 2>/dev/null) || continue
    st=${st##*) } # after "pid (comm) "
    [[ ${st:0:1} == S ]] && grep -qE -- "$2" "$t/wchan" 2>/dev/null && return 0
  done
  return 1
}

# stop_within PID SIGNAL SECONDS [NAME]: send SIGNAL (TERM, INT) to the
# background process PID and require it to exit within SECONDS; its status
# in rc, the milliseconds it took in ms.  NAME (default "process PID") is
# what the messages call it.
stop_within() {
  local t0 name=${4:-process $1}
  t0=$(date +%s%N)
  kill -"$2" "$1" || fail "cannot send SIG$2 to $name"
  wait_until "$3" eval "! kill -0 $1 2>/dev/null" ||
    fail "$name still runs $3 s after SIG$2"
  wait "$1"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
}

# stop_expect PID NAME SIGNAL SECONDS STATUS [FILE]: stop_within, then
# require exit STATUS and, if FILE is given (the process's stderr), no
# sanitizer report in it.
stop_expect() {
  stop_within "$1" "$3" "$4" "$2"
  ((rc == $5)) || fail "$2 exited $rc after SIG$3, expected $5"
  [[ -z ${6:-} ]] || sanitizer_check "$6"
}
