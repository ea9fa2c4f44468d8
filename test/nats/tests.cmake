# The bridge to NATS JetStream (pqutils/nats/): shell tests against a real
# nats-server that each test starts itself on loopback (test/nats/lib.sh),
# ctest names nats_*.  Each script gets the directory of the queue
# utilities and that of the bridge's programs.  A test that cannot find
# nats-server is skipped (77).
if(TARGET ldmnats)
  set(NATS_TEST_ARGS $<TARGET_FILE_DIR:pqcreate>
      ${CMAKE_BINARY_DIR}/pqutils/nats)
endif()

# nats_cluster: the bridge across a three-node JetStream cluster, its
# stream leader killed (SIGKILL) mid-stream and restarted (cluster.sh).
if(TARGET pq2nats AND TARGET nats2pq)
  pq_script_test(nats_cluster ${CMAKE_CURRENT_LIST_DIR}/cluster.sh
    TIMEOUT 400 LABELS nats ARGS ${NATS_TEST_ARGS})
endif()
