#!/usr/bin/env bash
# publish.sh - pq2nats against a real nats-server (lib.sh), checked from
# the server's side with natspeek: products of 1 B, 1 MiB and 25 MiB (the
# two large ones chunked: the server's max_payload is 1 MiB) and small
# ones are stored once each, in the queue's order, with the contract's
# subjects and headers and byte-identical data; a second run with the same
# state publishes nothing; a run without the state publishes everything
# again and the stream drops it all (Nats-Msg-Id); a kill -9 of pq2nats
# while the server is frozen, and a stop and restart of the server while
# pq2nats publishes, lose nothing and store nothing twice.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"
[[ -x $NATSPEEK ]] || fail "natspeek is not built: '$NATSPEEK'"

Q=$SCRATCH/one.pq
STATE=$SCRATCH/one.state
LOG=$SCRATCH/pq2nats.log
D=$SCRATCH/data
mkdir -p "$D"
write_registry nats-test-host "  <queue><path>$Q</path></queue>"
expect_rc 0 pqcreate -c -s 200M -S 60000 -q "$Q"
nats_start js 0
URL=${NATS_URL[js]}

# count STREAM: the stream's message count.
count() {
  "$NATSPEEK" count "$URL" "$1" || fail "natspeek count $1 failed"
}
# dump: the product stream, one line a message (natspeek.c), into $DUMP.
DUMP=$SCRATCH/dump
dump() {
  "$NATSPEEK" dump "$URL" LDM ldm >"$DUMP" 2>"$SCRATCH/dump.err" ||
    fail "natspeek dump: $(cat "$SCRATCH/dump.err")"
}
# expected FILES...: "<md5> " of each file, in order, into stdout.
md5s() {
  md5sum "$@" | cut -d' ' -f1
}
# publish ARGS...: pq2nats -n on the queue; its log in $LOG.
publish() {
  pq2nats -q "$Q" -u "$URL" -S "$STATE" -n -l "$LOG" "$@" >"$OUT" 2>"$ERR"
  rc=$?
  sanitizer_check "$ERR" "pq2nats: the sanitizers found an error"
}
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS)
EXTRA_LOG=$LOG

# ---- 1 B, 1 MiB, 25 MiB and 300 small products ----
head -c 1 /dev/urandom >"$D/one"
head -c 1048576 /dev/urandom >"$D/mib"
head -c 26214400 /dev/urandom >"$D/big"
small=()
for i in $(seq 1 300); do
  printf 'small product %d\n' "$i" >"$D/s$i"
  small+=("$D/s$i")
done
expect_rc 0 pqinsert -q "$Q" -f WMO "$D/one" "$D/mib" "$D/big"
expect_rc 0 pqinsert -q "$Q" -f NEXRAD3 -p small "${small[@]}"
N=303

publish
((rc == 0)) || fail "pq2nats -n exited $rc"
grep -q "exiting: $N products published" "$LOG" ||
  fail "pq2nats did not say it published $N products"
[[ $(count LDM) == "$N" ]] || fail "the stream holds $(count LDM) messages, not $N"
# chunks: 1 MiB and 25 MiB in pieces of at most max_payload less 256 bytes
[[ $(count LDM_CHUNKS) == 28 ]] ||
  fail "the chunk stream holds $(count LDM_CHUNKS) messages, not 2 + 26"
ok "$N products published, 28 chunks"

dump
grep -v ' H ' "$DUMP" >"$SCRATCH/lines"
# in the queue's order: the three files, then small.0 to small.299
{
  printf '%s\n' "$D/one" "$D/mib" "$D/big"
  for i in $(seq 0 299); do echo "small.$i"; done
} >"$SCRATCH/want_idents"
cut -d' ' -f3 "$SCRATCH/lines" >"$SCRATCH/idents"
cmp -s "$SCRATCH/want_idents" "$SCRATCH/idents" ||
  fail "the stream's products are not the queue's, in order: $(diff "$SCRATCH/want_idents" "$SCRATCH/idents" | head -5)"
# byte-identical data: the MD5 natspeek computed over the body or the
# chunks put together, against the files'
md5s "$D/one" "$D/mib" "$D/big" "${small[@]}" >"$SCRATCH/want_md5"
cut -d' ' -f8 "$SCRATCH/lines" >"$SCRATCH/md5"
cmp -s "$SCRATCH/want_md5" "$SCRATCH/md5" || fail "the stored data differ from the products'"
# pqinsert's signature is the data's MD5: Ldm-Signature and Nats-Msg-Id
cut -d' ' -f5 "$SCRATCH/lines" | cmp -s - "$SCRATCH/want_md5" ||
  fail "Ldm-Signature is not the products' signature"
cut -d' ' -f6 "$SCRATCH/lines" | cmp -s - "$SCRATCH/want_md5" ||
  fail "Nats-Msg-Id is not the signature"
# subjects, sizes, chunks
read -r _ subj _ size _ _ chunks _ < <(sed -n 1p "$SCRATCH/lines")
[[ $subj == ldm.WMO && $size == 1 && $chunks == - ]] ||
  fail "1 B product: subject $subj, size $size, chunks $chunks"
