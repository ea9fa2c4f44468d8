#!/usr/bin/env bash
# The feed hub (ldmd/server/hub.h) serves many plain primary feeds with
# different classes, some identical, and applies each one's class and its
# upstream filter (the ALLOW entry that lets it have the feedtype, here one
# with a NOT pattern; docs/protocol.md section 5.3) to every product.
#
# One upstream ldmd, eight downstreams (ldm6_peer feedme, plain primary
# LDM-6), all from 127.0.0.1.  Their classes:
#   d1, d2  IDS ".*"               (the same class twice)
#   d3      IDS|DDPLUS ".*"
#   d4      DDPLUS "/1|^end"
#   d5, d6  NEXRAD2 ".*"           (the same class twice)
#   d7      NEXRAD2 "/[0-4]$"
#   d8      HDS ".*"
# ldmd.conf allows NEXRAD2 except idents that match ^secret, and IDS, DDPLUS
# and HDS whole; NEXRAD3 products are not allowed to anyone.  Half of the
# products are in the queue before the feeds start (they start an hour
# back), half come while they run; sizes are small (copied into a batch)
# and large (written from the queue as the socket takes them).  After the
# products, one last product of each feedtype ("end-..."); each feed is in
# insertion order, so once a downstream has the last one it wants, it has
# had everything it will get.
#
# Each downstream must get exactly the products its class and the filter
# let through (computed here from the upstream's queue), each once, intact
# (the peer checks each product's MD5, its signature), and the upstream's
# summaries of the eight feeds must add up to what arrived.
#   A. With the hub (the default): the log shows the hub process started
#      and the hub ("hub" in the log lines) taking all eight feeds.
#   B. ldmd started with a soft limit of 64 open files: 30 feeds, each
#      two descriptors in the hub, all taken by the hub (it lifts its own
#      limit).
#   C. With <feed-hub>FALSE</feed-hub>: no hub process, no hub line; the
#      connection processes deliver the same.
# The anti-DOS rule is off (/server/enable-anti-DOS): with it, a second
# feed of the same class from the same address replaces the first
# (ldmd/server/feeds.h), and d2 and d6 are that second feed.
source "$(dirname "$0")/lib.sh" "$@"

cat >"$CONF" <<'EOF'
ALLOW NEXRAD2 ^127\.0\.0\.1$ .* ^secret
ALLOW IDS|DDPLUS|HDS ^127\.0\.0\.1$
EOF

NAMES=(d1 d2 d3 d4 d5 d6 d7 d8)
declare -A FEED PAT WANT LAST
FEED=([d1]=IDS [d2]=IDS [d3]='IDS|DDPLUS' [d4]=DDPLUS [d5]=NEXRAD2
  [d6]=NEXRAD2 [d7]=NEXRAD2 [d8]=HDS)
PAT=([d1]='.*' [d2]='.*' [d3]='.*' [d4]='/1|^end' [d5]='.*' [d6]='.*'
  [d7]='/[0-4]$' [d8]='.*')
# What each may have, by ident (the prefix says the feedtype: ids- IDS,
# dd- DDPLUS, radar- and secret- NEXRAD2, hds- HDS, n3- NEXRAD3, and
# end-ids, end-dd, end-radar, end-hds, end-n3): an awk condition on $2.
# shellcheck disable=SC2016 # awk's $2, not the shell's
ids='$2 ~ /^(ids-[ab]|end-ids)\//'
# shellcheck disable=SC2016
dd='$2 ~ /^(dd-[ab]|end-dd)\//'
# shellcheck disable=SC2016
nx='$2 ~ /^(radar-[ab]|secret-[ab]|end-radar)\// && $2 !~ /^secret/'
# shellcheck disable=SC2016
WANT=([d1]="$ids" [d2]="$ids" [d3]="$ids || $dd" [d4]="$dd && \$2 ~ /\\/1|^end/"
  [d5]="$nx" [d6]="$nx" [d7]="$nx && \$2 ~ /\\/[0-4]\$/"
  [d8]='$2 ~ /^(hds-[ab]|end-hds)\//')
