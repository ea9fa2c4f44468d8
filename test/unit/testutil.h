/*
 * testutil.h - helpers shared by the queue unit tests: a unique queue path
 * per test under $PQ_TEST_DIR (or /dev/shm), and products with random
 * contents whose signature is their MD5.  Skips that show are in
 * test/lib/tu_skip.h, included here.
 */
#ifndef PQ_TESTUTIL_H
#define PQ_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/lib/tu_skip.h"

static inline void tu_path(char *buf, size_t len, const char *name) {
  const char *dir = getenv("PQ_TEST_DIR");
  if (dir == NULL || *dir == '\0')
    dir = "/dev/shm";
  snprintf(buf, len, "%s/%s.%ld.pq", dir, name, (long)getpid());
}

/* Fill buf with bytes from a cheap generator seeded by seed. */
static inline void tu_fill(void *buf, size_t n, uint64_t seed) {
  uint8_t *p = buf;
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = (uint8_t)x;
  }
}

/* A product of size bytes, contents from seed, ident "test/<seed>". */
static inline void tu_product(pq_prod_info *info, void *buf, size_t size,
                              uint64_t seed) {
  memset(info, 0, sizeof *info);
  info->arrival = pq_ts_now();
  info->feedtype = PQ_FT_EXP;
  info->seqno = (uint32_t)seed;
  info->size = size;
  snprintf(info->ident, sizeof info->ident, "test/%llu",
           (unsigned long long)seed);
  snprintf(info->origin, sizeof info->origin, "unit.test");
  tu_fill(buf, size, seed);
  assert_int_equal(pq_md5(buf, size, info->signature), 0);
}

static inline pq_t *tu_create(const char *path, uint64_t size, uint64_t slots) {
  pq_create_opts o = {
      .pc_data_size = size, .pc_slots = slots, .pc_flags = PQ_CLOBBER};
  pq_error err;
  pq_t *pq = NULL;
  int rc = pq_create(path, &o, &pq, &err);
  if (rc != PQ_OK)
    fail_msg("pq_create %s: %s", path, err.pe_msg);
  return pq;
}

static inline void tu_check(pq_t *pq) {
  pq_check_report r;
  int rc = pq_check(pq, &r);
  if (rc != PQ_OK)
    fail_msg("pq_check: invariant %d: %s", r.pr_invariant, r.pr_msg);
}

#endif
