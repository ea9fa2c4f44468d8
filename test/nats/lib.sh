# shellcheck shell=bash
# lib.sh - sourced by every shell test of the bridge to NATS JetStream
# (pqutils/nats/: pq2nats, nats2pq).
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the queue utilities (pqcreate, pqinsert...),
# the directory of the bridge's programs, then (tests.cmake gives it) the
# path of natspeek ($NATSPEEK: the server's side of what is stored,
# natspeek.c); more arguments stay in NATS_ARGS for the test.
#
# What the suites share (scratch directory, cleanup, fail, run, wait_until,
# background) is test/lib/common.sh; here is what only this suite needs:
# nats-server, run by the test itself as its child, in the foreground (no
# daemon), with its store under $SCRATCH, on 127.0.0.1 only:
#
#   nats_start NAME PORT [CONF-LINE...]
#       start server NAME with JetStream on 127.0.0.1:PORT (PORT 0: a free
#       port the server picks, read from its log), its monitoring port a
#       free one too, more configuration lines after the defaults; wait,
#       bounded, until it says it is ready (its log) and its /healthz
#       answers ok.  Sets NATS_PORT[NAME], NATS_MPORT[NAME] (monitoring),
#       NATS_PID[NAME], NATS_URL[NAME] (nats://127.0.0.1:PORT),
#       NATS_LOG[NAME]; and NATS_URL_NOW, the URL of the server just
#       started.
#   nats_stop NAME       a clean stop (SIGINT: nats-server exits 1 after a
#                        SIGTERM, 0 after a SIGINT), bounded wait for the
#                        exit, which must be 0
#   nats_kill NAME       SIGKILL, wait for the exit
#   nats_restart NAME    start NAME again on the same ports and store
#   nats_cluster_start NAME PORT1 PORT2 PORT3 CPORT1 CPORT2 CPORT3
#       three servers NAME1..NAME3 of one JetStream cluster NAME (client
#       ports PORTi, cluster ports CPORTi, each routing to the others);
#       waits until each is ready and the cluster has a meta leader
#       (/jsz of each says so).  NATS_CLUSTER_URL: the three URLs,
#       comma-separated.
#   nats_jsz NAME [QUERY]  print the server's /jsz?QUERY (JSON) on stdout
#
# A test that cannot find nats-server is skipped (skip_test; a failure
# under CI=true, where the README's install step has put it there).  Every server
# is killed at exit with the test's other background processes (cleanup).

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

