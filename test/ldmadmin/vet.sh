#!/usr/bin/env bash
# ldmadmin vetqueuesize on real queues filled past full with products
# created a known time ago (pqclihelper insert-old), so that the minimum
# virtual residence time (MVRT) is known without waiting: a queue never
# full and one whose MVRT reaches /server/max-latency pass; in each
# /reconciliation-mode a queue too small for it is handled as ldmadmin.1
# says: "do nothing" fails with the figures and the remedies; "decrease
# maximum latency" refuses an MVRT under 1 s, else sets max-latency and
# time-offset to the MVRT and restarts the running server with them;
# "increase queue" grows the queue (registry updated, every product kept
# with its insertion time, the file's mode and owner, a symbolic link to
# it left in place, the server restarted), bounded by
# /queue/max-size, by the growth factor of one run (slots "default" stay
# so), by the free space of the queue's file system (on a small tmpfs:
# root only, that part skipped otherwise) and by slots that run out before
# bytes; a pqcopy that fails or that copies nothing, or a pqcreate that
# fails, leaves the old queue
# and the registry as they were, no temporary queue, and the server
# running.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
# No pqact: it would write a file for each of the thousands of products.
printf 'ALLOW\tANY\t^127\\.0\\.0\\.1$\n' >"$CONF"

reg_set() {
  run regutil -s "$1" "$2"
  ((rc == 0)) || fail "regutil -s '$1' $2 exited $rc"
}
reg_is() {
  [[ $(regutil "$1") == "$2" ]] || fail "$1 is '$(regutil "$1")', not '$2'"
}
# stat_field N: field N of pqmon -S on the queue.
stat_field() {
  pqmon -S -q "$Q" | awk -v n="$1" '{ print $n }'
}
# fresh_queue SLOTS: a new 2M queue of that many slots.
fresh_queue() {
  reg_set 2M /queue/size
  reg_set "$1" /queue/slots
  admin_ok mkqueue -c
}
# fill AGE: fill the queue past full with products of 100 bytes (176 with
# their record: a 2M queue holds 11000) created AGE seconds ago: its MVRT
# is AGE.
fill() {
  "$HELPER" insert-old "$Q" $(($(stat_field 2) / 100)) "$1" "p$1" ||
    fail "pqclihelper insert-old"
  [[ $(stat_field 1) == 1 ]] || fail "the queue is not full after filling it"
}
no_tmp_left() {
  [[ -z $(find "$(dirname "$Q")" -maxdepth 1 -name ".$(basename "$Q").*") ]] ||
    fail "a temporary queue is left: $(ls -a "$(dirname "$Q")")"
}
arg_of_server() { # the value of option $1 of the running server
  tr '\0' '\n' <"/proc/$(server_pid)/cmdline" | awk -v o="$1" 'p { print; exit } $0 == o { p = 1 }'
}

# Never full; then full with an MVRT of 600 s, at least the max-latency.
fresh_queue 20000
"$HELPER" insert-old "$Q" 10 600 few || fail "insert-old"
admin_ok vetqueuesize
expect_in "$ERR" "the queue $Q has never been full"
fill 600
reg_set 300 /server/max-latency
admin_ok vetqueuesize
mvrt=$(stat_field 10)
((mvrt >= 600 && mvrt < 660)) || fail "the MVRT is $mvrt s, not about 600"
expect_in "$ERR" "holds products for at least $mvrt s"
ok "never full; MVRT at least max-latency"

# "do nothing" (the default): too small, with the figures and remedies.
reg_set 3600 /server/max-latency
cp "$Q" before.pq
admin_fails vetqueuesize -- "the queue $Q is too small for /server/max-latency: its minimum virtual residence time is $mvrt s, less than 3600 s"
expect_in "$ERR" "regutil -s 'increase queue' /reconciliation-mode"
expect_in "$ERR" "regutil -s 'decrease maximum latency' /reconciliation-mode"
cmp -s "$Q" before.pq || fail "\"do nothing\" changed the queue"
reg_is /server/max-latency 3600
ok "do nothing: exit 1, the figures and what to do"

# "decrease maximum latency": an MVRT under 1 s is refused.
reg_set 'decrease maximum latency' /reconciliation-mode
fresh_queue 20000
fill 0
[[ $(stat_field 10) == 0 ]] || fail "the MVRT of fresh products is $(stat_field 10) s, not 0"
admin_fails vetqueuesize -- "not decreasing /server/max-latency to 0 s, less than 1 s"
expect_in "$ERR" "nothing changed"
reg_is /server/max-latency 3600
reg_is /server/time-offset 3600
ok "decrease: an MVRT under 1 s is refused, nothing changed"

