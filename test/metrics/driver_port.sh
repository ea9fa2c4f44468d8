#!/usr/bin/env bash
# driver_port.sh - the browser tests' chromedriver starts whatever ports
# other programs hold (start_driver, driver_lib.sh).  Usage: driver_port.sh
#
# 1. In a network namespace of its own (as root, with unshare and ip), the
#    case chromedriver's --port=0 cannot survive: the kernel's ephemeral
#    range narrowed to one port, E, whose IPv4 side a client connection
#    holds while its IPv6 side is free.  Given --port=0, chromedriver takes
#    ::1 port E and then exits: "IPv4 port not available".  start_driver
#    starts it, and it answers on 127.0.0.1.
# 2. A port taken between free_port's draw and chromedriver's bind (a
#    concurrent test's): free_port made to give a port a first chromedriver
#    holds, start_driver tries another and starts.
# Without chromedriver (scripts/dev.sh installs chromium-driver) the test
# is skipped (77; a failure under CI=true), and so is part 1 without root,
# unshare or ip.
set -u
if (($(id -u) == 0)) && [[ ${DRIVER_TEST_NS:-} != 1 ]] &&
  command -v unshare >/dev/null && command -v ip >/dev/null; then
  DRIVER_TEST_NS=1 exec unshare --net "$BASH" "$0" "$@"
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$HERE/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=driver_lib.sh
source "$HERE/driver_lib.sh"
scratch_init metrics "${PQ_TEST_DIR:-}"
HOLDER_PID=
KILL_AT_EXIT=(DRIVER_PID HOLDER_PID)
FAIL_LOGS=(OUT ERR LOG:chromedriver)
FAIL_SHOW='tail'
LOG=$SCRATCH/driver.log
command -v curl >/dev/null || fail "curl is not installed (scripts/dev.sh installs it)"
if [[ ! -x $CHROMEDRIVER ]]; then
  skip_part "no $CHROMEDRIVER (Debian's chromium-driver)"
  exit 0
fi

# ready: does the chromedriver at $WD answer that it is ready?
ready() {
  curl -sS --max-time 2 "$WD/status" 2>/dev/null | grep -q '"ready":true'
}

# stop_driver: the running chromedriver killed and reaped.
stop_driver() {
  kill -KILL "$DRIVER_PID" 2>/dev/null
  wait "$DRIVER_PID" 2>/dev/null
  DRIVER_PID=
}

# 1. The kernel's only ephemeral port held on IPv4, free on IPv6.
if [[ ${DRIVER_TEST_NS:-} == 1 ]]; then
  expect_rc 0 ip link set lo up
  # A listener to connect to: a chromedriver on a port of free_port's,
  # before the range narrows.
  start_driver "$SCRATCH/holder.log" || fail "the first chromedriver did not start"
  HOLDER_PID=$DRIVER_PID
  HOLDER_WD=$WD
  DRIVER_PID=
  E=$((${HOLDER_WD##*:} + 1000))
  echo "$E $E" >/proc/sys/net/ipv4/ip_local_port_range ||
    fail "cannot narrow this namespace's ephemeral range to $E"
  exec 3<>"/dev/tcp/127.0.0.1/${HOLDER_WD##*:}" ||
    fail "cannot connect to the first chromedriver at $HOLDER_WD"
  printf -v hex '%04X' "$E"
  grep -q "^ *[0-9]*: 0100007F:$hex " /proc/net/tcp ||
    fail "the connection does not hold 127.0.0.1 port $E: $(cat /proc/net/tcp)"
  start_driver "$LOG" ||
    fail "chromedriver did not start with 127.0.0.1 port $E held (tried ${DRIVER_PORTS[*]})"
  [[ ${WD##*:} != "$E" ]] || fail "chromedriver was given the held port $E"
  wait_until 20 ready || fail "chromedriver at $WD is not ready within 20 s"
  ok "chromedriver starts at $WD while 127.0.0.1 port $E, the only ephemeral one, is held"
  stop_driver
  exec 3>&-
  kill -KILL "$HOLDER_PID" 2>/dev/null
  wait "$HOLDER_PID" 2>/dev/null
  HOLDER_PID=
else
  skip_part "a network namespace of its own needs root, unshare (util-linux) and ip (iproute2)"
fi

# 2. A port taken before chromedriver binds it: another is tried.
DRIVER_PORTS=()
start_driver "$SCRATCH/holder2.log" || fail "the first chromedriver did not start"
HOLDER_PID=$DRIVER_PID
held=${WD##*:}
DRIVER_PID=
# free_port, whose first answer is the held port (the race lost).
eval "real_$(declare -f free_port)"
free_port() {
  if ((${#DRIVER_PORTS[@]} == 0)); then
    echo "$held"
  else
    real_free_port
  fi
}
DRIVER_PORTS=()
start_driver "$LOG" || fail "chromedriver did not start after port $held (tried ${DRIVER_PORTS[*]})"
[[ ${#DRIVER_PORTS[@]} == 2 && ${DRIVER_PORTS[0]} == "$held" ]] ||
  fail "start_driver tried ports ${DRIVER_PORTS[*]}, not $held and then another"
[[ ${WD##*:} == "${DRIVER_PORTS[1]}" ]] || fail "chromedriver is at $WD, not on port ${DRIVER_PORTS[1]}"
wait_until 20 ready || fail "chromedriver at $WD is not ready within 20 s"
ok "port $held taken: start_driver tried ${DRIVER_PORTS[1]}, where chromedriver answers"
