#!/usr/bin/env bash
# ldmadmin mksurfqueue and delsurfqueue: pqsurf's private queue at the
# registry's /surf-queue/path (LDM's default under $LDMHOME/var/queues)
# with LDM's 6881 slots a megabyte (10^6 bytes) of /surf-queue/size; an
# existing one kept without -c and replaced with it; delsurfqueue never
# without being asked (refused off a terminal without -y), then gone;
# LDM's -q path for another queue, and -v.  The queue of ldmd is not
# touched.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
SQ=$LDMHOME/var/queues/pqsurf.pq

admin_fails mksurfqueue -- "cannot make the surf queue $SQ: no directory $LDMHOME/var/queues"
mkdir -p "$LDMHOME/var/queues"
admin_ok mksurfqueue
expect_in "$ERR" "made the surf queue $SQ (2M, 13762 slots)"
# pqmon -S: 5th field the slots, 7th the products
[[ $(pqmon -S -q "$SQ" | awk '{print $5}') == 13762 ]] ||
  fail "the surf queue has $(pqmon -S -q "$SQ" | awk '{print $5}') slots, expected 13762"
head -c 150 /dev/urandom >obs
run pqinsert -q "$SQ" obs
((rc == 0)) || fail "pqinsert into the surf queue exited $rc"
admin_fails mksurfqueue -- "the surf queue $SQ exists: ldmadmin delsurfqueue first, or mksurfqueue -c"
[[ $(pqmon -S -q "$SQ" | awk '{print $7}') == 1 ]] ||
  fail "a refused mksurfqueue changed the surf queue"
run regutil -s 1M /surf-queue/size
((rc == 0)) || fail "regutil -s 1M /surf-queue/size exited $rc"
admin_ok mksurfqueue -c
expect_in "$ERR" "made the surf queue $SQ (1M, 6881 slots)"
[[ $(pqmon -S -q "$SQ" | awk '{print $7}') == 0 ]] ||
  fail "mksurfqueue -c did not replace the surf queue"
[[ ! -e $Q ]] || fail "mksurfqueue made the LDM queue $Q"
ok "mksurfqueue, -c, the slots"

# LDM's command line: -q path names another queue, -v goes to pqcreate
OTHER=$SCRATCH/other.pq
admin_ok mksurfqueue -v -q "$OTHER"
expect_in "$ERR" "made the surf queue $OTHER (1M, 6881 slots)"
cat "$OUT" "$ERR" | grep -qF "Creating $OTHER, " ||
  fail "mksurfqueue -v: pqcreate -v did not say what it creates"
[[ $(pqmon -S -q "$OTHER" | awk '{print $5}') == 6881 ]] ||
  fail "mksurfqueue -q made $(pqmon -S -q "$OTHER" | awk '{print $5}') slots, expected 6881"
admin_ok delsurfqueue -y -q "$OTHER"
expect_in "$ERR" "deleted the surf queue $OTHER"
[[ ! -e $OTHER && -f $SQ ]] ||
  fail "delsurfqueue -q deleted another queue than $OTHER"
admin_fails mksurfqueue -q -- "usage"
ok "mksurfqueue -v -q path, delsurfqueue -q path (LDM's)"

admin_fails delsurfqueue </dev/null -- "not deleting the surf queue $SQ without confirmation"
[[ -f $SQ ]] || fail "delsurfqueue without -y deleted the surf queue"
admin_ok delsurfqueue -y
expect_in "$ERR" "deleted the surf queue $SQ"
[[ ! -e $SQ ]] || fail "delsurfqueue -y left $SQ"
admin_fails delsurfqueue -y -- "there is no surf queue $SQ to delete"
ok "delsurfqueue"
