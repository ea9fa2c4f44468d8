#!/usr/bin/env bash
# pqact_bench.sh - pqact's throughput as a site runs it, on tmpfs: the real
# pqact program on a real queue, each case beside the floor a plain C loop
# reaches on the same file system in the same run:
#
#   (a) FILE -close of 5,000 and of 20,000 x 1 KiB products, one file each;
#       floor: open+write+close of as many new files;
#   (b) a table of 200 entries, each product matching exactly one, FILE
#       appending to 200 open files, 20,000 x 1 KiB products;
#       floor: 20,000 writes round robin to 200 open files;
#   (b') tables of 200 and of 2,000 entries whose patterns share no
#       literal prefix (leading classes, unanchored alternations, "$",
#       one-letter anchors: pqact_bench_aux.c's np table), each product
#       matching exactly one, FILE appending to 200 open files, 5,000 x
#       1 KiB products; floor: 5,000 writes round robin to 200 open files;
#   (c) PIPE of 2,000 x 1 MiB products to one long-running decoder;
#   (d) PIPE to 10 decoders, each product to one of them (2,000 x 1 MiB),
#       first all reading, then with decoder 0 stopped (SIGSTOP) until the
#       nine others have all their products: the nine's products/s both
#       ways and their ratio (and how many products decoder 0 got in the
#       end, once continued: pqact may give up on a stuck decoder).
#   (c) and (d) run when pqact accepts the PIPE action (its -q /dev/null
#   check of the table passes) and print "skipped: PIPE not supported"
#   otherwise.
#
# HOW pqact IS TIMED.  The queue is filled first (pqact_bench_aux fill);
# pqact then runs with -i 0 (exit at the end of the queue) and -o (take
# every product).  Its figure is the span between two lines of its own
# log, "Starting Up" (after the table is read and its matcher built) and
# "N products processed" (at the end), on the full queue, less the same
# span on an empty queue of the same size with the same table (opening
# the queue, the _BEGIN_ pseudo-product, closing): what is left is the
# time from its first product to its last.  The whole run on the empty
# queue, fork to exit (test/timecmd), is printed as startup+exit: it holds
# the reading of the table and the building of its matcher, which the
# span leaves out so that their cost (a Hyperscan compile takes most of a
# second for 2,000 entries) does not drown the products' time.  The decoders of
# (c) and (d) time themselves: each records the CLOCK_MONOTONIC times of
# its first and last read, and a case's figure runs from the first
# decoder's first read to the last one's last read.  Each figure is the
# best of BENCH_RUNS runs (default 3); the data directory is emptied
# between runs, untimed.
#
# It prints only what it measured in this run, and checks what it timed:
# the files pqact made hold every product's bytes, each decoder read every
# byte sent to it.  A failed run or check stops it with exit status 1.
# The project's targets, written in below, are printed as targets, not
# as results.
#
# Side by side: with PQACT_BEFORE set to another pqact program (a build of
# an earlier commit, say), (a), (b) and (b') time it too, in the same run,
# each run of one right after the same run of the other, and print both
# and their ratio.
#
# THE TARGETS (issue 26), from LDM 6.15's pqact measured on this machine
# the same way (5,000 x 1 KiB products on tmpfs, best of five, start and
# exit subtracted): FILE -close 46.7 ms, the 200-entry table without
# prefixes 146 ms.  Targets: FILE -close 1.5x LDM (<= 31 ms for 5,000);
# as the machine's floor moves from run to run (21 ms for 5,000 when LDM
# was measured, 21 to 35 ms since), FILE -close's target is also printed
# against this run's floor: LDM took 46.7 / 21 = 2.22 times the floor,
# so 1.5x LDM is pqact / floor <= 1.48, at 5,000 and at 20,000 products;
# the 200-entry table 3x (<= 49 ms); the 2,000-entry table 10x.  LDM's
# 2,000-entry figure was not measured: its reference here is an estimate,
# LDM's 200-entry 146 ms with its regexec part (146 ms less the floor of
# this run) scaled by 10, the entries' ratio, since LDM runs every entry's
# regexec on every product; it is printed as an estimate.
#
# Usage: test/bench/pqact_bench.sh [BUILD_DIR]   (default build/release)
# Environment: BENCH_DIR (scratch, default /dev/shm), BENCH_RUNS, PQACT
# (the pqact program to measure; default BUILD_DIR's), PQACT_BEFORE,
# BENCH_CASES (any of "file table np pipe"; default all).
# A benchmark, not a test: no ctest.
set -euo pipefail
# shellcheck source=test/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_begin "${1:-}"
aux=$build/test/pqact_bench_aux
pqact=${PQACT:-$build/bin/pqact}
before=${PQACT_BEFORE:-}
for p in $bin/pqcreate $pqact $timecmd $aux ${before:+"$before"}; do
  [[ -x $p ]] || { echo "no $p: build first" >&2; exit 1; }
