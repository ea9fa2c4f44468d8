#!/bin/sh
# newlog - rotate one log file as LDM's newlog does, for the cron jobs and
# scripts that call it (pqutils/ops/newlog.1): `newlog file [count]`.  A
# missing file is created (empty); an empty one is left as it is; a
# non-empty one becomes file.1, the older file.K become file.K+1 up to
# file.COUNT (the old file.COUNT is replaced, higher numbers are left
# alone), and an empty file takes its place.  The compressed copies that
# ldmadmin newlog and logrotate keep (file.K.gz) are shifted alongside, so
# that both make one sequence.  It owns nothing but the renaming: the
# programs writing to the file reopen it when told (refresh_logging).
#
# POSIX sh, as LDM's: a few renames are what an operator can read.

PROG=newlog

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }

usage() {
  echo "usage: $PROG logfile [count]  (count: the old files kept, 1 to 999; default 7)" >&2
  exit 1
}

case $# in 1 | 2) ;; *) usage ;; esac
case $1 in -h) echo "usage: $PROG logfile [count]"; exit 0 ;; -*) usage ;; esac
f=$1
count=${2:-7}
case $count in
  [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
  *)
    say "the number of old files to keep must be a whole number from 1 to 999, not \"$count\""
    exit 1
    ;;
esac
case $f in
  '' | */) say "not a file name: \"$f\""; exit 1 ;;
esac
dir=$(dirname "$f")
[ -d "$dir" ] || { say "no directory $dir for the log $f"; exit 1; }

if [ ! -e "$f" ]; then
  : >>"$f" || { say "cannot create $f"; exit 1; }
  exit 0
fi
[ -f "$f" ] || { say "$f is not a regular file"; exit 1; }
[ -s "$f" ] || exit 0

for ext in '' .gz; do
  if [ -e "$f.$count$ext" ]; then
    rm -f "$f.$count$ext" || { say "cannot remove $f.$count$ext"; exit 1; }
  fi
done
k=$((count - 1))
while [ "$k" -ge 1 ]; do
  for ext in '' .gz; do
    if [ -e "$f.$k$ext" ]; then
      mv -f "$f.$k$ext" "$f.$((k + 1))$ext" ||
        { say "cannot rename $f.$k$ext to $f.$((k + 1))$ext"; exit 1; }
    fi
  done
  k=$((k - 1))
done
mv -f "$f" "$f.1" || { say "cannot rename $f to $f.1"; exit 1; }
: >>"$f" || { say "cannot create a new $f"; exit 1; }
exit 0
