# The small tools' tests (pqutils/ops/: keep_running, ulogger, newlog,
# refresh_logging, uldbutil, pqutil): shell scripts with real processes,
# real files and, where the tool talks to it, a real ldmd on 127.0.0.1
# (started with pqutils/ops/ldmadmin.sh, on a port the kernel picks).
# keep_running: the back-off, by counting starts, signals passed on, the
# stop; ulogger: its lines against the programs' format, priorities,
# destinations; newlog: LDM's rotation; refresh: refresh_logging makes ldmd
# and its EXEC pqact reopen their logs; uldbutil: the feeds of a running
# ldmd; pqutil: -w and -C.
if(TARGET keep_running AND TARGET ulogger AND TARGET pqcat AND TARGET ldmd
   AND TARGET pqact AND TARGET notifyme AND TARGET pqclihelper AND TARGET pqcheck)
  pq_script_suite(ops LABEL ops
    ARGS $<TARGET_FILE_DIR:keep_running> ${CMAKE_SOURCE_DIR}/pqutils/ops
         $<TARGET_FILE:pqclihelper>
    TESTS keep_running 180 ulogger 60 newlog 60 pqutil 60 server 180)
endif()
