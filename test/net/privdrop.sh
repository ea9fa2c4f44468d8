#!/usr/bin/env bash
# Privilege drop (ldmd/server/privilege.h): ldmd started as root binds its
# sockets, then becomes the user named by -U (here nobody) for good, with
# that user's groups and none of root's supplementary groups, before it
# serves anybody.  Checked in /proc/PID/status of the server, of a
# connection process serving a feed and of a requester: real, effective,
# saved and filesystem ids, and the groups.  Then: root with no user to
# become refuses to start (when this host has no user ldm); -U root stays
# root and says so; an unknown user is an error.  Skipped (77) unless run
# as root.  Its files are where nobody can reach them (SCRATCH_SHARED,
# test/lib/common.sh), wherever the build is.
# shellcheck disable=SC2034 # read by scratch_init
SCRATCH_SHARED=1
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

if [[ $(id -u) != 0 ]]; then
  skip_test "not root"
fi
id nobody >/dev/null 2>&1 || {
  skip_test "no user nobody"
}
NUID=$(id -u nobody)
NGID=$(id -g nobody)
NGROUPS=$(id -G nobody | tr ' ' '\n' | sort -n | tr '\n' ' ')

make_queue 2000000
chown nobody "$Q"
# The registry without <user>: each case says who to run as on the
# command line, or nothing.
write_registry net-test-host "  <queue><path>$Q</path></queue>
  <server><config-path>$CONF</config-path><user></user></server>"
cat >"$CONF" <<EOF
ALLOW ANY ^127\.0\.0\.1$
EOF

# ids_are PID UID GID GROUPS: /proc/PID/status has the four ids UID, GID
# and exactly GROUPS (sorted, space-separated, a space at the end).
ids_are() {
  local st=/proc/$1/status got
  [[ -r $st ]] || fail "no $st"
  grep -qE "^Uid:\s+$2\s+$2\s+$2\s+$2\s*$" "$st" ||
    fail "process $1: $(grep ^Uid: "$st"), expected uid $2 four times"
  grep -qE "^Gid:\s+$3\s+$3\s+$3\s+$3\s*$" "$st" ||
    fail "process $1: $(grep ^Gid: "$st"), expected gid $3 four times"
  got=$(sed -n 's/^Groups:\s*//p' "$st" | tr -s ' \t' '\n' | sed '/^$/d' |
    sort -n | tr '\n' ' ')
  [[ $got == "$4" ]] || fail "process $1: groups '$got', expected '$4'"
}

# 1. Root, with supplementary groups of its own (setpriv), becomes nobody.
: >"$LOG"
setpriv --groups=4,27 "$LDMD" -f -l "$LOG" -P 0 -I 127.0.0.1 -U nobody -v \
  "$CONF" 2>>"$SCRATCH/ldmd.err" &
LDMD_PID=$!
wait_until 10 grep -q 'listening on 127.0.0.1 port' "$LOG" ||
  fail "ldmd did not start as nobody"
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$LOG" |
  head -1)
expect_in "$LOG" "running as user nobody (uid $NUID, gid $NGID)"
ids_are "$LDMD_PID" "$NUID" "$NGID" "$NGROUPS"
ok "the server runs as nobody, without root's groups 4 and 27"
# A connection process, while it serves a feed: its queue opens as nobody.
background peer notifyme -f ANY -o 3600 -n 1 -t 20 >"$SCRATCH/noti.out"
wait_until 10 grep -q '^OK ' "$SCRATCH/noti.out" ||
  fail "notifyme was not served: $(cat "$SCRATCH/noti.out")"
kids=$(children_of "$LDMD_PID")
[[ -n $kids ]] || fail "no connection process of ldmd"
for k in $kids; do
  ids_are "$k" "$NUID" "$NGID" "$NGROUPS"
done
ok "its connection process runs as nobody too"
run peer insert -q "$Q" -f EXP -n 1
wait_until 10 grep -q '^NOTIFICATION ' "$SCRATCH/noti.out" ||
  fail "no notification through the connection process run as nobody"
# The log, opened as root, was given to nobody, so SIGUSR1 can reopen it.
[[ $(stat -c %u "$LOG") == "$NUID" ]] || fail "the log is not nobody's"
kill -USR1 "$LDMD_PID"
wait_until 10 logged 1 "SIGUSR1: log file reopened" ||
  fail "the log was not reopened on SIGUSR1 as nobody"
stop_ldmd 15

# 2. Root and nobody named: refuses, unless there is a user ldm.
if id ldm >/dev/null 2>&1; then
  skip_part "this host has a user ldm (root would become it): root with no user to become"
else
  run "$LDMD" -f -l - -P 0 -I 127.0.0.1 "$CONF"
  [[ $rc == 1 ]] || fail "root with no user to become: exit $rc, expected 1"
  expect_in "$ERR" "refusing to run as root: there is no user ldm to become"
  expect_not_in "$ERR" "listening on"
  ok "root with no user to become refuses to start"
fi

# 3. -U root: stays root, with a notice; an unknown user is an error.
: >"$LOG"
start_ldmd -U root
expect_in "$LOG" "running as root (-U root)"
# The groups of this shell, which started it.
mine=$(sed -n 's/^Groups:\s*//p' /proc/$$/status | tr -s ' \t' '\n' |
  sed '/^$/d' | sort -n | tr '\n' ' ')
ids_are "$LDMD_PID" 0 0 "$mine"
stop_ldmd 15
run "$LDMD" -f -l - -P 0 -I 127.0.0.1 -U no-such-user-here "$CONF"
[[ $rc == 1 ]] || fail "-U no-such-user-here: exit $rc, expected 1"
expect_in "$ERR" "cannot run as user no-such-user-here: no such user"
ok "-U root stays root with a notice; an unknown user is refused"

# 4. The queue must open for writing as the user: a queue nobody cannot
# write stops the start, with the path.
chown root "$Q"
chmod 0600 "$Q"
run "$LDMD" -f -l - -P 0 -I 127.0.0.1 -U nobody "$CONF"
[[ $rc == 1 ]] || fail "a queue nobody cannot write: exit $rc, expected 1"
expect_in "$ERR" "cannot open the product queue $Q"
ok "a queue the user cannot write stops the start"
