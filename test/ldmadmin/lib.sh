# shellcheck shell=bash
# lib.sh - sourced by every ldmadmin test.
#
# Usage:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: ldmadmin.sh, then the directories of ldmd, of the queue
# utilities and of pqact, which go first in PATH, and test/cli's
# pqclihelper ($HELPER: it inserts products with a chosen insertion time).
#
# Gives the test its scratch directory (test/lib/common.sh: registry,
# LDMHOME, cleanup) holding an ldmd.conf that allows 127.0.0.1 and runs
# pqact, a pqact.conf, and a registry that names them, the queue, the log
# file and a scour.conf; $ADMIN runs ldmadmin.  The test's ldmd, when one
# runs, is stopped (by pid) at exit.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

ADMIN=$(cd "$(dirname "${1:?ldmadmin.sh}")" && pwd)/$(basename "$1")
export PATH=${2:?ldmd dir}:${3:?utilities dir}:${4:?pqact dir}:$PATH
# shellcheck disable=SC2034 # used by the tests
HELPER=${5:?path of pqclihelper}
scratch_init ldmadmin /dev/shm
mkdir -p "$LDMHOME" "$SCRATCH/data"
Q=$SCRATCH/ldm.pq
LOG=$SCRATCH/logs/ldmd.log
PIDFILE=$LDMHOME/ldmd.pid
CONF=$SCRATCH/ldmd.conf
PQACT_CONF=$SCRATCH/pqact.conf
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\nEXEC\t"pqact -d %s %s"\n' \
  "$SCRATCH/data" "$PQACT_CONF" >"$CONF"
printf 'ANY\t^(.*)\n\tFILE\t\\1\n' >"$PQACT_CONF"
write_registry ldmadmin-test.example "  <queue>
    <path>$Q</path>
    <size>2M</size>
  </queue>
  <server>
    <config-path>$CONF</config-path>
    <ip-addr>127.0.0.1</ip-addr>
  </server>
  <pqact>
    <config-path>$PQACT_CONF</config-path>
  </pqact>
  <scour>
    <config-path>$SCRATCH/scour.conf</config-path>
  </scour>
  <log>
    <file>$LOG</file>
  </log>"
FAIL_LOGS=(OUT:stdout ERR:stderr LOG:ldmd.log)

# The server's pid (or nothing).
server_pid() {
  [[ -r $PIDFILE ]] && cat "$PIDFILE"
}
trap 'pidfile_cleanup "$PIDFILE"' EXIT

# admin ARGS...: run ldmadmin (under sh, as installed) with run.
admin() {
  run sh "$ADMIN" "$@"
}

# admin_ok ARGS...: exit 0.  admin_fails ARGS... -- TEXT: exit 1 and TEXT
# on stderr.
admin_ok() {
  admin "$@"
  ((rc == 0)) || fail "'ldmadmin $*' exited $rc, expected 0"
}
admin_fails() {
  local args=() text
  while [[ $1 != -- ]]; do
    args+=("$1")
    shift
  done
  text=$2
  admin "${args[@]}"
  ((rc == 1)) || fail "'ldmadmin ${args[*]}' exited $rc, expected 1"
  [[ -z $text ]] || grep -qF -- "$text" "$ERR" ||
    fail "'ldmadmin ${args[*]}': no \"$text\" on stderr"
}

# mount_tmpfs SIZE: a tmpfs of SIZE of the test's own at $MNT
# ($SCRATCH/mnt), unmounted at exit before the cleanup; status 1, with
# mount's message in $ERR, where this host does not permit it.
mount_tmpfs() {
  MNT=$SCRATCH/mnt
  mkdir -p "$MNT" || fail "mkdir $MNT"
  trap tmpfs_cleanup EXIT
  mount -t tmpfs -o size="$1" tmpfs "$MNT" 2>"$ERR"
}
tmpfs_cleanup() {
  local st=$?
  umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
  trap - EXIT
  (exit "$st")
  pidfile_cleanup "$PIDFILE"
}

# fill_fresh: twelve products of 200 kB, each different, inserted now:
# a 2M queue past full, its minimum virtual residence time 0 s.
fill_fresh() {
  local i
  head -c 200000 /dev/urandom >"$SCRATCH/big.0"
  for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    { cat "$SCRATCH/big.0"; echo "$i"; } >"$SCRATCH/big.$i"
    run pqinsert "$SCRATCH/big.$i"
    ((rc == 0)) || fail "pqinsert big.$i exited $rc"
  done
}
