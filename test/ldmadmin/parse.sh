#!/usr/bin/env bash
# ldmadmin reads the registry's sizes, booleans and integers as the
# programs do: it asks regutil -T, which uses the registry's own parsers
# (ldmd/site/registry.h), instead of parsing again.  The same table of
# strings goes through ldmadmin and through the C parsers:
#   sizes: /queue/size for "ldmadmin mkqueue -c" against "pqcreate -s":
#     both take or both refuse each string, and when taken the two queues
#     hold the same bytes, the bytes regutil -T size gave ldmadmin;
#   booleans: /log/rotate for "ldmadmin start" (a stand-in ldmd that
#     refuses to start, so that only the rotation before it shows) against
#     "regutil -b" and "regutil -T bool": the logs are rotated exactly for
#     the values they read as TRUE;
#   integers: /insertion-check-interval for "ldmadmin checkinsertion"
#     against "regutil -u" and "regutil -T uint": both take or both refuse
#     each string, and ldmadmin's limit is the number regutil stored.
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"

data_bytes() { pqmon -S -q "$1" | awk '{print $2}'; }

# set_key ELEMENT VALUE: <ELEMENT>VALUE</ELEMENT> in the registry's file,
# written by hand, since regutil -s refuses a bad value.
cp "$LDM_REGISTRY" good.xml
set_key() {
  cp good.xml "$LDM_REGISTRY"
  if grep -q "<$1>" "$LDM_REGISTRY"; then
    sed -i "s|<$1>[^<]*</$1>|<$1>$2</$1>|" "$LDM_REGISTRY"
  else
    sed -i "s|<log>|<log><$1>$2</$1>|" "$LDM_REGISTRY"
  fi
  grep -qF "<$1>$2</$1>" "$LDM_REGISTRY" || fail "could not set <$1> to '$2'"
}

# Sizes.  0200704 is 200704 decimal (49 x 4096, so no rounding hides a
# difference) and 65988 octal; 0x10M was taken by LDM's pqcreate and
# refused by its ldmadmin.
sizes=(2M 02M 0200704 2000k 2000K 2m 0002000000 0x10M 0X10M 2X 1.5M -1 ""
  M "2 M" 18446744074G 18446744073709551616 0x)
for s in "${sizes[@]}"; do
  rm -f "$Q" c.pq
  run pqcreate -s "$s" -q c.pq
  c_rc=$rc
  set_key size "$s"
  admin mkqueue -c
  a_rc=$rc
  if ((c_rc == 0)); then
    ((a_rc == 0)) || fail "pqcreate -s '$s' took it, ldmadmin mkqueue refused it: $(cat "$ERR")"
    [[ $(data_bytes "$Q") == "$(data_bytes c.pq)" ]] ||
      fail "'$s': ldmadmin's queue holds $(data_bytes "$Q") bytes, pqcreate's $(data_bytes c.pq)"
    want=$(regutil -T size /queue/size) || fail "regutil -T size refused '$s', which pqcreate took"
    (((want + 4095) / 4096 * 4096 == $(data_bytes c.pq))) ||
      fail "'$s': regutil -T size says $want bytes, the queue holds $(data_bytes c.pq) (rounded up to 4096)"
  else
    ((a_rc != 0)) || fail "pqcreate -s '$s' refused it, ldmadmin mkqueue took it"
    [[ ! -e $Q ]] || fail "ldmadmin mkqueue made $Q with /queue/size '$s'"
    expect_in "$ERR" "/queue/size in $LDM_REGISTRY is \"$s\": "
  fi
done
expect_rc 1 regutil -T size /queue/size # the last: 0x
expect_in "$ERR" "sizes are decimal, 0x (hexadecimal) is not taken"
ok "sizes: ldmadmin and pqcreate agree on ${#sizes[@]} strings"

# Booleans.  LDM's rule: TRUE, YES, AFIRMATIVE, FALSE, NO, NEGATIVE in any
# case, or any integer, non-zero being true; ours adds AFFIRMATIVE.
cp good.xml "$LDM_REGISTRY"
admin_ok mkqueue -c
cp "$LDM_REGISTRY" good.xml
mkdir -p fake "$(dirname "$LOG")"
# A stand-in ldmd: checks configurations (-n), refuses to start.
# shellcheck disable=SC2016 # $1 is the stand-in's
printf '#!/bin/sh\n[ "$1" = -n ] && exit 0\nexit 1\n' >fake/ldmd
chmod +x fake/ldmd
# Integers as every integer: decimal ("08" true), 0x refused.
bools=(TRUE true YES yes AFIRMATIVE AFFIRMATIVE affirmative 1 2 -1 +3 08 010
  FALSE false NO no NEGATIVE 0 -0 00 maybe "" 1.0 0x1 0x0)
