#!/usr/bin/env bash
# Access as LDM grants it: a host no ALLOW or ACCEPT entry admits is
# refused with AUTH_TOOWEAK and the connection closed; ALLOW narrowing a
# request gives RECLASS with the allowed class, and a request on the
# same connection with that class then gets OK; a host admitted only by
# ACCEPT gets the empty RECLASS for a FEEDME; a bad pattern gets BADPATTERN.
source "$(dirname "$0")/lib.sh" "$@"

make_queue 10000000
# 127.0.0.1 may have WMO; ::1 may only push.  Nobody else is admitted.
cat >"$CONF" <<'EOF'
ALLOW WMO ^127\.0\.0\.1$ ^SA ^SAUS
ACCEPT ANY .* ^::1$
EOF
start_ldmd
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 100 -f IDS -i SAXX01
expect_rc 0 "$PEER" insert -q "$Q" -n 1 -s 100 -f IDS -i SAUS01 -z 2

expect_rc 3 peer notifyme -f ANY -o 60
expect_in "$OUT" 'RECLASS 1 {WMO,".*"}'
ok "RECLASS: ANY narrowed to WMO"
expect_rc 0 peer notifyme -f WMO -o 60 -n 1 -t 5
expect_in "$OUT" "SAXX01/0"
expect_rc 1 peer notifyme -f WMO -o 60 -n 2 -t 2
expect_in "$OUT" "TIMEOUT after 1 products"
expect_not_in "$OUT" "SAUS01"
ok "the narrowed request is served; the ALLOW's OK and NOT patterns filter"

expect_rc 5 peer feedme -f WMO -P '(unclosed' -o 60
expect_in "$OUT" BADPATTERN
ok "BADPATTERN for a pattern that does not compile"

if [[ $HAVE_V6 == 1 ]]; then
  expect_rc 3 peer notifyme -h ::1 -f ANY -o 60
  expect_in "$OUT" "RECLASS 0"
  ok "empty RECLASS for a host allowed nothing (admitted by ACCEPT only)"
else
  skip_part "IPv6 (an empty RECLASS over ::1): no ::1 on this host"
fi
stop_ldmd

# Now 127.0.0.1 is not admitted at all.
cat >"$CONF" <<'EOF'
ALLOW ANY ^10\.255\.255\.254$
ACCEPT ANY .* ^10\.255\.255\.253$
EOF
start_ldmd
expect_rc 4 peer notifyme -f ANY -o 60
expect_in "$OUT" "DENIED reject=1 auth=5"
expect_rc 4 peer call -V 6 -R 0
expect_in "$LOG" "denying connection from"
expect_in "$LOG" "because not allowed"
ok "a host no entry admits is refused (AUTH_TOOWEAK) and logged"
stop_ldmd
