#!/usr/bin/env bash
# pqing_bench.sh - pqing's throughput and memory as a site runs it: a
# stream of 20,000 WMO messages of 4 KiB (80 MB, a file on /dev/shm, made
# by test/wmo's wmogen) into a queue on /dev/shm as hds (the binary
# framing) and as ids (the text framing, with PILs), and through feedtest
# (framing and identifiers, no queue); then the peak memory (maximum
# resident set, GNU time) of hds on the same stream (the pages of the
# mapped queue it wrote count too) and on one message of 256 MiB that -s
# 1048576 (the default) skips: the second must not grow with the message.  For scale, MD5's speed here (pqing signs every byte)
# and a copy of the stream to /dev/null.
#
# It prints only what it measured in this run, and checks what it timed:
# after each run the queue holds every message (20,000, or 1 after the
# huge one).  A run that fails or a check that does not hold stops it with
# a message and exit status 1.
#
# Usage: test/bench/pqing_bench.sh [BUILD_DIR]   (default build/release)
# Environment: BENCH_DIR (scratch, default /dev/shm), BENCH_RUNS (runs per
# figure, best kept; default 3).  A benchmark, not a test: no ctest.
set -euo pipefail
# shellcheck source=test/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_begin "${1:-}"
wmogen=$build/test/wmogen
for p in $bin/pqing $bin/hds $bin/ids $bin/feedtest $bin/pqcreate $bin/pqcat \
  $wmogen $timecmd /usr/bin/time; do
  [[ -x $p ]] || { echo "no $p: build first" >&2; exit 1; }
done
scratch=$(mktemp -d "${BENCH_DIR:-/dev/shm}/pqing_bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export LDM_REGISTRY=$scratch/registry.xml LDMHOME=$scratch
printf '<registry/>\n' >"$LDM_REGISTRY"
cd "$scratch"

die() {
  echo "pqing_bench: $*" >&2
  exit 1
}

N=20000
SIZE=4096
"$wmogen" many $N $SIZE stream.wmo || die "wmogen many"
bytes=$(stat -c %s stream.wmo)
Q=$scratch/q.pq

# count: the products in $Q.
count() {
  "$bin/pqcat" -q "$Q" -L -l /dev/null | wc -l
}

# rate NS: "<messages/s> msg/s, <MB/s> MB/s" for the stream in NS ns.
rate() {
  awk -v n=$N -v b="$bytes" -v ns="$1" \
    'BEGIN { printf "%8.0f msg/s %8.1f MB/s", n / (ns / 1e9), b / 1e6 / (ns / 1e9) }'
}

echo "pqing_bench: $N messages of $SIZE bytes ($bytes bytes), best of $runs"
ns=$(best_ns openssl md5 stream.wmo)
echo "  scale: MD5 of the stream (openssl md5)   $(rate "$ns")"
ns=$(best_ns cat stream.wmo)
echo "  scale: cat of the stream to /dev/null    $(rate "$ns")"

BEFORE="rm -f '$Q' && '$bin/pqcreate' -c -s 200M -S 40000 -q '$Q'"
for name in hds ids; do
  ns=$(best_ns "$bin/$name" -l "$scratch/$name.log" -q "$Q" stream.wmo)
  n=$(count)
  [[ $n == "$N" ]] || die "$name: the queue holds $n products, not $N"
  printf '  %-8s into a queue on /dev/shm       %s\n' "$name" "$(rate "$ns")"
done
unset BEFORE
ns=$(best_ns "$bin/feedtest" -l /dev/null stream.wmo)
printf '  %-8s (no queue)                     %s\n' feedtest "$(rate "$ns")"

# Peak memory: the 80 MB stream, then one message of 256 MiB skipped.
"$wmogen" huge $((256 << 20)) huge.wmo || die "wmogen huge"
rm -f "$Q" && "$bin/pqcreate" -c -s 200M -S 40000 -q "$Q"
/usr/bin/time -f %M -o rss.normal "$bin/hds" -l /dev/null -q "$Q" stream.wmo ||
  die "hds on the stream failed"
rm -f "$Q" && "$bin/pqcreate" -c -s 200M -S 40000 -q "$Q"
/usr/bin/time -f %M -o rss.huge "$bin/hds" -l "$scratch/huge.log" -q "$Q" huge.wmo ||
  die "hds on the huge message failed"
[[ $(count) == 1 ]] || die "after the huge message the queue holds $(count), not 1"
grep -q "Data-product would exceed 1048576 bytes" "$scratch/huge.log" ||
  die "the huge message was not logged as too big"
echo "  peak RSS, hds on the stream:             $(tail -1 rss.normal) KiB (queue pages included)"
echo "  peak RSS, hds on one 256 MiB message:    $(tail -1 rss.huge) KiB (skipped; -s 1048576)"
