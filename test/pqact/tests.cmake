# pqact's tests: cmocka units of its parts (the pqact.conf reader, the
# substitutions, the filing, the children, the pattern index; its state
# file's are test/common's; test_pqact_onepass: the one-pass matcher against
# regexec on every entry), and shell tests that insert
# products into a real queue, run the pqact program on a pqact.conf and
# compare the files it makes byte for byte with bytes built from LDM's
# rules.  pqacthelper
# inserts products whose creation time, feedtype, sequence number and
# origin the test chooses (pqinsert's creation time is now); pqactdb reads
# DBFILE's gdbm databases back.
if(TARGET pqact)
  foreach(name test_pqact_conf test_pqact_subst test_pqact_filing
      test_pqact_children test_pqact_match test_pqact_edex
      test_pqact_onepass)
    add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
    target_link_libraries(${name} PRIVATE pqact_core ${CMOCKA_LIB})
    target_compile_definitions(${name} PRIVATE
      PQ_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
    pq_test(${name} TIMEOUT 60 LABELS pqact ENVIRONMENT ${PQ_TESTDATA_ENV}
      COMMAND ${name})
  endforeach()
  # thousands of identifiers against hundreds of EREs, three times over;
  # and test_pqact_match builds its tables with the database too
  set_tests_properties(test_pqact_onepass PROPERTIES TIMEOUT 600)
  set_tests_properties(test_pqact_match PROPERTIES TIMEOUT 300)

  add_executable(pqacthelper ${CMAKE_CURRENT_LIST_DIR}/pqacthelper.c)
  target_link_libraries(pqacthelper PRIVATE ldmpq)
  pq_script_suite(pqact LABEL pqact
    ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqact>
         $<TARGET_FILE:pqacthelper>
    TESTS files 120 options 120 stop 120 state 180 hup 120 pipes 120
          decoders 180 limits 120 quirks 120 exec 180 backlog 240 resume 180
          respawn 120 dotdot 120)

  # DBFILE's tests read the databases back with gdbm (pqactdb).
  add_executable(pqactdb ${CMAKE_CURRENT_LIST_DIR}/pqactdb.c)
  target_include_directories(pqactdb PRIVATE ${GDBM_INCLUDE_DIR})
  target_link_libraries(pqactdb PRIVATE ${GDBM_LIBRARY})
  pq_script_suite(pqact LABEL pqact
    ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqact>
         $<TARGET_FILE:pqacthelper> $<TARGET_FILE:pqactdb>
    TESTS dbfile 120)
  add_executable(test_pqact_dbfile ${CMAKE_CURRENT_LIST_DIR}/test_pqact_dbfile.c)
  target_include_directories(test_pqact_dbfile PRIVATE ${GDBM_INCLUDE_DIR})
  target_link_libraries(test_pqact_dbfile PRIVATE pqact_core ${CMOCKA_LIB})
  pq_test(test_pqact_dbfile TIMEOUT 60 LABELS pqact
    ENVIRONMENT ${PQ_TESTDATA_ENV} COMMAND test_pqact_dbfile)

  # pqact -e's ring of EDEX notices: edexreader attaches and reads it as
  # AWIPS's edexBridge does; test_pqact_edex tests the writer alone.
  add_executable(edexreader ${CMAKE_CURRENT_LIST_DIR}/edexreader.c)
  pq_script_suite(pqact LABEL pqact
    ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqact>
         $<TARGET_FILE:pqacthelper> $<TARGET_FILE:edexreader>
    TESTS edex 300)
endif()

# fuzz_pqact: the pqact.conf reader (its check of the arguments too), the
# index of its patterns, PCRE2's matchers of the deterministic ones (their
# analysis and self-test) and the substitutions on any input, when test/fuzz/fuzz.cmake could build
# libFuzzer targets.
if(COMMAND pq_fuzz_target)
  pq_fuzz_target(fuzz_pqact ${CMAKE_CURRENT_LIST_DIR}/fuzz_pqact.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/conf.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/check.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/options.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/match.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/ere_hs.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/hsdb.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/submatch.c
    ${CMAKE_SOURCE_DIR}/pqutils/pqact/subst.c ${_pq_sources} SEEDS
    FLAGS -DPQACT_HAVE_HS LIBS -lhs -lpcre2-8)
endif()
