# The main job (scripts/mainjob.sh, the README's first command): iddfeed,
# its ingester of an IDD-like stream (the feed mix of test/bench/iddmix.c),
# and a test that runs the whole job for a few seconds without a terminal
# and checks that products reached the downstream and were filed by pqact,
# and that nothing the job started is left behind.
add_executable(iddfeed ${CMAKE_CURRENT_LIST_DIR}/iddfeed.c
                       ${CMAKE_CURRENT_LIST_DIR}/../bench/iddmix.c)
target_link_libraries(iddfeed PRIVATE ldmpq m)

if(TARGET ldmd AND TARGET pqcreate AND TARGET pqmon AND TARGET notifyme AND
   TARGET pqact AND TARGET pqcat)
  pq_script_test(mainjob ${CMAKE_CURRENT_LIST_DIR}/mainjob.sh TIMEOUT 120
    LABELS mainjob ENVIRONMENT ${PQ_TESTDATA_ENV}
    ARGS ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}/scripts/mainjob.sh)
endif()
