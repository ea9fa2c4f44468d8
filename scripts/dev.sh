#!/usr/bin/env bash
# The project's two commands (see README):
#   scripts/dev.sh run    install what is missing, build, run the main job
#   scripts/dev.sh test   install what is missing, build, run every test,
#                         in a normal and a sanitizer build, plus lint
# Works on a fresh Debian 12 machine as root.  Builds go to build/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*"; }

# Debian packages the build, the tests and the lint need.
packages=(build-essential cmake pkg-config libtirpc-dev libxml2-dev libssl-dev
          libcmocka-dev libisal-dev libgdbm-dev clang libclang-rt-14-dev
          clang-format cppcheck strace dpkg-dev logrotate systemd
          libsystemd-dev gnuplot-nox libmicrohttpd-dev curl chromium
          chromium-driver openssl nats-server libnats-dev
          libjemalloc-dev iproute2 libpng-dev zlib1g-dev libeccodes-data
          libhyperscan-dev libpcre2-dev)

install_deps() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  fi
}

build() { # build DIR [cmake options...]
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

lint() {
  say "clang-format"
  git ls-files '*.c' '*.h' | xargs clang-format --dry-run -Werror
  say "cppcheck"
  git ls-files '*.c' | xargs cppcheck --quiet --error-exitcode=1 \
    --enable=warning,style,performance,portability --inline-suppr \
    --suppress=missingIncludeSystem -I . -D_GNU_SOURCE --std=c11
}

case "${1:-}" in
run)
  install_deps
  say "building (release)"
  build build/release
  say "running the main job (scripts/mainjob.sh; Ctrl-C stops it)"
  exec scripts/mainjob.sh build/release
  ;;
test)
  install_deps
  say "building (release)"
  build build/release
  say "testing (release)"
  (cd build/release && ctest --output-on-failure -j "$jobs")
  say "building (AddressSanitizer + UndefinedBehaviorSanitizer)"
  build build/asan -DPQ_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
  say "testing (sanitizers)"
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$jobs" -LE nosan)
  lint
  say "all tests passed"
  ;;
*)
  echo "usage: $0 run|test" >&2
  exit 2
  ;;
esac
