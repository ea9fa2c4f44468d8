#!/usr/bin/env bash
# notifyme after a lost connection: it reconnects after LDM's 30 s and asks
# from 1 us after the creation time of the last product notified, so the
# products already shown are not asked for again.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
EXTRA_LOG=$SCRATCH/nm.log

# Two sessions; the fake closes the first one after 3 notifications.
start_fake notify 127.0.0.1 -n 3 -c 2 -K -T 100
background notifyme -v -h "127.0.0.1:$PORT" 2>nm.log
nm=$BG
wait_until 20 in_report $'closing' || fail "the first session did not complete"
wait_until 10 grep -qF "127.0.0.1:$PORT closed the connection" nm.log ||
  fail "the closed connection was not noticed"
expect_in nm.log "reconnecting to 127.0.0.1:$PORT in 30 s"
wait_until 45 eval "[[ \$(grep -c 'NOTIFYME' '$REPORT') == 2 ]]" ||
  fail "no second NOTIFYME within 45 s"
second=$(grep -P '^NOTIFYME\t' "$REPORT" | tail -1)
[[ $second == *$'from=1700000003.000000\t'* ]] ||
  fail "the second request does not resume after the last product: $second"
wait_until 20 eval "[[ \$(grep -c '^quiet' '$REPORT') == 2 ]]" ||
  fail "the second session did not complete"
kill -TERM "$nm"
wait_exit "$nm" 10
((rc == 0)) || fail "notifyme exited $rc after SIGTERM"
sanitizer_check nm.log
[[ $(products nm.log | wc -l) == 6 ]] || fail "expected 6 product lines"
! in_report stray || fail "notifyme sent something it should not"
stop_fake
ok "reconnected after 30 s, resuming from the last creation time + 1 us"
