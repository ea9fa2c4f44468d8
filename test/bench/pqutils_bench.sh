#!/usr/bin/env bash
# pqutils_bench.sh - throughput of the queue utilities as a user runs them:
# pqcreate of a 1 GB queue, then for 20,000 x 1 KiB, 10,000 x 10 KiB and
# 2,000 x 1 MiB files, one pqinsert with every file on its command line and
# one pqcat of the whole queue into a pipe (read by cat, whose output goes
# to /dev/null), each as products/s and MB/s (best of BENCH_RUNS runs;
# pqinsert also into a newly created queue).
# The files are made once in a scratch directory; queues live on /dev/shm.
# For scale it first measures MD5's speed here (pqinsert hashes every byte)
# and a memory copy's (cat of a file from tmpfs to /dev/null).
#
# Each program is timed from fork to exit by test/timecmd, not by the shell:
# bash spends about 25 ms building a 20,000-name command line before it
# even forks, a fifth of what pqinsert then takes.  That cost is the
# shell's, the same for any program, and is measured once for scale
# (/bin/true with the 20,000 names, timed by the shell).
#
# It prints only what it measured in this run, and checks what it timed:
# after each pqinsert the queue holds every file, each pqcat writes every
# byte.  A run that fails, a check that does not hold or a figure it cannot
# measure stops it with a message and exit status 1.
#
# Usage: test/bench/pqutils_bench.sh [BUILD_DIR]   (default build/release)
# Environment: BENCH_DIR (scratch, default /dev/shm), BENCH_RUNS (runs per
# figure, best kept; default 3).  A benchmark, not a test: no ctest.
set -euo pipefail
# shellcheck source=test/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_begin "${1:-}"
for p in $bin/pqcreate $bin/pqinsert $bin/pqcat $bin/pqexpire $bin/pqmon $timecmd; do
  [[ -x $p ]] || { echo "no $p: build first" >&2; exit 1; }
done
scratch=$(mktemp -d "${BENCH_DIR:-/dev/shm}/pqutils_bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export LDM_REGISTRY=$scratch/registry.xml LDMHOME=$scratch
printf '<registry/>\n' >"$LDM_REGISTRY"
cd "$scratch"

die() {
  echo "pqutils_bench: $*" >&2
  exit 1
}
now() { date +%s%N; }
rate() { # count bytes ns
  awk -v n="$1" -v b="$2" -v t="$3" \
    'BEGIN { printf "%10.0f products/s %9.1f MB/s %8.3f s", n / (t / 1e9), b / 1e6 / (t / 1e9), t / 1e9 }'
}
# holds QUEUE N: the queue must hold N products (pqmon -S, field 7).
holds() {
  local got
  got=$("$bin/pqmon" -S -q "$1" 2>/dev/null | awk '{print $7}')
  [[ $got == "$2" ]] || die "$1 holds '$got' products after pqinsert, not $2"
}

echo "pqutils benchmark: $(nproc) CPUs, $(uname -r), build $build"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (figures are only as quiet as the machine)"
# openssl speed gives thousands of bytes per second ("749620.29k").
md5=$(openssl speed -seconds 1 -bytes 1048576 -evp md5 2>/dev/null |
  awk '$1 == "md5" && $2 ~ /k$/ { sub(/k$/, "", $2); printf "%.1f\n", $2 / 1000 }') ||
  die "openssl speed failed: cannot measure MD5's speed"
[[ -n $md5 ]] || die "openssl speed gave no MD5 figure"
echo "for scale: MD5 of 1 MiB blocks, $md5 MB/s (openssl speed; pqinsert hashes every byte)"
head -c 1000000000 /dev/zero >copyref
s=$(now)
cat copyref >/dev/null
e=$(now)
rm copyref
awk -v t=$((e - s)) 'BEGIN { printf "for scale: cat of a 1 GB tmpfs file to /dev/null, %.1f MB/s\n", 1e9 / 1e6 / (t / 1e9) }'
echo

ns=$(BEFORE='rm -f q1g.pq' best_ns "$bin/pqcreate" -s 1G -q q1g.pq)
awk -v t="$ns" 'BEGIN { printf "pqcreate 1 GB queue: %.1f ms\n\n", t / 1e6 }'
rm -f q1g.pq

for set in "20000 1024 1KiB" "10000 10240 10KiB" "2000 1048576 1MiB"; do
  read -r n size label <<<"$set"
  dir=files_$label
  mkdir "$dir"
  head -c $((n * size)) /dev/urandom | split -b "$size" -a 5 -d - "$dir/f"
  bytes=$((n * size))
  qsize=$((bytes + bytes / 4 + 16 * 1024 * 1024))
  files=("$dir"/f*)
  ((${#files[@]} == n)) || die "made ${#files[@]} files, not $n"
  if [[ $label == 1KiB ]]; then
    s=$(now)
    /bin/true "${files[@]}"
    e=$(now)
    awk -v n="$n" -v t=$((e - s)) 'BEGIN { printf "for scale: bash runs /bin/true with %d file names in %.1f ms (not charged below)\n", n, t / 1e6 }'
  fi
  # First into a new queue (every page of it faulted in for the first
  # time), then the best of $runs into the same queue emptied by pqexpire.
  "$bin/pqcreate" -c -s "$qsize" -S $((n + 100)) -q q.pq || die "pqcreate failed"
  cold=$(runs=1 best_ns "$bin/pqinsert" -q q.pq "${files[@]}")
  holds q.pq "$n"
  ns=$(BEFORE="$bin/pqexpire -a 0 -i 0 -q q.pq" \
    best_ns "$bin/pqinsert" -q q.pq "${files[@]}")
  holds q.pq "$n"
  printf 'pqinsert %6d x %-6s %s\n' "$n" "$label" "$(rate "$n" "$bytes" "$ns")"
  printf '         (new queue:      %s)\n' "$(rate "$n" "$bytes" "$cold")"
  out=$("$bin/pqcat" -q q.pq 2>/dev/null | wc -c)
  ((out == bytes)) || die "pqcat wrote $out bytes, not the $bytes of the queue"
  ns=$(best_ns sh -c "'$bin/pqcat' -q q.pq | cat")
  printf 'pqcat    %6d x %-6s %s\n' "$n" "$label" "$(rate "$n" "$bytes" "$ns")"
  rm -rf "$dir" q.pq
done
