#!/usr/bin/env bash
# scour's safety: symbolic links to files and directories outside the tree
# are deleted as links and their targets survive; a directory link is not
# descended; system directories, homes and excluded directories are
# refused by line, the other lines still done; excludes (-e, the
# registry's) protect subtrees, and a missing -e file stops everything; the
# queue file is never deleted; a mount below a line's directory (another
# file system, or a bind mount of the same one) is left alone (root only:
# skipped otherwise); the dry run's listing escapes control characters.
source "$(dirname "$0")/lib.sh" "$@"
D=86400
OLD=$((3 * D))

# Links: old links to old files and directories outside; a young link to a
# directory outside; a dangling old link.
aged $OLD "$OUTSIDE/target.txt" "$OUTSIDE/dir/old1" "$OUTSIDE/dir/sub/old2" \
  "$OUTSIDE/young/old3"
mkdir -p "$DATA/links/sub"
ln -s "$OUTSIDE/target.txt" "$DATA/links/file.lnk"
ln -s "$OUTSIDE/dir" "$DATA/links/dir.lnk"
ln -s "$OUTSIDE/young" "$DATA/links/sub/young.lnk"
ln -s "$OUTSIDE/nothing" "$DATA/links/dangling"
aged $OLD "$DATA/links/file.lnk" "$DATA/links/dir.lnk" "$DATA/links/dangling"
aged 60 "$DATA/links/sub/young.lnk"
tree "$OUTSIDE" >outside_before
conf "links 1"
expect_rc 0 "$SCOUR" -d -v "$CONF"
deleted "$DATA/links/file.lnk" "$DATA/links/dir.lnk" "$DATA/links/dangling"
kept "$DATA/links/sub/young.lnk" "$DATA/links/sub"
tree "$OUTSIDE" >outside_after
cmp -s outside_before outside_after ||
  fail "scour changed the tree outside: $(diff outside_before outside_after)"
expect_in "$ERR" "deleted $DATA/links/dir.lnk"
expect_not_in "$ERR" "$OUTSIDE"
ok "links deleted as links, targets kept, directory links not descended"

# Refused directories: even with an age no file has (so that a failure of
# this test deletes nothing) and a dry run.  Each by line; the last line,
# a good one, is still done.
mkdir -p "$SCRATCH/home"
ln -s /etc "$DATA/etc.lnk"
aged $OLD "$DATA/fine/old"
conf "/ 99999" "/etc 99999" "/usr 99999" "/usr/share/doc 99999" \
  "/var 99999" "/tmp 99999" "/dev/shm 99999" "/proc/self 99999" \
  "etc.lnk 99999" "../../../../../../../../../../.. 99999" "~ 99999" \
  "$LDMHOME 99999" "//etc/ 99999" "fine 1"
HOME=$SCRATCH/home expect_rc 1 "$SCOUR" -n "$CONF"
n=0
for d in / /etc /usr /usr/share/doc /var /tmp /dev/shm /proc/self \
  "$DATA/etc.lnk" "$DATA/../../../../../../../../../../.." \
  "$SCRATCH/home" "$LDMHOME" //etc; do
  n=$((n + 1))
  expect_in "$ERR" "scour.conf:$n: refusing to scour $d: it is a"
done
expect_in "$ERR" "scour.conf:11: refusing to scour $SCRATCH/home: it is a home directory"
[[ $(cat "$OUT") == "$DATA/fine/old" ]] || fail "the good line was not done"
ok "system and home directories refused by line"

# Excludes: a subtree named in the -e file is not descended; a line naming
# it is refused; the registry's /scour/exclude-path is the default; a -e
# file that is missing stops everything.
aged $OLD "$DATA/ex/keep/old" "$DATA/ex/keep/deep/old" "$DATA/ex/also/old" \
  "$DATA/ex/other/old"
