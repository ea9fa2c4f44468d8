#!/usr/bin/env bash
# Wire compatibility with real LDM 6.15: the client side of a captured
# session between real LDM servers and clients (test/vectors/ldm6) is
# replayed against ldmd, and ldmd must answer with the bytes the real
# server sent: a primary FEEDME from a real requester (reply, HEREIS,
# NULLPROC flush), an alternate one (COMINGSOON answered DONT_SEND, then OK,
# BLKDATA, NULLPROC), notifyme's NOTIFYME (with its PROC_UNAVAIL answers to
# NOTIFICATION), ldmsend's HIYA + HEREIS + NULLPROC, and ldmping's LDM-5
# NULLPROC.  Only the xids of the server's own calls and the pid in the OK
# reply may differ.  The capture is part of the tree: without it the test
# fails.  $LDM6_VECTORS names another directory holding one.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"

VEC=${LDM6_VECTORS:-$HERE/../vectors/ldm6}
[[ -r $VEC/session_decoded.txt ]] ||
  fail "cannot read the LDM-6 capture $VEC/session_decoded.txt"

# One file per TCP connection: "C <hex>" client records, "S <hex>" server
# records, in order.
awk '
/^TCP connection/ { conn++; split($6, a, ":"); sport = a[2]; next }
/^t=\+/ {
  for (i = 1; i <= NF; i++)
    if ($i == "->") { split($(i - 1), s, ":"); dir = (s[2] == sport) ? "S" : "C" }
  if (msg != "") print msg > ("conn" conn0 ".txt")
  msg = dir; conn0 = conn; inhex = 1; next
}
/^  fields:/ { inhex = 0; next }
inhex && /^  [0-9a-f][0-9a-f][0-9a-f][0-9a-f]  / {
  for (i = 2; i <= NF && $i !~ /^\|/; i++) if (length($i) == 2) msg = msg " " $i
}
END { if (msg != "") print msg > ("conn" conn0 ".txt") }
' "$VEC/session_decoded.txt"
for i in 1 2 3 4 5; do
  [[ -s conn$i.txt ]] || fail "the capture has no connection $i"
done
line() { sed -n "$2p" "conn$1.txt" | cut -c2-; }

make_queue 10000000
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT ANY .* ^127\.0\.0\.1$
EOF
# The captured products were created when the capture was made.
start_ldmd -m 2000000000

# FEEDME primary: the product the real server had, then the session.
{ echo "I$(line 1 3)"; sed -n 1,5p conn1.txt; } >s1.txt
expect_rc 0 "$PEER" replay -p "$PORT" -q "$Q" -k s1.txt
(($(count "$OUT" SAME) == 3)) || fail "FEEDME primary: $(cat "$OUT")"
ok "FEEDME (primary): OK, HEREIS and NULLPROC as real LDM sends them"

{ sed -n 1,6p conn3.txt; } >s3.txt
expect_rc 0 "$PEER" replay -p "$PORT" -q "$Q" -k s3.txt
(($(count "$OUT" SAME) == 3)) || fail "NOTIFYME: $(cat "$OUT")"
ok "NOTIFYME: OK, NOTIFICATION and NULLPROC as real LDM sends them"

# FEEDME alternate, from the real server C: its queue had its own copy of
# the first product (created later, same data), then one more.
stop_ldmd
make_queue 10000000
start_ldmd -m 2000000000
{
  echo "J$(line 2 3)"
  echo "L$(line 1 3)"
  echo "J$(line 2 5)"
  echo "K$(line 2 7)"
  cat conn2.txt
} >s2.txt
expect_rc 0 "$PEER" replay -p "$PORT" -q "$Q" -k s2.txt
(($(count "$OUT" SAME) == 5)) || fail "FEEDME alternate: $(cat "$OUT")"
ok "FEEDME (alternate): COMINGSOON, DONT_SEND honoured, BLKDATA as LDM's"

expect_rc 0 "$PEER" replay -p "$PORT" -q "$Q" -k conn4.txt
(($(count "$OUT" SAME) == 2)) || fail "HIYA: $(cat "$OUT")"
expect_rc 0 "$PEER" notifyme -p "$PORT" -P '^cap_ldmsend$' -o 1000000000 -n 1 -t 5
expect_in "$OUT" "cap_ldmsend vm_v_"
ok "ldmsend's HIYA push: replies as LDM's; product queued, origin rewritten"

expect_rc 0 "$PEER" replay -p "$PORT" -q "$Q" -k conn5.txt
expect_in "$OUT" "SAME line 2"
ok "ldmping's LDM-5 NULLPROC"
stop_ldmd
