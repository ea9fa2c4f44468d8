#!/usr/bin/env bash
# Exactly once across crashes of the downstream: A is filled continuously
# (small products, and 400 KB ones that take a while on the wire) while B
# requests them; B is killed with SIGKILL in the middle of transfers and
# started again at once, three times: every one of its processes, then
# only its top-level process (its requester, told by the kernel that its
# parent died, must let go of the resume file for the new one), then every
# process again.  At the end B holds exactly A's products: none lost, none
# twice, in A's order, byte-identical (MD5 of the data is the signature).
# Each restart resumed from the resume file (the signature of the last
# product B received).
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

RELAY_REQUESTER_KEYS="<retry-max>1</retry-max>"
srv_init A 300000000
srv_init B 300000000
srv_upstream A
srv_conf B <<'EOF'
REQUEST ANY .* 127.0.0.1:@A@
ALLOW ANY ^127\.0\.0\.1$
EOF
QA=$(srv_dir A)/ldm.pq
QB=$(srv_dir B)/ldm.pq
srv_start B

# Fill A for a few seconds from two processes.
background "$PEER" insert -q "$QA" -n 3000 -s 4000 -f IDS -i small -d 1 -z 11 >ins1.out
ins1=$BG
background "$PEER" insert -q "$QA" -n 150 -s 400000 -f NEXRAD2 -i big -d 20 -z 12 >ins2.out
ins2=$BG

for round in 1 2 3; do
  want=$((round * 500))
  wait_until 20 holds "$QB" "$want" ||
    srv_fail B "B did not reach $want products (round $round)"
  if ((round == 2)); then
    kill -KILL "${SRV_PID[B]}"
    wait "${SRV_PID[B]}" 2>/dev/null
    how="its top-level process"
  else
    srv_kill9 B
    how="all its processes"
  fi
  have=$(srv_count B)
  srv_start B
  wait_until 10 srv_log_has B "resuming after product" ||
    srv_fail B "B did not resume from its file (round $round)"
  ok "round $round: SIGKILL to $how at $have products; restarted, resuming"
done

wait "$ins1" || fail "inserter 1 failed"
wait "$ins2" || fail "inserter 2 failed"
BG_PIDS=()
total=3151
srv_last A B $total 30 13
srv_same A B
ok "B has A's $total products in A's order, byte-identical, each once"

srv_stop B
srv_stop A
expect_rc 0 "$PEER" check -q "$QB"
ok "stopped; B's queue is consistent"
