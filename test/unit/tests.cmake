# Unit tests (cmocka), one per file of test/unit/.
pq_unit_test(test_feedtype)
pq_unit_test(test_prodclass)
pq_unit_test(test_prodtext)
pq_unit_test(test_md5)
pq_unit_test(test_queue)
pq_unit_test(test_ring)
pq_unit_test(test_badfile)
pq_unit_test(test_bigfile)
