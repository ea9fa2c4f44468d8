#!/bin/sh
# ldmadmin - the LDM control program, LDM's subcommands and exit codes (0
# success, 1 failure; isrunning 0 when the server runs; check 2, 4, 5),
# for the scripts and cron jobs sites already have
# (pqutils/ops/ldmadmin.1).  It owns the pid file, $LDMHOME/ldmd.pid
# (LDM's place; ldmd writes it with -W and removes it at exit), its lock
# file, vetqueuesize's temporary queue beside the queue, the renaming of
# rotated logs (newlog) and the metrics files (addmetrics, newmetrics),
# and nothing else: every setting comes from the registry through regutil
# (pqutils/ops/regutil.1), and the work is done by the other programs (ldmd,
# pqcreate, pqcopy, pqmon, pqcheck, pqact, pqcat, scour, gnuplot, and
# openssl for mkcert's key and certificate).
#
# POSIX sh, not C: each subcommand is a few calls of those programs, and a
# shell script is what an operator can read when a subcommand refuses.
#
# Every command runs in $LDMHOME, as LDM's.  The programs are looked up
# in PATH; LDMADMIN_STOP_TIMEOUT (seconds, 60) bounds how long stop waits
# for the server to exit, LDMADMIN_LOCK_TIMEOUT (60) how long a command
# that changes the server or the queue waits for another one's lock
# ($LDMHOME/.ldmadmin.lock).

PROG=ldmadmin
LDMHOME=${LDMHOME:-/var/lib/ldm}
PIDFILE=$LDMHOME/ldmd.pid
STOP_TIMEOUT=${LDMADMIN_STOP_TIMEOUT:-60}
LOCKFILE=$LDMHOME/.ldmadmin.lock
LOCK_TIMEOUT=${LDMADMIN_LOCK_TIMEOUT:-60}
# vetqueuesize's bounds on growth (ldmadmin.1 says why these): at most
# this many times the queue's size per run, this margin over what would
# have held max-latency, and this part of the file system left free.
GROWTH_MAX=4
GROWTH_MARGIN=1.1
KEEP_FREE=0.05

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
  say "$*"
  exit 1
}

usage() {
  cat >&2 <<EOF
usage: $PROG command [options]
  start [-v] [-x] [-m lat] [-o off] [-q queue] [-M max] [-I addr] [-P port] [conf]
  stop | restart | isrunning | clean | config
  mkqueue [-c] [-f] [-v|-x] [-q path]
                        create the queue (-c: replace an existing one)
  delqueue [-y] [-q path]
                        delete the queue (-y: without asking)
  mksurfqueue [-c] [-f] [-v|-x] [-q path]
                        create pqsurf's queue (-c: replace an existing one)
  delsurfqueue [-y] [-q path]
                        delete pqsurf's queue (-y: without asking)
  queuecheck            check the queue (pqcheck), the server stopped
  checkinsertion        is the newest product younger than the registry's limit?
  vetqueuesize          does the queue hold max-latency?  (acts on
                        /reconciliation-mode; at most /queue/max-size)
  check                 for cron: isrunning (else exit 2), checkinsertion (4),
                        vetqueuesize (5)
  pqactcheck [ldmd.conf] | -p pqact.conf
  pqactHUP              make this server's pqact reread its configuration
  scour [-d]            delete old files (scour and the registry's scour.conf)
  newlog [-n count] [-l logfile]
                        rotate the logs, then SIGUSR1 to the server
  watch [-f feedset] [-p pattern]
                        print the line of each product inserted from now on
  log | tail            page or follow the log file
  printmetrics | addmetrics | newmetrics    print, append, rotate the metrics
  plotmetrics [-b begin] [-e end] [-o prefix]   PNG plots of the metrics
  mkcert [-r] [-f] [-s] [-n name] [-d days] [-o dir]
                        a site key and a self-signed certificate for TLS
                        (-r: a signing request instead; -s: set /tls/...)
EOF
  exit 1
}

# reg PATH: the registry's value at PATH (regutil prints its error).
reg() {
  regutil "$1" || die "cannot read $1 from the registry"
}

# server_pid: the pid in the pid file, if that process is an ldmd; else
# nothing, status 1.
server_pid() {
  [ -r "$PIDFILE" ] || return 1
  read -r pid <"$PIDFILE" 2>/dev/null || return 1
  case $pid in '' | *[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || [ -d "/proc/$pid" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ldmd ] || return 1
  echo "$pid"
}

is_running() { server_pid >/dev/null; }

# free_kib DIR: the KiB free on DIR's file system.
free_kib() {
  df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'
}

# reg_size PATH: the registry's size at PATH in bytes; reg_bool PATH: its
# boolean, TRUE or FALSE; reg_uint PATH: its unsigned integer, decimal
# without leading zeros (so that [ and $(( )) read it as regutil does:
# 0600 is 600, 0x12c refused).  regutil -T reads them with the parsers every
# program uses (ldmd/site/registry.h), so a value means the same here as to
# pqcreate and ldmd; it says what is wrong with one that is not.
reg_size() {
  regutil -T size "$1" || die "the registry's $1 is not a size (above)"
}
reg_bool() {
  regutil -T bool "$1" || die "the registry's $1 is not a boolean (above)"
}
reg_uint() {
  regutil -T uint "$1" || die "the registry's $1 is not an unsigned integer (above)"
}

# lock: as LDM's getLock, one command that changes the server or the
# queue at a time: an exclusive flock(1) on $LOCKFILE held on descriptor 9
# until ldmadmin exits, waited for at most LOCK_TIMEOUT seconds.  The
# server does not inherit it (ldmd runs with 9 closed).
lock() {
  exec 9>>"$LOCKFILE" || die "cannot open the lock file $LOCKFILE"
  flock -w "$LOCK_TIMEOUT" 9 ||
    die "another ldmadmin command holds $LOCKFILE (waited ${LOCK_TIMEOUT} s): try again when it is done"
}

cmd_isrunning() {
  [ $# -eq 0 ] || usage
  is_running
}

# start_options ARGS...: start's options and configuration file, in
# $args (the ldmd options, words) and $conf.
start_options() {
  args=
  OPTIND=1
  while getopts vxm:o:q:M:I:P: opt; do
    case $opt in
      v | x) args="$args -$opt" ;;
      m | o | q | M | I | P) args="$args -$opt $OPTARG" ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -le 1 ] || usage
  conf=${1:-$(reg /server/config-path)} || exit 1
}

# check_configs: the server's configuration (ldmd -n, with start's
# options) and every pqact configuration it runs are valid.
check_configs() {
  # shellcheck disable=SC2086 # args is a list of words made by start_options
  if ! out=$(ldmd -n -l - $args "$conf" 2>&1); then
    printf '%s\n' "$out" >&2
    die "the server's configuration $conf is not valid (above)"
  fi
  pqactcheck_conf "$conf" || die "a pqact configuration of $conf is not valid (above)"
}

