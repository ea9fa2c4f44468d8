#!/usr/bin/env bash
# skipped.sh REASON: the ctest entry of tests the build could not make on
# this host (test/fuzz/fuzz.cmake without a clang that links libFuzzer):
# it says why and is skipped (skip_test, common.sh: exit 77, which ctest
# reports as skipped), so that the missing tests show; under CI=true,
# where the host has what the build needs, it fails instead.
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"
skip_test "${1:?usage: skipped.sh REASON}"
