# The programs' common library's tests (pqutils/common/, pqcli), cmocka:
# the state file where pqact and pq2nats keep their place (test_cli_state:
# reading it as LDM does, writing it, the low-water mark, the page of
# decoders behind) and the oldest-product warning's bookkeeping
# (test_cli_oldest, on a real queue).
if(TARGET pqcli)
  foreach(name test_cli_state test_cli_oldest)
    add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
    target_link_libraries(${name} PRIVATE pqcli ${CMOCKA_LIB})
    pq_test(${name} TIMEOUT 60 LABELS cli ENVIRONMENT ${PQ_TESTDATA_ENV}
      COMMAND ${name})
  endforeach()
endif()
