#!/usr/bin/env bash
# mainjob.sh - the main job (README): two LDM servers relaying a live,
# IDD-like stream on this machine, and a view of what arrives downstream.
#
#   iddfeed --> upstream queue --> upstream ldmd ==TCP==> downstream ldmd
#                                   (127.0.0.1)   REQUEST  --> downstream queue
#                                                              --> notifyme
#                                                              --> pqact (EXEC)
#                                                                  --> files
#
# Everything lives in one run directory on /dev/shm made for this run: a
# registry file, an ldmd.conf, a queue and a log per server.  The upstream
# ALLOWs this host; the downstream REQUESTs every feed from the upstream.
# Both listen on 127.0.0.1 on ports the kernel picks (-P 0; read from their
# logs), so the job never collides with an LDM on port 388 or with itself.
# iddfeed (test/mainjob/iddfeed.c) inserts products into the upstream's
# queue: the 2024 IDD feed mix (NEXRAD2/3, SATELLITE, NIMAGE, text,
# CONDUIT, NGRID), scaled down to a few products a second; notifyme -v on
# the downstream shows each product as the downstream receives it, and the
# downstream's ldmd runs pqact (an EXEC entry), which files every product
# under the run directory's downstream/data by kind, as a site would.
#
# Ctrl-C (SIGINT), SIGTERM, or the end of MAINJOB_DURATION stops everything
# the job started, by pid, prints a summary, and removes the run directory.
#
# Usage: scripts/mainjob.sh [BUILD_DIR]       (default: build/release)
# Environment (all optional):
#   MAINJOB_DURATION    seconds to run, then stop by itself (default: until
#                       stopped)
#   MAINJOB_SCALE       rate relative to the 2024 IDD average of 109
#                       products/s and 17.6 MB/s (default 0.05)
#   MAINJOB_SEED        seed of the stream (default: the time; printed)
#   MAINJOB_QUEUE_SIZE  bytes of each queue, pqcreate's syntax (default 200M)
#   MAINJOB_DIR         where the run directory is made (default /dev/shm)
#   MAINJOB_KEEP        1: keep the run directory (logs, queues) at the end
# (Functions called from the traps only are not unreachable.)
# shellcheck disable=SC2317
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build/release}" && pwd)
duration=${MAINJOB_DURATION:-0}
scale=${MAINJOB_SCALE:-0.05}
seed=${MAINJOB_SEED:-$(date +%s)}
qsize=${MAINJOB_QUEUE_SIZE:-200M}
base=${MAINJOB_DIR:-/dev/shm}
keep=${MAINJOB_KEEP:-0}

say() { printf '==> %s\n' "$*"; }
die() {
  printf 'mainjob: %s\n' "$*" >&2
  exit 1
}

ldmd=$build/bin/ldmd
pqcreate=$build/bin/pqcreate
pqmon=$build/bin/pqmon
notifyme=$build/bin/notifyme
pqact=$build/bin/pqact
pqcat=$build/bin/pqcat
iddfeed=$build/test/iddfeed
for p in "$ldmd" "$pqcreate" "$pqmon" "$notifyme" "$pqact" "$pqcat" "$iddfeed"; do
  [[ -x $p ]] || die "$p is missing: build first (scripts/dev.sh run does)"
done
[[ $duration =~ ^[0-9]+$ ]] || die "MAINJOB_DURATION must be whole seconds"
[[ -d $base && -w $base ]] || die "cannot write in $base (MAINJOB_DIR)"

run=$(mktemp -d "$base/ldm-mainjob.XXXXXX")
up=$run/upstream
down=$run/downstream
mkdir "$up" "$down"
unset LDM_REGISTRY_DIR
export LDMHOME=$run

# Every process the job starts, by role; stopped in this order.
declare -A pid=()
order=(feed view downstream upstream)
stopping=0
status=0

# alive PID: is it still running (and not a zombie we have yet to reap)?
alive() {
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null
}

# stop ROLE: SIGTERM, up to 15 s for it to exit, then SIGKILL.
stop() {
  local p=${pid[$1]:-} i
  [[ -n $p ]] || return 0
  kill -TERM "$p" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    alive "$p" || break
    sleep 0.1
  done
  if alive "$p"; then
    say "$1 (pid $p) did not stop on SIGTERM: killing it"
    kill -KILL "$p" 2>/dev/null || true
  fi
  wait "$p" 2>/dev/null || true
  unset "pid[$1]"
}

