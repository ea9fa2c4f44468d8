#!/usr/bin/env bash
# LDM pqact's quirks (reference list in test/pqact/README.md) that the other
# tests do not show on real products: the _BEGIN_ pseudo-product at the
# head of a catch-all (its 1970 creation time through strftime, _ELSE_
# never for it); a '%' from an identifier through strftime, then word
# splitting on what it made; single quotes that group nothing; & and \&
# (also inside double quotes, "a && b"); an open output keeping the
# options of the entry that opened it, both ways; FILE -strip over all 256
# byte values; -removewmo cutting the last 4 bytes after an SBN header with
# no trailer, and finding a heading past 100 bytes; -metadata's 12-byte
# creation time; (seq) at its largest; (DD:jjj) said and dropped.  Then the
# options no other test shows: -flush (in the system calls, with strace),
# -edex without pqact -e, STDIOFILE without -metadata, -log, the modes of
# what is made under a umask.  Every expected name and byte is built here
# from LDM's rules, never taken from pqact's output.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
export LC_ALL=C

expect_rc 0 pqcreate -s 1M -S 100 -q "$Q"
T=$(utc '2023-12-31 23:10:00')
TD=$(utc '2024-03-20 12:00:00')
LATE=$((0x7fffffff)) # the last second a class selects (PQ_TS_ENDT)

printf 'n0r\n' >p_else
printf 'spare\n' >p_spare
printf '%%x\n' >p_pct1
printf 'pct2\n' >p_pct2
printf 'sq\n' >p_sq
printf 'amp\n' >p_amp
printf 'a\r\tb\n' >p_keep1
printf 'c\r\n' >p_keep2
printf 'd\r\t\001\n' >p_keps
bytes "$(for ((b = 0; b < 256; b++)); do printf '%02x' "$b"; done)" >p_strip
(($(wc -c <p_strip) == 256)) || fail "p_strip is not the 256 byte values"
printf '\001\r\r\n123 \r\r\nSAUS43 KXYZ 011200\r\r\nbody text here' >p_sbn
{
  for ((i = 0; i < 15; i++)); do printf '0123456789'; done
  printf 'FXUS61 KBOX 311800\r\r\nAFDBOX\r\r\nbody\n'
} >p_far
head -c 100 /dev/urandom >p_meta
printf 'seq\n' >p_seq
printf 'date\n' >p_date

put NEXRAD3 1 "$T" 0 here N0R p_else
put SPARE 2 "$T" 0 here SPARE1 p_spare
put EXP 3 "$T" 0 here 'KMKX%20x' p_pct1
put EXP 4 "$T" 0 here 'PCT%%_%Y' p_pct2
put EXP 5 "$T" 0 here SQ1 p_sq
put EXP 6 "$T" 0 here AMP_x p_amp
put EXP 7 "$T" 0 here KEEP1 p_keep1
put EXP 8 "$T" 0 here KEEP2 p_keep2
put EXP 9 "$T" 0 here KEPS1 p_keps
put EXP 10 "$T" 0 here STRIP1 p_strip
put EXP 11 "$T" 0 here SBN1 p_sbn
put EXP 12 "$T" 0 here FAR1 p_far
put EXP 13 "$LATE" 999999 far.example META1 p_meta
put EXP 4294967295 "$T" 0 here SEQ1 p_seq
put EXP 14 "$TD" 0 here DATE15 p_date

tab=$'\t'
cat >"$CONF" <<CONF
NEXRAD3${tab}^_ELSE_\$${tab}FILE${tab}-close${tab}else/&
SPARE${tab}^(.*)\$${tab}FILE${tab}-close${tab}begin/%Y%m%d_%H%M/\\1
SPARE${tab}.*${tab}FILE${tab}-metadata${tab}catchall.meta
EXP${tab}^(KMKX|PCT).*${tab}FILE${tab}-close${tab}pct/&
EXP${tab}^SQ.*${tab}FILE${tab}-close${tab}'sq dir'/&
EXP${tab}^AMP_(.*)${tab}FILE${tab}-close${tab}"amp/\\&\\1 && &"
EXP${tab}^KEEP${tab}FILE${tab}keep
EXP${tab}^KEEP${tab}FILE${tab}-strip -close${tab}keep
EXP${tab}^KEPS${tab}FILE${tab}-strip${tab}keps
EXP${tab}^KEPS${tab}FILE${tab}keps
EXP${tab}^STRIP.*${tab}FILE${tab}-strip -close${tab}strip/&
EXP${tab}^(SBN|FAR).*${tab}FILE${tab}-removewmo -close${tab}wmo/&
EXP${tab}^META.*${tab}FILE${tab}-metadata -close${tab}meta/&
EXP${tab}^SEQ${tab}FILE${tab}-close${tab}seq/(seq)
EXP${tab}^DATE(..)${tab}FILE${tab}-close${tab}date/a(\\1:jjj)b(\\1:yyyy)
CONF

