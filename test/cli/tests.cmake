# Shell-level tests of the queue utilities (pqutils/): each script drives
# the programs as a user would, in its own scratch directory with its own
# registry file (LDM_REGISTRY), and stops at the first failure with what
# was run and what it printed.  pqclihelper does what the programs cannot
# (hold a reservation to be killed, insert old products, dump insertion
# times).  Only when the programs are built (they need the site library).
if(TARGET pqcreate)
  add_executable(pqclihelper ${CMAKE_CURRENT_LIST_DIR}/pqclihelper.c)
  target_link_libraries(pqclihelper PRIVATE ldmpq)

  # pqmon's live view: the frame rendered from fixed snapshots
  # (pqutils/queue/pqmon_view.c).  Its test with real servers is
  # test/metrics/pqmon_live.sh.
  add_executable(test_pqmon_view ${CMAKE_CURRENT_LIST_DIR}/test_pqmon_view.c
                                 ${PROJECT_SOURCE_DIR}/pqutils/queue/pqmon_view.c)
  target_link_libraries(test_pqmon_view PRIVATE ldmmetrics ${CMOCKA_LIB})
  pq_test(cli_pqmon_view TIMEOUT 30 LABELS cli COMMAND test_pqmon_view)

  # cli_NAME runs cli/NAME.sh, with its timeout in seconds.
  pq_script_suite(cli LABEL cli
    ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqclihelper>
    TESTS
      create 60
      insert_cat 120
      evict 60
      expire 90
      mon 60
      check 120
      damage 120
      roots 60
      copy 60
      snapshot 120
      badinput 60
      signals 90
      # Mounts small tmpfs file systems: root only, skipped (77) otherwise.
      space 120
      insert_limit 120
      sigterm 180
      # Writer preference on the control lock: order and a killed waiter.
      writerpref 120)
  # wasReceived's answers (pqutils/queue/wasReceived.c).
  pq_script_test(cli_wasreceived ${CMAKE_CURRENT_LIST_DIR}/wasreceived.sh
    TIMEOUT 60 LABELS cli
    ARGS $<TARGET_FILE_DIR:pqcreate> $<TARGET_FILE:pqclihelper>)
endif()
