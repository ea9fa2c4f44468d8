# Fuzz targets (libFuzzer).  They need clang's -fsanitize=fuzzer whatever
# compiler builds the rest, so each is compiled by a custom command that
# calls clang on the sources it needs, with ASan and UBSan.  Without a
# clang that can link libFuzzer the targets are not built (see below).
#
# fuzz_ldm6: the LDM-6 XDR decoders, RPC headers and record framer.  The
# test fuzz_ldm6_brief runs it for 20 seconds from seeds that ldm6_seeds
# extracts from the captured LDM session.  It is labelled nosan: the target
# carries its own sanitizers, so the sanitizer pass of scripts/dev.sh need
# not run it a second time.
#
# A finding must fail its test: libFuzzer's own exit status for a crash, a
# leak or a timeout is 77 (and 70), which ctest would report as a skip
# (SKIP_RETURN_CODE 77, test/CMakeLists.txt), so every run is given
# PQ_FUZZ_RUN_FLAGS, which make each of them 1.
#
# When the targets cannot be built, one entry, fuzz_not_built, shows them
# as skipped in ctest (a failure under CI=true: scripts/dev.sh installs
# clang).
set(PQ_FUZZ_RUN_FLAGS -error_exitcode=1 -timeout_exitcode=1)
function(pq_fuzz_not_built why)
  message(STATUS "fuzz: ${why}; fuzz targets not built")
  pq_script_test(fuzz_not_built ${CMAKE_CURRENT_SOURCE_DIR}/lib/skipped.sh
    TIMEOUT 10 LABELS fuzz nosan ARGS "fuzz targets not built: ${why}")
endfunction()

find_program(PQ_FUZZ_CC NAMES clang clang-16 clang-15 clang-14)
if(NOT PQ_FUZZ_CC)
  pq_fuzz_not_built("no clang found")
  return()
endif()

set(_probe_dir ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe)
file(MAKE_DIRECTORY ${_probe_dir})
file(WRITE ${_probe_dir}/probe.c
  "#include <stddef.h>\n#include <stdint.h>\n"
  "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
  "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {\n"
  "  (void)d; (void)n; return 0;\n}\n")
execute_process(
  COMMAND ${PQ_FUZZ_CC} -fsanitize=fuzzer,address,undefined
          ${_probe_dir}/probe.c -o ${_probe_dir}/probe
  RESULT_VARIABLE _probe_rc OUTPUT_QUIET ERROR_QUIET)
if(NOT _probe_rc EQUAL 0)
  pq_fuzz_not_built("${PQ_FUZZ_CC} cannot link libFuzzer (libclang-rt-dev missing?)")
  return()
endif()

pkg_check_modules(FUZZ_TIRPC REQUIRED libtirpc)
set(PQ_FUZZ_FLAGS -g -O1 -std=c11 -D_GNU_SOURCE
    -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -fno-strict-aliasing
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
    -I${CMAKE_SOURCE_DIR} ${FUZZ_TIRPC_CFLAGS})

set(_src ${CMAKE_SOURCE_DIR})
set(FUZZ_LDM6_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_ldm6.c
  ${_src}/ldmd/proto/ldm6_xdr.c
  ${_src}/ldmd/proto/rpc_msg.c
  ${_src}/pq/prodclass.c
  ${_src}/pq/ere.c
  ${_src}/pq/timestamp.c)
set(FUZZ_LDM6_BIN ${CMAKE_CURRENT_BINARY_DIR}/fuzz_ldm6)
add_custom_command(OUTPUT ${FUZZ_LDM6_BIN}
  COMMAND ${PQ_FUZZ_CC} ${PQ_FUZZ_FLAGS} ${FUZZ_LDM6_SOURCES}
          -o ${FUZZ_LDM6_BIN} ${FUZZ_TIRPC_LDFLAGS}
  DEPENDS ${FUZZ_LDM6_SOURCES}
          ${_src}/ldmd/proto/ldm6_xdr.h ${_src}/ldmd/proto/ldm6_types.h
          ${_src}/ldmd/proto/rpc_msg.h ${_src}/pq/product.h
  COMMENT "Building fuzz_ldm6 with ${PQ_FUZZ_CC} (libFuzzer, ASan, UBSan)"
  VERBATIM)
add_custom_target(fuzz_ldm6 ALL DEPENDS ${FUZZ_LDM6_BIN})

add_executable(ldm6_seeds ${CMAKE_CURRENT_LIST_DIR}/ldm6_seeds.c)
target_link_libraries(ldm6_seeds PRIVATE ldmproto)