cmd_start() {
  start_options "$@"
  if pid=$(server_pid); then
    die "the LDM server is already running (pid $pid): ldmadmin stop first"
  fi
  if [ -e "$PIDFILE" ]; then
    die "the pid file $PIDFILE exists but no server runs (a crash?): ldmadmin clean, then start"
  fi
  queue=$(reg /queue/path) || exit 1
  case $args in *-q\ *) queue=$(printf '%s\n' "$args" | sed 's/.*-q \([^ ]*\).*/\1/') ;; esac
  [ -e "$queue" ] || die "the queue $queue does not exist: ldmadmin mkqueue makes it"
  if ! out=$(pqcheck -q "$queue" 2>&1); then
    printf '%s\n' "$out" >&2
    case $out in
    *"format version"* | *"incompatible build"*)
      die "the queue $queue was made by another build (above): carry its products over with that build's pqsave and this one's pqrestore, or ldmadmin delqueue and mkqueue"
      ;;
    esac
    die "the queue $queue failed its check (above): ldmadmin delqueue and mkqueue, or pqcheck -F"
  fi
  check_configs
  # /log/rotate (LDM's): the logs rotated before the server starts, as
  # newlog does (no signal: nothing runs yet).  A rotation that fails does
  # not keep the server from starting; a bad /log/count does, as a bad
  # setting.
  rotate=$(reg_bool /log/rotate) || exit 1
  case $rotate in
    TRUE)
      count=$(reg_uint /log/count) || exit 1
      count=$(log_count "$count" "the registry's /log/count") || exit 1
      NEWLOG_CONF=$conf
      rotate_logs "$count" ||
        say "could not rotate every log (above): starting the server anyway"
      ;;
  esac
  log=$(reg /log/file) || exit 1
  logdir=$(dirname "$log")
  [ -d "$logdir" ] || mkdir -p "$logdir" ||
    die "cannot make the log directory $logdir"
  # ldmd daemonizes; its starting process exits 0 once the server listens
  # and has written the pid file.
  # shellcheck disable=SC2086
  if ! ldmd -l "$log" -W "$PIDFILE" $args "$conf" >/dev/null 9>&-; then
    die "the LDM server did not start: see its log, $log"
  fi
  pid=$(server_pid) || die "the LDM server started but is not running: see its log, $log"
  say "the LDM server is running (pid $pid)"
}

cmd_stop() {
  [ $# -eq 0 ] || usage
  stop_server
}

# stop_server: SIGTERM the server and wait, bounded, for its exit.
stop_server() {
  pid=$(server_pid) || die "the LDM server is not running"
  kill -TERM "$pid" || die "cannot signal the LDM server (pid $pid)"
  # Bounded wait for the exit, in tenths of a second.
  n=$((STOP_TIMEOUT * 10))
  while [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ldmd ]; do
    n=$((n - 1))
    [ "$n" -gt 0 ] ||
      die "the LDM server (pid $pid) did not stop within ${STOP_TIMEOUT} s of SIGTERM"
    sleep 0.1
  done
  rm -f "$PIDFILE"
  say "the LDM server (pid $pid) has stopped"
}

# restart: the configurations are checked before the running server is
# stopped, so that a mistake in them does not leave the site without one.
cmd_restart() {
  start_options "$@"
  if is_running; then
    check_configs
    stop_server || exit 1
  fi
  cmd_start "$@"
}

cmd_clean() {
  [ $# -eq 0 ] || usage
  if pid=$(server_pid); then
    die "the LDM server is running (pid $pid): nothing to clean"
  fi
  if [ -e "$PIDFILE" ]; then
    rm -f "$PIDFILE" || die "cannot remove the stale pid file $PIDFILE"
    say "removed the stale pid file $PIDFILE"
  else
    say "no stale pid file ($PIDFILE): nothing to clean"
  fi
}

# prepare_queue WHAT KEY MKCMD DELCMD ARGS...: the common part of mkqueue
# and mksurfqueue, LDM's command line (-c replace, -f fast, -v/-x for
# pqcreate, -q path instead of KEY/path).  Sets queue, size, clobber, fast
# and verbose; refuses while the server runs, an existing queue without
# -c, and a file system without room for the whole queue (LDM issue #79).
prepare_queue() {
  what=$1 key=$2 mk=$3 del=$4
  shift 4
  clobber=''
  fast=''
  verbose=''
  queue=''
  OPTIND=1
  while getopts cfq:vx opt; do
    case $opt in
      c) clobber=-c ;;
      f) fast=-f ;;
      q) queue=$OPTARG ;;
      v | x) verbose=-$opt ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  [ -n "$queue" ] || queue=$(reg "$key/path") || exit 1
  size=$(reg "$key/size") || exit 1
  if is_running; then
    die "the LDM server is running: ldmadmin stop before making the $what $queue"
  fi
  if [ -e "$queue" ] && [ -z "$clobber" ]; then
    die "the $what $queue exists: ldmadmin $del first, or $mk -c to replace it"
  fi
  dir=$(dirname "$queue")
  [ -d "$dir" ] || die "cannot make the $what $queue: no directory $dir"
  bytes=$(reg_size "$key/size") || exit 1
  need=$(((bytes + 1023) / 1024))
  have=$(free_kib "$dir")
  [ -n "$have" ] || die "cannot find the free space of $dir (df failed)"
  if [ "$need" -gt "$have" ]; then
    die "not enough space for the $what $queue: $key/size $size needs $need KiB, $dir has $have KiB free (free some, or lower $key/size with regutil -s)"
  fi
}

# delete_queue WHAT KEY DELCMD HOLDING ARGS...: delqueue and delsurfqueue
# (-q path: that queue instead of KEY/path, as LDM's; -y: without asking).
# Never while the server runs; off a terminal, never without -y.
delete_queue() {
  what=$1 key=$2 del=$3 holding=$4
  shift 4
  yes=
  queue=''
  OPTIND=1
  while getopts yq: opt; do
    case $opt in
      y) yes=1 ;;
      q) queue=$OPTARG ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  [ -n "$queue" ] || queue=$(reg "$key/path") || exit 1
  if is_running; then
    die "the LDM server is running: ldmadmin stop before deleting the $what $queue"
  fi
  [ -e "$queue" ] || die "there is no $what $queue to delete"
  if [ -z "$yes" ]; then
    [ -t 0 ] ||
      die "not deleting the $what $queue without confirmation: run $del -y, or from a terminal"
    printf 'delete the %s %s and every %s in it? [y/N] ' "$what" "$queue" "$holding" >&2
    read -r answer || answer=
    case $answer in
      y | Y | yes | YES) ;;
      *) die "the $what $queue is kept" ;;
    esac
  fi
  rm -f "$queue" || die "cannot delete the $what $queue"
  say "deleted the $what $queue"
}

cmd_mkqueue() {
  prepare_queue queue /queue mkqueue delqueue "$@"
  slots=$(reg /queue/slots) || exit 1
  if [ "$slots" = default ]; then
    set -- $verbose $clobber $fast -s "$size" -q "$queue"
  else
    set -- $verbose $clobber $fast -S "$slots" -s "$size" -q "$queue"
  fi
  pqcreate "$@" || die "cannot make the queue $queue (pqcreate failed, above)"
  say "made the queue $queue ($size)"
}

cmd_delqueue() {
  delete_queue queue /queue delqueue product "$@"
}

# Slots of pqsurf's queue per 1000000 bytes of its size: LDM's ldmadmin
# gives it size / 1e6 * 6881 (an observation is about 145 bytes), its
# pqsurf(1) the same for 1M (pqcreate -s 1M -S 6881).
SURF_SLOTS_PER_MB=6881

# mksurfqueue: as mkqueue, for pqsurf's private queue (/surf-queue/path,
# /surf-queue/size), with LDM's SURF_SLOTS_PER_MB slots a megabyte.
cmd_mksurfqueue() {
  prepare_queue "surf queue" /surf-queue mksurfqueue delsurfqueue "$@"
  slots=$((bytes * SURF_SLOTS_PER_MB / 1000000))
  [ "$slots" -ge 8 ] || slots=8
  pqcreate $verbose $clobber $fast -S "$slots" -s "$size" -q "$queue" ||
    die "cannot make the surf queue $queue (pqcreate failed, above)"
  say "made the surf queue $queue ($size, $slots slots)"
}

cmd_delsurfqueue() {
  delete_queue "surf queue" /surf-queue delsurfqueue observation "$@"
}

