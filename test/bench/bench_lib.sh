# shellcheck shell=bash
# bench_lib.sh - sourced by the shell benchmarks (pqutils_bench.sh,
# pqact_bench.sh): their settings, and the timing of a command, best of
# several runs.
#
# The sourcing script calls bench_begin first, then sets $scratch and
# defines die MESSAGE.

# bench_begin [BUILD_DIR]: $top (the tree), $build (BUILD_DIR, default
# build/release), $bin (its programs), $runs (BENCH_RUNS, runs per figure,
# the best kept; default 3) and $timecmd (test/bench/timecmd: times one
# command from fork to exit, in nanoseconds, into a file).
# shellcheck disable=SC2034 # top, bin: the sourcing script's
bench_begin() {
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  build=$(cd "${1:-$top/build/release}" && pwd)
  bin=$build/bin
  runs=${BENCH_RUNS:-3}
  timecmd=$build/test/timecmd
}

# best_ns CMD...: the fastest of $runs runs of CMD, in nanoseconds; $BEFORE,
# if set, runs before each (untimed) and must succeed.
# shellcheck disable=SC2154 # runs, scratch, timecmd: the sourcing script's
best_ns() {
  local best=0 i ns
  for ((i = 0; i < runs; i++)); do
    if [[ -n ${BEFORE:-} ]]; then
      eval "$BEFORE" >"$scratch/before.out" 2>&1 ||
        die "'$BEFORE' failed: $(head -c 500 "$scratch/before.out")"
    fi
    "$timecmd" "$scratch/ns" "$@" >/dev/null 2>"$scratch/err" ||
      die "'$*' failed: $(head -c 500 "$scratch/err")"
    ns=$(<"$scratch/ns")
    [[ $ns =~ ^[0-9]+$ && $ns -gt 0 ]] || die "no time for '$*': '$ns'"
    ((best == 0 || ns < best)) && best=$ns
  done
  echo "$best"
}