done
scratch=$(mktemp -d "${BENCH_DIR:-/dev/shm}/pqact_bench.XXXXXX")
cleanup() {
  [[ -n ${stuckpid:-} ]] && kill -CONT "$stuckpid" 2>/dev/null
  [[ -n ${actpid:-} ]] && kill "$actpid" 2>/dev/null && wait "$actpid" 2>/dev/null
  # the decoders: pqact does not wait for them at exit; they see the end
  # of their pipe and exit by themselves
  rm -rf "$scratch"
}
trap cleanup EXIT
export LDM_REGISTRY=$scratch/registry.xml LDMHOME=$scratch
printf '<registry/>\n' >"$LDM_REGISTRY"
cd "$scratch"
ALL=2000000000 # -o that takes every product
cases=" ${BENCH_CASES:-file table np pipe} "

die() {
  echo "pqact_bench: $*" >&2
  exit 1
}
# best_floor CMD...: the fastest of $runs runs of a floor (it prints ns),
# each in a new empty directory fl/.
best_floor() {
  local best=0 i ns
  for ((i = 0; i < runs; i++)); do
    rm -rf fl && mkdir fl
    ns=$("$@") || die "'$*' failed"
    [[ $ns =~ ^[0-9]+$ && $ns -gt 0 ]] || die "no time from '$*': '$ns'"
    ((best == 0 || ns < best)) && best=$ns
  done
  rm -rf fl
  echo "$best"
}
rate() { # count bytes ns
  awk -v n="$1" -v b="$2" -v t="$3" \
    'BEGIN { printf "%9.0f products/s %8.1f MB/s %8.2f ms", n / (t / 1e9), b / 1e6 / (t / 1e9), t / 1e6 }'
}
# queue NAME N SIZE: a queue for N products of SIZE bytes.
queue() {
  local bytes=$(($2 * ($3 + 256)))
  "$bin/pqcreate" -c -s $((bytes + bytes / 4 + 16 * 1024 * 1024)) -S $(($2 + 100)) \
    -q "$1" || die "pqcreate $1 failed"
}
# span_ns LOG: the time, in ns, from pqact's "Starting Up" (the table is
# read) to its "products processed" (the end), from its log's timestamps
# (microseconds).
span_ns() {
  awk '/Starting Up/ { a = $1 } / products processed/ { b = $1 }
    function t(s) { return substr(s, 10, 2) * 3600 + substr(s, 12, 2) * 60 + substr(s, 14, 9) }
    END { if (a == "" || b == "") exit 1
          d = t(b) - t(a); if (d < 0) d += 86400; printf "%.0f\n", d * 1e9 }' "$1"
}
# one_run QUEUE CONF PQACT: one run of PQACT over QUEUE; sets RUN (fork to
# exit, ns) and SPAN (span_ns).
one_run() {
  rm -rf data "$scratch/pqact.log" && mkdir data
  "$timecmd" "$scratch/ns" "$3" -l "$scratch/pqact.log" -i 0 -o $ALL -d "$scratch/data" \
    -q "$scratch/$1" "$2" >/dev/null 2>"$scratch/err" ||
    die "'$3' on $1 failed: $(head -c 500 "$scratch/err")"
  RUN=$(<"$scratch/ns")
  SPAN=$(span_ns "$scratch/pqact.log") || die "no Starting Up / products processed in the log of $3"
}
# side CONF CHECK...: the time of pqact (and of $before, run by run
# beside it) from its first product to its last: its log's span over
# full.pq less that over empty.pq (startup, that is reading the table and
# building its matcher, and exit are outside the span; opening the queue
# and closing the outputs are in both), the best of $runs each; after
# each run over full.pq, CHECK... checks data/.  Sets NS and NS_BEFORE
# (ns; NS_BEFORE empty without $before), EMPTY and EMPTY_BEFORE (the
# whole run over empty.pq: startup+exit, ns).
side() {
  local conf=$1 i fs=0 es=0 fsb=0 esb=0
  shift
  EMPTY=0 EMPTY_BEFORE=""
  local eb=0
  for ((i = 0; i < runs; i++)); do
    one_run empty.pq "$conf" "$pqact"
    ((es == 0 || SPAN < es)) && es=$SPAN
    ((EMPTY == 0 || RUN < EMPTY)) && EMPTY=$RUN
    one_run full.pq "$conf" "$pqact"
    "$@"
    ((fs == 0 || SPAN < fs)) && fs=$SPAN
    if [[ -n $before ]]; then
      one_run empty.pq "$conf" "$before"
      ((esb == 0 || SPAN < esb)) && esb=$SPAN
      ((eb == 0 || RUN < eb)) && eb=$RUN
      one_run full.pq "$conf" "$before"
      "$@"
      ((fsb == 0 || SPAN < fsb)) && fsb=$SPAN
    fi
  done
  ((fs > es)) || die "pqact took no longer on the products than on none"
  NS=$((fs - es)) NS_BEFORE=""
  if [[ -n $before ]]; then
    ((fsb > esb)) || die "the before pqact took no longer on the products than on none"
    NS_BEFORE=$((fsb - esb)) EMPTY_BEFORE=$eb
  fi
  return 0
}
# beside LABEL N BYTES: the line for $before and the ratio, if any.
beside() {
  [[ -n $NS_BEFORE ]] || return 0
  printf '%s before %s\n' "$1" "$(rate "$2" "$3" "$NS_BEFORE")"
  awk -v a="$NS" -v b="$NS_BEFORE" -v l="$1" -v s="$EMPTY_BEFORE" \
    'BEGIN { printf "%s before / now time %.2f; before'"'"'s startup+exit %.1f ms\n", l, b / a, s / 1e6 }'
}
# check_files N BYTES: data/out holds N files (find counts) of BYTES in all.
check_files() {
  local files bytes
  files=$(find data/out -type f | wc -l)
  bytes=$(find data/out -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  ((files == $1)) || die "pqact made $files files, not $1"
  ((bytes == $2)) || die "pqact wrote $bytes bytes, not $2"
}

echo "pqact benchmark: $(nproc) CPUs, $(uname -r), build $build, scratch $scratch"
echo "pqact: $pqact"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (figures are only as quiet as the machine)"
echo "method: pqact -i 0 -o on a pre-filled queue, timed by its own log from"
echo "  \"Starting Up\" to \"products processed\", less the same span on an"
echo "  empty queue, best of $runs each (startup+exit: the whole empty run, fork"
echo "  to exit, reading the table and building its matcher included); decoders"
echo "  time themselves from their first read to their last"
echo

# ---- (a) FILE -close, one file each ----
"$aux" conf close close.conf || die "conf failed"
[[ $cases == *" file "* ]] && sizes="5000 20000" || sizes=""
for n in $sizes; do
  queue full.pq "$n" 1024
  queue empty.pq "$n" 1024
  "$aux" fill full.pq "$n" 1024 close || die "fill failed"
  side close.conf check_files "$n" $((n * 1024))
  floor=$(best_floor "$aux" floor fl "$n" 1024)
  printf 'FILE -close %5d x 1 KiB  pqact %s\n' "$n" "$(rate "$n" $((n * 1024)) "$NS")"
  beside "                        " "$n" $((n * 1024))
  printf '                   floor %s  (open+write+close, plain C)\n' "$(rate "$n" $((n * 1024)) "$floor")"
  awk -v a="$NS" -v f="$floor" -v s="$EMPTY" -v n="$n" -v b="$NS_BEFORE" \
    'BEGIN { printf "                   pqact / floor time %.2f; startup+exit %.1f ms (subtracted); target >= 150000 products/s\n", a / f, s / 1e6
             if (n == 5000) printf "                   target (issue 26): <= 31 ms for 5,000 (1.5x LDM 6.15, 46.7 ms measured on this machine): %s\n", a / 1e6 <= 31 ? "met" : "missed"
             printf "                   target (derived from issue 26: LDM 46.7 ms over its floor 21 ms = 2.22; 1.5x LDM): pqact / floor <= 1.48; this run %.2f: %s\n", a / f, a / f <= 1.48 ? "met" : "missed"
             if (b != "") printf "                   before / floor time %.2f (the same target: %s)\n", b / f, b / f <= 1.48 ? "met" : "missed" }'
  rm -f full.pq empty.pq
