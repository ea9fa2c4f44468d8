# pqing (pqutils/wmo/): unit tests of libwmo's parsers on messages the
# tests build (wmo_build.h); wmogen, the tool that writes framed streams,
# their expected products, and serves them over TCP; the program run on
# them (pqing.sh); and the fuzz target of the framing and the identifiers.
pq_unit_test(test_wmo)
target_link_libraries(test_wmo PRIVATE wmo)

add_executable(wmogen ${CMAKE_CURRENT_LIST_DIR}/wmogen.c)
target_link_libraries(wmogen PRIVATE OpenSSL::Crypto)

pq_script_suite(wmo LABEL wmo
  ARGS $<TARGET_FILE_DIR:pqing> $<TARGET_FILE_DIR:wmogen>
  TESTS
    pqing 180)
