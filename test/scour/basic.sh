#!/usr/bin/env bash
# scour's ordinary work: each form of the age (D, D-hh, D-hh:mm, -hh, and
# hours past 23) deletes what is older and keeps what is younger; the glob
# and its default (no dot files); recursion; -d and empty directories; the
# dry run; the registry's defaults; mistakes in scour.conf (named by line,
# the other lines still done).
source "$(dirname "$0")/lib.sh" "$@"
H=3600
D=86400

# Ages: for each, one file a bit older (deleted) and one a bit younger.
aged $((D + H)) "$DATA/days/old"
aged $((D - H)) "$DATA/days/young"
aged $((D + 2 * H + 600)) "$DATA/dayshours/old"
aged $((D + 2 * H - 600)) "$DATA/dayshours/young"
aged $((90 * 60 + 120)) "$DATA/minutes/old" "$DATA/hm/old"
aged $((90 * 60 - 120)) "$DATA/minutes/young" "$DATA/hm/young"
aged $((2 * H + 600)) "$DATA/hours/old"
aged $((2 * H - 600)) "$DATA/hours/young"
aged $((36 * H + 600)) "$DATA/many/old"
aged $((36 * H - 600)) "$DATA/many/young"
conf "# ages" "" "days 1" "dayshours  1-02" "	minutes	0-01:30" "hours -02" \
  "many -36" "hm -01:30" "  # indented comment"
expect_rc 0 "$SCOUR" -l- "$CONF"
for d in days dayshours minutes hours many hm; do
  deleted "$DATA/$d/old"
  kept "$DATA/$d/young" "$DATA/$d"
done
ok "ages D, D-hh, D-hh:mm, -hh, -hh:mm, -36"

# The glob, matched against names; the default skips dot files.
aged $((2 * D)) "$DATA/glob/a.txt" "$DATA/glob/b.dat" "$DATA/glob/.hidden" \
  "$DATA/glob/sub/c.txt" "$DATA/dflt/f" "$DATA/dflt/.dot" "$DATA/dflt/s/g"
conf "glob 1 *.txt" "dflt 1"
expect_rc 0 "$SCOUR" "$CONF"
deleted "$DATA/glob/a.txt" "$DATA/glob/sub/c.txt" "$DATA/dflt/f" \
  "$DATA/dflt/s/g"
kept "$DATA/glob/b.dat" "$DATA/glob/.hidden" "$DATA/dflt/.dot" "$DATA/dflt/s"
ok "glob and its default"

# Recursion, -v logging each deletion, the same directory on two lines.
aged $((3 * D)) "$DATA/deep/1/2/3/4/5/old.grib" "$DATA/deep/1/old.nids"
aged 60 "$DATA/deep/1/2/new.grib"
conf "deep 2 *.grib" "deep 2 *.nids"
expect_rc 0 "$SCOUR" -v "$CONF"
deleted "$DATA/deep/1/2/3/4/5/old.grib" "$DATA/deep/1/old.nids"
kept "$DATA/deep/1/2/new.grib" "$DATA/deep/1/2/3/4/5"
expect_in "$ERR" "deleted $DATA/deep/1/2/3/4/5/old.grib"
expect_in "$ERR" "deleted $DATA/deep/1/old.nids"
expect_in "$ERR" "$DATA/deep: deleted 1 files"
ok "recursion and -v"

# -d: a subdirectory left empty goes if it was old; a young empty one (a
# decoder just made it) stays; one with a young file stays; the line's own
# directory stays.  Without -d nothing but files goes.
mk_dirs() {
  rm -rf "$DATA/dirs"
  aged $((2 * D)) "$DATA/dirs/a/b/old" "$DATA/dirs/c/old" "$DATA/dirs/top"
  aged 60 "$DATA/dirs/c/young"
  mkdir -p "$DATA/dirs/fresh" "$DATA/dirs/stale"
  aged $((2 * D)) "$DATA/dirs/stale" "$DATA/dirs/a/b" "$DATA/dirs/a" \
    "$DATA/dirs/c" "$DATA/dirs"
}
mk_dirs
conf "dirs 1"
expect_rc 0 "$SCOUR" "$CONF"
deleted "$DATA/dirs/a/b/old" "$DATA/dirs/c/old" "$DATA/dirs/top"
kept "$DATA/dirs/a/b" "$DATA/dirs/stale" "$DATA/dirs/fresh"
mk_dirs
expect_rc 0 "$SCOUR" -d -v "$CONF"
deleted "$DATA/dirs/a" "$DATA/dirs/stale" "$DATA/dirs/c/old"
kept "$DATA/dirs/fresh" "$DATA/dirs/c/young" "$DATA/dirs"
expect_in "$ERR" "removed directory $DATA/dirs/a/b"
expect_in "$ERR" "removed directory $DATA/dirs/a"
ok "-d removes old directories left empty, keeps young ones"

