/*
 * tu_clock.h - the time the tests and their helper programs measure waits
 * and deadlines with: CLOCK_MONOTONIC, which steps of the wall clock do not
 * move, in milliseconds or microseconds.  Header-only, no test framework:
 * cmocka tests, the mp reproductions and ldm6_peer all use it.
 */
#ifndef TEST_TU_CLOCK_H
#define TEST_TU_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t tu_now_us(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t tu_now_ms(void) {
  return tu_now_us() / 1000;
}

#endif /* TEST_TU_CLOCK_H */
