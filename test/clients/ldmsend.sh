#!/usr/bin/env bash
# ldmsend against fakeldm: each file arrives byte-identical (MD5 checked by
# the server against the signature) with LDM's metadata (ident = the name
# as given, origin = the registry's hostname, feedtype, sequence numbers);
# HEREIS up to max_hereis, COMINGSOON + BLKDATA above; DONT_SEND and
# RECLASS respected; a final NULLPROC; refusals and unreadable files give
# LDM's exit statuses; IPv6.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

mkdir -p data got
: >data/empty
printf x >data/one
head -c 1000 /dev/urandom >data/k1
head -c 1001 /dev/urandom >"data/with space"
head -c 100000 /dev/urandom >data/c100k
head -c 3000000 /dev/urandom >data/big3m
files=(data/empty data/one data/k1 "data/with space" data/c100k data/big3m)

# check_products HOW...: the report's products are $files in order, each
# sent as HOW[i] (HEREIS or BLKDATA), byte-identical, with LDM's metadata.
check_products() {
  local i=0 f line sum seq
  grep -P '^(HEREIS|BLKDATA)\t' "$REPORT" >prods
  [[ $(wc -l <prods) == "${#files[@]}" ]] ||
    fail "expected ${#files[@]} products, got $(wc -l <prods)"
  while IFS= read -r line; do
    f=${files[$i]}
    sum=$(md5sum <"$f" | cut -c1-32)
    seq=$((FIRST_SEQ + i))
    [[ $line == "${HOW[$i]}"$'\t'"$f"$'\t'"$(stat -c %s "$f")"$'\tmd5ok\t'"$sum"$'\t'"$FEED"$'\t'"$seq"$'\tclients-test-host\t'* ]] ||
      fail "product $i: $line"
    cmp -s "got/$i" "$f" || fail "got/$i differs from $f"
    i=$((i + 1))
  done <prods
  [[ $(grep -vE '^(closed|end)' "$REPORT" | tail -1) == NULLPROC ]] ||
    fail "the session does not end with NULLPROC"
}

# 1. OK with max_hereis 0xFFFFFFFF (ldmd's answer): everything as HEREIS.
start_fake hiya 127.0.0.1 -d got
before=$(date +%s)
expect_rc 0 ldmsend -v -h "127.0.0.1:$PORT" -f 'IDS|DDPLUS' -s 5 "${files[@]}"
stop_fake
HOW=(HEREIS HEREIS HEREIS HEREIS HEREIS HEREIS)
FIRST_SEQ=5 FEED=0x0000000b check_products
line=$(grep -P '^HIYA\t' "$REPORT")
[[ $line == *$'feedtype=0x0000000b\tpattern=.*\tfrom='* ]] || fail "offer: $line"
[[ $line == *$'to=2147483647.999999' ]] || fail "offer's to: $line"
from=$(sed -E 's/.*from=([0-9]+)\..*/\1/' <<<"$line")
((from >= before - 1 && from <= before + 5)) || fail "offer's from $from is not now"
expect_in "$ERR" "Sending data/big3m, 3000000 bytes"
expect_in "$ERR" "Sending data/with space, 1001 bytes"
ok "6 files as HEREIS, byte-identical, LDM's metadata, NULLPROC at the end"

