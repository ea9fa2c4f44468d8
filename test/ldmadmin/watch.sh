#!/usr/bin/env bash
# ldmadmin watch: once it follows the queue, the line of every product
# inserted from then on that -f and -p select (a product created an hour
# before its insertion included), on standard output, and no line of the
# others nor of the products inserted before it began; SIGINT and SIGTERM
# stop it at once (exit 0); a bad -f or -p, or no queue, is refused with a
# message.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

admin_fails watch -- "there is no queue $Q to watch: ldmadmin mkqueue makes it"
admin_ok mkqueue
insert() { printf '%s' "$2" | pqinsert -q "$Q" -f "$1" -p "$2" || fail "pqinsert $2"; }
insert IDS go.before

# asleep: is a reader asleep in pq_wait() on the queue (test/cli's helper)?
asleep() {
  local n
  n=$("$HELPER" sleepers "$Q") && ((n >= 1))
}

# watch_for SIGNAL: start watch -f 'IDS|EXP' -p '^go' (pqclihelper's old
# products are EXP), wait until it follows,
# insert, wait for the lines it must print, check the others are absent,
# stop it with SIGNAL.
watch_for() {
  local out=$SCRATCH/watch.$1 err=$SCRATCH/watch.$1.err
  background sh "$ADMIN" watch -f 'IDS|EXP' -p '^go' >"$out" 2>"$err"
  local w=$BG
  wait_until 10 asleep || fail "watch does not follow the queue: $(cat "$err")"
  insert IDS "go.$1"
  insert HDS "go.$1.hds"
  insert IDS "stay.$1"
  "$HELPER" insert-old "$Q" 1 3600 "go.old.$1" >/dev/null || fail "insert-old"
  insert IDS "go.$1.last"
  wait_until 10 grep -q " go\.$1\.last\$" "$out" || fail "watch printed no line of go.$1.last: $(cat "$out" "$err")"
  grep -qE "^ +[0-9]+ [0-9]{14}\.[0-9]{6} IDS [0-9]{3}  go\.$1\$" "$out" ||
    fail "no LDM product line of go.$1 on stdout: $(cat "$out")"
  grep -q " go\.old\.$1\.0\$" "$out" || fail "watch missed a product created an hour before its insertion"
  [[ $(wc -l <"$out") == 3 ]] || fail "watch printed other products (HDS, stay, go.before): $(cat "$out")"
  expect_not_in "$err" " go."
  stop_within "$w" "$1" 5 "ldmadmin watch"
  ((rc == 0)) || fail "watch exited $rc after SIG$1"
  asleep && fail "a reader still waits on the queue after watch stopped"
  ok "watch -f 'IDS|EXP' -p '^go': the lines of what it selects, stopped by SIG$1 in $ms ms"
}
watch_for INT
watch_for TERM

admin_fails watch -f NOSUCH -- 'cannot watch the queue'
expect_in "$ERR" 'bad feedtype "NOSUCH"'
admin_fails watch -p '(' -- 'cannot watch the queue'
expect_in "$ERR" 'bad pattern "("'
admin_fails watch extra -- 'usage:'
ok "a bad -f, -p or operand is refused with a message"
