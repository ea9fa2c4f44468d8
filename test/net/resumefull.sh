#!/usr/bin/env bash
# A resume file that cannot be written does not stop a feed
# (docs/protocol.md 11.4): B's resume files go in a tmpfs of 64 kB, filled
# before B starts, that only B sees (a mount namespace of its own), so the
# file cannot be made (ENOSPC).  B's requester must still receive every
# product of A, warn once (not per product), not exit (the top-level ldmd
# never restarts it), and, once room is made, record its point again and
# say so.  Skipped (77) unless root may make a mount namespace and a tmpfs.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

if [[ $(id -u) != 0 ]]; then
  skip_test "not root (a mount namespace and a tmpfs for the resume files)"
fi
STATE=$SCRATCH/state
mkdir -p "$STATE"
if ! unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$1"' sh "$STATE" \
  2>/dev/null; then
  skip_test "cannot mount a tmpfs in a mount namespace"
fi

# B's ldmd, in a namespace whose $STATE is a full tmpfs: srv_start runs
# $LDMD, here a script that makes the namespace and then becomes ldmd (every
# step execs, so the pid srv_start records is ldmd's).
REAL_LDMD=$LDMD
NS_LDMD=$SCRATCH/ns-ldmd
cat >"$NS_LDMD" <<EOF
#!/bin/sh
exec unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "\$1" || exit 1
  dd if=/dev/zero of="\$1/fill" bs=4096 2>/dev/null
  shift; exec "\$@"' sh "$STATE" "$REAL_LDMD" "\$@"
EOF
chmod +x "$NS_LDMD"

srv_init A
srv_upstream A
RELAY_REQUESTER_KEYS="<state-dir>$STATE</state-dir><retry-max>2</retry-max>"
srv_init B
QA=$(srv_queue A)
QB=$(srv_queue B)
expect_rc 0 "$PEER" insert -q "$QA" -n 50 -s 2000 -f IDS -i early -z 1
srv_conf B <<'EOF'
REQUEST IDS ".*" 127.0.0.1:@A@
ALLOW ANY ^127\.0\.0\.1$
EOF
LDMD=$NS_LDMD srv_start B
PID_B=${SRV_PID[B]}
# in_ns CMD...: CMD in B's mount namespace.
in_ns() {
  nsenter -t "$PID_B" -m "$@"
}
in_ns sh -c 'printf x >"$1/probe"' sh "$STATE" 2>/dev/null &&
  fail "the tmpfs of B's resume files is not full"
in_ns sh -c 'rm -f "$1/probe"' sh "$STATE"
ok "B's resume folder is a full tmpfs (a write there fails)"

wait_until 30 holds "$QB" 50 ||
  srv_fail B "B got $(srv_count B) of the 50 products with its resume file unwritable"
expect_rc 0 "$PEER" insert -q "$QA" -n 100 -s 1000 -f IDS -i late -z 2
wait_until 30 has_ident "$QB" late/99 ||
  srv_fail B "B did not get the products inserted while it ran"
srv_same A B
warn="receiving without recording the resume point"
wait_until 10 srv_log_has B "$warn" || srv_fail B "no warning about the resume file"
n=$(srv_log B | grep -cF -- "$warn")
((n == 1)) || srv_fail B "the warning was logged $n times, not once"
srv_log B | grep 'WARN' | grep -q 'No space left on device' ||
  srv_fail B "the warning does not say why (ENOSPC)"
n=$(srv_log B | grep -cF "started requester process")
((n == 1)) || srv_fail B "the requester was started $n times"
srv_log_has B "restarting requester process" && srv_fail B "the requester exited"
ok "150 products in B, the warning once, the requester never restarted"

# Room again: the point is recorded at the next try (every 5 s at most),
# and the log says so.
in_ns rm "$STATE/fill"
expect_rc 0 "$PEER" insert -q "$QA" -n 1 -s 100 -f IDS -i after -z 3
wait_until 30 srv_log_has B "the resume point is recorded in" ||
  srv_fail B "no word that the resume point is recorded again"
in_ns sh -c 'ls "$1"/*.resume' sh "$STATE" >/dev/null ||
  srv_fail B "no resume file once there was room"
srv_stop B
ok "with room again, the resume file made and the recovery logged"
