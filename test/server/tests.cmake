# Unit tests (cmocka) of the server library, ldmd/server/: one executable
# per file of test/server/, linked against libldmserver, registered as
# test/unit's are (pq_test, with PQ_TEST_DIR for their scratch files).
#   test_settings  the settings reader (settings.h): defaults, the
#                  registry's values, the command line's, values refused
function(ldmd_server_test name)
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE ldmserver ${CMOCKA_LIB})
  pq_test(${name} TIMEOUT 60 ENVIRONMENT ${PQ_TESTDATA_ENV} COMMAND ${name})
endfunction()

if(TARGET ldmserver)
  ldmd_server_test(test_settings)
endif()
