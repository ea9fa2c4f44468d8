# The queue library's unit tests (pq/, cmocka): product metadata (feedtypes,
# product classes, text forms, MD5), the public queue API, eviction and
# slots, the file's space, damaged and untrusted files, damaged header
# roots (write head, free-slot stack, last insertion time), the check mark
# of verifying readers, and 64-bit sizes.
pq_unit_test(test_feedtype)
pq_unit_test(test_prodclass)
pq_unit_test(test_prodtext)
pq_unit_test(test_md5 ALONE test_crc32c_clears_upper
  ALONE_NAME test_md5_upper)
pq_unit_test(test_queue ALONE test_too_many_writers
  ALONE_NAME test_queue_writers)
pq_unit_test(test_ring)
pq_unit_test(test_space)
pq_unit_test(test_badfile ALONE test_readonly_file_cannot_repair
  ALONE_NAME test_badfile_readonly)
# The same with PQ_TEST_DIR in a folder only root may enter (a build in a
# clone under /root): as root it reads as nobody, which must not skip
# (CI=true makes a skip a failure).
pq_test(test_badfile_readonly_private TIMEOUT 60 ENVIRONMENT CI=true
  COMMAND sh -c "mkdir -p \"$1\" && chmod 0700 \"$1\" && PQ_TEST_DIR=\"$1\" exec \"$2\" --only test_readonly_file_cannot_repair"
    sh ${CMAKE_BINARY_DIR}/testdata/private $<TARGET_FILE:test_badfile>)
pq_unit_test(test_roots)
pq_unit_test(test_verify_once ALONE test_readonly_mapping_marks_nothing
  ALONE_NAME test_verify_once_readonly)
pq_unit_test(test_bigfile)