# Decrease with the server running: the registry, then a restart with -m.
fresh_queue 20000
fill 600
mvrt=$(stat_field 10)
admin_ok start -P 0
pid1=$(server_pid)
admin_ok vetqueuesize
expect_in "$ERR" "set /server/max-latency and /server/time-offset to $mvrt s (were 3600 and 3600)"
reg_is /server/max-latency "$mvrt"
reg_is /server/time-offset "$mvrt"
pid2=$(server_pid)
[[ -n $pid2 && $pid2 != "$pid1" ]] || fail "the server was not restarted ($pid1, $pid2)"
gone "$pid1" || fail "the old server $pid1 still runs"
[[ $(arg_of_server -m) == "$mvrt" && $(arg_of_server -o) == "$mvrt" ]] ||
  fail "the new server runs with -m '$(arg_of_server -m)' -o '$(arg_of_server -o)', not $mvrt"
[[ $(arg_of_server -P) == 0 ]] || fail "the restart lost the server's -P 0"
admin_ok vetqueuesize
expect_in "$ERR" "not less than /server/max-latency ($mvrt s)"
admin_ok stop
ok "decrease: registry set, server restarted with -m $mvrt -o $mvrt"

# "increase queue" with the server running: MVRT 600 s, max-latency 900 s:
# 1.5 times the bytes held, and a tenth more.  The queue is reached through
# a symbolic link, and has its own mode and owner.
reg_set 'increase queue' /reconciliation-mode
reg_set 900 /server/max-latency
reg_set 900 /server/time-offset
fresh_queue 20000
fill 600
held=$(stat_field 11)
cap=$(stat_field 2)
slots=$(stat_field 5)
"$HELPER" dump "$Q" >before.dump || fail "dump"
n_before=$(wc -l <before.dump)
# The queue's mode and owner are kept; /queue/path may be a symbolic link.
chmod 640 "$Q"
owner=$(id -u):$(id -g)
if [[ $(id -u) == 0 ]]; then
  owner=1:1
  chown "$owner" "$Q" || fail "chown $owner $Q"
fi
mv "$Q" "$Q.real"
ln -s "$Q.real" "$Q"
admin_ok start -P 0
pid1=$(server_pid)
admin_ok vetqueuesize
want=$(awk -v h="$held" -v m="$(grep -o 'residence time is [0-9]*' "$ERR" | awk '{print $4}')" \
  'BEGIN { printf "%d\n", int(h * 900 / m * 1.1 / 4096) * 4096 }')
expect_in "$ERR" "grew the queue $Q to $want bytes with its $n_before products"
reg_is /queue/size "$want"
new_slots=$(regutil /queue/slots)
((new_slots > slots && new_slots >= slots * want / cap)) ||
  fail "/queue/slots is $new_slots, not the $slots scaled by $want/$cap"
[[ $(stat_field 2) -ge $want && $(stat_field 2) -lt $((want + 4096)) ]] ||
  fail "the queue's data area is $(stat_field 2) bytes, not $want"
[[ $(stat_field 5) == "$new_slots" ]] || fail "the queue has $(stat_field 5) slots, not $new_slots"
"$HELPER" dump "$Q" >after.dump || fail "dump"
cmp -s before.dump after.dump || fail "the grown queue does not hold the same products: $(diff before.dump after.dump | head -5)"
pid2=$(server_pid)
[[ -n $pid2 && $pid2 != "$pid1" ]] || fail "the server was not restarted"
admin_ok isrunning
[[ -L $Q && $(readlink "$Q") == "$Q.real" ]] || fail "the symbolic link $Q was replaced"
[[ $(stat -c '%a %u:%g' "$Q.real") == "640 $owner" ]] ||
  fail "the grown queue has mode and owner $(stat -c '%a %u:%g' "$Q.real"), not 640 $owner"
rm "$Q"
mv "$Q.real" "$Q"
no_tmp_left
admin_ok vetqueuesize
expect_in "$ERR" "has never been full"
admin_ok stop
ok "increase: grown to $want bytes, $new_slots slots, $n_before products kept, server restarted"