BIN=$(cd "${1:?directory of the queue utilities}" && pwd)
NBIN=$(cd "${2:?directory of the bridge programs}" && pwd)
shift 2
# shellcheck disable=SC2034 # for the tests
NATSPEEK=${1:-}
(($# == 0)) || shift
# shellcheck disable=SC2034 # for the tests
NATS_ARGS=("$@")
scratch_init pqnats /dev/shm
export PATH=$NBIN:$BIN:$PATH
FAIL_LOGS=(OUT:stdout ERR:stderr EXTRA_LOG)
FAIL_SHOW='tail'
FAIL_BYTES=4000

NATS_SERVER=$(command -v nats-server || true)
if [[ -z $NATS_SERVER ]]; then
  for d in /usr/sbin /usr/local/sbin /usr/bin; do
    [[ -x $d/nats-server ]] && NATS_SERVER=$d/nats-server && break
  done
fi
[[ -n $NATS_SERVER ]] ||
  skip_test "nats-server is not installed (README: install)"
command -v curl >/dev/null || fail "curl is not installed (README: install)"

declare -A NATS_PORT NATS_MPORT NATS_PID NATS_URL NATS_LOG NATS_CONF
# shellcheck disable=SC2034 # for the tests
NATS_URL_NOW=
# shellcheck disable=SC2034 # for the tests
NATS_CLUSTER_URL=

# _nats_conf NAME PORT MPORT [LINES...]: write the server's configuration.
_nats_conf() {
  local name=$1 port=$2 mport=$3 dir=$SCRATCH/nats/$1
  shift 3
  mkdir -p "$dir/store"
  {
    echo "server_name: $name"
    echo "listen: 127.0.0.1:$port"
    echo "http: 127.0.0.1:$mport"
    echo "jetstream {"
    echo "  store_dir: \"$dir/store\""
    echo "  max_memory_store: 256MB"
    echo "  max_file_store: 4GB"
    echo "}"
    printf '%s\n' "$@"
  } >"$dir/server.conf"
  NATS_CONF[$name]=$dir/server.conf
}

# _nats_healthy MPORT: does /healthz answer ok?
_nats_healthy() {
  curl -fsS --max-time 2 "http://127.0.0.1:$1/healthz" 2>/dev/null |
    grep -q '"ok"'
}

# _nats_run NAME: start the server of NATS_CONF[NAME] in the background
# (its log appended to NATS_LOG[NAME]) and wait until it is ready.
_nats_run() {
  local name=$1 log=$SCRATCH/nats/$1/server.log port
  NATS_LOG[$name]=$log
  local start_lines=0
  [[ -f $log ]] && start_lines=$(wc -l <"$log")
  background "$NATS_SERVER" -c "${NATS_CONF[$name]}" >>"$log" 2>&1
  NATS_PID[$name]=$BG
  # shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
  EXTRA_LOG=$log
  wait_until 30 eval "tail -n +$((start_lines + 1)) '$log' |
    grep -q 'Server is ready'" || {
    gone "$BG" && fail "nats-server $name exited at startup"
    fail "nats-server $name is not ready within 30 s"
  }
  if [[ ${NATS_PORT[$name]} == 0 ]]; then
    port=$(tail -n +$((start_lines + 1)) "$log" |
      sed -n 's/.*Listening for client connections on 127\.0\.0\.1:\([0-9]*\).*/\1/p' |
      head -n 1)
    [[ -n $port ]] || fail "no client port in the log of nats-server $name"
    NATS_PORT[$name]=$port
    # a restart keeps the port: clients reconnect to the same URL
    sed -i "s/^listen: .*/listen: 127.0.0.1:$port/" "${NATS_CONF[$name]}"
  fi
  if [[ ${NATS_MPORT[$name]} == -1 ]]; then
    port=$(tail -n +$((start_lines + 1)) "$log" |
      sed -n 's/.*Starting http monitor on 127\.0\.0\.1:\([0-9]*\).*/\1/p' |
      head -n 1)
    [[ -n $port ]] || fail "no monitoring port in the log of nats-server $name"
    NATS_MPORT[$name]=$port
    sed -i "s/^http: .*/http: 127.0.0.1:$port/" "${NATS_CONF[$name]}"
  fi
  # NATS_HEALTH_WAIT: a restarted cluster node is healthy once its replicas
  # caught up, which nats-server 2.9.10 once took 157 s for (cluster.sh)
  wait_until "${NATS_HEALTH_WAIT:-20}" _nats_healthy "${NATS_MPORT[$name]}" ||
    fail "nats-server $name: /healthz is not ok within ${NATS_HEALTH_WAIT:-20} s"
  NATS_URL[$name]=nats://127.0.0.1:${NATS_PORT[$name]}
  # shellcheck disable=SC2034 # for the tests
  NATS_URL_NOW=${NATS_URL[$name]}
}

# nats_start NAME PORT [CONF-LINE...]
nats_start() {
  local name=${1:?server name} port=${2:?port}
  shift 2
  NATS_PORT[$name]=$port
  # the monitoring port: -1 asks the server for a free one
  NATS_MPORT[$name]=-1
  [[ $port == 0 ]] && port=-1
  _nats_conf "$name" "$port" -1 "$@"
  _nats_run "$name"
}

# nats_stop NAME: SIGINT, its clean shutdown; it must exit 0 within 20 s.
nats_stop() {
  local pid=${NATS_PID[${1:?server name}]:-}
  [[ -n $pid ]] || fail "nats_stop $1: not started"
  stop_within "$pid" INT 20 "nats-server $1"
  ((rc == 0)) || fail "nats-server $1 exited $rc after SIGINT"
  NATS_PID[$1]=
}

# nats_kill NAME: SIGKILL, and the exit reaped.
nats_kill() {
  local pid=${NATS_PID[${1:?server name}]:-}
  [[ -n $pid ]] || fail "nats_kill $1: not started"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  NATS_PID[$1]=
}

# nats_restart NAME: start it again (it must have been stopped or killed)
# with its configuration, ports and store.
nats_restart() {
  local name=${1:?server name}
  [[ -z ${NATS_PID[$name]:-} ]] || fail "nats_restart $name: still running"
  [[ -n ${NATS_CONF[$name]:-} ]] || fail "nats_restart $name: never started"
  _nats_run "$name"
}

# nats_jsz NAME [QUERY]: the server's JetStream report.
nats_jsz() {
  curl -fsS --max-time 5 "http://127.0.0.1:${NATS_MPORT[${1:?server name}]}/jsz?${2:-}"
}

# _nats_has_leader NAME: does the server know the cluster's meta leader?
_nats_has_leader() {
  nats_jsz "$1" 2>/dev/null | grep -q '"leader": *"[^"]'
}

# nats_cluster_start NAME PORT1 PORT2 PORT3 CPORT1 CPORT2 CPORT3
nats_cluster_start() {
  local name=${1:?cluster name} i j routes
  local -a ports=("$2" "$3" "$4") cports=("$5" "$6" "$7")
  ((${#ports[@]} == 3 && ${#cports[@]} == 3)) ||
    fail "nats_cluster_start NAME PORT1 PORT2 PORT3 CPORT1 CPORT2 CPORT3"
  for i in 0 1 2; do
    routes=
    for j in 0 1 2; do
      ((i == j)) || routes+="    nats-route://127.0.0.1:${cports[j]}"$'\n'
    done
    NATS_PORT[$name$((i + 1))]=${ports[i]}
    NATS_MPORT[$name$((i + 1))]=$(free_port)
    _nats_conf "$name$((i + 1))" "${ports[i]}" \
      "${NATS_MPORT[$name$((i + 1))]}" \
      "cluster {" "  name: $name" "  listen: 127.0.0.1:${cports[i]}" \
      "  routes: [" "${routes%$'\n'}" "  ]" "}"
  done
  # each waits for the others' routes to be ready, so start all first
  local -a pids=()
  for i in 1 2 3; do
    local log=$SCRATCH/nats/$name$i/server.log
    NATS_LOG[$name$i]=$log
    background "$NATS_SERVER" -c "${NATS_CONF[$name$i]}" >>"$log" 2>&1
    NATS_PID[$name$i]=$BG
    pids+=("$BG")
  done
  NATS_CLUSTER_URL=
  for i in 1 2 3; do
    # shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
    EXTRA_LOG=${NATS_LOG[$name$i]}
    wait_until 30 grep -q 'Server is ready' "${NATS_LOG[$name$i]}" ||
      fail "nats-server $name$i is not ready within 30 s"
    wait_until 30 _nats_healthy "${NATS_MPORT[$name$i]}" ||
      fail "nats-server $name$i: /healthz is not ok within 30 s"
    NATS_URL[$name$i]=nats://127.0.0.1:${NATS_PORT[$name$i]}
    NATS_CLUSTER_URL+=${NATS_CLUSTER_URL:+,}${NATS_URL[$name$i]}
  done
  for i in 1 2 3; do
    wait_until 30 _nats_has_leader "$name$i" ||
      fail "the cluster $name has no meta leader within 30 s ($name$i)"
  done
}

# ---------------------------------------------------------------------------
# The cluster's streams, for test/nats/cluster.sh: who leads a stream, and
# whether a restarted node has caught up, as the nodes' monitoring
# endpoints (/jsz, /healthz) say; for bounded waits (wait_until), never
# for a time.
#
#   nats_stream_leader NAME STREAM   the leader of STREAM as server NAME
#                                    sees it (nothing if none yet)
#   nats_cluster_leader CLUSTER STREAM [NODE...]
#       the leader of STREAM on which the running nodes CLUSTER1..3 other
#       than NODE... agree, printed; false while they do not agree or it
#       is one of NODE... (e.g. the node just killed)
#   nats_stream_msgs NAME STREAM     the messages STREAM holds, as server
#                                    NAME sees it (nothing if it has none)
#   nats_node_current NAME           server NAME is up and each stream and
#                                    consumer it holds a replica of is
#                                    current (/healthz says ok)

# nats_stream_leader NAME STREAM
nats_stream_leader() {
  nats_jsz "${1:?server name}" 'streams=true' 2>/dev/null |
    awk -v s="\"${2:?stream}\"," '
      /"stream_detail"/ { in_d = 1 }
      in_d && $1 == "\"name\":" && $2 == s { found = 1 }
      found && $1 == "\"state\":" { found = 0 }
      found && $1 == "\"leader\":" { gsub(/[",]/, "", $2); print $2; exit }'
}

# nats_stream_msgs NAME STREAM
nats_stream_msgs() {
  nats_jsz "${1:?server name}" 'streams=true' 2>/dev/null |
    awk -v s="\"${2:?stream}\"," '
      /"stream_detail"/ { in_d = 1 }
      in_d && $1 == "\"name\":" && $2 == s { found = 1 }
      found && $1 == "\"state\":" { state = 1 }
      state && $1 == "\"messages\":" { gsub(/,/, "", $2); print $2; exit }'
}

# nats_cluster_leader CLUSTER STREAM [NODE...]
nats_cluster_leader() {
  local cluster=${1:?cluster name} stream=${2:?stream} i node l leader=
  shift 2
  for i in 1 2 3; do
    node=$cluster$i
    [[ " $* " == *" $node "* ]] && continue
    l=$(nats_stream_leader "$node" "$stream")
    [[ -n $l && " $* " != *" $l "* ]] || return 1
    leader=${leader:-$l}
    [[ $l == "$leader" ]] || return 1
  done
  echo "$leader"
}

# nats_node_current NAME
nats_node_current() {
  _nats_healthy "${NATS_MPORT[${1:?server name}]}"
}