cmd_queuecheck() {
  [ $# -eq 0 ] || usage
  queue=$(reg /queue/path) || exit 1
  if is_running; then
    die "the LDM server is running: ldmadmin stop before checking the queue $queue"
  fi
  [ -e "$queue" ] || die "there is no queue $queue to check"
  pqcheck -q "$queue" || die "the queue $queue failed its check (above)"
  say "the queue $queue is sound"
}

# pqact_configs LDMD_CONF: the pqact configuration files its EXEC entries
# name (reference: LDM's rule, the last word unless it is an option or the
# word before it is one of -[ldqfpito], and AWIPS's -k and -s, which take a
# value too), one a line; the registry's /pqact/config-path for an entry
# that names none.
pqact_configs() {
  awk -v dflt="$(reg /pqact/config-path)" '
    tolower($1) == "exec" && $0 ~ /pqact/ {
      line = $0; sub(/^[ \t]*[^ \t]+[ \t]+/, "", line); gsub(/"/, "", line)
      n = split(line, w, /[ \t]+/)
      if (w[n] == "") n--
      if (n < 2 || w[n] ~ /^-/ || w[n - 1] ~ /^-[ldqfpitoks]$/) print dflt
      else print w[n]
    }' "$1"
}

# pqact_check_file CONF: has pqact read CONF without error?  pqact exits 1
# with -q /dev/null even for a good file (no queue), so its log decides.
# A valid file's warnings (an unknown option, a back-reference in a
# pattern) are shown too.
pqact_check_file() {
  out=$(pqact -vl- -q /dev/null "$1" 2>&1)
  case $out in
    *"Successfully read configuration-file"* | *"has no entries"*)
      case $out in *" WARN "*) printf '%s\n' "$out" | grep -F ' WARN ' >&2 ;; esac
      say "$1 is a valid pqact configuration"
      return 0
      ;;
  esac
  printf '%s\n' "$out" >&2
  say "$1 is not a valid pqact configuration (above)"
  return 1
}

# pqactcheck_conf LDMD_CONF: check every pqact configuration it runs.
pqactcheck_conf() {
  [ -r "$1" ] || die "cannot read the server's configuration $1"
  if grep -n '^ ' "$1" >&2; then
    say "$1: the lines above start with a space (LDM ignores their entries)"
  fi
  st=0
  for f in $(pqact_configs "$1"); do
    pqact_check_file "$f" || st=1
  done
  return $st
}

