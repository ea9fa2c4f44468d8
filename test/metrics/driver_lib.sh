# shellcheck shell=bash
# driver_lib.sh - chromedriver for the browser tests (status_page.sh,
# driver_port.sh), sourced after test/lib/common.sh.
#
# chromedriver listens on 127.0.0.1 and on ::1 with one port number.  Given
# --port=0 it takes a kernel-chosen port on one side and then asks for the
# same number on the other, which a client connection or a port-0 listener
# of another test may hold: it exits with "IPv4 port not available".  So
# start_driver names the port: free_port (test/lib/common.sh) draws it below
# the kernel's ephemeral range, where neither is ever given one, and not
# bound on either side now.  Another program may still take it first (a
# concurrent test's free_port): chromedriver then exits with "port not
# available", and start_driver tries another port, DRIVER_TRIES times at
# most.

CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
DRIVER_TRIES=${DRIVER_TRIES:-5}
DRIVER_PID= # the running chromedriver
WD=         # its base URL, http://127.0.0.1:PORT
DRIVER_PORTS=() # every port tried, in order

# driver_settled PID LOG: has chromedriver PID started (LOG says so) or
# exited?
driver_settled() {
  grep -q 'started successfully on port' "$2" || gone "$1"
}

# start_driver LOG: chromedriver on a port of free_port's, its output in
# LOG; sets DRIVER_PID and WD.  False when it did not start (LOG says why):
# within 20 s, or on any of DRIVER_TRIES ports.
# shellcheck disable=SC2034 # WD is for the tests that source this file
start_driver() {
  local log=$1 port try
  for ((try = 1; try <= DRIVER_TRIES; try++)); do
    port=$(free_port) || return 1
    DRIVER_PORTS+=("$port")
    # Emptied here, not by the child's redirection, which may come after
    # driver_settled has read what an earlier start wrote.
    : >"$log"
    "$CHROMEDRIVER" --port="$port" >>"$log" 2>&1 &
    DRIVER_PID=$!
    wait_until 20 driver_settled "$DRIVER_PID" "$log" || return 1
    if grep -q "started successfully on port $port" "$log"; then
      WD=http://127.0.0.1:$port
      return 0
    fi
    gone "$DRIVER_PID" || return 1
    wait "$DRIVER_PID" 2>/dev/null
    DRIVER_PID=
    grep -q 'port not available' "$log" || return 1
  done
  return 1
}
