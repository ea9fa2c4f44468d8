#!/usr/bin/env bash
# pqmon_live.sh - pqmon's live view (pqmon -L, pqmon.1) against
# real servers on 127.0.0.1: two of our ldmd as a relay pair (down
# REQUESTs IDS from up) with the figures on (the default) and products
# flowing into up's queue all along.  Piped, pqmon -L prints plain frames
# (no escape sequence, 80 columns, 24 lines) that show the queue, down's
# IDS feed and its requester, up's feeder, with counts that grow from frame
# to frame and latencies as old as the products are; a pqmon watching
# while down stops says that ldmd's figures are gone and shows the queue
# alone, as it does from the start when there is no figures file.  In a
# pseudo-terminal (script(1)), the frames are drawn with the escapes, q
# quits, ^C (SIGINT) quits, and the terminal is left as it was (canonical
# mode, echo).  A figures file the registry names (/metrics/live-path) is found,
# and not taken for a queue it is not of.
#
# Usage: pqmon_live.sh LDMD LDM6_PEER PQMON

# shellcheck source-path=SCRIPTDIR source=../net/lib.sh
source "$(dirname "$0")/../net/lib.sh" "$1" "$2"
# shellcheck source-path=SCRIPTDIR source=../net/relay_lib.sh
source "$(dirname "$0")/../net/relay_lib.sh"
PQMON=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
RELAY_REQUESTER_KEYS='<retry-min>1</retry-min><retry-max>1</retry-max>'

# frames FILE: how many frames FILE holds (their title lines).
frames() {
  grep -c '^pqmon -L ' "$1"
}

# column FILE ERE N: field N of the lines of FILE matching ERE, one a line.
column() {
  awk -v re="$2" -v n="$3" '$0 ~ re { print $n }' "$1"
}

# live NAME OUT [OPTIONS...]: pqmon -L on NAME's queue, its registry's,
# piped into OUT; it must exit 0.
live() {
  local name=$1 out=$2
  shift 2
  LDM_REGISTRY=$(srv_dir "$name")/registry.xml "$PQMON" -l - \
    -q "$(srv_queue "$name")" -L "$@" >"$out" 2>"$out.err"
  local st=$?
  ((st == 0)) || fail "pqmon -L $* on $name exited $st: $(cat "$out.err")"
}

# shows NAME TEXT: does one frame of NAME's live view show TEXT?
shows() {
  live "$1" "shows.$1" -n 1
  grep -qE -- "$2" "shows.$1"
}

command -v script >/dev/null || fail "script (util-linux) is not installed"

# ---- no figures file ---------------------------------------------------
srv_init alone 10000000 100
live alone alone.out -n 2 -i 0.1
(($(frames alone.out) == 2)) || fail "-n 2 printed $(frames alone.out) frames"
expect_in alone.out "queue: 0 products"
expect_in alone.out "ldmd: its figures are not there:"
# The reason, wrapped at 80 columns: joined again.
awk '/^pqmon -L / { n++ } n == 1 && /^  / { printf "%s", substr($0, 3) }' \
  alone.out >alone.why
expect_in alone.why "cannot open the metrics file $(srv_queue alone).metrics: No such file or directory"
expect_not_in alone.out "FEED"
ok "without ldmd: the queue alone, and that ldmd's figures are not there"

# ---- a relay pair, products flowing ------------------------------------
srv_init up 100000000 5000
srv_init down 100000000 5000
srv_upstream up
srv_downstream down up IDS
wait_until 10 shows down '^requester ' ||
  fail "down's live view shows no requester: $(cat shows.down)"
# 50 products a second for up to 100 s, each created 2 s before it is
# inserted into up.
background "$PEER" insert -q "$(srv_queue up)" -n 5000 -s 1000 -f IDS -a 2 \
  -i flow -z 1 -d 20 >inserter.out
INSERTER=$BG
wait_until 15 holds "$(srv_queue down)" 20 || srv_fail down "no product in down"

live down down.out -n 3 -i 0.5
(($(frames down.out) == 3)) || fail "-n 3 printed $(frames down.out) frames"
if grep -q $'\033' down.out; then
  fail "escape sequences in piped frames"
fi
awk 'length($0) > 80 { exit 1 }' down.out || fail "a line wider than 80 columns"
awk '/^pqmon -L / { if (n > 24) exit 1; n = 0 } { if ($0 != "") n++ }
     END { exit n > 24 }' down.out || fail "a frame taller than 24 lines"
grep -qE '^pqmon -L  [0-9-]+ [0-9:]+ UTC  every 0\.5s  /' down.out ||
  fail "no title with the time, the interval and the queue"
