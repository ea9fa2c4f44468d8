#!/usr/bin/env bash
# pqact EXEC on real products: a script run per product with its arguments
# substituted (sub-matches, (seq), strftime, double quotes); -wait (spelled
# -wa: two letters) makes the next product's action start only after the
# script has ended, as files the scripts leave show; the cap
# (/pqact/max-children 2): with 100 products whose scripts block until the
# test releases them, never more than 2 run at once, the cap is logged
# once, and all 100 run once released, none lost or doubled; a command
# that does not exist is logged and pqact goes on; SIGTERM while products
# wait for the cap stops pqact promptly.  Waits are for files and process
# states, bounded; the scripts' own waits for the release are bounded too.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
tab=$'\t'
FAIL_LOGS=(OUT:stdout ERR:stderr LOG:log)
LOG=$SCRATCH/pqact.log

expect_rc 0 pqcreate -s 2M -S 400 -q "$Q"
NOW=$(date +%s)
printf 'x\n' >x

# count GLOB: how many files match GLOB now.
count() {
  local f n=0
  for f in $1; do
    [[ -e $f ]] && n=$((n + 1))
  done
  echo "$n"
}
# has_count N GLOB: exactly N files match.
has_count() {
  [[ $(count "$2") == "$1" ]]
}
# lines_are N FILE: FILE has N lines.
lines_are() {
  [[ -f $2 && $(wc -l <"$2") -eq $1 ]]
}

# ---- per product, with substitutions ----
cat >args.sh <<'SH'
#!/bin/sh
# args.sh NAME ARGS...: write the arguments, one a line, to args.NAME.
name=$1
shift
printf '%s\n' "$@" >"args.$name.tmp" && mv "args.$name.tmp" "args.$name"
SH
chmod +x args.sh
T=$(utc '2024-02-29 12:34:56')
put EXP 41 "$T" 0 here 'exec one KABC' x
put EXP 42 "$T" 0 here 'exec two KXYZ' x
cat >"$CONF" <<CONF
EXP${tab}^exec ([a-z]+) (K...)${tab}EXEC${tab}$SCRATCH/args.sh \\1 "\\2 %Y%m%d" (seq) &
CONF
pqact_run -o "$ALL" -i 0 "$CONF"
((rc == 0)) || fail "pqact exited $rc"
both_ran() {
  [[ -f $DATA/args.one && -f $DATA/args.two ]]
}
wait_until 10 both_ran ||
  fail "the EXEC scripts did not run within 10 s"
printf '%s\n' 'KABC 20240229' 41 exec one KABC >want.one
printf '%s\n' 'KXYZ 20240229' 42 exec two KXYZ >want.two
same "$DATA/args.one" want.one
same "$DATA/args.two" want.two
ok "EXEC per product, with \\1, quotes, strftime, (seq) and &"

# ---- -wait: the next product's script starts after this one's ended ----
cat >step.sh <<'SH'
#!/bin/sh
# step.sh NAME PREV: record whether PREV's script had ended when this one
# started, then (NAME w1 only) wait, at most 60 s, to be released.
echo "$(if [ -e "done.$2" ]; then echo after; else echo before; fi)" >"order.$1"
: >"started.$1"
if [ "$1" = w1 ]; then
  i=0
  while [ ! -e release.w1 ] && [ $i -lt 1200 ]; do
    sleep 0.05
    i=$((i + 1))
  done
fi
: >"done.$1"
SH
chmod +x step.sh
put EXP 0 "$NOW" 0 here 'wait w1 none' x
put EXP 0 "$NOW" 0 here 'wait w2 w1' x
cat >"$CONF" <<CONF
EXP${tab}^wait (..) (.*)${tab}EXEC${tab}-wa $SCRATCH/step.sh \\1 \\2
CONF
background "$PQACT" -l "$LOG" -d "$DATA" -o "$ALL" -i 0 "$CONF"
pid=$BG
wait_until 10 test -e "$DATA/started.w1" || fail "w1's script did not start"
wait_until 10 asleep_in "$pid" poll ||
  fail "pqact does not wait for w1's script"
[[ ! -e $DATA/started.w2 ]] || fail "w2's script started while w1's ran"
: >"$DATA/release.w1"
wait_until 10 test -e "$DATA/done.w2" || fail "w2's script did not run"
wait_until 10 gone "$pid" || fail "pqact -i 0 did not exit"
wait "$pid" || fail "pqact exited $?"
[[ $(cat "$DATA/order.w2") == after ]] ||
  fail "w2's script started before w1's ended: $(cat "$DATA/order.w2")"
