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

# libsbngen (sbngen.h): the tests' own SBN frames, products and what a
# perfect ingester makes of them; a second implementation of the format,
# never linked with libnoaaport.  sbngen writes random streams and their
# manifest, sbnsend sends a stream to a multicast group; neither is
# installed.
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
set(sbngen_dir ${CMAKE_CURRENT_LIST_DIR})
add_library(sbngen_lib STATIC ${sbngen_dir}/sbngen.c
  ${sbngen_dir}/sbngen_grib.c ${sbngen_dir}/sbngen_expect.c
  ${sbngen_dir}/sbngen_stream.c ${sbngen_dir}/sbngen_perturb.c
  ${sbngen_dir}/sbngen_mix.c)
set_target_properties(sbngen_lib PROPERTIES OUTPUT_NAME sbngen)
target_link_libraries(sbngen_lib PUBLIC ZLIB::ZLIB PNG::PNG OpenSSL::Crypto)
add_executable(sbngen ${sbngen_dir}/sbngen_main.c)
target_link_libraries(sbngen PRIVATE sbngen_lib)
add_executable(sbnsend ${sbngen_dir}/sbnsend.c)
target_link_libraries(sbnsend PRIVATE sbngen_lib)

pq_unit_test(test_sbngen)
target_link_libraries(test_sbngen PRIVATE sbngen_lib)
set_property(TEST test_sbngen APPEND PROPERTY ENVIRONMENT
  "NP_VECTORS=${NP_VECTORS}")
pq_script_test(ingest_sbn_tools ${CMAKE_CURRENT_LIST_DIR}/sbn_tools.sh
  TIMEOUT 60 LABELS ingest ARGS $<TARGET_FILE_DIR:sbngen>)

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
  ARGS $<TARGET_FILE_DIR:noaaportIngester> $<TARGET_FILE_DIR:sbngen>
  TESTS
    ingester 120
    multicast 180
    tcp 120)

# The blender: frames of several receivers ordered, duplicates dropped.
pq_np_test(test_np_blend)

pq_np_test(test_np_wmo)
pq_np_test(test_np_names)
pq_np_test(test_np_grib1)
pq_np_test(test_np_gini)

# np_grib2_msg.h writes test_np_grib2's messages (and fuzz_np_grib2's seeds).
pq_np_test(test_np_grib2 ALONE test_samples ALONE_NAME test_np_grib2_samples)
pq_np_test(test_np_grib_names)

# The frame reader, the feedtypes and the product builder; np_test_frames.h
# makes their frames.
find_package(ZLIB REQUIRED)
pq_np_test(test_np_sbn)
pq_np_test(test_np_feedtype)
pq_np_test(test_np_build)
target_link_libraries(test_np_build PRIVATE ZLIB::ZLIB)

# The insert and its LDM lines, and an identifier too long for the queue.
pq_np_test(test_np_insert)

# gribinsert (pqutils/ingest/gribinsert.c) on Debian's sample GRIB files,
# its names compared with the ingester's for the same bytes, which the
# test tool gribwrap sends it as NOAAPORT products.
add_executable(gribwrap ${sbngen_dir}/gribwrap.c)
target_link_libraries(gribwrap PRIVATE sbngen_lib)
pq_script_test(ingest_gribinsert ${CMAKE_CURRENT_LIST_DIR}/gribinsert.sh
  TIMEOUT 180 LABELS ingest
  ARGS $<TARGET_FILE_DIR:gribinsert> $<TARGET_FILE_DIR:gribwrap>)
# gribinsert's search for messages and its identifiers (grib_file.h), on
# libsbngen's messages.
pq_np_test(test_np_grib_file)
target_link_libraries(test_np_grib_file PRIVATE sbngen_lib)
