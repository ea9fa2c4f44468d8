#!/usr/bin/env bash
# deb.sh - the Debian package's test (packaging/deb.cmake,
# packaging/debian/).  Usage: deb.sh SOURCE_DIR TEST_BUILD_DIR NOTIFY_LISTEN
# (the last: test/service's notify_listen, systemd's socket for site.sh).
#
# 1. Builds the package from SOURCE_DIR in a scratch build of its own
#    (-DCMAKE_INSTALL_PREFIX=/usr -DPQ_TESTS=OFF, cpack -G DEB).
# 2. Checks it with dpkg-deb: its control fields, conffiles and maintainer
#    scripts; its files: every program with its man page, the library, its
#    headers and ldmpq.pc, etc/'s files as examples and in /etc/ldm, the
#    service unit when the tree has one; and none of the programs of
#    TEST_BUILD_DIR (tests, benchmarks) nor pqdemo.
# 3. As root, installs it with dpkg --root into a scratch root, running the
#    maintainer scripts there (--force-script-chrootless, $DPKG_ROOT): with
#    a site registry put there first (a 2M queue; dpkg keeps it), then
#    checks what postinst made (the user, LDMHOME, the link to /etc/ldm, the
#    queue), runs the installed programs in a chroot of that root (they
#    find the registry and the queue by their defaults; the user ldm may
#    rewrite the registry), checks the installed configuration with ldmd -n
#    and pqact, builds a program against the installed library with
#    pkg-config (PKG_CONFIG_LIBDIR in the scratch root only, with the -dev
#    packages the package depends on copied there), runs postinst again (nothing changes), removes the package
#    (configuration, data and queue stay) and purges it (they go); then
#    installs it with a registry whose queue has no room (postinst says so
#    and the install goes on).  Before the removal, the installed site runs
#    (site.sh): the unit's command lines in a chroot of the scratch root,
#    products in and out, ldmadmin check, stop, a restart with the queue
#    kept.
# A real install on this host, or starting the service under systemd, is
#    not done: the test must not change the machine, and systemd does not
#    run in the test environment (postinst and prerm touch the service only
#    without $DPKG_ROOT and with /run/systemd/system).  As root the test
#    runs in a private mount namespace of its own, so that what it mounts
#    in the scratch root (/proc) is never seen by the host and goes with it.
set -u
if (($(id -u) == 0)) && [[ ${PKG_TEST_NS:-} != 1 ]]; then
  command -v unshare >/dev/null || { echo "FAIL (deb): no unshare (util-linux)" >&2 && exit 1; }
  PKG_TEST_NS=1 exec unshare --mount --propagation private "$BASH" "$0" "$@"
fi
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

SRC=$(cd "${1:?source directory}" && pwd)
TESTBIN=$(cd "${2:?test directory of the build}" && pwd)
LISTEN=$(cd "$(dirname "${3:?path of notify_listen}")" && pwd)/$(basename "$3")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scratch_init pkg "${PQ_TEST_DIR:-}"
# What site.sh mounts in the scratch root goes before the scratch does.
unmount_all() {
  local m
  for m in "$SCRATCH/root/proc" "$SCRATCH/root/dev/shm"; do
    ! mountpoint -q "$m" || umount -l "$m"
  done
}
trap 'st=$?; unmount_all; cleanup $st' EXIT
FAIL_LOGS=(OUT:stdout ERR:stderr)
FAIL_SHOW='tail'

for tool in cmake cpack dpkg dpkg-deb dpkg-shlibdeps pkg-config cc; do
  command -v "$tool" >/dev/null || fail "no $tool in PATH (scripts/dev.sh installs it)"
done

