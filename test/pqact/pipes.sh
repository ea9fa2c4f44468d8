#!/usr/bin/env bash
# pqact's PIPE, SPIPE and XPIPE on real products and real decoders: the
# bytes each decoder reads (data, -metadata, -nodata, -strip, SPIPE's
# record, XPIPE's XDR, built here from LDM's rules, not from pqact), one
# decoder per command line, -close, a decoder that does not exist.  The
# decoders are small scripts that record their pid and what they read.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 2M -S 100 -q "$Q"
tab=$'\t'

decoder_script "$SCRATCH/dec.sh"
D=$SCRATCH/dec.sh

printf 'one\r\n\001x\n' >p1
printf 'two\n' >p2
head -c 5000 /dev/urandom >p3
T=$(utc '2024-03-01 12:00:00')
put IDS 11 "$T" 5 up.example 'AAA one' p1
put IDS 12 "$T" 6 up.example 'AAA two' p2
put NGRID 13 "$T" 7 grid.example 'BBB three' p3

cat >"$CONF" <<CONF
IDS|NGRID${tab}^(AAA|BBB)${tab}PIPE${tab}$D $SCRATCH/plain
IDS${tab}^AAA${tab}PIPE${tab}-metadata -strip${tab}$D $SCRATCH/meta
IDS${tab}^AAA (.*)${tab}PIPE${tab}-nodata $D $SCRATCH/nodata
IDS${tab}^AAA (.*)${tab}PIPE${tab}-close $D $SCRATCH/close
IDS${tab}^AAA${tab}PIPE${tab}-transient -fl${tab}$D $SCRATCH/tf
IDS${tab}^AAA (.*)${tab}PIPE${tab}$D $SCRATCH/per.\\1
IDS|NGRID${tab}^(AAA|BBB)${tab}SPIPE${tab}$D $SCRATCH/spipe
IDS|NGRID${tab}^(AAA|BBB)${tab}XPIPE${tab}$D $SCRATCH/xpipe
IDS${tab}^AAA one${tab}PIPE${tab}no-such-decoder-here
IDS${tab}^AAA (.*)${tab}FILE${tab}-close${tab}filed/\\1
CONF

expect_rc 1 "$PQACT" -vl- -q /dev/null "$CONF" # 1 as LDM's, good or bad
expect_in "$ERR" "Successfully read configuration-file"
pqact_run -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact exited $rc: $(head -c 2000 "$ERR")"
sanitizer_check "$ERR"

# pqact does not wait for its decoders: wait for what they read.
# has_size FILE N: FILE holds N bytes.
has_size() {
  [[ -f $1 ]] && (($(wc -c <"$1") == $2))
}
# pipe_out NAME EXPECTED: NAME.out ends up as EXPECTED's bytes.
pipe_out() {
  wait_until 10 has_size "$SCRATCH/$1.out" "$(wc -c <"$2")" ||
    fail "decoder $1 read $(wc -c <"$SCRATCH/$1.out" 2>/dev/null || echo no) bytes, expected $(wc -c <"$2")"
  cmp -s "$SCRATCH/$1.out" "$2" || fail "decoder $1 read other bytes:
$(od -c "$SCRATCH/$1.out" | head -8)
--- expected:
$(od -c "$2" | head -8)"
}

cat p1 p2 p3 >want.plain
pipe_out plain want.plain
(($(wc -l <plain.pids) == 1)) || fail "one command line, $(wc -l <plain.pids) decoders"
ok "PIPE: every product's data to one decoder per command line, in order"

