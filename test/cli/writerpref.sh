#!/usr/bin/env bash
# Writer preference on the queue's control lock (pq/lock.c,
# docs/queue-format.md section 15.7), with real processes:
#
# 1. Order.  Reader A holds the control lock shared; writer B asks for it
#    exclusive and waits; reader C then asks for it shared.  C must not get
#    it before B has had it: without writer preference fcntl grants C's
#    shared lock at once, beside A's, and a stream of such readers starves
#    B.  Each of B and C appends its tag to a file while it holds the lock,
#    so the file's order is the order the lock was granted.
# 2. Crash.  A writer killed with SIGKILL while it waits (its hd_wwait bit
#    set, the intent byte held) leaves nobody stuck: a reader gets the lock
#    at once beside the one still held and clears the dead writer's bit, a
#    new writer gets the lock once the reader lets go, and the queue checks
#    sound.
#
# The helpers that read a go-ahead on stdin are started with their own
# redirection and `&` (not `background`): bash gives an asynchronous
# command /dev/null as stdin otherwise.
# Every step waits for an event (a line printed, a blocked request in
# /proc/locks, a process gone), never for a time.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

expect_rc 0 pqcreate -s 2M -S 100

# lock_waiters_are N: are exactly N lock requests on the queue blocked in
# fcntl(F_OFD_SETLKW) ("->" lines of /proc/locks for its device and inode)?
lock_waiters_are() {
  local dev ino
  read -r dev ino < <(stat -c '%d %i' "$Q") || return 1
  awk -v id="$(printf '%02x:%02x:%d' $((dev >> 8)) $((dev & 0xff)) "$ino")" \
    -v want="$1" '$2 == "->" && $0 ~ (" " id " ") { n++ }
                  END { exit n != want }' /proc/locks
}
# wwait_is N: are N writers marked waiting in the header (hd_wwait)?
wwait_is() {
  [[ $("$HELPER" wwait "$Q") == "$1" ]]
}
# printed FILE WORD: has a helper printed WORD to FILE?
printed() {
  grep -qx "$2" "$1" 2>/dev/null
}
# c_blocked_or_done: reader C is either blocked (a second waiter beside
# writer B) or has already taken the lock (its tag in the order file).
c_blocked_or_done() {
  lock_waiters_are 2 || grep -qx C order 2>/dev/null
}

# --- 1. order --------------------------------------------------------
mkfifo go
exec 3<>go
"$HELPER" take "$Q" excl B order <go >b.out 2>b.err &
b=$!
BG_PIDS+=("$b")
wait_until 30 printed b.out open || fail "writer B did not open the queue: $(cat b.err)"
background "$HELPER" hold-shared "$Q" >a.out 2>a.err
a=$BG
wait_until 30 printed a.out locked || fail "reader A did not take the lock: $(cat a.err)"
echo go >&3
wait_until 60 lock_waiters_are 1 || fail "writer B did not wait for the lock A holds"
wait_until 30 wwait_is 1 || fail "writer B waits without its hd_wwait bit"
"$HELPER" take "$Q" shared C order <<<go >c.out 2>c.err &
c=$!
BG_PIDS+=("$c")
wait_until 60 c_blocked_or_done || fail "reader C neither took the lock nor waited"
if grep -qx C order 2>/dev/null; then
  fail "reader C took the lock shared while writer B waited for it (no writer preference)"
fi
gone "$b" && fail "writer B ended while A held the lock: $(cat b.err)"
kill -KILL "$a"
wait_until 60 gone "$b" || fail "writer B did not get the lock once A was gone"
wait_until 60 gone "$c" || fail "reader C did not get the lock after writer B"
wait "$b" || fail "writer B failed: $(cat b.err)"
wait "$c" || fail "reader C failed: $(cat c.err)"
[[ $(cat order) == $'B\nC' ]] || fail "lock granted in the order $(tr '\n' ' ' <order), not B C"
wwait_is 0 || fail "a writer is still marked waiting after B had the lock"
ok "a reader arriving while a writer waits gets the lock after the writer"

# --- 2. a writer killed while it waits --------------------------------
rm -f order
"$HELPER" take "$Q" excl B2 order <go >b2.out 2>b2.err &
b2=$!
BG_PIDS+=("$b2")
wait_until 30 printed b2.out open || fail "writer B2 did not open the queue: $(cat b2.err)"
background "$HELPER" hold-shared "$Q" >a2.out 2>a2.err
a2=$BG
wait_until 30 printed a2.out locked || fail "reader A2 did not take the lock: $(cat a2.err)"
echo go >&3
wait_until 60 lock_waiters_are 1 || fail "writer B2 did not wait for the lock A2 holds"
wait_until 30 wwait_is 1 || fail "writer B2 waits without its hd_wwait bit"
kill -KILL "$b2"
wait_until 60 gone "$b2" || fail "writer B2 survived SIGKILL"
wait "$b2"
wwait_is 1 || fail "the dead writer's bit vanished before anyone cleared it"
# A reader, while A2 still holds the lock shared: at once, not behind the
# dead writer.
"$HELPER" take "$Q" shared C2 order <<<go >c2.out 2>c2.err &
c2=$!
BG_PIDS+=("$c2")
wait_until 60 gone "$c2" || fail "reader C2 is stuck behind a writer killed while it waited"
wait "$c2" || fail "reader C2 failed: $(cat c2.err)"
[[ $(cat order) == C2 ]] || fail "order file: $(cat order)"
wwait_is 0 || fail "reader C2 did not clear the dead writer's hd_wwait bit"
# A new writer: waits for A2 (the only holder), then gets the lock.
"$HELPER" take "$Q" excl D order <<<go >d.out 2>d.err &
d=$!
BG_PIDS+=("$d")
wait_until 60 lock_waiters_are 1 || fail "writer D did not wait for the lock A2 holds"
kill -KILL "$a2"
wait_until 60 gone "$d" || fail "writer D did not get the lock after a writer died waiting"
wait "$d" || fail "writer D failed: $(cat d.err)"
[[ $(cat order) == $'C2\nD' ]] || fail "order file: $(tr '\n' ' ' <order)"
wwait_is 0 || fail "writer D left its hd_wwait bit set"
expect_rc 0 pqcheck -C -q "$Q"
exec 3>&-
ok "a writer killed while it waits: readers and a new writer proceed, the queue checks sound"
