#!/usr/bin/env bash
# manpages.sh - every manual page of the source tree (NAME.1 or NAME.8
# next to its program's source) renders without a warning: groff -ww -man
# -z prints nothing, and man -l at 80 columns prints the page and nothing
# on standard error, in the C locale and in C.UTF-8.  The package installs
# these pages as they are (test/pkg/deb.sh checks that each program has
# one); a warning there is a page a reader sees broken.
#
# Usage: manpages.sh SRCDIR (the source tree; build* and .git skipped)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

SRC=$(cd "${1:?the source directory}" && pwd)
scratch_init manpages
command -v groff >/dev/null || skip_test "no groff (apt-get install groff)"
command -v man >/dev/null || skip_test "no man (apt-get install man-db)"

mapfile -t pages < <(cd "$SRC" && find . \( -path './build*' -o -path ./.git \) \
  -prune -o -type f \( -name '*.1' -o -name '*.8' \) -print | sort)
((${#pages[@]} >= 30)) || fail "only ${#pages[@]} manual pages under $SRC"
for p in "${pages[@]}"; do
  for loc in C C.UTF-8; do
    LC_ALL=$loc groff -ww -man -z "$SRC/$p" >"$OUT" 2>"$ERR" ||
      fail "groff -ww -man -z $p exited $? ($loc)"
    [[ ! -s $ERR && ! -s $OUT ]] || fail "groff -ww -man -z $p warns ($loc)"
    LC_ALL=$loc MANWIDTH=80 man -l "$SRC/$p" >"$OUT" 2>"$ERR" ||
      fail "man -l $p exited $? ($loc)"
    [[ ! -s $ERR ]] || fail "man -l $p warns ($loc)"
    grep -q '^NAME' "$OUT" || fail "man -l $p shows no NAME section ($loc)"
  done
done
ok "${#pages[@]} manual pages render without a warning (groff -ww, man -l)"
