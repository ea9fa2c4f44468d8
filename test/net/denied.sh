#!/usr/bin/env bash
# A requester its upstream refuses.  A admits only 192.0.2.1 (an address
# kept for documentation), so it answers B's connection as LDM does: the
# reply MSG_DENIED/AUTH_TOOWEAK with transaction id 0, then a close
# (docs/protocol.md §5.1).  B's requester must log that its request was
# denied (an ERROR naming the upstream and the REQUEST), never that the
# connection closed, and wait before each new attempt as after any other
# failure: /requester/retry-min doubled for each attempt in a row
# (docs/protocol.md §11.5), so attempts 1, 2 and 4 s apart, not one a
# second.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

# shellcheck disable=SC2034 # relay_lib.sh's srv_init reads it
RELAY_REQUESTER_KEYS="<retry-min>1</retry-min><retry-max>60</retry-max>"
srv_init A 4000000 1000
srv_init B 4000000 1000
printf '%s\n' 'ALLOW ANY ^192\.0\.2\.1$' | srv_conf A
srv_start A
srv_conf B <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY ".*" 127.0.0.1:@A@
EOF
srv_start B
DENIED="request denied by upstream LDM 127.0.0.1 port ${SRV_PORT[A]}"

# A names its peer "localhost (127.0.0.1)", or as the host's resolver says.
wait_until 10 srv_log_has A "because not allowed" ||
  srv_fail A "A did not deny B's requester"
wait_until 10 srv_log_has B "$DENIED" ||
  srv_fail B "B's requester did not log the denial ('$DENIED')"
line=$(srv_log B | grep -F -- "$DENIED" | head -1)
[[ $line == *" ERROR "* && $line == *'REQUEST ANY ".*"'* &&
  $line == *"not allowed"* ]] ||
  srv_fail B "the denial is not an ERROR naming the REQUEST: $line"
ok "B's requester logs the refusal as a denial: ${line#*ERROR }"

# denials NAME: how many denials NAME's log has (A's of B, B's from A).
denials() {
  if [[ $1 == A ]]; then
    srv_log A | grep -cF "because not allowed"
  else
    srv_log B | grep -cF -- "$DENIED"
  fi
}
# denied NAME N: has NAME's log N denials at least?
denied() {
  (($(denials "$1") >= $2))
}
# Four attempts take 1 + 2 + 4 s of back-off: bounded at 20 s.
wait_until 20 denied A 4 ||
  srv_fail A "A saw $(denials A) attempts of B in 20 s, not 4"
wait_until 5 denied B 4 ||
  srv_fail B "B logged $(denials B) denials, fewer than A's 4"
srv_log B | grep -E "connection closed|FEEDME to upstream" >closed.txt
[[ ! -s closed.txt ]] ||
  srv_fail B "a denial was logged as something else: $(head -2 closed.txt)"
# The gaps between A's first four denials: at least 1, 2 and 4 s, less a
# tenth (each is logged by another of A's processes, after its accept and
# the name lookup of the peer).
srv_log A | grep -F "because not allowed" | head -4 |
  awk '{ t = substr($1, 10, 2) * 3600 + substr($1, 12, 2) * 60
         t += substr($1, 14, 9)
         if (NR > 1) { g = t - last; if (g < 0) g += 86400; printf "%.3f\n", g }
         last = t }' >gaps.txt 2>&1
mapfile -t gaps <gaps.txt
((${#gaps[@]} == 3)) || fail "no gaps between A's denials: $(cat gaps.txt)"
awk -v a="${gaps[0]}" -v b="${gaps[1]}" -v c="${gaps[2]}" \
  'BEGIN { exit !(a >= 0.9 && b >= 1.9 && c >= 3.9) }' ||
  srv_fail A "B retried faster than its back-off: gaps ${gaps[*]} s"
ok "B backs off after each denial: gaps ${gaps[*]} s"

srv_stop B
srv_stop A
ok "both servers stopped cleanly"
