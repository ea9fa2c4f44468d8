# Unit tests (cmocka) of the server library, ldmd/server/: one executable
# per file of test/server/, linked against libldmserver, registered with
# pq_test.  The server's network tests, real ldmd processes, are in test/net.
#   test_settings  the settings reader (settings.h): defaults, the
#                  registry's values, the command line's, values refused
#   test_resume    the requester's resume file and its autoshift rule
#   test_peername  forward confirmation of a peer's name
function(ldmd_server_test name)
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE ldmserver ${CMOCKA_LIB})
  pq_test(${name} TIMEOUT 60 ENVIRONMENT ${PQ_TESTDATA_ENV} COMMAND ${name})
endfunction()

if(TARGET ldmserver)
  ldmd_server_test(test_settings)
endif()

# test_resume and test_peername have the label net: ctest -L net runs them
# with the server's network tests (test/net).
add_executable(test_resume ${CMAKE_CURRENT_LIST_DIR}/test_resume.c)
target_link_libraries(test_resume PRIVATE ldmserver ${CMOCKA_LIB})
pq_test(test_resume TIMEOUT 60 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
  COMMAND test_resume)

# Forward confirmation of peer names, with a stand-in resolver
# (docs/security.md, "Host names").
add_executable(test_peername ${CMAKE_CURRENT_LIST_DIR}/test_peername.c)
target_link_libraries(test_peername PRIVATE ldmserver ${CMOCKA_LIB})
pq_test(test_peername TIMEOUT 60 LABELS net COMMAND test_peername)