# 1. The package.
B=$SCRATCH/build
expect_rc 0 cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX=/usr -DPQ_TESTS=OFF
expect_rc 0 cmake --build "$B" -j 2
run bash -c "cd '$B' && cpack -G DEB"
((rc == 0)) || fail "cpack -G DEB exited $rc"
version=$(sed -n 's/^project(ldmpq VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[[ -n $version ]] || fail "no version in $SRC/CMakeLists.txt"
debs=("$B"/ldmpq_"$version"_*.deb)
[[ -f ${debs[0]} && ${#debs[@]} == 1 ]] || fail "no single ldmpq_${version}_*.deb in $B: ${debs[*]}"
DEB=${debs[0]}
ok "built $(basename "$DEB")"

# 2. Its control fields and files.
INFO=$SCRATCH/info
dpkg-deb --info "$DEB" >"$INFO" || fail "dpkg-deb --info $DEB failed"
for field in "Package: ldmpq" "Version: $version" "Maintainer: " "Description: "; do
  grep -q "^ $field" "$INFO" || fail "dpkg-deb --info: no '$field'"
done
depends=$(sed -n 's/^ Depends: //p' "$INFO")
# libssl-dev and libisal-dev: ldmpq.pc's Requires (libcrypto, libisal).
for dep in passwd libc6 libssl3 libxml2 libtirpc3 libisal2 libgdbm6 \
  libsystemd0 libmicrohttpd12 libnats3.4 libjemalloc2 libssl-dev libisal-dev; do
  [[ ,$depends, =~ [\ ,]${dep}[\ ,] ]] || fail "Depends lacks $dep: $depends"
done
CTRL=$SCRATCH/control
mkdir "$CTRL"
dpkg-deb --control "$DEB" "$CTRL" || fail "dpkg-deb --control $DEB failed"
for s in postinst prerm postrm; do
  [[ -x $CTRL/$s ]] || fail "the package has no executable $s"
  grep -q '@[A-Z_]*@' "$CTRL/$s" && fail "$s has an unconfigured @VARIABLE@"
  sh -n "$CTRL/$s" || fail "$s is not valid sh"
done
ok "control fields, Depends ($depends) and maintainer scripts"

LIST=$SCRATCH/contents
dpkg-deb --fsys-tarfile "$DEB" | tar -t | sed 's|^\./|/|; s|/$||' | sort >"$LIST" ||
  fail "cannot list $DEB"
has() { grep -qxF -- "$1" "$LIST" || fail "the package lacks $1"; }
lacks() { ! grep -qxF -- "$1" "$LIST" || fail "the package has $1"; }
has /usr/sbin/ldmd
has /usr/share/man/man8/ldmd.8
for p in pqcreate pqinsert pqcat pqexpire pqmon pqcheck pqcopy pqsave \
  pqrestore notifyme ldmsend ldmping rtstats regutil pqact ldmadmin pq2nats \
  nats2pq; do
  has /usr/bin/$p
done
# LDM's other programs (issue 25)
for p in gribinsert pqsend feedme wasReceived pqsurf keep_running ulogger \
  newlog refresh_logging uldbutil pqutil; do
  has /usr/bin/$p
done
# Every program has its man page, and every page its program.
mapfile -t files <"$LIST"
for f in "${files[@]}"; do
  case $f in
  /usr/bin/?* | /usr/sbin/?*)
    n=$(basename "$f")
    grep -qE "^/usr/share/man/man[18]/$n\.[18]$" "$LIST" ||
      fail "$f is installed without its man page"
    ;;
  /usr/share/man/man[18]/?*)
    n=$(basename "$f")
    # ldmd.service.8 is the page of a unit.
    grep -qxE "/usr/s?bin/${n%.*}|/usr/lib/systemd/system/${n%.*}" "$LIST" ||
      fail "$f is installed without its program"
    ;;
  esac
done
# pqing and the names LDM installs it under, each with its page.
for p in pqing ids hds ddplus dds pps afos hrs feedtest; do
  has /usr/bin/$p
  has /usr/share/man/man1/$p.1
done
has /usr/include/pq/pq.h
has /usr/include/pq/product.h
# What the installed headers include from the tree is installed too.
while read -r h; do
  has "/usr/include/$h"
done < <(grep -ho '#include "[^"]*"' "$SRC/pq/pq.h" "$SRC/pq/product.h" | cut -d'"' -f2)
grep -qE '^/usr/lib/([^/]+/)?libldmpq\.a$' "$LIST" || fail "the package lacks libldmpq.a"
PC=$(grep -E '^/usr/lib/([^/]+/)?pkgconfig/ldmpq\.pc$' "$LIST") ||
  fail "the package lacks ldmpq.pc"
for f in "$SRC"/etc/*.conf "$SRC"/etc/*.xml; do
  n=$(basename "$f")
  has "/etc/ldm/$n"
  has "/usr/share/doc/ldmpq/examples/$n"
  grep -qxF "/etc/ldm/$n" "$CTRL/conffiles" || fail "/etc/ldm/$n is not a conffile"
done
# Every file under /etc is a conffile (dpkg keeps a site's changes), and
# every conffile is in the package.
etcfiles=$(dpkg-deb --fsys-tarfile "$DEB" | tar -tv | awk '$1 ~ /^-/ { print $NF }' |
  sed 's|^\./|/|' | grep '^/etc/' | sort)
[[ $(sort "$CTRL/conffiles") == "$etcfiles" ]] ||
  fail "conffiles ($(tr '\n' ' ' <"$CTRL/conffiles")) are not the files under /etc ($etcfiles)"
if [[ -f $SRC/etc/ldmd.service ]]; then
  has /usr/lib/systemd/system/ldmd.service
else
  lacks /usr/lib/systemd/system/ldmd.service
fi
# No test program, benchmark or demo.
lacks /usr/bin/pqdemo
n=0
while IFS= read -r -d '' t; do
  n=$((n + 1))
  grep -qE "/$(basename "$t")\$" "$LIST" && fail "the package has the test program $(basename "$t")"
done < <(find "$TESTBIN" -type f -perm -u+x -print0)
((n > 10)) || fail "only $n test programs in $TESTBIN: is it the build's test folder?"
ok "contents: programs and man pages, library, headers, ldmpq.pc, etc/ in" \
  "/etc/ldm and examples; none of $n test programs"

# 3. Install, configure again, remove and purge, in a scratch root.
if (($(id -u) != 0)); then
  skip_part "installing into a scratch root needs root (dpkg, chown, chroot)"
  exit 0
fi
R=$SCRATCH/root
mkdir -p "$R"/var/lib/dpkg/{info,updates,triggers} "$R/etc/ldm"
touch "$R"/var/lib/dpkg/{status,available} "$R"/etc/{passwd,group,shadow,gshadow}
DPKG=(dpkg --root="$R" --force-script-chrootless --force-depends
  --force-confold --log="$SCRATCH/dpkg.log")
# A site registry in place before the package: a small queue.
dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./etc/ldm/registry.xml >"$R/etc/ldm/registry.xml" ||
  fail "cannot extract registry.xml from $DEB"
expect_rc 0 env LDM_REGISTRY="$R/etc/ldm/registry.xml" "$B/bin/regutil" -s 2M /queue/size
expect_rc 0 "${DPKG[@]}" -i "$DEB"
expect_in "$ERR" "Using current old file as you requested"

pw=$(grep '^ldm:' "$R/etc/passwd") || fail "postinst made no user ldm in $R/etc/passwd"
IFS=: read -r _ _ uid gid _ uhome _ <<<"$pw"
((uid < 1000)) || fail "ldm is not a system user: uid $uid"
[[ $uhome == /var/lib/ldm ]] || fail "ldm's home is $uhome, not /var/lib/ldm"
grep -q "^ldm:x:$gid:" "$R/etc/group" || fail "no group ldm with gid $gid"
for d in /var/lib/ldm /var/lib/ldm/var/data /var/lib/ldm/var/logs \
  /var/lib/ldm/var/queues /etc/ldm; do
  [[ -d $R$d && $(stat -c %u:%g "$R$d") == "$uid:$gid" ]] ||
    fail "$d is not a directory of ldm ($uid:$gid): $(ls -ld "$R$d" 2>&1)"
done
[[ $(readlink "$R/var/lib/ldm/etc") == /etc/ldm ]] ||
  fail "/var/lib/ldm/etc is not a link to /etc/ldm: $(ls -ld "$R/var/lib/ldm/etc" 2>&1)"
Q=$R/dev/shm/ldm.pq
[[ -f $Q && $(stat -c %u:%g "$Q") == "$uid:$gid" ]] ||
  fail "postinst made no queue of ldm at /dev/shm/ldm.pq: $(ls -l "$Q" 2>&1)"
((size = $(stat -c %s "$Q"), size > 2000000 && size < 3000000)) ||
  fail "the queue has $size bytes, not the site registry's 2M"
[[ -f $R/etc/ldm/registry.xml.dpkg-dist ]] || fail "dpkg did not keep the package's registry aside"
ok "installed: user ldm ($uid:$gid), LDMHOME, /var/lib/ldm/etc -> /etc/ldm, a 2M queue"

# The installed programs, in a chroot of the scratch root with their
# libraries: they find the registry (/var/lib/ldm/etc/registry.xml) and the
# queue by default.
# chroot_libs: the libraries of every program in the scratch root's
# /usr/bin and /usr/sbin, copied from this host where it has none.
chroot_libs() {
  local f lib
  for f in "$R"/usr/bin/* "$R"/usr/sbin/*; do
    ldd "$f" 2>/dev/null | grep -oE '/[^ ]+' | while read -r lib; do
      [[ -e $R$lib ]] || { mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"; }
    done
  done
}
chroot_libs
CH=(env -i PATH=/usr/bin:/usr/sbin:/bin chroot)
expect_rc 0 "${CH[@]}" "$R" regutil /queue/size
[[ $(cat "$OUT") == 2M ]] || fail "regutil found /queue/size '$(cat "$OUT")', not the site's 2M"
expect_rc 0 "${CH[@]}" --userspec=ldm:ldm "$R" regutil -s 600 /insertion-check-interval
expect_rc 0 "${CH[@]}" "$R" regutil /insertion-check-interval
[[ $(cat "$OUT") == 600 ]] || fail "the user ldm could not rewrite the registry"
echo "a product" >"$R/var/lib/ldm/product"
expect_rc 0 "${CH[@]}" --userspec=ldm:ldm "$R" pqinsert -l - -p PKGTEST /var/lib/ldm/product
expect_rc 0 "${CH[@]}" "$R" pqcat -l - -p PKGTEST
[[ $(cat "$OUT") == "a product" ]] || fail "pqcat read '$(cat "$OUT")' from the installed queue"
expect_rc 0 "${CH[@]}" "$R" pqcheck -l - -C
expect_rc 0 "${CH[@]}" "$R" ldmd -n /etc/ldm/ldmd.conf
# pqact -q /dev/null exits 1 for a good file too: its log tells (pqact(1)).
expect_rc 1 "${CH[@]}" "$R" pqact -vl- -q /dev/null /etc/ldm/pqact.conf
expect_in "$ERR" 'Successfully read configuration-file "/etc/ldm/pqact.conf"'
ok "installed programs in a chroot: registry and queue by default, ldm rewrites" \
  "the registry, ldmd.conf and pqact.conf valid"

# The site runs: the unit, products in and out, ldmadmin, a restart.
# shellcheck source-path=SCRIPTDIR source=site.sh
source "$HERE/site.sh"

# A program of a library user, against what the package and its Depends
# install alone.  dpkg --force-depends installed none of the packages it
# depends on in the scratch root: those for building (-dev) are copied
# there from this host, where the build installed them; pkg-config then
# looks in the scratch root only (PKG_CONFIG_LIBDIR), never in this host's
# .pc files.
while read -r dep; do
  dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'install ok installed' ||
    fail "the package depends on $dep, which this host lacks"
  dpkg-query -L "$dep" | while read -r f; do
    [[ $f == /* && ( -f $f || -L $f ) && ! -d $f ]] || continue
    [[ -e $R$f || -L $R$f ]] || cp -P --parents "$f" "$R" || exit 1
  done || fail "cannot copy the files of $dep into $R"
done < <(tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/[ (|].*//' | grep -- '-dev$')
pcdirs=
for d in "$R"/usr/lib/*/pkgconfig "$R"/usr/lib/pkgconfig "$R"/usr/share/pkgconfig; do
  [[ ! -d $d ]] || pcdirs+=${pcdirs:+:}$d
done
export PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$pcdirs
unset PKG_CONFIG_PATH
expect_rc 0 pkg-config --variable=pcfiledir ldmpq
[[ $(cat "$OUT") == "$R$(dirname "$PC")" ]] ||
  fail "pkg-config found ldmpq.pc in $(cat "$OUT"), not in $R$(dirname "$PC")"
expect_rc 0 pkg-config --cflags --libs ldmpq
read -ra flags <"$OUT"
expect_rc 0 cc -std=c11 -Wall -Wextra -Werror -o "$SCRATCH/pcuser" "$HERE/pcuser.c" "${flags[@]}"
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
expect_rc 0 "$SCRATCH/pcuser" "$Q"
expect_in "$OUT" "opened $Q"
ok "a program built with pkg-config ldmpq (${flags[*]}) opens the queue"

# postinst again: nothing that exists changes.
ino=$(stat -c %i "$Q")
expect_rc 0 env DPKG_ROOT="$R" "$R/var/lib/dpkg/info/ldmpq.postinst" configure "$version"
(($(grep -c '^ldm:' "$R/etc/passwd") == 1)) || fail "a second postinst added ldm again"
[[ $(stat -c %i "$Q") == "$ino" ]] || fail "a second postinst replaced the queue"
expect_rc 0 "${CH[@]}" "$R" pqcat -l - -p PKGTEST
[[ $(cat "$OUT") == "a product" ]] || fail "the product is gone after a second postinst"
ok "postinst again: same user, same queue and product"

# Removal: the programs go; configuration, data and queue stay.
expect_rc 0 "${DPKG[@]}" -r ldmpq
[[ ! -e $R/usr/bin/pqcreate && ! -e $R/usr/sbin/ldmd ]] || fail "dpkg -r left the programs"
for f in /etc/ldm/registry.xml /etc/ldm/ldmd.conf /etc/ldm/pqact.conf \
  /var/lib/ldm/var/data /dev/shm/ldm.pq; do
  [[ -e $R$f ]] || fail "dpkg -r removed $f"
done
expect_rc 0 "$B/bin/pqcat" -l - -q "$Q" -p PKGTEST
[[ $(cat "$OUT") == "a product" ]] || fail "the product is gone after dpkg -r"
ok "removed: configuration, LDMHOME and the queue with its product kept"

# Purge: they go, the user stays.
expect_rc 0 "${DPKG[@]}" -P ldmpq
for f in /etc/ldm /var/lib/ldm /dev/shm/ldm.pq; do
  [[ ! -e $R$f && ! -L $R$f ]] || fail "dpkg -P left $f"
done
grep -q '^ldm:' "$R/etc/passwd" || fail "dpkg -P removed the user ldm"
ok "purged: configuration, LDMHOME and queue gone, the user kept"

# A queue that cannot be made (no room for 100000G): postinst says so and
# the install goes on, with the user ldm already there.
mkdir -p "$R/etc/ldm"
dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./etc/ldm/registry.xml >"$R/etc/ldm/registry.xml" ||
  fail "cannot extract registry.xml from $DEB"
expect_rc 0 env LDM_REGISTRY="$R/etc/ldm/registry.xml" "$B/bin/regutil" -s 100000G /queue/size
expect_rc 0 "${DPKG[@]}" -i "$DEB"
expect_in "$ERR" "ldmpq: no queue made at /dev/shm/ldm.pq"
[[ ! -e $Q && ! -e $R/var/lib/ldm/var/queues/made-by-package ]] ||
  fail "a queue too big for the disk was made: $(ls -l "$Q" 2>&1)"
(($(grep -c '^ldm:' "$R/etc/passwd") == 1)) || fail "a second install added ldm again"
expect_rc 0 "${DPKG[@]}" -P ldmpq
ok "a queue without room: postinst says so, the install goes on"
