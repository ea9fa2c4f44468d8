# The NOAAPORT ingester (pqutils/ingest/): unit tests of libnoaaport's
# modules, each a cmocka program linked with the library; the vectors of
# LDM 6.15's own output for synthetic frames (vectors/, from the project's
# shared reference: docs/noaaport.md) checked byte for byte.
set(NP_VECTORS ${CMAKE_CURRENT_LIST_DIR}/vectors)

# pq_np_test(NAME [ALONE test ALONE_NAME name]): a unit test of
# libnoaaport, NAME.c of this folder (ALONE: as pq_unit_test's, one test of
# it that may skip run as a ctest entry of its own).
function(pq_np_test name)
  cmake_parse_arguments(N "" "ALONE;ALONE_NAME" "" ${ARGN})
  set(_tests ${name})
  if(N_ALONE)
    pq_unit_test(${name} ALONE ${N_ALONE} ALONE_NAME ${N_ALONE_NAME})
    list(APPEND _tests ${N_ALONE_NAME})
  else()
    pq_unit_test(${name})
  endif()
  target_link_libraries(${name} PRIVATE noaaport)
  set_property(TEST ${_tests} APPEND PROPERTY ENVIRONMENT
    "NP_VECTORS=${NP_VECTORS}")
endfunction()

pq_np_test(test_np_tables)
pq_np_test(test_np_grib2 ALONE test_samples ALONE_NAME test_np_grib2_samples)
pq_np_test(test_np_grib_names)
