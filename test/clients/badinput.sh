#!/usr/bin/env bash
# Bad command lines are exit 1 with a message and the usage text; servers
# that cannot be reached are a clear message and a non-zero exit, never a
# crash or a hang.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
printf x >file

# usage_error CMD...: exit 1, a message and the usage text on stderr.
usage_error() {
  expect_rc 1 "$@"
  grep -q '^usage: ' "$ERR" || fail "'$*' did not print the usage"
  [[ $(head -1 "$ERR") == "$1: "* ]] || fail "'$*': no message naming the program"
}

for args in "-Z" "-f nosuchfeed" "-p (" "-p [z-a]" \
  "-t 0" "-t 40000" "-t x" "-T 5" "-o -5" "-o 1x" "-h [::1" "-h [::1]x" \
  "-h host:0" "-h host:99999" "-h :388" "-h host:" "-P abc" "-P 0" "extra" \
  "-h"; do
  # shellcheck disable=SC2086
  usage_error notifyme $args
done
ok "notifyme: bad options"

for args in "" "-Z file" "-f nosuchfeed file" "-f NONE file" "-s -1 file" \
  "-s 4294967296 file" "-h h:x file" "-h [::1 file" "-P 70000 file"; do
  # shellcheck disable=SC2086
  usage_error ldmsend $args
done
ok "ldmsend: bad options"

for args in "-Z" "-t 0" "-t x" "-i x" "-i -1" "-h [::1]x" "-P 0" "host:0"; do
  # shellcheck disable=SC2086
  usage_error ldmping $args
done
ok "ldmping: bad options"

# Nothing listening, and a name that does not resolve.
dead=$(dead_port)
expect_rc 3 notifyme -h "127.0.0.1:$dead"
expect_in "$ERR" "cannot connect to 127.0.0.1 port $dead: Connection refused"
expect_rc 3 notifyme -h nonexistent.invalid
expect_in "$ERR" "cannot resolve nonexistent.invalid"
expect_rc 5 ldmsend -h "127.0.0.1:$dead" file
expect_in "$ERR" "cannot connect to 127.0.0.1 port $dead: Connection refused"
expect_rc 5 ldmsend -h nonexistent.invalid file
expect_in "$ERR" "cannot resolve nonexistent.invalid"
expect_rc 1 ldmping -i 0 -h "127.0.0.1:$dead"
expect_in "$ERR" "Connection refused"
if have_ipv6; then
  dead6=$(dead_port ::1)
  expect_rc 3 notifyme -h "[::1]:$dead6"
  expect_in "$ERR" "cannot connect to ::1 port $dead6: Connection refused"
else
  skip_part "IPv6 (connection refused on ::1): cannot listen on ::1"
fi
ok "unreachable or unknown servers: a message and a non-zero exit"

# A registry that cannot be read: a warning, and port 388.
echo '<registry><unclosed>' >"$LDM_REGISTRY"
expect_rc 1 ldmping -i 0 -t 1 -h 127.0.0.1
expect_in "$ERR" "cannot read the registry (using port 388)"
expect_in "$ERR" " 388   127.0.0.1 "
ok "unreadable registry: warning, port 388"