done
echo

# ---- (b) a site-sized table: 200 entries, 200 open files ----
table() {
n=20000
"$aux" conf table table.conf || die "conf failed"
queue full.pq "$n" 1024
queue empty.pq "$n" 1024
"$aux" fill full.pq "$n" 1024 table || die "fill failed"
side table.conf check_files 200 $((n * 1024))
floor=$(best_floor "$aux" floor_append fl "$n" 1024 200)
printf '200-entry table %d x 1 KiB  pqact %s\n' "$n" "$(rate "$n" $((n * 1024)) "$NS")"
beside "                            " "$n" $((n * 1024))
printf '                       floor %s  (writes to 200 open files, plain C)\n' "$(rate "$n" $((n * 1024)) "$floor")"
awk -v a="$NS" -v f="$floor" -v s="$EMPTY" \
  'BEGIN { printf "                       pqact / floor time %.2f; startup+exit %.1f ms (subtracted); target >= 95000 products/s\n", a / f, s / 1e6 }'
rm -f full.pq empty.pq
echo
}
[[ $cases == *" table "* ]] && table

# ---- (b') tables without literal prefixes: 200 and 2,000 entries ----
np_tables() {
local n=5000 k floor ldm200=146
floor=$(best_floor "$aux" floor_append fl "$n" 1024 200)
for k in 200 2000; do
  "$aux" conf np np.conf "$k" || die "conf failed"
  queue full.pq "$n" 1024
  queue empty.pq "$n" 1024
  "$aux" fill full.pq "$n" 1024 np "$k" || die "fill failed"
  side np.conf check_files 200 $((n * 1024))
  printf '%4d entries, no prefix, %d x 1 KiB  pqact %s\n' "$k" "$n" "$(rate "$n" $((n * 1024)) "$NS")"
  beside "                                  " "$n" $((n * 1024))
  printf '                                  floor %s  (writes to 200 open files, plain C)\n' "$(rate "$n" $((n * 1024)) "$floor")"
  awk -v a="$NS" -v f="$floor" -v s="$EMPTY" -v k="$k" -v l="$ldm200" 'BEGIN {
    printf "                                  pqact / floor time %.2f; startup+exit %.1f ms (subtracted)\n", a / f, s / 1e6
    if (k == 200) {
      printf "                                  target (issue 26): <= 49 ms (3x LDM 6.15, %d ms measured on this machine): %s (%.1fx LDM)\n", l, a / 1e6 <= 49 ? "met" : "missed", l / (a / 1e6)
    } else {
      ref = f / 1e6 + 10 * (l - f / 1e6)
      printf "                                  LDM 6.15 reference: %.0f ms, an ESTIMATE (not measured): its 200-entry %d ms, regexec part (less this run'"'"'s floor) x 10\n", ref, l
      printf "                                  target (issue 26): >= 10x LDM, <= %.0f ms: %s (%.1fx the estimate)\n", ref / 10, a / 1e6 <= ref / 10 ? "met" : "missed", ref / (a / 1e6)
    } }'
  rm -f full.pq empty.pq
