#!/usr/bin/env bash
# serial.sh - pqing on a serial line: a pseudo-terminal (wmogen pty) whose
# link's name begins with "tty", so that pqing takes it for a terminal:
# hds sets it raw at HDS's defaults (19200 baud, no parity) and, on a
# terminal, checks the HDS CRC without -c.  Where the host's
# pseudo-terminals have no path (some containers), the test skips.
# Arguments: the directory of the programs, the directory of wmogen.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

expect_rc 0 wmogen make crc crc.wmo crc.want
# A serial line (a pseudo-terminal whose link's name begins with "tty"):
# hds on a terminal checks the CRC without -c.
serial_line() {
  fresh
  LOG=$SCRATCH/tty.log
  mkfifo go
  exec 3<>go # open both ways: no open of it waits
  # (the redirection inside: a command put in the background by a function
  # would read /dev/null, whatever the function's own standard input)
  background sh -c 'exec wmogen pty "$1" "$2" <go' sh "$SCRATCH/ttyWMO" \
    crc.wmo 3>&- 2>pty.err
  wait_until 20 test -L "$SCRATCH/ttyWMO" || fail "no pseudo-terminal"
  if [[ ! -e $SCRATCH/ttyWMO ]]; then
    skip_part "serial line: this host's pseudo-terminals have no path ($(readlink "$SCRATCH/ttyWMO"))"
    return
  fi
  background hds -v -l "$LOG" -q "$Q" "$SCRATCH/ttyWMO" 2>hds.err
  ING=$BG
  wait_until 20 grep -q 'TERMIOS "' "$LOG" || fail "hds did not set the terminal up"
  echo go >&3
  wait_until 60 holds_at_least 2 ||
    fail "$(products | wc -l) of 2 products came from the terminal"
  WANT=$SCRATCH/crc.want
  GOT=$SCRATCH/tty.got
  products >"$GOT"
  diff "$WANT" "$GOT" >"$OUT" || fail "terminal: other products"
  expect_in "$LOG" 'TERMIOS "'"$SCRATCH/ttyWMO"'": 19200 baud, none parity'
  expect_in "$LOG" "Checksum (0x"
  stop_expect "$ING" hds TERM 10 0 hds.err
  exec 3>&-
  expect_in "$LOG" "  TTY Bytes read:"
  ok "a serial line: raw, HDS's defaults, the CRC checked without -c"
}
serial_line