# A failure midway: pqcopy fails, a pqcopy that "succeeds" without
# copying, pqcreate fails.  The old queue and the registry stay, the server runs again.
fresh_queue 20000
fill 600
admin_ok start -P 0
pid1=$(server_pid)
"$HELPER" dump "$Q" >before.dump || fail "dump"
ino=$(stat -c %i "$Q")
mkdir shim
printf '#!/bin/sh\necho "pqcopy: cannot copy (a test stands in for it)" >&2\nexit 1\n' >shim/pqcopy
chmod +x shim/pqcopy
PATH=$SCRATCH/shim:$PATH admin_fails vetqueuesize -- "cannot grow the queue $Q: copying the products into"
expect_in "$ERR" "pqcopy: cannot copy (a test stands in for it)"
expect_in "$ERR" "the queue and the registry are as they were; the LDM server runs again"
printf '#!/bin/sh\nexit 0\n' >shim/pqcopy
PATH=$SCRATCH/shim:$PATH admin_fails vetqueuesize -- "holds 0 products of the $(wc -l <before.dump) copied"
rm shim/pqcopy
printf '#!/bin/sh\necho "pqcreate: no room (a test stands in for it)" >&2\nexit 1\n' >shim/pqcreate
chmod +x shim/pqcreate
PATH=$SCRATCH/shim:$PATH admin_fails vetqueuesize -- "cannot grow the queue $Q: making the new queue"
[[ $(stat -c %i "$Q") == "$ino" ]] || fail "the queue file was replaced"
"$HELPER" dump "$Q" >after.dump || fail "dump"
cmp -s before.dump after.dump || fail "a failed growth changed the queue's products"
reg_is /queue/size 2M
reg_is /queue/slots 20000
no_tmp_left
admin_ok isrunning
[[ $(server_pid) != "$pid1" ]] || fail "the server was not stopped for the growth"
admin_ok stop
ok "a failed copy leaves the queue, the registry, and the server running"

# Bounded by /queue/max-size: MVRT 600 s for 3600 s wants 6.6 times the
# bytes; the cap is 3M.  Then, full again at the cap, it cannot grow.
reg_set 3600 /server/max-latency
reg_set 3M /queue/max-size
fresh_queue 20000
fill 600
admin_fails vetqueuesize -- "the queue $Q is still too small for /server/max-latency"
expect_in "$ERR" "/queue/max-size (3M) is the cap"
size=$(regutil /queue/size)
((size > 2000000 && size <= 3000000)) || fail "/queue/size is $size, not at most the 3M cap"
(($(stat_field 2) == size)) || fail "the queue holds $(stat_field 2) bytes, not $size"
fill 600
cp "$Q" before.pq
admin_fails vetqueuesize -- "it cannot grow: /queue/max-size (3M) is the cap; nothing changed"
cmp -s "$Q" before.pq || fail "a queue at the cap was changed"
reg_is /queue/size "$size"
ok "increase bounded by /queue/max-size: grown to the cap, exit 1; at the cap, nothing changed"

# Bounded by one run's factor, with "default" slots: fresh products (MVRT
# 0 s, which no size would fix) of 200 kB grow the queue 4 times at most.
reg_set 40G /queue/max-size
fresh_queue default
fill_fresh
[[ $(stat_field 1) == 1 ]] || fail "twelve 200 kB products did not fill 2M"
cap=$(stat_field 2)
admin_fails vetqueuesize -- "at most 4 times its size in one run"
expect_in "$ERR" "no size would hold it: its MVRT is under 1 s"
reg_is /queue/slots default
(($(stat_field 2) == cap * 4)) || fail "the queue holds $(stat_field 2) bytes, not 4 times $cap"
ok "increase bounded by the factor of a run; slots stay default"

# Slots that run out before the bytes: no size would help; nothing changed.
reg_set 30 /queue/slots
admin_ok mkqueue -c
"$HELPER" insert-old "$Q" 100 600 s || fail "insert-old"
cp "$Q" before.pq
admin_fails vetqueuesize -- "the slots ran out first (30 of them)"
expect_in "$ERR" "raise /queue/slots with regutil -s"
cmp -s "$Q" before.pq || fail "the queue changed"
reg_is /queue/slots 30
ok "slots that run out first: refused, nothing changed"

# Bounded by the free space: a tmpfs of 12 MiB holding a 2M queue of 20000
# slots (4.6 MB); a huge max-latency and a cap far above the room.
if mount_tmpfs 12m; then
  Q=$MNT/ldm.pq
  reg_set "$Q" /queue/path
  reg_set 100000000 /server/max-latency
  fresh_queue 20000
  fill 600
  read -r total free < <(df -Pk "$MNT" | awk 'NR == 2 { print $2 * 1024, $4 * 1024 }')
  admin_fails vetqueuesize -- "the queue $Q is still too small for /server/max-latency"
  expect_in "$ERR" "the free space of $MNT"
  size=$(regutil /queue/size)
  ((size > 2002944)) || fail "the queue did not grow (/queue/size $size)"
  file=$(stat -c %s "$Q")
  ((file < free)) || fail "the new queue ($file bytes) is larger than the $free bytes that were free"
  ((file <= free - total / 20)) ||
    fail "the new queue ($file bytes) left less than 5% of the $total bytes of $MNT free beside the old"
  (($(stat_field 2) == size)) || fail "the queue holds $(stat_field 2) bytes, not $size"
  no_tmp_left
  fill 600
  admin_fails vetqueuesize -- "it cannot grow: the free space of $MNT"
  ok "increase bounded by the free space: $file bytes of $free free"
else
  skip_part "cannot mount a tmpfs here ($(cat "$ERR")): the bound by free space not tried"
fi