# The last product each wants: end-... in the order they are inserted.
LAST=([d1]=end-ids/0 [d2]=end-ids/0 [d3]=end-dd/0 [d4]=end-dd/0
  [d5]=end-radar/0 [d6]=end-radar/0 [d7]=end-radar/0 [d8]=end-hds/0)

# products TAG SEED: a batch of every feedtype, prefixes "...-TAG".
products() {
  local z=$2
  ins() {
    z=$((z + 1))
    expect_rc 0 "$PEER" insert -q "$Q" -f "$1" -i "$2" -n "$3" -s "$4" -z "$z"
  }
  ins IDS "ids-$1" 12 1000
  ins DDPLUS "dd-$1" 14 3000
  ins NEXRAD2 "radar-$1" 12 60000
  ins NEXRAD2 "secret-$1" 6 40000
  ins HDS "hds-$1" 5 200000
  ins NEXRAD3 "n3-$1" 5 2000
  ins IDS "ids-$1" 3 20000 # a second lot of IDS, large ones
}

# got_last NAME: has downstream NAME had the last product it wants?
got_last() {
  grep -q "^HEREIS [0-9a-f]* [0-9]* ${LAST[$1]} " "$1.out"
}

# run_case LABEL: a fresh queue, ldmd (-v: the hub's "feeding" lines are
# INFO), the eight feeds, the products; check what each got.
run_case() {
  local label=$1 n p total sum
  declare -A pid
  mkdir -p "$SCRATCH/$label"
  cd "$SCRATCH/$label" || exit 1
  make_queue 40000000
  start_ldmd -v
  products a 100
  for n in "${NAMES[@]}"; do
    background peer feedme -f "${FEED[$n]}" -P "${PAT[$n]}" -o 3600 -n -1 \
      -t 90 >"$n.out"
    pid[$n]=$BG
  done
  for n in "${NAMES[@]}"; do
    wait_until 20 grep -q '^OK' "$n.out" ||
      fail "$label: $n's FEEDME was not answered OK: $(head -3 "$n.out")"
  done
  products b 200
  expect_rc 0 "$PEER" insert -q "$Q" -f IDS -i end-ids -n 1 -s 500 -z 301
  expect_rc 0 "$PEER" insert -q "$Q" -f NEXRAD3 -i end-n3 -n 1 -s 500 -z 302
  expect_rc 0 "$PEER" insert -q "$Q" -f DDPLUS -i end-dd -n 1 -s 500 -z 303
  expect_rc 0 "$PEER" insert -q "$Q" -f NEXRAD2 -i end-radar -n 1 -s 500 -z 304
  expect_rc 0 "$PEER" insert -q "$Q" -f HDS -i end-hds -n 1 -s 500 -z 305
  "$PEER" dump -q "$Q" >up.dump || fail "$label: the upstream's dump failed"
  total=0
  for n in "${NAMES[@]}"; do
    wait_until 60 got_last "$n" ||
      fail "$label: $n did not get ${LAST[$n]}: $(tail -3 "$n.out")"
  done
  for n in "${NAMES[@]}"; do
    kill "${pid[$n]}" 2>/dev/null
    wait "${pid[$n]}" 2>/dev/null
    ! grep -q CORRUPT "$n.out" ||
      fail "$label: $n got damaged products: $(grep -m3 CORRUPT "$n.out")"
    awk "${WANT[$n]} { print \$1, \$2, \$3 }" up.dump | sort >"$n.want"
    awk '$1 == "HEREIS" { print $2, $4, $3 }' "$n.out" | sort >"$n.got"
    [[ -s $n.want ]] || fail "$label: nothing for $n in the queue"
    diff "$n.want" "$n.got" >"$n.diff" ||
      fail "$label: $n (${FEED[$n]} \"${PAT[$n]}\") did not get what it may have (< missing, > extra or twice): $(head -20 "$n.diff")"
    total=$((total + $(wc -l <"$n.got")))
  done
  # The summaries, written by each feed's connection process when its
  # downstream has gone: with the hub, counted by the hub.
  wait_until 20 logged 8 'products sent (' ||
    fail "$label: $(count "$LOG" 'products sent (') of 8 feeds ended"
  sum=$(sed -n 's/.* \([0-9]*\) products sent (.*/\1/p' "$LOG" |
    awk '{ s += $1 } END { print s + 0 }')
  ((sum == total)) ||
    fail "$label: the upstream says it sent $sum products, $total arrived"
  ok "$label: eight feeds (two pairs of one class) got exactly what their class and the ALLOW filter let through, each once, intact: $total products, as the upstream counted"
}