cmd_pqactcheck() {
  if [ "${1:-}" = -p ]; then
    [ $# -eq 2 ] || usage
    pqact_check_file "$2"
    return
  fi
  [ $# -le 1 ] || usage
  conf=${1:-$(reg /server/config-path)} || exit 1
  pqactcheck_conf "$conf"
}

# pqactHUP: SIGHUP the pqact processes this server started (its children
# named pqact), never other users' programs of that name.
cmd_pqactHUP() {
  [ $# -eq 0 ] || usage
  spid=$(server_pid) || die "the LDM server is not running: no pqact to signal"
  n=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$(cat "$d/comm" 2>/dev/null)" = pqact ] || continue
    stat=$(cat "$d/stat" 2>/dev/null) || continue
    # shellcheck disable=SC2086 # the fields after the command's name
    set -- ${stat##*) }
    [ "${2:-}" = "$spid" ] || continue
    if kill -HUP "$p" 2>/dev/null; then
      say "sent SIGHUP to pqact (pid $p)"
      n=$((n + 1))
    else
      say "cannot signal pqact (pid $p)"
    fi
  done
  [ "$n" -gt 0 ] || die "the LDM server (pid $spid) runs no pqact"
  say "check that pqact reread its configuration with \"ldmadmin tail\""
}

# checkinsertion: the newest product of the queue is younger than the
# registry's /insertion-check-interval (seconds): data still arrives.
cmd_checkinsertion() {
  [ $# -eq 0 ] || usage
  queue=$(reg /queue/path) || exit 1
  limit=$(reg_uint /insertion-check-interval) || exit 1
  stats=$(pqmon -S -q "$queue") || die "cannot read the statistics of the queue $queue (pqmon failed, above)"
  # shellcheck disable=SC2086 # pqmon -S: twelve numbers
  set -- $stats
  [ "${7:-0}" -gt 0 ] || die "the queue $queue holds no product: is data arriving?"
  if [ "$9" -gt "$limit" ]; then
    die "the newest product in the queue $queue was inserted $9 s ago, more than /insertion-check-interval ($limit s): is data arriving?"
  fi
  say "the newest product in the queue $queue was inserted $9 s ago (limit $limit s)"
}

# server_args PID: the options the running server was started with, as
# ldmadmin start takes them back (its -l and -W dropped: start adds them;
# also -m and -o when $drop_mo is set), one line; status 1 if it runs in
# the foreground (-f: a service manager runs it and must restart it).
server_args() {
  tr '\0' '\n' <"/proc/$1/cmdline" | awk -v drop="${drop_mo:-}" '
    NR == 1 { next }
    skip { skip = 0; next }
    $0 == "-f" { fg = 1; next }
    $0 == "-l" || $0 == "-W" || (drop != "" && ($0 == "-m" || $0 == "-o")) {
      skip = 1; next }
    { out = out (out == "" ? "" : " ") $0 }
    END { print out; exit fg }'
}

# restart_as ARGS: start the server again with the options it had, in a
# subshell (start's refusals exit it, not the caller).
restart_as() {
  # shellcheck disable=SC2086 # a list of words, as ldmd got them
  (cmd_start $1)
}

# vet_figures: read the queue's statistics (pqmon -S) into is_full,
# capacity, slots_now, mvrt, mvrt_bytes, and the registry's
# max-latency into maxlat.
vet_figures() {
  stats=$(pqmon -S -q "$queue") ||
    die "cannot read the statistics of the queue $queue (pqmon failed, above)"
  # shellcheck disable=SC2086 # pqmon -S: twelve numbers
  set -- $stats
  [ $# -eq 12 ] || die "pqmon -S printed \"$stats\", not twelve numbers"
  is_full=$1 capacity=$2 slots_now=$5 mvrt=${10} mvrt_bytes=${11}
  maxlat=$(reg_uint /server/max-latency) || exit 1
}

# vetqueuesize: is the queue big enough to hold products for
# /server/max-latency?  Its minimum virtual residence time (MVRT: how
# long the shortest-lived evicted product stayed) says; when it is
# shorter, /reconciliation-mode says what to do.
cmd_vetqueuesize() {
  [ $# -eq 0 ] || usage
  queue=$(reg /queue/path) || exit 1
  mode=$(reg /reconciliation-mode) || exit 1
  [ -e "$queue" ] || die "there is no queue $queue to vet"
  # A mode that changes things takes the lock first, then reads the
  # figures, so that they are still true when it acts.
  [ "$mode" = "do nothing" ] || lock
  vet_figures
  if [ "$is_full" -eq 0 ] || [ "$mvrt" -lt 0 ]; then
    say "the queue $queue has never been full: it holds products longer than /server/max-latency ($maxlat s)"
    return 0
  fi
  if [ "$mvrt" -ge "$maxlat" ]; then
    say "the queue $queue holds products for at least $mvrt s (its minimum virtual residence time), not less than /server/max-latency ($maxlat s)"
    return 0
  fi
  too_small="the queue $queue is too small for /server/max-latency: its minimum virtual residence time is $mvrt s, less than $maxlat s (it held $mvrt_bytes bytes then, of $capacity)"
  case $mode in
    "do nothing")
      say "$too_small"
      die "/reconciliation-mode is \"do nothing\": to act, \"regutil -s 'increase queue' /reconciliation-mode\" (vetqueuesize then grows the queue, at most to /queue/max-size) or \"regutil -s 'decrease maximum latency' /reconciliation-mode\" (it then sets max-latency to $mvrt s), then ldmadmin vetqueuesize; or grow it yourself: regutil -s SIZE /queue/size, ldmadmin stop, mkqueue -c, start (the products are lost)"
      ;;
    "decrease maximum latency") vet_decrease ;;
    "increase queue") vet_increase ;;
    *) die "the registry's /reconciliation-mode \"$mode\" is none of LDM's three" ;;
  esac
}

# vet_decrease: max-latency and time-offset become the MVRT, in the
# registry and, by a restart, in the running server.
vet_decrease() {
  [ "$mvrt" -ge 1 ] ||
    die "$too_small: not decreasing /server/max-latency to $mvrt s, less than 1 s (ldmd refuses it); nothing changed"
  running=
  if pid=$(server_pid); then
    running=1
    args=$(drop_mo=1 server_args "$pid") ||
      die "the LDM server (pid $pid) runs in the foreground, under a service manager: nothing changed; stop it there, run vetqueuesize, start it there"
  fi
  old_off=$(reg /server/time-offset) || exit 1
  regutil -s "$mvrt" /server/max-latency ||
    die "cannot set /server/max-latency to $mvrt (regutil failed, above): nothing changed"
  if ! regutil -s "$mvrt" /server/time-offset; then
    regutil -s "$maxlat" /server/max-latency ||
      say "cannot set /server/max-latency back to $maxlat: set it with regutil -s $maxlat /server/max-latency"
    die "cannot set /server/time-offset to $mvrt (regutil failed, above): /server/max-latency is back at $maxlat"
  fi
  say "$too_small: set /server/max-latency and /server/time-offset to $mvrt s (were $maxlat and $old_off)"
  [ -n "$running" ] || return 0
  (stop_server) ||
    die "the registry has the new max-latency, but the server did not stop (above): restart it with ldmadmin restart"
  restart_as "-m $mvrt -o $mvrt $args" ||
    die "the registry has the new max-latency, but the server did not start again (above): ldmadmin start"
  say "restarted the LDM server with -m $mvrt -o $mvrt"
}

# vet_plan: the new size (bytes, a multiple of the 4096 bytes the queue
# rounds its data area to), the size needed, and what bounds the new size
# (none, factor, max-size, space, or slots when the bytes are not what
# runs out), one line.
vet_plan() {
  awk -v cap="$capacity" -v held="$mvrt_bytes" -v mvrt="$mvrt" \
    -v lat="$maxlat" -v max="$max_bytes" -v file="$file_bytes" \
    -v fs="$fs_kib" -v free="$fs_free" -v f="$GROWTH_MAX" \
    -v margin="$GROWTH_MARGIN" -v keep="$KEEP_FREE" 'BEGIN {
    # What would have held max-latency: the bytes held, scaled.  An MVRT
    # under a second scales to no bound at all (need -1).
    need = mvrt > 0 ? held * lat / mvrt * margin : -1
    if (need >= 0 && need <= cap) { printf "0 %.0f slots\n", need; exit }
    new = need; bound = "none"
    if (new < 0 || cap * f < new) { new = cap * f; bound = "factor" }
    if (max < new) { new = max; bound = "max-size" }
    # The new file beside the old, keeping keep of the file system free;
    # the file grows with the data area (the slots with it).
    room = (free - fs * keep) * 1024 * cap / file
    if (room < new) { new = room; bound = "space" }
    new = new < 0 ? 0 : int(new / 4096) * 4096
    printf "%.0f %.0f %s\n", new, need, bound }'
}

# vet_undo STEP: a step of the growth failed: remove the new queue, put the
# registry back, start the server again if it ran, and fail naming STEP.
vet_undo() {
  rm -f "$tmp"
  if [ -n "$reg_changed" ]; then
    regutil -s "$old_size" /queue/size ||
      say "cannot set /queue/size back to $old_size: set it with regutil -s $old_size /queue/size"
    regutil -s "$old_slots" /queue/slots ||
      say "cannot set /queue/slots back to $old_slots: set it with regutil -s $old_slots /queue/slots"
  fi
  restarted=
  if [ -n "$running" ]; then
    if restart_as "$args"; then
      restarted="; the LDM server runs again"
    else
      restarted="; the LDM server did not start again (above): ldmadmin start"
    fi
  fi
  die "cannot grow the queue $queue: $1; the queue and the registry are as they were$restarted"
}

# vet_increase: grow the queue to hold max-latency, bounded (LDM issue
# #126: LDM's grew a queue to 2 TB): at most /queue/max-size, at most
# GROWTH_MAX times its size per run, and no more than its file system
# holds beside the old queue while KEEP_FREE of it stays free.  The
# products are copied; /queue/size and /queue/slots follow (LDM issue
# #122: LDM's left the registry with the old size).
vet_increase() {
  old_size=$(reg /queue/size) || exit 1
  old_slots=$(reg /queue/slots) || exit 1
  max_size=$(reg /queue/max-size) || exit 1
  max_bytes=$(reg_size /queue/max-size) || exit 1
  # The file itself, where /queue/path is a symbolic link to it: the new
  # queue is made beside it and takes its place.
  qfile=$(readlink -f -- "$queue") || die "cannot resolve the queue's path $queue"
  dir=$(dirname "$qfile")
  file_bytes=$(stat -c %s "$qfile") || die "cannot find the size of the queue $qfile (stat failed, above)"
  # shellcheck disable=SC2046 # two numbers
  set -- $(df -Pk "$dir" 2>/dev/null | awk 'NR == 2 { print $2, $4 }')
  [ $# -eq 2 ] || die "cannot find the free space of $dir (df failed)"
  fs_kib=$1 fs_free=$2
  # shellcheck disable=SC2046 # three words
  set -- $(vet_plan)
  new=$1 need=$2 bound=$3
  case $bound in
    slots)
      die "$too_small; its data area would hold /server/max-latency ($need bytes needed, it has $capacity): the slots ran out first ($slots_now of them); not growing it: raise /queue/slots with regutil -s, then ldmadmin stop, mkqueue -c, start" ;;
    none) why= ;;
    factor) why="at most $GROWTH_MAX times its size in one run (run vetqueuesize again to grow it further)" ;;
    max-size) why="/queue/max-size ($max_size) is the cap" ;;
    space) why="the free space of $dir ($fs_free KiB free, of which $(awk -v k="$KEEP_FREE" 'BEGIN { print k * 100 }')% of the file system stays free while the old and new queues coexist)" ;;
  esac
  needed="$need bytes would hold it"
  [ "$need" -ge 0 ] || needed="no size would hold it: its MVRT is under 1 s"
  if [ "$new" -le "$capacity" ]; then
    die "$too_small; it cannot grow: $why; nothing changed"
  fi
  new_slots=$old_slots
  if [ "$old_slots" != default ]; then
    new_slots=$(awk -v s="$slots_now" -v n="$new" -v c="$capacity" \
      'BEGIN { x = s * n / c; printf "%.0f\n", x == int(x) ? x : int(x) + 1 }')
  fi
  running="" args="" reg_changed=""
  tmp=$dir/.$(basename "$qfile").vet.$$
  if pid=$(server_pid); then
    running=1
    args=$(server_args "$pid") ||
      die "the LDM server (pid $pid) runs in the foreground, under a service manager: nothing changed; stop it there, run vetqueuesize, start it there"
  fi
  say "$too_small; growing it from $capacity to $new bytes ($new_slots slots)"
  if [ -n "$running" ]; then
    (stop_server) || die "cannot grow the queue $queue: the server did not stop (above); nothing changed"
  fi
  # The products there are once the server is stopped.
  stats=$(pqmon -S -q "$queue") ||
    vet_undo "reading the statistics of $queue (pqmon, above) failed"
  # shellcheck disable=SC2086 # pqmon -S: twelve numbers
  set -- $stats
  before=$7
  if [ "$new_slots" = default ]; then
    set -- -s "$new" -q "$tmp"
  else
    set -- -S "$new_slots" -s "$new" -q "$tmp"
  fi
  pqcreate "$@" || vet_undo "making the new queue $tmp (pqcreate, above) failed"
  # The old queue's mode, and its owner when root runs this (the server may
  # run as another user).
  chmod --reference="$qfile" "$tmp" ||
    vet_undo "giving $tmp the mode of $qfile (chmod, above) failed"
  if [ "$(id -u)" = 0 ]; then
    chown --reference="$qfile" "$tmp" ||
      vet_undo "giving $tmp the owner of $qfile (chown, above) failed"
  fi
  out=$(pqcopy -l - "$queue" "$tmp" 2>&1) || {
    printf '%s\n' "$out" >&2
    vet_undo "copying the products into $tmp (pqcopy, above) failed"
  }
  stats=$(pqmon -S -q "$tmp") ||
    vet_undo "reading the statistics of $tmp (pqmon, above) failed"
  # shellcheck disable=SC2086 # pqmon -S: twelve numbers
  set -- $stats
  [ "${7:-}" = "$before" ] ||
    vet_undo "the new queue $tmp holds ${7:-no} products of the $before copied"
  reg_changed=1
  regutil -s "$new" /queue/size ||
    vet_undo "setting /queue/size to $new (regutil, above) failed"
  regutil -s "$new_slots" /queue/slots ||
    vet_undo "setting /queue/slots to $new_slots (regutil, above) failed"
  mv -f "$tmp" "$qfile" || vet_undo "renaming $tmp to $qfile failed"
  say "grew the queue $queue to $new bytes with its $before products; /queue/size is $new, /queue/slots $new_slots"
  if [ -n "$running" ]; then
    restart_as "$args" ||
      die "the queue $queue is grown, but the LDM server did not start again (above): ldmadmin start"
  fi
  [ "$bound" = none ] ||
    die "the queue $queue is still too small for /server/max-latency ($needed): $why"
}

