/*
 * tu_fill.h - test data that depends only on a seed: bytes from a cheap
 * xorshift generator, for products whose MD5 is then their signature and
 * payloads a receiver can tell apart.  Not random enough for anything but
 * tests.  Header-only, no test framework: the cmocka tests (through
 * test/lib/testutil.h) and ldm6_peer use it.
 */
#ifndef TEST_TU_FILL_H
#define TEST_TU_FILL_H

#include <stddef.h>
#include <stdint.h>

/* Fill buf with n bytes from a generator seeded by seed. */
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

#endif /* TEST_TU_FILL_H */
