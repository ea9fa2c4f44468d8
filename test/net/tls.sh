#!/usr/bin/env bash
# TLS between our servers, on the port that serves plain LDM-6 too
# (docs/security.md).  The certificates are made here with the openssl
# command line: two CAs, the upstream A's (CN a.test, SAN 127.0.0.1), the
# downstream B's (CN b.test), one of another CA with B's name, one of the
# right CA with a name A does not allow, and one with B's name that
# expired in 2020.
#   1. A allows only {cn=^b\.test$} and P's pinned key.  B requests over
#      TLS, verifying that A's certificate names 127.0.0.1: products (some
#      of 2 MB) arrive intact; both logs say TLS and the peer's identity.
#      Downstreams with no certificate, with the other CA's, with the name
#      not allowed and with the expired one are each refused with a log
#      line that says why, and their queues stay empty; so is G, which asks
#      for an upstream CN A does not have.  P, with a self-signed
#      certificate, is admitted by the pin of its key.
#   2. A restarted on the same port with a plain rule beside the TLS one:
#      ldmping, notifyme, ldmsend and a plain REQUEST work there as
#      always, and B comes back over TLS.
#   3. ldmping, notifyme and ldmsend with -S, B's certificate and A's CA:
#      TLS (A logs B's identity); a host name the certificate lacks and a
#      registry without a CA bundle are refused.
# Arguments: ldmd, ldm6_peer, ldmping, notifyme, ldmsend.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"
LDMPING=${3:?path of ldmping}
NOTIFYME=${4:?path of notifyme}
LDMSEND=${5:?path of ldmsend}
command -v openssl >/dev/null || fail "no openssl command (package openssl)"

# ---- certificates -------------------------------------------------------
mkdir -p pki
cd pki || exit 1
mkca() {
  run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$1.key" -out "$1.pem" -days 30 -subj "/CN=$1"
}
# mkleaf FILE CA CN [START END]: a key and a certificate signed by CA, with
# CN and SAN DNS:CN and IP:127.0.0.1; START and END given: made with
# `openssl ca`, which takes any dates (OpenSSL 3.0's x509 has only -days).
mkleaf() {
  run openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$1.key" -out "$1.csr" -subj "/CN=$3" \
    -addext "subjectAltName=DNS:$3,IP:127.0.0.1"
  if [[ -z ${4:-} ]]; then
    run openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" \
      -CAcreateserial -days 2 -copy_extensions copy -out "$1.pem"
    return
  fi
  mkdir -p ca.d
  : >ca.d/index
  echo 01 >ca.d/serial
  cat >ca.cnf <<'EOF2'
[ca]
default_ca = c
[c]
database = ca.d/index
serial = ca.d/serial
new_certs_dir = ca.d
default_md = sha256
policy = p
copy_extensions = copy
unique_subject = no
[p]
commonName = supplied
EOF2
  run openssl ca -batch -config ca.cnf -cert "$2.pem" -keyfile "$2.key" \
    -in "$1.csr" -out "$1.pem" -startdate "$4" -enddate "$5" -notext
}
mkca ca1
mkca ca2
mkleaf a ca1 a.test
mkleaf b ca1 b.test
mkleaf other ca2 b.test
mkleaf e ca1 e.test
mkleaf old ca1 b.test 20200101000000Z 20200102000000Z
# P's self-signed certificate, of no CA, which A admits by its key's pin.
run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout p.key -out p.pem -days 2 -subj /CN=p.test
PIN=$(openssl x509 -in p.pem -pubkey -noout | openssl pkey -pubin -outform DER |
  openssl dgst -sha256 -r | cut -c1-64)
PKI=$PWD
cd "$SCRATCH" || exit 1

# srv_tls NAME CERT|- CA: TLS keys in NAME's registry (CERT "-": none).
srv_tls() {
  local reg cert="" key=""
  reg=$(srv_dir "$1")/registry.xml
  if [[ $2 != - ]]; then
    cert="<cert>$PKI/$2.pem</cert>"
    key="<key>$PKI/$2.key</key>"
  fi
  sed -i "s|</registry>|  <tls>$cert$key<ca>$PKI/$3.pem</ca></tls>\n</registry>|" "$reg"
}