done
echo
}
[[ $cases == *" np "* ]] && np_tables
[[ $cases == *" pipe "* ]] || exit 0

# ---- (c), (d) PIPE ----
n=2000
size=1048576
"$aux" conf pipe pipe.conf 1 "$aux" "$scratch/cnt" 0 "$n" "$size" || die "conf failed"
# -q /dev/null exits 1 for a good file too (as LDM's): the log tells
"$pqact" -vl- -q /dev/null pipe.conf >check.log 2>&1 && status=0 || status=$?
if ((status > 1)) || ! grep -q "Successfully read" check.log; then
  echo "PIPE 2000 x 1 MiB, one decoder: skipped: PIPE not supported"
  echo "PIPE to 10 decoders, one stopped: skipped: PIPE not supported"
  exit 0
fi

# wait_for FILE... : until every file exists (bounded: 120 s); 1 if not.
wait_for() {
  local f i
  for f in "$@"; do
    for ((i = 0; i < 12000; i++)); do
      [[ -e $f ]] && break
      sleep 0.01 # polling for the file, bounded; not a synchronisation
    done
    [[ -e $f ]] || return 1
  done
}
# span NDEC FROM: sets SPAN to "products bytes ns" of decoders
# FROM..NDEC-1's records: every byte checked, from the earliest first read
# to the latest last read.
span() {
  local j first=0 last=0 total=0 b f l want
  for ((j = $2; j < $1; j++)); do
    read -r b f l <"cnt/$j.count"
    want=$(((n / $1 + (j < n % $1 ? 1 : 0)) * size))
    ((b == want)) || die "decoder $j read $b bytes, not $want"
    total=$((total + b))
    ((first == 0 || f < first)) && first=$f
    ((l > last)) && last=$l
  done
  SPAN="$((total / size)) $total $((last - first))"
}
# pipe_run NDEC STUCK FROM: one pqact run over full.pq with NDEC decoders
# (decoder 0 stopped if STUCK is 1); sets SPAN for decoders FROM..NDEC-1.
pipe_run() {
  local ndec=$1 stuck=$2 from=$3 j files=() result
  rm -rf cnt data && mkdir cnt data
  "$aux" conf pipe pipe.conf "$ndec" "$aux" "$scratch/cnt" "$stuck" "$n" "$size" ||
    die "conf failed"
  "$pqact" -l "$scratch/pqact.log" -i 0 -o $ALL -d "$scratch/data" -q "$scratch/full.pq" pipe.conf &
  actpid=$!
  if ((stuck)); then
    wait_for cnt/0.pid || die "decoder 0 did not start within 120 s"
    stuckpid=$(<cnt/0.pid)
  fi
  for ((j = from; j < ndec; j++)); do files+=("cnt/$j.count"); done
  if ! wait_for "${files[@]}"; then
    ((stuck)) || die "decoders $from-$((ndec - 1)) did not get their products within 120 s"
    SPAN="" # the others stalled with decoder 0 stopped: a figure too
    result=""
  else
    span "$ndec" "$from"
    result=$SPAN
  fi
  if ((stuck)); then
    kill -CONT "$stuckpid"
    stuckpid=
  fi
  wait "$actpid" || die "pqact exited $? (log: $(tail -c 500 "$scratch/pqact.log"))"
  actpid=
  wait_for "${files[@]}" cnt/0.count || die "decoders did not finish after pqact's exit"
  # every decoder got every byte; the stopped one too unless pqact gave
  # up on it (then only its figure is printed)
  if ((stuck)); then
    span "$ndec" 1
    read -r b _ <cnt/0.count
    echo "  (the stopped decoder, or the one pqact started in its place, read $((b / size)) of its $((n / ndec)) products)" >&2
  else
    span "$ndec" 0
  fi
  SPAN=$result
}
# best_pipe NDEC STUCK FROM: sets SPAN to the fastest of $runs pipe_runs.
best_pipe() {
  local best="" i
  for ((i = 0; i < runs; i++)); do
    pipe_run "$1" "$2" "$3"
    [[ -n $SPAN ]] || return 0 # stalled: no figure
    if [[ -z $best ]] || (($(cut -d' ' -f3 <<<"$SPAN") < $(cut -d' ' -f3 <<<"$best"))); then
      best=$SPAN
    fi
  done
  SPAN=$best
}

