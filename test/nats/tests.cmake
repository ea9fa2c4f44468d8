# The bridge to NATS JetStream (pqutils/nats/): cmocka tests that need no
# server, of its wire format (test_ldmnats, test_nats_reassembly) and of
# pq2nats's books of what is in flight (test_nats_inflight); shell tests
# against a real nats-server that each test starts itself on loopback
# (test/nats/lib.sh), ctest names nats_*.  Each script gets the
# directory of the queue utilities and that of the bridge's programs.  A
# test that cannot find nats-server is skipped (77).
if(TARGET ldmnats)
  set(NATS_TEST_ARGS $<TARGET_FILE_DIR:pqcreate>
      $<TARGET_FILE_DIR:pq2nats>)
endif()

# The wire format's pure parts (pqutils/nats/subject.c), built with the
# bridge.
if(TARGET ldmnats_wire)
  add_executable(test_ldmnats ${CMAKE_CURRENT_LIST_DIR}/test_ldmnats.c)
  target_link_libraries(test_ldmnats PRIVATE ldmnats_wire ${CMOCKA_LIB})
  pq_test(test_ldmnats TIMEOUT 60 COMMAND test_ldmnats)
endif()

# nats2pq's reading of the bridge's wire format (pqutils/nats/reassembly.c):
# headers, body and chunk checks, without a server or libnats.
pq_unit_test(test_nats_reassembly)
target_sources(test_nats_reassembly PRIVATE
  ${PROJECT_SOURCE_DIR}/pqutils/nats/reassembly.c)

# natspeek: the server's side of what the bridge stored (natspeek.c).
if(TARGET ldmnats)
  add_executable(natspeek ${CMAKE_CURRENT_LIST_DIR}/natspeek.c)
  target_link_libraries(natspeek PRIVATE ldmpq cnats::nats)
  list(APPEND NATS_TEST_ARGS $<TARGET_FILE:natspeek>)
  # natsdown: pq2nats's connection when the server goes away (natsdown.c).
  add_executable(natsdown ${CMAKE_CURRENT_LIST_DIR}/natsdown.c)
  target_link_libraries(natsdown PRIVATE ldmnats)
  pq_script_suite(nats LABEL nats
    ENVIRONMENT NATSDOWN=$<TARGET_FILE:natsdown>
    ARGS ${NATS_TEST_ARGS}
    TESTS
      publish_down 120)
  # nats_NAME runs nats/NAME.sh, with its timeout in seconds.
  pq_script_suite(nats LABEL nats ARGS ${NATS_TEST_ARGS}
    TESTS
      publish 300
      publish_lost 180
      publish_auth 120)
endif()

# nats2pq's tests: the queue -> pq2nats -> nats-server -> nats2pq -> queue
# path, restarts of either bridge and of the server, a slow queue, and what
# nats2pq refuses.  natshelper publishes messages of the test's making;
# pqclihelper (test/cli) dumps a queue's products in order.
if(TARGET nats2pq AND TARGET pqclihelper)
  add_executable(natshelper ${CMAKE_CURRENT_LIST_DIR}/natshelper.c)
  target_link_libraries(natshelper PRIVATE cnats::nats)
  pq_script_suite(nats LABEL nats
    ENVIRONMENT NATSHELPER=$<TARGET_FILE:natshelper>
                PQCLIHELPER=$<TARGET_FILE:pqclihelper>
    ARGS ${NATS_TEST_ARGS}
    TESTS
      sub_refuse 120
      sub_phantom 120
      token_file 120
      publish_many_chunks 180
      bridge 300
      bridge_restart 300
      bridge_server_kill 300
      bridge_slow 300)
endif()

# nats_cluster: the bridge across a three-node JetStream cluster, its
# stream leader killed (SIGKILL) mid-stream and restarted (cluster.sh).
if(TARGET pq2nats AND TARGET nats2pq)
  pq_script_test(nats_cluster ${CMAKE_CURRENT_LIST_DIR}/cluster.sh
    TIMEOUT 400 LABELS nats ARGS ${NATS_TEST_ARGS})
endif()

# pq2nats's books of what is in flight (pqutils/nats/inflight.c): order,
# retries, recovery and the position, without libnats or a server.
if(TARGET pq2nats)
  add_executable(test_nats_inflight ${CMAKE_CURRENT_LIST_DIR}/test_nats_inflight.c
    ${PROJECT_SOURCE_DIR}/pqutils/nats/inflight.c)
  target_link_libraries(test_nats_inflight PRIVATE pqcli ${CMOCKA_LIB})
  pq_test(test_nats_inflight TIMEOUT 60 ENVIRONMENT ${PQ_TESTDATA_ENV}
    COMMAND test_nats_inflight)
endif()
