#!/usr/bin/env bash
# pqact FILE and STDIOFILE on real products: a pqact.conf using
# sub-matches, (DD:code) over a year end, (seq), strftime (also from a '%'
# in an identifier), word splitting and double quotes, -removewmo
# (SBN header and trailer, WMO heading, AWIPS line), -strip, -overwrite
# spelled -overwrit, -close spelled -cl, -metadata (with the _BEGIN_
# pseudo-product first), -log; files appended to across runs.  Every
# expected file is built here from LDM's rules, not taken from pqact.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 1M -S 100 -q "$Q"

# The products: data files, then insertion with chosen metadata.
printf '\001\r\r\n123 \r\r\nSAUS43 KXYZ 011200\r\r\nMETAR KXYZ 011200Z\tAUTO\r\r\n=\r\r\n\003' >p1
printf 'FXUS61 KBOX 311800 RRA\r\r\nAFDBOX\r\r\nbody\r\nline2\n' >p2
head -c 3000 /dev/urandom >p3
printf 'pct\n' >p4
printf 'short\n' >p5
T1=$(utc '2023-12-31 23:10:00')
T2=$(utc '2024-01-01 00:30:00')
T5=$(utc '2024-01-01 01:00:00')
put IDS 5 "$T1" 250000 up.example 'SAUS43 KXYZ 011200' p1
put IDS 77 "$T2" 0 up.example 'FXUS61 KBOX 311800 RRA' p2
put NGRID 9 "$T2" 999999 grid.example '500 hPa PRES' p3
put EXP 0 "$T1" 1 here 'KMKX%Y%j' p4
put IDS 6 "$T5" 0 up.example 'SAUS44 KABC 011300' p5

tab=$'\t'
cat >"$CONF" <<CONF
# every product as it comes, with LDM's metadata header
ANY${tab}.*${tab}FILE${tab}-metadata${tab}all.meta

# per product, by WMO heading; the day of the heading decides the date
IDS${tab}^(SAUS..) (K...) (..)(..)(..)
${tab}FILE${tab}-removewmo${tab}-close
#   a comment between continuation lines
    ${tab}wmo/\\1/(\\3:yyyy)(\\3:mm)\\3/\\2_(seq).txt
IDS${tab}^(....)(..) (K...) (..)(..)(..)${tab}STDIOFILE${tab}-st -log -removewmo${tab}strip/\\3.txt
IDS${tab}^SAUS${tab}FILE${tab}-overwrit -cl${tab}over/latest
ANY${tab}^KMKX.*${tab}FILE${tab}-close${tab}pct/&
NGRID${tab}^(.*)\$${tab}FILE${tab}-close grid/\\1
IDS${tab}^(SAUS)${tab}FILE${tab}-log -close "quoted dir/\\1 x"
IDS${tab}^(FXUS)${tab}STDIOFILE${tab}-log${tab}stdio/\\1
IDS${tab}^(SAUS4.)${tab}FILE${tab}-metadata -st -overwrite -close${tab}metastrip/\\1
IDS|NGRID${tab}^(FX|500)${tab}file${tab}-close${tab}%Y/%m/%d/%H%M%S_\\1
CONF

expect_rc 1 "$PQACT" -vl- -q /dev/null "$CONF" # 1 as LDM's, good or bad
expect_in "$ERR" "Successfully read configuration-file"
pqact_run -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact exited $rc"
expect_not_in "$ERR" "ERROR"
cd "$DATA" || fail "cd $DATA"

