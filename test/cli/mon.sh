#!/usr/bin/env bash
# pqmon: the 12 fields of -S and LDM's table agree with what was inserted,
# on an empty, a partly filled and a full queue; ages count seconds; -i
# repeats, -e adds maxbytes, an output file is appended to; pqmon is a
# reader (pqcheck does not count it); the table's last column counts the
# products a reader process holds.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 1M -S 50
cap=$(mon_field 2)
((cap >= 1000000 && cap < 1010000)) || fail "dataCapacity $cap for 1M"
expect_rc 0 pqmon -S
[[ $(cat "$OUT") == "0 $cap 0 0 50 0 0 0 -1 -1 -1 0" ]] ||
  fail "empty queue: '$(cat "$OUT")'"
ok "empty queue: $(cat "$OUT")"

make_files f 10 1000
expect_rc 0 pqinsert f/f*
read -r -a S < <(pqmon -S)
[[ ${S[0]} == 0 && ${S[1]} == "$cap" && ${S[4]} == 50 ]] ||
  fail "capacities: ${S[*]}"
[[ ${S[5]} == 10 && ${S[6]} == 10 ]] || fail "product counts: ${S[*]}"
((S[3] >= 10000 && S[3] < 12000)) || fail "dataCurrent: ${S[*]}"
[[ ${S[2]} == "${S[3]}" ]] || fail "dataHighWater != dataCurrent: ${S[*]}"
((S[7] >= 0 && S[7] <= 5 && S[8] >= 0 && S[8] <= S[7])) ||
  fail "ages: ${S[*]}"
[[ "${S[9]} ${S[10]} ${S[11]}" == "-1 -1 0" ]] || fail "MVRT: ${S[*]}"
ok "10 products: ${S[*]}"

# LDM's table, at NOTE level on the log.
expect_rc 0 pqmon
expect_in "$ERR" "nprods nfree  nempty      nbytes  maxprods  maxfree  minempty    maxext  age"
row=$(grep -A1 'nprods nfree' "$ERR" | tail -1 | sed 's/.*NOTE *//')
read -r -a T <<<"$row"
[[ ${T[0]} == 10 && ${T[2]} == 40 && ${T[3]} == "${S[3]}" && ${T[4]} == 10 ]] ||
  fail "table row '$row' disagrees with ${S[*]}"
[[ ${T[6]} == 40 ]] || fail "minempty in '$row'"
expect_in "$ERR" "Starting Up"
[[ ${T[9]} == 0 && ${#T[@]} == 10 ]] || fail "held in '$row'"
expect_rc 0 pqmon -e
expect_in "$ERR" "age    maxbytes   held"
ok "table: $row"

# A reader process holding a product: held 1 (-e: after maxbytes); -S
# keeps LDM's twelve fields; 0 again once the reader is killed.
background "$HELPER" read-hold "$Q" >hold.out
wait_until 10 grep -q holding hold.out || fail "the reader did not start"
expect_rc 0 pqmon
row=$(grep -A1 'nprods nfree' "$ERR" | tail -1 | sed 's/.*NOTE *//')
read -r -a T <<<"$row"
[[ ${T[9]} == 1 ]] || fail "a held product, but held is ${T[9]}: '$row'"
expect_rc 0 pqmon -e
row=$(grep -A1 'nprods nfree' "$ERR" | tail -1 | sed 's/.*NOTE *//')
read -r -a T <<<"$row"
[[ ${T[10]} == 1 && ${#T[@]} == 11 ]] || fail "-e with a held product: '$row'"
read -r -a S < <(pqmon -S)
((${#S[@]} == 12)) || fail "-S has ${#S[@]} fields: ${S[*]}"
kill -KILL "$BG"
wait "$BG" 2>/dev/null
expect_rc 0 pqmon
row=$(grep -A1 'nprods nfree' "$ERR" | tail -1 | sed 's/.*NOTE *//')
read -r -a T <<<"$row"
[[ ${T[9]} == 0 ]] || fail "the reader is gone, but held is ${T[9]}: '$row'"
ok "held: 1 while a reader holds a product, 0 once it is killed"

# Ages are whole seconds since insertion (the products age 2.2 s here: the
# time itself is what is tested).
sleep 2.2
read -r -a S < <(pqmon -S)
((S[7] >= 2 && S[8] >= 2)) || fail "ages after 2 s: ${S[*]}"
[[ ${S[7]} =~ ^[0-9]+$ ]] || fail "age is not an integer: ${S[7]}"

# Full queue: isFull, MVRT set.
expect_rc 0 pqcreate -c -s 100k -S 1000
make_files g 30 10000
expect_rc 0 pqinsert g/f*
read -r -a S < <(pqmon -S)
[[ ${S[0]} == 1 ]] || fail "isFull: ${S[*]}"
((S[9] >= 0 && S[10] > 0 && S[11] > 0)) || fail "MVRT after eviction: ${S[*]}"
((S[6] < 30 && S[5] >= S[6])) || fail "counts after eviction: ${S[*]}"
ok "full queue: ${S[*]}"

# maxfree is the most free regions there have been (LDM's high-water):
# expiring the oldest first opens a gap before the rest, so 2, and it stays
# 2 once the queue is empty again (nfree 1).
expect_rc 0 pqcreate -c -q free.pq -s 1M -S 50
expect_rc 0 pqinsert -q free.pq f/f*
expect_rc 0 pqexpire -q free.pq -a 0 -i 0
expect_rc 0 pqmon -q free.pq
row=$(grep -A1 'nprods nfree' "$ERR" | tail -1 | sed 's/.*NOTE *//')
read -r -a T <<<"$row"
[[ ${T[0]} == 0 && ${T[1]} == 1 && ${T[5]} == 2 ]] ||
  fail "nfree/maxfree after expiring everything: '$row'"
ok "maxfree is a high-water mark: $row"

# -i repeats until SIGTERM, into an output file; a reader is no writer.
background pqmon -S -i 1 mon.out
pid=$BG
wait_until 10 test -s mon.out || fail "no report"
expect_rc 0 pqcheck
wait_until 10 eval '(($(wc -l <mon.out) >= 2))' ||
  fail "pqmon -i 1 reported $(wc -l <mon.out) times in 10 s"
kill -TERM "$pid"
wait "$pid"
[[ $? == 0 ]] || fail "pqmon -i exited non-zero on SIGTERM"
expect_rc 0 pqmon -S mon.out
(($(wc -l <mon.out) >= 3)) || fail "the output file was not appended to"
ok "-i, SIGTERM, output file"

expect_error pqmon -i x
expect_error pqmon -k
expect_error pqmon -q "$SCRATCH/none.pq"
expect_error pqmon -S -q "$SCRATCH/none.pq"
echo junk >junk.pq
expect_error pqmon -q junk.pq
expect_error pqmon -S a b
ok "bad input"
