#!/usr/bin/env bash
# pqact and decoders that misbehave, with real processes: one decoder
# stopped (SIGSTOP) while the other entries go on filing and piping, and
# pqact logs which decoder is behind; a decoder that takes nothing for -t
# seconds is given up and the next product starts a new one; a decoder
# that crashes is started again and gets the product it was reading once
# more; a product it dies on twice is logged and skipped; a decoder killed
# while idle is replaced; SIGTERM stops pqact promptly while a decoder is
# stuck.  Waits are bounded and for events (files, logs, process states).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 8M -S 400 -q "$Q"
tab=$'\t'
S=$SCRATCH

decoder_script "$S/dec.sh"
# lines.sh NAME: reads lines (one byte at a time, as bash's read does on
# a pipe); dies of a line with POISON, and of a line with FLAKY the first
# time it sees one; exits 0 at a line with QUIT; appends the others to
# NAME.out.
cat >"$S/lines.sh" <<'SH'
#!/bin/bash
echo $$ >>"$1.pids"
while IFS= read -r line; do
  case $line in
  *POISON*) exit 3 ;;
  *QUIT*) exit 0 ;;
  *FLAKY*) [ -e "$1.flaked" ] || { : >"$1.flaked"; kill -SEGV $$; } ;;
  esac
  printf '%s\n' "$line" >>"$1.out"
done
SH
chmod +x "$S/dec.sh" "$S/lines.sh"

cat >"$CONF" <<CONF
EXP${tab}^stuck${tab}PIPE${tab}$S/dec.sh $S/stuck
EXP${tab}^(stuck|free)${tab}PIPE${tab}$S/dec.sh $S/free
EXP${tab}^(stuck|free) (.*)${tab}FILE${tab}-close${tab}files/\\2
EXP${tab}^line${tab}PIPE${tab}$S/lines.sh $S/lines
CONF

background "$PQACT" -l "$S/log" -d "$DATA" -i 600 -t 8 "$CONF" 2>"$ERR"
PQ=$BG
wait_until 10 asleep_in "$PQ" 'futex|poll|nanosleep' ||
  fail "pqact never waited for products"

# pids_of NAME N: NAME.pids has N lines.
pids_of() {
  [[ -f $S/$1.pids ]] && (($(wc -l <"$S/$1.pids") == $2))
}
# has_size FILE N
has_size() {
  [[ -f $1 ]] && (($(wc -c <"$1") == $2))
}
stopped() {
  [[ $(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) == T ]]
}
now() { date +%s; }

# 1. One decoder stopped: everything else goes on.
head -c 100000 /dev/urandom >big
put EXP 1 "$(now)" 0 here "stuck 0" big
wait_until 10 pids_of stuck 1 || fail "the stuck decoder did not start"
wait_until 10 has_size "$S/stuck.out" 100000 || fail "the decoder did not read the first product"
STUCK=$(cat "$S/stuck.pids")
kill -STOP "$STUCK"
wait_until 10 stopped "$STUCK" || fail "the decoder did not stop"
# 2 MiB more than its pipe holds, while the other decoder and the files
# get every product.
for i in $(seq 1 30); do
  put EXP 1 "$(now)" "$i" here "stuck $i" big
done
wait_until 20 has_size "$S/free.out" $((31 * 100000)) ||
  fail "with one decoder stopped, the other read $(wc -c <"$S/free.out") of $((31 * 100000)) bytes"
n=$(find "$DATA/files" -type f | wc -l)
((n == 31)) || fail "with one decoder stopped, $n of 31 files were filed"
stopped "$STUCK" || fail "the stuck decoder ran again: the test is void"
ok "one decoder stopped: the other decoder and the files got all 31 products"
wait_until 10 grep -qF "decoder is behind: cmd=\"$S/dec.sh $S/stuck\"" "$S/log" ||
  fail "pqact did not say which decoder is behind"
ok "pqact logs the decoder that is behind, by its command line"

# 2. Stuck for longer than -t: given up; the next product starts a new one.
wait_until 20 grep -qF "write to decoder timed out" "$S/log" ||
  fail "a decoder that reads nothing for -t 8 s was not given up"
expect_in "$S/log" "cmd=\"$S/dec.sh $S/stuck\""
printf 'after\n' >after
put EXP 1 "$(now)" 99 here "stuck after" after
wait_until 10 pids_of stuck 2 || fail "the next product did not start a new decoder"
wait_until 10 grep -q after "$S/stuck.out" || fail "the new decoder did not get the product"
kill -CONT "$STUCK"
ok "a decoder stuck for -t is given up and the next product starts another"

# 3. Crashes: FLAKY kills the decoder once (it gets it again), POISON
# every time (skipped after the second), the others once each.
for w in a FLAKY b POISON c; do
  printf 'line %s\n' "$w" >"l.$w"
  put EXP 1 "$(now)" 0 here "line $w" "l.$w"
done
printf 'line %s\n' a FLAKY b c >want.lines
wait_until 20 has_size "$S/lines.out" "$(wc -c <want.lines)" ||
  fail "the crashing decoder wrote $(tr "\n" " " <"$S/lines.out"); log: $(grep -E "decoder|skipping|child" "$S/log" | tail -8)"
cmp -s "$S/lines.out" want.lines || fail "the decoder's lines: $(tr '\n' ' ' <"$S/lines.out")"
wait_until 10 grep -qF "skipping product the decoder died on twice: line POISON" "$S/log" ||
  fail "the poison product was not logged as skipped"
pids_of lines 4 || fail "$(wc -l <"$S/lines.pids") decoders started, expected 4 (1 + FLAKY + POISON twice)"
ok "a crashed decoder is restarted and gets its product again; a product that kills it twice is skipped"

# 4. A decoder that exits 0 of itself is replaced; what it read whole is
# not written again (it did not die of it).
for w in QUIT d; do
  printf 'line %s\n' "$w" >"l.$w"
  put EXP 1 "$(now)" 0 here "line $w" "l.$w"
done
printf 'line d\n' >>want.lines
wait_until 10 has_size "$S/lines.out" "$(wc -c <want.lines)" ||
  fail "after its decoder exited, the decoder wrote $(tr '\n' ' ' <"$S/lines.out")"
cmp -s "$S/lines.out" want.lines || fail "the decoder's lines: $(tr '\n' ' ' <"$S/lines.out")"
pids_of lines 5 || fail "$(wc -l <"$S/lines.pids") decoders started, expected 5"
ok "a decoder that exits by itself is replaced; nothing lost, nothing twice"

# 5. SIGTERM with a decoder stopped and bytes waiting for it.
STUCK=$(tail -1 "$S/stuck.pids")
kill -STOP "$STUCK"
for i in $(seq 1 15); do
  put EXP 1 "$(now)" "$i" here "stuck x$i" big
done
wait_until 20 has_size "$S/free.out" $((46 * 100000 + 6)) ||
  fail "with a decoder stopped again, the other read $(wc -c <"$S/free.out") bytes"
stopped "$STUCK" || fail "the stuck decoder ran again: the test is void"
stop_within "$PQ" TERM 5 pqact
((rc == 0)) || fail "pqact exited $rc after SIGTERM"
kill -CONT "$STUCK"
sanitizer_check "$ERR"
ok "SIGTERM stops pqact in $ms ms while a decoder is stuck"
