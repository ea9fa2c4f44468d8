#!/usr/bin/env bash
# pqact's command line and table checks: -q /dev/null checks the file and
# exits 1 as LDM's (the log tells good from bad: every error with its
# line, or "Successfully read"), actions not
# yet supported are refused at startup, the defaults come from the
# registry (conf file, data directory, queue) and LDMPQFNAME, -f and -p
# filter, -o also filters on creation time, no -o starts at the end of the
# queue; every matching entry fires in file order and ^_ELSE_$ fires only
# when no earlier entry matched.
source "$(dirname "$0")/lib.sh" "$@"
ETC=$(cd "$(dirname "$0")/../../etc" && pwd) || fail "no etc/ in the tree"
cd "$SCRATCH" || fail "cd"
tab=$'\t'

# ---- the syntax check ----
printf 'EXP\t^A\tFILE\t-close\ta.out\n' >"$CONF"
expect_rc 1 "$PQACT" -vl- -q /dev/null "$CONF"
expect_in "$ERR" "Successfully read configuration-file \"$CONF\""
expect_not_in "$ERR" "ERROR"
expect_rc 1 "$PQACT" -vl- -q /dev/null # the registry names the file
expect_in "$ERR" "Successfully read configuration-file \"$CONF\""
cd "$SCRATCH/data" || fail "cd"
cp "$CONF" rel.conf
expect_rc 1 "$PQACT" -vl- -q /dev/null rel.conf # made absolute
expect_in "$ERR" "\"$SCRATCH/data/rel.conf\""
cd "$SCRATCH" || fail "cd"
: >empty.conf
expect_rc 1 "$PQACT" -l- -q /dev/null empty.conf
expect_in "$ERR" "configuration-file \"$SCRATCH/empty.conf\" has no entries"

