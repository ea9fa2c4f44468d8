#!/usr/bin/env bash
# A kill -9 while a decoder is behind redoes only what that decoder had
# not taken: a table files every product and pipes it to two decoders;
# one is stopped (SIGSTOP) after its first product, so that products wait
# for it in pqact's memory while the files and the other decoder get them
# all.  The state file then lists the stopped decoder (one page, LDM's
# time line first), pqact is killed with SIGKILL, the stopped decoder is
# continued (it reads what its pipe held and sees end of file) and pqact
# is started again on the same table.  Exactly: each file holds each
# product once; the free decoder's output each product once (the restart
# gives it nothing); the stopped decoder's output is what it read before
# (products P0..P(m-1) whole, then the first bytes of P(m) that were in
# its pipe), then P(m)..P30 whole from the restart, where P(m) is the
# oldest product that was waiting for it; and the state is LDM's bytes
# again once nothing is held.  Then the same with SIGTERM: the products
# waiting for a stopped decoder at a clean exit are given to it by the next
# run, and only to it.  Last, a kill -9 during a restart that is still
# redoing for two decoders: one stopped again (the restart's own decoder
# stops pqact and itself as it starts), one held (it reads only once the
# test has looked at the state: were it reading, it could catch up before
# pqact is stopped, and the state would rightly no longer list it); the
# next restart gives each what it still had not got, and the files
# nothing.  Waits are for events (sizes, processes, the state file's
# lines), bounded.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 16M -S 5000 -q "$Q"
tab=$'\t'
S=$SCRATCH
STATE=$CONF.state
SIZE=100000
HDR="# The following line contains the insertion-time of the last, successfully-
# processed data-product.  Do not modify it unless you know exactly what
# you're doing!"

# dec.sh NAME: records its pid in NAME.pids, appends what it reads to
# NAME.out.  It ignores SIGHUP: when pqact dies, the decoder's process
# group is orphaned, and the kernel sends SIGHUP then SIGCONT to such a
# group when a process in it is stopped, which would kill the stopped one
# before it reads what its pipe holds (a decoder that is only slow is not
# stopped, and gets no SIGHUP).
# With NAME.stop there, it stops its parent (pqact) and then itself when
# it starts, once.  While NAME.hold is there, it reads nothing (the test
# removes the file; so does the cleanup, with the scratch directory).
cat >"$S/dec.sh" <<'SH'
#!/bin/sh
echo $$ >>"$1.pids"
trap '' HUP
if [ -e "$1.stop" ]; then
  rm -f "$1.stop"
  kill -STOP "$PPID"
  kill -STOP $$
fi
while [ -e "$1.hold" ]; do sleep 0.05; done
exec cat >>"$1.out"
SH
chmod +x "$S/dec.sh"

cat >"$CONF" <<CONF
EXP${tab}^p${tab}PIPE${tab}$S/dec.sh $S/stuck
EXP${tab}^p${tab}PIPE${tab}$S/dec.sh $S/free
EXP${tab}^p([0-9]+)${tab}FILE${tab}-close${tab}files/\\1
EXP${tab}^p${tab}FILE${tab}all
EXP${tab}^q${tab}FILE${tab}qall
CONF

# Products: SIZE bytes each, a header line naming it, then random bytes.
mkdir -p "$S/p"
for i in $(seq -w 0 60); do
  { printf 'product %s\n' "$i"; head -c $((SIZE - 11)) /dev/urandom; } >"$S/p/$i"
