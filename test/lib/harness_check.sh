#!/usr/bin/env bash
# harness_check.sh - what the harness promises of every test, checked over
# the test sources, so that a test that breaks the promise fails here
# instead of passing (or skipping) unseen.
#
#   harness_check.sh skips TESTDIR
#       A test skips only through the helpers that honour CI=true:
#       skip_part and skip_test (common.sh) in the shell tests, tu_skip
#       (tu_skip.h) in the C tests.  So no shell test exits or returns 77
#       itself (only common.sh's cleanup does), nor prints a skip of its
#       own ("skip: ...") and goes on to pass; no C test exits or returns
#       77 itself (only tu_exit_code does), nor calls cmocka's skip(),
#       which ctest would count as a pass.
#   harness_check.sh seeds TESTDIR
#       A shell test that draws from $RANDOM or shuf(1) calls seed_init
#       (common.sh), which prints its seed and takes one back from
#       PQ_TEST_SEED.
#
# Comment lines are not looked at.  Each offence is printed as FILE:LINE.
source "$(dirname "$0")/common.sh"

DIR=$(cd "${2:?usage: harness_check.sh skips|seeds TESTDIR}" && pwd) ||
  fail "no directory $2"

# code_matches ERE COMMENT_ERE FILE...: the lines of FILE that match ERE
# and are not comments (lines matching COMMENT_ERE), as PATH:LINE: TEXT,
# paths relative to DIR.
code_matches() {
  local ere=$1 comment=$2
  shift 2
  (($# > 0)) || return 0
  grep -nHE -- "$ere" "$@" | awk -v c="$comment" -v d="$DIR/" '{
    line = $0
    sub(/^[^:]*:[0-9]+:/, "", line)
    if (line ~ c) next
    if (index($0, d) == 1) $0 = substr($0, length(d) + 1)
    print
  }'
}

# files GLOB EXCEPT...: the files under DIR named GLOB, but DIR/EXCEPT.
# This script is never looked at: its patterns name what they look for.
files() {
  local e not=(! -path "$DIR/lib/harness_check.sh")
  for e in "${@:2}"; do
    not+=(! -path "$DIR/$e")
  done
  find "$DIR" -type f -name "$1" "${not[@]}" | sort
}

SH_COMMENT='^[[:space:]]*#'
C_COMMENT='^[[:space:]]*(\*|/\*|//)'
B='(^|[^[:alnum:]_])' # a word starts
E='([^[:alnum:]_]|$)' # a word ends
Q="[\"']?"            # a quote, or none
# shell: exit 77, return 77; echo/printf of a skip of its own
SH_EXIT77="${B}(exit|return)[[:space:]]+${Q}77${E}"
SH_SAY_SKIP="^[[:space:]]*(echo|printf)[[:space:]]+(-[[:alpha:]]+[[:space:]]+)*${Q}(skip|SKIP)"
# C: exit(77), _exit(77), return 77; cmocka's skip()
C_EXIT77="${B}(_?exit|_Exit|return)[[:space:]]*\(?[[:space:]]*77${E}"
C_SKIP="${B}skip[[:space:]]*\([[:space:]]*\)"
# shell: draws from $RANDOM or shuf(1); calls seed_init
SH_RANDOM="${B}(RANDOM|shuf)${E}"
SH_SEED_INIT='^[[:space:]]*seed_init([[:space:]]|$)'

check_skips() {
  local sh c bad
  mapfile -t sh < <(files '*.sh' lib/common.sh)
  mapfile -t c < <(files '*.[ch]' lib/tu_skip.h)
  ((${#sh[@]} > 10 && ${#c[@]} > 10)) || fail "no tests found under $DIR"
  bad=$(
    code_matches "$SH_EXIT77" "$SH_COMMENT" "${sh[@]}"
    code_matches "$SH_SAY_SKIP" "$SH_COMMENT" "${sh[@]}"
    code_matches "$C_EXIT77" "$C_COMMENT" "${c[@]}"
    code_matches "$C_SKIP" "$C_COMMENT" "${c[@]}"
  )
  [[ -z $bad ]] ||
    fail "skips not through skip_part/skip_test (common.sh) or tu_skip" \
      "(tu_skip.h), which CI=true cannot fail:"$'\n'"$bad"
  ok "every skip of the ${#sh[@]} shell and ${#c[@]} C files" \
    "goes through the helpers"
}

check_seeds() {
  local sh f bad=""
  mapfile -t sh < <(files '*.sh' lib/common.sh)
  ((${#sh[@]} > 10)) || fail "no tests found under $DIR"
  for f in "${sh[@]}"; do
    [[ -n $(code_matches "$SH_RANDOM" "$SH_COMMENT" "$f") ]] || continue
    [[ -n $(code_matches "$SH_SEED_INIT" "$SH_COMMENT" "$f") ]] ||
      bad+="${f#"$DIR/"}"$'\n'
  done
  [[ -z $bad ]] ||
    fail "random without seed_init (its seed neither printed nor taken" \
      "from PQ_TEST_SEED):"$'\n'"$bad"
  ok "every shell test that draws at random prints its seed and takes one back"
}

case ${1:-} in
  skips) check_skips ;;
  seeds) check_seeds ;;
  *) fail "usage: harness_check.sh skips|seeds TESTDIR" ;;
esac