truths=(1 1 1 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 - - - - -)
((${#bools[@]} == ${#truths[@]})) || fail "the boolean table is uneven"
for i in "${!bools[@]}"; do
  b=${bools[i]}
  case ${truths[i]} in 1) want=TRUE ;; 0) want=FALSE ;; *) want= ;; esac
  # regutil -b (the same parser) stores what it reads.
  cp good.xml "$LDM_REGISTRY"
  if [[ -n $want ]]; then
    expect_rc 0 regutil -b "$b" /log/rotate
    [[ $(regutil /log/rotate) == "$want" ]] || fail "regutil -b '$b' stored $(regutil /log/rotate), expected $want"
  else
    expect_rc 1 regutil -b "$b" /log/rotate
  fi
  set_key rotate "$b"
  run regutil -T bool /log/rotate
  [[ $(cat "$OUT") == "$want" ]] || fail "regutil -T bool '$b' printed '$(cat "$OUT")', expected '$want'"
  # ldmadmin start rotates the log before it starts ldmd, when true.
  rm -f "$LOG".*
  echo "a line" >"$LOG"
  PATH=$SCRATCH/fake:$PATH admin start
  ((rc != 0)) || fail "the stand-in ldmd started"
  if [[ $want == TRUE ]]; then
    [[ -e $LOG.1 ]] || fail "/log/rotate '$b' is true, ldmadmin start did not rotate: $(cat "$ERR")"
  else
    [[ ! -e $LOG.1 ]] || fail "/log/rotate '$b' is not true, ldmadmin start rotated"
  fi
  if [[ -z $want ]]; then
    expect_in "$ERR" "the registry's /log/rotate is not a boolean"
  else
    expect_in "$ERR" "the LDM server did not start"
  fi
done
ok "booleans: ldmadmin and regutil agree on ${#bools[@]} strings"

# Integers: one rule, decimal (a leading zero is a zero; LDM's base 0 made
# 0300 octal, 192), 0x refused, no sign, no overflow.  ldmadmin used to
# compare the raw text with [, which failed silently on 0x12c.
cp good.xml "$LDM_REGISTRY"
run pqinsert "$LOG"
((rc == 0)) || fail "pqinsert exited $rc: $(cat "$ERR")"
ints=(300 0300 00300 0000000000000000000300 4294967295 0x12c 0X12C
  -300 +300 "" 3e2 300k 18446744073709551616 abc)
for s in "${ints[@]}"; do
  # regutil -u (the C parser) stores the number it reads.
  cp good.xml "$LDM_REGISTRY"
  run regutil -u "$s" /insertion-check-interval
  c_rc=$rc
  want=
  ((c_rc != 0)) || want=$(regutil /insertion-check-interval)
  # The same string written by hand, for ldmadmin and regutil -T uint.
  sed "s|</registry>|  <insertion-check-interval>$s</insertion-check-interval>\n</registry>|" \
    good.xml >"$LDM_REGISTRY"
  run regutil -T uint /insertion-check-interval
  [[ $(cat "$OUT") == "$want" ]] ||
    fail "'$s': regutil -T uint printed '$(cat "$OUT")', regutil -u stored '$want'"
  admin checkinsertion
  if ((c_rc == 0)); then
    ((rc == 0)) || fail "regutil -u '$s' took it, ldmadmin checkinsertion refused it: $(cat "$ERR")"
    expect_in "$ERR" "(limit $want s)"
  else
    ((rc != 0)) || fail "regutil -u '$s' refused it, ldmadmin checkinsertion took it: $(cat "$ERR")"
    expect_in "$ERR" "the registry's /insertion-check-interval is not an unsigned integer"
    expect_in "$ERR" "/insertion-check-interval in $LDM_REGISTRY is \"$s\": "
  fi
done
cp good.xml "$LDM_REGISTRY"
expect_rc 1 regutil -u 0x12c /insertion-check-interval
expect_in "$ERR" "integers are decimal, 0x (hexadecimal) is not taken"
ok "integers: ldmadmin and regutil agree on ${#ints[@]} strings"
