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
pq_np_test(test_np_grib2)
