#!/usr/bin/env bash
# pqexpire: deletes by creation time (products made 2 hours ago by the
# helper, fresh ones by pqinsert), honours -f and -p, never deletes a held
# product, loops with -i and stops cleanly on SIGTERM, logs LDM's lines.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 10M -S 1000
"$HELPER" insert-old "$Q" 20 7200 old || fail "insert-old"
"$HELPER" insert-old "$Q" 5 7200 oldids || fail "insert-old"
make_files new 10 100
expect_rc 0 pqinsert new/f*

# -p: only the old products whose identifier matches.
expect_rc 0 pqexpire -i 0 -p '^old\.'
expect_in "$ERR" "> nprods deleted:           20"
expect_in "$ERR" "> First deleted:"
expect_in "$ERR" "> Up since:"
expect_in "$ERR" "Exiting"
[[ $(mon_field 7) == 15 ]] || fail "$(mon_field 7) products left, expected 15"
ok "-p and the statistics lines"

# -f: nothing of another feedtype.
expect_rc 0 pqexpire -i 0 -f IDS
expect_in "$ERR" "> nprods deleted 0"
[[ $(mon_field 7) == 15 ]] || fail "pqexpire -f IDS deleted EXP products"

# A product a reader holds is not deleted.
background "$HELPER" read-hold "$Q" >held.out
wait_until 10 grep -q holding held.out || fail "the reader did not start"
expect_rc 0 pqexpire -i 0
expect_in "$ERR" "> nprods deleted:            4"
[[ $(mon_field 7) == 11 ]] || fail "$(mon_field 7) left, expected 11"
kill -KILL "$BG"
wait "$BG" 2>/dev/null
expect_rc 0 pqexpire -i 0
[[ $(mon_field 7) == 10 ]] || fail "the released product was not expired"
expect_rc 0 pqcat
cat new/f* >expected
cmp -s "$OUT" expected || fail "fresh products were expired"
ok "default age keeps fresh products; held products stay"

# Fractional hours: 0.0003 h = 1.08 s; the products age 1.3 s (the time
# itself is what is tested).
sleep 1.3
expect_rc 0 pqexpire -i 0 -a 0.0003 -w
[[ $(mon_field 7) == 0 ]] || fail "$(mon_field 7) products older than 1.08 s left"
ok "-a in fractional hours"

# Looping: a product is expired on a later pass; SIGUSR1 logs statistics;
# SIGTERM stops it cleanly.
background pqexpire -v -i 1 -a 0.0002 -l "$SCRATCH/loop.log"
pid=$BG
# -v: each pass ends with the queue usage; the product comes after one.
wait_until 10 grep -q "> Queue usage (bytes):" loop.log ||
  fail "the loop did not finish a first pass"
echo one >late
expect_rc 0 pqinsert late
wait_until 10 prods_are 0 || fail "the loop never expired it"
kill -USR1 "$pid"
wait_until 5 grep -q "> Up since" loop.log || fail "no statistics on SIGUSR1"
kill -TERM "$pid"
wait_until 5 grep -q Exiting loop.log || fail "no clean exit on SIGTERM"
wait "$pid"
[[ $? == 0 ]] || fail "pqexpire exited non-zero after SIGTERM"
expect_in loop.log "> Queue usage (bytes):"
expect_in loop.log "> Recycled"
ok "loop, SIGUSR1, SIGTERM"

# Mistakes.
expect_error pqexpire -a -1 -i 0
expect_error pqexpire -a abc -i 0
expect_error pqexpire -i soon
expect_error pqexpire -i 0 extra
expect_error pqexpire -i 0 -p '('
expect_error pqexpire -i 0 -f NOSUCHFEED
expect_error pqexpire -i 0 -q "$SCRATCH/none.pq"
expect_in "$ERR" "No such file or directory"
ok "bad input"
