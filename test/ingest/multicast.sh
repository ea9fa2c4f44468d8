#!/usr/bin/env bash
# multicast.sh - noaaportIngester on a multicast group, as at a NOAAPORT
# site, inside a network namespace of the test's own (nothing leaves it):
#   1. a sender replays a generated stream (sbngen, sbnsend) on loopback
#      and every product of its manifest arrives, once, with its size and
#      sequence number; SIGUSR1 on the silent channel logs the statistics;
#   2. two senders carry the same stream to one receiver, one losing every
#      7th frame, and the ingester blending them (-W) still makes every
#      product exactly once;
#   3. two dishes: two interfaces (veth pairs, 192.0.2.0/24 and
#      198.51.100.0/24, documentation ranges, in the namespace only), the
#      ingester joined on both (-I twice: blended), each dish losing other
#      frames, and every product arrives once.
# Run again inside a network namespace of the test's own, before the
# scratch directory is made (an exec skips the trap that removes it).
if [[ ${NP_IN_NETNS:-} != 1 ]] && ((EUID == 0)) &&
  command -v unshare >/dev/null && command -v ip >/dev/null &&
  unshare -n true 2>/dev/null; then
  NP_IN_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh" "$@"
[[ ${NP_IN_NETNS:-} == 1 ]] ||
  skip_test "a network namespace needs root, unshare(1) and ip(8)"
ip link set lo up && ip link set lo multicast on &&
  ip route add 224.0.0.0/4 dev lo || fail "cannot set up loopback multicast"
seed_init
cd "$SCRATCH" || fail "cd"

# The stream: every kind of product, some of several frames.
expect_rc 0 sbngen -n 150 -S "$SEED" -s 100:12000 -k text=4,nexrad3=2,grib1=1,grib2=1 \
  -t 25 -o stream.sbn -m want.tsv
grep -v '^#' want.tsv | awk -F'\t' '{print $1 "\t" $3}' | sort -n >want.seq
nwant=$(wc -l <want.seq)
((nwant == 150)) || fail "the manifest has $nwant products"

# got_seq LOG: "seqno<TAB>size" of each inserted line of LOG, sorted.
got_seq() {
  sed -n 's/.* inserted .*seq \([0-9]*\) size \([0-9]*\)]$/\1\t\2/p' "$1" |
    sort -n
}

# joined LOG N: LOG says the group was joined N times (a line each).
joined() {
  local n
  n=$(grep -c "Receive buffer size is" "$1" 2>/dev/null)
  ((${n:-0} >= $2))
}

# start_ingester LOG [OPTIONS...]: the ingester on 224.0.1.1 (port 1201)
# with OPTIONS (default -I 127.0.0.1), once it has joined on each -I
# (JOINS of them; a receive-buffer line follows each join).
start_ingester() {
  local log=$1
  shift
  (($#)) || set -- -I 127.0.0.1
  background noaaportIngester -m 224.0.1.1 -R 8000000 -q "$Q" -n -l "$log" "$@"
  ING=$BG
  wait_until 20 joined "$log" "${JOINS:-1}" ||
    fail "the ingester did not join the group"
}

# 1. One sender.
start_ingester one.log
expect_rc 0 sbnsend -g 224.0.1.1:1201 -i 127.0.0.1 -r 40 stream.sbn
wait_until 30 eval '(( $(inserted one.log) >= nwant ))' ||
  fail "$(inserted one.log) of $nwant products arrived"
kill -USR1 "$ING" # nothing comes now: the statistics must all the same
wait_until 20 grep -q "Ingestion Statistics:" one.log ||
  fail "no statistics after SIGUSR1 on a silent channel"
stop_expect "$ING" noaaportIngester TERM 10 0
got_seq one.log >got.seq
diff want.seq got.seq >"$OUT" || fail "products differ from the manifest"
expect_not_in one.log "Gap in packet sequence"
ok "one sender: every product, once"

# 2. Two senders of the same stream, one losing every 7th frame.
pqcreate -c -s 20M -q "$Q" >/dev/null 2>&1 || fail "pqcreate failed"
start_ingester two.log -I 127.0.0.1 -W 0.5
sbnsend -g 224.0.1.1:1201 -i 127.0.0.1 -r 20 -d 7 stream.sbn &
lossy=$!
expect_rc 0 sbnsend -g 224.0.1.1:1201 -i 127.0.0.1 -r 20 stream.sbn
wait "$lossy" || fail "the lossy sender failed"
wait_until 30 eval '(( $(inserted two.log) >= nwant ))' ||
  fail "$(inserted two.log) of $nwant products arrived from two senders"
stop_expect "$ING" noaaportIngester TERM 10 0
got_seq two.log >got2.seq
diff want.seq got2.seq >"$OUT" || fail "blended products differ from the manifest"
expect_not_in two.log "already in queue"
expect_not_in two.log "Missing fragment"
ok "two senders, one lossy, blended: every product, once"

# 3. Two dishes on two interfaces.
for d in A:192.0.2 B:198.51.100; do
  n=${d%%:*} net=${d#*:}
  ip link add "v${n}0" type veth peer name "v${n}1" 2>/dev/null || {
    skip_part "no veth interfaces here: two dishes not tried"
    exit 0
  }
  ip addr add "$net.1/24" dev "v${n}0" && ip addr add "$net.2/24" dev "v${n}1" &&
    ip link set "v${n}0" up && ip link set "v${n}1" up || fail "veth $n"
done
# A frame a dish sends comes in on the other end of its pair, from an
# address of this namespace: take it (accept_local), whatever the route.
for k in all default vA0 vA1 vB0 vB1; do
  sysctl -qw "net.ipv4.conf.$k.rp_filter=0" "net.ipv4.conf.$k.accept_local=1" ||
    fail "sysctl $k"
done
pqcreate -c -s 20M -q "$Q" >/dev/null 2>&1 || fail "pqcreate failed"
JOINS=2 start_ingester dishes.log -I 192.0.2.1 -I 198.51.100.1
# Dish A loses every 7th frame (indexes 6, 13, ...), dish B others (none
# 6 modulo 7): every frame reaches one dish or the other.
sbnsend -g 224.0.1.1:1201 -i 192.0.2.2 -r 20 -d 7 stream.sbn &
dish_a=$!
expect_rc 0 sbnsend -g 224.0.1.1:1201 -i 198.51.100.2 -r 20 -D 2,9,15,40,42,43 \
  stream.sbn
wait "$dish_a" || fail "dish A's sender failed"
wait_until 30 eval '(( $(inserted dishes.log) >= nwant ))' ||
  fail "$(inserted dishes.log) of $nwant products arrived from two dishes"
stop_expect "$ING" noaaportIngester TERM 10 0
got_seq dishes.log >got3.seq
diff want.seq got3.seq >"$OUT" || fail "two dishes' products differ from the manifest"
expect_not_in dishes.log "already in queue"
expect_not_in dishes.log "Missing fragment"
ok "two dishes on two interfaces, each losing frames: every product, once"
