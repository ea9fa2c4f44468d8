# pqsurf's tests: cmocka units of the splitting of bulletins the tests make
# (test_surf_split), and a shell test that runs pqsurf on a real queue with
# its pqact child (pqsurf.sh: the observations in the private queue,
# duplicates dropped, files filed, the expiry, the child's death).
if(TARGET pqsurf)
  add_executable(test_surf_split ${CMAKE_CURRENT_LIST_DIR}/test_surf_split.c)
  target_link_libraries(test_surf_split PRIVATE surf_core ${CMOCKA_LIB})
  pq_test(test_surf_split TIMEOUT 60 LABELS surf COMMAND test_surf_split)
endif()

# fuzz_surf: the bulletin parser on any bytes, when test/fuzz/fuzz.cmake
# could build libFuzzer targets.  The logger (and the registry it reads its
# default from) comes along.
if(COMMAND pq_fuzz_target)
  pkg_check_modules(FUZZ_SURF_XML REQUIRED libxml-2.0)
  pq_fuzz_target(fuzz_surf ${CMAKE_CURRENT_LIST_DIR}/fuzz_surf.c
    ${CMAKE_SOURCE_DIR}/pqutils/surf/surf_scan.c
    ${CMAKE_SOURCE_DIR}/pqutils/surf/surf_heading.c
    ${CMAKE_SOURCE_DIR}/pqutils/surf/surf_split.c
    ${CMAKE_SOURCE_DIR}/ldmd/site/log.c
    ${CMAKE_SOURCE_DIR}/ldmd/site/registry.c
    ${CMAKE_SOURCE_DIR}/ldmd/site/registry_keys.c
    ${CMAKE_SOURCE_DIR}/ldmd/site/registry_write.c ${_pq_sources}
    FLAGS ${FUZZ_SURF_XML_CFLAGS} LIBS ${FUZZ_SURF_XML_LDFLAGS} SEEDS)
endif()

if(TARGET pqsurf)
  pq_script_suite(surf LABEL surf ARGS $<TARGET_FILE_DIR:pqsurf>
    TESTS pqsurf 240)
endif()

# surf_bench: what the splitting costs, alone and with the insertions
# into a queue made as mksurfqueue makes it (test/bench/surf_bench.c; run
# by hand: build/release/test/surf_bench).
if(TARGET surf_core)
  add_executable(surf_bench ${CMAKE_SOURCE_DIR}/test/bench/surf_bench.c)
  target_link_libraries(surf_bench PRIVATE surf_core)
endif()