# check: as LDM's, for cron: the server runs (else exit 2), data arrives
# (else 4), the queue holds max-latency (else 5); 0 when all pass.  LDM's
# clock check (3) is left out: ldmadmin.1 says what to use instead.
cmd_check() {
  [ $# -eq 0 ] || usage
  is_running || {
    say "the LDM server is not running"
    exit 2
  }
  (cmd_checkinsertion "$@") || exit 4
  (cmd_vetqueuesize "$@") || exit 5
  say "all is well (green): the LDM server runs, data arrives, the queue holds /server/max-latency"
}

# ---- newlog: the rotation of every log our programs write ----

# exec_logs CONF [DEPTH]: the log files that CONF's EXEC entries give with
# -l (also -lFILE, and -vl/-xl FILE as getopt reads them), one a line,
# then those of the files its INCLUDE entries name (relative to the
# including file, as ldmd reads them), at most 10 deep.  Entries are
# keywords in column 1 with their argument on the same line (the way
# ldmd.conf files are written); "-" (stderr) and "" (syslog) are left out.
exec_logs() {
  [ "${2:-0}" -le 10 ] || return 0
  [ -r "$1" ] || return 0
  awk -v dir="$(dirname "$1")" '
    /^[Ee][Xx][Ee][Cc][ \t]/ {
      line = $0; sub(/^[^ \t]+[ \t]+/, "", line); sub(/[ \t]*#.*$/, "", line)
      gsub(/"/, "", line)
      n = split(line, w, /[ \t]+/)
      for (i = 1; i <= n; i++) {
        f = ""
        if (w[i] ~ /^-[vx]*l$/) f = w[i + 1]
        else if (w[i] ~ /^-[vx]*l./) { f = w[i]; sub(/^-[vx]*l/, "", f) }
        if (f != "" && f != "-") print "L " f
      }
    }
    /^[Ii][Nn][Cc][Ll][Uu][Dd][Ee][ \t]/ {
      f = $2; gsub(/"/, "", f)
      if (f != "") print "I " (f ~ /^\// ? f : dir "/" f)
    }' "$1" | while IFS= read -r entry; do
    case $entry in
      L\ *) printf '%s\n' "${entry#L }" ;;
      I\ *) exec_logs "${entry#I }" $((${2:-0} + 1)) ;;
    esac
  done
}

# site_logs CONF: the registry's /log/file and the EXEC entries' logs,
# each once (a relative path is relative to LDMHOME, where the programs
# run).
site_logs() {
  { reg /log/file; exec_logs "$1"; } | awk '
    $0 == "" || $0 == "-" { next }
    { p = $0; if (p !~ /^\//) p = home "/" p }
    !seen[p]++ { print }' home="$LDMHOME"
}

# log_count N WHERE: N if it is a whole number from 1 to 999, else a
# message naming WHERE and status 1.
log_count() {
  case $1 in
    [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) echo "$1" ;;
    *)
      say "the number of log files to keep ($2) must be a whole number from 1 to 999, not \"$1\""
      return 1
      ;;
  esac
}

# rotate_log FILE COUNT: as logrotate with compress and delaycompress
# (etc/logrotate.d/ldm), so that both make one sequence: FILE.COUNT(.gz)
# is removed (and any older one, when COUNT was lowered), every FILE.K and
# FILE.K.gz becomes FILE.K+1(.gz), FILE becomes FILE.1, and the previous
# FILE.1, now FILE.2, is compressed (its programs have reopened their logs
# since).  A missing or empty FILE is not rotated (logrotate's missingok,
# notifempty).
rotate_log() {
  f=$1
  if [ ! -e "$f" ]; then
    say "no log file $f: nothing to rotate"
    return 0
  fi
  if [ ! -s "$f" ]; then
    say "the log file $f is empty: not rotated"
    return 0
  fi
  k=$2
  while [ -e "$f.$k" ] || [ -e "$f.$k.gz" ]; do
    rm -f "$f.$k" "$f.$k.gz" || { say "cannot remove the old log $f.$k"; return 1; }
    k=$((k + 1))
  done
  k=$(($2 - 1))
  while [ "$k" -ge 1 ]; do
    for ext in '' .gz; do
      if [ -e "$f.$k$ext" ]; then
        mv -f "$f.$k$ext" "$f.$((k + 1))$ext" ||
          { say "cannot rename $f.$k$ext to $f.$((k + 1))$ext"; return 1; }
      fi
    done
    k=$((k - 1))
  done
  mv -f "$f" "$f.1" || { say "cannot rename $f to $f.1"; return 1; }
  if [ -e "$f.2" ] && [ ! -e "$f.2.gz" ]; then
    gzip -n "$f.2" || say "cannot compress $f.2 (kept as it is)"
  fi
  say "rotated $f (keeping $2)"
}

# rotate_logs COUNT [FILE]: rotate FILE, or every log of the site (the
# server's configuration being $NEWLOG_CONF).
rotate_logs() {
  st=0
  if [ -n "${2:-}" ]; then
    rotate_log "$2" "$1" || st=1
    return $st
  fi
  [ -r "$NEWLOG_CONF" ] ||
    say "cannot read the server's configuration $NEWLOG_CONF: rotating /log/file only"
  logs=$(site_logs "$NEWLOG_CONF") || return 1
  old_ifs=$IFS
  IFS='
'
  set -f # one path a line, never a pattern
  for f in $logs; do
    IFS=$old_ifs
    rotate_log "$f" "$1" || st=1
  done
  set +f
  IFS=$old_ifs
  return $st
}

cmd_newlog() {
  count=
  file=
  while getopts n:l: opt; do
    case $opt in
      n) count=$(log_count "$OPTARG" "-n") || exit 1 ;;
      l) file=$OPTARG ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  case $file in
    -) die "-l -: standard error is not a file to rotate" ;;
  esac
  if [ -z "$count" ]; then
    count=$(reg_uint /log/count) || exit 1
    count=$(log_count "$count" "the registry's /log/count") || exit 1
  fi
  NEWLOG_CONF=$(reg /server/config-path) || exit 1
  st=0
  rotate_logs "$count" "$file" || st=1
  if pid=$(server_pid); then
    kill -USR1 "$pid" || die "cannot signal the LDM server (pid $pid): its programs still write to the rotated logs"
    say "sent SIGUSR1 to the LDM server (pid $pid): it and its programs reopen their logs"
  else
    say "the LDM server is not running: the logs are rotated, no signal sent"
  fi
  return $st
}

# watch: LDM's line (size, creation time, feedtype, seqno, ident) of each
# product inserted into the queue from now on, on standard output, until
# interrupted; pqcat -e -L -i (pqutils/queue/pqcat.1) does it, in this process
# (exec), so SIGINT and SIGTERM stop it.  -f and -p are checked first
# (pqcat -i 0 at the end of the queue exits at once) so that a bad one is
# refused with its message and ours; unlike LDM's watch, -p is honoured.
cmd_watch() {
  ft=ANY
  pat='.*'
  while getopts f:p: opt; do
    case $opt in
      f) ft=$OPTARG ;;
      p) pat=$OPTARG ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  queue=$(reg /queue/path) || exit 1
  [ -e "$queue" ] || die "there is no queue $queue to watch: ldmadmin mkqueue makes it"
  if ! out=$(pqcat -e -L -i 0 -f "$ft" -p "$pat" -q "$queue" -l - 2>&1 >/dev/null); then
    printf '%s\n' "$out" >&2
    die "cannot watch the queue $queue with -f \"$ft\" -p \"$pat\" (above)"
  fi
  exec pqcat -e -L -i 1 -f "$ft" -p "$pat" -q "$queue" -l -
}