# 2. max_hereis 1000: larger files go as COMINGSOON + one BLKDATA; default
# feedtype EXP and first seqno 0.
rm -f got/*
start_fake hiya 127.0.0.1 -d got -H 1000
expect_rc 0 ldmsend -h "127.0.0.1:$PORT" "${files[@]}"
stop_fake
HOW=(HEREIS HEREIS HEREIS BLKDATA BLKDATA BLKDATA)
FIRST_SEQ=0 FEED=0x40000000 check_products
in_report $'COMINGSOON\tdata/big3m\t3000000\tpktsz=3000000\tOK' ||
  fail "no COMINGSOON for big3m"
[[ $(grep -c '^COMINGSOON' "$REPORT") == 3 ]] || fail "expected 3 COMINGSOON"
[[ ! -s $ERR ]] || fail "ldmsend without -v printed something"
ok "COMINGSOON + BLKDATA above max_hereis; EXP and seqno 0 by default"

# 3. DONT_SEND to a COMINGSOON: no BLKDATA, a notice, exit 0.
start_fake hiya 127.0.0.1 -H 1000 -D big3m
expect_rc 0 ldmsend -h "127.0.0.1:$PORT" data/one data/big3m data/c100k
stop_fake
in_report $'COMINGSOON\tdata/big3m\t3000000\tpktsz=3000000\tDONT_SEND' ||
  fail "no DONT_SEND"
! in_report $'BLKDATA\tdata/big3m' || fail "big3m sent after DONT_SEND"
in_report $'BLKDATA\tdata/c100k' || fail "c100k not sent after the DONT_SEND"
msgs "$ERR" >m
grep -qE '^Unwanted product: +3000000 [0-9]{14}\.[0-9]{6} EXP 001  data/big3m$' m ||
  fail "no LDM 'Unwanted product' notice"
ok "DONT_SEND: Unwanted product, the rest still sent"

# 4. RECLASS: only what the server's pattern matches is sent.
start_fake hiya 127.0.0.1 -r reclass -R '^data/(one|k1)$'
expect_rc 0 ldmsend -v -h "127.0.0.1:$PORT" "${files[@]}"
stop_fake
grep -P '^(HEREIS|BLKDATA)\t' "$REPORT" | cut -f2 >sent
[[ $(cat sent) == $'data/one\ndata/k1' ]] || fail "sent after RECLASS: $(cat sent)"
in_report $'HEREIS\tdata/k1\t1000\tmd5ok\t' || fail "k1 not intact"
expect_in "$ERR" "127.0.0.1:$PORT doesn't want data/big3m"
expect_in "$ERR" "accepts only "
ok "RECLASS: only the accepted class is sent"

# 5. DONT_SEND to HIYA: nothing is sent, exit 0.
start_fake hiya 127.0.0.1 -r dontsend
expect_rc 0 ldmsend -h "127.0.0.1:$PORT" data/one
stop_fake
! in_report HEREIS || fail "sent after DONT_SEND"
expect_in "$ERR" "wants none of the products offered (DONT_SEND)"
ok "HIYA answered DONT_SEND: nothing sent"

# 6. Refused (AUTH_TOOWEAK, with the call's xid or 0): exit 5.
for answer in tooweak tooweak0; do
  start_fake hiya 127.0.0.1 -r "$answer"
  expect_rc 5 ldmsend -h "127.0.0.1:$PORT" data/one
  stop_fake
  expect_in "$ERR" "127.0.0.1:$PORT refused HIYA: not allowed (AUTH_TOOWEAK)"
done
ok "refusal: exit 5 with the reason"

# 7. An unreadable or missing file: the others are sent, exit 3.
mkdir -p adir
start_fake hiya 127.0.0.1
expect_rc 3 ldmsend -h "127.0.0.1:$PORT" data/one missing adir data/k1
stop_fake
expect_in "$ERR" "cannot open missing: No such file or directory"
expect_in "$ERR" "cannot send adir: not a regular file"
in_report $'HEREIS\tdata/one\t1\tmd5ok' || fail "one not sent"
in_report $'HEREIS\tdata/k1\t1000\tmd5ok\t' || fail "k1 not sent"
in_report $'\t0x40000000\t3\tclients-test-host' ||
  fail "k1 should keep its place in the sequence (3)"
ok "unreadable files reported, the others sent, exit 3"

# 8. IPv6.
if have_ipv6; then
  start_fake hiya ::1 -d got
  expect_rc 0 ldmsend -h "[::1]:$PORT" data/k1
  stop_fake
  in_report $'from=::1' || fail "not over IPv6"
  in_report $'HEREIS\tdata/k1\t1000\tmd5ok' || fail "k1 not sent over IPv6"
  start_fake hiya ::1
  expect_rc 0 ldmsend -h ::1 -P "$PORT" data/one
  stop_fake
  in_report $'HEREIS\tdata/one\t1\tmd5ok' || fail "-h ::1 -P"
  ok "IPv6 as [::1]:port and -h ::1 -P port"
else
  skip_part "IPv6 (ldmsend over ::1): cannot listen on ::1"
fi
