#!/usr/bin/env bash
# Out of descriptors: ldmd's limit on open files (RLIMIT_NOFILE) is set,
# with prlimit(1), to exactly the descriptors it has open, so that every
# accept(2) fails with EMFILE, and ten clients connect on 127.0.0.1.
# ldmd used to spin at full speed there, logging each failure (80 MB of log
# a second) and never reading a signal.  Now:
#   - the episode is logged once, and the log and ldmd's CPU time stay
#     small while it lasts (the waiting connections are shed, the
#     listeners rest);
#   - SIGCHLD still acts: a connection process that ends meanwhile is
#     reaped, not left a zombie;
#   - once descriptors free up ldmd serves clients again, and logs the end
#     of the episode with the number of connections refused.  ldmd's own
#     descriptors do not depend on its clients, so raising the limit again
#     stands for descriptors freeing up;
#   - SIGTERM stops it within seconds in the middle of an episode.
source "$(dirname "$0")/lib.sh" "$@"

command -v prlimit >/dev/null || skip_test "no prlimit(1) here"
make_queue 1000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ALLOW ANY ^::1$
EOF
start_ldmd
HZ=$(getconf CLK_TCK)

# lowest_free PID: the lowest descriptor number PID does not use.
lowest_free() {
  local i=0
  while [[ -e /proc/$1/fd/$i ]]; do
    i=$((i + 1))
  done
  echo "$i"
}

# limit N: ldmd may have descriptors below N only (its soft limit).
limit() {
  prlimit --pid "$LDMD_PID" --nofile="$1:" || fail "prlimit failed"
}

# cpu_ticks PID: user + system CPU time of PID, in clock ticks.
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat") || return 1
  stat=${stat##*) } # after the command name
  awk '{print $12 + $13}' <<<"$stat"
}

CLIENTS=()
# connect_clients N: N connections from this shell, held open.
connect_clients() {
  local i fd
  for ((i = 0; i < $1; i++)); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "cannot connect client $i"
    CLIENTS+=("$fd")
  done
}

close_clients() {
  local fd
  for fd in "${CLIENTS[@]}"; do
    exec {fd}>&-
  done
  CLIENTS=()
}

log_bigger_than() {
  (($(stat -c %s "$LOG") > $1))
}

# A subscriber from before the shortage: its connection process must
# still be reaped during it.
background peer notifyme -o 0 -t 60 >noti.out
noti=$BG
wait_until 10 grep -q '^OK' noti.out || fail "notifyme got no OK"
child=$(awk '/^OK/ {print $2}' noti.out)

limit "$(lowest_free "$LDMD_PID")"
connect_clients 10
wait_until 5 grep -q 'accept: Too many open files' "$LOG" ||
  fail "no log line for the failed accepts"
size=$(stat -c %s "$LOG")
ticks=$(cpu_ticks "$LDMD_PID")
# Three seconds of the episode: the log must not grow by 2 KB.
if wait_until 3 log_bigger_than $((size + 2000)); then
  fail "the log grew by $(($(stat -c %s "$LOG") - size)) bytes in the episode"
fi
used=$(($(cpu_ticks "$LDMD_PID") - ticks))
((used * 10 < 3 * HZ)) || fail "ldmd used $used ticks ($HZ a second) in 3 s"
(($(count "$LOG" "cannot accept connections") == 1)) ||
  fail "the episode was logged more than once"
ok "out of descriptors: one log line, $used CPU ticks in 3 s"

kill "$noti"
wait "$noti" 2>/dev/null
wait_until 10 bash -c "[[ ! -e /proc/$child ]]" ||
  fail "connection process $child not reaped during the episode ($(cat /proc/"$child"/stat 2>/dev/null))"
ok "SIGCHLD acted: the ended connection process was reaped"

close_clients
limit 1024
wait_until 10 peer call -V 6 -R 0 >/dev/null ||
  fail "ldmd serves no client after descriptors freed up"
expect_rc 0 peer call -V 6 -R 0
wait_until 5 grep -qE 'serving connections again: ([1-9][0-9]+) connections refused' "$LOG" ||
  fail "no log line for the end of the episode"
ok "descriptors back: clients served again; the end of the episode logged"

limit "$(lowest_free "$LDMD_PID")"
connect_clients 10
wait_until 5 bash -c "(( \$(grep -c 'cannot accept connections' '$LOG') == 2 ))" ||
  fail "no second episode"
stop_ldmd 5 "of an episode"
expect_in "$LOG" "stopping while refusing connections"
close_clients
ok "SIGTERM in the middle of an episode: stopped at once, status 0"
