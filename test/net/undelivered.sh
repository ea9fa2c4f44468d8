#!/usr/bin/env bash
# A product the server cannot store is never taken as delivered.  The
# answer to ldmsend's final NULLPROC is what confirms its products; when
# it does not come, ldmsend names every product it offered (signature and
# identifier) and every file it did not send, on standard error, and
# exits non-zero:
#   - a server whose connection process dies in the middle of the
#     transfer (the test peer closes the connection after two products);
#   - a server that answers the NULLPROC with SYSTEM_ERR;
#   - ldmd itself when it cannot store a product (one larger than its
#     queue): it now answers that NULLPROC with SYSTEM_ERR (it used to
#     answer SUCCESS, and ldmsend exited 0 with the product lost).
# Arguments: ldmd, ldm6_peer, ldmsend.
source "$(dirname "$0")/lib.sh" "$@"
LDMSEND=${3:?path of ldmsend}

mkdir -p data
for f in a b c d; do
  head -c 3000 /dev/urandom >"data/$f"
done
head -c 1500000 /dev/urandom >data/huge
files=(data/a data/b data/c data/d)

# named_undelivered FILE...: each FILE is named on stderr as not
# delivered, with the MD5 of its data (its signature).
named_undelivered() {
  local f sum
  for f in "$@"; do
    sum=$(md5sum <"$f" | cut -c1-32)
    grep -qE "^ldmsend: not delivered to .*: $sum $f\$" "$ERR" ||
      fail "$f ($sum) is not named as not delivered"
  done
}

# with_server KIND N: the test peer as the server, -n N -k KIND; sets PORT.
with_server() {
  background "$PEER" hiya-server -n "$2" -k "$1" -t 20 >server.out
  wait_until 10 grep -q '^PORT' server.out || fail "the test server did not start"
  PORT=$(awk '/^PORT/ {print $2}' server.out)
}

# 1. The connection dies after two products: all four are named, those
# sent (unconfirmed) and those the broken connection took or refused.
with_server close 2
run "$LDMSEND" -h "127.0.0.1:$PORT" "${files[@]}"
[[ $rc != 0 ]] || fail "ldmsend exited 0 though the connection died"
wait "$BG"
n=$(grep -cE '^ldmsend: not (delivered|sent) to ' "$ERR")
((n == 4)) || fail "$n of the 4 files named as not delivered or not sent"
named_undelivered data/a data/b
ok "connection closed mid-transfer: exit $rc, every product named"

# 2. The NULLPROC answered SYSTEM_ERR: every product named.
with_server systemerr 4
run "$LDMSEND" -h "127.0.0.1:$PORT" "${files[@]}"
[[ $rc != 0 ]] || fail "ldmsend exited 0 though NULLPROC got SYSTEM_ERR"
wait "$BG"
named_undelivered "${files[@]}"
ok "NULLPROC answered SYSTEM_ERR: exit $rc, every product named"

# 3. ldmd with a queue too small for one of the products.
make_queue 1000000
cat >"$CONF" <<'EOF'
ACCEPT ANY .* ^127\.0\.0\.1$
EOF
start_ldmd
run "$LDMSEND" -h "127.0.0.1:$PORT" data/a data/huge data/b
[[ $rc != 0 ]] || fail "ldmsend exited 0 though data/huge was not stored"
named_undelivered data/a data/huge data/b
expect_in "$LOG" "product too big for $Q"
expect_in "$LOG" "1 products from localhost (127.0.0.1) since its last NULLPROC were not stored"
ok "ldmd cannot store a product: NULLPROC refused, ldmsend exit $rc, all named"

# 4. Everything stored: exit 0, nothing named.
expect_rc 0 "$LDMSEND" -h "127.0.0.1:$PORT" data/c data/d
expect_not_in "$ERR" "not delivered"
(($("$PEER" count -q "$Q") == 4)) || fail "the queue has not a, b, c, d"
stop_ldmd
ok "all stored: exit 0, nothing named"