# ---- 1. TLS with mutual authentication, and the peers refused ----------
# shellcheck disable=SC2034 # relay_lib.sh's srv_init reads it
RELAY_REQUESTER_KEYS="<retry-min>1</retry-min><retry-max>1</retry-max>"
for s in A B C D E F G H P; do
  srv_init $s 20000000 2000
done
srv_tls A a ca1
srv_tls B b ca1
srv_tls C - ca1
srv_tls D other ca1
srv_tls E e ca1
srv_tls F old ca1
srv_tls G b ca1
srv_tls P p ca1
srv_conf A <<EOF2
ALLOW ANY {cn=^b\.test\$}^127\.0\.0\.1\$
ALLOW ANY {sha256=$PIN}
EOF2
srv_start A
QA=$(srv_queue A)
# (Each downstream listens too, for srv_start to see it started.)
for s in B C D E F P; do
  srv_conf $s <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* {tls}127.0.0.1:@A@
EOF2
done
srv_conf G <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* {tls,cn=^wrong\.test$}127.0.0.1:@A@
EOF2
for s in B C D E F G P; do
  srv_start $s
done
# Small products, and large ones that go through TLS in many records and
# are streamed into B's queue.
expect_rc 0 "$PEER" insert -q "$QA" -n 3 -s 2000000 -f NEXRAD2 -i big -z 30
expect_rc 0 "$PEER" insert -q "$QA" -n 20 -s 5000 -f IDS -i one -z 31
wait_until 20 has_ident "$(srv_queue B)" one/19 ||
  srv_fail B "B did not get A's products over TLS"
srv_same A B
# (A names the peer "127.0.0.1", or "localhost (127.0.0.1)" when the name
# resolves.)
PEER_RE='(127\.0\.0\.1|[^ ]+ \(127\.0\.0\.1\))'
srv_log A | grep -qE "TLS connection from $PEER_RE port [0-9]+: TLSv1\.3, TLS_[A-Z0-9_]+, certificate CN=b\.test, DNS=b\.test, SHA256=[0-9a-f]{16}\.\.\., verified" ||
  srv_fail A "A does not log B's verified identity"
srv_log B | grep -qE "TLS to upstream LDM 127\.0\.0\.1 port [0-9]+: TLSv1\.3, .*certificate CN=a\.test, .*, verified" ||
  srv_fail B "B does not log A's verified identity"
ok "B gets A's 23 products (3 of 2 MB) over TLS 1.3, byte-identical; each side logs the other's certificate"
wait_until 20 has_ident "$(srv_queue P)" one/19 ||
  srv_fail P "P, whose key A pins, did not get A's products"
srv_log A | grep -qE "TLS connection from $PEER_RE port [0-9]+: .*certificate CN=p\.test, SHA256=${PIN:0:16}\.\.\., not verified: self-signed certificate" ||
  srv_fail A "A does not log P's pinned, self-signed certificate"
ok "P, self-signed, admitted by the pin of its key"

# deny_logged TEXT: has A refused a TLS connection for that reason?
deny_logged() {
  srv_log A | grep -E "denying connection from $PEER_RE because not allowed \(TLSv1\.3" |
    grep -qF -- "$1"
}
wait_until 20 deny_logged ", no certificate)" ||
  srv_fail A "no refusal of C, which has no certificate"
wait_until 20 deny_logged "not verified: unable to get local issuer certificate)" ||
  srv_fail A "no refusal of D, whose certificate is of another CA"
wait_until 20 deny_logged "certificate CN=e.test, DNS=e.test," ||
  srv_fail A "no refusal of E, whose name is not allowed"
wait_until 20 deny_logged "not verified: certificate has expired)" ||
  srv_fail A "no refusal of F, whose certificate has expired"
wait_until 20 srv_log_has G "refusing upstream LDM 127.0.0.1 port ${SRV_PORT[A]}: its certificate (CN=a.test" ||
  srv_fail G "G did not refuse an upstream whose CN is not the one asked for"
# The refused downstreams have tried at least twice (once a second):
# each refusal above is logged again, and nothing reached their queues.
refusals() {
  (($(srv_log A | grep -cF "because not allowed (TLSv1.3") >= $1))
}
wait_until 20 refusals 8 ||
  srv_fail A "the refused downstreams did not come back"
for s in C D E F G; do
  n=$(srv_count $s)
  ((n == 0)) || srv_fail $s "$s was refused, yet its queue has $n products"
