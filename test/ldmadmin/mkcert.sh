#!/usr/bin/env bash
# ldmadmin mkcert: a site key (mode 0600) and a self-signed certificate
# naming the registry's /hostname (CN and SAN) that verifies as its own
# CA, with the printed SHA-256 pin equal to the certificate's public key's;
# -s sets /tls/cert and /tls/key, and ldmd -n then loads them with an
# ldmd.conf that pins that key; -r makes a signing request for an address
# (SAN IP); an existing key is not replaced without -f; a bad -d refused.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
command -v openssl >/dev/null || fail "no openssl command (package openssl)"
D=$LDMHOME/etc/tls
name=ldmadmin-test.example

admin_ok mkcert -s
key=$D/$name.key
cert=$D/$name.pem
[[ -s $key && -s $cert ]] || fail "mkcert made no $key or $cert: $(cat "$OUT")"
[[ $(stat -c %a "$key") == 600 ]] || fail "$key has mode $(stat -c %a "$key"), not 600"
expect_rc 0 openssl verify -CAfile "$cert" "$cert"
expect_rc 0 openssl x509 -in "$cert" -noout -subject -ext subjectAltName
grep -q "CN = $name" "$OUT" || fail "the certificate's subject is not CN $name: $(cat "$OUT")"
grep -q "DNS:$name" "$OUT" || fail "the certificate's SAN is not DNS:$name: $(cat "$OUT")"
admin_ok mkcert -n other.example -o "$SCRATCH/o"
pin=$(sed -n 's/^sha256 //p' "$OUT")
want=$(openssl x509 -in "$SCRATCH/o/other.example.pem" -pubkey -noout |
  openssl pkey -pubin -outform DER | openssl dgst -sha256 -r | cut -c1-64)
[[ ${#pin} == 64 && $pin == "$want" ]] || fail "the pin '$pin' is not the key's SHA-256 '$want'"
ok "mkcert: key 0600, self-signed certificate of $name, pin of its key"

expect_rc 0 regutil /tls/cert
[[ $(cat "$OUT") == "$cert" ]] || fail "/tls/cert is '$(cat "$OUT")', not $cert"
expect_rc 0 regutil /tls/key
[[ $(cat "$OUT") == "$key" ]] || fail "/tls/key is '$(cat "$OUT")', not $key"
printf 'ALLOW ANY {sha256=%s}\n' "$pin" >"$SCRATCH/tls.conf"
expect_rc 0 ldmd -n -l - "$SCRATCH/tls.conf"
grep -q "TLS: certificate $cert" "$ERR" "$OUT" ||
  fail "ldmd -n did not load the certificate: $(cat "$ERR")"
ok "mkcert -s: ldmd -n loads the certificate and key, with a pinned key in ldmd.conf"

admin_ok mkcert -r -n 10.1.2.3 -o "$SCRATCH/o"
expect_rc 0 openssl req -in "$SCRATCH/o/10.1.2.3.csr" -noout -verify -text
grep -q "IP Address:10.1.2.3" "$OUT" || fail "the request has no SAN IP:10.1.2.3"
admin_fails mkcert -s -- "$key exists: not replaced (-f replaces it)"
before=$(md5sum <"$key")
admin_ok mkcert -f
[[ $(md5sum <"$key") != "$before" ]] || fail "mkcert -f did not replace $key"
admin_fails mkcert -d 0 -- 'the days "0" are not a count of at least 1'
admin_fails mkcert -n 'a b' -- '"a b" is not a host name or address'
ok "mkcert -r: a request for an address; no replacing without -f; bad days and names refused"
