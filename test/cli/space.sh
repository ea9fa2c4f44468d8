#!/usr/bin/env bash
# The queue's space on a tmpfs that fills up (LDM issue #79): on a small
# tmpfs of its own, a queue is created, the rest of the mount is filled
# with another file, and pqinsert, pqcat, pqmon and pqcheck must then work
# on the queue (empty and full of products) without dying of SIGBUS, every
# product inserted coming back.  A queue left sparse (by an older build, or
# copied sparse) is reserved by the first program that opens it and can,
# or refused with a message when there is no room; pqcreate on a mount too
# small for the queue fails with a clear message and leaves no file.
#
# Needs root to mount; skipped (skip_test) when mounting is not permitted.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

MOUNTS=()
# The mounts go before the scratch directory that holds them.
space_cleanup() {
  local st=$? m
  for m in "${MOUNTS[@]}"; do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
  cleanup "$st"
}
trap space_cleanup EXIT

# mount_tmpfs SIZE: a new tmpfs of SIZE (mount's syntax), its path in $MNT.
mount_tmpfs() {
  MNT=$(mktemp -d "$SCRATCH/mnt.XXXXXX")
  if ! mount -t tmpfs -o "size=$1" tmpfs "$MNT" 2>"$ERR"; then
    if [[ $(id -u) != 0 ]] || grep -qi 'permission denied' "$ERR"; then
      skip_test "mounting a tmpfs is not permitted here: $(cat "$ERR")"
    fi
    fail "mount -t tmpfs -o size=$1 on $MNT failed"
  fi
  MOUNTS+=("$MNT")
}

# fill_mount DIR: write a file into DIR until its file system is full.
fill_mount() {
  dd if=/dev/zero of="$1/fill" bs=64k 2>/dev/null
  local avail
  avail=$(df --output=avail "$1" | tail -n 1)
  ((avail == 0)) || fail "$1 still has $avail KiB free after filling"
}

# no_signal WHAT: the last run did not end by a signal.
no_signal() {
  ((rc < 128)) || fail "$1 died of a signal (status $rc)"
}

# expect_ok CMD...: exit 0, and not by a signal.
expect_ok() {
  run "$@"
  no_signal "'$*'"
  ((rc == 0)) || fail "'$*' exited $rc, expected 0"
}

# A queue of 2 MB on an 8 MiB tmpfs, the rest of the mount taken.
mount_tmpfs 8m
q=$MNT/ldm.pq
expect_ok pqcreate -s 2M -S 64 -q "$q"
size=$(stat -c %s "$q")
blocks=$(stat -c %b "$q")
((blocks * 512 >= size)) ||
  fail "the new queue is sparse: $((blocks * 512)) of $size bytes allocated"
fill_mount "$MNT"
ok "queue created with its space reserved, mount filled"

# The empty queue: every reader works (they died of SIGBUS on a sparse one).
expect_ok pqcat -q "$q"
expect_in "$ERR" "Number of products 0"
expect_ok pqmon -S -q "$q"
[[ $(awk '{print $7}' "$OUT") == 0 ]] || fail "pqmon: $(cat "$OUT")"
expect_ok pqcheck -C -q "$q"
expect_ok pqcheck -F -q "$q"
ok "pqcat, pqmon and pqcheck on the empty queue"

# Products of every size up to 1 MB go in and all come back.
make_files small 40 1000
make_files mid 8 60000
head -c 1000000 /dev/urandom >large
files=(small/f* mid/f* large)
expect_ok pqinsert -q "$q" "${files[@]}"
expect_ok pqcat -c -q "$q"
expect_not_in "$ERR" "signature mismatch"
cat "${files[@]}" >expected
cmp -s "$OUT" expected || fail "pqcat did not give back every product"
expect_in "$ERR" "Number of products ${#files[@]}"
expect_ok pqmon -S -q "$q"
[[ $(awk '{print $7}' "$OUT") == "${#files[@]}" ]] ||
  fail "pqmon: $(cat "$OUT"), expected ${#files[@]} products"
expect_ok pqcheck -C -q "$q"
ok "${#files[@]} products in and out of the queue on the full mount"

# Evicting to make room on the full mount: a second lap of the ring.
make_files lap 30 60000
expect_ok pqinsert -q "$q" lap/f*
expect_ok pqcat -c -p '^lap/' -q "$q"
cat lap/f* >expected
cmp -s "$OUT" expected || fail "pqcat did not give back the second lap"
expect_ok pqcheck -C -q "$q"
ok "a lap of the ring on the full mount"

# A sparse queue (an older build's, or copied with holes): with no room on
# the mount, a program that opens it is refused with a message instead of
# dying of SIGBUS later.
mount_tmpfs 8m
sq=$MNT/sparse.pq
expect_ok pqcreate -s 2M -S 64 -q "$SCRATCH/orig.pq"
cp --sparse=always "$SCRATCH/orig.pq" "$sq"
size=$(stat -c %s "$sq")
blocks=$(stat -c %b "$sq")
((blocks * 512 < size)) || fail "cp --sparse=always made no holes"
fill_mount "$MNT"
printf 'text' >one
for cmd in "pqinsert -q $sq one" "pqcat -q $sq" "pqmon -S -q $sq" \
  "pqcheck -C -q $sq"; do
  # shellcheck disable=SC2086 # word splitting wanted
  run $cmd
  no_signal "'$cmd' on a sparse queue"
  ((rc != 0)) || fail "'$cmd' on a sparse queue with no room exited 0"
  expect_in "$ERR" "$sq"
  expect_in "$ERR" "No space left on device"
done
ok "a sparse queue with no room is refused"

# With room again, the first opener reserves the queue's space; after the
# mount fills again, the queue works.
rm "$MNT/fill"
expect_ok pqmon -S -q "$sq"
blocks=$(stat -c %b "$sq")
((blocks * 512 >= size)) || fail "pqmon left the sparse queue unreserved"
fill_mount "$MNT"
expect_ok pqinsert -q "$sq" small/f* large
expect_ok pqcat -c -q "$sq"
cat small/f* large >expected
cmp -s "$OUT" expected || fail "pqcat did not give back every product"
expect_ok pqcheck -C -q "$sq"
ok "a sparse queue is reserved by its first opener"

# pqcreate on a mount too small for the queue, then on one whose room is
# taken: a clear message, exit 1, no file (nor temporary file) left.
mount_tmpfs 8m
for try in 16M 9M; do
  expect_error pqcreate -s "$try" -q "$MNT/big.pq"
  [[ $rc == 1 ]] || fail "pqcreate -s $try on an 8 MiB mount exited $rc"
  expect_in "$ERR" "$MNT/big.pq"
  expect_in "$ERR" "No space left on device"
  [[ -z $(ls -A "$MNT") ]] || fail "pqcreate -s $try left $(ls -A "$MNT")"
done
head -c 5000000 /dev/zero >"$MNT/taken"
expect_error pqcreate -s 4M -q "$MNT/big.pq"
expect_in "$ERR" "No space left on device"
[[ $(ls -A "$MNT") == taken ]] || fail "pqcreate left $(ls -A "$MNT")"
ok "pqcreate refuses a queue the mount cannot hold"
