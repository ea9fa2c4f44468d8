# pqact's tests: cmocka units of its parts (the pqact.conf reader, the
# substitutions, the filing), and shell tests that insert products into a
# real queue, run the pqact program on a pqact.conf and compare the files
# it makes byte for byte with bytes built from LDM's rules.  pqacthelper
# inserts products whose creation time, feedtype, sequence number and
# origin the test chooses (pqinsert's creation time is now).
if(TARGET pqact)
  foreach(name test_pqact_conf test_pqact_subst test_pqact_filing)
    add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
    target_link_libraries(${name} PRIVATE pqact_core ${CMOCKA_LIB})
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
      LABELS pqact ENVIRONMENT "PQ_TEST_DIR=${CMAKE_BINARY_DIR}/testdata")
  endforeach()

  add_executable(pqacthelper ${CMAKE_CURRENT_LIST_DIR}/pqacthelper.c)
  target_link_libraries(pqacthelper PRIVATE ldmpq)
  foreach(name files options stop)
    add_test(NAME pqact_${name}
      COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/${name}.sh
              $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqact>
              $<TARGET_FILE:pqacthelper>)
    set_tests_properties(pqact_${name} PROPERTIES TIMEOUT 120
      LABELS pqact SKIP_RETURN_CODE 77)
  endforeach()
endif()

# fuzz_pqact: the pqact.conf reader and the substitutions on any input,
# when test/fuzz/fuzz.cmake could build libFuzzer targets.
if(COMMAND pq_fuzz_target)
  pq_fuzz_target(fuzz_pqact ${CMAKE_CURRENT_LIST_DIR}/fuzz_pqact.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/conf.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/subst.c ${_pq_sources} SEEDS)
endif()