pqact_run -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact exited $rc"
cd "$DATA" || fail "cd $DATA"
: >../empty

# _BEGIN_ (feedtype ANY; SPARE is 16 in LDM's protocol/ldm.x): every entry whose pattern matches it fires,
# with its creation time, the epoch; the catch-all's -metadata output
# starts with it; ^_ELSE_$ never fires for an identifier beginning with _
same begin/19700101_0000/_BEGIN_ ../empty
same "begin/$(date -u -d "@$T" +%Y%m%d_%H%M)/SPARE1" ../p_spare
if little_endian; then
  {
    meta _BEGIN_ localhost $((0xffffffff)) 0 0 0 0 00000000000000000000000000000000
    meta SPARE1 here 16 2 "$T" 0 "$(wc -c <../p_spare)" \
      "$(sig_of SPARE1 ../p_spare)"
    cat ../p_spare
  } >../want
  same catchall.meta ../want
else
  skip_part "-metadata bytes: built for little-endian hosts only"
fi
same else/N0R ../p_else
[[ ! -e else/_BEGIN_ ]] || fail "^_ELSE_\$ fired for _BEGIN_"
ok "_BEGIN_ at the head of a catch-all, at the epoch; no _ELSE_ for it"

# strftime after the sub-matches: the C library's strftime on the creation
# time in UTC, then blanks split words and the last one is the path (%20x
# pads with blanks here); %% is one %
read -r -a words <<<"pct/KMKX$(date -u -d "@$T" '+%20x')"
((${#words[@]} > 1)) || fail "%20x made no blanks here: $(date -u -d "@$T" '+%20x')"
same "${words[-1]}" ../p_pct1
[[ ! -e pct/KMKX ]] || fail "a word before the last was a path"
same "pct/PCT%_$(date -u -d "@$T" +%Y)" ../p_pct2
ok "a '%' from the identifier goes through strftime, then the words split"

# single quotes are ordinary characters: two words, the last is the path
same "dir'/SQ1" ../p_sq
[[ ! -e "'sq dir'" && ! -e "'sq" ]] || fail "single quotes grouped words"
# & is the whole match, \& a literal &; double quotes keep one word
same "amp/&x AMP_xAMP_x AMP_x" ../p_amp
ok "single quotes group nothing; & and \\&, inside double quotes too"

# the output opened by an entry keeps that entry's options: the -strip
# -close of the second entry is ignored, and the first's -strip is kept
cat ../p_keep1 ../p_keep1 ../p_keep2 ../p_keep2 >../want
same keep ../want
tr -d '\000-\011\013-\037\177' <../p_keps >../want1
cat ../want1 ../want1 >../want
same keps ../want
ok "an open output keeps the options of the entry that opened it"

# -strip: every control character but \n goes, \r and \t too; bytes above
# 127 stay
tr -d '\000-\011\013-\037\177' <../p_strip >../want
(($(wc -c <../want) == 256 - 32 - 1 + 1)) || fail "the expected strip is wrong"
same strip/STRIP1 ../want
ok "-strip over all 256 byte values"

# -removewmo: after an SBN header, the last 4 bytes go whether or not they
# are a trailer; a heading is found past the first 100 bytes, and what
# precedes it goes with it
body='body text here'
printf '%s' "${body:0:${#body}-4}" >../want
same wmo/SBN1 ../want
printf 'body\n' >../want
same wmo/FAR1 ../want
ok "-removewmo: 4 bytes cut after an SBN header; a heading past 100 bytes"

# -metadata: creation seconds in 64 bits at byte 24, then microseconds in
# 32 at byte 32 (& is the whole match: the identifier, with .*)
if little_endian; then
  {
    meta META1 far.example $((0x40000000)) 13 "$LATE" 999999 100 "$(sig_of META1 ../p_meta)"
    cat ../p_meta
  } >../want
  same meta/META1 ../want
  [[ $(od -An -tu8 -j24 -N8 meta/META1 | tr -d ' ') == "$LATE" &&
    $(od -An -tu4 -j32 -N4 meta/META1 | tr -d ' ') == 999999 ]] ||
    fail "the creation time is not 8 + 4 bytes at byte 24"
  ok "-metadata: a 12-byte creation time"
fi

# (seq) is the sequence number, unsigned
same seq/4294967295 ../p_seq
# (DD:jjj) is no code: said with the entry's line, and dropped; (15:yyyy)
# on 2024-03-20 is March 15's year
same date/ab2024 ../p_date
expect_in "$ERR" "entry at line 15: unknown date indicator: jjj"
ok "(seq) up to 4294967295; (DD:jjj) said and dropped"

# ---- options the other tests do not show ----
# -flush: FILE fsyncs after each product, STDIOFILE writes each product
# out at once (seen in the system calls); without it, no fsync, and stdio
# writes at the end of the queue.  -edex without pqact -e: said, the file
# still written.  STDIOFILE takes no -metadata; -log for both.  Files are
# made 0666 and directories 0777, less the umask.
cd "$SCRATCH" || fail "cd"
printf 'fl1\n' >p_fl1
printf 'fl2\n' >p_fl2
put EXP 20 "$T" 0 here FL1 p_fl1
put EXP 21 "$T" 0 here FL2 p_fl2
cat >opts.conf <<CONF
EXP${tab}^FL${tab}FILE${tab}-flush${tab}flush/fsynced
EXP${tab}^FL${tab}FILE${tab}flush/plain
EXP${tab}^FL${tab}STDIOFILE${tab}-flush${tab}flush/stdio
EXP${tab}^FL${tab}STDIOFILE${tab}-metadata -log${tab}flush/buffered
EXP${tab}^FL${tab}FILE${tab}-edex -log -close${tab}flush/edex
CONF
if command -v strace >/dev/null; then
  # (LeakSanitizer cannot run under ptrace: the other runs check leaks)
  run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    bash -c 'umask 027 && exec "$@"' umask strace -f -y -o "$SCRATCH/trace" \
    -e trace=write,fsync,fdatasync "$PQACT" -l- -d "$DATA" -p '^FL' -o "$ALL" -i 0 opts.conf
  ((rc == 0)) || fail "pqact under strace exited $rc"
  cd "$DATA" || fail "cd"
  cat ../p_fl1 ../p_fl2 >../want
  for f in fsynced plain stdio buffered edex; do
    same "flush/$f" ../want
  done
  # calls on a descriptor, by the path strace shows for it
  calls() {
    grep -cE "^[0-9]+ +$1\\([0-9]+<$DATA/flush/$2>" "$SCRATCH/trace"
  }
  [[ $(calls fsync fsynced) == 2 && $(calls fsync plain) == 0 ]] ||
    fail "FILE -flush: $(calls fsync fsynced) fsyncs, without: $(calls fsync plain); 2 and 0 expected"
  [[ $(calls write stdio) == 2 && $(calls write buffered) == 1 ]] ||
    fail "STDIOFILE -flush: $(calls write stdio) writes, without: $(calls write buffered); 2 and 1 expected"
  expect_in "$ERR" 'Notification specified but shared memory is not available. ("flush/edex")'
  expect_in "$ERR" 'Filed in "flush/edex": '
  expect_in "$ERR" 'StdioFiled in "flush/buffered": '
  [[ $(stat -c %a flush flush/fsynced flush/stdio | tr '\n' ' ') == '750 640 640 ' ]] ||
    fail "modes under umask 027: $(stat -c '%n %a' flush flush/fsynced flush/stdio | tr '\n' ' ')"
  ok "-flush (fsync; stdio at once), -edex said, STDIOFILE without -metadata, -log, modes less the umask"
else
  skip_part "-flush: strace is not installed (scripts/dev.sh installs it)"
fi
