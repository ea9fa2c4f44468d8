#!/usr/bin/env bash
# publish_down.sh - pq2nats's connection (ldmnats_connect_own(), natsdown.c)
# when the server stops: a publish made once the connection broke, as
# pq2nats's may be when the break comes between its check of the
# connection and its publish, never reaches the restarted server, where it
# would be stored ahead of the products the break lost (pq2nats.1: the
# stream keeps the queue's order across a server's restart).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"
# NATSDOWN_AUTO=1: natsdown -a, a connection libnats reconnects (pq2nats's
# before), which this test fails.
[[ -x ${NATSDOWN:-} ]] || fail "NATSDOWN does not name natsdown"

Q=$SCRATCH/one.pq
write_registry nats-test-host "  <queue><path>$Q</path></queue>"
expect_rc 0 pqcreate -c -s 10M -S 100 -q "$Q"
nats_start js 0
URL=${NATS_URL[js]}
# the streams, made by pq2nats on an empty queue
expect_rc 0 pq2nats -q "$Q" -u "$URL" -S "$SCRATCH/state" -n -l "$SCRATCH/log"
[[ $("$NATSPEEK" count "$URL" LDM) == 0 ]] || fail "the stream LDM is not empty"

coproc DOWN { "$NATSDOWN" ${NATSDOWN_AUTO:+-a} "$URL" ldm.DOWN 2>"$SCRATCH/down.err"; }
BG_PIDS+=("$DOWN_PID")
said=
read -r -t 60 said <&"${DOWN[0]}"
[[ $said == up ]] || fail "natsdown did not connect: $said $(cat "$SCRATCH/down.err")"
nats_stop js
echo stopped >&"${DOWN[1]}"
read -r -t 60 said <&"${DOWN[0]}" || fail "natsdown did not publish: $(cat "$SCRATCH/down.err")"
nats_restart js
echo restarted >&"${DOWN[1]}"
last=
read -r -t 60 last <&"${DOWN[0]}"
[[ $last == "done" ]] || fail "natsdown did not connect again: $(cat "$SCRATCH/down.err")"
n=$("$NATSPEEK" count "$URL" LDM) || fail "natspeek count failed"
((n == 0)) ||
  fail "a publish made after the break ($said) reached the restarted server: $n in LDM"
ok "a publish made after the connection broke ($said) is not sent to the restarted server"
