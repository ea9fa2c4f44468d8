# Wire tests of the LDM protocol clients (notifyme, ldmsend, ldmping): each
# shell script drives the programs against fakeldm, a scripted LDM server
# built on the same transport and codec, and checks what arrived on the
# server side and what the programs printed.  ldmd.sh does the same against
# the real server once it is built.  Only when the programs are built.
if(TARGET notifyme AND TARGET ldmsend AND TARGET ldmping)
  add_executable(fakeldm ${CMAKE_CURRENT_LIST_DIR}/fakeldm.c)
  target_link_libraries(fakeldm PRIVATE ldmproto)

  # ldm_client_test(NAME TIMEOUT seconds [args...]): runs clients/NAME.sh.
  function(ldm_client_test name)
    cmake_parse_arguments(T "" "TIMEOUT" "" ${ARGN})
    pq_script_test(clients_${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.sh
      TIMEOUT ${T_TIMEOUT} LABELS clients
      ARGS $<TARGET_FILE_DIR:notifyme> $<TARGET_FILE:fakeldm>
           ${T_UNPARSED_ARGUMENTS})
  endfunction()

  ldm_client_test(notifyme TIMEOUT 180)
  ldm_client_test(notifyme_reconnect TIMEOUT 120)
  ldm_client_test(ldmsend TIMEOUT 180)
  ldm_client_test(ldmping TIMEOUT 120)
  ldm_client_test(badinput TIMEOUT 120)
  ldm_client_test(sigterm TIMEOUT 180)
  if(TARGET ldmd AND TARGET pqcreate AND TARGET pqinsert)
    ldm_client_test(ldmd TIMEOUT 300 $<TARGET_FILE_DIR:ldmd>
                    $<TARGET_FILE_DIR:pqcreate>)
  endif()
endif()
