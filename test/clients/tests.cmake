# Wire tests of the LDM protocol clients (notifyme, ldmsend, ldmping): each
# shell script drives the programs against fakeldm, a scripted LDM server
# built on the same transport and codec, and checks what arrived on the
# server side and what the programs printed.  ldmd.sh does the same against
# the real server once it is built.  Only when the programs are built.
if(TARGET notifyme AND TARGET ldmsend AND TARGET ldmping)
  add_executable(fakeldm ${CMAKE_CURRENT_LIST_DIR}/fakeldm.c)
  target_link_libraries(fakeldm PRIVATE ldmproto)

  # clients_NAME runs clients/NAME.sh, with its timeout in seconds.
  set(_args $<TARGET_FILE_DIR:notifyme> $<TARGET_FILE:fakeldm>)
  pq_script_suite(clients LABEL clients ARGS ${_args}
    TESTS
      notifyme 180
      notifyme_reconnect 120
      ldmsend 180
      ldmping 120
      badinput 120
      sigterm 180)
  if(TARGET ldmd AND TARGET pqcreate AND TARGET pqinsert)
    pq_script_test(clients_ldmd ${CMAKE_CURRENT_LIST_DIR}/ldmd.sh
      TIMEOUT 300 LABELS clients
      ARGS ${_args} $<TARGET_FILE_DIR:ldmd> $<TARGET_FILE_DIR:pqcreate>)
    # pqsend and feedme against ldmd (pqutils/net/pqsend.c, feedme.c).
    foreach(_t pqsend feedme)
      pq_script_test(clients_${_t} ${CMAKE_CURRENT_LIST_DIR}/${_t}.sh
        TIMEOUT 300 LABELS clients
        ARGS ${_args} $<TARGET_FILE_DIR:ldmd> $<TARGET_FILE_DIR:pqcreate>)
    endforeach()
  endif()
endif()