# ---- A. with the hub ----------------------------------------------------
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path><enable-anti-DOS>FALSE</enable-anti-DOS></server>"
run_case A
# One hub per CPU (docs/protocol.md 6.9): every one started.
hub_pids=$(sed -n 's/.*started feed hub process \([0-9]*\): feed hub.*/\1/p' "$LOG")
nhubs=$(wc -w <<<"$hub_pids")
((nhubs >= 1)) || fail "A: no 'started feed hub process' line"
# The hubs' lines: their ident and pid ("hub[PID]"); each feed taken once.
hub_feeding=0
for pid in $hub_pids; do
  hub_feeding=$((hub_feeding + $(grep -c " hub\[$pid\] .* feeding .*127\.0\.0\.1" "$LOG")))
done
((hub_feeding == 8)) ||
  fail "A: the hubs took $hub_feeding feeds, not 8: $(grep feeding "$LOG")"
(($(grep -c ' feeding ' "$LOG") == 8)) ||
  fail "A: feeding lines not from the hubs: $(grep feeding "$LOG")"
ok "A: the $nhubs hub processes ($(tr '\n' ' ' <<<"$hub_pids")) took all eight feeds"
stop_ldmd

# ---- B. a low limit on open files ---------------------------------------
# Each feed takes two descriptors in the hub (its socket and its pair), one
# in a connection process; the hub lifts its own soft limit to the hard
# one.  ldmd started with a soft limit of 64: 30 feeds (the connections it
# then allows: 64 less its own 32, ldmd/server/metrics_bounds.c), all taken
# by the hub, none handed over broken nor served by its own process.
if (($(ulimit -Hn) < 200)); then
  skip_part "B: the hard limit on open files ($(ulimit -Hn)) leaves no room above 64"
else
  mkdir -p "$SCRATCH/B"
  cd "$SCRATCH/B" || exit 1
  make_queue 20000000
  soft=$(ulimit -Sn)
  ulimit -Sn 64
  start_ldmd -v
  ulimit -Sn "$soft"
  pids=()
  for i in $(seq 1 30); do
    background peer feedme -f IDS -P "^c/|^x$i\$" -o 0 -n 1 -t 60 >"c$i.out"
    pids+=("$BG")
  done
  for i in $(seq 1 30); do
    wait_until 30 grep -q '^OK' "c$i.out" || fail "B: feed $i did not start: $(cat "c$i.out")"
  done
  wait_until 30 logged 30 'Starting Up(' || fail "B: $(count "$LOG" 'Starting Up(') of 30 feeds started"
  expect_rc 0 "$PEER" insert -q "$Q" -f IDS -i c -n 1 -s 1000 -z 400
  for i in $(seq 1 30); do
    wait "${pids[$((i - 1))]}" || fail "B: feed $i did not get c/0: $(tail -3 "c$i.out")"
  done
  hub_took=$(grep -c ' hub\[[0-9]*\] .* feeding ' "$LOG")
  ((hub_took == 30)) ||
    fail "B: the hub took $hub_took of 30 feeds: $(grep -m3 -E 'broken hand-over|refused' "$LOG")"
  ok "B: with a soft limit of 64 open files, the hub took all 30 feeds"
  stop_ldmd
fi

# ---- C. /server/feed-hub FALSE ------------------------------------------
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path><enable-anti-DOS>FALSE</enable-anti-DOS><feed-hub>FALSE</feed-hub></server>"
run_case C
expect_not_in "$LOG" "feed hub"
! grep -q ' hub\[' "$LOG" || fail "C: a hub logged: $(grep -m3 ' hub\[' "$LOG")"
ok "C: with /server/feed-hub FALSE no hub ran, and the feeds got the same"
stop_ldmd
