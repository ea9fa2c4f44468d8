#!/usr/bin/env bash
# Host names in ALLOW and ACCEPT match only forward-confirmed names, and
# IPv6 peers are matched as IPv4 peers are (ldmd/server/peername.h,
# docs/protocol.md 14.4).  ldmd runs in a mount namespace of its own whose
# /etc/hosts is Debian's loopback part (localhost for 127.0.0.1,
# ip6-localhost for ::1), so the names do not depend on this host's file.
#
#  1. ALLOW by name only: a peer from 127.0.0.1 is let in as localhost, one
#     from ::1 as ip6-localhost (both confirmed: their names resolve back
#     to them), and logged by those names.
#  2. A name pattern that is not the peer's: refused (AUTH_TOOWEAK).
#  3. A dual-stack listener (-I ::): a peer from 127.0.0.1 arrives as
#     ::ffff:127.0.0.1 and is matched, and named, as 127.0.0.1 and
#     localhost, as on an IPv4 listener.
# A name that is not confirmed (a reverse zone that lies) cannot be made
# with /etc/hosts; test_peername covers it with a stand-in resolver.
source "$(dirname "$0")/lib.sh" "$@"

if [[ $(id -u) != 0 ]]; then
  skip_test "not root (a mount namespace for /etc/hosts)"
fi
HOSTS=$SCRATCH/hosts
printf '127.0.0.1\tlocalhost\n::1\tip6-localhost ip6-loopback\n' >"$HOSTS"
if ! unshare -m sh -c 'mount --bind "$1" /etc/hosts' sh "$HOSTS" 2>/dev/null; then
  skip_test "cannot bind-mount /etc/hosts in a mount namespace"
fi
make_queue 2000000

# start_ns ADDR...: ldmd in its namespace, listening on each -I ADDR.
start_ns() {
  local a addrs=()
  for a in "$@"; do addrs+=(-I "$a"); done
  : >"$LOG"
  unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh \
    "$HOSTS" "$LDMD" -f -l "$LOG" -v -P 0 "${addrs[@]}" "$CONF" \
    2>>"$SCRATCH/ldmd.err" &
  LDMD_PID=$!
  wait_until 10 grep -q 'listening on ' "$LOG" || fail "ldmd did not start"
  PORT=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$LOG" | head -1)
  [[ -n $PORT ]] || fail "no port in the log"
}

# --- 1. by name, IPv4 and IPv6 ---------------------------------------------
cat >"$CONF" <<'EOF'
ALLOW ANY ^localhost$
ALLOW ANY ^ip6-localhost$
EOF
addrs=(127.0.0.1)
[[ $HAVE_V6 == 1 ]] && addrs+=(::1)
start_ns "${addrs[@]}"
expect_rc 0 peer call -V 6 -R 0
wait_until 5 logged 1 "connection from localhost (127.0.0.1) port" ||
  fail "127.0.0.1 was not let in and named localhost"
ok "127.0.0.1 let in by its confirmed name localhost"
if [[ $HAVE_V6 == 1 ]]; then
  expect_rc 0 peer call -h ::1 -V 6 -R 0
  wait_until 5 logged 1 "connection from ip6-localhost (::1) port" ||
    fail "::1 was not let in and named ip6-localhost"
  ok "::1 let in by its confirmed name ip6-localhost"
else
  skip_part "no ::1 on this host: a peer from ::1 by its name"
fi
(($(count "$LOG" "is not confirmed by its addresses") == 0)) ||
  fail "a name that /etc/hosts confirms was called unconfirmed"
stop_ldmd

# --- 2. a pattern that is not the peer's name ------------------------------
cat >"$CONF" <<'EOF'
ALLOW ANY ^ip6-localhost$
EOF
start_ns 127.0.0.1
expect_rc 4 peer call -V 6 -R 0
wait_until 5 logged 1 "denying connection from localhost (127.0.0.1) because not allowed" ||
  fail "127.0.0.1 was not refused by a pattern for another name"
ok "127.0.0.1 refused by a pattern for ip6-localhost only"
stop_ldmd

# --- 3. dual-stack listener ------------------------------------------------
if [[ $HAVE_V6 == 1 ]]; then
  cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
EOF
  start_ns ::
  expect_rc 0 peer call -V 6 -R 0
  wait_until 5 logged 1 "connection from localhost (127.0.0.1) port" ||
    fail "an IPv4 peer on a dual-stack listener was not matched as 127.0.0.1"
  expect_not_in "$LOG" "::ffff:"
  ok "dual stack: ::ffff:127.0.0.1 matched and named as 127.0.0.1"
  stop_ldmd
else
  skip_part "no IPv6: the dual-stack listener"
fi