mapfile -t q < <(column down.out '^queue: ' 2)
mapfile -t feed < <(column down.out '^IDS ' 2)
mapfile -t feedrate < <(column down.out '^IDS ' 3)
mapfile -t mean < <(column down.out '^IDS ' 5)
mapfile -t p50 < <(column down.out '^IDS ' 6)
mapfile -t p95 < <(column down.out '^IDS ' 7)
mapfile -t connrate < <(column down.out '^requester ' 3)
((${#feed[@]} == 3 && ${#connrate[@]} == 3 && ${#q[@]} == 3)) ||
  fail "not one IDS feed, requester and queue line a frame: ${feed[*]} / ${connrate[*]} / ${q[*]}"
((feed[0] < feed[1] && feed[1] < feed[2])) ||
  fail "the IDS feed's products do not grow: ${feed[*]}"
((q[0] < q[2])) || fail "the queue's products do not grow: ${q[*]}"
[[ ${feedrate[0]} == - && ${connrate[0]} == - ]] ||
  fail "rates in the first frame, before any interval: ${feedrate[0]} ${connrate[0]}"
# 50 a second inserted into up (at most: a busy machine may pace the
# inserter slower); what one interval of 0.5 s saw.
for r in "${feedrate[1]}" "${feedrate[2]}" "${connrate[1]}" "${connrate[2]}"; do
  awk -v r="$r" 'BEGIN { exit !(r ~ /^[0-9.]+$/ && r > 0 && r <= 200) }' ||
    fail "a rate of $r products/s, not up to about 50: $(cat down.out)"
done
# Created 2 s before insertion into up: a mean of 2 s and a little (the
# sum is exact; under 5 s even on a busy machine), p50 and p95 within the
# buckets that hold such latencies (1 to 2.5 s, 2.5 to 5 s).
for i in 1 2; do
  awk -v m="${mean[i]}" 'BEGIN { exit !(m ~ /^[0-9.]+s$/ && m + 0 >= 2 && m + 0 < 5) }' ||
    fail "mean latency ${mean[i]}, not 2 to 5 s: $(cat down.out)"
  for p in "${p50[i]}" "${p95[i]}"; do
    awk -v p="$p" 'BEGIN { exit !(p ~ /^[0-9.]+s$/ && p + 0 >= 1 && p + 0 <= 5) }' ||
      fail "a latency percentile of $p, not within 1 to 5 s: $(cat down.out)"
  done
done
grep -qE "^requester .* 127\.0\.0\.1 port ${SRV_PORT[up]} +IDS" down.out ||
  fail "the requester's peer and class are not shown: $(cat down.out)"
ok "down: 3 plain frames; its IDS feed counts up (${feed[*]}), ${feedrate[2]} products/s, p50 ${p50[2]}; its requester shown"

live up up.out -n 2 -i 0.3
mapfile -t sent < <(column up.out '^upstream ' 3)
mapfile -t lag < <(column up.out '^upstream ' 4)
((${#sent[@]} == 2)) || fail "not one feeder a frame on up: $(cat up.out)"
awk -v r="${sent[1]}" 'BEGIN { exit !(r ~ /^[0-9.]+$/ && r > 0 && r <= 200) }' ||
  fail "up's feeder sends ${sent[1]} products/s, not up to about 50: $(cat up.out)"
[[ ${lag[1]} =~ ^[0-9.]+s$ ]] || fail "up's feeder has no lag: ${lag[1]}"
# Its peer, "localhost (127.0.0.1)", is cut at 80 columns, and the class
# with it (the terminal's test below shows them whole).
grep -q "^upstream .* [a-z]* (127\.0\.0\.1" up.out ||
  fail "up's feeder's peer is not shown: $(cat up.out)"
expect_in up.out "  (no product received yet)"
ok "up: its feeder to down sends ${sent[1]} products/s, lag ${lag[1]}"

# ---- in a terminal -----------------------------------------------------
# drawn FILE N: has FILE at least N frames (titles, wherever they are)?
drawn() {
  (($(grep -ao 'pqmon -L  ' "$1" 2>/dev/null | wc -l) >= $2))
}

# tty_run NAME KEY COLS: pqmon -L on up's queue in a pseudo-terminal
# (script) of 20 lines and COLS columns, fed from a FIFO; once it has drawn
# two frames, KEY is typed; pqmon must then end by itself, exit 0, and
# leave the terminal in canonical mode with echo (stty, run after it in the
# same terminal).  Every line of a frame fits in the columns.  The
# typescript is NAME.tty.
tty_run() {
  local name=$1 key=$2 cols=$3 st
  rm -f "$name.fifo" "$name.tty"
  mkfifo "$name.fifo"
  exec 3<>"$name.fifo" # read-write: opening it does not wait for a reader
  # Not with background: bash would give an asynchronous command of a
  # function /dev/null for its standard input.
  LDM_REGISTRY=$(srv_dir up)/registry.xml script -qfec \
    "stty rows 20 cols $cols; $PQMON -l $SCRATCH/$name.log -q $(srv_queue up) -L -i 0.2; echo pqmon-exit=\$?; stty -a" \
    "$name.tty" <"$name.fifo" >"$name.screen" 3>&- &
  local pid=$!
  BG_PIDS+=("$pid")
  wait_until 10 drawn "$name.tty" 2 ||
    fail "$name: pqmon -L drew fewer than 2 frames in 10 s: $(cat -v "$name.tty")"
  printf '%b' "$key" >&3
  wait_until 10 grep -q 'pqmon-exit=[0-9]' "$name.tty" ||
    fail "$name: pqmon -L did not end on $(printf '%q' "$key"): $(tail -c 2000 "$name.tty" | cat -v)"
  exec 3>&-
  wait_until 10 gone "$pid" || fail "$name: script did not end"
  wait "$pid"
  st=$?
  ((st == 0)) || fail "$name: script exited $st"
  grep -q 'pqmon-exit=0' "$name.tty" ||
    fail "$name: $(grep -ao 'pqmon-exit=[0-9]*' "$name.tty")"
  grep -q $'\033\\[H\033\\[2J' "$name.tty" ||
    fail "$name: no home-and-clear escapes: $(head -c 500 "$name.tty" | cat -v)"
  grep -q $'\033\\[?25l' "$name.tty" || fail "$name: the cursor was not hidden"
  grep -q $'\033\\[?25h' "$name.tty" || fail "$name: the cursor was not shown again"
  sed -n '/pqmon-exit=[0-9]/,$p' "$name.tty" | tr -d '\r' >"$name.stty"
  if ! grep -qE '(^| )icanon( |$)' "$name.stty" ||
    ! grep -qE '(^| )echo( |$)' "$name.stty"; then
    fail "$name: the terminal was not put back: $(cat "$name.stty")"
  fi
  # (The typescript's first line is script's, with the command.)
  sed -n '1d; /pqmon-exit=[0-9]/q; p' "$name.tty" | tr -d '\r' |
    sed 's/\x1b\[[0-9;?]*[a-zA-Z]/\n/g' >"$name.lines"
  awk -v cols="$cols" 'length($0) > cols { exit 1 }' "$name.lines" ||
    fail "$name: a line wider than the terminal's $cols columns"
}

tty_run quit q 200
# 200 columns: up's feeder's peer and class whole.
grep -qE '^upstream .* localhost \(127\.0\.0\.1\) +[0-9.]+ TS_ENDT \{\{IDS' \
  quit.lines || fail "no whole peer and class at 200 columns: $(cat quit.lines)"
ok "in a terminal: escapes, q quits (0), the terminal is put back"
tty_run interrupt '\003' 60
ok "in a terminal: ^C (SIGINT) quits (0), the terminal is put back; 60 columns"


# A live view that watches down stop: the figures go, the queue stays.
LDM_REGISTRY=$(srv_dir down)/registry.xml background "$PQMON" -l - \
  -q "$(srv_queue down)" -L -i 0.2 >watch.out 2>watch.err
WATCH=$BG
wait_until 10 grep -q '^requester ' watch.out || fail "the watcher shows no requester"
srv_stop down
wait_until 10 grep -q 'its figures are not there' watch.out ||
  fail "the watcher did not see down's figures go: $(tail -30 watch.out)"
kill -TERM "$WATCH"
wait_until 10 gone "$WATCH" || fail "pqmon -L did not stop on SIGTERM"
wait "$WATCH"
st=$?
((st == 0)) || fail "pqmon -L exited $st on SIGTERM: $(cat watch.err)"
tail -8 watch.out | grep -q '^queue: [0-9]* products' ||
  fail "no queue line once the figures went: $(tail -8 watch.out)"
ok "a live view sees ldmd stop: its figures go, the queue stays; SIGTERM ends it (0)"

# The registry's /metrics/live-path: found there, and taken only for its queue.
srv_stop up
sed -i "s|</registry>|  <metrics><live-path>$SCRATCH/up.figures</live-path></metrics>\n</registry>|" \
  "$(srv_dir up)/registry.xml"
srv_start up
wait_until 10 test -e "$SCRATCH/up.figures" || srv_fail up "no $SCRATCH/up.figures"
[[ ! -e $(srv_queue up).metrics ]] || fail "a figures file beside up's queue too"
live up named.out -n 1
expect_in named.out "ldmd: pid ${SRV_PID[up]}, up "
cp "$(srv_dir up)/registry.xml" other.xml
sed -i "s|<path>$(srv_queue up)</path>|<path>$(srv_queue alone)</path>|" other.xml
LDM_REGISTRY=$SCRATCH/other.xml "$PQMON" -l - -L -n 1 >other.out 2>other.err ||
  fail "pqmon -L with another queue's figures file failed: $(cat other.err)"
expect_in other.out "queue: 0 products"
expect_in other.out "ldmd: its figures are not there:"
# The reason is wrapped to the screen, at a space or inside a long path
# (where depends on the path's length): compared without the blanks.
awk '/^  / { printf "%s", substr($0, 3) }' other.out | tr -d ' ' >other.why
why="$SCRATCH/up.figures is the figures of another queue, $(srv_queue up)"
expect_in other.why "${why// /}"
ok "the registry's /metrics/live-path is read, and not taken for another queue"

kill -TERM "$INSERTER" 2>/dev/null
srv_stop up
