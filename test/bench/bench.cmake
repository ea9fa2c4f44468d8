# Benchmarks: programs, not tests.  Only fanout_bench's quick run is also
# registered with ctest (label bench), as a smoke test of the bench itself.
# Run build/release/test/pq_bench (or -q for a quick run); see pq_bench.c.
add_executable(pq_bench ${CMAKE_CURRENT_LIST_DIR}/pq_bench.c
                        ${CMAKE_CURRENT_LIST_DIR}/procstat.c)
target_link_libraries(pq_bench PRIVATE ldmpq)

# relay_bench: relay throughput and latency from one ldmd's queue to
# another's over loopback (B REQUESTs from A), beside loopback TCP and the
# targets; see relay_bench.c.  iddmix.c is the IDD-like stream it (and the
# main job's iddfeed) inserts.
if(TARGET ldmd)
  add_executable(relay_bench ${CMAKE_CURRENT_LIST_DIR}/relay_bench.c
                             ${CMAKE_CURRENT_LIST_DIR}/relay_servers.c
                             ${CMAKE_CURRENT_LIST_DIR}/iddmix.c
                             ${CMAKE_CURRENT_LIST_DIR}/procstat.c)
  target_link_libraries(relay_bench PRIVATE ldmpq m)
  target_compile_definitions(relay_bench PRIVATE
                             LDMD_PATH="$<TARGET_FILE:ldmd>")
  add_dependencies(relay_bench ldmd)
endif()

# timecmd: times one command from fork to exit, for pqutils_bench.sh.
add_executable(timecmd ${CMAKE_CURRENT_LIST_DIR}/timecmd.c)

# pqact_bench.sh: pqact's throughput on tmpfs (FILE -close, a 200-entry
# table, PIPE to one and to ten decoders) beside the floor a plain C loop
# reaches; pqact_bench_aux fills the queues, measures the floors and is the
# decoder.  Run by hand: test/bench/pqact_bench.sh [BUILD_DIR].
add_executable(pqact_bench_aux ${CMAKE_CURRENT_LIST_DIR}/pqact_bench_aux.c)
target_link_libraries(pqact_bench_aux PRIVATE ldmpq)

# metrics_bench: what ldmd's live figures cost the relay (figures off, on,
# and on while both servers are scraped, side by side) and the CPU of one
# scrape; see metrics_bench.c.
if(TARGET ldmd)
  add_executable(metrics_bench ${CMAKE_CURRENT_LIST_DIR}/metrics_bench.c
                               ${CMAKE_CURRENT_LIST_DIR}/relay_servers.c
                               ${CMAKE_CURRENT_LIST_DIR}/iddmix.c
                               ${CMAKE_CURRENT_LIST_DIR}/procstat.c)
  target_link_libraries(metrics_bench PRIVATE ldmmetrics ldmpq m)
  target_compile_definitions(metrics_bench PRIVATE
                             LDMD_PATH="$<TARGET_FILE:ldmd>")
  add_dependencies(metrics_bench ldmd)
endif()

# nats_bench: the NATS JetStream bridge (pq2nats -> nats-server -> nats2pq)
# beside the ldmd -> ldmd relay, 1 KiB and 1 MiB products: products/s,
# MB/s, latency, CPU per process; see nats_bench.c.  It starts nats-server
# (Debian nats-server) itself; without the bridge's programs in this build
# it needs -B (their directory) for its nats paths.
if(TARGET ldmd)
  add_executable(nats_bench ${CMAKE_CURRENT_LIST_DIR}/nats_bench.c
                            ${CMAKE_CURRENT_LIST_DIR}/relay_servers.c
                            ${CMAKE_CURRENT_LIST_DIR}/iddmix.c
                            ${CMAKE_CURRENT_LIST_DIR}/procstat.c)
  target_link_libraries(nats_bench PRIVATE ldmpq m)
  target_compile_definitions(nats_bench PRIVATE
                             LDMD_PATH="$<TARGET_FILE:ldmd>")
  add_dependencies(nats_bench ldmd)
  if(TARGET pq2nats AND TARGET nats2pq)
    target_compile_definitions(nats_bench PRIVATE
                               NATS_BIN_DIR="$<TARGET_FILE_DIR:pq2nats>")
    add_dependencies(nats_bench pq2nats nats2pq)
  endif()
endif()

# tls_io_bench: what TLS costs ldm6_io alone (records streamed over
# loopback, plain and TLS, CPU per GB of each side); see tls_io_bench.c.
add_executable(tls_io_bench ${CMAKE_CURRENT_LIST_DIR}/tls_io_bench.c)
target_link_libraries(tls_io_bench PRIVATE ldmproto)

# np_bench: libnoaaport's frames-to-products rate on one core, from a
# stream in memory, without and with inserts (np_bench.c); np_bench.sh
# makes the stream (sbngen) and also times noaaportIngester reading a file
# and a multicast group in a namespace of its own.
add_executable(np_bench ${CMAKE_CURRENT_LIST_DIR}/np_bench.c)
target_link_libraries(np_bench PRIVATE noaaport)

# fanout_bench: one upstream ldmd serving N subscribers on loopback (real
# downstream ldmds and FEEDME sinks, fanout_sink.c), a backlog and a live
# IDD-like stream: upstream CPU per downstream per GB, wall, latency, loss;
# see fanout_bench.c.  bench_fanout runs its quick mode (N = 1, 2, a tiny
# backlog, 2 s of stream) and fails if a live run lost a product.
if(TARGET ldmd)
  add_executable(fanout_bench ${CMAKE_CURRENT_LIST_DIR}/fanout_bench.c
                              ${CMAKE_CURRENT_LIST_DIR}/fanout_sink.c
                              ${CMAKE_CURRENT_LIST_DIR}/relay_servers.c
                              ${CMAKE_CURRENT_LIST_DIR}/iddmix.c
                              ${CMAKE_CURRENT_LIST_DIR}/procstat.c)
  target_link_libraries(fanout_bench PRIVATE ldmproto ldmpq m)
  target_compile_definitions(fanout_bench PRIVATE
                             LDMD_PATH="$<TARGET_FILE:ldmd>")
  add_dependencies(fanout_bench ldmd)
  pq_test(bench_fanout TIMEOUT 600 LABELS bench
          COMMAND fanout_bench -q -x)
  # test_fanout_sink: the sink against a fake upstream (good and malformed
  # records, both ways of taking the data), a unit test of the bench's
  # instrument.
  add_executable(test_fanout_sink ${CMAKE_CURRENT_LIST_DIR}/test_fanout_sink.c
                                  ${CMAKE_CURRENT_LIST_DIR}/fanout_sink.c)
  target_link_libraries(test_fanout_sink PRIVATE ldmproto ldmpq ${CMOCKA_LIB})
  pq_test(test_fanout_sink TIMEOUT 120 COMMAND test_fanout_sink)
endif()

# pq_lockwait_bench: the single writer's pq_insert() times while R reader
# processes follow the queue (the control lock's writer preference,
# docs/queue-format.md 15.7); see pq_lockwait_bench.c.
add_executable(pq_lockwait_bench ${CMAKE_CURRENT_LIST_DIR}/pq_lockwait_bench.c)
target_link_libraries(pq_lockwait_bench PRIVATE ldmpq)
