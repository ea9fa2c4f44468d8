#!/usr/bin/env bash
# pqinsert and pqcat: files of every size (empty, 1 byte, 1 KiB, 100 and
# 150 kB, 20 MB read in place) go in and come back byte-identical and in
# order; identifiers, sequence numbers, feedtypes, origins and signatures are
# LDM's; duplicates exit 4, input problems 3; pqcat's filters, -c, -s, -O,
# -L, -e and output file.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 64M -S 2000 -q "$Q"
make_files small 50 1024
make_files mid 5 100000
head -c 20000000 /dev/urandom >big
head -c 150000 /dev/urandom >m150
: >empty
printf x >one
files=(small/f* m150 mid/f* big empty one)
n=${#files[@]}

expect_rc 0 pqinsert "${files[@]}" # the registry names the queue
expect_rc 0 pqcat
cat "${files[@]}" >expected
cmp -s "$OUT" expected || fail "pqcat output differs from the files"
expect_in "$ERR" "Number of products $n"
ok "$n files in and out byte-identical"

# Signatures are MD5 of the data; -x shows them; origin is the registry's.
expect_rc 0 pqcat -c
expect_not_in "$ERR" "signature mismatch"
expect_rc 0 pqcat -x -O -p '^big$'
expect_in "$ERR" "$(md5sum <big | cut -c1-32)"
expect_in "$ERR" "cli-test-host"
expect_in "$ERR" " 20000000 "
cmp -s "$OUT" big || fail "pqcat -p '^big\$' did not give back big"
expect_rc 0 pqcat -v -p '^small/f00003$'
expect_in "$ERR" "EXP 003  small/f00003"
ok "signatures, identifiers, sequence numbers, origin"

# Duplicates exit 4; an input problem outranks a duplicate (3); the good
# files of the same run still go in.
expect_rc 4 pqinsert one
expect_in "$ERR" "Product already in queue"
echo fresh >fresh
expect_rc 3 pqinsert missing fresh one
expect_in "$ERR" "cannot open missing: No such file or directory"
expect_rc 0 pqcat -p '^fresh$'
[[ $(cat "$OUT") == fresh ]] || fail "fresh was not inserted beside the failures"
expect_rc 3 pqinsert .
ok "duplicates (4) and input problems (3)"

# -p with several files: ident.seqno from -s; -f feedtype.
printf a >a
printf b >b
expect_rc 0 pqinsert -v -p prod -s 7 -f 'IDS|DDPLUS' a b
expect_in "$ERR" "007  prod.7"
expect_in "$ERR" "008  prod.8"
expect_rc 0 pqcat -f IDS
[[ $(cat "$OUT") == ab ]] || fail "pqcat -f IDS gave '$(cat "$OUT")'"
expect_rc 0 pqcat -f 'IDS|DDPLUS' -p '^prod\.8$'
[[ $(cat "$OUT") == b ]] || fail "pqcat -f -p gave '$(cat "$OUT")'"
printf c >c
expect_rc 0 pqinsert -v -p single c
expect_in "$ERR" "000  single"
ok "-p, -s, -f"

# -i: the signature is MD5 of the identifier, so a second file with the
# same identifier is a duplicate, and pqcat -c reports the mismatch.
echo aaa >i1
echo bbb >i2
expect_rc 0 pqinsert -i -p same i1
expect_rc 4 pqinsert -i -p same i2
expect_rc 0 pqcat -c -p '^same$'
expect_in "$ERR" "signature mismatch"
expect_rc 0 pqcat -x -p '^same$'
expect_in "$ERR" "$(printf same | md5sum | cut -c1-32)"
head -c 17000000 /dev/urandom >big_i
expect_rc 0 pqinsert -i -p bigident big_i
expect_rc 0 pqcat -c -p '^bigident$'
cmp -s "$OUT" big_i || fail "a large -i product came back different"
ok "-i"

# Standard input: ident STDIN or -p; -n sets only the first buffer.
head -c 300000 /dev/urandom >stdin.data
pqinsert -n 1 <stdin.data >"$OUT" 2>"$ERR" || fail "pqinsert < file exited $?"
expect_rc 0 pqcat -p '^STDIN$'
cmp -s "$OUT" stdin.data || fail "standard input came back different"
echo hello | pqinsert -p greeting -s 42 -v 2>"$ERR" || fail "pqinsert stdin"
expect_in "$ERR" "042  greeting"
expect_rc 0 pqcat -p '^greeting$'
[[ $(cat "$OUT") == hello ]] || fail "greeting"
echo hello | pqinsert -p greeting2 2>"$ERR"
[[ $? == 4 ]] || fail "same data from stdin is not a duplicate"
expect_error pqinsert -n 0
ok "standard input"

# Filters of pqcat: -o (creation time), output file appends.
expect_rc 0 pqcat -o 3600 -p '^one$'
[[ $(cat "$OUT") == x ]] || fail "pqcat -o 3600 lost a recent product"
# A product created 2 s ago (pqclihelper sets its creation time, so the
# test waits for no clock) is outside -o 1 and inside -o 3600.
"$HELPER" insert-old "$Q" 1 2 aged || fail "insert-old"
expect_rc 0 pqcat -o 1 -p '^aged'
[[ ! -s $OUT ]] || fail "pqcat -o 1 wrote a product created 2 s ago"
expect_rc 0 pqcat -o 3600 -p '^aged'
[[ -s $OUT ]] || fail "pqcat -o 3600 lost a product created 2 s ago"
expect_rc 0 pqcat -p '^one$' outfile
expect_rc 0 pqcat -p '^one$' outfile
[[ $(cat outfile) == xx ]] || fail "the output file was not appended to"
ok "pqcat -o and output file"

# pqcat -s: the tally agrees with the queue.
expect_rc 0 pqcat -s
expect_in "$ERR" "consistent with value in queue"
[[ ! -s $OUT ]] || fail "pqcat -s wrote data"
ok "pqcat -s"

# pqcat -L: each product's LDM line instead of its data; -e -i: only what
# is inserted from now on, whatever its creation time (-o 0 would take
# the creation time).
expect_rc 0 pqcat -L -O -p '^one$'
[[ $(cat "$OUT") =~ ^\ +1\ [0-9]{14}\.[0-9]{6}\ EXP\ [0-9]{3}\ \ one\ cli-test-host$ ]] ||
  fail "pqcat -L -O wrote: $(cat "$OUT")"
background pqcat -e -L -i 100 -l follow.log >follow.out
follower=$BG
wait_until 10 asleep || fail "pqcat -e -i is not waiting on the queue"
"$HELPER" insert-old "$Q" 1 3600 late || fail "insert-old"
wait_until 10 grep -q ' late\.0$' follow.out ||
  fail "pqcat -e missed a product created an hour before its insertion"
[[ $(wc -l <follow.out) == 1 ]] || fail "pqcat -e wrote products inserted before it began: $(cat follow.out)"
kill -TERM "$follower"
wait_until 10 gone "$follower" || fail "pqcat -e -i did not stop on SIGTERM"
ok "pqcat -L and -e"

# A product larger than the queue: refused by its size, exit 3 (the exact
# limit and inputs without a size are in cli_insert_limit).
expect_rc 0 pqcreate -s 100k -q small.pq
head -c 200000 /dev/urandom >toobig
expect_rc 3 pqinsert -q small.pq toobig
expect_in "$ERR" "toobig: larger than the largest product the queue holds"
ok "product too big (3)"

# A queue that cannot be opened: exit 2.
expect_rc 2 pqinsert -q nowhere.pq one
expect_in "$ERR" "pq_open failed"
echo "not a queue" >junk.pq
expect_rc 2 pqinsert -q junk.pq one
ok "queue not opened (2)"
