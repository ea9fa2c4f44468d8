#!/usr/bin/env bash
# mkqueue checks free space first (LDM issue #79): on a small tmpfs of its
# own, a queue bigger than the room is refused with the sizes and no file
# is left; after a refusal for want of room, mkqueue -c keeps the old
# queue; one that fits is made.
#
# Needs root to mount; skipped (skip_test) when mounting is not permitted.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

if ! mount_tmpfs 4m; then
  if [[ $(id -u) != 0 ]] || grep -qi 'permission denied' "$ERR"; then
    skip_test "mounting a tmpfs is not permitted here: $(cat "$ERR")"
  fi
  fail "mount -t tmpfs -o size=4m on $MNT failed"
fi

Q=$MNT/ldm.pq
run regutil -s "$Q" /queue/path
((rc == 0)) || fail "regutil -s /queue/path exited $rc"
run regutil -s 8M /queue/size
((rc == 0)) || fail "regutil -s /queue/size exited $rc"
admin_fails mkqueue -- "not enough space for the queue $Q: /queue/size 8M needs 7813 KiB, $MNT has"
expect_in "$ERR" "lower /queue/size with regutil -s"
[[ -z $(ls -A "$MNT") ]] || fail "a refused mkqueue left $(ls -A "$MNT")"
ok "a queue bigger than the file system is refused, nothing left"

run regutil -s 2M /queue/size
admin_ok mkqueue
[[ -f $Q ]] || fail "mkqueue made no $Q"
# 2 MB of 4 MiB taken: another 3M queue beside it does not fit.
run regutil -s 3M /queue/size
admin_fails mkqueue -c -- "not enough space for the queue $Q"
[[ $(stat -c %s "$Q") -ge 2000000 && $(stat -c %s "$Q") -lt 3000000 ]] ||
  fail "a refused mkqueue -c changed the queue ($(stat -c %s "$Q") bytes)"
ok "a queue that fits is made; a refused -c keeps the old one"