cat >bad.conf <<CONF
# line 1
EXP${tab}^A${tab}FILE${tab}ok
EXP${tab}^A
NOSUCH${tab}x${tab}NOOP
EXP${tab}x${tab}FILEX${tab}y
EXP${tab}(x${tab}NOOP
CONF
expect_rc 1 "$PQACT" -vl- -q /dev/null bad.conf
expect_not_in "$ERR" "Successfully read"
expect_in "$ERR" "$SCRATCH/bad.conf: syntax error at line 3, not enough fields"
expect_in "$ERR" "$SCRATCH/bad.conf: feedtype error at line 4: unknown feedtype name: \"NOSUCH\""
expect_in "$ERR" "$SCRATCH/bad.conf: unknown action \"FILEX\" at line 5"
expect_in "$ERR" "$SCRATCH/bad.conf: regcomp error at line 6: \"(x\""
expect_in "$ERR" "error in configuration-file \"$SCRATCH/bad.conf\""
run "$PQACT" -l- -q /dev/null "$SCRATCH/missing.conf"
((rc != 0)) || fail "a missing file: pqact exited 0"
expect_in "$ERR" "cannot open configuration-file \"$SCRATCH/missing.conf\": No such file"
# the example in etc/ is good
expect_rc 1 "$PQACT" -vl- -q /dev/null "$ETC/pqact.conf"
expect_in "$ERR" "Successfully read configuration-file"
expect_not_in "$ERR" "WARN"
ok "-q /dev/null: good, empty, bad (every error with its line), missing; etc/pqact.conf"

# The arguments are checked when the file is read (issue 22): LDM's reader
# reads three fields, so each of these was "successfully read" and then
# failed on every product.  An option no action knows is only a warning,
# as LDM skips it.
cat >args.conf <<CONF
# line 1
EXP${tab}^A${tab}FILE
EXP${tab}^A${tab}FILE${tab}-bogus x
EXP${tab}^A${tab}PIPE
EXP${tab}^A${tab}EXEC${tab}-wait
EXP${tab}^(A)${tab}FILE${tab}data/\\9
EXP${tab}^A${tab}FILE${tab}-overwrit -cl y
CONF
expect_rc 1 "$PQACT" -vl- -q /dev/null args.conf
expect_not_in "$ERR" "Successfully read"
expect_in "$ERR" "$SCRATCH/args.conf: FILE has no path at line 2"
expect_in "$ERR" "WARN  $SCRATCH/args.conf: unknown option \"-bogus\" of FILE (ignored) at line 3"
expect_in "$ERR" "$SCRATCH/args.conf: PIPE has no command at line 4"
expect_in "$ERR" "$SCRATCH/args.conf: EXEC has no command: \"-wait\" is one of its options at line 5"
expect_in "$ERR" "$SCRATCH/args.conf: \"\\9\" names sub-match 9, but the pattern has 1 group at line 6"
expect_not_in "$ERR" "line 7"
expect_in "$ERR" "error in configuration-file \"$SCRATCH/args.conf\""
ok "-q /dev/null checks the arguments: no path, no command, \\N past the groups (errors), unknown option (warning)"

for a in NOOP FILE STDIOFILE DBFILE PIPE SPIPE XPIPE EXEC; do
  printf 'EXP\t^A\tNOOP\n# c\nEXP\t^A\t%s\tsomething\n' "$a" >every.conf
  run "$PQACT" -vl- -q /dev/null every.conf
  expect_in "$ERR" "Successfully read configuration-file"
  expect_not_in "$ERR" "ERROR"
done
ok "every action of LDM's pqact is taken: NOOP FILE STDIOFILE DBFILE PIPE SPIPE XPIPE EXEC"

expect_rc 1 "$PQACT" -l- -q /dev/null a.conf b.conf
expect_in "$ERR" "at most one configuration file"
# (1 is also -q /dev/null's status: the file must not have been read)
expect_rc 1 "$PQACT" -vl- -i x -q /dev/null "$CONF"
expect_not_in "$ERR" "Successfully read"
expect_rc 1 "$PQACT" -vl- -z -q /dev/null "$CONF"
expect_not_in "$ERR" "Successfully read"
expect_rc 0 "$PQACT" -h
expect_in "$OUT" "usage: pqact"
ok "usage errors"

# ---- matching ----
expect_rc 0 pqcreate -s 1M -S 100 -q "$Q"
NOW=$(date +%s)
for p in A1 B1 C1; do
  printf '%s\n' "$p" >"$p"
  put EXP 0 "$NOW" 0 here "$p" "$p"
done
printf 'G1\n' >G1
put NGRID 0 "$NOW" 0 here G1 G1
printf 'old\n' >OLD
put EXP 0 $((NOW - 1000)) 0 here AOLD OLD

cat >"$CONF" <<CONF
EXP${tab}^A${tab}FILE${tab}-close${tab}a.out
EXP${tab}^B${tab}NOOP
EXP${tab}^_ELSE_\$${tab}FILE${tab}-close${tab}else.out
EXP${tab}^_ELSE_\$${tab}FILE${tab}-close${tab}else2.out
ANY${tab}^A${tab}FILE${tab}-close${tab}a2.out
ANY${tab}^(A|G)${tab}FILE${tab}-close${tab}order
ANY${tab}^[AG]1\$${tab}FILE${tab}-close${tab}order
CONF
pqact_run -o 100 -i 0
((rc == 0)) || fail "pqact exited $rc"
cd "$DATA" || fail "cd"
same a.out ../A1
same else.out ../C1 # A1 matched ^A, B1 the NOOP
[[ ! -e else2.out ]] || fail "a second _ELSE_ fired after the first"
same a2.out ../A1
cat ../A1 ../A1 ../G1 ../G1 >../want
same order ../want
ok "every match fires in file order; _ELSE_ only when nothing before matched or fired; -o filters on creation time"

# -f and -p filter the products; _BEGIN_ is not filtered.
rm -f ./*.out order
pqact_run -o 100 -i 0 -f NGRID
cat ../G1 ../G1 >../want
same order ../want
[[ ! -e a.out && ! -e else.out ]] || fail "-f NGRID: EXP products acted on"
rm -f order
pqact_run -o 100 -i 0 -p '^C'
same else.out ../C1
[[ ! -e a.out && ! -e order && ! -e else2.out ]] || fail "-p ^C: others acted on"
rm -f ./*.out
# -o large enough takes the old product too
pqact_run -o "$ALL" -i 0
cat ../A1 ../OLD >../want
same a.out ../want
rm -f ./*.out order
ok "-f, -p and -o filter"

# A file whose arguments are bad is refused at startup too: nothing is
# done, rather than an error for every product.  One with only warnings
# runs, its options known by their first two letters (-overwrit).
cd "$SCRATCH" || fail "cd"
cp "$CONF" matching.conf
cp args.conf "$CONF"
pqact_run -o 100 -i 0
((rc != 0)) || fail "pqact ran a table with bad arguments (exit 0)"
expect_in "$ERR" "error in configuration-file \"$CONF\""
expect_not_in "$ERR" "EXEC: no command"
made=$(find "$DATA" -type f ! -name rel.conf)
[[ -z $made ]] || fail "a refused table acted: $made"
printf 'EXP\t^A\tFILE\t-overwrit -bogus -cl\tover.out\n' >"$CONF"
pqact_run -o "$ALL" -i 0
((rc == 0)) || fail "pqact with an unknown option exited $rc"
expect_in "$ERR" "unknown option \"-bogus\" of FILE (ignored) at line 1"
same "$DATA/over.out" OLD # A1, then AOLD over it: -overwrit is -overwrite
rm -f "$DATA/over.out" "$CONF.state"
mv matching.conf "$CONF"
cd "$DATA" || fail "cd"
ok "pqact refuses a table with bad arguments at startup; runs one with an unknown option"

# Without -o and without a state file (the runs above wrote one: state.sh
# tests it), pqact starts at the end of the queue: nothing old is done;
# the defaults: data directory from the registry, queue from LDMPQFNAME.
cd "$SCRATCH" || fail "cd"
rm -f "$CONF.state"
run "$PQACT" -l- -i 0
((rc == 0)) || fail "pqact without -o exited $rc"
expect_in "$ERR" "Starting at tail-end of product-queue"
[[ -z $(find "$DATA" -name '*.out') ]] || fail "without -o, old products were acted on"
mv "$Q" "$SCRATCH/other.pq"
LDMPQFNAME=$SCRATCH/other.pq run "$PQACT" -l- -o 100 -i 0
((rc == 0)) || fail "pqact with LDMPQFNAME exited $rc"
same "$DATA/a.out" A1
run "$PQACT" -l- -o 100 -i 0
((rc != 0)) || fail "pqact with no queue exited 0"
expect_in "$ERR" "$Q"
ok "the end of the queue without -o; registry data directory; LDMPQFNAME"

# Started with standard output and error closed, pqact opens them on
# /dev/null first, so that no file it opens gets their numbers (where a
# child's output or a log line would then go).
mv "$SCRATCH/other.pq" "$Q"
rm -f "$DATA/a.out"
background "$PQACT" -l "$SCRATCH/closed.log" -d "$DATA" -o 100 -i 600 >&- 2>&-
wait_until 10 test -s "$DATA/a.out" || fail "pqact with closed stdout/stderr filed nothing"
for fd in 1 2; do
  target=$(readlink "/proc/$BG/fd/$fd") || fail "pqact has no descriptor $fd"
  [[ $target == /dev/null ]] || fail "pqact's descriptor $fd is $target, not /dev/null"
done
stop_within "$BG" TERM 5
same "$DATA/a.out" A1
ok "closed standard descriptors are reopened on /dev/null"
