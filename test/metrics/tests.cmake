# ldmd's live figures (docs/metrics.md): the unit tests of ldmd/metrics/ and of
# the strict Prometheus checker (test_metrics), the checker as a program
# (promcheck), and the endpoint's test with real servers on 127.0.0.1
# (endpoint.sh: a relay pair, notifyme, ldmsend), and the status page in
# headless Chromium (status_page.sh, label browser); the endpoint's bounds on
# slow clients (slow_clients.sh, with trickle: slow HTTP clients).
if(TARGET ldmmetrics)
  add_executable(test_metrics ${CMAKE_CURRENT_LIST_DIR}/test_metrics.c
                              ${CMAKE_CURRENT_LIST_DIR}/promcheck.c)
  target_link_libraries(test_metrics PRIVATE ldmmetrics ${CMOCKA_LIB})
  pq_test(test_metrics TIMEOUT 60 ENVIRONMENT ${PQ_TESTDATA_ENV}
    COMMAND test_metrics)
  add_executable(promcheck ${CMAKE_CURRENT_LIST_DIR}/promcheck_main.c
                           ${CMAKE_CURRENT_LIST_DIR}/promcheck.c)
  target_link_libraries(promcheck PRIVATE m)
endif()
if(TARGET ldmd AND TARGET ldm6_peer AND TARGET ldmsend AND TARGET notifyme)
  pq_script_test(metrics_endpoint ${CMAKE_CURRENT_LIST_DIR}/endpoint.sh
    TIMEOUT 180 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
    ARGS $<TARGET_FILE:ldmd> $<TARGET_FILE:ldm6_peer> $<TARGET_FILE:ldmsend>
         $<TARGET_FILE:notifyme> $<TARGET_FILE:promcheck>)
endif()
if(TARGET ldmd AND TARGET ldm6_peer AND TARGET promcheck)
  add_executable(trickle ${CMAKE_CURRENT_LIST_DIR}/trickle.c)
  pq_script_test(metrics_slow_clients ${CMAKE_CURRENT_LIST_DIR}/slow_clients.sh
    TIMEOUT 240 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
    ARGS $<TARGET_FILE:ldmd> $<TARGET_FILE:ldm6_peer> $<TARGET_FILE:promcheck>
         $<TARGET_FILE:trickle>)
endif()
if(TARGET ldmd AND TARGET ldm6_peer)
  if(TARGET noaaportIngester)
    set(status_page_ingester $<TARGET_FILE:noaaportIngester>)
  endif()
  pq_script_test(metrics_status_page ${CMAKE_CURRENT_LIST_DIR}/status_page.sh
    TIMEOUT 240 LABELS net browser ENVIRONMENT ${PQ_TESTDATA_ENV}
    ARGS $<TARGET_FILE:ldmd> $<TARGET_FILE:ldm6_peer> ${status_page_ingester})
endif()
# The browser tests' chromedriver starts whatever ports other programs hold
# (driver_lib.sh): its IPv4 side of a port taken, a port taken first.
pq_script_test(metrics_driver_port ${CMAKE_CURRENT_LIST_DIR}/driver_port.sh
  TIMEOUT 120 LABELS net browser ENVIRONMENT ${PQ_TESTDATA_ENV})
# pqmon's live view (pqmon -L) against a real relay pair, piped and in a
# pseudo-terminal (script, util-linux).
if(TARGET ldmd AND TARGET ldm6_peer AND TARGET pqmon)
  pq_script_test(metrics_pqmon_live ${CMAKE_CURRENT_LIST_DIR}/pqmon_live.sh
    TIMEOUT 180 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
    ARGS $<TARGET_FILE:ldmd> $<TARGET_FILE:ldm6_peer> $<TARGET_FILE:pqmon>)
endif()
# noaaportIngester's figures in ldmd's (noaaport.sh): an EXEC'd ingester and
# another, on LDM's vectors, read from /metrics and /status.json; as root, a
# third on a multicast group (sbnsend, test/ingest/tests.cmake).
if(TARGET ldmd AND TARGET ldm6_peer AND TARGET noaaportIngester
   AND TARGET promcheck)
  pq_script_test(metrics_noaaport ${CMAKE_CURRENT_LIST_DIR}/noaaport.sh
    TIMEOUT 180 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
    ARGS $<TARGET_FILE:ldmd> $<TARGET_FILE:ldm6_peer>
         $<TARGET_FILE:noaaportIngester> $<TARGET_FILE:promcheck>
         $<TARGET_FILE:sbnsend>)
endif()
