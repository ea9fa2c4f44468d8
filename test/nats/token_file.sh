#!/usr/bin/env bash
# token_file.sh - the NATS token read from a file (-t, /nats/token-file),
# so that it is in neither ps's output nor ldmd.conf: against a server
# that asks for a token, pq2nats (its token file from the registry) and
# nats2pq (-t) connect and carry a product from one queue to the other,
# and while they run neither's command line (/proc/PID/cmdline, ps -ww)
# holds the token.  A token file that its group or others may read is
# refused, exit 1, naming it; so are an empty one, one longer than a
# token may be, and -T with -t.
# shellcheck source-path=SCRIPTDIR source=bridge_lib.sh
source "$(dirname "$0")/bridge_lib.sh" "$@"

TOKEN=tok-$(od -An -tx4 -N8 /dev/urandom | tr -d ' ')-not-in-ps
TF=$SCRATCH/nats.token
(
  umask 077
  printf '%s\n' "$TOKEN" >"$TF"
)
write_registry testhost "  <nats><token-file>$TF</token-file></nats>"
nats_start s 0 "authorization {" "  token: \"$TOKEN\"" "}"
U=$NATS_URL_NOW
A=$SCRATCH/a.pq
B=$SCRATCH/b.pq
expect_rc 0 pqcreate -c -s 1M -q "$A"
expect_rc 0 pqcreate -c -s 1M -q "$B"
printf 'a product\n' >"$SCRATCH/f1"
insert_products "$A" WMO ONE "$SCRATCH/f1"

start_pub pub -q "$A" -u "$U" -S "$SCRATCH/state"
start_sub sub -q "$B" -u "$U" -t "$TF"
wait_count "$B" 1 60
ok "pq2nats (/nats/token-file) and nats2pq (-t) connect with the token"

for who in pub sub; do
  pid=${BRIDGE_PID[$who]}
  tr '\0' ' ' <"/proc/$pid/cmdline" >"$SCRATCH/cmdline.$who" ||
    fail "no command line for $who ($pid)"
  ps -ww -o args= -p "$pid" >"$SCRATCH/ps.$who" || fail "ps -p $pid failed"
  [[ -s $SCRATCH/ps.$who ]] || fail "ps shows nothing of $who ($pid)"
  expect_not_in "$SCRATCH/cmdline.$who" "$TOKEN"
  expect_not_in "$SCRATCH/ps.$who" "$TOKEN"
done
expect_in "$SCRATCH/cmdline.sub" "-t $TF"
ok "the token is in neither's command line nor ps's output"
pub_sub_stop pub TERM 0
pub_sub_stop sub TERM 0

# A token file the group may read: refused, named, exit 1.
chmod 0640 "$TF"
expect_rc 1 nats2pq -q "$B" -u "$U" -t "$TF" -n -l -
expect_in "$ERR" "refusing the NATS token file $TF: group or others may read or write it (mode 0640)"
expect_rc 1 pq2nats -q "$A" -u "$U" -S "$SCRATCH/state" -n -l -
expect_in "$ERR" "refusing the NATS token file $TF"
ok "a token file its group may read is refused, exit 1, named"

: >"$TF"
chmod 0600 "$TF"
expect_rc 1 nats2pq -q "$B" -u "$U" -t "$TF" -n -l -
expect_in "$ERR" "refusing the NATS token file $TF: it is empty"
# a first line of 1023 bytes, as long as a token may be, and more lines
{
  head -c 1023 /dev/zero | tr '\0' a
  printf '\r\nsecond line\n'
} >"$TF"
expect_rc 1 nats2pq -q "$B" -u "$U" -t "$TF" -n -l -
expect_in "$ERR" "refusing the NATS token file $TF: it is longer than 1023 bytes"
expect_rc 1 nats2pq -q "$B" -u "$U" -T "$TOKEN" -t "$TF" -n -l -
expect_in "$ERR" "give the token with -T or -t, not both"
ok "an empty token file, one of more than a line, and -T with -t, are refused, exit 1"