cmd_config() {
  [ $# -eq 0 ] || usage
  echo "LDMHOME : $LDMHOME"
  echo "pid file : $PIDFILE"
  regutil || die "cannot read the registry"
}

cmd_scour() {
  d=
  while getopts d opt; do
    case $opt in
      d) d=-d ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  conf=$(reg /scour/config-path) || exit 1
  scour $d "$conf" || die "scour failed with $conf"
}

cmd_log() {
  [ $# -eq 0 ] || usage
  log=$(reg /log/file) || exit 1
  [ -r "$log" ] || die "cannot read the log file $log"
  ${PAGER:-more} "$log"
}

cmd_tail() {
  [ $# -eq 0 ] || usage
  log=$(reg /log/file) || exit 1
  [ -r "$log" ] || die "cannot read the log file $log"
  exec tail -f "$log"
}

# ---- metrics: printmetrics, addmetrics, newmetrics, plotmetrics ----
# LDM's performance metrics (ldmadmin.1 lists the fields): one line of
# numbers read from /proc and pqmon -S rather than from top, vmstat and
# netstat, whose output differs between systems (and which a fresh Debian
# may lack); the metrics file of the registry (/metrics/file), its
# rotation (/metrics/count) and its plots with gnuplot.
# LDMADMIN_METRICS_INTERVAL (seconds, 1 as LDM's "vmstat 1 2") is how long
# printmetrics measures the CPU and the context switches; GNUPLOT names
# the gnuplot program (gnuplot).

METRICS_INTERVAL=${LDMADMIN_METRICS_INTERVAL:-1}

# cpu_sample: "user system idle iowait total ctxt" from /proc/stat: clock
# ticks of all CPUs since boot (user with nice; system with irq and
# softirq; total without guest, which user already counts) and context
# switches since boot.
cpu_sample() {
  awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i
                     c = ($2 + $3) " " ($4 + $7 + $8) " " $5 " " $6 " " t }
       $1 == "ctxt" { x = $2 }
       END { if (c == "" || x == "") exit 1; print c, x }' /proc/stat
}

# server_tree PID: PID and its descendants, one a line.
server_tree() {
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
    { s = $0; sub(/.*\) /, "", s); split(s, f, " "); kids[f[2]] = kids[f[2]] " " $1 }
    END { q[1] = root; n = 1
          for (i = 1; i <= n; i++) {
            print q[i]; m = split(kids[q[i]], k, " ")
            for (j = 1; j <= m; j++) q[++n] = k[j] } }'
}

