# shellcheck shell=bash
# site.sh - sourced by deb.sh once the package is installed in its scratch
# root $R (the user ldm, LDMHOME, the registry with a 2M queue): the site,
# run as an operator runs it.  Systemd does not run here, so the test runs
# the installed unit's own lines as systemd would, in a chroot of $R made
# container-like: the Debian userland the scripts need (sh, coreutils,
# awk, sed, grep, find, flock) copied from this host, /dev/null made, /proc
# and a tmpfs on /dev/shm mounted in the private mount namespace deb.sh
# runs in.  As the unit's
# User in its WorkingDirectory it runs ExecStartPre and ExecStart (ready
# when ldmd says READY=1 on the socket the test gives it), sends
# products to the server (ldmsend), receives them (notifyme, and pqact
# filing them under var/data), checks that "ldmadmin check" is green,
# stops the server with "ldmadmin stop" and runs ExecStopPost, wipes
# /dev/shm as a reboot does, starts the unit again and finds the products
# still there and new ones arriving, then stops it as "systemctl stop".
#
# Needs from deb.sh: R, SCRATCH, OUT, ERR, CH (the env -i chroot prefix),
# LISTEN (test/service's notify_listen), chroot_libs, the common.sh functions, and the mount namespace
# (PKG_TEST_NS), whose exit trap unmounts $R/proc and $R/dev/shm.  The
# tmpfs on $R/dev/shm stays for the rest of deb.sh (the removal keeps the
# queue there, the purge removes it).

[[ ${PKG_TEST_NS:-} == 1 ]] || fail "site.sh runs in deb.sh's private mount namespace"
SITE_UNIT=$R/usr/lib/systemd/system/ldmd.service
[[ -f $SITE_UNIT ]] || fail "the package installed no $SITE_UNIT"

# The userland the installed scripts (ldmadmin, ldmd-queue) and pqact's
# children need, with the libraries of every program there; Debian 12's
# merged /usr, so /bin/sh is /usr/bin/sh.  A program the package installs
# is never replaced.
[[ -e $R/bin ]] || ln -s usr/bin "$R/bin" || fail "cannot link $R/bin"
mapfile -t tools < <(dpkg -L coreutils dash sed grep mawk findutils 2>/dev/null |
  grep -E '^/(usr/)?bin/[^/]+$')
tools+=(/usr/bin/flock /usr/bin/sh /usr/bin/awk)
for t in "${tools[@]}"; do
  dst=$R/usr/bin/$(basename "$t")
  [[ -e $dst || ! -x $t ]] || cp -L "$t" "$dst" || fail "cannot copy $t into $R"
done
chroot_libs
mkdir -p "$R/dev" "$R/proc" "$R/tmp" || fail "cannot make /dev, /proc, /tmp in $R"
chmod 1777 "$R/tmp" || fail "chmod $R/tmp"
[[ -c $R/dev/null ]] || mknod -m 666 "$R/dev/null" c 1 3 || fail "cannot make $R/dev/null"
mount -t proc proc "$R/proc" || fail "cannot mount /proc in $R"
# /dev/shm a tmpfs, as on the host, with the queue postinst made in it.
# shm_mount: a fresh (empty) tmpfs there, as after a reboot.
shm_mount() {
  ! mountpoint -q "$R/dev/shm" || umount "$R/dev/shm" || fail "cannot unmount $R/dev/shm"
  mount -t tmpfs -o size=64m,mode=1777 tmpfs "$R/dev/shm" || fail "cannot mount a tmpfs on $R/dev/shm"
}
mv "$R/dev/shm/ldm.pq" "$SCRATCH/ldm.pq" || fail "cannot move the queue aside"
shm_mount
mv "$SCRATCH/ldm.pq" "$R/dev/shm/ldm.pq" || fail "cannot move the queue to the tmpfs"

