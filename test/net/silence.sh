#!/usr/bin/env bash
# A silent upstream is replaced: B's requester hears nothing from A's
# feeding process (stopped with SIGSTOP) for the silence limit (2 s here,
# LDM's 300 s by default) and connects again at once; A serves the new
# connection from the product after the last one B has, so the products
# inserted meanwhile arrive, none twice.  An idle but healthy feed (A's
# keep-alive every second) is not replaced.  When A is down, B tries again
# with a delay that doubles up to a bound (1 s, 2 s, then 2 s again) and
# resumes when A is back.
#
# What tells the test that the idle feed has outlived the silence limit is
# B itself: B also requests from Q, an upstream whose keep-alive comes
# every 30 s, and Q's idle feed, whose last message came after A's, must be
# replaced (twice) while A's is not.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_REQUESTER_KEYS="<silence-limit>2</silence-limit><retry-min>1</retry-min><retry-max>2</retry-max>"
RELAY_SERVER_KEYS="<interval>30</interval>"
srv_init Q
RELAY_SERVER_KEYS="<interval>1</interval>"
srv_init A
srv_init B
srv_upstream A Q
srv_conf B <<'EOF2'
REQUEST IDS .* 127.0.0.1:@A@
REQUEST EXP .* 127.0.0.1:@Q@
ALLOW ANY ^127\.0\.0\.1$
EOF2
srv_start B
QA=$(srv_dir A)/ldm.pq
QQ=$(srv_dir Q)/ldm.pq
QB=$(srv_dir B)/ldm.pq
PA=${SRV_PORT[A]}
PQ=${SRV_PORT[Q]}

# from_a TEXT: lines of B's log about its upstream A with TEXT.
from_a() {
  srv_log B | grep -F "127.0.0.1 port $PA" | grep -cF -- "$1"
}
# silences_of_q: how many times B replaced Q's silent feed.
silences_of_q() {
  srv_log B | grep -cF "no message from upstream LDM 127.0.0.1 port $PQ for 2 s"
}

expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000 -f IDS -i one -z 1
wait_until 5 has_ident "$QB" one/9 ||
  srv_fail B "B did not get the first products"
# Q's last product reaches B after A's last one: from then on both feeds
# are idle, Q's without keep-alives.
expect_rc 0 "$PEER" insert -q "$QQ" -n 1 -s 100 -f EXP -i tick -z 9
wait_until 5 has_ident "$QB" tick/0 ||
  srv_fail B "B did not get Q's product"
wait_until 15 eval '(($(silences_of_q) >= 2))' ||
  srv_fail B "Q's idle feed, without keep-alives, was not replaced twice"
(($(from_a "no message from upstream") == 0)) ||
  srv_fail B "an idle feed with keep-alives was replaced"
(($(from_a "is willing to be a primary feeder") == 1)) ||
  srv_fail B "B connected to A again"
ok "an idle feed (keep-alive every second) outlives the 2 s silence limit that replaced Q's twice"
srv_stop Q

# The processes that send B its products: A's feed hubs (docs/protocol.md
# 6.9), or the connection process where there are none.
feeder=$(srv_log A | sed -n 's/.*started feed hub process \([0-9]*\):.*/\1/p' | tr '\n' ' ')
feeder=${feeder% }
[[ -n $feeder ]] || feeder=$(children_of "${SRV_PID[A]}")
[[ $feeder =~ ^[0-9]+( [0-9]+)*$ ]] || fail "A's feeding process: '$feeder'"
# shellcheck disable=SC2086 # one or more pids
kill -STOP $feeder
expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000 -f IDS -i two -z 2
start=$SECONDS
wait_until 10 holds "$QB" 21 ||
  srv_fail B "B did not get the products inserted after A's feeder went silent"
took=$((SECONDS - start))
# shellcheck disable=SC2086
kill -CONT $feeder
srv_log_has B "no message from upstream LDM 127.0.0.1 port $PA for 2 s: reconnecting" ||
  srv_fail B "no silence detected"
(($(from_a "is willing to be a primary feeder") == 2)) ||
  srv_fail B "not exactly one new connection"
ok "a silent upstream was replaced; the 10 products inserted meanwhile arrived in ${took} s"

# A down: B's attempts fail 1 s, 2 s, then 2 s apart (retry-max, not the
# doubled 4 s); then A is back on its port and B resumes.
srv_stop A
wait_until 15 eval '(($(from_a "cannot connect to") >= 3))' ||
  srv_fail B "B did not try to connect to A three times"
gaps=$(srv_log B | grep -F "cannot connect to 127.0.0.1 port $PA" | head -3 |
  awk '{ t = substr($1, 10, 2) * 3600 + substr($1, 12, 2) * 60 + substr($1, 14)
         if (NR > 1) { d = t - p; if (d < 0) d += 86400; printf "%.1f ", d }
         p = t }')
gaps=${gaps% }
read -r g1 g2 <<<"$gaps"
awk -v a="$g1" -v b="$g2" 'BEGIN { exit !(a > 1.5 && a < 3.5 && b > 1.5 && b < 3.5) }' ||
  srv_fail B "the attempts to reach A were $gaps s apart, not 2 and 2 (the bound)"
srv_start A "$PA"
expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000 -f IDS -i three -z 3
wait_until 10 has_ident "$QB" three/9 ||
  srv_fail B "B did not come back to A"
srv_same A B 1 '$2 !~ /^tick/'
ok "A stopped (attempts $gaps s apart) and restarted: B reconnected and has A's 30 products, each once"

srv_stop B
srv_stop A