printf '# mine\n\nex/keep\n  %s  \n' "$DATA/ex/also" >"$SCRATCH/excludes"
conf "ex 1" "ex/keep 1" "ex/keep/deep 1"
expect_rc 1 "$SCOUR" -v -e "$SCRATCH/excludes" "$CONF"
kept "$DATA/ex/keep/old" "$DATA/ex/keep/deep/old" "$DATA/ex/also/old"
deleted "$DATA/ex/other/old"
expect_in "$ERR" "not descending into $DATA/ex/keep: excluded"
expect_in "$ERR" "scour.conf:2: refusing to scour $DATA/ex/keep: it is excluded"
expect_in "$ERR" "scour.conf:3: refusing to scour $DATA/ex/keep/deep: it is below an excluded directory"
aged $OLD "$DATA/ex/other/old"
conf "ex 1"
expect_rc 1 "$SCOUR" -e "$SCRATCH/nosuch" "$CONF"
expect_in "$ERR" "cannot open the excludes file $SCRATCH/nosuch: No such file or directory"
kept "$DATA/ex/other/old"
write_registry scour-test-host "  <pqact>
    <datadir-path>$DATA</datadir-path>
  </pqact>
  <scour>
    <exclude-path>$SCRATCH/excludes</exclude-path>
  </scour>"
expect_rc 0 "$SCOUR" "$CONF"
kept "$DATA/ex/keep/old" "$DATA/ex/also/old"
deleted "$DATA/ex/other/old"
ok "excludes"

# The queue: an old file that is the queue is never deleted, by the
# registry's /queue/path or by -q.
aged $OLD "$DATA/q/ldm.pq" "$DATA/q/other.pq" "$DATA/q/old"
write_registry scour-test-host "  <pqact>
    <datadir-path>$DATA</datadir-path>
  </pqact>
  <queue>
    <path>$DATA/q/ldm.pq</path>
  </queue>"
conf "q 1"
expect_rc 0 "$SCOUR" "$CONF"
kept "$DATA/q/ldm.pq"
deleted "$DATA/q/old"
expect_in "$ERR" "not deleting $DATA/q/ldm.pq: it is the product queue"
deleted "$DATA/q/other.pq"
aged $OLD "$DATA/q/other.pq"
expect_rc 0 "$SCOUR" -q "$DATA/q/other.pq" "$CONF"
kept "$DATA/q/other.pq"
deleted "$DATA/q/ldm.pq"
ok "the queue file is never deleted"

# The dry run's listing: a newline in a name cannot forge a line.
aged $OLD "$DATA/names/a"$'\n'"b"
conf "names 1"
expect_rc 0 "$SCOUR" -n "$CONF"
[[ $(cat "$OUT") == "$DATA/names/a\\012b" ]] || fail "listing: $(cat "$OUT")"
ok "dry run escapes control characters"

# Mounts below a line's directory: another file system (tmpfs) and a bind
# mount of this one are left alone.  Needs root and mount(2).
MOUNTS=()
umount_all() {
  local m
  for m in "${MOUNTS[@]}"; do
    umount "$m" 2>/dev/null
  done
}
trap 'st=$?; umount_all; cleanup $st' EXIT
mkdir -p "$DATA/mnt/tmpfs" "$DATA/mnt/bind"
if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=1m scourtest "$DATA/mnt/tmpfs" 2>/dev/null; then
  MOUNTS+=("$DATA/mnt/tmpfs")
  aged $OLD "$OUTSIDE/bound/old" "$DATA/mnt/tmpfs/old" "$DATA/mnt/old"
  mount --bind "$OUTSIDE/bound" "$DATA/mnt/bind" || fail "mount --bind"
  MOUNTS+=("$DATA/mnt/bind")
  conf "mnt 1"
  expect_rc 0 "$SCOUR" -d -v "$CONF"
  kept "$DATA/mnt/tmpfs/old" "$OUTSIDE/bound/old"
  deleted "$DATA/mnt/old"
  expect_in "$ERR" "not descending into $DATA/mnt/tmpfs: another file system"
  expect_in "$ERR" "not descending into $DATA/mnt/bind: another mount"
  ok "mounts below are left alone"
else
  skip_part "mounts: needs root and mount(2) (tmpfs, --bind)"
fi
