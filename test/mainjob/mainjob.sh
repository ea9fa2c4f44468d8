#!/usr/bin/env bash
# mainjob.sh (test) - runs the main job (scripts/mainjob.sh) for a few
# seconds with no terminal, as ctest and CI do, and checks that:
#   - it exits 0 by itself when MAINJOB_DURATION is over;
#   - products reached the downstream queue through its REQUEST, all of
#     those in the upstream queue, and the notifyme view showed them;
#   - pqact, run by the downstream ldmd's EXEC, filed every one of them:
#     it processed as many products as the downstream holds, and filed as
#     many bytes as their data;
#   - nothing it started is left: no process runs from its run directory,
#     the servers' pids are gone, and the run directory is removed.
#
# Usage: mainjob.sh BUILD_DIR SCRIPT   (ctest passes both)
set -euo pipefail
build=${1:?build directory}
script=${2:?path of scripts/mainjob.sh}
base=/dev/shm
[[ -d $base && -w $base ]] || base=${PQ_TEST_DIR:-${TMPDIR:-/tmp}}
out=$(mktemp "${TMPDIR:-/tmp}/mainjob-test.XXXXXX")
trap 'rm -f "$out"' EXIT

fail() {
  echo "FAIL (mainjob): $*" >&2
  echo "--- output of the main job:" >&2
  cat "$out" >&2
  exit 1
}

rc=0
MAINJOB_DURATION=10 MAINJOB_SCALE=0.2 MAINJOB_SEED=42 \
  MAINJOB_QUEUE_SIZE=100M MAINJOB_DIR=$base \
  timeout -s KILL 90 bash "$script" "$build" </dev/null >"$out" 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "the main job exited $rc"
if grep -qaE 'Sanitizer|runtime error:|is not empty' "$out"; then
  fail "a program of the main job reported an error"
fi

run=$(sed -n 's/^==> run directory //p' "$out")
[[ -n $run ]] || fail "no run directory in the output"
up=$(sed -n 's/^==> upstream queue: *\([0-9]*\) products.*/\1/p' "$out")
down=$(sed -n 's/^==> downstream queue: *\([0-9]*\) products.*/\1/p' "$out")
[[ -n $up && -n $down ]] || fail "no queue summary in the output"
((up > 0)) || fail "nothing was inserted upstream"
((down > 0)) || fail "nothing reached the downstream queue"
((down == up)) || fail "the downstream has $down products, the upstream $up"
# grep -c prints 0 and exits 1 when no line matches; 2 is an error.
shown=$(grep -cE 'INFO +[0-9]+ [0-9]{14}\.[0-9]{6} ' "$out") ||
  [[ $shown == 0 ]] || fail "cannot read the main job's output"
((shown > 0)) || fail "notifyme showed no product"
echo "ok: $up products inserted, $down relayed downstream, $shown shown"
filed=$(sed -n 's/^==> pqact filed \([0-9]*\) bytes in \([0-9]*\) files.*holds \([0-9]*\) bytes.*/\1 \2 \3/p' "$out")
[[ -n $filed ]] || fail "no pqact summary in the output"
read -r fbytes nfiles qbytes <<<"$filed"
((nfiles > 0 && fbytes > 0)) || fail "pqact filed nothing"
((fbytes == qbytes)) || fail "pqact filed $fbytes bytes of the $qbytes queued"
acted=$(sed -n 's/^==> pqact processed \([0-9]*\) products.*/\1/p' "$out")
[[ $acted == "$down" ]] || fail "pqact processed ${acted:-no} products, not $down"
echo "ok: pqact filed all $acted products ($fbytes bytes) in $nfiles files"

[[ ! -e $run ]] || fail "the run directory $run is still there"
while read -r p; do
  ! kill -0 "$p" 2>/dev/null || fail "ldmd $p is still running"
done < <(sed -n 's/.*ldmd (pid \([0-9]*\)).*/\1/p' "$out")
for f in /proc/[0-9]*/cmdline; do
  if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF -- "$run/"; then
    fail "a process is left over: $(tr '\0' ' ' <"$f")"
  fi
done
echo "ok: nothing left behind ($run removed, no process runs from it)"
