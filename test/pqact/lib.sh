# shellcheck shell=bash
# lib.sh - sourced by pqact's shell tests.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the queue utilities, the path of pqact, the
# path of pqacthelper.
#
# Gives the test its own scratch directory (on /dev/shm when it can), a
# registry naming its queue ($Q), data directory ($DATA) and pqact.conf
# ($CONF), and the helpers that build the bytes LDM's pqact writes, so
# that the tests compare pqact's files with bytes made from LDM's rules
# (our pqutils/pqact/pqact.1), not with pqact's own output.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

BIN=$(cd "${1:?directory of the queue utilities}" && pwd)
PQACT=$(cd "$(dirname "${2:?path of pqact}")" && pwd)/$(basename "$2")
HELPER=$(cd "$(dirname "${3:?path of pqacthelper}")" && pwd)/$(basename "$3")
scratch_init pqact /dev/shm
Q=$SCRATCH/ldm.pq
DATA=$SCRATCH/data
CONF=$SCRATCH/pqact.conf
mkdir -p "$DATA"
# pqact_registry [XML]: the test's registry: its queue, data directory
# and pqact.conf, and XML (more elements inside <pqact>).
pqact_registry() {
  write_registry pqact-test-host "  <queue>
    <path>$Q</path>
    <size>2M</size>
  </queue>
  <pqact>
    <config-path>$CONF</config-path>
    <datadir-path>$DATA</datadir-path>${1:+
    $1}
  </pqact>"
}
pqact_registry "" # the tests add their own keys by calling it again
export PATH=$BIN:$PATH
FAIL_LOGS=(OUT:stdout ERR:stderr)
FAIL_BYTES=3000

# The offset that takes every product in the queue, whatever its creation
# time (pqact's -o is also a creation-time filter).
# shellcheck disable=SC2034 # used by the tests
ALL=2000000000

# utc 'YYYY-MM-DD hh:mm:ss': seconds since the epoch.
utc() {
  date -u -d "$1" +%s
}

# put FEEDTYPE SEQNO SEC USEC ORIGIN IDENT FILE: insert a product.
put() {
  run "$HELPER" insert "$Q" "$@"
  ((rc == 0)) || fail "pqacthelper insert $6 failed"
}

# sig_of IDENT FILE: the signature pqacthelper gives (MD5 of both), hex.
sig_of() {
  { printf '%s' "$1"; cat "$2"; } | md5sum | cut -c1-32
}

# bytes HEX: those bytes on stdout.
bytes() {
  # shellcheck disable=SC2059 # the format is the point
  printf "$(printf '%s' "$1" | sed 's/../\\x&/g')"
}

# le32 N, le64 N: N in 4 or 8 bytes, least significant first (the host's
# order on the little-endian machines the metadata test runs on).
le32() {
  bytes "$(printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
    $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
le64() {
  le32 $(($1 & 0xffffffff))
  le32 $(($1 >> 32 & 0xffffffff))
}

# meta IDENT ORIGIN FEEDTYPE SEQNO SEC USEC SIZE SIGHEX: the header FILE
# -metadata writes before SIZE bytes of data, as LDM lays it out: the
# header's length (4+16+4+8+4+4+4 + 4+ident + 4+origin), signature, data
# size, creation time (64-bit seconds, 32-bit microseconds), feedtype,
# seqno, then ident and origin each after its 32-bit length.
meta() {
  le32 $((52 + ${#1} + ${#2}))
  bytes "$8"
  le32 "$7"
  le64 "$5"
  le32 "$6"
  le32 "$3"
  le32 "$4"
  le32 ${#1}
  printf '%s' "$1"
  le32 ${#2}
  printf '%s' "$2"
}

# little_endian: is this host little-endian?
little_endian() {
  [[ $(printf '\001\000' | od -An -tu2 | tr -d ' ') == 1 ]]
}

# same FILE EXPECTED_FILE: byte for byte, or fail showing both.
same() {
  [[ -f $1 ]] || fail "pqact did not make $1 (made: $(cd "$DATA" && find . -type f | sort | tr '\n' ' '))"
  cmp -s "$1" "$2" || fail "$1 differs from what LDM writes:
$(od -c "$1" | head -20)
--- expected:
$(od -c "$2" | head -20)"
}

# pqact_run ARGS...: run pqact with the test's conf and data directory,
# the queue from the registry, logging to stderr.
pqact_run() {
  run "$PQACT" -l- -d "$DATA" "$@"
}

# block_script FILE: write FILE, a child for the tests of the cap on
# children, and make it executable.  FILE DIR NAME [read]: with "read",
# first copy standard input to DIR/in.NAME; then record NAME in
# DIR/started, make DIR/running.NAME while it runs, note in DIR/overcap if
# more than 2 run at once, wait (at most 60 s) for DIR/release, and record
# NAME in DIR/finished.
block_script() {
  cat >"$1" <<'SH'
#!/bin/sh
cd "$1" || exit 1
[ "${3:-}" = read ] && cat >"in.$2"
: >"running.$2"
n=0
for f in running.*; do [ -e "$f" ] && n=$((n + 1)); done
echo "$2" >>started
[ $n -le 2 ] || echo "$2 ran with $n" >>overcap
i=0
while [ ! -e release ] && [ $i -lt 1200 ]; do
  sleep 0.05
  i=$((i + 1))
done
rm -f "running.$2"
echo "$2" >>finished
SH
  chmod +x "$1"
}

# decoder_script FILE: write FILE, a decoder for the tests, and make it
# executable.  FILE NAME records its pid in NAME.pids and appends what it
# reads to NAME.out.
decoder_script() {
  cat >"$1" <<'SH'
#!/bin/sh
echo $$ >>"$1.pids"
exec cat >>"$1.out"
SH
  chmod +x "$1"
}
