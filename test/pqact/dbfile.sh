#!/usr/bin/env bash
# pqact DBFILE on real products, read back with gdbm (pqactdb): keys by
# default the identifier, or the word after the path; each key stored with
# its NUL, each value the product XDR-encoded as LDM's pqact stores it,
# byte for byte, built here from the XDR rules (docs/protocol.md §3); a key
# stored again is replaced; two databases, their directories made; -close
# (spelled -cl) closes the database after the product, so that a reader
# may open it while pqact runs, while one without -close stays open (gdbm
# lets no reader in beside a writer) until pqact exits; -dblocksize and
# LDM's default of 512; an unknown option and a path that cannot be made
# are logged with the path and strerror, and pqact goes on.
source "$(dirname "$0")/lib.sh" "$@"
DB=$(cd "$(dirname "${4:?path of pqactdb}")" && pwd)/$(basename "$4")
cd "$SCRATCH" || fail "cd"
umask 022
tab=$'\t'
LOG=$SCRATCH/pqact.log
FAIL_LOGS=(OUT:stdout ERR:stderr LOG:log)

# be32 N: N in 4 bytes, most significant first (XDR).
be32() {
  bytes "$(printf '%08x' "$1")"
}
# xdr_string S: XDR's string: its length, its bytes, zeros to a multiple
# of 4.
xdr_string() {
  be32 ${#1}
  printf '%s' "$1"
  head -c $(((4 - ${#1} % 4) % 4)) /dev/zero
}
# xprod FEEDTYPE SEQNO SEC USEC ORIGIN IDENT FILE: the XDR-encoded product
# (ldm.x's product: prod_info, then the data padded, with no length word).
xprod() {
  local size
  size=$(wc -c <"$7")
  be32 "$3"
  be32 "$4"
  bytes "$(sig_of "$6" "$7")"
  xdr_string "$5"
  be32 "$1"
  be32 "$2"
  xdr_string "$6"
  be32 "$size"
  cat "$7"
  head -c $(((4 - size % 4) % 4)) /dev/zero
}
# value DB KEY OUT: the value under KEY into OUT (fails the test if none).
value() {
  "$DB" get "$1" "$2" >"$3" || fail "no key \"$2\" in $1"
}
# readable DB: can a reader open DB now?
readable() {
  "$DB" keys "$1" >/dev/null 2>&1
}

expect_rc 0 pqcreate -s 2M -S 100 -q "$Q"
T=$(utc '2024-03-01 06:00:00')
printf 'one\n' >d1
head -c 1001 /dev/urandom >d2 # padded by 3
printf 'first\n' >d3
printf 'second, longer\n' >d4
printf 'bs\n' >d5
: >afile
put EXP 7 "$T" 250 up.example 'db a' d1
put IDS 8 "$T" 0 origin.example.org 'db bee' d2
put EXP 9 "$T" 1 here 'key k1 x' d3
put EXP 10 "$T" 2 here 'key k1 y' d4
put EXP 11 "$T" 3 here 'bs one' d5

cat >"$CONF" <<CONF
ANY${tab}^db ${tab}DBFILE${tab}-zz${tab}db/one.db
EXP${tab}^key (..) (.)${tab}DBFILE${tab}-cl${tab}db/sub/two.db \\1
EXP${tab}^bs${tab}DBFILE${tab}-close -dblocksize 1024 db/three.db
EXP${tab}^bs${tab}DBFILE${tab}-close${tab}$SCRATCH/afile/x.db
EXP${tab}^bs (.*)${tab}FILE${tab}-close${tab}after.\\1
CONF
expect_rc 1 "$PQACT" -vl- -q /dev/null "$CONF" # 1 as LDM's, good or bad
expect_in "$ERR" "Successfully read configuration-file"
background "$PQACT" -l "$LOG" -d "$DATA" -o "$ALL" -i 600 "$CONF"
pid=$BG
wait_until 10 test -f "$DATA/after.one" ||
  fail "pqact did not go on after the bad path"
cd "$DATA" || fail "cd"
# pqact runs: the databases with -close can be read, the other cannot
readable db/sub/two.db || fail "db/sub/two.db is still open after -cl"
readable db/three.db || fail "db/three.db is still open after -close"
! readable db/one.db || fail "db/one.db was closed without -close"
ok "-close (-cl) closes the database; without it, it stays open"
expect_in "$LOG" "DBFILE: invalid argument \"-zz\" (ignored)"
expect_in "$LOG" "cannot open database \"$SCRATCH/afile/x.db\": Not a directory"
ok "an unknown option and a bad path logged with the path and strerror"
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc"

# the default key, with its NUL; the values byte for byte
run "$DB" keys db/one.db
((rc == 0)) || fail "cannot read db/one.db after pqact exited"
sort "$OUT" >keys
printf 'db a\0\ndb bee\0\n' | sort >want
same keys want
value db/one.db 'db a' got
xprod $((0x40000000)) 7 "$T" 250 up.example 'db a' ../d1 >want
same got want
value db/one.db 'db bee' got
xprod 8 8 "$T" 0 origin.example.org 'db bee' ../d2 >want
same got want
ok "the identifier as the key, the XDR product as the value"

# an explicit key, replaced by the later product
run "$DB" keys db/sub/two.db
printf 'k1\0\n' >want
same "$OUT" want
value db/sub/two.db k1 got
xprod $((0x40000000)) 10 "$T" 2 here 'key k1 y' ../d4 >want
same got want
ok "an explicit key; a key stored again is replaced"

# -dblocksize, and LDM's default of 512
[[ $("$DB" blocksize db/three.db) == 1024 ]] ||
  fail "db/three.db's block size: $("$DB" blocksize db/three.db)"
[[ $("$DB" blocksize db/one.db) == 512 ]] ||
  fail "db/one.db's block size: $("$DB" blocksize db/one.db)"
value db/three.db 'bs one' got
xprod $((0x40000000)) 11 "$T" 3 here 'bs one' ../d5 >want
same got want
[[ $(stat -c %a db/one.db) == 644 ]] ||
  fail "db/one.db has mode $(stat -c %a db/one.db), not 0664 less the umask 022"
ok "-dblocksize 1024, 512 by default; three databases, directories made"
