# relay_lib.sh - sourced after lib.sh by the tests that run several ldmd
# servers feeding each other (REQUEST): each server NAME has its own
# directory $SCRATCH/NAME with its queue, registry, configuration and log,
# a kernel-chosen port (or a given one, to restart on the same port), and
# is killed at the end with everything it started.
#
#   srv_init NAME [QUEUE_BYTES [SLOTS]]  make the directory and the queue
#   srv_conf NAME <<EOF ... EOF   its ldmd.conf ("@A@" becomes A's port)
#   srv_start NAME [PORT]         start it; SRV_PORT[NAME] is its port
#   srv_upstream NAME...          for each: a configuration that lets
#                                 127.0.0.1 have anything and asks for
#                                 nothing, and srv_start
#   srv_downstream NAME UP FEED [ENTRY...]
#                                 a configuration that REQUESTs FEED ".*"
#                                 from UP, has the ENTRY lines, lets
#                                 127.0.0.1 have anything; and srv_start
#   srv_kill9 NAME                SIGKILL to it and every process it started;
#                                 returns once they are gone and its port
#                                 is free (so it can start there again)
#   srv_stop NAME                 SIGTERM; it must exit 0 within 15 s
#   srv_dump NAME FILE            its products, insertion order, MD5 checked
#   srv_count NAME                how many products its queue holds
#   srv_queue NAME                the path of its queue
#   srv_same FROM TO [FROM_COND [TO_COND]]
#                                 TO holds FROM's products, each once, in
#                                 FROM's order, byte-identical
#   srv_last FROM TO TOTAL SECONDS SEED
#                                 one last product into FROM, which then
#                                 holds TOTAL; TO must have it in SECONDS
#   srv_totals NAME               what its requesters' connections got, the
#                                 summary lines of its whole log summed:
#                                 "inserted duplicates"
#
# Registry keys of ldmd's own for every server of the test go in
# RELAY_SERVER_KEYS and RELAY_REQUESTER_KEYS (XML elements under <server>
# and <requester>), set before srv_init.  SRV_OPTS[NAME], set before
# srv_start NAME: more options of ldmd for that server (words: "-v").

declare -A SRV_PID SRV_PORT SRV_OPTS
RELAY_SERVER_KEYS=${RELAY_SERVER_KEYS:-}
RELAY_REQUESTER_KEYS=${RELAY_REQUESTER_KEYS:-}

srv_dir() {
  echo "$SCRATCH/$1"
}

srv_init() {
  local d
  d=$(srv_dir "$1")
  mkdir -p "$d"
  "$PEER" mkqueue -q "$d/ldm.pq" -s "${2:-40000000}" -n "${3:-20000}" ||
    fail "cannot make the queue of $1"
  cat >"$d/registry.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<registry>
  <hostname>$1.test</hostname>
  <queue><path>$d/ldm.pq</path></queue>
  <server><config-path>$d/ldmd.conf</config-path><user>root</user>$RELAY_SERVER_KEYS</server>
  <requester>$RELAY_REQUESTER_KEYS</requester>
</registry>
EOF
}