# queue_count QUEUE: "products bytes" in the queue (pqmon -S).
# (isFull dataCapacity dataHighWater dataCurrent prodCapacity
# prodHighWater prodCurrent ...)
queue_count() {
  local s f
  s=$(LDM_REGISTRY=$(dirname "$1")/registry.xml "$pqmon" -S -q "$1" \
    2>/dev/null) || return 1
  read -r -a f <<<"$s"
  ((${#f[@]} >= 7)) || return 1
  printf '%s %s\n' "${f[6]}" "${f[3]}"
}

# leftovers: pids of processes still running from the run directory (the
# servers' connection processes carry its paths on their command lines).
leftovers() {
  local f p
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}
    p=${p%/cmdline}
    [[ $p == "$$" || $p == "$BASHPID" ]] && continue
    if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF -- "$run/"; then
      printf '%s\n' "$p"
    fi
  done
}

# filed_bytes: bytes pqact has filed under the downstream's data directory.
filed_bytes() {
  find "$down/data" -type f -printf '%s\n' | awk '{n += $1} END {print n + 0}'
}
# queued_bytes: bytes of data the downstream queue holds (pqcat of it all).
queued_bytes() {
  LDM_REGISTRY=$down/registry.xml "$pqcat" -q "$down/ldm.pq" 2>/dev/null |
    wc -c
}

cleanup() {
  local r p n
  ((stopping)) && return 0
  stopping=1
  set +e
  trap '' INT TERM
  say "stopping everything the main job started"
  stop feed
  [[ -s $run/feed.log ]] && say "$(tail -n 1 "$run/feed.log")"
  # Let the last products reach the downstream (at most 3 s).
  if [[ -n ${pid[downstream]:-} ]]; then
    for ((p = 0; p < 30; p++)); do
      n=$(queue_count "$up/ldm.pq") || break
      r=$(queue_count "$down/ldm.pq") || break
      ((${r%% *} >= ${n%% *})) && break
      sleep 0.1
    done
  fi
  # Let pqact file what the downstream received (at most 3 s): the data
  # of every product, appended to the files its pqact.conf names.
  if [[ -n ${pid[downstream]:-} && -d $down/data ]]; then
    for ((p = 0; p < 30; p++)); do
      n=$(filed_bytes) && r=$(queued_bytes) && ((n >= r)) && break
      sleep 0.1
    done
  fi
  for r in "${order[@]}"; do
    stop "$r"
  done
  if [[ -d $down/data ]]; then
    r=$(find "$down/data" -type f | wc -l)
    say "pqact filed $(filed_bytes) bytes in $r files under $down/data" \
      "(the downstream queue holds $(queued_bytes) bytes of data)"
    r=$(sed -n 's/.* \([0-9]*\) products processed$/\1/p' "$down/pqact.log")
    [[ -n $r ]] && say "pqact processed $r products"
  fi
  for p in $(leftovers); do
    say "process $p was left over: killing it"
    kill -KILL "$p" 2>/dev/null
  done
  if [[ -f $up/ldm.pq && -f $down/ldm.pq ]]; then
    r=$(queue_count "$up/ldm.pq") &&
      say "upstream queue:   ${r%% *} products, ${r##* } bytes"
    r=$(queue_count "$down/ldm.pq") &&
      say "downstream queue: ${r%% *} products, ${r##* } bytes"
  fi
  # A server's standard error is empty unless something went badly wrong
  # (a sanitizer's report, a crash message): show it.
  for f in "$up/ldmd.err" "$down/ldmd.err"; do
    if [[ -s $f ]]; then
      say "$f is not empty:"
      head -c 4000 "$f"
    fi
  done
  if grep -qaE 'Sanitizer|runtime error:' "$run/feed.log" 2>/dev/null; then
    head -c 4000 "$run/feed.log"
  fi
  if ((status != 0)); then
    for f in "$up/ldmd.log" "$up/ldmd.err" "$down/ldmd.log" \
      "$down/ldmd.err" "$run/feed.log"; do
      [[ -s $f ]] || continue
      echo "--- $f (end):" >&2
      tail -n 20 "$f" >&2
    done
  fi
  if [[ $keep == 1 ]]; then
    say "kept $run"
  else
    rm -rf "$run"
    say "removed $run"
  fi
  say "stopped"
}
trap 'cleanup' EXIT
trap 'echo; say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

fail() {
  status=1
  die "$*"
}

# registry SIDE: the server's registry file (LDM_REGISTRY for it and for
# the utilities run on its queue).
registry() {
  cat >"$1/registry.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- The main job's $(basename "$1") server. -->
<registry>
  <hostname>$(basename "$1").mainjob</hostname>
  <queue>
    <path>$1/ldm.pq</path>
    <size>$qsize</size>
  </queue>
  <server>
    <config-path>$1/ldmd.conf</config-path>
    <!-- root, if started as root: a dev machine may have no user ldm -->
    <user>root</user>
    <ip-addr>127.0.0.1</ip-addr>
    <max-latency>3600</max-latency>
    <time-offset>3600</time-offset>
  </server>
  <log><file>$1/ldmd.log</file></log>
</registry>
EOF
}

# start_ldmd SIDE: start the server in the foreground, logging to its file;
# sets port to the port it listens on.
start_ldmd() {
  local side=$1 role i
  role=$(basename "$side")
  port=
  : >"$side/ldmd.log"
  LDM_REGISTRY=$side/registry.xml "$ldmd" -f -l "$side/ldmd.log" -P 0 \
    -I 127.0.0.1 -q "$side/ldm.pq" "$side/ldmd.conf" 2>"$side/ldmd.err" &
  pid[$role]=$!
  for ((i = 0; i < 100; i++)); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' \
      "$side/ldmd.log" | head -n 1)
    [[ -n $port ]] && break
    alive "${pid[$role]}" || break
    sleep 0.1
  done
  [[ -n $port ]] || fail "the $role ldmd did not start"
}

say "run directory $run"
for side in "$up" "$down"; do
  registry "$side"
  say "creating the $(basename "$side") queue $side/ldm.pq ($qsize bytes)"
  LDM_REGISTRY=$side/registry.xml "$pqcreate" -c -s "$qsize" -q "$side/ldm.pq" ||
    fail "cannot create $side/ldm.pq"
done

cat >"$up/ldmd.conf" <<'EOF'
# The main job's upstream: serves every feed to this host.
ALLOW	ANY	^((localhost|loopback)|(127\.0\.0\.1\.?))$
EOF
say "starting the upstream ldmd (log $up/ldmd.log)"
start_ldmd "$up"
up_port=$port
say "upstream ldmd (pid ${pid[upstream]}) listens on 127.0.0.1:$up_port"

mkdir -p "$down/data"
cat >"$down/pqact.conf" <<'EOF'
# The main job's pqact: every product the downstream receives, filed by
# kind, one file an hour (text products one file a heading and office).
WMO	^([A-Z]{4}[0-9]{2}) ([A-Z]{4})	FILE	text/\2/\1.txt
NEXRAD2	.*	FILE	nexrad2/%Y%m%d%H.raw
NEXRAD3	.*	FILE	nexrad3/%Y%m%d%H.raw
SATELLITE|NIMAGE	.*	FILE	images/%Y%m%d%H.raw
CONDUIT|NGRID	.*	FILE	grids/%Y%m%d%H.raw
ANY	^_ELSE_$	FILE	other/%Y%m%d%H.raw
EOF
cat >"$down/ldmd.conf" <<EOF
# The main job's downstream: asks the upstream for every feed, lets this
# host (notifyme) see what it receives, and runs pqact to file it.
REQUEST	ANY	".*"	127.0.0.1:$up_port
ALLOW	ANY	^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))\$
EXEC	"$pqact -l $down/pqact.log -d $down/data -q $down/ldm.pq $down/pqact.conf"
EOF
say "starting the downstream ldmd: REQUEST ANY \".*\" 127.0.0.1:$up_port" \
  "(log $down/ldmd.log)"
