#!/usr/bin/env bash
# sbn_tools.sh - the test tree's NOAAPORT tools as programs: sbngen
# replays a stream from its seed (-S or PQ_TEST_SEED), writes the manifest
# it promises, flags what a perturbation touched and refuses bad options;
# sbnsend sends a stream frame by frame to a multicast group only, leaves
# out the frames it is told to, and paces them at the rate given.
#
# Usage: sbn_tools.sh DIR, the directory of sbngen and sbnsend.

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "$0")/../lib/common.sh"

BIN=$(cd "${1:?directory of sbngen and sbnsend}" && pwd)
scratch_init sbn
FAIL_LOGS=(OUT:stdout ERR:stderr)
cd "$SCRATCH" || fail "no scratch directory"

# expect_error CMD...: a clean failure with a message, no crash.
expect_error() {
  run "$@"
  ((rc != 0 && rc < 128)) || fail "'$*' exited $rc, expected a failure"
  [[ -s $ERR ]] || fail "'$*' failed without a message on stderr"
}

# --- sbngen: the seed replays the stream ---
expect_rc 0 "$BIN/sbngen" -n 40 -S 77 -s 100:9000 -t 5 -o a.sbn
expect_in "$ERR" "seed 77"
expect_rc 0 "$BIN/sbngen" -n 40 -S 77 -s 100:9000 -t 5 -o b.sbn -m b.tsv
cmp -s a.sbn b.sbn || fail "the same seed gave two streams"
cmp -s a.sbn.tsv b.tsv || fail "the same seed gave two manifests"
PQ_TEST_SEED=77 expect_rc 0 "$BIN/sbngen" -n 40 -s 100:9000 -t 5 -o c.sbn
cmp -s a.sbn c.sbn || fail "PQ_TEST_SEED=77 is not -S 77"
expect_rc 0 "$BIN/sbngen" -n 40 -S 78 -s 100:9000 -t 5 -o d.sbn
! cmp -s a.sbn d.sbn || fail "two seeds gave the same stream"
ok "the seed replays the stream"

# --- the manifest: one line per product, six columns ---
head -1 a.sbn.tsv | grep -qx '# sbngen seed=77 products=40' ||
  fail "the manifest does not start with its seed"
[[ $(grep -vc '^#' a.sbn.tsv) == 40 ]] || fail "not 40 products in the manifest"
feeds=' IDS|DDPLUS HDS NEXRAD3 NIMAGE NGRID NOTHER '
awk -F'\t' -v feeds="$feeds" '!/^#/ && (NF != 6 || $1 !~ /^[0-9]+$/ ||
    index(feeds, " " $2 " ") == 0 || $3 !~ /^[0-9]+$/ ||
    length($4) != 32 || $4 !~ /^[0-9a-f]+$/) { bad = 1 } END { exit bad }' \
  a.sbn.tsv || fail "a manifest line is not seqno, feedtype, size, md5, ident, input"
[[ $(awk -F'\t' '!/^#/ { print $1 }' a.sbn.tsv | head -1) == 1 ]] ||
  fail "the first product is not seqno 1"
ok "the manifest"

# --- perturbations: every product dropped is flagged ---
expect_rc 0 "$BIN/sbngen" -n 10 -S 5 -p drop=1 -o e.sbn
[[ ! -s e.sbn ]] || fail "drop=1 left frames"
[[ $(grep -c '^#affected' e.sbn.tsv) == 10 ]] || fail "drop=1: not all flagged"
expect_rc 0 "$BIN/sbngen" -n 40 -S 77 -s 100:9000 -t 5 -o f.sbn \
  -p drop=0.1,dup=0.1,swap=0.1,window=3,flip=0.1,junk=0.1,junklen=50
grep -q '^#affected' f.sbn.tsv || fail "no product flagged"
! cmp -s a.sbn f.sbn || fail "the perturbations changed nothing"
expect_rc 0 "$BIN/sbngen" -n 40 -S 77 -s 100:9000 -t 5 -o g.sbn -p truncate=1000
[[ $(stat -c %s g.sbn) == 1000 ]] || fail "truncate=1000 is not 1000 bytes"
ok "perturbations"

# --- refusals ---
expect_error "$BIN/sbngen" -n 1 -k nonesuch=1 -o x.sbn
expect_error "$BIN/sbngen" -n 1 -k text=0 -o x.sbn
expect_error "$BIN/sbngen" -n 1 -p drop=2 -o x.sbn
expect_error "$BIN/sbngen" -n 1 -c 1 -o x.sbn
expect_error "$BIN/sbngen" -n 1
expect_error "$BIN/sbnsend" -g 10.1.2.3:1201 a.sbn
expect_in "$ERR" "not a multicast group, refused"
expect_error "$BIN/sbnsend" -g 224.0.1.1:0 a.sbn
expect_error "$BIN/sbnsend" -g 224.0.1.1:1201 nonesuch.sbn
ok "bad options refused"

# --- sbnsend: one datagram a frame, left out by pattern, paced ---
frames=$("$BIN/sbnsend" -g 224.0.1.1:1201 -i 127.0.0.1 -v a.sbn 2>&1 |
  grep -c '^sbnsend: datagram ')
if ((frames == 0)); then
  skip_part "sbnsend cannot send to 224.0.1.1 on the loopback here"
else
  # -d 3 leaves out indexes 2, 5, 8, ...; -D adds 0 and 1
  expect_rc 0 "$BIN/sbnsend" -g 224.0.1.1:1201 -i 127.0.0.1 -d 3 -D 0,1 a.sbn
  expect_in "$ERR" "$((frames - frames / 3 - 2)) datagrams sent"
  expect_in "$ERR" "$((frames / 3 + 2)) left out"
  bytes=$(stat -c %s a.sbn)
  start=$(date +%s%N)
  expect_rc 0 "$BIN/sbnsend" -g 224.0.1.1:1201 -i 127.0.0.1 -r 4 a.sbn
  elapsed=$((($(date +%s%N) - start) / 1000))
  # the last datagram leaves when the bits before it allow, no earlier:
  # at 4 Mbit/s, a quarter of a microsecond a bit (a frame is < 4100 B)
  min=$(((bytes - 4100) * 8 / 4))
  ((elapsed >= min)) || fail "4 Mbit/s: $bytes bytes in $elapsed us"
  ok "sbnsend: $frames datagrams, left out by pattern, paced"
fi
