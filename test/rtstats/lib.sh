# shellcheck shell=bash
# lib.sh - sourced by rtstats's shell tests, after the protocol clients'
# test/clients/lib.sh (scratch directory, registry, fakeldm, bounded
# waits, cleanup), whose helpers they use.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$@"
# Arguments: the directory of the programs (rtstats, pqcreate, pqcat), the
# path of fakeldm, the directory of ldmd, the path of pqacthelper (which
# inserts products with the creation time and origin a test chooses), and
# the version rtstats reports.
#
# Here: the local queue ($LQ, which rtstats reads, named by the registry
# with hostname $MYNAME), a receiving ldmd with its own queue ($RQ) and an
# ACCEPT for EXP from 127.0.0.1 (start_ldmd, stop_ldmd), inserting
# products (insert), the reports that reached $RQ (reports), and the
# check of one report line's 11 fields (check_line).

# shellcheck source-path=SCRIPTDIR source=../clients/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../clients/lib.sh" "$1" "$2"
LDMD_DIR=$(cd "${3:?directory of ldmd}" && pwd)
HELPER=$(cd "$(dirname "${4:?path of pqacthelper}")" && pwd)/$(basename "$4")
VERSION=${5:?version of rtstats}
cd "$SCRATCH" || fail "cd"
MYNAME=rtstats-test-host
LQ=$SCRATCH/local.pq
RQ=$SCRATCH/recv.pq
CONF=$SCRATCH/ldmd.conf
LOG=$SCRATCH/ldmd.log
RLOG=$SCRATCH/rtstats.log
# shellcheck disable=SC2034 # fail shows it (FAIL_LOGS of clients/lib.sh)
EXTRA_LOG=$RLOG
LDMD_PID=
RT_PID=
KILL_AT_EXIT=(LDMD_PID RT_PID)
write_registry "$MYNAME" "  <queue><path>$LQ</path></queue>"
cat >"$CONF" <<'EOF'
ALLOW ANY ^127\.0\.0\.1$
ACCEPT EXP .* ^127\.0\.0\.1$
EOF
expect_rc 0 pqcreate -s 20M -q "$LQ"
expect_rc 0 pqcreate -s 20M -q "$RQ"
# What ldmd calls 127.0.0.1 in the origins it rewrites: its name, if the
# resolver gives one (as getnameinfo NI_NAMEREQD), else the address.
PEERNAME=$(getent hosts 127.0.0.1 | awk '{print $2; exit}')
PEERNAME=${PEERNAME:-127.0.0.1}

# start_ldmd [PORT]: the receiving ldmd on 127.0.0.1, on PORT or one the
# kernel picks; sets PORT and LDMD_PID.
start_ldmd() {
  ldmd_start "$LDMD_DIR/ldmd" "$LOG" -P "${1:-0}" -I 127.0.0.1 -q "$RQ" "$CONF"
}
stop_ldmd() { ldmd_stop "$LOG"; }

# insert FEEDTYPE CREATED ORIGIN IDENT SIZE: a product of SIZE bytes into
# $LQ, created at CREATED (seconds since the epoch).
insert() {
  head -c "$5" /dev/urandom >"$SCRATCH/data"
  "$HELPER" insert "$LQ" "$1" 0 "$2" 0 "$3" "$4" "$SCRATCH/data" ||
    fail "cannot insert $4"
}

# hour_safe SPAN: a second T in the past such that T - SPAN to T lie in one
# hour: a second ago, or the last second of the previous hour if that
# would split them.  rtstats bins products by the hour they were created
# in, so products a test expects in one bin must not straddle an hour's
# start whenever the test runs.
hour_safe() {
  local t=$(($(date +%s) - 1))
  (((t - $1) / 3600 == t / 3600)) || t=$((t / 3600 * 3600 - 1))
  echo "$t"
}

# reports: the reports in $RQ (the products whose identifier starts with
# "rtstats-"), one per line: the product line as pqcat -v
# -O logs it (size, time, feedtype, seqno, ident, origin), a tab, then the
# report's own line.  Into $SCRATCH/reports; their number in nreports.
reports() {
  pqcat -v -O -q "$RQ" -p '^rtstats-' -l - >"$SCRATCH/rq.txt" \
    2>"$SCRATCH/rq.log" ||
    fail "pqcat of $RQ failed: $(cat "$SCRATCH/rq.log")"
  : >"$SCRATCH/reports"
  products "$SCRATCH/rq.log" >"$SCRATCH/rq.prods"
  # pqcat writes the data of each report (one line) in the same order.
  paste "$SCRATCH/rq.prods" "$SCRATCH/rq.txt" >"$SCRATCH/reports"
  nreports=$(wc -l <"$SCRATCH/reports")
  [[ $(wc -l <"$SCRATCH/rq.prods") == "$nreports" ]] ||
    fail "$(wc -l <"$SCRATCH/rq.prods") products but $nreports lines in $RQ"
}

