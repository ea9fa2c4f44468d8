#!/usr/bin/env bash
# ldmadmin's commands on the queue and the configuration, no server
# running: mkqueue (an existing queue kept without -c, replaced with it),
# delqueue (never without being asked: refused off a terminal without -y,
# "no" on a terminal keeps it), both with -q path, checkinsertion, queuecheck (a sound and a damaged queue),
# config, scour (on a scratch tree), pqactcheck (good and bad files, bad
# arguments, a warning shown, LDM's rule for the path in an EXEC entry,
# lines starting with a space) and the usage.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

# mkqueue.
admin_ok mkqueue
expect_in "$ERR" "made the queue $Q (2M)"
[[ -f $Q ]] || fail "mkqueue made no $Q"
head -c 1000 /dev/urandom >prod
run pqinsert prod
((rc == 0)) || fail "pqinsert into the new queue exited $rc"
admin_fails mkqueue -- "the queue $Q exists: ldmadmin delqueue first, or mkqueue -c"
[[ $(pqmon -S -q "$Q" | awk '{print $7}') == 1 ]] ||
  fail "a refused mkqueue changed the queue"
admin_ok mkqueue -c
[[ $(pqmon -S -q "$Q" | awk '{print $7}') == 0 ]] ||
  fail "mkqueue -c did not replace the queue"
ok "mkqueue, -c"

# checkinsertion: an empty queue, one whose newest product is 10 minutes
# old (more than the default 300 s), then a new product.
admin_fails checkinsertion -- "the queue $Q holds no product: is data arriving?"
old_us=$((($(date +%s) - 600) * 1000000))
"$HELPER" insert-at "$Q" "$old_us" old-product || fail "pqclihelper insert-at"
admin_fails checkinsertion -- "more than /insertion-check-interval (300 s)"
run pqinsert prod
((rc == 0)) || fail "pqinsert exited $rc"
admin_ok checkinsertion
expect_in "$ERR" "(limit 300 s)"
ok "checkinsertion"

# queuecheck.
admin_ok queuecheck
expect_in "$ERR" "the queue $Q is sound"
cp "$Q" good.pq
head -c 64 /dev/zero | dd of="$Q" conv=notrunc status=none || fail "dd into $Q"
admin_fails queuecheck -- "the queue $Q failed its check"
admin_fails start -P 0 -- "the queue $Q failed its check"
cp good.pq "$Q"
# A queue of another format version (an older build's; the version is the
# first thing pq_open() checks): start says what to do with it.
printf '\x01\x00\x00\x00' | dd of="$Q" bs=1 seek=8 conv=notrunc status=none ||
  fail "dd into $Q"
admin_fails start -P 0 -- "the queue $Q was made by another build (above): carry its products over"
expect_in "$ERR" "format version 1, this program reads version"
cp good.pq "$Q"
ok "queuecheck: sound, damaged"

# delqueue: off a terminal it asks for -y; on one, "n" keeps the queue.
admin_fails delqueue </dev/null -- "not deleting the queue $Q without confirmation"
[[ -f $Q ]] || fail "delqueue without -y deleted the queue"
if command -v script >/dev/null; then
  printf 'n\n' | script -qec "sh $ADMIN delqueue" /dev/null >"$OUT" 2>&1
  grep -qF "delete the queue $Q and every product in it?" "$OUT" ||
    fail "delqueue on a terminal did not ask: $(cat "$OUT")"
  grep -qF "the queue $Q is kept" "$OUT" || fail "no 'kept' after 'n': $(cat "$OUT")"
  [[ -f $Q ]] || fail "delqueue deleted the queue after 'n'"
else
  skip_part "no script(1): delqueue's question on a terminal not tried"
fi
admin_ok delqueue -y
expect_in "$ERR" "deleted the queue $Q"
[[ ! -e $Q ]] || fail "delqueue -y left $Q"
admin_fails delqueue -y -- "there is no queue $Q to delete"
admin_fails queuecheck -- "there is no queue $Q to check"
ok "delqueue"

