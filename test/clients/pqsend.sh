#!/usr/bin/env bash
# pqsend against the real server: ldmd on a port of 127.0.0.1 with its own
# queue; pqsend reads another queue (the "source").  One pass (-i 0) puts
# every matching product into ldmd's queue byte for byte, with LDM's log
# lines and statistics; a second pass adds nothing (duplicates); ldmd's
# RECLASS narrows what is sent; a running pqsend sends new products at
# once, and when ldmd stops and comes back on the same port, what was
# inserted meanwhile arrives (nothing lost); SIGTERM is exit 7; a server
# that never answers is exit 4 after -T; usage errors are exit 6.
source "$(dirname "$0")/lib.sh" "$1" "$2"
ldmd_test pqsend-test-host "$3" "$4"
SQ=$SCRATCH/source.pq
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT EXP|IDS .* ^127\.0\.0\.1$
EOF

# count QUEUE [PATTERN]: products in QUEUE whose identifier matches.
count() {
  pqcat -q "$1" -v -l - -p "${2:-.*}" 2>&1 >/dev/null |
    sed -n 's/.*Number of products \([0-9]*\).*/\1/p'
}

# same IDENT: the product IDENT has the same bytes in both queues.
same() {
  pqcat -q "$SQ" -p "^$1\$" >a.out 2>/dev/null || fail "pqcat $SQ $1"
  pqcat -q "$Q" -p "^$1\$" >b.out 2>/dev/null || fail "pqcat $Q $1"
  [[ -s a.out ]] || fail "$1 is empty in the source queue"
  cmp -s a.out b.out || fail "$1 differs in ldmd's queue"
}

expect_rc 0 pqcreate -s 50M -S 1000 -q "$Q"
expect_rc 0 pqcreate -s 50M -S 1000 -q "$SQ"
mkdir -p data
for i in 1 2 3; do head -c $((i * 1000)) /dev/urandom >"data/exp$i"; done
head -c 3000000 /dev/urandom >data/big
printf 'a bulletin' >data/ids1
head -c 500 /dev/urandom >data/hds1
expect_rc 0 pqinsert -q "$SQ" -f EXP data/exp1 data/exp2 data/exp3 data/big
expect_rc 0 pqinsert -q "$SQ" -f IDS data/ids1
expect_rc 0 pqinsert -q "$SQ" -f HDS data/hds1

PORT=$(free_port)
start_ldmd() {
  : >"$LOG"
  background "$LDMD_DIR/ldmd" -f -l "$LOG" -P "$PORT" -I 127.0.0.1 -m 3600 \
    "$CONF" 2>>"$SCRATCH/ldmd.err"
  LDMD_PID=$BG
  wait_until 10 grep -q 'listening on 127.0.0.1 port' "$LOG" ||
    fail "ldmd did not start on port $PORT: $(cat "$SCRATCH/ldmd.err")"
}
start_ldmd

# 1. One pass: EXP and IDS sent and stored byte for byte; HDS is not
# accepted (RECLASS), so not sent.
expect_rc 0 pqsend -q "$SQ" -h "127.0.0.1:$PORT" -i 0 -v -l - -o 600
expect_in "$ERR" "Starting Up ("
expect_in "$ERR" "accepts only "
expect_in "$ERR" "doesn't want "
expect_in "$ERR" " HDS 000  data/hds1"
expect_in "$ERR" "Exiting"
expect_in "$ERR" ">     nprods min_latency max_latency"
grep -qE '> +5 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$' "$ERR" ||
  fail "statistics: not 5 products sent"
[[ $(count "$Q") == 5 ]] || fail "ldmd's queue holds $(count "$Q"), not 5"
for f in exp1 exp2 exp3 big ids1; do same "data/$f"; done
[[ $(count "$Q" '^data/hds1$') == 0 ]] || fail "HDS arrived"
# log ident: the remote host, as LDM's
grep -q "^[0-9T.Z]* 127\.0\.0\.1\[" "$ERR" || fail "log ident is not the host"
ok "one pass: 5 products byte for byte; RECLASS respected; LDM's lines"

# 2. Again: all duplicates, nothing new.
expect_rc 0 pqsend -q "$SQ" -h "127.0.0.1:$PORT" -i 0 -l - -o 600
[[ $(count "$Q") == 5 ]] || fail "the second pass added products"
# -f/-p narrow the offer
printf 'only this' >data/exp4
expect_rc 0 pqinsert -q "$SQ" -f EXP data/exp4
expect_rc 0 pqsend -q "$SQ" -h "127.0.0.1:$PORT" -i 0 -v -l - -f EXP \
  -p 'exp4$'
[[ $(grep -c ' EXP 000  data/exp4$' "$ERR") == 1 ]] || fail "exp4 not sent once"
expect_not_in "$ERR" "data/exp1"
same data/exp4
ok "duplicates add nothing; -f and -p narrow the offer"

# 3. Running: a new product goes at once; ldmd stops and comes back on the
# same port: what was inserted meanwhile arrives.
background pqsend -q "$SQ" -h "127.0.0.1:$PORT" -t 2 -T 120 -i 5 -v \
  -l "$SCRATCH/ps.log"
PS=$BG
wait_until 20 grep -q 'data/exp4$' "$SCRATCH/ps.log" ||
  fail "pqsend did not start sending: $(cat "$SCRATCH/ps.log")"
printf 'new one' >data/new1
expect_rc 0 pqinsert -q "$SQ" -f IDS data/new1
wait_until 20 eval "[[ \$(count \"\$Q\" '^data/new1\$') == 1 ]]" ||
  fail "new1 not sent while running"
kill -TERM "$LDMD_PID"
wait_exit "$LDMD_PID" 20
LDMD_PID=
printf 'while down' >data/down1
head -c 100000 /dev/urandom >data/down2
expect_rc 0 pqinsert -q "$SQ" -f EXP data/down1 data/down2
start_ldmd
wait_until 60 eval "[[ \$(count \"\$Q\" '^data/down[12]\$') == 2 ]]" ||
  fail "products inserted while ldmd was down did not arrive: $(tail -5 "$SCRATCH/ps.log")"
same data/down1
same data/down2
kill -USR1 "$PS"
wait_until 10 grep -q '> Up since:' "$SCRATCH/ps.log" ||
  fail "no statistics on SIGUSR1"
stop_expect "$PS" pqsend TERM 10 7 "$SCRATCH/ps.log"
grep -qE '> +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{3}$' "$SCRATCH/ps.log" ||
  fail "no connection statistics"
ok "running: new products at once; nothing lost across ldmd's restart; SIGTERM exit 7"

# 4. Nothing listens: give up after -T; the queue missing; usage errors.
DEAD=$(dead_port)
expect_rc 4 pqsend -q "$SQ" -h "127.0.0.1:$DEAD" -i 0 -t 1 -T 3 -l -
expect_in "$ERR" "Session time-limit reached (3 seconds)"
expect_in "$ERR" "> Never connected"
expect_rc 2 pqsend -q "$SCRATCH/none.pq" -h "127.0.0.1:$PORT" -i 0 -l -
expect_rc 6 pqsend -q "$SQ" -t 5 -T 10
expect_in "$ERR" "Total timeout 10 too small for rpc timeout 5"
expect_rc 6 pqsend -q "$SQ" -o 7200
expect_in "$ERR" "Total timeout 3600 too small for offset 7200"
expect_rc 6 pqsend -q "$SQ" -p '('
expect_rc 6 pqsend -q "$SQ" extra
ok "no server: exit 4 after -T; no queue: 2; usage: 6"

ldmd_stop "$LOG"
ok "ldmd stopped cleanly"
