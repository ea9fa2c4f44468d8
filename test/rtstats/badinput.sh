#!/usr/bin/env bash
# Bad command lines are exit 1 with a message naming the program and the
# usage text; a queue that cannot be opened is exit 2 with the path and
# the reason.
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

# usage_error MESSAGE ARGS...: rtstats ARGS exits 1 with MESSAGE and the usage.
usage_error() {
  local want=$1
  shift
  expect_rc 1 rtstats "$@"
  grep -q '^usage: rtstats' "$ERR" || fail "'rtstats $*' did not print the usage"
  [[ $(head -1 "$ERR") == "rtstats: "* ]] || fail "'rtstats $*': no message naming the program"
  expect_in "$ERR" "$want"
}

usage_error "unknown option -Z" -Z
usage_error "-h" -h
usage_error "-q" -q
usage_error "bad interval" -i x
usage_error "bad interval" -i -1
usage_error "bad interval" -i 86401
usage_error "bad offset" -o 1x
usage_error "bad offset" -o -5
usage_error "bad gap" -I 0
usage_error "gap" -I x
usage_error "bad gap" -I 100000
usage_error 'bad name "a b" for -H' -H "a b"
usage_error 'bad name "" for -H' -H ""
usage_error "bad name" -H "$(printf 'h%.0s' {1..256})"
usage_error "nosuchfeed" -f nosuchfeed
usage_error "bad pattern" -p "("
usage_error "bad port" -P 0
usage_error "bad port" -h host:99999
usage_error "bad host" -h "[::1"
usage_error 'unexpected operand "extra"' extra
ok "bad options: exit 1, a message and the usage"

# A queue that is not there: exit 2, the path and the reason.
expect_rc 2 rtstats -l - -i 0 -q "$SCRATCH/none.pq"
expect_in "$ERR" "$SCRATCH/none.pq"
expect_in "$ERR" "No such file or directory"
ok "no queue: exit 2, with the path and the reason"
