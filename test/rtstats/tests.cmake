# rtstats's tests: test_binstats, the cmocka unit test of its bins, report
# line and schedule (pqutils/net/binstats.c), with the clock and the random
# draw in the test's hands.
if(TARGET rtstats_core)
  add_executable(test_binstats ${CMAKE_CURRENT_LIST_DIR}/test_binstats.c)
  target_link_libraries(test_binstats PRIVATE rtstats_core ${CMOCKA_LIB})
  pq_test(test_binstats TIMEOUT 60 LABELS rtstats COMMAND test_binstats)
endif()

# The shell tests: rtstats_NAME runs rtstats/NAME.sh against our ldmd
# (report; chain, two of them relaying; first, the first report at once)
# or fakeldm (protocol: the answers, refusals, signals; badinput: bad
# command lines), with products inserted by pqacthelper (test/pqact).
if(TARGET rtstats AND TARGET ldmd AND TARGET fakeldm AND TARGET pqacthelper)
  pq_script_suite(rtstats LABEL rtstats
    ARGS $<TARGET_FILE_DIR:rtstats> $<TARGET_FILE:fakeldm>
         $<TARGET_FILE_DIR:ldmd> $<TARGET_FILE:pqacthelper> ${PROJECT_VERSION}
    TESTS report 180 protocol 180 badinput 60 chain 120 first 90)
endif()