# mkqueue and delqueue -q PATH (LDM's): another queue than /queue/path,
# which is left alone; -v goes to pqcreate.
admin_ok mkqueue -v -q "$SCRATCH/other.pq"
expect_in "$ERR" "made the queue $SCRATCH/other.pq (2M)"
[[ -f $SCRATCH/other.pq ]] || fail "mkqueue -q made no $SCRATCH/other.pq"
[[ ! -e $Q ]] || fail "mkqueue -q made /queue/path's $Q too"
admin_fails mkqueue -q "$SCRATCH/other.pq" -- "the queue $SCRATCH/other.pq exists"
admin_ok delqueue -y -q "$SCRATCH/other.pq"
expect_in "$ERR" "deleted the queue $SCRATCH/other.pq"
[[ ! -e $SCRATCH/other.pq ]] || fail "delqueue -q left $SCRATCH/other.pq"
ok "mkqueue, delqueue -q path"

# config.
admin_ok config
expect_in "$OUT" "/queue/path : $Q"
expect_in "$OUT" "pid file : $PIDFILE"
ok "config"

# scour: the registry's scour.conf on a scratch tree.
mkdir -p tree
touch -d '3 days ago' tree/old.dat
touch tree/new.dat
printf '%s\t1\t*.dat\n' "$SCRATCH/tree" >scour.conf
admin_ok scour
[[ ! -e tree/old.dat ]] || fail "scour left the 3-day-old file"
[[ -e tree/new.dat ]] || fail "scour deleted the new file"
rm scour.conf
admin_fails scour -- "scour failed with $SCRATCH/scour.conf"
ok "scour"

# pqactcheck.
admin_ok pqactcheck
expect_in "$ERR" "$PQACT_CONF is a valid pqact configuration"
printf 'ANY\t(unclosed\n\tFILE\tx\n' >bad.pqact
admin_fails pqactcheck -p "$SCRATCH/bad.pqact" -- "$SCRATCH/bad.pqact is not a valid pqact configuration"
admin_ok pqactcheck -p "$PQACT_CONF"
# The arguments are checked too (issue 22); an unknown option is a warning.
printf 'ANY\tx\tEXEC\t-wait\n' >noexec.pqact
admin_fails pqactcheck -p "$SCRATCH/noexec.pqact" -- "$SCRATCH/noexec.pqact is not a valid pqact configuration"
expect_in "$ERR" "EXEC has no command: \"-wait\" is one of its options at line 1"
printf 'ANY\tx\tFILE\t-bogus out\n' >warn.pqact
admin_ok pqactcheck -p "$SCRATCH/warn.pqact"
expect_in "$ERR" "unknown option \"-bogus\" of FILE (ignored) at line 1"
expect_in "$ERR" "$SCRATCH/warn.pqact is a valid pqact configuration"
# The path is the entry's last word; after -d (or an option) the registry's.
printf 'EXEC\t"pqact -d /tmp %s"\n EXEC "pqact"\n' "$SCRATCH/bad.pqact" >other.conf
admin_fails pqactcheck "$SCRATCH/other.conf" -- "$SCRATCH/bad.pqact is not a valid pqact configuration"
expect_in "$ERR" "$PQACT_CONF is a valid pqact configuration"
expect_in "$ERR" "the lines above start with a space"
printf 'EXEC\t"pqact -d %s"\n' "$SCRATCH/bad.pqact" >dash.conf
admin_ok pqactcheck "$SCRATCH/dash.conf"
expect_in "$ERR" "$PQACT_CONF is a valid pqact configuration"
# AWIPS's pqact -e -k c -s c: the characters are no path
printf 'EXEC\t"pqact -e -k X -s y"\n' >awips.conf
admin_ok pqactcheck "$SCRATCH/awips.conf"
expect_in "$ERR" "$PQACT_CONF is a valid pqact configuration"
admin_fails pqactcheck nosuch.conf -- "cannot read the server's configuration nosuch.conf"
# Relative to LDMHOME, as in LDM.
mv "$SCRATCH/dash.conf" "$LDMHOME/rel.conf"
admin_ok pqactcheck rel.conf
LDMHOME=$SCRATCH/nosuch admin_fails config -- "cannot change to LDMHOME $SCRATCH/nosuch"
ok "pqactcheck"

admin_fails frobnicate -- 'unknown command "frobnicate"'
expect_in "$ERR" "usage: ldmadmin"
admin_fails -- "usage: ldmadmin"
ok "usage"
