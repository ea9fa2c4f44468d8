# The harness's own promises, checked over the test sources
# (harness_check.sh): every skip goes through the helpers that honour
# CI=true, and every shell test that draws at random prints its seed and
# takes one back (PQ_TEST_SEED).
foreach(check skips seeds)
  pq_test(harness_${check} TIMEOUT 60 LABELS harness
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/harness_check.sh ${check}
      ${CMAKE_CURRENT_SOURCE_DIR})
endforeach()
