#!/usr/bin/env bash
# multicast.sh - noaaportIngester on a multicast group, as at a NOAAPORT
# site, inside a network namespace of the test's own (loopback with
# multicast on; nothing leaves it): a sender replays a generated stream
# (sbngen, sbnsend) and every product of its manifest arrives, once, with
# its size and sequence number; then two senders carry the same stream,
# one of them losing every 7th frame, and the ingester blending them (-W)
# still makes every product exactly once.
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

# start_ingester LOG [OPTIONS...]: the ingester on 224.0.1.1 (port 1201),
# once it has joined (its receive-buffer line follows the join).
start_ingester() {
  local log=$1
  shift
  background noaaportIngester -m 224.0.1.1 -I 127.0.0.1 -R 8000000 -q "$Q" \
    -n -l "$log" "$@"
  ING=$BG
  wait_until 20 grep -q "Receive buffer size is" "$log" ||
    fail "the ingester did not join the group"
}

# 1. One sender.
start_ingester one.log
expect_rc 0 sbnsend -g 224.0.1.1:1201 -i 127.0.0.1 -r 40 stream.sbn
wait_until 30 eval '(( $(inserted one.log) >= nwant ))' ||
  fail "$(inserted one.log) of $nwant products arrived"
stop_expect "$ING" noaaportIngester TERM 10 0
got_seq one.log >got.seq
diff want.seq got.seq >"$OUT" || fail "products differ from the manifest"
expect_not_in one.log "Gap in packet sequence"
ok "one sender: every product, once"

# 2. Two senders of the same stream, one losing every 7th frame.
pqcreate -c -s 20M -q "$Q" >/dev/null 2>&1 || fail "pqcreate failed"
start_ingester two.log -W 0.5
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