read -r _ subj _ size _ _ chunks _ < <(sed -n 2p "$SCRATCH/lines")
[[ $subj == ldm.WMO && $size == 1048576 && $chunks == 2 ]] ||
  fail "1 MiB product: subject $subj, size $size, chunks $chunks"
read -r _ subj _ size _ _ chunks _ < <(sed -n 3p "$SCRATCH/lines")
[[ $subj == ldm.WMO && $size == 26214400 && $chunks == 26 ]] ||
  fail "25 MiB product: subject $subj, size $size, chunks $chunks"
[[ $(sed -n '4,$p' "$SCRATCH/lines" | cut -d' ' -f2 | sort -u) == ldm.NEXRAD3 ]] ||
  fail "the small products are not all on ldm.NEXRAD3"
# every header of the contract, with its form
h=$(grep ' H ' "$DUMP" | sed -n 4p)
for want in "Ldm-Ident=small.0" "Ldm-Origin=nats-test-host" "Ldm-Seqno=0" \
  "Ldm-Feedtype=NEXRAD3" "Ldm-Size=16" "Ldm-Signature=$(sed -n 4p "$SCRATCH/want_md5")" \
  "Nats-Msg-Id=$(sed -n 4p "$SCRATCH/want_md5")"; do
  [[ " $h " == *" $want "* ]] || fail "small.0 lacks the header $want: $h"
done
[[ $h =~ \ Ldm-Created=[0-9]{10}\.[0-9]{6}(\ |$) ]] || fail "Ldm-Created malformed: $h"
h=$(grep ' H ' "$DUMP" | sed -n 3p)
[[ " $h " == *" Ldm-Data-Md5=$(sed -n 3p "$SCRATCH/want_md5") "* ]] ||
  fail "the 25 MiB product's Ldm-Data-Md5 is not its data's MD5: $h"
ok "order, subjects, headers and data as the contract says"

# ---- the same state: nothing to publish ----
publish
((rc == 0)) || fail "second pq2nats -n exited $rc"
grep -q "exiting: 0 products published" "$LOG" ||
  fail "a second run with the same state published again"
[[ $(count LDM) == "$N" ]] || fail "the stream grew on the second run"
ok "a second run with the same state publishes nothing"

# ---- no state: everything again, dropped by the stream ----
rm -f "$STATE"
publish
((rc == 0)) || fail "pq2nats -n without state exited $rc"
grep -q "exiting: $N products published" "$LOG" ||
  fail "a run without the state did not publish everything again"
[[ $(count LDM) == "$N" && $(count LDM_CHUNKS) == 28 ]] ||
  fail "the stream did not drop the products published again: $(count LDM) and $(count LDM_CHUNKS)"
ok "without the state everything is published again and dropped as duplicates"

# the stream's products are those of want_md5, each once, in the queue's
# order (product messages go out in it, failures included)
all_once() {
  dump
  grep -v ' H ' "$DUMP" | cut -d' ' -f6 >"$SCRATCH/have_order"
  sort "$SCRATCH/have_order" >"$SCRATCH/have"
  [[ -z $(uniq -d "$SCRATCH/have") ]] ||
    fail "products stored twice: $(uniq -d "$SCRATCH/have" | head -3)"
  sort "$SCRATCH/want_md5" >"$SCRATCH/want_sorted"
  cmp -s "$SCRATCH/want_sorted" "$SCRATCH/have" ||
    fail "products lost: $(comm -23 "$SCRATCH/want_sorted" "$SCRATCH/have" | wc -l), extra: $(comm -13 "$SCRATCH/want_sorted" "$SCRATCH/have" | wc -l)"
  cmp -s "$SCRATCH/want_md5" "$SCRATCH/have_order" ||
    fail "the stream's products are not in the queue's order: $(diff "$SCRATCH/want_md5" "$SCRATCH/have_order" | head -4)"
}

# insert_batch TAG COUNT: COUNT more small products, and two of 3 MiB
# (chunked) among them; their MD5s appended to want_md5.
insert_batch() {
  local tag=$1 n=$2 i files=()
  for ((i = 0; i < n; i++)); do
    printf '%s product %d\n' "$tag" "$i" >"$D/$tag$i"
    files+=("$D/$tag$i")
  done
  head -c 3145728 /dev/urandom >"$D/${tag}big1"
  head -c 3145728 /dev/urandom >"$D/${tag}big2"
  expect_rc 0 pqinsert -q "$Q" -f NEXRAD3 -p "$tag" "${files[@]:0:n/2}"
  expect_rc 0 pqinsert -q "$Q" -f WMO "$D/${tag}big1"
  expect_rc 0 pqinsert -q "$Q" -f NEXRAD3 -p "$tag.b" "${files[@]:n/2}"
  expect_rc 0 pqinsert -q "$Q" -f WMO "$D/${tag}big2"
  md5s "${files[@]:0:n/2}" "$D/${tag}big1" "${files[@]:n/2}" "$D/${tag}big2" \
    >>"$SCRATCH/want_md5"
  N=$((N + n + 2))
}

