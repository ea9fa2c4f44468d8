#!/usr/bin/env bash
# publish_auth.sh - pq2nats's NATS connection with a token and with TLS
# (-T, -A, -E, -K): against a server that asks for a token and a client
# certificate, products are published; a wrong token is retried (logged,
# the server may be reconfigured) until SIGTERM, which exits 0 at once; a
# CA file that does not exist is a configuration error, exit 1, named.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"
command -v openssl >/dev/null || fail "no openssl command (README: install)"

Q=$SCRATCH/one.pq
LOG=$SCRATCH/pq2nats.log
write_registry nats-test-host "  <queue><path>$Q</path></queue>"
expect_rc 0 pqcreate -c -s 10M -q "$Q"
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$LOG

# a CA, the server's certificate (127.0.0.1) and a client's
P=$SCRATCH/pki
mkdir -p "$P"
expect_rc 0 openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -nodes -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 -subj "/CN=test-ca"
for who in server client; do
  expect_rc 0 openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
    -nodes -keyout "$P/$who.key" -out "$P/$who.csr" -subj "/CN=$who" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
  expect_rc 0 openssl x509 -req -in "$P/$who.csr" -CA "$P/ca.pem" \
    -CAkey "$P/ca.key" -CAcreateserial -days 2 -copy_extensions copy \
    -out "$P/$who.pem"
done
nats_start js 0 "tls {" "  cert_file: \"$P/server.pem\"" \
  "  key_file: \"$P/server.key\"" "  ca_file: \"$P/ca.pem\"" "  verify: true" \
  "}" "authorization {" "  token: \"s3cret\"" "}"
URL=${NATS_URL[js]}

printf 'a product\n' >"$SCRATCH/f1"
expect_rc 0 pqinsert -q "$Q" -f WMO "$SCRATCH/f1"
expect_rc 0 pq2nats -q "$Q" -u "$URL" -T s3cret -A "$P/ca.pem" \
  -E "$P/client.pem" -K "$P/client.key" -S "$SCRATCH/state" -n -l "$LOG"
expect_in "$LOG" "exiting: 1 products published"
# natspeek has no TLS: the server's own count of its messages (the chunk
# stream's included, which holds none here)
msgs=$(nats_jsz js | tr -d ' \n' |
  sed -n 's/.*"consumers":[0-9]*,"messages":\([0-9]*\).*/\1/p')
[[ $msgs == 1 ]] || fail "the server holds '$msgs' messages, not 1: $(nats_jsz js)"
ok "token and TLS with a client certificate: published"

# a wrong token: retried and logged until a stop
: >"$LOG"
background pq2nats -q "$Q" -u "$URL" -T wrong -A "$P/ca.pem" \
  -E "$P/client.pem" -K "$P/client.key" -S "$SCRATCH/state2" -n -l "$LOG"
PID=$BG
wait_until 30 grep -q "cannot connect to the NATS server" "$LOG" ||
  fail "no message about the refused connection"
stop_expect "$PID" pq2nats TERM 10 0
ok "a wrong token is retried and logged; SIGTERM exits 0"

# no such CA file: exit 1, the path named
expect_rc 1 pq2nats -q "$Q" -u "$URL" -A "$SCRATCH/no-such-ca.pem" -n -l -
expect_in "$ERR" "$SCRATCH/no-such-ca.pem"
ok "a missing CA file: exit 1, named"
