#!/usr/bin/env bash
# TLS downstreams beside plain ones on one upstream (docs/protocol.md
# section 6.8): A serves B over TLS (its REQUEST {tls}, A's certificate
# verified, as in tls.sh) and H and I over plain LDM-6, all at once, with
# products of every size (1 KiB to 3 MB).  Each downstream gets every
# product byte for byte (each queue's dump checks every product's MD5),
# and A's feeds say how they sent: the plain ones mostly from the queue
# file by reference, the TLS one never (TLS copies: the kernel here has
# no kernel TLS).
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"
tls_pki a b

# shellcheck disable=SC2034 # relay_lib.sh's srv_init reads it
RELAY_REQUESTER_KEYS="<retry-min>1</retry-min><retry-max>1</retry-max>"
# shellcheck disable=SC2034 # zero-copy is off by default: turned on here
RELAY_SERVER_KEYS="<zero-copy>TRUE</zero-copy>"
for s in A B H I; do
  srv_init $s 60000000 4000
done
srv_tls A a
srv_tls B b
srv_conf A <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
EOF2
srv_start A
QA=$(srv_queue A)
srv_conf B <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* {tls}127.0.0.1:@A@
EOF2
for s in H I; do
  srv_conf $s <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* 127.0.0.1:@A@
EOF2
done
for s in B H I; do
  srv_start $s
done
# Products of every size, the feeds running: small ones batched, large
# ones by reference to H and I, copied to B.
expect_rc 0 "$PEER" insert -q "$QA" -n 200 -s 1000 -f IDS -i small -z 41
expect_rc 0 "$PEER" insert -q "$QA" -n 100 -s 70000 -f NEXRAD2 -i mid -z 42
expect_rc 0 "$PEER" insert -q "$QA" -n 5 -s 3000000 -f NEXRAD2 -i big -z 43
expect_rc 0 "$PEER" insert -q "$QA" -n 100 -s 20000 -f IDS -i tail -z 44
for s in B H I; do
  wait_until 60 has_ident "$(srv_queue $s)" tail/99 ||
    srv_fail $s "$s did not get A's products"
  srv_same A $s
done
ok "B (TLS), H and I (plain) get A's 405 products (1 KB to 3 MB) byte for byte"

# The feeds' summaries, written when the downstreams go: every feed that
# started has ended.
for s in B H I; do
  srv_stop $s
done
wait_until 20 feeds_all_ended A 3 || srv_fail A "A's feeds did not all end"
tls_pids=$(tls_conn_pids A)
[[ -n ${tls_pids// /} ]] || srv_fail A "A does not log B's TLS connection"
tls=0
plain=0
while read -r line; do
  pid=$(sed -n 's/^[^[]*\[\([0-9]*\)\].*/\1/p' <<<"$line")
  if [[ $tls_pids == *" $pid "* ]]; then
    tls=$((tls + 1))
    [[ $line != *"from the queue file"* ]] ||
      fail "the TLS feed sent from the queue file: $line"
  elif [[ $line == *"from the queue file"* ]]; then
    plain=$((plain + 1))
  fi
done < <(srv_log A | grep 'products sent (')
((tls >= 1)) || srv_fail A "no summary of the TLS feed"
((plain >= 2)) ||
  srv_fail A "$plain plain feeds sent from the queue file, not H's and I's"
ok "the plain feeds sent from the queue file, the TLS one copied"
srv_stop A