# socket_inodes PID...: the inodes of the sockets the processes hold.
socket_inodes() {
  for p in "$@"; do
    for fd in /proc/"$p"/fd/*; do
      l=$(readlink "$fd" 2>/dev/null) || continue
      case $l in socket:\[*\]) l=${l#socket:[} && echo "${l%]}" ;; esac
    done
  done
}

# port_counts PORT: "local remote", the established TCP connections (IPv4
# and IPv6) of the server's processes (ldmd and its descendants): local,
# those on a port it listens on (downstream sites and clients fed by us);
# remote, the others, which it opened to other servers (its upstreams).
# When no server runs: the established connections on PORT, and 0.
port_counts() {
  inodes=
  if spid=$(server_pid); then
    # shellcheck disable=SC2046 # one pid a line
    inodes=$(socket_inodes $(server_tree "$spid") | tr '\n' ' ')
  fi
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v port="$1" -v inodes="$inodes" '
    function hex(s,   i, v) {
      v = 0; s = toupper(s)
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1
      return v }
    BEGIN { n = split(inodes, a, " "); for (i = 1; i <= n; i++) ours[a[i]] = 1 }
    $1 == "sl" { next }
    { n = split($2, a, ":"); lp = hex(a[n])
      if ($4 == "01") { est[++ne] = lp; mine[ne] = ($10 in ours) }
      else if ($4 == "0A" && ($10 in ours)) { listen[lp] = 1; nl++ } }
    END {
      for (i = 1; i <= ne; i++)
        if (nl == 0) { if (est[i] == port) l++ }
        else if (mine[i]) { if (est[i] in listen) l++; else r++ }
      printf "%d %d\n", l, r }'
}

# metrics_line: LDM's printmetrics line (the fields: ldmadmin.1).
metrics_line() {
  now=$(date -u +%Y%m%d.%H%M%S)
  case $METRICS_INTERVAL in
    '' | *[!0-9.]* | *.*.* | .) false ;;
    *) awk -v d="$METRICS_INTERVAL" 'BEGIN { exit !(d + 0 > 0) }' ;;
  esac || die "LDMADMIN_METRICS_INTERVAL \"$METRICS_INTERVAL\" is not a number of seconds above 0"
  read -r l1 l5 l15 _ </proc/loadavg || die "cannot read /proc/loadavg"
  port=$(reg_uint /server/port) || exit 1
  ports=$(port_counts "$port") || die "cannot read the TCP connections (/proc/net/tcp)"
  queue=$(reg /queue/path) || exit 1
  stats=$(pqmon -S -q "$queue") ||
    die "cannot read the statistics of the queue $queue (pqmon failed, above)"
  # shellcheck disable=SC2086 # pqmon -S: twelve numbers
  set -- $stats
  [ $# -eq 12 ] || die "pqmon -S printed \"$stats\", not twelve numbers"
  q="$8 $7 $4"
  mem=$(awk '{ v[$1] = $2 }
    END { if (!("MemTotal:" in v) || !("MemAvailable:" in v)) exit 1
          print v["MemTotal:"] - v["MemAvailable:"], v["MemFree:"] + 0,
                v["SwapTotal:"] - v["SwapFree:"], v["SwapFree:"] + 0 }' /proc/meminfo) ||
    die "cannot read the memory figures of /proc/meminfo"
  s1=$(cpu_sample) || die "cannot read /proc/stat"
  sleep "$METRICS_INTERVAL" || die "sleep $METRICS_INTERVAL failed"
  s2=$(cpu_sample) || die "cannot read /proc/stat"
  cpu=$(echo "$s1 $s2" | awk -v dt="$METRICS_INTERVAL" '{
    t = $11 - $5; if (t <= 0) t = 1
    printf "%.0f %.0f %.0f %.0f %.0f", 100 * ($7 - $1) / t, 100 * ($8 - $2) / t,
      100 * ($9 - $3) / t, 100 * ($10 - $4) / t, ($12 - $6) / dt }')
  # shellcheck disable=SC2086 # five numbers
  set -- $cpu
  echo "$now $l1 $l5 $l15 $ports $q $1 $2 $3 $4 $mem $5"
}

cmd_printmetrics() {
  [ $# -eq 0 ] || usage
  metrics_line
}

# metrics_file: the registry's /metrics/file; its directory made if need be.
metrics_file() {
  mf=$(reg /metrics/file) || exit 1
  mdir=$(dirname "$mf")
  [ -d "$mdir" ] || mkdir -p "$mdir" || die "cannot make the metrics directory $mdir"
  echo "$mf"
}

# addmetrics: measure first (outside the lock), then append the line in
# one write under an exclusive flock(1) on the metrics file itself, as
# LDM's, waited for at most LOCK_TIMEOUT seconds.
cmd_addmetrics() {
  [ $# -eq 0 ] || usage
  mf=$(metrics_file) || exit 1
  line=$(metrics_line) || exit 1
  {
    flock -w "$LOCK_TIMEOUT" 8 ||
      die "another process holds the lock of the metrics file $mf (waited ${LOCK_TIMEOUT} s)"
    printf '%s\n' "$line" >&8 || die "cannot append to the metrics file $mf"
  } 8>>"$mf" || die "cannot open the metrics file $mf"
}

# newmetrics: keep /metrics/count files, the current one included:
# FILE.N-1 is removed, FILE.i becomes FILE.i+1, FILE becomes FILE.1, and
# a new empty FILE is made, all under the metrics file's lock (an
# addmetrics waiting for it appends to the file that was current).
cmd_newmetrics() {
  [ $# -eq 0 ] || usage
  mf=$(metrics_file) || exit 1
  count=$(reg_uint /metrics/count) || exit 1
  [ "$count" -ge 1 ] || die "the registry's /metrics/count \"$count\" is not a count of at least 1"
  # shellcheck disable=SC2094 # descriptor 8 only holds the lock
  {
    flock -w "$LOCK_TIMEOUT" 8 ||
      die "another process holds the lock of the metrics file $mf (waited ${LOCK_TIMEOUT} s)"
    i=$((count - 1))
    if [ "$i" -ge 1 ]; then
      rm -f "$mf.$i" || die "cannot remove the oldest metrics file $mf.$i"
    fi
    while [ "$i" -gt 1 ]; do
      if [ -e "$mf.$((i - 1))" ]; then
        mv -f "$mf.$((i - 1))" "$mf.$i" || die "cannot rename $mf.$((i - 1)) to $mf.$i"
      fi
      i=$((i - 1))
    done
    if [ "$count" -gt 1 ]; then
      mv -f "$mf" "$mf.1" || die "cannot rename $mf to $mf.1"
      : >"$mf" || die "cannot make the new metrics file $mf"
    else
      : >"$mf" || die "cannot empty the metrics file $mf"
    fi
  } 8>>"$mf" || die "cannot open the metrics file $mf"
  say "rotated the metrics file $mf (keeping $count)"
}

# metrics_time WHEN: plotmetrics' -b and -e as YYYYMMDD.hhmmss (UTC, the
# form of printmetrics' first field): LDM's YYYYMMDD[.hh[mm[ss]]], missing
# digits zeros; or ours, "now" and "now-N" with N in s, m, h or d.
metrics_time() {
  case $1 in
    now) date -u +%Y%m%d.%H%M%S ;;
    now-*[0-9][smhd])
      n=${1#now-}
      unit=${n#"${n%?}"}
      n=${n%?}
      case $n in '' | *[!0-9]*) return 1 ;; esac
      case $unit in s) m=1 ;; m) m=60 ;; h) m=3600 ;; d) m=86400 ;; esac
      date -u -d "@$(($(date +%s) - n * m))" +%Y%m%d.%H%M%S
      ;;
    *)
      echo "$1" | awk '
        !/^[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9](\.[0-9][0-9]([0-9][0-9]([0-9][0-9])?)?)?$/ { exit 1 }
        { t = substr($0, 10) "000000"
          mo = substr($0, 5, 2) + 0; d = substr($0, 7, 2) + 0
          h = substr(t, 1, 2) + 0; mi = substr(t, 3, 2) + 0; s = substr(t, 5, 2) + 0
          if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) exit 1
          print substr($0, 1, 8) "." substr(t, 1, 6) }'
      ;;
  esac
}

# plotmetrics_script DATA PREFIX: the gnuplot script that draws the
# metrics lines of the file DATA (plotmetrics' data, the time first) into
# the PNG files PREFIXage.png, PREFIXqueue.png ... PREFIXswitches.png.
plotmetrics_script() {
  plot_data=$1
  plot_prefix=$2
  cat <<GP
set terminal png size 900,450
set xdata time
set timefmt "%Y-%m-%dT%H:%M:%S"
set format x "%m-%d\n%H:%M:%S"
set xlabel "time (UTC)"
set grid
set key outside right top
set style data linespoints
data = "$plot_data"
set output "${plot_prefix}age.png"
set title "Age of the oldest product in the queue (minimum residence)"
set ylabel "seconds"
plot data using 1:7 title "age"
set output "${plot_prefix}queue.png"
set title "Products in the queue"
set ylabel "products"
set y2label "megabytes"
set y2tics
plot data using 1:8 title "products", data using 1:(\$9 / 1e6) axes x1y2 title "MB"
unset y2tics
unset y2label
set output "${plot_prefix}connections.png"
set title "Established connections"
set ylabel "connections"
plot data using 1:5 title "local (downstreams)", data using 1:6 title "remote (upstreams)"
set output "${plot_prefix}load.png"
set title "Load average"
set ylabel "runnable processes"
plot data using 1:2 title "1 min", data using 1:3 title "5 min", data using 1:4 title "15 min"
set output "${plot_prefix}cpu.png"
set title "CPU"
set ylabel "percent"
set yrange [0:100]
plot data using 1:10 title "user", data using 1:11 title "system", data using 1:12 title "idle", data using 1:13 title "iowait"
set autoscale y
set output "${plot_prefix}memory.png"
set title "Memory"
set ylabel "MiB"
plot data using 1:(\$14 / 1024) title "memory used", data using 1:(\$15 / 1024) title "memory free", data using 1:(\$16 / 1024) title "swap used", data using 1:(\$17 / 1024) title "swap free"
set output "${plot_prefix}switches.png"
set title "Context switches"
set ylabel "per second"
plot data using 1:18 title "context switches"
set output
GP
}

# plotmetrics [-b begin] [-e end] [-o prefix]: the PNG plots of the
# metrics files' lines within [begin, end], drawn by gnuplot; prints
# their paths.
cmd_plotmetrics() {
  begin=00000000.000000
  end=99999999.999999
  prefix=
  while getopts b:e:o: opt; do
    case $opt in
      b) begin=$(metrics_time "$OPTARG") ||
        die "-b \"$OPTARG\" is not a time: YYYYMMDD[.hh[mm[ss]]] (UTC), now or now-N[smhd]" ;;
      e) end=$(metrics_time "$OPTARG") ||
        die "-e \"$OPTARG\" is not a time: YYYYMMDD[.hh[mm[ss]]] (UTC), now or now-N[smhd]" ;;
      o) prefix=$OPTARG ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  awk -v b="$begin" -v e="$end" 'BEGIN { exit !(b "" <= e "") }' ||
    die "the beginning $begin is after the end $end"
  pattern=$(reg /metrics/files) || exit 1
  mf=$(reg /metrics/file) || exit 1
  [ -n "$prefix" ] || prefix=$(dirname "$mf")/metrics-
  case $prefix in *\"* | *\\*) die "the output prefix \"$prefix\" may not hold a \" or a \\" ;; esac
  pdir=$(dirname "$prefix.png")
  [ -d "$pdir" ] || die "cannot write the plots $prefix*.png: no directory $pdir"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ldmadmin-plot.XXXXXX") ||
    die "cannot make a temporary directory in ${TMPDIR:-/tmp}"
  # shellcheck disable=SC2064 # the path is fixed now
  trap "rm -rf '$tmp'" EXIT
  # shellcheck disable=SC2086 # the registry's pattern, expanded here
  set -- $pattern
  files=
  for f in "$@"; do
    [ -f "$f" ] && [ -r "$f" ] && files="$files $f"
  done
  [ -n "$files" ] || die "no metrics file matches $pattern: run ldmadmin addmetrics first (from cron)"
  # The lines of 18 fields within the range, in time order, the time as
  # gnuplot reads it.
  # shellcheck disable=SC2086 # the list of files made above
  awk -v b="$begin" -v e="$end" '
    NF == 18 && $1 ~ /^[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ &&
    $1 >= b && $1 <= e {
      $1 = substr($1, 1, 4) "-" substr($1, 5, 2) "-" substr($1, 7, 2) "T" \
           substr($1, 10, 2) ":" substr($1, 12, 2) ":" substr($1, 14, 2)
      print }' $files | sort >"$tmp/data" ||
    die "cannot read the metrics files$files"
  [ -s "$tmp/data" ] ||
    die "no metrics between $begin and $end in$files"
  n=$(wc -l <"$tmp/data")
  gp=${GNUPLOT:-gnuplot}
  command -v "$gp" >/dev/null 2>&1 ||
    die "cannot plot: no $gp program (on Debian: apt-get install gnuplot-nox)"
  plotmetrics_script "$tmp/data" "$prefix" >"$tmp/plot.gp"
  if ! "$gp" "$tmp/plot.gp" >"$tmp/gnuplot.out" 2>&1; then
    cat "$tmp/gnuplot.out" >&2
    die "gnuplot failed to draw the plots $prefix*.png (above)"
  fi
  for p in age queue connections load cpu memory switches; do
    [ -s "$prefix$p.png" ] || die "gnuplot made no $prefix$p.png"
    echo "$prefix$p.png"
  done
  say "plotted $n metrics lines from $begin to $end: the PNG files above"
}

# mkcert: a site key (EC P-256, mode 0600) and a self-signed certificate
# naming the site (CN and SAN), or with -r a certificate signing request
# for a CA; prints the SHA-256 pin of the public key (ldmd.conf's
# {sha256=...}, docs/security.md); -s sets /tls/cert and /tls/key.
cmd_mkcert() {
  name='' days=825 dir=$LDMHOME/etc/tls csr='' force='' set=''

  OPTIND=1
  while getopts n:d:o:rfs opt; do
    case $opt in
      n) name=$OPTARG ;;
      d) days=$OPTARG ;;
      o) dir=$OPTARG ;;
      r) csr=1 ;;
      f) force=1 ;;
      s) set=1 ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  case $days in '' | *[!0-9]* | 0) die "the days \"$days\" are not a count of at least 1" ;; esac
  [ -n "$name" ] || name=$(reg /hostname) || exit 1
  case $name in '' | *[!A-Za-z0-9.:-]*) die "\"$name\" is not a host name or address" ;; esac
  command -v openssl >/dev/null 2>&1 || die "cannot make a certificate: no openssl command (install the openssl package)"
  key=$dir/$name.key
  out=$dir/$name.pem
  [ -z "$csr" ] || out=$dir/$name.csr
  if [ -z "$force" ]; then
    for f in "$key" "$out"; do
      [ ! -e "$f" ] || die "$f exists: not replaced (-f replaces it)"
    done
  fi
  mkdir -p "$dir" || die "cannot make the directory $dir"
  case $name in
    *:* | *[!0-9.]*) san="DNS:$name" ;; # a name (or IPv6: below)
    *) san="IP:$name" ;;
  esac
  case $name in *:*) san="IP:$name" ;; esac
  # The key is made under umask 077: never readable by others, even briefly.
  if ! (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -out "$key.tmp" 2>"$dir/.mkcert.err"); then
    cat "$dir/.mkcert.err" >&2
    rm -f "$key.tmp" "$dir/.mkcert.err"
    die "openssl could not make the key $key (above)"
  fi
  if [ -n "$csr" ]; then
    set -- req -new -key "$key.tmp" -subj "/CN=$name" -addext "subjectAltName=$san" -out "$out"
  else
    set -- req -x509 -new -key "$key.tmp" -subj "/CN=$name" -addext "subjectAltName=$san" \
      -addext "basicConstraints=critical,CA:FALSE" -days "$days" -out "$out"
  fi
  if ! openssl "$@" 2>"$dir/.mkcert.err"; then
    cat "$dir/.mkcert.err" >&2
    rm -f "$key.tmp" "$dir/.mkcert.err"
    die "openssl could not make $out (above)"
  fi
  rm -f "$dir/.mkcert.err"
  mv -f "$key.tmp" "$key" || die "cannot rename $key.tmp to $key"
  pin=$(openssl pkey -in "$key" -pubout -outform DER 2>/dev/null | openssl dgst -sha256 -r | cut -c1-64)
  echo "key $key"
  if [ -n "$csr" ]; then
    echo "request $out (have a CA sign it; its certificate then goes in /tls/cert)"
  else
    echo "certificate $out (self-signed, $days days, $san)"
  fi
  echo "sha256 $pin"
  if [ -n "$set" ] && [ -z "$csr" ]; then
    regutil -s "$out" /tls/cert || die "cannot set /tls/cert in the registry"
    regutil -s "$key" /tls/key || die "cannot set /tls/key in the registry"
    say "set /tls/cert and /tls/key: restart the server to use them"
  fi
}

[ $# -ge 1 ] || usage
# As LDM's ldmadmin: every command runs in LDMHOME, so relative paths (in
# the registry, in ldmd.conf's EXEC entries, on the command line) mean
# the same for ldmadmin, ldmd and the programs ldmd starts.
cd "$LDMHOME" 2>/dev/null || die "cannot change to LDMHOME $LDMHOME: no such directory, or no access"
cmd=$1
shift
case $cmd in
  start | stop | restart | clean | mkqueue | delqueue | mksurfqueue | \
    delsurfqueue | queuecheck | newlog) lock ;;
esac
case $cmd in
  start | stop | restart | isrunning | clean | mkqueue | delqueue | \
    mksurfqueue | delsurfqueue | queuecheck | checkinsertion | vetqueuesize | check | pqactcheck | pqactHUP | \
    newlog | watch | config | scour | log | tail | printmetrics | addmetrics | \
    newmetrics | plotmetrics | mkcert)
    "cmd_$cmd" "$@"
    ;;
  usage | -h | --help) usage ;;
  *)
    say "unknown command \"$cmd\""
    usage
    ;;
esac
