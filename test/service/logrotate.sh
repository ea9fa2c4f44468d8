#!/usr/bin/env bash
# etc/logrotate.d/ldm, run by logrotate on a scratch LDMHOME (its path
# made the scratch one, its "su ldm ldm" the test's user): every *.log of
# var/logs is rotated, not only ldmd.log (LDM issue #116), empty ones are
# not, and the postrotate script sends SIGUSR1 to ldmd's main process
# through systemctl when the service is active, and nothing otherwise (a
# systemctl of the test's, first in PATH, says what it was asked and
# answers is-active as the test says).
source "$(dirname "$0")/lib.sh" "$@"
cd "$SCRATCH" || fail "cd"
FILE=$SRC/etc/logrotate.d/ldm
command -v logrotate >/dev/null || fail "no logrotate (scripts/dev.sh installs it)"

logs=$LDMHOME/var/logs
mkdir -p "$logs" bin || fail "mkdir"
grep -q '^/var/lib/ldm/var/logs/\*\.log {$' "$FILE" || fail "$FILE does not rotate /var/lib/ldm/var/logs/*.log"
grep -q '^	su ldm ldm$' "$FILE" || fail "$FILE does not rotate as ldm"
sed -e "s#^/var/lib/ldm/var/logs/#$logs/#" \
  -e "s#^	su ldm ldm\$#	su $(id -un) $(id -gn)#" "$FILE" >ldm.conf || fail "sed"
chmod 0644 ldm.conf
cat >bin/systemctl <<'EOS'
#!/bin/sh
echo "$*" >>"$SYSTEMCTL_LOG"
case $1 in
--quiet) [ -e "$SYSTEMCTL_ACTIVE" ] ;;
kill) exit 0 ;;
*) exit 1 ;;
esac
EOS
chmod +x bin/systemctl
export PATH=$SCRATCH/bin:$PATH SYSTEMCTL_LOG=$SCRATCH/systemctl.log \
  SYSTEMCTL_ACTIVE=$SCRATCH/active

expect_rc 0 logrotate -d -s state ldm.conf
expect_not_in "$ERR" "error:"

echo ldmd >"$logs/ldmd.log"
echo pqact >"$logs/pqact.log"
echo decoder >"$logs/decoder.log"
: >"$logs/empty.log"
touch active
expect_rc 0 logrotate -f -s state ldm.conf
for f in ldmd pqact decoder; do
  [[ -f $logs/$f.log.1 && $(cat "$logs/$f.log.1") == "$f" ]] ||
    fail "$f.log was not rotated to $f.log.1: $(ls "$logs")"
done
[[ ! -e $logs/empty.log.1 ]] || fail "the empty log was rotated"
[[ $(cat systemctl.log) == "--quiet is-active ldmd.service
kill --kill-who=main --signal=SIGUSR1 ldmd.service" ]] ||
  fail "postrotate asked systemctl: $(cat systemctl.log)"
ok "every log rotated, once, then SIGUSR1 to ldmd through systemctl"

# The service not running: no kill; the rotation still succeeds.
rm active systemctl.log
echo again >"$logs/ldmd.log"
expect_rc 0 logrotate -f -s state ldm.conf
[[ $(cat "$logs/ldmd.log.1") == again && -f $logs/ldmd.log.2.gz ]] ||
  fail "the second rotation: $(ls "$logs")"
[[ $(cat systemctl.log) == "--quiet is-active ldmd.service" ]] ||
  fail "postrotate with the service stopped asked systemctl: $(cat systemctl.log)"
ok "service stopped: rotated, no signal; the older log compressed"