# Dry run: lists exactly what the real run deletes, deletes nothing.
mk_dirs
tree "$DATA" >before
expect_rc 0 "$SCOUR" -n -d "$CONF"
sort "$OUT" >listed
tree "$DATA" >after
cmp -s before after || fail "the dry run changed the tree: $(diff before after)"
printf '%s\n' "$DATA/dirs/a/b/old" "$DATA/dirs/a/b/" "$DATA/dirs/a/" \
  "$DATA/dirs/c/old" "$DATA/dirs/stale/" "$DATA/dirs/top" | sort >want
cmp -s listed want || fail "dry run listed: $(diff want listed)"
expect_rc 0 "$SCOUR" -d "$CONF"
tree "$DATA" >real
diff before real | sed -n 's/^< [df] //p' | sort >removed
sed 's|/$||' want | sort >want_paths
cmp -s removed want_paths || fail "the real run differs: $(diff want_paths removed)"
ok "dry run lists what the real run deletes"

# The registry's defaults: /scour/config-path.
aged $((2 * D)) "$DATA/reg/old"
printf 'reg 1\n' >"$SCRATCH/other.conf"
write_registry scour-test-host "  <pqact>
    <datadir-path>$DATA</datadir-path>
  </pqact>
  <scour>
    <config-path>$SCRATCH/other.conf</config-path>
  </scour>"
expect_rc 0 "$SCOUR"
deleted "$DATA/reg/old"
rm "$SCRATCH/other.conf"
expect_rc 1 "$SCOUR"
expect_in "$ERR" "cannot open the configuration $SCRATCH/other.conf: No such file or directory"
ok "registry's /scour/config-path"

# Mistakes: each bad line named by number, deletes nothing; the good lines
# (after them too) are still done; the status is 1.
aged $((2 * D)) "$DATA/good1/old" "$DATA/good2/old" "$DATA/bad/old"
conf "good1 1" "bad 1-2" "bad 1-02:3" "bad x" "bad -" "bad 1:00" \
  "bad 1 * extra" "bad" "nosuchdir 1" "good2 1"
expect_rc 1 "$SCOUR" "$CONF"
deleted "$DATA/good1/old" "$DATA/good2/old"
kept "$DATA/bad/old"
expect_in "$ERR" "scour.conf:2: bad age \"1-2\""
expect_in "$ERR" "scour.conf:3: bad age \"1-02:3\""
expect_in "$ERR" "scour.conf:4: bad age \"x\""
expect_in "$ERR" "scour.conf:5: bad age \"-\""
expect_in "$ERR" "scour.conf:6: bad age \"1:00\""
expect_in "$ERR" "scour.conf:7: expected \"dir age [glob]\""
expect_in "$ERR" "scour.conf:8: expected \"dir age [glob]\""
expect_in "$ERR" "scour.conf:9: cannot open directory $DATA/nosuchdir: No such file or directory"
ok "bad lines and a missing directory"

# A registry that cannot be read (empty: nobody chose its settings) stops
# scour before it deletes anything: relative lines need its data directory.
aged $((2 * D)) "$DATA/noreg/old"
: >"$LDM_REGISTRY"
printf 'noreg 1\n%s 1\n' "$DATA/noreg" >"$SCRATCH/noreg.conf"
expect_rc 1 "$SCOUR" "$SCRATCH/noreg.conf"
expect_in "$ERR" "$LDM_REGISTRY"
kept "$DATA/noreg/old"
write_registry scour-test-host "  <pqact>
    <datadir-path>$DATA</datadir-path>
  </pqact>"
ok "an unreadable registry stops everything"

# The command line.
expect_rc 1 "$SCOUR" -k
expect_in "$ERR" "usage:"
expect_rc 1 "$SCOUR" a b
expect_rc 0 "$SCOUR" -h
expect_in "$OUT" "usage: scour"
expect_rc 1 "$SCOUR" "$SCRATCH/none.conf"
expect_in "$ERR" "cannot open the configuration $SCRATCH/none.conf: No such file or directory"
ok "command line"

# The example configuration reads without an error (dry run).
mkdir -p "$DATA"/{surface,afd,nexrad3,conduit,other}
expect_rc 0 "$SCOUR" -n -v "$(dirname "$0")/../../etc/scour.conf"
expect_not_in "$ERR" "ERROR"
expect_in "$ERR" "$DATA/other: would delete 0 files"
ok "etc/scour.conf"
