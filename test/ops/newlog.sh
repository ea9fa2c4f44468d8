#!/usr/bin/env bash
# newlog (pqutils/ops/newlog.1): LDM's rotation, the example of LDM's
# documentation (count 2: .1 and .2 shifted, .2 replaced, .3 untouched, an
# empty file in place), the default count 7, a missing file created, an
# empty one left, the .gz copies shifted alongside, refusals.  Run from the
# source tree under sh, as installed.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
NEWLOG=$OPS/newlog.sh
f=$SCRATCH/logs/ldmd.log

echo today >"$f"
echo day1 >"$f.1"
echo day2 >"$f.2"
echo day3 >"$f.3"
expect_rc 0 sh "$NEWLOG" "$f" 2
[[ -e $f && ! -s $f ]] || fail "no empty $f after the rotation"
[[ $(cat "$f.1") == today && $(cat "$f.2") == day1 && $(cat "$f.3") == day3 ]] ||
  fail "count 2: .1 $(cat "$f.1"), .2 $(cat "$f.2"), .3 $(cat "$f.3")"
[[ ! -s $OUT && ! -s $ERR ]] || fail "newlog said something on success"
ok "LDM's example: .1 and .2 shifted, .2 replaced, .3 untouched"

rm -f "$f"*
echo 0 >"$f"
for k in 1 2 3 4 5 6 7 8; do echo "$k" >"$f.$k"; done
expect_rc 0 sh "$NEWLOG" "$f"
for k in 1 2 3 4 5 6 7; do
  [[ $(cat "$f.$k") == $((k - 1)) ]] || fail "default count: $f.$k holds $(cat "$f.$k")"
done
[[ $(cat "$f.8") == 8 ]] || fail "default count 7: .8 touched"
ok "the default count, 7"

rm -f "$f"*
expect_rc 0 sh "$NEWLOG" "$f" 3
[[ -e $f && ! -s $f && ! -e $f.1 ]] || fail "a missing file: not created empty, or rotated"
expect_rc 0 sh "$NEWLOG" "$f" 3
[[ ! -e $f.1 ]] || fail "an empty file was rotated"
ok "a missing file created, an empty one left"

rm -f "$f"*
echo now >"$f"
echo one >"$f.1"
echo two | gzip -n >"$f.2.gz"
echo three | gzip -n >"$f.3.gz"
expect_rc 0 sh "$NEWLOG" "$f" 3
[[ $(cat "$f.1") == now && $(cat "$f.2") == one && $(gzip -dc "$f.3.gz") == two ]] ||
  fail "the .gz copies not shifted alongside: $(ls "$SCRATCH/logs")"
[[ ! -e $f.4.gz ]] || fail ".4.gz made with count 3"
ok "compressed copies shifted alongside, the last one replaced"

expect_rc 1 sh "$NEWLOG"
expect_rc 1 sh "$NEWLOG" "$f" 0
expect_in "$ERR" "from 1 to 999"
expect_rc 1 sh "$NEWLOG" "$f" x
expect_rc 1 sh "$NEWLOG" "$SCRATCH/no/dir/x.log"
expect_in "$ERR" "no directory"
mkdir -p "$SCRATCH/adir"
expect_rc 1 sh "$NEWLOG" "$SCRATCH/adir"
expect_in "$ERR" "not a regular file"
if ((EUID != 0)); then
  mkdir -p ro && echo x >ro/l.log && chmod 555 ro
  expect_rc 1 sh "$NEWLOG" ro/l.log
  expect_in "$ERR" "cannot rename"
  chmod 755 ro
else
  # root may rename anything: an immutable file system is out of reach;
  # a rename onto a directory fails for root too.
  echo x >"$SCRATCH/logs/r.log"
  mkdir "$SCRATCH/logs/r.log.1"
  touch "$SCRATCH/logs/r.log.1/keep"
  expect_rc 1 sh "$NEWLOG" "$SCRATCH/logs/r.log" 1
  expect_in "$ERR" "cannot"
fi
ok "refusals and a failed rename"
