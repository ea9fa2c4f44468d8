#!/usr/bin/env bash
# A silent upstream is replaced: B's requester hears nothing from A's
# feeding process (stopped with SIGSTOP) for the silence limit (2 s here,
# LDM's 300 s by default) and connects again at once; A serves the new
# connection from the product after the last one B has, so the products
# inserted meanwhile arrive, none twice.  An idle but healthy feed (A's
# keep-alive every second) is not replaced.  When A is down, B tries again
# with a bounded delay and resumes when A is back.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_SERVER_KEYS="<interval>1</interval>"
RELAY_REQUESTER_KEYS="<silence-limit>2</silence-limit><retry-min>1</retry-min><retry-max>2</retry-max>"
srv_init A
srv_init B
srv_conf A <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
EOF2
srv_start A
srv_conf B <<'EOF2'
REQUEST IDS .* 127.0.0.1:@A@
ALLOW ANY ^127\.0\.0\.1$
EOF2
srv_start B
QA=$(srv_dir A)/ldm.pq
QB=$(srv_dir B)/ldm.pq

expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000 -f IDS -i one -z 1
wait_until 5 bash -c "(( \$(\"$PEER\" dump -q '$QB' | wc -l) >= 10 ))" ||
  srv_fail B "B did not get the first products"
sleep 3.5
! srv_log_has B "no message from upstream" ||
  srv_fail B "an idle feed with keep-alives was replaced"
ok "an idle feed (keep-alive every second) outlives the 2 s silence limit"

feeder=$(children_of "${SRV_PID[A]}")
[[ $feeder =~ ^[0-9]+$ ]] || fail "A's feeding process: '$feeder'"
kill -STOP "$feeder"
expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000 -f IDS -i two -z 2
start=$SECONDS
wait_until 10 bash -c "(( \$(\"$PEER\" dump -q '$QB' | wc -l) >= 20 ))" ||
  srv_fail B "B did not get the products inserted after A's feeder went silent"
took=$((SECONDS - start))
kill -CONT "$feeder"
srv_log_has B "no message from upstream LDM 127.0.0.1 port ${SRV_PORT[A]} for 2 s: reconnecting" ||
  srv_fail B "no silence detected"
(($(srv_log B | grep -c "is willing to be a primary feeder") == 2)) ||
  srv_fail B "not exactly one new connection"
ok "a silent upstream was replaced; the 10 products inserted meanwhile arrived in ${took} s"

# A down: B retries (1 s, then 2 s: the bound) and resumes when A is back.
port=${SRV_PORT[A]}
srv_stop A
sleep 4
srv_start A "$port"
expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000 -f IDS -i three -z 3
wait_until 10 bash -c "(( \$(\"$PEER\" dump -q '$QB' | wc -l) >= 30 ))" ||
  srv_fail B "B did not come back to A"
srv_log_has B "cannot connect to 127.0.0.1 port $port" ||
  srv_fail B "no failed connection logged"
srv_dump A a.dump
srv_dump B b.dump
awk '{print $1, $2, $3}' a.dump >a.want
awk '{print $1, $2, $3}' b.dump >b.got
diff a.want b.got >diff.out || fail "B differs from A: $(head -20 diff.out)"
ok "A stopped and restarted: B reconnected and has A's 30 products, each once"

srv_stop B
srv_stop A
