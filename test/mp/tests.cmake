# Multi-process tests: real processes (fork, or fork and exec), each child
# opening the queue itself and reporting through its exit status.  Queues go
# to PQ_TEST_DIR (/dev/shm here: the tests move gigabytes through page-cache
# files), named with the test's pid, and are removed at the end.  Each test
# runs alone (RUN_SERIAL): they time themselves against deadlines on a
# 2-core machine.  Random tests print their seed and take it back from
# PQ_TEST_SEED (PQ_CRASH_SEED for the crash harness).
add_library(pq_mp_util STATIC ${CMAKE_CURRENT_LIST_DIR}/mp_util.c)
target_link_libraries(pq_mp_util PUBLIC ldmpq)

# pq_mp_test(NAME SOURCE TIMEOUT seconds ARGS args...)
function(pq_mp_test name source)
  cmake_parse_arguments(T "" "TIMEOUT" "ARGS" ${ARGN})
  if(NOT TARGET ${source})
    add_executable(${source} ${CMAKE_CURRENT_LIST_DIR}/${source}.c)
    target_link_libraries(${source} PRIVATE pq_mp_util)
  endif()
  pq_test(${name} TIMEOUT ${T_TIMEOUT} LABELS mp
    ENVIRONMENT "PQ_TEST_DIR=/dev/shm" COMMAND ${source} ${T_ARGS})
  set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
endfunction()

# (a) 4 writers, 4 readers, 40,000 products of 100 B..64 KiB, queue holds all.
pq_mp_test(mp_exact mp_readwrite TIMEOUT 400
  ARGS -x -w 4 -r 4 -n 40000 -d 300)
# (b) the same through a 4 MiB queue: eviction by bytes, readers hold some
# products for milliseconds while writers evict around them.
pq_mp_test(mp_evict mp_readwrite TIMEOUT 400
  ARGS -w 4 -r 4 -n 40000 -s 4194304 -S 1024 -H 16 -d 300)
# (b') eviction by slots: 48 slots for a 4 MiB queue.
pq_mp_test(mp_evict_slots mp_readwrite TIMEOUT 400
  ARGS -w 4 -r 4 -n 20000 -s 4194304 -S 48 -H 16 -d 300)
# (c) the crash harness: at least 500 SIGKILLs (fewer under the sanitizers,
# where each exec'd child starts slowly), pq_check() and every committed
# product verified after each kill.
if(PQ_SANITIZE)
  set(PQ_CRASH_KILLS 300)
else()
  set(PQ_CRASH_KILLS 600)
endif()
pq_mp_test(mp_crash mp_crash TIMEOUT 300 ARGS -n ${PQ_CRASH_KILLS})
# Two handles in one process: OFD locks keep a product held through one
# handle from being evicted or deleted through the other.
pq_mp_test(mp_twohandles mp_twohandles TIMEOUT 60)

# Reproductions of library bugs these tests found, kept as regression
# tests: each program exits 1 while its bug is present, 2 if it cannot set
# the reproduction up (see each file).  They wait for events (a lock
# request in /proc/locks, a sleeper bit, a child's exit), never for a
# time: test/mp/repro/repro_util.h.
foreach(repro repro_upgrade_deadlock repro_nested_read repro_waiters_leak)
  add_executable(${repro} ${CMAKE_CURRENT_LIST_DIR}/repro/${repro}.c)
  target_link_libraries(${repro} PRIVATE ldmpq)
  pq_test(${repro} TIMEOUT 60 LABELS mp COMMAND ${repro})
endforeach()
