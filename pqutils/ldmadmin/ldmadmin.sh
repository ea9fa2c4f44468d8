#!/bin/sh
# ldmadmin - the LDM control program, LDM's subcommands and exit codes (0
# success, 1 failure; isrunning 0 when the server runs), for the scripts
# and cron jobs sites already have (pqutils/ldmadmin/ldmadmin.1).  It owns
# the pid file, $LDMHOME/ldmd.pid (LDM's place; ldmd writes it with -W and
# removes it at exit), its lock file, and the renaming of rotated logs
# (newlog), and nothing else: every setting comes from the registry
# through regutil (pqutils/regutil.1), and the work is done by the other
# programs (ldmd, pqcreate, pqcheck, pqact, pqcat, scour).
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
  mkqueue [-c] [-f]     create the queue (-c: replace an existing one)
  delqueue [-y]         delete the queue (-y: without asking)
  queuecheck            check the queue (pqcheck), the server stopped
  checkinsertion        is the newest product younger than the registry's limit?
  pqactcheck [ldmd.conf] | -p pqact.conf
  pqactHUP              make this server's pqact reread its configuration
  scour [-d]            delete old files (scour and the registry's scour.conf)
  newlog [-n count] [-l logfile]
                        rotate the logs, then SIGUSR1 to the server
  watch [-f feedset] [-p pattern]
                        print the line of each product inserted from now on
  log | tail            page or follow the log file
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

# size_bytes SIZE: a registry size (k, M, G decimal suffixes, as LDM) in
# bytes, or nothing if it is not one.
size_bytes() {
  awk -v s="$1" 'BEGIN {
    m = 1; u = substr(s, length(s));
    if (u ~ /[kK]/) m = 1e3; else if (u ~ /[mM]/) m = 1e6;
    else if (u ~ /[gG]/) m = 1e9;
    n = (m == 1) ? s : substr(s, 1, length(s) - 1);
    if (n !~ /^[0-9]+$/) exit 1;
    printf "%.0f\n", n * m }'
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

cmd_start() {
  args=
  while getopts vxm:o:q:M:I:P: opt; do
    case $opt in
      v | x) args="$args -$opt" ;;
      m | o | q | M | I | P) args="$args -$opt $OPTARG" ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -le 1 ] || usage
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
    die "the queue $queue failed its check (above): ldmadmin delqueue and mkqueue, or pqcheck -F"
  fi
  conf=${1:-$(reg /server/config-path)} || exit 1
  # shellcheck disable=SC2086 # args is a list of words made above
  if ! out=$(ldmd -n -l - $args "$conf" 2>&1); then
    printf '%s\n' "$out" >&2
    die "the server's configuration $conf is not valid (above)"
  fi
  pqactcheck_conf "$conf" || die "a pqact configuration of $conf is not valid (above)"
  # /log/rotate (LDM's): the logs rotated before the server starts, as
  # newlog does (no signal: nothing runs yet).  A rotation that fails does
  # not keep the server from starting; a bad /log/count does, as a bad
  # setting.
  rotate=$(reg /log/rotate) || exit 1
  case $rotate in
    1 | [Tt][Rr][Uu][Ee] | [Yy][Ee][Ss])
      count=$(reg /log/count) || exit 1
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

cmd_restart() {
  if is_running; then
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

cmd_mkqueue() {
  clobber=''
  fast=''
  while getopts cfq opt; do
    case $opt in
      c) clobber=-c ;;
      f) fast=-f ;;
      q) ;; # LDM's -q (quiet) is accepted and ignored
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  queue=$(reg /queue/path) || exit 1
  size=$(reg /queue/size) || exit 1
  slots=$(reg /queue/slots) || exit 1
  if is_running; then
    die "the LDM server is running: ldmadmin stop before making the queue $queue"
  fi
  if [ -e "$queue" ] && [ -z "$clobber" ]; then
    die "the queue $queue exists: ldmadmin delqueue first, or mkqueue -c to replace it"
  fi
  dir=$(dirname "$queue")
  [ -d "$dir" ] || die "cannot make the queue $queue: no directory $dir"
  bytes=$(size_bytes "$size") || die "the registry's /queue/size \"$size\" is not a size"
  need=$(((bytes + 1023) / 1024))
  have=$(free_kib "$dir")
  [ -n "$have" ] || die "cannot find the free space of $dir (df failed)"
  if [ "$need" -gt "$have" ]; then
    die "not enough space for the queue $queue: /queue/size $size needs $need KiB, $dir has $have KiB free (free some, or lower /queue/size with regutil -s)"
  fi
  if [ "$slots" = default ]; then
    set -- $clobber $fast -s "$size" -q "$queue"
  else
    set -- $clobber $fast -S "$slots" -s "$size" -q "$queue"
  fi
  pqcreate "$@" || die "cannot make the queue $queue (pqcreate failed, above)"
  say "made the queue $queue ($size)"
}