# -metadata: _BEGIN_ (no data, creation time 0, ANY, seqno 0, no
# signature), then each product, in insertion order.
if little_endian; then
  {
    meta _BEGIN_ localhost $((0xffffffff)) 0 0 0 0 00000000000000000000000000000000
    meta 'SAUS43 KXYZ 011200' up.example 8 5 "$T1" 250000 "$(wc -c <../p1)" \
      "$(sig_of 'SAUS43 KXYZ 011200' ../p1)"
    cat ../p1
    meta 'FXUS61 KBOX 311800 RRA' up.example 8 77 "$T2" 0 "$(wc -c <../p2)" \
      "$(sig_of 'FXUS61 KBOX 311800 RRA' ../p2)"
    cat ../p2
    meta '500 hPa PRES' grid.example $((0x00800000)) 9 "$T2" 999999 3000 \
      "$(sig_of '500 hPa PRES' ../p3)"
    cat ../p3
    meta 'KMKX%Y%j' here $((0x40000000)) 0 "$T1" 1 4 "$(sig_of 'KMKX%Y%j' ../p4)"
    cat ../p4
    meta 'SAUS44 KABC 011300' up.example 8 6 "$T5" 0 6 \
      "$(sig_of 'SAUS44 KABC 011300' ../p5)"
    cat ../p5
  } >../want.meta
  same all.meta ../want.meta
  # with -strip the header gives the size written; -overwrite keeps
  # header and data of the product
  tr -d '\000-\011\013-\037\177' <../p1 >../p1.strip
  {
    meta 'SAUS43 KXYZ 011200' up.example 8 5 "$T1" 250000 "$(wc -c <../p1.strip)" \
      "$(sig_of 'SAUS43 KXYZ 011200' ../p1)"
    cat ../p1.strip
  } >../want.meta
  same metastrip/SAUS43 ../want.meta
  ok "-metadata: LDM's header before each product, _BEGIN_ first; with -strip -overwrite"
else
  skip_part "-metadata bytes: built for little-endian hosts only"
fi

# -removewmo -close, per product; day 01 of a heading made on Dec 31 is
# next year's January 1.
printf 'METAR KXYZ 011200Z\tAUTO\r\r\n=' >../want
same wmo/SAUS43/20240101/KXYZ_5.txt ../want
same wmo/SAUS44/20240101/KABC_6.txt ../p5 # under 21 bytes: as it is
ok "-removewmo: SBN header, trailer and WMO heading gone; (DD:code) at the year end; (seq)"

# STDIOFILE -st -removewmo: control characters but \n gone, after the
# heading (and the AWIPS line) went.
printf 'METAR KXYZ 011200ZAUTO\n=' >../want
same strip/KXYZ.txt ../want
printf 'body\nline2\n' >../want
same strip/KBOX.txt ../want
same strip/KABC.txt ../p5
ok "STDIOFILE -st -removewmo"

# -overwrit -cl: the last SAUS product only.
same over/latest ../p5
# & is the whole match; a '%' from the identifier goes through strftime.
same pct/KMKX2023365 ../p4
# "grid/500 hPa PRES" is three words: FILE writes to the last, "PRES".
# The only file in grid/ is the empty one of the _BEGIN_ pseudo-product,
# whose feedtype ANY meets NGRID.
same PRES ../p3
: >../empty
same grid/_BEGIN_ ../empty
[[ $(find grid -type f | wc -l) == 1 ]] || fail "grid/ holds more than _BEGIN_"
# Double quotes group words, and are removed.
cat ../p1 ../p5 >../want
same "quoted dir/SAUS x" ../want
# -log's lines in LDM's exact words and case, at NOTE level: sites'
# scripts grep for "Filed in" and "StdioFiled in".
grep -qE '  NOTE  Filed in "quoted dir/SAUS x": .*SAUS44 KABC 011300' "$ERR" ||
  fail "no LDM 'Filed in' line: $(grep -F 'quoted dir' "$ERR" | head -2)"
grep -qE '  NOTE  StdioFiled in "strip/KXYZ.txt": ' "$ERR" ||
  fail "no LDM 'StdioFiled in' line: $(grep -F 'strip/KXYZ' "$ERR" | head -2)"
# strftime on the creation time, in UTC; directories made as needed.
same 2024/01/01/003000_FX ../p2
same 2024/01/01/003000_500 ../p3
ok "-overwrite, &, strftime, word splitting, quotes, -log (Filed, StdioFiled)"

# A second run appends to what is not overwritten.
cp all.meta ../meta1
cd "$SCRATCH" || fail "cd"
pqact_run -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "second pqact run exited $rc"
cd "$DATA" || fail "cd"
cat ../meta1 ../meta1 >../want
same all.meta ../want
same over/latest ../p5
cat ../p3 ../p3 >../want
same PRES ../want
cat ../p4 ../p4 >../want
same pct/KMKX2023365 ../want
ok "a second run appends, and -overwrite replaces"