done
now() { date +%s; }
has_size() {
  [[ -f $1 ]] && (($(wc -c <"$1") == $2))
}
pids_of() {
  [[ -f $S/$1.pids ]] && (($(wc -l <"$S/$1.pids") == $2))
}
stopped() {
  [[ $(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) == T ]]
}
nfiles() {
  (($(find "$DATA/files" -type f 2>/dev/null | wc -l) == $1))
}
# cat_products FIRST LAST: the products' bytes, in order.
cat_products() {
  local i
  for ((i = 10#$1; i <= 10#$2; i++)); do cat "$S/p/$(printf %02d "$i")"; done
}
# same_bytes FILE EXPECTED_FILE WHAT
same_bytes() {
  cmp -s "$1" "$2" || fail "$3: $(wc -c <"$1") bytes, expected $(wc -c <"$2"); first difference: $(cmp "$1" "$2" 2>&1 | head -1)"
}
# lists_stuck: the state file is one page, its time line (LDM's: the first
# line not a comment) comes before our lines, which list the stopped
# decoder and not the free one.
lists_stuck() {
  [[ -f $STATE ]] && (($(wc -c <"$STATE") == 4096)) &&
    grep -qE "^#-[0-9]+\.[0-9]{6} PIPE $S/dec.sh $S/stuck\$" "$STATE" &&
    grep -qE '^#\+[0-9]+\.[0-9]{6}$' "$STATE"
}
# ldm_state_ok: the state file is LDM's bytes (the three comment lines,
# then sec.usec and a newline, nothing else).
ldm_state_ok() {
  local rec
  rec=$(sed -n 4p "$STATE")
  [[ $rec =~ ^[0-9]+\.[0-9]{6}$ ]] || fail "state record '$rec' is not sec.usec"
  printf '%s\n%s\n' "$HDR" "$rec" | cmp -s - "$STATE" ||
    fail "the state file is not LDM's bytes: $(od -c "$STATE" | head -12)"
}
# gone_pids NAME: every decoder NAME.pids names has exited.
gone_pids() {
  local p
  while read -r p; do
    gone "$p" || return 1
  done <"$S/$1.pids"
  return 0
}

# run_until_stuck LOG FIRST LAST: pqact running on the table with the
# stuck decoder stopped after it read product FIRST; products FIRST+1..LAST
# filed and read by the free decoder (their outputs and the files empty at
# the start); pqact waiting (not within a
# product), the state listing the stopped decoder.  PQ: pqact's pid,
# STUCK: the stopped decoder's.
run_until_stuck() {
  local log=$1 first=$((10#$2)) last=$((10#$3)) n_stuck n_free i
  n_stuck=0 n_free=0
  [[ -f $S/stuck.pids ]] && n_stuck=$(wc -l <"$S/stuck.pids")
  [[ -f $S/free.pids ]] && n_free=$(wc -l <"$S/free.pids")
  background "$PQACT" -l "$log" -d "$DATA" -i 600 -t 3600 "$CONF" 2>>"$ERR"
  PQ=$BG
  wait_until 10 asleep_in "$PQ" 'futex|poll|nanosleep' ||
    fail "pqact never waited for products"
  put EXP 1 "$(now)" 0 here "p$2" "$S/p/$2"
  wait_until 10 pids_of stuck $((n_stuck + 1)) || fail "the stuck decoder did not start"
  wait_until 10 has_size "$S/stuck.out" "$SIZE" ||
    fail "the decoder did not read product $first"
  STUCK=$(tail -1 "$S/stuck.pids")
  kill -STOP "$STUCK"
  wait_until 10 stopped "$STUCK" || fail "the decoder did not stop"
  for i in $(seq -w $((first + 1)) "$last"); do
    put EXP 1 "$(now)" 0 here "p$i" "$S/p/$i"
  done
  wait_until 20 has_size "$S/free.out" $(((last - first + 1) * SIZE)) ||
    fail "the free decoder read $(wc -c <"$S/free.out") of $(((last - first + 1) * SIZE)) bytes"
  wait_until 20 nfiles $((last - first + 1)) || fail "not every product was filed"
  pids_of free $((n_free + 1)) || fail "the free decoder was started again"
  # Asleep, it is not within a product: the last one's state is written.
  wait_until 10 asleep_in "$PQ" 'poll' || fail "pqact did not wait for its decoders"
  wait_until 10 lists_stuck ||
    fail "the state file does not list the decoder behind: $(head -c 600 "$STATE")"
  stopped "$STUCK" || fail "the stuck decoder ran again: the test is void"
}

# ---- kill -9 with a decoder behind ----
run_until_stuck "$S/log1" 00 30
grep -qF "$S/free" "$STATE" && fail "the state file lists the free decoder"
t0=$(awk '!/^#/ { print; exit }' "$STATE")
[[ $t0 =~ ^[0-9]+\.[0-9]{6}$ ]] || fail "LDM's time line is '$t0'"
ok "while a decoder is behind the state file is one page: LDM's time, then the decoder behind"

kill -KILL "$PQ"
wait_until 10 gone "$PQ" || fail "pqact did not die of SIGKILL"
kill -CONT "$STUCK"
wait_until 20 gone_pids stuck || fail "the stopped decoder did not finish its pipe"
wait_until 20 gone_pids free || fail "the free decoder did not see end of file"
before=$(wc -c <"$S/stuck.out")
m=$((before / SIZE))
j=$((before % SIZE))
((m >= 1 && m <= 30)) ||
  fail "the stopped decoder read $before bytes before the restart: its pipe held everything, the test is void"

run "$PQACT" -l "$S/log2" -d "$DATA" -i 0 -t 60 "$CONF"
((rc == 0)) || fail "the restart exited $rc"
expect_in "$S/log2" "but for 1 decoder behind"
wait_until 20 gone_pids stuck || fail "the restarted decoder did not finish"
pids_of free 1 || fail "the restart started the free decoder: $(wc -l <"$S/free.pids") pids"
pids_of stuck 2 || fail "the restart did not start the stopped decoder's command again"

for i in $(seq -w 0 30); do
  same_bytes "$DATA/files/$i" "$S/p/$i" "files/$i"
done
nfiles 31 || fail "more files than products"
cat_products 0 30 >want
same_bytes "$DATA/all" want "all (every product once, in order)"
same_bytes "$S/free.out" want "the free decoder's output"
{
  cat_products 0 $((m - 1))
  head -c "$j" "$S/p/$(printf %02d "$m")"
  cat_products "$m" 30
} >want.stuck
same_bytes "$S/stuck.out" want.stuck "the stopped decoder's output (P0..P$((m - 1)), $j bytes of P$m, then P$m..P30)"
ok "kill -9: files and the free decoder got each product once; the stopped decoder got P$m..P30 again, the products it had not taken"
ldm_state_ok
ok "with nothing held the state is LDM's bytes again"

# ---- SIGTERM with a decoder behind ----
rm -f "$S/stuck.out" "$S/free.out" "$DATA/all"
rm -rf "$DATA/files"
run_until_stuck "$S/log3" 31 60
# Then a product no decoder takes: the newest is done, and still the state
# must keep the products that wait for the stopped decoder.
printf 'q\n' >"$S/q"
put EXP 1 "$(now)" 0 here q "$S/q"
wait_until 10 has_size "$DATA/qall" 2 || fail "the product for FILE alone was not filed"
wait_until 10 asleep_in "$PQ" 'poll' || fail "pqact did not wait for its decoders"
stop_within "$PQ" TERM 5 pqact
((rc == 0)) || fail "pqact exited $rc after SIGTERM"
lists_stuck || fail "after SIGTERM the state does not list the decoder behind: $(head -c 600 "$STATE")"
kill -CONT "$STUCK"
wait_until 20 gone_pids stuck || fail "the stopped decoder did not finish its pipe"
before=$(wc -c <"$S/stuck.out")
m=$((before / SIZE + 31))
j=$((before % SIZE))
((m >= 32 && m <= 60)) || fail "the stopped decoder read $before bytes: the test is void"
run "$PQACT" -l "$S/log4" -d "$DATA" -i 0 -t 60 "$CONF"
((rc == 0)) || fail "the restart after SIGTERM exited $rc"
wait_until 20 gone_pids stuck || fail "the restarted decoder did not finish"
for i in $(seq 31 60); do
  same_bytes "$DATA/files/$i" "$S/p/$i" "files/$i after SIGTERM"
done
nfiles 30 || fail "more files than products after SIGTERM"
cat_products 31 60 >want
same_bytes "$DATA/all" want "all after SIGTERM"
same_bytes "$S/free.out" want "the free decoder's output after SIGTERM"
{
  cat_products 31 $((m - 1))
  head -c "$j" "$S/p/$m"
  cat_products "$m" 60
} >want.stuck
same_bytes "$S/stuck.out" want.stuck "the stopped decoder's output after SIGTERM"
has_size "$DATA/qall" 2 || fail "the product for FILE alone was filed again"
ldm_state_ok
sanitizer_check "$ERR"
ok "SIGTERM: the next run gives the stopped decoder P$m..P60, and nothing to the others"

# ---- a kill -9 during the restart's redoing ----
# Products r0000..r3999 of 1000 bytes (more than the decoders' pipes hold),
# a table of their own (so a state file of its own).
CONF2=$S/pqact2.conf
STATE2=$CONF2.state
R=1000
N=4000
cat >"$CONF2" <<CONF
EXP${tab}^r${tab}PIPE${tab}$S/dec.sh $S/d1
EXP${tab}^r${tab}PIPE${tab}$S/dec.sh $S/d2
EXP${tab}^r${tab}PIPE${tab}$S/dec.sh $S/d3
EXP${tab}^r${tab}FILE${tab}rall
CONF
mkdir -p "$S/r"
awk -v n=$N -v dir="$S/r" 'BEGIN {
  pad = sprintf("%993s", ""); gsub(/ /, "x", pad)
  for (i = 0; i < n; i++) {
    f = sprintf("%s/r%04d", dir, i)
    printf "r%04d\n%s\n", i, pad > f
    close(f)
  }
}'
has_size "$S/r/r0000" $R || fail "the products are not $R bytes"
# r_products FIRST: r<FIRST>..r<N-1>, in order.
r_products() {
  local i name names=()
  for ((i = $1; i < N; i++)); do
    printf -v name '%s/r/r%04d' "$S" "$i"
    names+=("$name")
  done
  ((${#names[@]} == 0)) || cat "${names[@]}"
}
r_prefix() { # r_prefix I BYTES
  head -c "$2" "$S/r/$(printf r%04d "$1")"
}
lists() { # lists STATE NAME...: the page lists each decoder NAME
  local name
  [[ -f $1 ]] && (($(wc -c <"$1") == 4096)) || return 1
  for name in "${@:2}"; do
    grep -qE "^#-[0-9]+\.[0-9]{6} PIPE $S/dec.sh $S/$name\$" "$1" || return 1
  done
}
r_insert() { # r_insert FIRST LAST
  local i name names=()
  for ((i = $1; i <= $2; i++)); do
    printf -v name 'r%04d' "$i"
    names+=("$name")
  done
  (cd "$S/r" && pqinsert -q "$Q" "${names[@]}") || fail "pqinsert r$1..r$2 failed"
}

background "$PQACT" -l "$S/log5" -d "$DATA" -i 600 -t 3600 "$CONF2" 2>>"$ERR"
PQ=$BG
wait_until 10 asleep_in "$PQ" 'futex|poll|nanosleep' || fail "pqact never waited"
r_insert 0 0
for d in d1 d2 d3; do
  wait_until 10 has_size "$S/$d.out" $R || fail "$d did not read r0000"
done
D1=$(cat "$S/d1.pids")
D2=$(cat "$S/d2.pids")
kill -STOP "$D1" "$D2"
wait_until 10 stopped "$D1" || fail "d1 did not stop"
wait_until 10 stopped "$D2" || fail "d2 did not stop"
r_insert 1 $((N - 1))
wait_until 30 has_size "$S/d3.out" $((N * R)) || fail "d3 read $(wc -c <"$S/d3.out") bytes"
wait_until 30 has_size "$DATA/rall" $((N * R)) || fail "rall has $(wc -c <"$DATA/rall") bytes"
wait_until 10 asleep_in "$PQ" 'poll' || fail "pqact did not wait for its decoders"
wait_until 10 lists "$STATE2" d1 d2 || fail "the state does not list d1 and d2: $(head -c 700 "$STATE2")"
old_t1=$(sed -n 's/^#+//p' "$STATE2")
kill -KILL "$PQ"
wait_until 10 gone "$PQ" || fail "pqact did not die of SIGKILL"
kill -CONT "$D1" "$D2"
wait_until 20 gone_pids d1 || fail "d1 did not finish its pipe"
wait_until 20 gone_pids d2 || fail "d2 did not finish its pipe"
a1=$(wc -c <"$S/d1.out")
a2=$(wc -c <"$S/d2.out")
((a1 < N * R && a2 < N * R)) || fail "the pipes held every product: the test is void"

# The restart: its d1 stops it and itself at once, while it redoes; its
# d2 reads nothing until the state is checked.
: >"$S/d1.stop"
: >"$S/d2.hold"
background "$PQACT" -l "$S/log6" -d "$DATA" -i 600 -t 3600 "$CONF2" 2>>"$ERR"
PQ=$BG
wait_until 20 stopped "$PQ" || fail "the restart's d1 did not stop it"
B1=$(tail -1 "$S/d1.pids")
wait_until 10 stopped "$B1" || fail "the restart's d1 did not stop itself"
[[ $(sed -n 's/^#+//p' "$STATE2") == "$old_t1" ]] ||
  fail "during the restart T1 is not the old $old_t1: $(head -c 700 "$STATE2")"
lists "$STATE2" d1 d2 ||
  fail "during the restart the state does not list d1 and d2: $(head -c 700 "$STATE2")"
ok "stopped while it redoes, the restart still says the old T1 and both decoders"
kill -KILL "$PQ"
wait_until 10 gone "$PQ" || fail "the restart did not die of SIGKILL"
kill -CONT "$B1"
rm -f "$S/d2.hold"
wait_until 20 gone_pids d1 || fail "the restart's d1 did not finish its pipe"
wait_until 20 gone_pids d2 || fail "the restart's d2 did not finish its pipe"
b1=$(wc -c <"$S/d1.out")
b2=$(wc -c <"$S/d2.out")

run "$PQACT" -l "$S/log7" -d "$DATA" -i 0 -t 60 "$CONF2"
((rc == 0)) || fail "the second restart exited $rc"
wait_until 20 gone_pids d1 || fail "the last d1 did not finish"
wait_until 20 gone_pids d2 || fail "the last d2 did not finish"
wait_until 20 gone_pids d3 || fail "d3 did not finish"
r_products 0 >want
same_bytes "$DATA/rall" want "rall (every product once, in order, over two kills)"
same_bytes "$S/d3.out" want "d3's output"
# three_runs NAME A B: NAME's output is what the first run's decoder read
# (A bytes: r0000.. whole, then the first bytes of the one it was given
# last), what the restart's read (B - A bytes from the product its first
# pipe ended in, whole again, the last perhaps in part), then from the
# product the restart's ended in to the end, from the second restart.  As
# pqact was stopped at any point by a signal, the product under way then
# may have been in the pipe already but not yet in the state: it is the
# one allowed twice, and only when the restart's pipe ended on a whole
# product.
three_runs() {
  local out=$S/$1.out m=$(($2 / R)) k=$(($2 / R + ($3 - $2) / R)) c
  for c in "$k" $((k - 1)); do
    {
      r_products 0 | head -c $((m * R))
      r_prefix "$m" $(($2 % R))
      r_products "$m" | head -c $(((k - m) * R))
      r_prefix "$k" $((($3 - $2) % R))
      r_products "$c"
    } >"want.$1"
    if cmp -s "$out" "want.$1"; then
      ok "$1: r$m on after the first kill, r$c on after the second"
      return 0
    fi
    (((($3 - $2) % R) == 0)) || break
  done
  same_bytes "$out" "want.$1" "$1's output (r$m on after the first kill, r$k on after the second)"
}
three_runs d1 "$a1" "$b1"
three_runs d2 "$a2" "$b2"
STATE=$STATE2 ldm_state_ok
sanitizer_check "$ERR"
ok "a kill -9 during the restart: the next gives each decoder what it had not got, the file nothing twice"
