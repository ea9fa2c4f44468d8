/*
 * clock.c - ldmd_now_ms() (clock.h): the server library's monotonic clock,
 * written once for every part of it that measures time.
 */
#include "ldmd/server/clock.h"

#include <time.h>

int64_t ldmd_now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
