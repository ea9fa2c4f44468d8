#!/usr/bin/env bash
# publish_lost.sh - a queue too small for the time the server is away:
# while nats-server is frozen (SIGSTOP) pq2nats can publish nothing, the
# queue wraps over the products it had not read, and once the server is
# back pq2nats says that products were lost and how many the queue evicted
# (as pqact warns), and publishes the rest: every product the queue holds.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"

Q=$SCRATCH/small.pq
LOG=$SCRATCH/pq2nats.log
D=$SCRATCH/data
mkdir -p "$D"
write_registry nats-test-host "  <queue><path>$Q</path></queue>"
expect_rc 0 pqcreate -c -s 2M -S 400 -q "$Q"
nats_start js 0
URL=${NATS_URL[js]}
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$LOG

files=()
for i in $(seq 1 400); do
  head -c 20000 /dev/urandom >"$D/p$i"
  files+=("$D/p$i")
done
expect_rc 0 pqinsert -q "$Q" -f WMO "${files[@]:0:10}"
background pq2nats -q "$Q" -u "$URL" -S "$SCRATCH/state" -m 4 -i 1 -l "$LOG"
P=$BG
wait_until 30 test -s "$SCRATCH/state" || fail "pq2nats wrote no position"
kill -STOP "${NATS_PID[js]}"
# 8 MB into a 2 MB queue: it evicts what pq2nats has not read
expect_rc 0 pqinsert -q "$Q" -f WMO "${files[@]:10}"
kill -CONT "${NATS_PID[js]}"
wait_until 60 grep -q "products since pq2nats started: those pq2nats had not read are lost" "$LOG" ||
  fail "pq2nats did not say that products were lost"
n=$(sed -n 's/.*the queue evicted \([0-9]*\) products.*/\1/p' "$LOG" | head -n 1)
((n > 0)) || fail "no count of the products evicted"
# What the queue kept is published: every product it holds now (named by
# its file) is in the stream.  (The first warning may come while the
# insert still runs, so its count need not be all that was lost: the
# warning is rate-limited, as pqact's.)
pqcat -v -q "$Q" -l - 2>&1 >/dev/null | grep -F cli_log_product |
  awk '{ print $NF }' | sort >"$SCRATCH/in_queue"
(($(wc -l <"$SCRATCH/in_queue") > 0)) || fail "pqcat listed no product"
stored() { "$NATSPEEK" count "$URL" LDM || fail "natspeek count failed"; }
rest_published() {
  "$NATSPEEK" dump "$URL" LDM ldm 2>/dev/null | awk '$2 != "H" { print $3 }' |
    sort >"$SCRATCH/in_stream"
  [[ -z $(comm -23 "$SCRATCH/in_queue" "$SCRATCH/in_stream") ]]
}
wait_until 60 rest_published ||
  fail "evicted $n, stored $(stored): not published: $(comm -23 "$SCRATCH/in_queue" "$SCRATCH/in_stream" | head -3)"
stop_expect "$P" pq2nats TERM 20 0
stored=$(stored)
((stored < 400)) || fail "all 400 stored: nothing was lost, the test did not wrap the queue"
ok "a queue that wrapped over unread products: warned ($n evicted), $stored published"
