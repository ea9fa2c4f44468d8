# The service (etc/ldmd.service, service/ldmd-queue, etc/logrotate.d/ldm):
# systemd does not run here, so the tests parse the unit and run its
# command lines as systemd would, in a scratch LDMHOME with a scratch
# registry and a queue in a scratch directory of /dev/shm (test/service/
# lib.sh), with notify_listen as systemd's notification socket.
# service_unit: the unit's settings and systemd-analyze verify;
# service_queue: products survive a stop, a wiped /dev/shm and a start,
# and ldmd-queue's other cases; service_restart: 50 stops and starts while
# a writer inserts, nothing lost or damaged; service_logrotate: the
# logrotate file rotates every log and signals ldmd; service_notify: ldmd's
# READY=1, STATUS= and STOPPING=1, and ldmd without or with a bad
# NOTIFY_SOCKET.
if(TARGET ldmd AND TARGET pqcreate)
  add_executable(notify_listen ${CMAKE_CURRENT_LIST_DIR}/notify_listen.c)
  pq_script_suite(service LABEL service
    ARGS ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} $<TARGET_FILE:notify_listen>
    TESTS
      unit 60
      queue 120
      restart 600
      logrotate 60
      notify 90)
endif()