# srv_conf NAME: the configuration from stdin, "@X@" replaced by X's port.
srv_conf() {
  local d text n
  d=$(srv_dir "$1")
  text=$(cat)
  for n in "${!SRV_PORT[@]}"; do
    text=${text//@$n@/${SRV_PORT[$n]}}
  done
  printf '%s\n' "$text" >"$d/ldmd.conf"
}

# srv_log NAME: its log since it was last started.
srv_log() {
  awk '/^=== start/ { buf = ""; next } { buf = buf $0 "\n" }
       END { printf "%s", buf }' "$(srv_dir "$1")/ldmd.log"
}

# srv_log_has NAME TEXT: has its log since the last start TEXT?
srv_log_has() {
  srv_log "$1" | grep -qF -- "$2"
}

srv_start() {
  local name=$1 port=${2:-0} d opts=()
  d=$(srv_dir "$name")
  read -ra opts <<<"${SRV_OPTS[$name]:-}"
  echo "=== start (port $port)" >>"$d/ldmd.log"
  LDM_REGISTRY=$d/registry.xml "${LDMD_WRAP[@]}" "$LDMD" -f "${opts[@]}" -l "$d/ldmd.log" \
    -P "$port" -I 127.0.0.1 "$d/ldmd.conf" 2>>"$d/ldmd.err" &
  SRV_PID[$name]=$!
  wait_until 10 srv_log_has "$name" "listening on 127.0.0.1 port" ||
    srv_fail "$name" "$name did not start"
  SRV_PORT[$name]=$(srv_log "$name" |
    sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' | tail -1)
  [[ -n ${SRV_PORT[$name]} ]] || srv_fail "$name" "no port for $name"
}

srv_upstream() {
  local n
  for n in "$@"; do
    printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$' | srv_conf "$n"
    srv_start "$n"
  done
}

srv_downstream() {
  local name=$1 up=$2 feed=$3
  shift 3
  {
    printf 'REQUEST %s ".*" 127.0.0.1:@%s@\n' "$feed" "$up"
    (($# == 0)) || printf '%s\n' "$@"
    printf '%s\n' 'ALLOW ANY ^127\.0\.0\.1$'
  } | srv_conf "$name"
  srv_start "$name"
}

# The pids of the children of pid $1.
children_of() {
  local f=/proc/$1/task/$1/children
  if [[ -r $f ]]; then
    tr -s ' ' '\n' <"$f" 2>/dev/null | grep .
  else
    ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' '
  fi
}

# port_free PORT: does no IPv4 socket listen at PORT (/proc/net/tcp:
# no line in state 0A with that local port)?
port_free() {
  local hex
  hex=$(printf '%04X' "$1")
  awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
    END { exit f }' /proc/net/tcp
}

srv_kill9() {
  local pid=${SRV_PID[$1]} port=${SRV_PORT[$1]} kids k
  kids=$(children_of "$pid")
  # shellcheck disable=SC2086
  kill -KILL "$pid" $kids 2>/dev/null
  wait "$pid" 2>/dev/null
  SRV_PID[$1]=
  for k in $kids; do
    wait_until 10 gone "$k" || srv_fail "$1" "process $k of $1 outlived SIGKILL"
  done
  wait_until 10 port_free "$port" ||
    srv_fail "$1" "port $port of $1 still listened on after SIGKILL"
}

srv_stop() {
  local pid=${SRV_PID[$1]} st d
  d=$(srv_dir "$1")
  kill -TERM "$pid"
  wait_until 15 bash -c "! kill -0 $pid 2>/dev/null" ||
    srv_fail "$1" "$1 did not stop on SIGTERM"
  wait "$pid"
  st=$?
  SRV_PID[$1]=
  [[ $st == 0 ]] || srv_fail "$1" "$1 exited $st on SIGTERM"
  if grep -qaE 'Sanitizer|runtime error:' "$d/ldmd.err" "$d/ldmd.log"; then
    srv_fail "$1" "the sanitizers found an error in $1"
  fi
}

srv_dump() {
  "$PEER" dump -q "$(srv_dir "$1")/ldm.pq" >"$2" ||
    srv_fail "$1" "dump of $1's queue failed or found corrupt products"
}

srv_count() {
  "$PEER" count -q "$(srv_dir "$1")/ldm.pq"
}

srv_queue() {
  echo "$(srv_dir "$1")/ldm.pq"
}

# srv_same FROM TO [FROM_COND [TO_COND]]: TO's products (the lines of its
# dump that meet the awk condition TO_COND) are FROM's (those that meet
# FROM_COND): signature, ident and size, in FROM's order, none twice.  The
# dumps stay in FROM.dump and TO.dump.
srv_same() {
  srv_dump "$1" "$1.dump"
  srv_dump "$2" "$2.dump"
  awk "${3:-1} { print \$1, \$2, \$3 }" "$1.dump" >"$1.want"
  awk "${4:-1} { print \$1, \$2, \$3 }" "$2.dump" >"$2.got"
  diff "$1.want" "$2.got" >diff.out ||
    fail "$2 differs from $1: $(head -20 diff.out)"
}

# srv_last FROM TO TOTAL SECONDS SEED: one last product (last/0) into
# FROM's queue, which must then hold TOTAL products; TO must have it within
# SECONDS.  Each server relays in insertion order: once the last product is
# in TO, everything FROM had before it went through, and any extra product
# would have too.
srv_last() {
  local n
  expect_rc 0 "$PEER" insert -q "$(srv_queue "$1")" -n 1 -s 100 -f IDS \
    -i last -z "$5"
  n=$(srv_count "$1")
  ((n == $3)) || fail "$1 has $n products, not $3"
  wait_until "$4" has_ident "$(srv_queue "$2")" last/0 ||
    srv_fail "$2" "$2 has $(srv_count "$2") of $3 products, not the last one"
}

srv_totals() {
  sed -n 's/.*: [0-9]* products received, \([0-9]*\) inserted ([0-9]* bytes), \([0-9]*\) duplicates.*/\1 \2/p' \
    "$(srv_dir "$1")/ldmd.log" |
    awk '{ i += $1; d += $2 } END { print i + 0, d + 0 }'
}

# srv_fail NAME TEXT: fail, with NAME's log and error output.
srv_fail() {
  local d
  d=$(srv_dir "$1")
  for f in "$d/ldmd.err" "$d/ldmd.log"; do
    if [[ -s $f ]]; then
      echo "--- $1/$(basename "$f"):" >&2
      tail -c 5000 "$f" >&2
    fi
  done
  fail "$2"
}

# relay_cleanup: the EXIT trap.  SIGTERM to every server still running, up
# to 5 s for them to go, then SIGKILL to them and their children.
relay_cleanup() {
  local st=$? n pid
  for n in "${!SRV_PID[@]}"; do
    pid=${SRV_PID[$n]}
    [[ -n $pid ]] || continue
    kill -TERM "$pid" 2>/dev/null
  done
  for n in "${!SRV_PID[@]}"; do
    pid=${SRV_PID[$n]}
    [[ -z $pid ]] || wait_until 5 gone "$pid"
  done
  for n in "${!SRV_PID[@]}"; do
    pid=${SRV_PID[$n]}
    [[ -n $pid ]] || continue
    # shellcheck disable=SC2046
    kill -KILL "$pid" $(children_of "$pid") 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  cleanup "$st"
}
trap relay_cleanup EXIT

# sig_list FILE: the signatures of a dump, in order.
sig_list() {
  awk '{print $1}' "$1"
}

# latency_ms FROM.dump TO.dump IDENT_RE: for each product whose ident
# matches, milliseconds from its insertion in FROM to its insertion in TO;
# prints "p50 max count".
latency_ms() {
  awk -v re="$3" 'NR == FNR { t[$1] = $6; next }
    ($1 in t) && $2 ~ re { printf "%.3f\n", ($6 - t[$1]) / 1000 }' "$1" "$2" |
    sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "none 0 0";
      else print v[int((NR + 1) / 2)], v[NR], NR }'
}

# tls_pki NAME...: in $SCRATCH/pki, a CA (ca.pem, ca.key) and for each NAME
# a P-256 key and certificate (NAME.key, NAME.pem) for NAME.test and
# 127.0.0.1; sets PKI to that directory.  Needs the openssl command.
tls_pki() {
  local n
  command -v openssl >/dev/null || fail "no openssl command (package openssl)"
  mkdir -p "$SCRATCH/pki"
  cd "$SCRATCH/pki" || exit 1
  run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout ca.key -out ca.pem -days 2 -subj /CN=ca
  for n in "$@"; do
    run openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -keyout "$n.key" -out "$n.csr" -subj "/CN=$n.test" \
      -addext "subjectAltName=DNS:$n.test,IP:127.0.0.1"
    run openssl x509 -req -in "$n.csr" -CA ca.pem -CAkey ca.key \
      -CAcreateserial -days 2 -copy_extensions copy -out "$n.pem"
  done
  PKI=$PWD
  cd "$SCRATCH" || exit 1
}

# srv_tls NAME CERT: TLS keys of tls_pki's CERT and its CA in NAME's
# registry.
srv_tls() {
  local reg
  reg=$(srv_dir "$1")/registry.xml
  sed -i "s|</registry>|  <tls><cert>$PKI/$2.pem</cert><key>$PKI/$2.key</key><ca>$PKI/ca.pem</ca></tls>\n</registry>|" "$reg"
}

# feeds_all_ended NAME N: has NAME logged at least N feeds' "Starting Up"
# and as many feeds' last lines ("products sent (")?
feeds_all_ended() {
  local started ended
  started=$(srv_log "$1" | grep -c 'Starting Up(')
  ended=$(srv_log "$1" | grep -c 'products sent (')
  ((started >= $2 && ended == started))
}

# tls_conn_pids NAME: " PID PID ... ", NAME's processes that logged a TLS
# connection.
tls_conn_pids() {
  echo " $(srv_log "$1" | sed -n 's/.*\[\([0-9]*\)\].*TLS connection from .*/\1/p' |
    tr '\n' ' ') "
}