# report_of FEEDTYPE ORIGIN: the last report of that bin (its whole entry
# from reports), or nothing.
report_of() {
  grep -F " rtstats-$VERSION/$MYNAME/$1/$2 " "$SCRATCH/reports" | tail -1
}

# bin_is FEEDTYPE ORIGIN NPRODS NBYTES: is the last report of that bin in
# $RQ one of NPRODS products and NBYTES bytes (reports is run first)?
bin_is() {
  local f
  reports
  read -r -a f <<<"$(report_of "$1" "$2" | cut -f2)"
  [[ ${f[5]:-} == "$3" && ${f[6]:-} == "$4" ]]
}

# check_line ENTRY FEEDTYPE ORIGIN NPRODS NBYTES: one entry of reports is a
# report of that bin: the product (EXP, its ident, its origin rewritten by
# ldmd) and the line's 11 fields with those values, the reporting host and
# the version.  Sets F (the 11 fields) for further checks.
check_line() {
  local entry=$1 prod line
  prod=${entry%%$'\t'*}
  line=${entry#*$'\t'}
  read -r -a P <<<"$prod"
  # size time EXP seqno ident origin
  [[ ${P[2]} == EXP ]] || fail "report not EXP: $prod"
  [[ ${P[4]} == "rtstats-$VERSION/$MYNAME/$2/$3" ]] || fail "ident: $prod"
  [[ ${P[5]} == "${MYNAME}_v_$PEERNAME" ]] ||
    fail "origin ${P[5]}, not ${MYNAME}_v_$PEERNAME: $prod"
  [[ ${P[0]} == $((${#line} + 1)) ]] || fail "size ${P[0]} of '$line'"
  read -r -a F <<<"$line"
  ((${#F[@]} == 11)) || fail "${#F[@]} fields, not 11: '$line'"
  [[ ${F[0]} =~ ^[0-9]{14}$ && ${F[1]} =~ ^[0-9]{14}$ ]] ||
    fail "times: '$line'"
  [[ ${F[2]} == "$MYNAME" ]] || fail "host: '$line'"
  [[ ${F[3]} == "$2" ]] || fail "feedtype: '$line'"
  [[ ${F[4]} == "$3" ]] || fail "origin: '$line'"
  [[ ${F[5]} == "$4" ]] || fail "products ${F[5]}, not $4: '$line'"
  [[ ${F[6]} == "$5" ]] || fail "bytes ${F[6]}, not $5: '$line'"
  [[ ${F[7]} =~ ^-?[0-9.e+-]+$ ]] || fail "latency: '$line'"
  [[ ${F[8]} =~ ^-?[0-9]+\.[0-9]{2}$ ]] || fail "mean: '$line'"
  [[ ${F[9]} =~ ^-?[0-9]+@[0-5][0-9][0-5][0-9]$ ]] || fail "max: '$line'"
  [[ ${F[10]} == "$VERSION" ]] || fail "version: '$line'"
  # The widths of LDM's format: fields 1-5 end where they must.
  [[ ${line:0:30} == "${F[0]} ${F[1]} " ]] || fail "columns 1-30: '$line'"
  ((${#F[2]} > 32)) || [[ ${line:30:33} == "$(printf '%32s ' "$MYNAME")" ]] ||
    fail "columns of the host: '$line'"
}

# between X LO HI: LO <= X <= HI, each a number or an awk expression
# ("10 + 43.33").
between() {
  [[ "$1$2$3" =~ ^[-0-9.e+\ ]+$ ]] || fail "between: not numbers: $*"
  awk "BEGIN { x = $1; lo = $2; hi = $3; exit !(x >= lo && x <= hi) }"
}

# utc SECONDS: YYYYMMDDhhmmss.
utc() {
  date -u -d "@$1" +%Y%m%d%H%M%S
}

# start_rtstats ARGS...: rtstats in the background, logging to $RLOG (-l);
# its pid in RT_PID.
start_rtstats() {
  : >"$RLOG"
  background rtstats -l "$RLOG" "$@" 2>>"$SCRATCH/rtstats.err"
  # shellcheck disable=SC2034 # used by the tests, killed at exit
  RT_PID=$BG
}

# rtstats_started: has it logged that it follows the queue (its cursor is
# set: what is inserted from now on is binned)?
rtstats_started() {
  grep -q 'following ' "$RLOG"
}