# ---- kill -9 of pq2nats in mid-stream ----
# The server is frozen (SIGSTOP) once pq2nats has written its first
# position, so that the kill finds publishes in flight, unacknowledged.
insert_batch k 20000
before=$(count LDM)
background pq2nats -q "$Q" -u "$URL" -S "$STATE" -m 64 -i 1 -l "$LOG"
P=$BG
wait_until 60 eval "[[ \$(count LDM) -gt $((before + 200)) ]]" ||
  fail "pq2nats did not start publishing the new products"
kill -STOP "${NATS_PID[js]}"
kill -KILL "$P"
wait "$P" 2>/dev/null
kill -CONT "${NATS_PID[js]}"
mid=$(count LDM)
((mid < N)) || fail "pq2nats had published all ($mid of $N) before its kill"
publish -m 64
((rc == 0)) || fail "pq2nats -n after the kill exited $rc"
[[ $(count LDM) == "$N" ]] || fail "after the kill and restart: $(count LDM) products, not $N"
all_once
ok "kill -9 at $mid of $N products: restarted, nothing lost, nothing twice"

# ---- the server stopped and restarted while pq2nats publishes ----
insert_batch r 20000
before=$(count LDM)
: >"$LOG"
background pq2nats -q "$Q" -u "$URL" -S "$STATE" -m 64 -n -l "$LOG"
P=$BG
wait_until 60 eval "[[ \$(count LDM) -gt $((before + 200)) ]]" ||
  fail "pq2nats did not start publishing the new products"
nats_stop js
wait_until 30 grep -q "disconnected from the NATS server" "$LOG" ||
  fail "pq2nats did not notice the server's stop"
gone "$P" && fail "pq2nats exited while the server was away"
nats_restart js
wait_until 120 gone "$P" || fail "pq2nats -n did not finish after the server came back"
wait "$P"
rc=$?
((rc == 0)) || fail "pq2nats -n exited $rc after the server's restart"
expect_in "$LOG" "reconnected to the NATS server"
[[ $(count LDM) == "$N" ]] || fail "after the server's restart: $(count LDM) products, not $N"
all_once
ok "server stopped and restarted mid-stream: nothing lost, nothing twice"

# ---- usage errors exit 1 with a message; -h exits 0 ----
expect_rc 0 pq2nats -h
expect_in "$OUT" "usage: pq2nats"
expect_rc 1 pq2nats -q "$Q" -m 0
expect_in "$ERR" "maxpending"
expect_rc 1 pq2nats -q "$Q" -u "$URL" -P 'bad..prefix' -n -l -
expect_in "$ERR" "not a subject prefix"
expect_rc 1 pq2nats -q "$Q" -u "$URL" -r "$SCRATCH/no-such-rules" -n -l -
expect_in "$ERR" "$SCRATCH/no-such-rules"
printf 'WMO\t(\tx\n' >"$SCRATCH/bad-rules"
expect_rc 1 pq2nats -q "$Q" -u "$URL" -r "$SCRATCH/bad-rules" -n -l -
expect_in "$ERR" "bad-rules:1: pattern"
ok "usage and configuration errors exit 1 and say what is wrong"

# ---- subject rules, into a stream of their own ----
printf '# rules\nWMO\t^%s/(...)$\tfile.\\1\nNEXRAD3\t^small\\.(1[0-9])$\tsmall.\\1\n' \
  "${D//./\\.}" >"$SCRATCH/rules"
expect_rc 0 pq2nats -q "$Q" -u "$URL" -s RULES -P rules -S "$SCRATCH/rules.state" \
  -r "$SCRATCH/rules" -n -l -
"$NATSPEEK" dump "$URL" RULES rules >"$DUMP" 2>"$SCRATCH/dump.err" ||
  fail "natspeek dump RULES: $(cat "$SCRATCH/dump.err")"
for want in "rules.file.one $D/one" "rules.file.mib $D/mib" \
  "rules.file.big $D/big" "rules.small.10 small.10" "rules.small.19 small.19" \
  "rules.NEXRAD3 small.9" "rules.NEXRAD3 small.20"; do
  grep -qF " $want " "$DUMP" || fail "no message '$want' in the RULES stream"
done
ok "-r rules give the subjects, first match wins, the rest the default"

# ---- SIGTERM: a clean exit 0 with the state saved ----
rm -f "$SCRATCH/term.state"
background pq2nats -q "$Q" -u "$URL" -s RULES -P rules -S "$SCRATCH/term.state" \
  -i 1 -l "$LOG"
P=$BG
wait_until 60 grep -q "starting at the oldest product" "$LOG" ||
  fail "pq2nats did not start"
wait_until 60 test -s "$SCRATCH/term.state" || fail "no state written"
stop_expect "$P" pq2nats TERM 20 0
expect_in "$LOG" "exiting:"
grep -qE '^[0-9]+\.[0-9]{6}$' "$SCRATCH/term.state" ||
  fail "the state file holds no time: $(cat "$SCRATCH/term.state")"
ok "SIGTERM: exit 0, state saved"