cmd_delqueue() {
  yes=
  while getopts yq opt; do
    case $opt in
      y) yes=1 ;;
      q) ;;
      *) usage ;;
    esac
  done
  shift $((OPTIND - 1))
  [ $# -eq 0 ] || usage
  queue=$(reg /queue/path) || exit 1
  if is_running; then
    die "the LDM server is running: ldmadmin stop before deleting the queue $queue"
  fi
  [ -e "$queue" ] || die "there is no queue $queue to delete"
  if [ -z "$yes" ]; then
    [ -t 0 ] ||
      die "not deleting the queue $queue without confirmation: run delqueue -y, or from a terminal"
    printf 'delete the queue %s and every product in it? [y/N] ' "$queue" >&2
    read -r answer || answer=
    case $answer in
      y | Y | yes | YES) ;;
      *) die "the queue $queue is kept" ;;
    esac
  fi
  rm -f "$queue" || die "cannot delete the queue $queue"
  say "deleted the queue $queue"
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
# word before it is one of -[ldqfpito]), one a line; the registry's
# /pqact/config-path for an entry that names none.
pqact_configs() {
  awk -v dflt="$(reg /pqact/config-path)" '
    tolower($1) == "exec" && $0 ~ /pqact/ {
      line = $0; sub(/^[ \t]*[^ \t]+[ \t]+/, "", line); gsub(/"/, "", line)
      n = split(line, w, /[ \t]+/)
      if (w[n] == "") n--
      if (n < 2 || w[n] ~ /^-/ || w[n - 1] ~ /^-[ldqfpito]$/) print dflt
      else print w[n]
    }' "$1"
}

# pqact_check_file CONF: has pqact read CONF without error?  pqact exits 1
# with -q /dev/null even for a good file (no queue), so its log decides.
pqact_check_file() {
  out=$(pqact -vl- -q /dev/null "$1" 2>&1)
  case $out in
    *"successfully read configuration-file"* | *"has no entries"*)
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
  limit=$(reg /insertion-check-interval) || exit 1
  stats=$(pqmon -S -q "$queue") || die "cannot read the statistics of the queue $queue (pqmon failed, above)"
  # shellcheck disable=SC2086 # pqmon -S: twelve numbers
  set -- $stats
  [ "${7:-0}" -gt 0 ] || die "the queue $queue holds no product: is data arriving?"
  if [ "$9" -gt "$limit" ]; then
    die "the newest product in the queue $queue was inserted $9 s ago, more than /insertion-check-interval ($limit s): is data arriving?"
  fi
  say "the newest product in the queue $queue was inserted $9 s ago (limit $limit s)"
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
    count=$(reg /log/count) || exit 1
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
# interrupted; pqcat -e -L -i (pqutils/pqcat.1) does it, in this process
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

[ $# -ge 1 ] || usage
# As LDM's ldmadmin: every command runs in LDMHOME, so relative paths (in
# the registry, in ldmd.conf's EXEC entries, on the command line) mean
# the same for ldmadmin, ldmd and the programs ldmd starts.
cd "$LDMHOME" 2>/dev/null || die "cannot change to LDMHOME $LDMHOME: no such directory, or no access"
cmd=$1
shift
case $cmd in
  start | stop | restart | clean | mkqueue | delqueue | queuecheck | newlog) lock ;;
esac
case $cmd in
  start | stop | restart | isrunning | clean | mkqueue | delqueue | \
    queuecheck | checkinsertion | pqactcheck | pqactHUP | newlog | watch | \
    config | scour | log | tail)
    "cmd_$cmd" "$@"
    ;;
  usage | -h | --help) usage ;;
  *)
    say "unknown command \"$cmd\""
    usage
    ;;
esac
