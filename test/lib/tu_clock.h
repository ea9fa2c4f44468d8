/*
 * tu_clock.h - the time the tests and their helper programs measure waits
 * and deadlines with: CLOCK_MONOTONIC, which steps of the wall clock do not
 * move, in nanoseconds, microseconds, milliseconds or seconds (a double).
 * Header-only, no test framework: cmocka tests, the mp reproductions,
 * ldm6_peer and the benchmarks all use it.
 */
#ifndef TEST_TU_CLOCK_H
#define TEST_TU_CLOCK_H

#include <stdint.h>
#include <time.h>

/** CLOCK_MONOTONIC in nanoseconds: for timing short things (timecmd). */
static inline int64_t tu_now_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** CLOCK_MONOTONIC in microseconds. */
static inline int64_t tu_now_us(void) {
  return tu_now_ns() / 1000;
}

/** CLOCK_MONOTONIC in milliseconds. */
static inline int64_t tu_now_ms(void) {
  return tu_now_us() / 1000;
}

/** CLOCK_MONOTONIC in seconds (a double: to the nanosecond for about 100
 * days of uptime, then a nanosecond or so off). */
static inline double tu_now_s(void) {
  return (double)tu_now_ns() / 1e9;
}

/** Sleep until tu_now_s() reaches t, or a signal interrupts the sleep (it
 * is not restarted: the caller looks at its stop flag and calls again). */
static inline void tu_sleep_until_s(double t) {
  struct timespec ts;

  ts.tv_sec = (time_t)t;
  ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
  (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

#endif /* TEST_TU_CLOCK_H */
