#!/usr/bin/env bash
# scour against a race: while scourswap exchanges, as fast as it can, each
# of 20 directories of the tree with a symbolic link beside it that points
# to a directory outside (renameat2 RENAME_EXCHANGE, atomic), scour runs
# over the tree again and again.  Whatever it sees, nothing outside the tree
# may be deleted: a directory that became a link between the moment scour
# examined it and the moment it opened it must not be entered.  The files
# inside the swapped directories are scoured, so the
# walk does enter them (scourswap puts them back, never through a link).
source "$(dirname "$0")/lib.sh" "$@"
SWAP=${2:?path of scourswap}
D=86400
OLD=$((3 * D))
ROUNDS=${SCOUR_RACE_ROUNDS:-400}

pairs=()
for i in $(seq 0 19); do
  aged $OLD "$OUTSIDE/victim$i/a.old" "$OUTSIDE/victim$i/b.old"
  mkdir -p "$DATA/race/d$i"
  ln -s "$OUTSIDE/victim$i" "$DATA/race/.l$i"
  pairs+=("$DATA/race/d$i" "$DATA/race/.l$i")
done
tree "$OUTSIDE" >outside_before
background "$SWAP" $OLD "${pairs[@]}" >"$SCRATCH/swap.out"
swapper=$BG
wait_until 10 grep -q swapping "$SCRATCH/swap.out" || fail "scourswap did not start"
conf "race 1 *.old"
deleted_inside=0
for ((r = 0; r < ROUNDS; r++)); do
  "$SCOUR" -v "$CONF" >"$OUT" 2>"$ERR" || fail "scour failed in round $r"
  sanitizer_check "$ERR"
  n=$(grep -c ' deleted .*/x\.old$' "$ERR")
  deleted_inside=$((deleted_inside + n))
  if grep -q "deleted $OUTSIDE" "$ERR"; then
    fail "round $r: scour deleted outside the tree"
  fi
done
kill -TERM "$swapper"
wait "$swapper" || fail "scourswap failed: $(cat "$SCRATCH/swap.out")"
tree "$OUTSIDE" >outside_after
cmp -s outside_before outside_after ||
  fail "the tree outside changed: $(diff outside_before outside_after)"
((deleted_inside > 0)) || fail "scour never deleted inside the swapped directories"
echo "$(tail -1 "$SCRATCH/swap.out"); $deleted_inside files deleted inside"
ok "$ROUNDS rounds against a swapping tree: nothing outside deleted"