set(_corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz_ldm6_corpus)
pq_test(fuzz_ldm6_seeds TIMEOUT 60 LABELS fuzz nosan
  COMMAND ldm6_seeds ${CMAKE_CURRENT_SOURCE_DIR}/vectors/ldm6
          ${_corpus}/seeds)
set_tests_properties(fuzz_ldm6_seeds PROPERTIES
  FIXTURES_SETUP fuzz_ldm6_corpus)
# New inputs go to new/ (kept between runs); the seeds are rewritten.
file(MAKE_DIRECTORY ${_corpus}/new)
pq_test(fuzz_ldm6_brief TIMEOUT 120 LABELS fuzz nosan
  COMMAND ${FUZZ_LDM6_BIN} -max_total_time=20 -timeout=10 -rss_limit_mb=2048
          ${PQ_FUZZ_RUN_FLAGS} -print_final_stats=1 -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_ldm6-
          ${_corpus}/new ${_corpus}/seeds)
set_tests_properties(fuzz_ldm6_brief PROPERTIES
  FIXTURES_REQUIRED fuzz_ldm6_corpus)

# fuzz_ldmd_conf: the ldmd.conf parser and the access rules on what it read.
# fuzz_pq: a queue file whose slots, indexes and records were damaged, opened,
# checked, read, written and repaired.
# fuzz_registry: the registry reader (and writer) on any file.
# fuzz_snapshot: pqrestore's reading of a snapshot file.
# Each runs briefly in the test command.  pq_fuzz_target(NAME SOURCES...
# [FLAGS compile flags...] [LIBS link flags...] [SEEDS]): with SEEDS, the
# test NAME_seeds first runs the target with FUZZ_SEEDS_DIR set, and the
# target writes its seeds there (small valid inputs made by its own code);
# the brief run then starts from them, new inputs going to new/.
set(PQ_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR}) # fuzz_util.h, for callers elsewhere
file(GLOB _pq_sources ${_src}/pq/*.c)
function(pq_fuzz_target name)
  cmake_parse_arguments(F "SEEDS" "" "FLAGS;LIBS" ${ARGN})
  set(_bin ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_custom_command(OUTPUT ${_bin}
    COMMAND ${PQ_FUZZ_CC} ${PQ_FUZZ_FLAGS} ${F_FLAGS} ${F_UNPARSED_ARGUMENTS}
            -o ${_bin} -lcrypto ${ISAL_LDFLAGS} -lpthread ${F_LIBS}
    DEPENDS ${F_UNPARSED_ARGUMENTS} ${PQ_FUZZ_DIR}/fuzz_util.h
            ${CMAKE_CURRENT_SOURCE_DIR}/lib/tu_reg_keys.h
            # ISAL_*: cached by pq/CMakeLists.txt
    COMMENT "Building ${name} with ${PQ_FUZZ_CC} (libFuzzer, ASan, UBSan)"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${_bin})
  set(_corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
  file(MAKE_DIRECTORY ${_corpus})
  set(_dirs ${_corpus})
  if(F_SEEDS)
    file(MAKE_DIRECTORY ${_corpus}/new)
    set(_dirs ${_corpus}/new ${_corpus}/seeds)
    pq_test(${name}_seeds TIMEOUT 60 LABELS fuzz nosan
      COMMAND ${CMAKE_COMMAND} -E env FUZZ_SEEDS_DIR=${_corpus}/seeds ${_bin})
    set_tests_properties(${name}_seeds PROPERTIES
      FIXTURES_SETUP ${name}_corpus)
  endif()
  pq_test(${name}_brief TIMEOUT 120 LABELS fuzz nosan
    COMMAND ${_bin} -max_total_time=10 -timeout=10 -rss_limit_mb=2048
            ${PQ_FUZZ_RUN_FLAGS} -print_final_stats=1
            -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${name}-
            ${_dirs})
  if(F_SEEDS)
    set_tests_properties(${name}_brief PROPERTIES
      FIXTURES_REQUIRED ${name}_corpus)
  endif()
endfunction()
pq_fuzz_target(fuzz_ldmd_conf ${CMAKE_CURRENT_LIST_DIR}/fuzz_ldmd_conf.c
  ${_src}/ldmd/site/ldmd_conf.c ${_src}/ldmd/site/ldmd_conf_lex.c
  ${_src}/ldmd/site/ldmd_conf_entries.c ${_src}/ldmd/site/ldmd_conf_ident.c
  ${_src}/ldmd/site/ldmd_access.c ${_src}/pq/feedtype.c
  ${_src}/pq/prodclass.c ${_src}/pq/ere.c ${_src}/pq/timestamp.c SEEDS)
pq_fuzz_target(fuzz_pq ${CMAKE_CURRENT_LIST_DIR}/fuzz_pq.c ${_pq_sources})
pkg_check_modules(FUZZ_XML REQUIRED libxml-2.0)
pq_fuzz_target(fuzz_registry ${CMAKE_CURRENT_LIST_DIR}/fuzz_registry.c
  ${_src}/ldmd/site/registry.c ${_src}/ldmd/site/registry_keys.c
  ${_src}/ldmd/site/registry_write.c
  FLAGS ${FUZZ_XML_CFLAGS} LIBS ${FUZZ_XML_LDFLAGS}
  SEEDS)
pq_fuzz_target(fuzz_snapshot ${CMAKE_CURRENT_LIST_DIR}/fuzz_snapshot.c
  ${_src}/pqutils/queue/snapshot.c ${_src}/pqutils/common/cli_io.c
  ${_src}/pq/crc32c.c SEEDS)
# fuzz_tls_detect: the start of a server's connection, TLS or plain LDM-6 by
# its first byte (ldm6_io over a socketpair, OpenSSL as built on the host).
pq_fuzz_target(fuzz_tls_detect ${CMAKE_CURRENT_LIST_DIR}/fuzz_tls_detect.c
  ${_src}/ldmd/proto/rpc_io.c ${_src}/ldmd/proto/rpc_recv.c
  ${_src}/ldmd/proto/rpc_send.c ${_src}/ldmd/proto/connect.c
  ${_src}/ldmd/proto/transport.c ${_src}/ldmd/proto/tls.c
  ${_src}/ldmd/proto/rpc_msg.c ${_src}/ldmd/proto/ldm6_xdr.c
  ${_src}/pq/prodclass.c ${_src}/pq/ere.c ${_src}/pq/timestamp.c
  LIBS -lssl ${FUZZ_TIRPC_LDFLAGS} SEEDS)
# fuzz_nats_headers: nats2pq's reading of a product message's headers and
# the checks of its data, whole or reassembled from chunks
# (pqutils/nats/reassembly.c): what anyone who may publish on the subjects
# nats2pq consumes writes.
pq_fuzz_target(fuzz_nats_headers ${CMAKE_CURRENT_LIST_DIR}/fuzz_nats_headers.c
  ${_src}/pqutils/nats/reassembly.c ${_pq_sources} SEEDS)
# The NOAAPORT ingester's fuzz targets are built from libnoaaport's own
# sources (the noaaport target's, with the naming tables it embeds,
# generated in its build directory: hence the dependencies) and the queue
# library's (for its inserts).
get_target_property(_np_rel noaaport SOURCES)
set(_np_sources "")
foreach(_f IN LISTS _np_rel)
  if(IS_ABSOLUTE ${_f})
    list(APPEND _np_sources ${_f})
  else()
    list(APPEND _np_sources ${_src}/pqutils/ingest/${_f})
  endif()
endforeach()
# fuzz_np_names: the NOAAPORT namers (NWSTG identifiers, GRIB1 names, GINI
# names) on any first block: the code LDM's ingester crashed in on one
# corrupt GRIB message (LDM issue #71).
pq_fuzz_target(fuzz_np_names ${CMAKE_CURRENT_LIST_DIR}/fuzz_np_names.c
  ${_np_sources} ${_pq_sources} LIBS -lpng -lz -lm SEEDS)
add_dependencies(fuzz_np_names noaaport)
# fuzz_np_grib2: the GRIB2 namer on any message.
pq_fuzz_target(fuzz_np_grib2 ${CMAKE_CURRENT_LIST_DIR}/fuzz_np_grib2.c
  ${_np_sources} ${_pq_sources} LIBS -lpng -lz -lm SEEDS)
add_dependencies(fuzz_np_grib2 noaaport)
# fuzz_np_grib_file: gribinsert's search for GRIB messages in any file, and
# the identifier of each message found.
pq_fuzz_target(fuzz_np_grib_file ${CMAKE_CURRENT_LIST_DIR}/fuzz_np_grib_file.c
  ${_np_sources} ${_pq_sources} LIBS -lpng -lz -lm SEEDS)
add_dependencies(fuzz_np_grib_file noaaport)
# fuzz_np_frames: the frame reader and the product builder, with the
# namers behind them, on any frame stream (test/ingest/vectors/ for seeds),
# whole and fed in pieces.
pq_fuzz_target(fuzz_np_frames ${CMAKE_CURRENT_LIST_DIR}/fuzz_np_frames.c
  ${_np_sources} ${_pq_sources}
  FLAGS -DNP_VECTORS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/ingest/vectors"
  LIBS -lpng -lz -lm SEEDS)
add_dependencies(fuzz_np_frames noaaport)
