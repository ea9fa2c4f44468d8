#!/usr/bin/env bash
# ldmadmin's metrics commands with real processes: a server started by
# ldmadmin on 127.0.0.1 (-P 0) that requests from a second ldmd (its
# upstream), products in its queue, a notifyme held connected to it.
# printmetrics: 18 numeric fields, the queue's figures those of pqmon -S,
# the local count 1 while notifyme is connected and 0 once it has gone,
# the remote count 1 for the REQUEST, both 0 with the server stopped, the
# CPU measured over the interval asked; addmetrics appends whole lines
# under the metrics file's lock (refused in time while another holds it;
# two at once give two whole lines); newmetrics shifts the files and keeps
# /metrics/count of them; plotmetrics draws PNG files from the metrics of
# this run, honours -b, -e and -o, and refuses a bad time, begin after
# end, no line in range, no metrics file, no gnuplot.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
# A short measured CPU interval: printmetrics takes that long.
export LDMADMIN_METRICS_INTERVAL=0.2
MF=$LDMHOME/var/logs/metrics.txt # the default /metrics/file
FAIL_LOGS+=(MF:metrics.txt)

# The upstream: an ldmd of its own queue, in the foreground.
pqcreate -q "$SCRATCH/up.pq" -s 1M || fail "cannot make the upstream's queue"
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\n' >"$SCRATCH/up.conf"
background ldmd -f -l "$SCRATCH/up.log" -P 0 -I 127.0.0.1 -q "$SCRATCH/up.pq" \
  "$SCRATCH/up.conf"
wait_until 10 grep -qs "listening on 127.0.0.1 port" "$SCRATCH/up.log" ||
  fail "the upstream ldmd did not start: $(cat "$SCRATCH/up.log")"
UP_PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$SCRATCH/up.log" | head -1)
printf 'REQUEST\tANY\t".*"\t127.0.0.1:%s\n' "$UP_PORT" >>"$CONF"

admin_ok mkqueue
admin_ok start -P 0
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" | head -1)
[[ -n $PORT ]] || fail "no port in the server's log"
# Products: one inserted 10 minutes ago (the queue's age), three now.
"$HELPER" insert-at "$Q" $((($(date +%s) - 600) * 1000000)) old-product ||
  fail "pqclihelper insert-at"
for i in 1 2 3; do
  head -c $((1000 * i)) /dev/urandom >"prod$i"
  pqinsert "prod$i" || fail "pqinsert prod$i"
done

# metrics: print the line into $OUT and split it into F[0..17].
metrics() {
  admin_ok printmetrics
  read -r -a F <"$OUT"
}
field_is() { metrics && [[ ${F[$1]} == "$2" ]]; }