queue full.pq "$n" "$size"
"$aux" fill full.pq "$n" "$size" pipe 1 || die "fill failed"
best_pipe 1 0 0
read -r p b t <<<"$SPAN"
printf 'PIPE %d x 1 MiB, one decoder        %s\n' "$n" "$(rate "$p" "$b" "$t")"
echo "                                      target >= 1000 MB/s"
rm -f full.pq

queue full.pq "$n" "$size"
"$aux" fill full.pq "$n" "$size" pipe 10 || die "fill failed"
best_pipe 10 0 1
read -r p1 b1 t1 <<<"$SPAN"
printf 'PIPE to 10 decoders, all reading:   decoders 1-9 %s\n' "$(rate "$p1" "$b1" "$t1")"
best_pipe 10 1 1
if [[ -z $SPAN ]]; then
  echo "PIPE to 10 decoders, 0 stopped:     decoders 1-9 did not get their products within 120 s: pqact stalls"
  echo "                                    target: lose <= 10%: missed"
  rm -f full.pq
  exit 0
fi
read -r p2 b2 t2 <<<"$SPAN"
printf 'PIPE to 10 decoders, 0 stopped:     decoders 1-9 %s\n' "$(rate "$p2" "$b2" "$t2")"
awk -v a="$t1" -v b="$t2" -v p1="$p1" -v p2="$p2" 'BEGIN {
  r = (p2 / (b / 1e9)) / (p1 / (a / 1e9))
  printf "                                    stuck / all reading %.3f (%.1f%% lost); target: lose <= 10%%\n", r, (1 - r) * 100 }'
rm -f full.pq
