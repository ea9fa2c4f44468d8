#!/usr/bin/env bash
# feedme against the real server (LDM-5 FEEDME): ldmd on 127.0.0.1 with
# its own queue.  feedme writes the data of the products asked for, in the
# queue's order, byte for byte, to standard output or a file: small ones
# (HEREIS) and large ones (COMINGSOON and 16 KiB BLKDATA packets) alike,
# and with -v logs each as pqcat -v does; a product inserted while it runs
# follows; ldmd's RECLASS narrows the request and its refusal is exit 2;
# SIGTERM is exit 0; no server is exit 3; usage errors are exit 1.
source "$(dirname "$0")/lib.sh" "$1" "$2"
ldmd_test feedme-test-host "$3" "$4"
cat >"$CONF" <<'EOF'
ALLOW EXP|IDS ^127\.0\.0\.1$
EOF

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

expect_rc 0 pqcreate -s 50M -S 1000 -q "$Q"
mkdir -p data
head -c 10 /dev/urandom >data/a
head -c 16000 /dev/urandom >data/b
head -c 16385 /dev/urandom >data/c
head -c 300000 /dev/urandom >data/d
: >data/empty
printf 'hds' >data/h
expect_rc 0 pqinsert -q "$Q" -f EXP data/a data/b data/empty data/c data/d
expect_rc 0 pqinsert -q "$Q" -f HDS data/h
ldmd_start "$LDMD_DIR/ldmd" "$LOG" -P 0 -m 3600 -I 127.0.0.1 "$CONF"

# 1. What the queue holds, byte for byte, on standard output.
run pqcat -q "$Q" -f EXP
cp "$OUT" want.bin
want=$(size want.bin)
background feedme -v -l "$SCRATCH/fm.log" -h "127.0.0.1:$PORT" -f EXP \
  -o 3600 >out.bin
FM=$BG
wait_until 30 eval "[[ \$(size out.bin) -ge $want ]]" ||
  fail "feedme wrote $(size out.bin) of $want bytes: $(tail -5 "$SCRATCH/fm.log")"
cmp -s out.bin want.bin || fail "feedme's output differs from the queue's data"
wait_until 10 eval "[[ \$(products \"\$SCRATCH/fm.log\" | wc -l) -ge 5 ]]" ||
  fail "feedme -v did not log 5 products"
expect_rc 0 pqcat -v -q "$Q" -f EXP
products "$ERR" >want.lines
products "$SCRATCH/fm.log" >got.lines
diff got.lines want.lines >diff.out ||
  fail "feedme -v and pqcat -v differ: $(cat diff.out)"
expect_in "$SCRATCH/fm.log" "Starting Up: 127.0.0.1:$PORT: "
ok "the queue's EXP products, HEREIS and BLKDATA, byte for byte; LDM's lines"

# 2. A new product follows at once; SIGTERM is exit 0.
head -c 40000 /dev/urandom >data/e
expect_rc 0 pqinsert -q "$Q" -f EXP data/e
want=$((want + 40000))
wait_until 30 eval "[[ \$(size out.bin) -ge $want ]]" ||
  fail "the new product did not follow"
tail -c 40000 out.bin | cmp -s - data/e || fail "data/e differs"
stop_expect "$FM" feedme TERM 10 0 "$SCRATCH/fm.log"
expect_in "$SCRATCH/fm.log" "exiting"
ok "a new product follows; SIGTERM exit 0"

# 3. To a file; RECLASS narrows EXP|HDS to what ALLOW permits.
background feedme -l "$SCRATCH/fm2.log" -h "127.0.0.1:$PORT" -f 'EXP|HDS' \
  -o 3600 out2.bin
FM=$BG
wait_until 30 eval "[[ \$(size out2.bin) -ge $want ]]" ||
  fail "feedme to a file wrote $(size out2.bin) of $want bytes"
stop_expect "$FM" feedme TERM 10 0 "$SCRATCH/fm2.log"
cat want.bin data/e | cmp -s - out2.bin || fail "out2.bin differs"
expect_in "$SCRATCH/fm2.log" "allows only"
ok "to a file; RECLASS to what ldmd allows"

# 4. Refused: nothing of HDS is allowed.
expect_rc 2 feedme -l - -h "127.0.0.1:$PORT" -f HDS
grep -qE 'refused FEEDME|none of the request is allowed' "$ERR" ||
  fail "no refusal message"
# No server; usage errors.
DEAD=$(dead_port)
expect_rc 3 feedme -l - -t 2 -h "127.0.0.1:$DEAD"
expect_rc 1 feedme -t 10 -T 5
expect_in "$ERR" "TotalTimeo 5 < timeo 10"
expect_rc 1 feedme -p '('
expect_rc 1 feedme one two
ok "refused: 2; no server: 3; usage: 1"

ldmd_stop "$LOG"
ok "ldmd stopped cleanly"

# 5. A scripted upstream (fakeldm feed5): a BLKDATA of no product is
# refused (SYSTEM_ERR) and said; a connection lost in the middle of a
# product leaves nothing of it in the output; after the reconnection (25 s)
# the request resumes after the last product and the product comes whole.
start_fake feed5 127.0.0.1 -c 2 -T 150
background feedme -v -l "$SCRATCH/fm3.log" -h "127.0.0.1:$PORT" >out3.bin
FM=$BG
wait_until 90 in_report $'NULLPROC\tanswered' ||
  fail "feedme did not take the second session: $(cat "$REPORT")"
stop_expect "$FM" feedme TERM 10 0 "$SCRATCH/fm3.log"
stop_fake
in_report $'HEREIS\taccept_stat=0' || fail "HEREIS not answered OK"
in_report $'BLKDATA-stray\taccept_stat=5' || fail "stray BLKDATA not refused"
in_report $'BLKDATA-half\taccept_stat=0' || fail "half product not answered"
grep -q $'^FEEDME5\tfeedtype=0xffffffff\tpattern=.*\tfrom=1700000000.000001\t' \
  "$REPORT" || fail "the second FEEDME does not resume after the first product"
printf 'first product\n0123456789abcdefghij' | cmp -s - out3.bin ||
  fail "output: $(od -c out3.bin | head -5)"
expect_in "$SCRATCH/fm3.log" "signature mismatch"
expect_in "$SCRATCH/fm3.log" "dropping second (10 of 20 bytes received)"
ok "bad BLKDATA refused; a product cut by a lost connection comes again whole"
