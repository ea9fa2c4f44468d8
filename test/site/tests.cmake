# The site library's unit tests (ldmd/site/, cmocka): the logger, the
# registry and regutil's command line, and ldmd.conf with its access rules.
pq_unit_test(test_log)
target_link_libraries(test_log PRIVATE ldmsite)
pq_unit_test(test_registry)
target_link_libraries(test_registry PRIVATE ldmsite)
target_compile_definitions(test_registry PRIVATE
  LDM_SOURCE_DIR="${CMAKE_SOURCE_DIR}" REGUTIL_PATH="$<TARGET_FILE:regutil>")
add_dependencies(test_registry regutil)
# ldmd.conf: one program of two files, the parser's tests (test_ldmd_conf.c,
# with main) and the access rules' (test_ldmd_conf_access.c).
pq_unit_test(test_ldmd_conf)
target_sources(test_ldmd_conf PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/test_ldmd_conf_access.c)
target_link_libraries(test_ldmd_conf PRIVATE ldmsite)