# site_key KEY: the value of KEY= in the installed unit's [Service]
# section, one a line, in order.
site_key() {
  awk -v key="$1" '
    /^\[/ { service = ($0 == "[Service]") }
    service && index($0, key "=") == 1 { print substr($0, length(key) + 2) }
  ' "$SITE_UNIT"
}
SITE_USER=$(site_key User):$(site_key Group)
SITE_DIR=$(site_key WorkingDirectory)
[[ $SITE_USER == ldm:ldm && $SITE_DIR == /var/lib/ldm ]] ||
  fail "the unit runs as '$SITE_USER' in '$SITE_DIR', not ldm:ldm in /var/lib/ldm"
# as_ldm CMD...: CMD in the chroot as the unit's user in its directory.
# Every step execs the next, so a background "${AS_LDM[@]}" CMD & has
# CMD's pid in $!.
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
AS_LDM=("${CH[@]}" --userspec="$SITE_USER" "$R" /bin/sh -c 'cd "$0" && exec "$@"' "$SITE_DIR")
as_ldm() { "${AS_LDM[@]}" "$@"; }
# site_line KEY: the one command line of KEY, in the array LINE; a line
# with what a shell splits differently from systemd fails the test.
site_line() {
  local l
  l=$(site_key "$1")
  [[ -n $l && $l != *$'\n'* ]] || fail "the unit needs one $1"
  [[ $l != *[\"\'\$%\\]* && $l != [-@+!:]* ]] ||
    fail "the unit's $1 '$l' needs a real systemd parser"
  read -r -a LINE <<<"$l"
}

# The site's configuration, as its operator writes it: the server on
# loopback on a free port, taking products from loopback and running pqact
# on the installed pqact.conf (its last entry files what no other takes
# under var/data/other/).
port=$(free_port)
for kv in "127.0.0.1 /server/ip-addr" "$port /server/port"; do
  read -r v k <<<"$kv"
  expect_rc 0 as_ldm regutil -s "$v" "$k"
done
printf 'ACCEPT\tANY\t.*\t^127\\.0\\.0\\.1$\nEXEC\t"pqact"\n' >>"$R/etc/ldm/ldmd.conf"
expect_rc 0 as_ldm ldmadmin pqactcheck
expect_in "$ERR" "/var/lib/ldm/etc/pqact.conf is a valid pqact configuration"

SITE_PID=
KILL_AT_EXIT+=(SITE_PID)
SITE_RUN=0
# systemd's notification socket for the unit (Type=notify, NotifyAccess=
# main): test/service's listener on a path in the root, /run/notify.sock
# in the chroot.
[[ $(site_key Type) == notify && $(site_key NotifyAccess) == main ]] ||
  fail "the unit is not Type=notify with NotifyAccess=main, as this test runs it"
mkdir -p "$R/run" || fail "mkdir $R/run"
SITE_NOTES=$SCRATCH/notify.out
"$LISTEN" "$R/run/notify.sock" >"$SITE_NOTES" 2>"$SCRATCH/notify.err" &
# shellcheck disable=SC2034 # killed at exit, through KILL_AT_EXIT
LISTEN_PID=$!
KILL_AT_EXIT+=(LISTEN_PID)
wait_until 10 grep -q '^# listening' "$SITE_NOTES" ||
  fail "notify_listen does not listen on $R/run/notify.sock: $(cat "$SCRATCH/notify.err")"
# As systemd's own (/run/systemd/notify), anyone may send to it.
chmod 666 "$R/run/notify.sock" || fail "chmod $R/run/notify.sock"
# site_start: as "systemctl start": ExecStartPre, then ExecStart in the
# background (its stderr, where it logs, in $SITE_LOG) with NOTIFY_SOCKET,
# until ldmd's own pid says READY=1.
site_start() {
  SITE_RUN=$((SITE_RUN + 1))
  site_line ExecStartPre
  expect_rc 0 as_ldm "${LINE[@]}"
  site_line ExecStart
  SITE_LOG=$SCRATCH/site.$SITE_RUN.log
  # shellcheck disable=SC2034 # read by fail (common.sh)
  FAIL_LOGS=(OUT:stdout ERR:stderr SITE_LOG:ldmd SITE_NOTES:notifications)
  # env -i NOTIFY_SOCKET=... PATH=... chroot ...: as_ldm with the socket.
  "${CH[@]:0:2}" NOTIFY_SOCKET=/run/notify.sock "${AS_LDM[@]:2}" "${LINE[@]}" \
    </dev/null >/dev/null 2>"$SITE_LOG" &
  SITE_PID=$!
  wait_until 20 site_up_or_gone || fail "start $SITE_RUN: ldmd sent no READY=1 within 20 s"
  grep -qxF "$SITE_PID READY=1" "$SITE_NOTES" || fail "start $SITE_RUN: ldmd exited without READY=1"
  expect_in "$SITE_LOG" "listening on 127.0.0.1 port $port"
}
site_up_or_gone() { grep -qxF "$SITE_PID READY=1" "$SITE_NOTES" || gone "$SITE_PID"; }
# site_exited: after the server was stopped: it exited 0; then, as systemd
# does once the main process is gone, ExecStopPost.
site_exited() {
  wait_until 30 gone "$SITE_PID" || fail "ldmd (start $SITE_RUN) still runs"
  wait "$SITE_PID"
  rc=$?
  SITE_PID=
  ((rc == 0)) || fail "ldmd (start $SITE_RUN) exited $rc"
  site_line ExecStopPost
  expect_rc 0 as_ldm "${LINE[@]}"
}
# site_send IDENT: a product sent to the server with ldmsend, then seen by
# notifyme and filed by pqact.
site_send() {
  local n=$SCRATCH/notifyme.$1
  printf 'product %s\n' "$1" >"$R/var/lib/ldm/$1"
  expect_rc 0 as_ldm ldmsend -l - -h 127.0.0.1 -P "$port" -f EXP "$1"
  # -o 3600: the products of the last hour, this one among them.
  "${AS_LDM[@]}" notifyme -v -l - -h 127.0.0.1 -P "$port" -f EXP -p "^$1\$" -o 3600 2>"$n" &
  NOTIFYME_PID=$!
  wait_until 20 grep -q " $1\$" "$n" || fail "notifyme did not receive $1: $(cat "$n")"
  stop_within "$NOTIFYME_PID" TERM 10 notifyme
  NOTIFYME_PID=
  wait_until 20 grep -rqx "product $1" "$R/var/lib/ldm/var/data/other" ||
    fail "pqact did not file $1 under var/data/other: $(ls -R "$R/var/lib/ldm/var/data")"
}
NOTIFYME_PID=
KILL_AT_EXIT+=(NOTIFYME_PID)

# Start, products in and out, check, stop.
site_start
expect_rc 0 as_ldm ldmadmin isrunning
site_send SITE-1
site_send SITE-2
expect_rc 0 as_ldm ldmadmin check
expect_in "$ERR" "green"
expect_rc 0 as_ldm ldmadmin stop
expect_in "$ERR" "has stopped"
site_exited
expect_rc 1 as_ldm ldmadmin isrunning
snap=$R/var/lib/ldm/var/queues/ldm.pq.snap
[[ -f $snap ]] || fail "ExecStopPost saved no queue at $snap"
ok "site: the unit's ExecStart as ldm; ldmsend in, notifyme and pqact out;" \
  "ldmadmin check green; ldmadmin stop, the queue saved"

# A reboot: /dev/shm is a new, empty tmpfs.  The unit restores the queue
# and serves.
shm_mount
site_start
expect_rc 0 as_ldm pqcat -v -l - /dev/null
for id in SITE-1 SITE-2; do
  expect_in "$ERR" " $id"
done
site_send SITE-3
expect_rc 0 as_ldm ldmadmin check
# As "systemctl stop": the unit's KillSignal to ldmd.
sig=$(site_key KillSignal)
kill -"${sig#SIG}" "$SITE_PID" || fail "cannot send $sig to ldmd"
site_exited
expect_rc 0 as_ldm pqcat -v -l - /dev/null
for id in SITE-1 SITE-2 SITE-3; do
  expect_in "$ERR" " $id"
done
umount "$R/proc" || fail "cannot unmount $R/proc"
[[ -s $R/dev/shm/ldm.pq ]] || fail "no queue left in $R/dev/shm"
ok "site: after a stop and a wiped /dev/shm the unit starts with the queue" \
  "kept (SITE-1, SITE-2) and takes SITE-3; stopped by its KillSignal"