ok "EXEC -wa (-wait): the next product's script starts after it ends"

# ---- the cap ----
pqact_registry "<max-children>2</max-children>"
block_script block.sh
mkdir cap
for i in $(seq 1 100); do
  put EXP 0 "$NOW" 0 here "cap $i" x
done
cat >"$CONF" <<CONF
EXP${tab}^cap ([0-9]+)${tab}EXEC${tab}$SCRATCH/block.sh $SCRATCH/cap \\1
CONF
background "$PQACT" -l "$LOG" -d "$DATA" -o "$ALL" -i 0 "$CONF"
pid=$BG
cd cap || fail "cd cap"
wait_until 10 has_count 2 'running.*' ||
  fail "2 scripts did not start ($(count 'running.*') run)"
wait_until 10 asleep_in "$pid" poll ||
  fail "pqact is not waiting for a child to exit"
has_count 2 'running.*' || fail "$(count 'running.*') scripts run, cap 2"
lines_are 2 started || fail "$(wc -l <started) scripts started, cap 2"
[[ $(grep -c 'the cap (registry /pqact/max-children)' "$LOG") == 1 ]] ||
  fail "the cap was not logged once"
expect_in "$LOG" "2 children are running, the cap (registry /pqact/max-children): products wait"
: >release
wait_until 60 lines_are 100 finished ||
  fail "$(wc -l <finished) of 100 scripts ended within 60 s"
wait_until 10 gone "$pid" || fail "pqact -i 0 did not exit"
wait "$pid" || fail "pqact exited $?"
[[ ! -e overcap ]] || fail "more than 2 ran at once: $(head -3 overcap)"
[[ $(sort -n started | uniq | wc -l) == 100 && $(wc -l <started) == 100 ]] ||
  fail "not every product's script ran once"
seq 1 100 | cmp -s - <(sort -n started) || fail "products lost"
(($(grep -c 'the cap (registry' "$LOG") < 50)) ||
  fail "the cap was logged for each product"
expect_not_in "$LOG" "cannot start"
cd "$SCRATCH" || fail "cd"
ok "cap 2: at most 2 of 100 at once, all 100 run once released"

# ---- a command that does not exist ----
: >"$LOG"
put EXP 0 "$NOW" 0 here 'missing one' x
cat >"$CONF" <<CONF
EXP${tab}^missing${tab}EXEC${tab}no-such-command-for-pqact arg
EXP${tab}^missing (.*)${tab}FILE${tab}-close${tab}after.\\1
CONF
background "$PQACT" -l "$LOG" -d "$DATA" -o "$ALL" -i 1 "$CONF"
pid=$BG
wait_until 10 test -f "$DATA/after.one" ||
  fail "pqact did not go on after a command that does not exist"
wait_until 10 grep -qF 'cannot execute "no-such-command-for-pqact": No such file or directory' "$LOG" ||
  fail "the command that does not exist was not logged"
wait_until 10 grep -qE 'Child [0-9]+ exited with status 127 \(no-such-command-for-pqact arg\)' "$LOG" ||
  fail "its exit was not logged"
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc"
ok "a command that does not exist: logged, pqact goes on"

# ---- SIGTERM while products wait for the cap ----
: >"$LOG"
rm -rf cap && mkdir cap
for i in 1 2 3 4; do
  put EXP 0 "$NOW" 0 here "term $i" x
done
cat >"$CONF" <<CONF
EXP${tab}^term ([0-9]+)${tab}EXEC${tab}$SCRATCH/block.sh $SCRATCH/cap \\1
CONF
background "$PQACT" -l "$LOG" -d "$DATA" -o "$ALL" -i 600 "$CONF"
pid=$BG
wait_until 10 has_count 2 'cap/running.*' || fail "2 scripts did not start"
wait_until 10 asleep_in "$pid" poll || fail "pqact is not waiting for the cap"
stop_within "$pid" TERM 5
((rc == 0)) || fail "pqact exited $rc after SIGTERM over the cap"
expect_in "$LOG" "waited for a child to exit"
lines_are 2 cap/started || fail "a product's script ran after the stop"
: >cap/release
wait_until 60 lines_are 2 cap/finished || fail "the scripts did not end"
ok "SIGTERM over the cap stops pqact in $ms ms"
