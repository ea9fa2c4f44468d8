#!/usr/bin/env bash
# The queue across reboots, with the unit's own command lines: products
# inserted while ldmd runs survive a stop, a wiped /dev/shm directory and
# a start (same products, same order, same bytes, a sound queue); a start
# with the queue there leaves it alone; a start with neither queue nor
# snapshot makes an empty queue; a queue of another format version (an
# upgrade) is replaced by the snapshot saved after it, or set aside when
# there is none; a damaged snapshot is set aside and the service still
# starts; a queue on a disk is not saved; ldmd-queue's
# errors say what failed.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
LQ=$BUILD/service/ldmd-queue

# First start: neither queue nor snapshot.
unit_start
expect_in pre.1 "made an empty queue $Q"
[[ -f $Q ]] || fail "no queue $Q after the first start"
mkdir f || fail "mkdir"
head -c $((300 * 1500)) /dev/urandom | split -b 1500 -a 5 -d - f/f ||
  fail "cannot make the files"
expect_rc 0 pqinsert -q "$Q" f/*
idents >before.idents
pqcat -q "$Q" >before.data 2>/dev/null || fail "pqcat"
[[ $(wc -l <before.idents) == 300 ]] || fail "the queue holds $(wc -l <before.idents) products, not 300"
unit_stop
expect_in post.1 "saved 300 products"
[[ -f $SNAP ]] || fail "no snapshot $SNAP after the stop"
ok "first start made a queue, the stop saved its 300 products"

# The reboot: /dev/shm emptied.  The start restores everything.
wipe
[[ ! -e $Q ]] || fail "the wipe left $Q"
unit_start
expect_in pre.1 "restored 300 of 300 products"
cmp -s before.idents <(idents) || fail "the restored queue's products differ (identifiers, order)"
cmp -s before.data <(pqcat -q "$Q" 2>/dev/null) || fail "the restored products' data differ"
expect_rc 0 pqcheck -C -q "$Q"
expect_rc 0 pqcat -c -q "$Q"
expect_not_in "$ERR" "mismatch"
ok "after a wiped /dev/shm: the same 300 products, in order, intact"

# A restart with the queue there: not touched, not replaced.
ino=$(stat -c %i "$Q")
head -c 777 /dev/urandom >new1 || fail "new1"
expect_rc 0 pqinsert -q "$Q" new1
unit_stop
unit_start
expect_in pre.1 "exists: used as it is"
[[ $(stat -c %i "$Q") == "$ino" ]] || fail "the start replaced the queue that was there"
idents >now.idents
[[ $(tail -1 now.idents) == new1 && $(wc -l <now.idents) == 301 ]] ||
  fail "the queue does not hold the 301 products it had"
ok "a start with the queue there uses it as it is"

# The registry's size applies to a queue restored after a reboot.
unit_stop
expect_rc 0 regutil -s 30M /queue/size
wipe
unit_start
expect_in pre.1 "restored 301 of 301"
qsize=$(pqmon -S -q "$Q" | awk '{print $2}') # the data size, rounded up
((qsize >= 30000000 && qsize < 31000000)) ||
  fail "the restored queue is not of the registry's size: $(pqmon -S -q "$Q")"
ok "a restored queue takes the registry's /queue/size"

# An upgrade to a build of another queue format: the old build's stop has
# saved the snapshot, and the queue left on the tmpfs is of the old format
# (made so here by writing an older version into its header, the first
# thing pq_open() checks).  With the snapshot newer than the queue, the
# start removes the queue and restores the snapshot.
old_format() {
  printf '\x01\x00\x00\x00' | dd of="$Q" bs=1 seek=8 conv=notrunc status=none ||
    fail "cannot write an old version into $Q"
}
unit_stop
expect_in post.1 "saved 301 products"
cp "$SNAP" snap301 || fail "cp"
old_format
touch -d '2 minutes ago' "$Q" || fail "touch"
expect_rc 1 pqmon -S -q "$Q"
expect_in "$ERR" "format version 1, this program reads version"
unit_start
expect_in pre.1 "queue $Q was made by another build (format version 1, this program reads version"
expect_in pre.1 "removed; its products come back from $SNAP"
expect_in pre.1 "restored 301 of 301"
expect_rc 0 pqcheck -q "$Q"
[[ $(wc -l < <(idents)) == 301 ]] || fail "the queue does not hold the 301 products after the upgrade"
ok "an old-format queue after an upgrade: replaced by its snapshot's 301 products"

# The same for a queue of the same version but another layout (a
# development build's): its layout signature differs.
unit_stop
old_layout() {
  local b
  b=$(od -An -tu1 -j16 -N1 "$Q" | tr -d ' ') || fail "od $Q"
  printf "\\$(printf '%03o' $((b ^ 0xff)))" | dd of="$Q" bs=1 seek=16 conv=notrunc status=none ||
    fail "cannot change the layout signature of $Q"
}
old_layout
touch -d '2 minutes ago' "$Q" || fail "touch"
unit_start
expect_in pre.1 "queue $Q was made by another build (layout signature differs): removed"
expect_in pre.1 "restored 301 of 301"
ok "a queue of another layout: replaced by its snapshot too"

# Without a snapshot newer than it, the old queue is kept aside as it is,
# for the old build's pqsave, and ldmd starts on an empty queue (not on the
# stale snapshot).
unit_stop
old_format
touch -d '1 hour ago' "$SNAP" || fail "touch"
cp "$Q" aged.pq || fail "cp"
unit_start
expect_in pre.1 "with no snapshot newer than it: moved to $Q.old"
expect_in pre.1 "made an empty queue $Q"
cmp -s aged.pq "$Q.old" || fail "the old queue was not kept as it was at $Q.old"
[[ -z $(idents) ]] || fail "the new queue is not empty"
ok "an old-format queue and an older snapshot: kept as $Q.old, an empty queue"

# Back to the queue of 301 products for what follows.
unit_stop
rm -f "$Q.old" aged.pq
cp snap301 "$SNAP" || fail "cp"
wipe
unit_start
expect_in pre.1 "restored 301 of 301"

# A damaged snapshot: kept aside, an empty queue, ldmd starts.
unit_stop
wipe
size=$(stat -c %s "$SNAP")
printf '\xff' | dd of="$SNAP" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null ||
  fail "cannot damage the snapshot"
cp "$SNAP" damaged
unit_start
expect_in pre.1 "kept as $SNAP.bad; making an empty queue"
cmp -s damaged "$SNAP.bad" || fail "the damaged snapshot was not kept as it was"
[[ ! -e $SNAP ]] || fail "the damaged snapshot is still $SNAP"
[[ -z $(idents) ]] || fail "the new queue is not empty"
unit_stop
expect_in post.1 "saved 0 products"
ok "a damaged snapshot is set aside as $SNAP.bad and ldmd starts on an empty queue"

# No queue at the stop (ExecStopPost after a start that failed): nothing
# saved, the snapshot kept.
wipe
cp "$SNAP" snap.before
expect_rc 0 "$LQ" save
expect_in "$ERR" "no queue $Q: nothing saved"
cmp -s snap.before "$SNAP" || fail "save without a queue changed the snapshot"

# A queue on a disk keeps itself across reboots: not saved.
disk=$(mktemp -d /var/tmp/service-queue.XXXXXX) || fail "mktemp"
trap 'st=$?; rm -rf "$disk"; cleanup "$st"' EXIT
fs=$(stat -f -c %T "$disk")
if [[ $fs == tmpfs || $fs == ramfs ]]; then
  skip_part "a queue on a disk: /var/tmp is a $fs here"
else
  expect_rc 0 regutil -s "$disk/disk.pq" /queue/path
  expect_rc 0 "$LQ" restore
  expect_rc 0 "$LQ" save
  expect_in "$ERR" "is on $fs, which keeps it across reboots: not saved"
  expect_rc 0 pqcheck -q "$disk/disk.pq"
  [[ ! -e $LDMHOME/var/queues/disk.pq.snap ]] ||
    fail "a disk queue was saved"
  ok "a queue on $fs is not saved"
fi

# The errors: they say what failed.
expect_rc 1 "$LQ"
expect_in "$ERR" "usage: ldmd-queue save|restore"
expect_rc 1 "$LQ" frobnicate
expect_in "$ERR" "unknown command: frobnicate"
expect_rc 0 regutil -s relative.pq /queue/path
expect_rc 1 "$LQ" restore
expect_in "$ERR" "not an absolute path: 'relative.pq'"
echo '<registry><queue>' >broken.xml
LDM_REGISTRY=$SCRATCH/broken.xml run "$LQ" save
((rc == 1)) || fail "save with a malformed registry exited $rc, expected 1"
expect_in "$ERR" "cannot read /queue/path from the registry"
ok "ldmd-queue's errors"
