#!/bin/sh
# refresh_logging - tell the LDM server's programs to reopen their log
# files (after newlog renamed them), as LDM's refresh_logging does for
# ldmadmin newlog and sites' scripts (pqutils/ops/refresh_logging.1): it
# sends SIGUSR1 to the running server (the pid in $LDMHOME/ldmd.pid,
# checked to be an ldmd), which reopens its own log and passes the signal
# on to every process it started (ldmd/ldmd.8: EXEC programs, requesters,
# connection processes), each of which reopens its log.  It owns nothing:
# it finds the server and signals it.
#
# Not the whole process group, as LDM's server does itself: a decoder that
# pqact runs shares the group and may not handle SIGUSR1, whose default
# action would kill it.

PROG=refresh_logging
LDMHOME=${LDMHOME:-/var/lib/ldm}
PIDFILE=$LDMHOME/ldmd.pid

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }

case $# in
  0) ;;
  *)
    case $1 in -h) echo "usage: $PROG"; exit 0 ;; esac
    echo "usage: $PROG   (no arguments: signals the server of \$LDMHOME, $LDMHOME)" >&2
    exit 1
    ;;
esac

if [ ! -r "$PIDFILE" ]; then
  say "the LDM server is not running (no $PIDFILE): no program to tell"
  exit 1
fi
read -r pid <"$PIDFILE" 2>/dev/null
case $pid in
  '' | *[!0-9]*)
    say "$PIDFILE holds no pid"
    exit 1
    ;;
esac
if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != ldmd ]; then
  say "the LDM server is not running (pid $pid of $PIDFILE is not an ldmd): no program to tell"
  exit 1
fi
kill -USR1 "$pid" || {
  say "cannot signal the LDM server (pid $pid)"
  exit 1
}
exit 0
