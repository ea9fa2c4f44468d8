# scour's tests (pqutils/ops/scour.1): shell scripts that build a scratch tree
# of real files with chosen modification times (touch -d), run the scour
# program on a scour.conf and check which files are left.  basic: the ages,
# the glob, recursion, -d, -n, the configuration's mistakes; safety:
# symbolic links, refused directories, excludes, the queue file, mounts
# (root only, skipped otherwise); race: directories swapped for links
# (scourswap) while scour runs never lead it outside the tree.
if(TARGET scour)
  add_executable(scourswap ${CMAKE_CURRENT_LIST_DIR}/scourswap.c)
  pq_script_suite(scour LABEL scour
    ARGS $<TARGET_FILE:scour> $<TARGET_FILE:scourswap>
    TESTS basic 60 safety 60 race 120)
endif()
