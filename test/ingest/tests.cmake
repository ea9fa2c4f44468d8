# The NOAAPORT ingester (pqutils/ingest/): unit tests of libnoaaport's
# modules, each a cmocka program linked with the library; the vectors of
# LDM 6.15's own output for synthetic frames (vectors/, from the project's
# shared reference: docs/noaaport.md) checked byte for byte.
set(NP_VECTORS ${CMAKE_CURRENT_LIST_DIR}/vectors)

# pq_np_test(NAME): a unit test of libnoaaport, NAME.c of this folder.
function(pq_np_test name)
  pq_unit_test(${name})
  target_link_libraries(${name} PRIVATE noaaport)
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
    "NP_VECTORS=${NP_VECTORS}")
endfunction()

pq_np_test(test_np_tables)

# noaaportIngester's FIFO, with a real writer thread.
pq_unit_test(test_np_fifo)
target_sources(test_np_fifo PRIVATE
  ${PROJECT_SOURCE_DIR}/pqutils/ingest/ingest_fifo.c)

# The statistics block in LDM's layout.
pq_np_test(test_np_stats)

# LDM 6.15's products and log lines for the vectors, byte for byte.
pq_np_test(test_np_vectors)

# The program (ingester.sh): LDM's vectors from standard input, duplicates,
# usage errors, SIGUSR1 and SIGTERM.  Arguments: the programs' directory,
# the test tools' (sbngen, sbnsend).
pq_script_suite(ingest LABEL ingest
  ARGS $<TARGET_FILE_DIR:noaaportIngester> $<TARGET_FILE_DIR:test_np_tables>
  TESTS
    ingester 120)

# The blender: frames of several receivers ordered, duplicates dropped.
pq_np_test(test_np_blend)
