#!/usr/bin/env bash
# gribinsert.sh - gribinsert on Debian's sample GRIB files (ecCodes'
# samples, package libeccodes-data): every message of a file with junk
# between them becomes a product holding exactly its bytes, named
# "<file> !<GRIB name>! <seqno>", and the GRIB name of each is the one
# noaaportIngester gives the same bytes sent as NOAAPORT products
# (test tool gribwrap); the .status product; duplicates on a second run;
# damaged messages (no 7777, an unknown edition, truncated) reported while
# the others go in; a missing file, bad usage and an unopenable queue.
#
# Usage: gribinsert.sh DIR TOOLS, the programs' and the test tools'
# (gribwrap) directories.
source "$(dirname "$0")/lib.sh" "$@"
SAMPLES=/usr/share/eccodes/samples
[[ -r $SAMPLES/GRIB2.tmpl ]] ||
  skip_test "no ecCodes samples in $SAMPLES (Debian's libeccodes-data)"
cd "$SCRATCH" || fail "cd"

# idents QUEUE: the identifiers in QUEUE, oldest first, one a line.
idents() {
  pqcat -q "$1" -v -l - 2>&1 >/dev/null | cut -c95- |
    grep -E '^ *[0-9]+ [0-9]{14}\.[0-9]{6} ' |
    sed -E 's/^ *[0-9]+ [0-9.]+ [^ ]+ [0-9]+  //'
}

