/*
 * test_bigfile.c - 64-bit sizes: a queue with a 5 GiB data area, with
 * products placed past the 4 GiB mark.  Its 5 GiB are reserved at creation
 * (fallocate allocates without writing) and four 1 GiB products are
 * reserved and committed without writing their data, so the test touches
 * only a few pages.  Without 5 GiB free in the test directory it is
 * skipped (exit 77).
 */
#include "test/lib/testutil.h"

#include <sys/stat.h>

static char path[256];
static uint8_t buf[1 << 16];

static int check_small(const pq_prod_info *info, const void *data,
                       const pq_place *place, void *arg) {
  uint8_t sig[PQ_SIGLEN];
  pq_md5(data, info->size, sig);
  *(uint64_t *)arg =
      memcmp(sig, info->signature, PQ_SIGLEN) == 0 ? place->pp_offset : 0;
  return 0;
}

static void test_queue_past_4gib(void **state) {
  (void)state;
  tu_path(path, sizeof path, "test_bigfile");
  const uint64_t gib = UINT64_C(1) << 30;
  pq_create_opts o = {
      .pc_data_size = 5 * gib, .pc_slots = 64, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error err;
  int rc = pq_create(path, &o, &pq, &err);
  if (rc == PQ_NOSPACE) {
    tu_skip("no room for a 5 GiB queue: %s", err.pe_msg);
  }
  assert_int_equal(rc, PQ_OK);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true((uint64_t)st.st_size > 5 * gib);
  assert_true((uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size);
  for (unsigned i = 0; i < 4; i++) {
    pq_prod_info info;
    memset(&info, 0, sizeof info);
    info.arrival = pq_ts_now();
    info.feedtype = PQ_FT_NIMAGE;
    info.size = gib;
    info.signature[0] = (uint8_t)(i + 1);
    snprintf(info.ident, sizeof info.ident, "huge/%u", i);
    pq_resv r;
    assert_int_equal(pq_reserve(pq, &info, &r), PQ_OK);
    assert_int_equal(pq_commit(pq, &r), PQ_OK);
  }
  pq_prod_info small;
  tu_product(&small, buf, sizeof buf, 99);
  assert_int_equal(pq_insert(pq, &small, buf), PQ_OK);
  uint64_t off = 0;
  assert_int_equal(pq_find(pq, small.signature, check_small, &off), PQ_OK);
  assert_true(off > 4 * gib);
  pq_stats ps;
  assert_int_equal(pq_stats_get(pq, &ps), PQ_OK);
  assert_int_equal(ps.ps_nprods, 5);
  assert_true(ps.ps_nbytes > 4 * gib);
  assert_true(ps.ps_highwater > 4 * gib);
  tu_check(pq);
  /* Wrap: another 1 GiB product evicts the oldest, at the area's start. */
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  info.size = gib;
  info.signature[0] = 0x55;
  pq_resv r;
  assert_int_equal(pq_reserve(pq, &info, &r), PQ_OK);
  assert_int_equal(pq_commit(pq, &r), PQ_OK);
  assert_int_equal(pq_stats_get(pq, &ps), PQ_OK);
  assert_true(ps.ps_is_full);
  tu_check(pq);
  pq_close(pq);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_queue_past_4gib),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