# The line's form, and the queue's figures against pqmon -S (taken on
# each side of it: the age may tick).
t0=$(date -u +%Y%m%d.%H%M%S)
stats0=$(pqmon -S -q "$Q") || fail "pqmon -S"
metrics
stats1=$(pqmon -S -q "$Q") || fail "pqmon -S"
t1=$(date -u +%Y%m%d.%H%M%S)
((${#F[@]} == 18)) || fail "printmetrics printed ${#F[@]} fields, not 18"
[[ $(wc -l <"$OUT") == 1 ]] || fail "printmetrics printed more than one line"
[[ ${F[0]} =~ ^[0-9]{8}\.[0-9]{6}$ ]] || fail "the time '${F[0]}' is not YYYYMMDD.hhmmss"
[[ ! ${F[0]} < $t0 && ! ${F[0]} > $t1 ]] || fail "the time ${F[0]} is not between $t0 and $t1"
for i in 1 2 3; do
  [[ ${F[$i]} =~ ^[0-9]+\.[0-9]+$ ]] || fail "load field $((i + 1)) '${F[$i]}' is not a number"
done
for ((i = 4; i < 18; i++)); do
  [[ ${F[$i]} =~ ^[0-9]+$ ]] || fail "field $((i + 1)) '${F[$i]}' is not a whole number"
done
read -r -a S0 <<<"$stats0"
read -r -a S1 <<<"$stats1"
((F[7] == 4 && F[7] == S1[6])) || fail "printmetrics counts ${F[7]} products, pqmon -S ${S1[6]}, 4 inserted"
((F[8] == S1[3])) || fail "printmetrics counts ${F[8]} bytes, pqmon -S ${S1[3]}"
((F[6] >= S0[7] && F[6] <= S1[7] && F[6] >= 600)) ||
  fail "printmetrics' queue age ${F[6]} is not pqmon -S's (${S0[7]} to ${S1[7]}, >= 600)"
((F[9] + F[10] + F[11] + F[12] <= 102)) ||
  fail "the CPU percentages ${F[*]:9:4} add up to more than 100"
mem_total=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
((F[13] > 0 && F[13] <= mem_total && F[14] > 0 && F[14] <= mem_total)) ||
  fail "memory used ${F[13]} or free ${F[14]} KiB is not within MemTotal $mem_total KiB"
# The CPU is measured over LDMADMIN_METRICS_INTERVAL, not since boot: the
# command takes at least that long.
ms0=$(date +%s%N)
LDMADMIN_METRICS_INTERVAL=0.5 metrics
ms=$((($(date +%s%N) - ms0) / 1000000))
((ms >= 500)) || fail "printmetrics measured the CPU in $ms ms, under the 0.5 s asked"
LDMADMIN_METRICS_INTERVAL=0 admin_fails printmetrics -- \
  'LDMADMIN_METRICS_INTERVAL "0" is not a number of seconds above 0'
LDMADMIN_METRICS_INTERVAL=1s admin_fails printmetrics -- \
  'LDMADMIN_METRICS_INTERVAL "1s" is not a number of seconds above 0'
ok "printmetrics: 18 numeric fields, the queue's figures those of pqmon -S"

# The connections: the REQUEST to the upstream is the one remote; nothing
# local until notifyme connects, then one, then none once it has gone.
wait_until 30 field_is 5 1 ||
  fail "the remote count is ${F[5]}, not 1, with the REQUEST to port $UP_PORT: $(cat "$LOG")"
((F[4] == 0)) || fail "the local count is ${F[4]} with no downstream connected"
background notifyme -v -l "$SCRATCH/nm.log" -h "127.0.0.1:$PORT" -f ANY -o 3600
nm=$BG
wait_until 20 grep -qs 'prod3\|prod2\|prod1' "$SCRATCH/nm.log" ||
  fail "notifyme got no notice from the server: $(cat "$SCRATCH/nm.log")"
metrics
((F[4] == 1)) || fail "the local count is ${F[4]}, not 1, with notifyme connected to port $PORT"
((F[5] == 1)) || fail "the remote count went to ${F[5]} with notifyme connected"
kill -TERM "$nm"
wait_until 10 gone "$nm" || fail "notifyme did not exit on SIGTERM"
wait_until 10 field_is 4 0 || fail "the local count is still ${F[4]} after notifyme exited"
ok "printmetrics: the local and remote counts follow the real connections"

# addmetrics appends whole lines (making var/logs).
[[ ! -e $MF ]] || fail "$MF exists before any addmetrics"
for i in 1 2 3; do
  admin_ok addmetrics
done
[[ $(wc -l <"$MF") == 3 ]] || fail "three addmetrics gave $(wc -l <"$MF") lines"
awk 'NF != 18 { exit 1 }' "$MF" || fail "a line of $MF has not 18 fields"
ok "addmetrics appends"

# The lock: held by another process, addmetrics waits, bounded, and says
# so; two at once give two whole lines.
# shellcheck disable=SC2016 # $1 is the inner shell's
background sh -c 'exec 8>>"$1" && flock 8 && exec sleep 300' sh "$MF"
holder=$BG
wait_until 10 sh -c "! flock -n '$MF' true" || fail "flock did not take $MF"
LDMADMIN_LOCK_TIMEOUT=1 admin_fails addmetrics -- \
  "another process holds the lock of the metrics file $MF (waited 1 s)"
[[ $(wc -l <"$MF") == 3 ]] || fail "a refused addmetrics wrote to $MF"
kill -TERM "$holder"
wait_until 10 flock -n "$MF" true || fail "the lock of $MF stayed held"
sh "$ADMIN" addmetrics 2>"$SCRATCH/a1.err" &
a1=$!
sh "$ADMIN" addmetrics 2>"$SCRATCH/a2.err" &
a2=$!
wait "$a1" || fail "the first of two addmetrics failed: $(cat "$SCRATCH/a1.err")"
wait "$a2" || fail "the second of two addmetrics failed: $(cat "$SCRATCH/a2.err")"
[[ $(wc -l <"$MF") == 5 ]] || fail "two addmetrics at once gave $(($(wc -l <"$MF") - 3)) lines, not 2"
awk 'NF != 18 { exit 1 }' "$MF" || fail "two addmetrics at once mixed their lines"
ok "addmetrics: under the metrics file's lock"

# newmetrics with /metrics/count 3: the current file and .1 and .2.
regutil -u 3 /metrics/count || fail "regutil -u 3 /metrics/count"
cp "$MF" first
admin_ok newmetrics
expect_in "$ERR" "rotated the metrics file $MF (keeping 3)"
[[ -f $MF && ! -s $MF ]] || fail "newmetrics left no empty $MF"
cmp -s first "$MF.1" || fail "newmetrics did not move $MF to $MF.1"
admin_ok addmetrics
cp "$MF" second
admin_ok newmetrics
cmp -s first "$MF.2" || fail "the second newmetrics did not shift .1 to .2"
cmp -s second "$MF.1" || fail "the second newmetrics did not move $MF to .1"
admin_ok addmetrics
cp "$MF" third
admin_ok newmetrics
[[ ! -e $MF.3 ]] || fail "newmetrics kept $MF.3 with /metrics/count 3"
cmp -s second "$MF.2" || fail "the third newmetrics did not shift .1 to .2"
cmp -s third "$MF.1" || fail "the third newmetrics did not move $MF to .1"
[[ ! -s $MF ]] || fail "the third newmetrics left $MF not empty"
admin_ok addmetrics
admin_ok addmetrics
ok "newmetrics shifts the files and keeps /metrics/count of them"

# plotmetrics from the metrics of this run: .2 and .1 of one line each,
# the current file of two.
nlines=$(cat "$MF"* | wc -l)
((nlines == 4)) || fail "the metrics files hold $nlines lines, not 4"
png_ok() {
  [[ -f $1 ]] || fail "plotmetrics made no $1"
  [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "$1 does not start with the PNG signature"
  (($(stat -c %s "$1") > 2000)) || fail "$1 is only $(stat -c %s "$1") bytes"
  if command -v file >/dev/null; then
    file "$1" | grep -q 'PNG image data' || fail "file(1) says $(file "$1")"
  fi
}
PLOTS=(age queue connections load cpu memory switches)
if command -v gnuplot >/dev/null; then
  admin_ok plotmetrics
  [[ $(wc -l <"$OUT") == "${#PLOTS[@]}" ]] || fail "plotmetrics listed $(wc -l <"$OUT") files"
  for p in "${PLOTS[@]}"; do
    grep -qxF "$LDMHOME/var/logs/metrics-$p.png" "$OUT" ||
      fail "plotmetrics did not list $LDMHOME/var/logs/metrics-$p.png"
    png_ok "$LDMHOME/var/logs/metrics-$p.png"
  done
  expect_in "$ERR" "plotted $nlines metrics lines"
  ok "plotmetrics: ${#PLOTS[@]} PNG files from the $nlines lines of the run"

  # -b and -e, both included: the first line's time alone; -o.
  first=$(cat "$MF"* | awk '{ print $1 }' | sort | head -1)
  same=$(cat "$MF"* | awk -v t="$first" '$1 == t' | wc -l)
  mkdir plots
  admin_ok plotmetrics -b "$first" -e "$first" -o "$SCRATCH/plots/run-"
  expect_in "$ERR" "plotted $same metrics lines from $first to $first"
  for p in "${PLOTS[@]}"; do
    png_ok "$SCRATCH/plots/run-$p.png"
  done
  admin_ok plotmetrics -b now-1h -e now
  expect_in "$ERR" "plotted $nlines metrics lines"
  admin_ok plotmetrics -b "${first%%.*}" -e 99991231
  expect_in "$ERR" "plotted $nlines metrics lines from ${first%%.*}.000000 to 99991231.000000"
  ok "plotmetrics: -b, -e (both included, LDM's form and now-N), -o"
else
  skip_part "no gnuplot: plotmetrics' plots not tried (apt-get install gnuplot-nox)"
fi

# The refusals.
admin_fails plotmetrics -e now-1h -- "no metrics between"
admin_fails plotmetrics -b 2026-01-01 -- '-b "2026-01-01" is not a time'
admin_fails plotmetrics -e 20261301 -- '-e "20261301" is not a time'
admin_fails plotmetrics -b now-1x -- '-b "now-1x" is not a time'
admin_fails plotmetrics -b 20260102 -e 20260101 -- \
  "the beginning 20260102.000000 is after the end 20260101.000000"
GNUPLOT=$SCRATCH/no-gnuplot admin_fails plotmetrics -- \
  "cannot plot: no $SCRATCH/no-gnuplot program (on Debian: apt-get install gnuplot-nox)"
regutil -s "$SCRATCH/none/metrics.txt*" /metrics/files || fail "regutil -s /metrics/files"
admin_fails plotmetrics -- "no metrics file matches $SCRATCH/none/metrics.txt*"
ok "plotmetrics refuses a bad time, begin after end, no data, no gnuplot"

# With the server stopped: the same line, no connection of its own.
admin_ok stop
metrics
((${#F[@]} == 18 && F[4] == 0 && F[5] == 0 && F[7] == 4)) ||
  fail "printmetrics with the server stopped: ${F[*]}"
ok "printmetrics with the server stopped"