# 1. One file of every distinct GRIB sample, junk before, between and after.
files=()
declare -A seen=()
for f in "$SAMPLES"/*.tmpl; do
  [[ $(head -c 4 "$f") == GRIB ]] || continue
  sum=$(md5sum <"$f" | cut -c1-32)
  [[ -z ${seen[$sum]:-} ]] || continue
  seen[$sum]=1
  files+=("$f")
done
((${#files[@]} >= 20)) || fail "only ${#files[@]} GRIB samples in $SAMPLES"
n2=0
for f in "${files[@]}"; do
  [[ $(od -An -tu1 -j7 -N1 "$f" | tr -d ' ') == 2 ]] && n2=$((n2 + 1))
done
((n2 >= 10)) || fail "only $n2 GRIB2 samples"
# ecCodes writes master table version 4 or 5, for which LDM (and so the
# ingester) has no parameter table: those name "FHRS//LVL".  Two samples
# again with version 2 (octet 10 of section 1, byte 25), which name fully:
# TMPK at 850 hPa and at the surface (test_np_grib2's samples_named).
for f in regular_ll_pl_grib2 polar_stereographic_sfc_grib2; do
  cp "$SAMPLES/$f.tmpl" "$f.v2"
  printf '\002' | dd of="$f.v2" bs=1 seek=25 conv=notrunc status=none
  files+=("$f.v2")
done
{
  printf 'YTPA98 KWBC 151200\r\r\n'
  for f in "${files[@]}"; do
    cat "$f"
    printf 'junk GRI\n'
  done
} >all.grb
gribwrap -r all.grb >want.data || fail "gribwrap -r failed"

expect_rc 0 gribinsert -q "$Q" -f NGRID -s 10 -v -l - all.grb
expect_in "$ERR" "open and memorymap all.grb"
expect_in "$ERR" "$(stat -c %s all.grb) bytes memory mapped"
idents "$Q" >got.ids
nmsg=${#files[@]}
[[ $(grep -c '^all\.grb !grib' got.ids) == "$nmsg" ]] ||
  fail "not $nmsg message products: $(head -5 got.ids)"
grep -vq '^all\.grb !.*! [0-9]\{6\}$\|^\.status\.all\.grb ' got.ids &&
  fail "an identifier not of gribinsert's form: $(grep -v '! [0-9]\{6\}$' got.ids | head -3)"
# seqnos 10, 11, ... in file order; the status product takes the next
head -1 got.ids | grep -q '! 000010$' || fail "the first seqno is not 10"
grep -q "! $(printf %06d $((10 + nmsg - 1)))\$" got.ids || fail "last seqno"
grep -qx "\.status\.all\.grb $(printf %06d $((10 + nmsg)))" got.ids ||
  fail "no .status product after the messages"
# the data: exactly the messages' bytes, in order
run pqcat -q "$Q" -p '^all\.grb !'
[[ $rc == 0 ]] || fail "pqcat failed"
cmp -s "$OUT" want.data || fail "the products are not the samples' bytes"
ok "$nmsg messages ($n2 GRIB2 samples, 2 of them again as v2) inserted with their bytes, seqnos and status"

# 2. The GRIB names are the ingester's for the same bytes.
Q2=$SCRATCH/np.pq
pqcreate -c -s 20M -q "$Q2" >/dev/null 2>&1 || fail "pqcreate $Q2"
gribwrap 'YTPA98 KWBC 151200' all.grb >all.sbn || fail "gribwrap failed"
expect_rc 0 noaaportIngester -q "$Q2" -n -l "$SCRATCH/np.log" <all.sbn
idents "$Q2" | sed -E 's/^[^!]* !//' >np.tags
grep '^all\.grb !' got.ids | sed -E 's/^all\.grb !(.*)! [0-9]{6}$/\1/' >gi.tags
[[ $(wc -l <np.tags) == "$nmsg" ]] ||
  fail "the ingester made $(wc -l <np.tags) products, not $nmsg"
diff gi.tags np.tags >diff.out ||
  fail "GRIB names differ from the ingester's (gribinsert < > ingester): $(head -20 diff.out)"
named=$(grep -c '^grib2/ecmwf/ECMWF_128/#255/200703231200F000/TMPK/\(850 hPa PRES\|0 - NONE\)$' gi.tags)
grib1=$(grep -c '^grib/' gi.tags)
((named >= 2 && grib1 >= 5)) ||
  fail "too few names decoded: $named GRIB2, $grib1 GRIB1: $(head -5 gi.tags)"
ok "every GRIB name equals noaaportIngester's ($named GRIB2 fully named, $grib1 GRIB1)"

# 3. Again: the messages are duplicates (LDM's status -2), exit 0.
before=$(idents "$Q" | wc -l)
expect_rc 0 gribinsert -q "$Q" -f NGRID -s 10 -S -v -l - all.grb
[[ $(grep -c ' -2 all\.grb !' "$ERR") == "$nmsg" ]] ||
  fail "not $nmsg duplicates logged"
[[ $(idents "$Q" | wc -l) == "$before" ]] || fail "-S still made a product"
# the status product lists each message: status, seqno, size, identifier
run pqcat -q "$Q" -p '^\.status\.all\.grb '
head -1 "$OUT" | grep -q "^all\.grb complete ($(stat -c %s all.grb) bytes) at " ||
  fail "status text: $(head -2 "$OUT")"
grep -qx "Inserted $(stat -c %s want.data) of $(stat -c %s all.grb)" "$OUT" ||
  fail "no Inserted line: $(head -3 "$OUT")"
[[ $(grep -cE '^  0 +[0-9]+ +[0-9]+ all\.grb !' "$OUT") == "$nmsg" ]] ||
  fail "not a line per message in the status product"
ok "duplicates refused, status product lists every message"

# 4. Damaged messages: each reported, the good ones still go in, exit 3.
g2=$SAMPLES/regular_ll_sfc_grib2.tmpl
g1=$SAMPLES/GRIB1.tmpl
len2=$(stat -c %s "$g2")
{
  head -c $((len2 - 1)) "$g2"
  printf 'X' # no 7777
  cat "$g1"  # good
  printf 'GRIB\0\0\0\3xxxxxxxx' # edition 3
  cat "$g2" # good
  head -c 40 "$g1" # truncated at the end
} >bad.grb
expect_rc 3 gribinsert -q "$Q" -f EXP -S -l - bad.grb
expect_in "$ERR" "no 7777 where its length says it ends"
expect_in "$ERR" "unknown GRIB edition"
expect_in "$ERR" "truncated: its length runs past the end of the file"
[[ $(idents "$Q" | grep -c '^bad\.grb !') == 2 ]] ||
  fail "not the 2 good messages of bad.grb: $(idents "$Q" | grep bad)"
run pqcat -q "$Q" -p '^bad\.grb !'
gribwrap -r "$g1" "$g2" | cmp -s - "$OUT" || fail "bad.grb's good messages differ"
ok "damaged messages reported, the good ones inserted"

# 5. A missing file among good ones; usage; a queue that cannot be opened.
cp "$g2" one.grb
expect_rc 3 gribinsert -q "$Q" -S -l - missing.grb one.grb
expect_in "$ERR" "missing.grb"
idents "$Q" | grep -q '^one\.grb !grib2/' || fail "one.grb not inserted"
expect_rc 1 gribinsert -q "$Q"
expect_in "$ERR" "no file to insert"
expect_rc 1 gribinsert -q "$Q" -f NOSUCHFEED one.grb
expect_rc 2 gribinsert -q "$SCRATCH/none.pq" -l - one.grb
ok "missing file, usage errors, queue not opened"
