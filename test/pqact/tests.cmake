# pqact's tests: cmocka units of its parts (the pqact.conf reader, the
# substitutions, the filing).
if(TARGET pqact)
  foreach(name test_pqact_conf test_pqact_subst test_pqact_filing)
    add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
    target_link_libraries(${name} PRIVATE pqact_core ${CMOCKA_LIB})
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
      LABELS pqact ENVIRONMENT "PQ_TEST_DIR=${CMAKE_BINARY_DIR}/testdata")
  endforeach()
endif()
