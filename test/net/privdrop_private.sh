#!/usr/bin/env bash
# privdrop_private.sh - privdrop.sh run with its PQ_TEST_DIR in a folder
# that only root may enter (mode 0700), as a build folder is in a clone
# under /root: the test passes there too, because a test whose server
# drops root's privileges makes its files where that user can reach them
# (SCRATCH_SHARED, test/lib/common.sh).  Usage: privdrop_private.sh LDMD
# LDM6_PEER (privdrop.sh's arguments).
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
scratch_init ldmdnet "${PQ_TEST_DIR:-}"
chmod 0700 "$SCRATCH" || fail "chmod 0700 $SCRATCH"
searchable_by_all "$SCRATCH" && fail "every user may still search $SCRATCH"
FAIL_SHOW='tail'
run env PQ_TEST_DIR="$SCRATCH" bash "$(dirname "${BASH_SOURCE[0]}")/privdrop.sh" "$@"
case $rc in
0) ok "privdrop.sh passes with PQ_TEST_DIR in a folder of mode 0700" ;;
77) skip_part "privdrop.sh skipped: $(tail -1 "$OUT")" ;;
*) fail "privdrop.sh with PQ_TEST_DIR in a folder of mode 0700 exited $rc" ;;
esac