done
ok "no certificate, another CA, a name not allowed, an expired certificate: refused, with the reason; G refuses A's name; their queues are empty"
for s in C D E F G; do
  srv_stop $s
done

# ---- 2. plain LDM-6 on the same port -----------------------------------
srv_stop A
srv_conf A <<'EOF2'
ALLOW ANY {cn=^b\.test$}^127\.0\.0\.1$
ALLOW ANY ^127\.0\.0\.1$
ACCEPT ANY .* ^127\.0\.0\.1$
EOF2
srv_start A "${SRV_PORT[A]}"
PORT=${SRV_PORT[A]}
srv_conf H <<'EOF2'
ALLOW ANY ^127\.0\.0\.1$
REQUEST ANY .* 127.0.0.1:@A@
EOF2
srv_start H
expect_rc 0 "$LDMPING" -v -i 0 -h "127.0.0.1:$PORT"
grep -q RESPONDING "$ERR" || fail "ldmping: no RESPONDING: $(cat "$ERR")"
background "$NOTIFYME" -v -h "127.0.0.1:$PORT" -f ANY -o 3600 2>nm.log
NM=$BG
head -c 4000 /dev/urandom >pushed
expect_rc 0 "$LDMSEND" -v -h "127.0.0.1:$PORT" -f EXP pushed
wait_until 20 has_ident "$(srv_queue H)" pushed ||
  srv_fail H "H's plain REQUEST did not get the product ldmsend pushed"
wait_until 20 has_ident "$(srv_queue B)" pushed ||
  srv_fail B "B did not come back over TLS to the restarted A"
wait_until 10 grep -qF pushed nm.log || fail "notifyme did not see the product: $(cat nm.log)"
kill -TERM "$NM"
wait "$NM"
srv_log A | grep -qE "TLS connection from $PEER_RE port [0-9]+: TLSv1\.3" ||
  srv_fail A "no TLS connection after A's restart"
ok "ldmping, notifyme, ldmsend and a plain REQUEST on the TLS port; B back over TLS"

# ---- 3. the clients over TLS (-S) ---------------------------------------
# With B's registry: its certificate (CN b.test) and the CA of A's.
CLIENT_REG=$(srv_dir B)/registry.xml
tls_conns() {
  srv_log A | grep -cE "TLS connection from $PEER_RE port [0-9]+: .*CN=b\.test"
}
before=$(tls_conns)
LDM_REGISTRY=$CLIENT_REG expect_rc 0 "$LDMPING" -S -v -i 0 -h "127.0.0.1:$PORT"
grep -q RESPONDING "$ERR" || fail "ldmping -S: no RESPONDING: $(cat "$ERR")"
LDM_REGISTRY=$CLIENT_REG background "$NOTIFYME" -S -v -h "127.0.0.1:$PORT" \
  -f EXP -o 3600 2>nm2.log
NM=$BG
head -c 3000 /dev/urandom >pushed2
LDM_REGISTRY=$CLIENT_REG expect_rc 0 "$LDMSEND" -S -v -h "127.0.0.1:$PORT" \
  -f EXP pushed2
wait_until 20 has_ident "$QA" pushed2 || fail "ldmsend -S: pushed2 is not in A's queue"
wait_until 10 grep -qF pushed2 nm2.log || fail "notifyme -S did not see pushed2: $(cat nm2.log)"
kill -TERM "$NM"
wait "$NM"
after=$(tls_conns)
((after >= before + 3)) ||
  srv_fail A "A logs $((after - before)) TLS connections of the clients, not 3"
# The server's certificate must name the host asked for: it does not name
# "localhost".
LDM_REGISTRY=$CLIENT_REG expect_rc 1 "$LDMPING" -S -i 0 -h "localhost:$PORT"
grep -qF "its certificate (CN=a.test) does not name localhost" "$ERR" ||
  fail "ldmping -S to localhost: no refusal of the name: $(cat "$ERR")"
# Without a CA bundle nothing can be verified: -S is refused.
expect_rc 1 "$LDMPING" -S -i 0 -h "127.0.0.1:$PORT"
grep -qF "sets no /tls/ca" "$ERR" || fail "ldmping -S without /tls/ca: $(cat "$ERR")"
ok "ldmping, notifyme and ldmsend with -S: TLS, the server verified; a wrong name and no CA refused"
