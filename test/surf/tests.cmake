# pqsurf's tests: cmocka units of the splitting of bulletins the tests make
# (test_surf_split), and a shell test that runs pqsurf on a real queue with
# its pqact child (pqsurf.sh: the observations in the private queue,
# duplicates dropped, files filed, the expiry, the child's death).
if(TARGET pqsurf)
  add_executable(test_surf_split ${CMAKE_CURRENT_LIST_DIR}/test_surf_split.c)
  target_link_libraries(test_surf_split PRIVATE surf_core ${CMOCKA_LIB})
  pq_test(test_surf_split TIMEOUT 60 LABELS surf COMMAND test_surf_split)
endif()
