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
# The frame reader, the feedtypes and the product builder; np_test_frames.h
# makes their frames.
find_package(ZLIB REQUIRED)
pq_np_test(test_np_sbn)
pq_np_test(test_np_feedtype)
pq_np_test(test_np_build)
target_link_libraries(test_np_build PRIVATE ZLIB::ZLIB)
# LDM's own output for the streams of vectors/: bytes and signatures,
# identifiers and feedtypes, log lines.
pq_np_test(test_np_vectors)
