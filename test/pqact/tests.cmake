# pqact's tests: cmocka units of its parts (the pqact.conf reader, the
# substitutions, the filing), and shell tests that insert products into a
# real queue, run the pqact program on a pqact.conf and compare the files
# it makes byte for byte with bytes built from LDM's rules.  pqacthelper
# inserts products whose creation time, feedtype, sequence number and
# origin the test chooses (pqinsert's creation time is now).
if(TARGET pqact)
  foreach(name test_pqact_conf test_pqact_subst test_pqact_filing
               test_pqact_match)
    add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
    target_link_libraries(${name} PRIVATE pqact_core ${CMOCKA_LIB})
    pq_test(${name} TIMEOUT 60 LABELS pqact ENVIRONMENT ${PQ_TESTDATA_ENV}
      COMMAND ${name})
  endforeach()

  add_executable(pqacthelper ${CMAKE_CURRENT_LIST_DIR}/pqacthelper.c)
  target_link_libraries(pqacthelper PRIVATE ldmpq)
  pq_script_suite(pqact LABEL pqact
    ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqact>
         $<TARGET_FILE:pqacthelper>
    TESTS files 120 options 120 stop 120)
endif()

# fuzz_pqact: the pqact.conf reader, the index of its patterns and the
# substitutions on any input, when test/fuzz/fuzz.cmake could build
# libFuzzer targets.
if(COMMAND pq_fuzz_target)
  pq_fuzz_target(fuzz_pqact ${CMAKE_CURRENT_LIST_DIR}/fuzz_pqact.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/conf.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/match.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/subst.c ${_pq_sources} SEEDS)
endif()
