# ldmadmin's tests (pqutils/ops/ldmadmin.1): shell scripts that run
# the script from the source tree against the built programs (ldmd,
# pqcreate, pqcheck, pqact, regutil, scour), with a scratch registry, a real
# ldmd on 127.0.0.1 on a port the kernel picks, real queues and files.
# server: start, stop, restart, isrunning, clean, pqactHUP, log, tail;
# queue: mkqueue, delqueue, checkinsertion (with test/cli's pqclihelper),
# queuecheck, config, scour, pqactcheck; space:
# mkqueue on a small tmpfs (root only, skipped otherwise); vet:
# vetqueuesize in each mode and its bounds; check: its exit codes;
# failures: the refusals the others do not reach; metrics: printmetrics,
# addmetrics, newmetrics and plotmetrics with a running server, its
# upstream and a notifyme (plots skipped without gnuplot); newlog: the
# rotation of the server's and pqact's logs with products flowing, and
# /log/rotate at start; watch: the product lines, -f and -p, SIGINT and
# SIGTERM; reopen: every long-running program reopens its log on SIGUSR1
# (pqact on SIGHUP too), a requester child of ldmd on newlog's.
# mkcert: the site key and certificate, and ldmd loading them.
# parse: ldmadmin reads sizes and booleans as the programs do (regutil -T).
# surfqueue: mksurfqueue and delsurfqueue, pqsurf's private queue.
if(TARGET ldmd AND TARGET pqact AND TARGET scour AND TARGET pqclihelper
   AND TARGET notifyme)
  pq_script_suite(ldmadmin LABEL ldmadmin
    ARGS ${CMAKE_SOURCE_DIR}/pqutils/ops/ldmadmin.sh
         $<TARGET_FILE_DIR:ldmd> $<TARGET_FILE_DIR:pqcreate>
         $<TARGET_FILE_DIR:pqact> $<TARGET_FILE:pqclihelper>
    TESTS server 120 queue 60 space 60 vet 120 check 60 failures 60 metrics 120
          newlog 180 watch 60 reopen 180 mkcert 60 parse 120 surfqueue 60)
endif()
