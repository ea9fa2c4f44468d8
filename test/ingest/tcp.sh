#!/usr/bin/env bash
# tcp.sh - noaaportIngester reading frames from TCP "fanout servers" (-T),
# as LDM's blender does: two servers on 127.0.0.1 (sbnsend -L) carry the
# same generated stream, each losing other frames; the ingester blends
# them and makes every product of the manifest once.  When the servers
# close, it logs LDM's blender's line and waits to try again; SIGTERM ends
# that wait at once, exit 0, with what was read kept.
source "$(dirname "$0")/lib.sh" "$@"
seed_init
cd "$SCRATCH" || fail "cd"

expect_rc 0 sbngen -n 150 -S "$SEED" -s 100:12000 \
  -k text=4,nexrad3=2,grib1=1,grib2=1 -t 25 -o stream.sbn -m want.tsv
grep -v '^#' want.tsv | awk -F'\t' '{print $1 "\t" $3}' | sort -n >want.seq
nwant=$(wc -l <want.seq)

# serve NAME ARGS...: a fanout server of the stream on 127.0.0.1, its port
# in $PORT once it listens.
serve() {
  local name=$1
  shift
  background sbnsend -L 0 -r 20 "$@" stream.sbn 2>"$name.err"
  wait_until 20 grep -q "listening on 127.0.0.1:" "$name.err" ||
    fail "fanout server $name did not start: $(cat "$name.err")"
  PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$name.err")
}
# Server one loses every 7th frame (indexes 6, 13, ...), server two others
# (none 6 modulo 7): every frame comes from one or the other.
serve one -d 7
p1=$PORT
serve two -D 2,9,15,40,42,43
p2=$PORT

background noaaportIngester -T "127.0.0.1:$p1" -T "127.0.0.1:$p2" -q "$Q" \
  -n -l ing.log
ING=$BG
wait_until 30 eval '(( $(inserted ing.log) >= nwant ))' ||
  fail "$(inserted ing.log) of $nwant products arrived from two servers"
sed -n 's/.* inserted .*seq \([0-9]*\) size \([0-9]*\)]$/\1\t\2/p' ing.log |
  sort -n >got.seq
diff want.seq got.seq >"$OUT" || fail "products differ from the manifest"
expect_not_in ing.log "already in queue"
expect_not_in ing.log "Missing fragment"
ok "two fanout servers, each losing frames, blended: every product, once"

wait_until 20 grep -q "Lost connection with fanout server. Will retry after 60 s. (127.0.0.1:$p1)" ing.log ||
  fail "no 'Lost connection' line when server one closed"
stop_expect "$ING" noaaportIngester TERM 10 0
((ms < 5000)) || fail "SIGTERM took $ms ms to end the wait to reconnect"
expect_in ing.log "Ingestion Statistics:"
ok "a lost server: LDM's line, and SIGTERM ends the wait"
