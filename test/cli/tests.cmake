# Shell-level tests of the queue utilities (pqutils/): each script drives
# the programs as a user would, in its own scratch directory with its own
# registry file (LDM_REGISTRY), and stops at the first failure with what
# was run and what it printed.  pqclihelper does what the programs cannot
# (hold a reservation to be killed, insert old products, dump insertion
# times).  Only when the programs are built (they need the site library).
if(TARGET pqcreate)
  add_executable(pqclihelper ${CMAKE_CURRENT_LIST_DIR}/pqclihelper.c)
  target_link_libraries(pqclihelper PRIVATE ldmpq)

  # pq_cli_test(NAME TIMEOUT seconds): runs cli/NAME.sh.
  function(pq_cli_test name)
    cmake_parse_arguments(T "" "TIMEOUT" "" ${ARGN})
    pq_script_test(cli_${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.sh
      TIMEOUT ${T_TIMEOUT} LABELS cli
      ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqclihelper>)
  endfunction()

  pq_cli_test(create TIMEOUT 60)
  pq_cli_test(insert_cat TIMEOUT 120)
  pq_cli_test(evict TIMEOUT 60)
  pq_cli_test(expire TIMEOUT 90)
  pq_cli_test(mon TIMEOUT 60)
  pq_cli_test(check TIMEOUT 120)
  pq_cli_test(damage TIMEOUT 120)
  pq_cli_test(copy TIMEOUT 60)
  pq_cli_test(snapshot TIMEOUT 120)
  pq_cli_test(badinput TIMEOUT 60)
  pq_cli_test(signals TIMEOUT 90)
  # Mounts small tmpfs file systems: root only, skipped (77) otherwise.
  pq_cli_test(space TIMEOUT 120)
  pq_cli_test(insert_limit TIMEOUT 120)
  pq_cli_test(sigterm TIMEOUT 180)
endif()
