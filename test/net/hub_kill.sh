#!/usr/bin/env bash
# kill -9 of the feed hub (ldmd/server/hub.h) while it sends large products
# to several downstreams.  The hub is a child of the top-level ldmd,
# restarted when it dies; the connection processes whose feeds it had see
# its end of their pair close and end their feeds ("the feed hub ended
# while serving"); the downstreams reconnect and resume after the last
# product they got, served by the new hub, or by their own connection
# processes if they come back while no hub runs (ldmd hands a feed to the
# hubs only while one does).
#
# Upstream A (its feeds logged: -v), downstreams B, C and D (real ldmd
# servers, REQUEST ANY ".*" from A, retrying after 1 s; the anti-DOS rule
# off, as the three ask for the same class from the same address:
# ldmd/server/feeds.h).  Ten products of
# 1 MB go through, then a writer starts 30 more as fast as it can and the
# hub is killed at once, with the three feeds running.
#   - ldmd starts a second hub; the three feeds start again, each in the
#     new hub or in its own process;
#   - B, C and D end with every product of A, each once, in A's order,
#     byte for byte (the dumps check each product's MD5, its signature);
#   - A's queue is sound: pq_check() (ldm6_peer sound) finds every
#     invariant holds and nothing to repair after the kill, with the
#     servers running, and pqcheck -C exits 0 once they have stopped.
# Arguments: ldmd, ldm6_peer, pqcheck.
HERE=$(cd "$(dirname "$0")" && pwd)
# Before lib.sh, which goes into the scratch directory.
PQCHECK=$(cd "$(dirname "${3:?path of pqcheck}")" && pwd)/$(basename "$3")
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

# shellcheck disable=SC2034 # relay_lib.sh's srv_init reads them
RELAY_REQUESTER_KEYS="<retry-min>1</retry-min><retry-max>1</retry-max>"
# shellcheck disable=SC2034
RELAY_SERVER_KEYS="<enable-anti-DOS>FALSE</enable-anti-DOS>"
for s in A B C D; do
  srv_init $s 60000000 2000
done
SRV_OPTS[A]=-v
# On one CPU each ldmd runs one hub (one per CPU: docs/protocol.md 6.9),
# so that A's one hub has the three feeds when it is killed.
LDMD_WRAP=(taskset -c 0)
srv_upstream A
QA=$(srv_queue A)
for s in B C D; do
  srv_downstream $s A ANY
done

# hub_pids: the pids of A's hubs, in the order they started.
hub_pids() {
  srv_log A | sed -n 's/.*started feed hub process \([0-9]*\): feed hub.*/\1/p'
}
# hub_feeds PID: how many feeds hub PID took.
hub_feeds() {
  srv_log A | grep -c " hub\[$1\] .* feeding "
}
hubs() {
  (($(hub_pids | wc -l) >= $1))
}
feeds_of() {
  (($(hub_feeds "$1") >= $2))
}
has_n() {
  local n
  n=$("$PEER" count -q "$(srv_queue "$1")") && ((n >= $2))
}

hub1=$(hub_pids)
[[ $(wc -w <<<"$hub1") == 1 ]] || srv_fail A "not one hub at the start: '$hub1'"
wait_until 30 feeds_of "$hub1" 3 ||
  srv_fail A "the hub took $(hub_feeds "$hub1") of the 3 feeds"

expect_rc 0 "$PEER" insert -q "$QA" -n 10 -s 1000000 -f EXP -i first -z 31
for s in B C D; do
  wait_until 30 has_ident "$(srv_queue $s)" first/9 ||
    srv_fail $s "$s did not get the first 10 products"
done
background "$PEER" insert -q "$QA" -n 30 -s 1000000 -f EXP -i second \
  -z 32 >second.out
writer=$BG
wait_until 10 grep -q '^INSERTED' second.out || fail "the writer did not start"
kill -KILL "$hub1" || fail "cannot kill the hub $hub1"
wait_until 10 gone "$hub1" || fail "the hub $hub1 did not die"
at_kill=$(for s in B C D; do printf '%s %s, ' "$s" "$(srv_count $s)"; done)
ok "killed the hub $hub1 once the writer had started (downstreams then: ${at_kill%, } of 40)"

wait_until 20 hubs 2 || srv_fail A "no new hub after kill -9 of $hub1"
hub2=$(hub_pids | tail -1)
[[ $hub2 != "$hub1" ]] || srv_fail A "the new hub has the old one's pid"
wait "$writer" || fail "the writer failed: $(tail -3 second.out)"
n_ok=$(grep -c ' PQ_OK$' second.out)
((n_ok == 30)) || fail "$n_ok of 30 insertions succeeded"
# Sound with the servers running, nothing left to repair by the dead hub
# (pqcheck -C would exit 3 here: the live feeds have the queue open).
expect_rc 0 "$PEER" sound -q "$QA"
expect_in "$OUT" "SOUND "
expect_not_in "$OUT" "repaired"
srv_last A B 41 60 33
for s in C D; do
  wait_until 60 has_ident "$(srv_queue $s)" last/0 ||
    srv_fail $s "$s has $(srv_count $s) of 41 products, not the last one"
done
# The three feeds started again (three more "Starting Up" lines), each in
# the new hub or, if it came while no hub ran, in its own process at once:
# none waited for a hub that could not answer.
wait_until 30 eval '(($(srv_log A | grep -c "Starting Up.*Primary") >= 6))' ||
  srv_fail A "the feeds did not all start again"
! srv_log A | grep -q 'did not take the feed' ||
  srv_fail A "a feed waited for a dead hub"
srv_log A | grep -q 'the feed hub ended while serving' ||
  srv_fail A "no connection process said that the hub ended"
for s in B C D; do
  srv_same A $s
done
ok "a new hub ($hub2, $(hub_feeds "$hub2") of the feeds after the kill); B, C and D have all 41 products of A, each once, in order, byte for byte"

for s in B C D A; do
  srv_stop $s
done
expect_rc 0 "$PQCHECK" -C -q "$QA"
ok "A's queue is sound after kill -9 of its hub (running: pq_check(); stopped: pqcheck -C exits 0)"
