#!/usr/bin/env bash
# pqing.sh - pqing run on streams the tests make (wmogen, wmo_build.h): for
# each framing, the products in the queue (pqcat -L -x) are those wmogen
# expects, feedtype, sequence number, identifier, size and signature alike,
# and every bad message is logged in LDM's words and skipped: the text
# framing (ids: PILs, a NEXRAD heading, not WMO, too short, a lone SOH, a
# duplicate), the binary one (hds: a GRIB model, an ETX inside the data,
# stuffing), the HDS CRC (hds -c, a bad CRC), AFOS, FAA604, a message over
# -s, signatures with -5, standard input, feedtest, usage errors; and a TCP
# source that drops in mid-message: what was lost is logged, pqing connects
# again and takes the next connection's products; -T reconnects an idle
# one, a refused connect is tried again after a back-off, which SIGTERM
# ends, exit 0.
# Arguments: the directory of the programs, the directory of wmogen.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

ingest text ids
check text
expect_in "$LOG" 'FILE "text.wmo"'
expect_in "$LOG" "Not a WMO format message."
expect_in "$LOG" "scan_wmo: length 11 too short"
expect_in "$LOG" "Lone SOH error"
expect_in "$LOG" "Product already in queue"
expect_in "$LOG" "  WMO Messages seen:         5"
expect_in "$LOG" "  WMO format errors:         2"
expect_in "$LOG" "  Duplicates rejected:       1"
ok "text framing (ids): PILs, NEXRAD, refusals in LDM's words, a duplicate"

ingest binary hds
check binary
ok "binary framing (hds): GRIB model, an ETX inside the data, stuffing"

ingest crc hds -c
check crc
expect_in "$LOG" "Checksum (0x"
expect_in "$LOG" "  parity/chksum err:         1"
ok "HDS CRC (hds -c): a bad CRC dropped, the others whole"

ingest afos afos
check afos
expect_in "$LOG" " Missing NNNN:"
ok "AFOS framing: identifiers, a message without NNNN"

ingest faa604 pqing -f FAA604
check faa604
ok "FAA604 framing: catalogue number, date and heading"

ingest big hds -s 300
check big
expect_in "$LOG" "Data-product would exceed 300 bytes. Resetting input buffer."
ok "a message over -s: logged and skipped, the next one inserted"

# -5: two messages that differ only in their sequence number.
ingest seq5 hds -5
check seq5
fresh
expect_rc 0 hds -v -l "$LOG" -q "$Q" seq5.wmo
[[ $(products | wc -l) == 1 ]] || fail "without -5: not 1 product"
expect_in "$LOG" "Product already in queue"
ok "signatures: with -5 over the whole message, else without the sequence"

# Standard input, and the stream read in small pieces: the same products.
fresh
LOG=$SCRATCH/stdin.log
run bash -c "dd if=binary.wmo bs=7 status=none | hds -r raw.out -l '$LOG' -q '$Q' -"
((rc == 0)) || fail "hds - exited $rc"
expect_in "$LOG" "FILE stdin"
cmp binary.wmo raw.out >"$OUT" 2>&1 || fail "-r: the raw file is not the input"
WANT=$SCRATCH/binary.want
GOT=$SCRATCH/stdin.got
products >"$GOT"
diff "$WANT" "$GOT" >"$OUT" || fail "standard input: other products"
ok "standard input, in 7-byte pieces: the same products; -r copies the input"

# feedtest: no queue, each product logged.
LOG=$SCRATCH/feedtest.log
expect_rc 0 feedtest -l "$LOG" -q "$SCRATCH/none.pq" text.wmo
expect_in "$LOG" "SAUS70 KWBC 071200 /pMTRDEN"
expect_not_in "$LOG" "pq_open"
ok "feedtest: parses, logs, inserts nothing and opens no queue"

# Usage errors and what cannot be opened: exit 1.
expect_rc 1 pqing -q "$Q"
expect_rc 1 pqing -q "$Q" a b
expect_rc 1 pqing -z -q "$Q" text.wmo
expect_rc 1 pqing -s 0 -q "$Q" text.wmo
expect_rc 1 pqing -l - -q "$Q" "$SCRATCH/missing.wmo"
expect_in "$ERR" 'Couldn'"'"'t open file'
expect_rc 1 pqing -l - -q "$SCRATCH/none.pq" text.wmo
expect_rc 0 pqing -h
ok "usage errors, a missing file, a missing queue: exit 1; -h: 0"

# A TCP source: the first connection ends in mid-message, the second
# carries on.
expect_rc 0 wmogen make tcp1 tcp1.wmo tcp1.want
expect_rc 0 wmogen make tcp2 tcp2.wmo tcp2.want
cat tcp1.want tcp2.want >tcp.want
background wmogen serve port tcp1.wmo tcp2.wmo 2>serve.err
wait_until 20 test -s port || fail "wmogen serve did not listen"
fresh
LOG=$SCRATCH/tcp.log
background hds -v -l "$LOG" -q "$Q" -P "$(cat port)" -T 2 127.0.0.1 2>hds.err
ING=$BG
wait_until 60 holds_at_least 4 ||
  fail "$(products | wc -l) of 4 products came over TCP"
check tcp
expect_in "$LOG" 'NET "127.0.0.1"'
expect_in "$LOG" "connection to 127.0.0.1 port $(cat port) closed by the peer"
expect_in "$LOG" "40 bytes of an unfinished message lost"
expect_in "$LOG" "Trying to re-open connection on port $(cat port)"
kill -USR1 "$ING"
wait_until 20 grep -q "Statistics Request" "$LOG" || fail "no statistics on SIGUSR1"
wait_until 20 grep -q "Connections lost: *1$" "$LOG" ||
  fail "the statistics do not count the lost connection"
ok "TCP: a drop in mid-message logged with what was lost; reconnected"
# -T 2: the second connection, idle, is dropped and made again; the
# server, done, refuses it, and pqing waits to try again, which SIGTERM
# ends at once.
wait_until 30 grep -q "Idle for [0-9]* seconds, reconnecting" "$LOG" ||
  fail "no reconnection after -T 2 idle seconds"
wait_until 30 grep -q "sleeping 1 seconds before retry 2" "$LOG" ||
  fail "no back-off after a refused connection"
stop_expect "$ING" hds TERM 10 0 hds.err
((ms < 5000)) || fail "SIGTERM took $ms ms to end the wait to reconnect"
expect_in "$LOG" "Exiting"
sanitizer_check "$LOG"
ok "TCP: -T reconnects an idle connection; SIGTERM ends the back-off wait"
