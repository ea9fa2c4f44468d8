# Benchmarks: programs, not tests (nothing here is registered with ctest).
# Run build/release/test/pq_bench (or -q for a quick run); see pq_bench.c.
add_executable(pq_bench ${CMAKE_CURRENT_LIST_DIR}/pq_bench.c)
target_link_libraries(pq_bench PRIVATE ldmpq)