strip() { tr -d '\000-\011\013-\037\177' <"$1"; }
if little_endian; then
  {
    strip p1 >p1.s
    meta 'AAA one' up.example 8 11 "$T" 5 "$(wc -c <p1.s)" "$(sig_of 'AAA one' p1)"
    cat p1.s
    meta 'AAA two' up.example 8 12 "$T" 6 "$(wc -c <p2)" "$(sig_of 'AAA two' p2)"
    cat p2
  } >want.meta
  pipe_out meta want.meta
  {
    meta 'AAA one' up.example 8 11 "$T" 5 0 "$(sig_of 'AAA one' p1)"
    meta 'AAA two' up.example 8 12 "$T" 6 0 "$(sig_of 'AAA two' p2)"
  } >want.nodata
  pipe_out nodata want.nodata
  ok "PIPE -metadata -strip and -nodata: LDM's header, then the stripped data or none"

  # SPIPE: native unsigned longs (8 bytes here): sync, key length, key,
  # data length + 2, data, ETX, RS.
  spipe() {
    le64 $((0x1DFCCF1A))
    le64 ${#1}
    printf '%s' "$1"
    le64 $(($(wc -c <"$2") + 2))
    cat "$2"
    printf '\003\036'
  }
  { spipe 'AAA one' p1; spipe 'AAA two' p2; spipe 'BBB three' p3; } >want.spipe
  pipe_out spipe want.spipe
  ok "SPIPE: LDM's framed record"
else
  skip_part "the -metadata and SPIPE bytes are written for a little-endian host"
fi

# XPIPE: the product in XDR: creation time (two 32-bit words), signature,
# origin, feedtype, seqno, ident, size, then the data, padded to 4.
be32() {
  bytes "$(printf '%08x' "$1")"
}
xstr() {
  be32 ${#1}
  printf '%s' "$1"
  head -c $(((4 - ${#1} % 4) % 4)) /dev/zero
}
xprod() { # IDENT ORIGIN FEEDTYPE SEQNO USEC FILE
  local n
  n=$(wc -c <"$6")
  be32 "$T"
  be32 "$5"
  bytes "$(sig_of "$1" "$6")"
  xstr "$2"
  be32 "$3"
  be32 "$4"
  xstr "$1"
  be32 "$n"
  cat "$6"
  head -c $(((4 - n % 4) % 4)) /dev/zero
}
{
  xprod 'AAA one' up.example 8 11 5 p1
  xprod 'AAA two' up.example 8 12 6 p2
  xprod 'BBB three' grid.example $((1 << 23)) 13 7 p3
} >want.xpipe
pipe_out xpipe want.xpipe
ok "XPIPE: the product as XDR"

# two decoders at once, appending to one file: either order
cat p1 p2 >want.close
wait_until 10 has_size "$SCRATCH/close.out" "$(wc -c <want.close)" ||
  fail "the -close decoders read $(wc -c <"$SCRATCH/close.out") bytes"
cmp -s "$SCRATCH/close.out" want.close || { cat p2 p1 | cmp -s "$SCRATCH/close.out" -; } ||
  fail "the -close decoders read other bytes"
(($(sort -u close.pids | wc -l) == 2)) || fail "-close: $(sort -u close.pids | wc -l) decoders for 2 products"
cat p1 p2 >want.tf
pipe_out tf want.tf
ok "PIPE -transient and -fl (-flush) are taken: the data as it is"
pipe_out per.one p1
pipe_out per.two p2
ok "PIPE -close: a decoder per product; substituted command lines: a decoder each"

wait_until 10 grep -qF "no-such-decoder-here" "$ERR" ||
  fail "a decoder that cannot be run was not logged"
same "$DATA/filed/one" p1
same "$DATA/filed/two" p2
ok "a decoder that cannot be run is logged and the other actions are done"

# PIPE -close under the cap of children (/pqact/max-children 2): with 30
# products whose decoders block until the test releases them, never more
# than 2 run at once; once released, each product reached its own decoder.
pqact_registry "<max-children>2</max-children>"
block_script "$SCRATCH/block.sh"
mkdir "$SCRATCH/cap"
for i in $(seq 1 30); do
  printf 'product %s\n' "$i" >"c.$i"
  put EXP 0 "$T" 0 here "cap $i" "c.$i"
done
printf 'EXP\t^cap ([0-9]+)\tPIPE\t-close %s %s \\1 read\n' "$SCRATCH/block.sh" "$SCRATCH/cap" >"$CONF"
rm -f "$CONF.state"
background "$PQACT" -l "$SCRATCH/cap.log" -d "$DATA" -o "$ALL" -i 0 "$CONF"
pid=$BG
running() {
  local f n=0
  for f in "$SCRATCH"/cap/running.*; do
    [[ -e $f ]] && n=$((n + 1))
  done
  ((n == $1))
}
wait_until 10 running 2 || fail "2 decoders did not start"
wait_until 10 asleep_in "$pid" 'poll|futex' || fail "pqact is not waiting"
running 2 || fail "more than 2 decoders run, cap 2"
(($(find "$SCRATCH/cap" -name 'in.*' | wc -l) == 2)) ||
  fail "$(find "$SCRATCH/cap" -name 'in.*' | wc -l) decoders started, cap 2"
: >"$SCRATCH/cap/release"
finished() { [[ -f $SCRATCH/cap/finished ]] && (($(wc -l <"$SCRATCH/cap/finished") == 30)); }
wait_until 60 finished || fail "$(wc -l <"$SCRATCH/cap/finished") of 30 decoders ended"
wait_until 10 gone "$pid" || fail "pqact -i 0 did not exit"
wait "$pid" || fail "pqact exited $?"
[[ ! -e $SCRATCH/cap/overcap ]] || fail "more than 2 ran at once: $(head -3 "$SCRATCH/cap/overcap")"
for i in $(seq 1 30); do
  cmp -s "$SCRATCH/cap/in.$i" "c.$i" || fail "decoder $i read other bytes"
done
ok "PIPE -close under a cap of 2: at most 2 decoders at once, each of 30 products to its own"
