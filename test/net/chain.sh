#!/usr/bin/env bash
# A relay chain of three servers on 127.0.0.1, A -> B -> C (B requests from
# A, C from B).  A is filled continuously from two processes; B, all of its
# processes, is killed with SIGKILL twice in the middle of transfers and
# started again on the same port.  C gets every product inserted into A,
# exactly once, in A's order, byte-identical; so does B.  Each restarted B
# resumes from its resume file, and C, reconnecting, asks B to resume after
# the last product it has: no product is sent to C twice.  Products
# inserted into A when the chain is idle reach C at once (the median of the
# time between their insertion into A and into C is reported, and must be
# under 50 ms even in a sanitizer build).
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_REQUESTER_KEYS="<retry-max>1</retry-max>"
for s in A B C; do
  srv_init $s 300000000
done
srv_upstream A
srv_downstream B A ANY
srv_downstream C B ANY
QA=$(srv_dir A)/ldm.pq
QC=$(srv_dir C)/ldm.pq

# Idle chain: products inserted one at a time reach C at once.
expect_rc 0 "$PEER" insert -q "$QA" -n 50 -s 2000 -f IDS -i first -d 10 -z 20
wait_until 5 has_ident "$QC" first/49 ||
  srv_fail C "the first products did not reach C"
srv_dump A a.dump
srv_dump C c.dump
read -r p50 max n < <(latency_ms a.dump c.dump '^first/')
((n == 50)) || fail "latency of $n products"
awk -v p="$p50" 'BEGIN { exit !(p < 50) }' || fail "A to C: p50 $p50 ms"
ok "A -> B -> C, one product at a time: p50 $p50 ms, max $max ms"

background "$PEER" insert -q "$QA" -n 3000 -s 3000 -f IDS -i small -d 1 -z 21 >ins1.out
ins1=$BG
background "$PEER" insert -q "$QA" -n 120 -s 300000 -f NEXRAD2 -i big -d 25 -z 22 >ins2.out
ins2=$BG

for round in 1 2; do
  want=$((round * 700))
  wait_until 20 holds "$QC" "$want" ||
    srv_fail C "C did not reach $want products (round $round)"
  srv_kill9 B
  srv_start B "${SRV_PORT[B]}"
  srv_log_has B "resuming after product" ||
    srv_fail B "B did not resume from its resume file (round $round)"
  # B's feeder of C logs the resume point C sent: C's last product.
  wait_until 10 eval "srv_log B | grep -qE 'Starting Up\\([^)]*\\): .*, SIG=[0-9a-f]{32}, Primary$'" ||
    srv_fail B "C did not come back to B with its resume point (round $round)"
  ok "round $round: B killed with SIGKILL, restarted on port ${SRV_PORT[B]}, resumed; C resumed"
done

wait "$ins1" || fail "inserter 1 failed"
wait "$ins2" || fail "inserter 2 failed"
BG_PIDS=()
total=3171
srv_last A C $total 40 23
srv_same A B
srv_same A C
ok "C (and B) hold A's $total products, each once, in A's order, byte-identical"

for s in C B A; do
  srv_stop $s
done
# C's requester wrote a summary for each connection: over all of them it
# inserted every product, and was sent none it had already.
read -r inserted dups < <(srv_totals C)
((inserted == total && dups == 0)) ||
  srv_fail C "C's connections inserted $inserted products ($dups duplicates), not $total (0)"
expect_rc 0 "$PEER" check -q "$QC"
ok "stopped; C's queue is consistent; its connections got $inserted products, none twice"
