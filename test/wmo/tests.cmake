# pqing (pqutils/wmo/): unit tests of libwmo's parsers on messages the
# tests build (wmo_build.h); wmogen, the tool that writes framed streams,
# their expected products, and serves them over TCP or a pseudo-terminal;
# the program run on them (pqing.sh; serial.sh, a terminal, which skips
# where pseudo-terminals have no path); and the fuzz target of the framing
# and the identifiers.
pq_unit_test(test_wmo)
target_link_libraries(test_wmo PRIVATE wmo)

# pqing's terminal settings, on a pseudo-terminal reached by descriptor.
pq_unit_test(test_pqing_tty)
target_sources(test_pqing_tty PRIVATE
  ${PROJECT_SOURCE_DIR}/pqutils/wmo/pqing_tty.c)

add_executable(wmogen ${CMAKE_CURRENT_LIST_DIR}/wmogen.c)
target_link_libraries(wmogen PRIVATE OpenSSL::Crypto)

pq_script_suite(wmo LABEL wmo
  ARGS $<TARGET_FILE_DIR:pqing> $<TARGET_FILE_DIR:wmogen>
  TESTS
    pqing 180
    serial 120)

# fuzz_wmo: the framing scanners and the identifiers on any stream
# (test/fuzz/fuzz_wmo.c), built as test/fuzz/fuzz.cmake builds its targets,
# from libwmo's sources and libnoaaport's (the heading parser and GRIB
# names), when it could build them (pq_fuzz_target defined).
if(COMMAND pq_fuzz_target)
  set(_wmo ${PROJECT_SOURCE_DIR}/pqutils/wmo)
  pq_fuzz_target(fuzz_wmo ${PQ_FUZZ_DIR}/fuzz_wmo.c
    ${_wmo}/wmo_crc.c ${_wmo}/wmo_frame.c ${_wmo}/wmo_message.c
    ${_wmo}/wmo_sig.c ${_wmo}/wmo_feed.c
    ${_np_sources} ${_pq_sources} LIBS -lpng -lz -lm SEEDS)
  add_dependencies(fuzz_wmo noaaport)
endif()
