# Unit tests (cmocka), one per file of test/unit/.
# nats2pq's reading of the bridge's wire format (pqutils/nats/reassembly.c):
# headers, body and chunk checks, without a server or libnats.
pq_unit_test(test_nats_reassembly)
target_sources(test_nats_reassembly PRIVATE
  ${PROJECT_SOURCE_DIR}/pqutils/nats/reassembly.c)