start_ldmd "$down"
down_port=$port
say "downstream ldmd (pid ${pid[downstream]}) listens on" \
  "127.0.0.1:$down_port"
if grep -q 'REQUEST entries are not served' "$down/ldmd.log"; then
  fail "this ldmd does not serve REQUEST entries yet"
fi

# The downstream's request shows in the upstream's log as a feed starting.
for ((i = 0; i < 100; i++)); do
  grep -q '(feed).*starting up' "$up/ldmd.log" && break
  sleep 0.1
done
if grep -q '(feed).*starting up' "$up/ldmd.log"; then
  say "the upstream is feeding the downstream"
else
  say "the downstream has not connected yet; going on (see the logs)"
fi

say "showing the products the downstream receives:" \
  "notifyme -v -l - -h 127.0.0.1:$down_port"
LDM_REGISTRY=$down/registry.xml "$notifyme" -v -l - -h "127.0.0.1:$down_port" &
pid[view]=$!
sleep 0.3

say "starting iddfeed: an IDD-like stream into the upstream queue at" \
  "$scale x the 2024 average (seed $seed)"
"$iddfeed" -q "$up/ldm.pq" -x "$scale" -s "$seed" -o "ingest.mainjob" \
  2>"$run/feed.log" &
pid[feed]=$!
sleep 0.1
[[ -s $run/feed.log ]] && say "$(head -n 1 "$run/feed.log")"

if ((duration > 0)); then
  say "running for $duration s"
  sleep "$duration" &
  pid[timer]=$!
  order+=(timer)
else
  say "running; press Ctrl-C to stop"
fi

# Wait until the time is up, a signal comes, or a process ends by itself.
ended=
while [[ -z $ended ]]; do
  for r in "${!pid[@]}"; do
    if ! alive "${pid[$r]}"; then
      ended=$r
      break
    fi
  done
  [[ -n $ended ]] || wait -n "${pid[@]}" 2>/dev/null || true
done
if [[ $ended != timer ]]; then
  status=1
  say "the $ended process (pid ${pid[$ended]}) ended by itself"
fi
exit "$status"
