# The protocol library's tests (ldmd/proto/, cmocka): the LDM-6 codec
# (ldm6_xdr.c, rpc_msg.c) without a network, then its connection I/O
# (rpc_io.c, rpc_send.c, rpc_recv.c, transport.c, connect.c, tls.c) over
# real loopback TCP connections, label net.

# The LDM-6 protocol codec (ldmd/proto/ldm6_xdr.c, ldmd/proto/rpc_msg.c).
# The capture of a real LDM session is read at run time from
# test/vectors/ldm6 (or $LDM6_VECTORS); without it the capture tests fail.
pq_unit_test(test_ldm6_xdr)
target_link_libraries(test_ldm6_xdr PRIVATE ldmproto)
target_compile_definitions(test_ldm6_xdr PRIVATE
  LDM6_VECTORS_DIR="${PROJECT_SOURCE_DIR}/test/vectors/ldm6")
pq_unit_test(test_rpc_msg)
target_link_libraries(test_rpc_msg PRIVATE ldmproto)

# ONC RPC over loopback TCP (ldmd/proto/rpc_io.h).
add_executable(test_rpc_io ${CMAKE_CURRENT_LIST_DIR}/test_rpc_io.c)
target_link_libraries(test_rpc_io PRIVATE ldmproto ${CMOCKA_LIB})
# test_ipv6 alone: it skips on a host without ::1 (fails under CI=true).
pq_test(test_rpc_io TIMEOUT 60 LABELS net
  COMMAND test_rpc_io --skip test_ipv6)
pq_test(test_rpc_io_ipv6 TIMEOUT 60 LABELS net
  COMMAND test_rpc_io --only test_ipv6)

# The same over TLS 1.3, certificates made by the test (docs/security.md,
# "TLS and authenticated peers").
add_executable(test_tls_io ${CMAKE_CURRENT_LIST_DIR}/test_tls_io.c)
target_link_libraries(test_tls_io PRIVATE ldmproto ${CMOCKA_LIB})
pq_test(test_tls_io TIMEOUT 60 LABELS net ENVIRONMENT ${PQ_TESTDATA_ENV}
  COMMAND test_tls_io)

# The connect timeout bounds the whole connect (docs/protocol.md, "Timers
# and limits").
add_executable(test_connect ${CMAKE_CURRENT_LIST_DIR}/test_connect.c)
target_link_libraries(test_connect PRIVATE ldmproto ${CMOCKA_LIB})
# test_mixed_families alone: it skips on a host without ::1 (fails under
# CI=true).
pq_test(test_connect TIMEOUT 60 LABELS net
  COMMAND test_connect --skip test_mixed_families)
pq_test(test_connect_mixed TIMEOUT 60 LABELS net
  COMMAND test_connect --only test_mixed_families)
# Sending without waiting, while a queue lock is held (docs/protocol.md,
# "The feed: what the upstream sends").
add_executable(test_send_nowait ${CMAKE_CURRENT_LIST_DIR}/test_send_nowait.c)
target_link_libraries(test_send_nowait PRIVATE ldmproto ${CMOCKA_LIB})
pq_test(test_send_nowait TIMEOUT 60 LABELS net COMMAND test_send_nowait)
