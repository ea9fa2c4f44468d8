# lib.sh - sourced by every shell test of the queue utilities.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the programs, the path of pqclihelper.
#
# Gives the test its own scratch directory (on /dev/shm when it can: queues
# are memory-mapped) with its own registry file through $LDM_REGISTRY, so no
# test ever reads or writes a system path, and removes it at the end.  The
# helpers stop the test at the first failure with a message that says what
# was run and what it printed.

set -u
BIN=$(cd "${1:?directory of the programs}" && pwd)
HELPER=$(cd "$(dirname "${2:?path of pqclihelper}")" && pwd)/$(basename "$2")
NAME=$(basename "$0" .sh)
base=/dev/shm
[[ -d $base && -w $base ]] || base=${TMPDIR:-/tmp}
SCRATCH=$(mktemp -d "$base/pqcli-$NAME.XXXXXX")
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
Q=$SCRATCH/ldm.pq
cat >"$LDM_REGISTRY" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<registry>
  <hostname>cli-test-host</hostname>
  <queue>
    <path>$Q</path>
    <size>2M</size>
  </queue>
</registry>
EOF
export PATH=$BIN:$PATH
OUT=$SCRATCH/out
ERR=$SCRATCH/err

fail() {
  echo "FAIL ($NAME): $*" >&2
  if [[ -s $OUT ]]; then
    echo "--- stdout:" >&2
    head -c 3000 "$OUT" >&2
  fi
  if [[ -s $ERR ]]; then
    echo "--- stderr:" >&2
    head -c 3000 "$ERR" >&2
  fi
  exit 1
}

ok() {
  echo "ok: $*"
}

# run CMD...: run with stdout and stderr captured; sets rc.
run() {
  "$@" >"$OUT" 2>"$ERR"
  rc=$?
  if grep -qaE 'Sanitizer|runtime error:' "$ERR"; then
    fail "'$*': the sanitizers found an error"
  fi
}

# expect_rc CODE CMD...: run and require that exit status.
expect_rc() {
  local want=$1
  shift
  run "$@"
  [[ $rc == "$want" ]] || fail "'$*' exited $rc, expected $want"
}

# expect_error CMD...: a clean failure: non-zero status that is not a
# signal (no crash), and a message on stderr.
expect_error() {
  run "$@"
  ((rc != 0)) || fail "'$*' exited 0, expected a failure"
  ((rc < 128)) || fail "'$*' died of a signal (status $rc)"
  [[ -s $ERR ]] || fail "'$*' failed without a message on stderr"
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

# background CMD...: start CMD, remember its pid in $BG (killed at exit).
background() {
  "$@" &
  BG=$!
  BG_PIDS+=("$BG")
}

# make_files DIR N SIZE: N files of SIZE random bytes, DIR/f00000 ...
make_files() {
  mkdir -p "$1"
  head -c $(($2 * $3)) /dev/urandom | split -b "$3" -a 5 -d - "$1/f"
}

# mon_field N: field N of `pqmon -S` for $Q.
mon_field() {
  pqmon -S -q "$Q" | awk -v n="$1" '{print $n}'
}

# prods_are N: does the queue hold N products (for wait_until)?
prods_are() {
  [[ $(mon_field 7) == "$1" ]]
}
