#!/usr/bin/env bash
# etc/ldmd.service, parsed: systemd-analyze verify finds nothing wrong with
# it (with its programs pointed at this build's), and it says what the
# package and the issue need: ldmd in the foreground logging to the
# journal, ready when it says so (Type=notify, from its main process), as
# ldm, SIGTERM with a bounded timeout, Restart=on-failure, RemoveIPC=no,
# the queue restored before ldmd and saved after it, the package's paths.
# Skipped (77) where systemd-analyze is missing.
source "$(dirname "$0")/lib.sh" "$@"

# want KEY VALUE: the unit sets KEY to VALUE, once.
want() {
  local got
  got=$(unit_key "$1")
  [[ $got == "$2" ]] || fail "$UNIT: $1 is '$got', expected '$2'"
}
want Type notify
want NotifyAccess main
want User ldm
want Group ldm
want WorkingDirectory /var/lib/ldm
want RemoveIPC no
want Restart on-failure
want KillSignal SIGTERM
want KillMode mixed
want ExecStartPre '/usr/sbin/ldmd-queue restore'
want ExecStart '/usr/sbin/ldmd -f -l - -W ldmd.pid'
want ExecStopPost '/usr/sbin/ldmd-queue save'
want AmbientCapabilities CAP_NET_BIND_SERVICE
stop=$(seconds "$(unit_key TimeoutStopSec)")
((stop > 10 && stop <= 300)) ||
  fail "TimeoutStopSec is $stop s: more than ldmd's 10 s for its children, and bounded, please"
grep -qx 'WantedBy=multi-user.target' "$UNIT" || fail "the unit is not wanted by multi-user.target"
grep -qx 'RequiresMountsFor=/var/lib/ldm' "$UNIT" ||
  fail "the unit does not keep /var/lib/ldm mounted for the save at shutdown"
ok "the unit's settings"

# The package's paths: what install.cmake and service/CMakeLists.txt put
# there for the prefix /usr.
grep -q 'add_subdirectory(service)' "$SRC/CMakeLists.txt" || fail "service/ is not built"
# shellcheck disable=SC2016 # a CMake variable
grep -q 'DESTINATION ${CMAKE_INSTALL_SBINDIR}' "$SRC/service/CMakeLists.txt" ||
  fail "ldmd-queue is not installed in sbin, where the unit runs it"
grep -q 'ldmpq_install_program(ldmd SBIN)' "$SRC/ldmd/CMakeLists.txt" ||
  fail "ldmd is not installed in sbin, where the unit runs it"
ok "the unit's programs are where the package puts them"

if ! command -v systemd-analyze >/dev/null; then
  skip_part "systemd-analyze verify: no systemd-analyze (package systemd)"
  exit 0
fi
# verify checks that the programs exist: this build's, in a copy.
sed -e "s#/usr/sbin/ldmd-queue#$BUILD/service/ldmd-queue#" \
  -e "s#/usr/sbin/ldmd #$BUILD/bin/ldmd #" "$UNIT" >"$SCRATCH/ldmd.service" ||
  fail "cannot copy the unit"
grep -q '/usr/sbin' "$SCRATCH/ldmd.service" && fail "a /usr/sbin path left in the copy"
expect_rc 0 systemd-analyze verify --man=no "$SCRATCH/ldmd.service"
[[ ! -s $ERR && ! -s $OUT ]] || fail "systemd-analyze verify complains of the unit"
# And it does complain of a bad one: the check can fail.
mkdir "$SCRATCH/bad" || fail "mkdir"
sed 's/^RemoveIPC=no/RemoveIPC=nope/' "$SCRATCH/ldmd.service" >"$SCRATCH/bad/ldmd.service" ||
  fail "cannot write the bad unit"
run systemd-analyze verify --man=no "$SCRATCH/bad/ldmd.service"
expect_in "$ERR" "Failed to parse boolean value, ignoring: nope"
ok "systemd-analyze verify: clean (and it sees a bad value)"
