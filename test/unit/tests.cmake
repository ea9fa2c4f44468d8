# Unit tests (cmocka), one per file of test/unit/.
# The LDM-6 protocol codec (ldmd/proto/ldm6_xdr.c, ldmd/proto/rpc_msg.c).
# The capture of a real LDM session is read at run time from
# test/vectors/ldm6 (or $LDM6_VECTORS); without it the capture tests fail.
pq_unit_test(test_ldm6_xdr)
target_link_libraries(test_ldm6_xdr PRIVATE ldmproto)
target_compile_definitions(test_ldm6_xdr PRIVATE
  LDM6_VECTORS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/vectors/ldm6")
pq_unit_test(test_rpc_msg)
target_link_libraries(test_rpc_msg PRIVATE ldmproto)
# nats2pq's reading of the bridge's wire format (pqutils/nats/reassembly.c):
# headers, body and chunk checks, without a server or libnats.
pq_unit_test(test_nats_reassembly)
target_sources(test_nats_reassembly PRIVATE
  ${PROJECT_SOURCE_DIR}/pqutils/nats/reassembly.c)
