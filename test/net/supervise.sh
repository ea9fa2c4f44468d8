#!/usr/bin/env bash
# ldmd keeps its EXEC programs and requesters running: one killed is
# started again after restart-min (1 s here); one that keeps dying is
# started again after a delay that doubles up to restart-max (2 s here);
# one that exits with status 0 has finished and is left alone.  SIGTERM
# stops them all with ldmd.  An ldmd killed with SIGKILL takes them with
# it (they get SIGTERM when their parent dies).  INCLUDE works.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_SERVER_KEYS="<restart-min>1</restart-min><restart-max>2</restart-max>"
RELAY_REQUESTER_KEYS="<retry-max>1</retry-max>"
srv_init S
d=$(srv_dir S)
cat >"$d/execs.conf" <<'EOF2'
EXEC "sleep 300"
EXEC "sh -c 'exit 3'"
EXEC "true"
EOF2
srv_conf S <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
INCLUDE execs.conf
REQUEST IDS .* 127.0.0.1:1
EOF2
srv_start S

# pid_of TEXT: the pid of the last "started <TEXT> <pid>: ..." line.
pid_of() {
  srv_log S | sed -n "s/.*started $1 \([0-9]*\): $2\$/\1/p" | tail -1
}
alive() {
  kill -0 "$1" 2>/dev/null
}

wait_until 5 srv_log_has S "started EXEC'd process" || srv_fail S "no EXEC"
sleeper=$(pid_of "EXEC'd process" "sleep 300")
requester=$(pid_of "requester process" 'REQUEST IDS ".\*" 127.0.0.1:1')
[[ -n $sleeper && -n $requester ]] || srv_fail S "no pids: '$sleeper' '$requester'"
alive "$sleeper" || fail "the EXEC'd sleep is not running"
alive "$requester" || fail "the requester is not running"

kill -KILL "$sleeper" "$requester"
wait_until 4 bash -c "(( \$(grep -c 'started EXEC.d process [0-9]*: sleep 300' '$d/ldmd.log') == 2 ))" ||
  srv_fail S "the killed EXEC was not started again"
wait_until 4 bash -c "(( \$(grep -c 'started requester process' '$d/ldmd.log') == 2 ))" ||
  srv_fail S "the killed requester was not started again"
sleeper2=$(pid_of "EXEC'd process" "sleep 300")
requester2=$(pid_of "requester process" 'REQUEST IDS ".\*" 127.0.0.1:1')
[[ $sleeper2 != "$sleeper" && $requester2 != "$requester" ]] || fail "same pids"
alive "$sleeper2" || fail "the restarted sleep is not running"
alive "$requester2" || fail "the restarted requester is not running"
srv_log_has S "restarting EXEC'd process (sleep 300) in 1000 ms" ||
  srv_fail S "the restart delay was not restart-min"
ok "a killed EXEC program and a killed requester were started again after 1 s"

# The program that keeps dying: delays 1 s, 2 s, 2 s... (never more).  Its
# third restart comes after the point where the program that exited 0
# would have been started again (restart-min, 1 s).
restarts() {
  srv_log S | grep -c "restarting EXEC'd process (sh -c 'exit 3') in"
}
wait_until 15 eval '(($(restarts) >= 3))' ||
  srv_fail S "the program that keeps dying was not restarted 3 times"
delays=$(srv_log S | sed -n "s/.*restarting EXEC'd process (sh -c 'exit 3') in \([0-9]*\) ms/\1/p" | tr '\n' ' ')
starts=$(srv_log S | grep -c "started EXEC'd process [0-9]*: sh -c 'exit 3'")
[[ $delays == "1000 2000 2000"* ]] || srv_fail S "delays: $delays"
((starts >= 3)) || srv_fail S "$starts starts"
for x in $delays; do
  ((x <= 2000)) || srv_fail S "a delay of $x ms is beyond restart-max"
done
(($(srv_log S | grep -c "started EXEC'd process [0-9]*: true") == 1)) ||
  srv_fail S "the program that exited 0 was started again"
srv_log_has S "EXEC'd program finished (true): not restarted" ||
  srv_fail S "no word on the finished program"
ok "one that keeps dying: $starts starts, delays $delays(bounded); one that exited 0: once"

srv_stop S
! alive "$sleeper2" || fail "the EXEC'd sleep outlived ldmd"
! alive "$requester2" || fail "the requester outlived ldmd"
! srv_log S | sed -n '/stopping:/,$p' | grep -q "started " ||
  srv_fail S "something was started while stopping"
ok "SIGTERM: ldmd stopped its programs and requesters"

srv_start S
wait_until 5 srv_log_has S "started EXEC'd process" || srv_fail S "no EXEC"
sleeper=$(pid_of "EXEC'd process" "sleep 300")
requester=$(pid_of "requester process" 'REQUEST IDS ".\*" 127.0.0.1:1')
alive "$sleeper" && alive "$requester" || fail "not running after the restart"
kill -KILL "${SRV_PID[S]}"
wait "${SRV_PID[S]}" 2>/dev/null
SRV_PID[S]=
wait_until 5 bash -c "! kill -0 $sleeper 2>/dev/null && ! kill -0 $requester 2>/dev/null" ||
  fail "children outlived an ldmd killed with SIGKILL"
ok "ldmd killed with SIGKILL: its EXEC program and requester ended with it"
