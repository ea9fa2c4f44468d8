#!/usr/bin/env bash
# A path that a product's identifier would take out of pqact's -d
# directory: with the rules `^(.*)$ FILE data/\1` (and STDIOFILE, DBFILE),
# an identifier "../../esc/f" would have pqact make and write
# $SCRATCH/esc/f, outside $DATA, as LDM's pqact does.  pqact refuses a ".."
# that came from the product, logs it as an error naming the product and
# the path, and writes nothing; the operator's own ".." in a rule is kept
# (our pqutils/pqact/pqact.1, SUBSTITUTION).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 1M -S 100 -q "$Q"
printf 'data\n' >p
put EXP 1 1700000000 0 here '../../esc/f' p
put EXP 2 1700000000 0 here 'a/../../../esc/g' p
put EXP 3 1700000000 0 here 'fine' p
put IDS 4 1700000000 0 here 'op' p

tab=$'\t'
cat >"$CONF" <<CONF
EXP${tab}^(.*)\$${tab}FILE${tab}-close${tab}data/\\1
EXP${tab}^(.*)\$${tab}STDIOFILE${tab}-close${tab}sdata/\\1
EXP${tab}^(.*)\$${tab}DBFILE${tab}-close${tab}db/\\1 key
IDS${tab}^(.*)\$${tab}FILE${tab}-close${tab}../opdir/\\1
CONF

pqact_run -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact exited $rc (a failed action does not change it)"
[[ ! -e $SCRATCH/esc ]] ||
  fail "pqact wrote outside its -d directory: $(find "$SCRATCH/esc" | tr '\n' ' ')"
for a in 'FILE to "data/../../esc/f"' 'STDIOFILE to "sdata/../../esc/f"' \
  'DBFILE to "db/../../esc/f"'; do
  grep -qF "ERROR refusing $a for ../../esc/f (entry at line" "$ERR" ||
    fail "no error refusing $a"
done
expect_in "$ERR" 'ERROR refusing FILE to "data/a/../../../esc/g" for a/../../../esc/g'
ok "a \"..\" from the product is refused, logged, and nothing is written outside -d"

[[ -f $DATA/data/fine && -f $DATA/sdata/fine && -f $DATA/db/fine ]] ||
  fail "the rules did not file an ordinary product"
[[ -f $SCRATCH/opdir/op ]] || fail "the operator's own \"..\" was not kept"
expect_not_in "$ERR" 'refusing FILE to "../opdir/op"'
ok "ordinary products are filed; the operator's own \"..\" in a rule is kept"
sanitizer_check "$ERR"
