#!/usr/bin/env bash
# A decoder far behind: past its 32 MiB buffer, the products for a stopped
# decoder wait in the queue, not in pqact's memory, while the other
# decoder and the files get every product; once it runs again it gets
# them all, in order, byte for byte.  Products that leave the queue before
# it can take them are each logged, none silently lost.  Real processes;
# waits are bounded and for events (bytes, files, log lines).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 96M -S 400 -q "$Q"
tab=$'\t'
S=$SCRATCH
decoder_script "$S/dec.sh"
cat >"$CONF" <<CONF
EXP${tab}^(first|big)${tab}PIPE${tab}$S/dec.sh $S/stuck
EXP${tab}^(first|big)${tab}PIPE${tab}$S/dec.sh $S/free
EXP${tab}^big ([0-9]+)${tab}FILE${tab}-close${tab}files/\\1
CONF
has_size() { [[ -f $1 ]] && (($(wc -c <"$1") == $2)); }
stopped() { [[ $(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) == T ]]; }
pids_of() { [[ -f $S/$1.pids ]] && (($(wc -l <"$S/$1.pids") == $2)); }

background "$PQACT" -l "$S/log" -d "$DATA" -i 600 -t 120 "$CONF" 2>"$ERR"
PQ=$BG
wait_until 10 asleep_in "$PQ" 'futex|poll|nanosleep' || fail "pqact never waited"
printf 'first\n' >first
put EXP 1 "$(date +%s)" 0 here first first
wait_until 10 has_size "$S/stuck.out" 6 || fail "the decoder did not start"
STUCK=$(cat "$S/stuck.pids")
kill -STOP "$STUCK"
wait_until 10 stopped "$STUCK" || fail "the decoder did not stop"

# 48 MiB for it: more than its buffer and its pipe hold.
N=48
cp first want.stuck
for i in $(seq 1 $N); do
  head -c 1048576 /dev/urandom >"p.$i"
  put EXP 1 "$(date +%s)" "$i" here "big $i" "p.$i"
  cat "p.$i" >>want.stuck
done
cp want.stuck want.free
wait_until 30 has_size "$S/free.out" "$(wc -c <want.free)" ||
  fail "with one decoder far behind, the other read $(wc -c <"$S/free.out") of $(wc -c <want.free) bytes"
n=$(find "$DATA/files" -type f | wc -l)
((n == N)) || fail "with one decoder far behind, $n of $N files were filed"
stopped "$STUCK" || fail "the stopped decoder ran: the test is void"
cmp -s "$S/free.out" want.free || fail "the other decoder read other bytes"
ok "48 MiB for a stopped decoder: the other decoder and the files got every product"
wait_until 20 grep -qE "decoder is behind: cmd=\"$S/dec.sh $S/stuck\": [0-9]+ products waiting \([0-9]+ bytes in memory, [1-9][0-9]* more products in the queue\)" "$S/log" ||
  fail "pqact did not say that products for the decoder wait in the queue"
kill -CONT "$STUCK"
wait_until 30 has_size "$S/stuck.out" "$(wc -c <want.stuck)" ||
  fail "once running again, the decoder read $(wc -c <"$S/stuck.out") of $(wc -c <want.stuck) bytes"
cmp -s "$S/stuck.out" want.stuck || fail "the decoder that was behind read other bytes, or out of order"
pids_of stuck 1 || fail "the decoder was started again"
ok "running again, it got every product from the queue, in order, byte for byte"

# Past what the queue holds: the products that leave it before the
# stopped decoder takes them are logged, one line each.
kill -STOP "$STUCK"
wait_until 10 stopped "$STUCK" || fail "the decoder did not stop"
: >"$S/stuck.out"
M=150
for i in $(seq 1 $M); do
  put EXP 1 "$(date +%s)" "$i" here "big x$i" "p.$((i % N + 1))"
done
wait_until 60 has_size "$S/free.out" $(($(wc -c <want.free) + M * 1048576)) ||
  fail "with the queue wrapping, the other decoder read $(wc -c <"$S/free.out") bytes"
kill -CONT "$STUCK"
gone_lines() { grep -c "left the queue before decoder could take it: cmd=\"$S/dec.sh $S/stuck\"" "$S/log"; }
settled() {
  local got
  got=$(($(wc -c <"$S/stuck.out") / 1048576))
  ((got + $(gone_lines) == M))
}
wait_until 60 settled ||
  fail "of $M products, the decoder got $(($(wc -c <"$S/stuck.out") / 1048576)) and $(gone_lines) were logged as gone"
(($(gone_lines) > 0)) || fail "no product left the queue: the test is void"
stop_within "$PQ" TERM 10 pqact
((rc == 0)) || fail "pqact exited $rc"
sanitizer_check "$ERR"
ok "the queue wrapped under a stopped decoder: $(gone_lines) products logged as gone, the other $((M - $(gone_lines))) delivered"
