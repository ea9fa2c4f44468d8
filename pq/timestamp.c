/*
 * timestamp.c - the product model's time: LDM's timestampt with 64-bit
 * seconds.  Owns reading the real-time clock, ordering times and converting
 * to and from microseconds since the epoch, the unit the queue keys on.
 * Conversions saturate rather than wrap: a time before the epoch becomes 0,
 * one beyond 2^64 microseconds becomes UINT64_MAX.
 */
#include "pq/product.h"

#include <time.h>

#define US_PER_SEC 1000000u

pq_timestamp pq_ts_now(void) {
  struct timespec ts;

  if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
    return PQ_TS_NONE;
  return (pq_timestamp){(int64_t)ts.tv_sec, (int32_t)(ts.tv_nsec / 1000)};
}

int pq_ts_cmp(pq_timestamp a, pq_timestamp b) {
  if (a.sec != b.sec)
    return a.sec < b.sec ? -1 : 1;
  if (a.usec != b.usec)
    return a.usec < b.usec ? -1 : 1;
  return 0;
}

uint64_t pq_ts_to_us(pq_timestamp t) {
  uint64_t base, back;

  if (t.sec < 0)
    return 0;
  if ((uint64_t)t.sec > UINT64_MAX / US_PER_SEC)
    return UINT64_MAX;
  base = (uint64_t)t.sec * US_PER_SEC;
  if (t.usec >= 0)
    return (uint64_t)t.usec > UINT64_MAX - base ? UINT64_MAX
                                                : base + (uint64_t)t.usec;
  back = (uint64_t)(-(int64_t)t.usec);
  return base < back ? 0 : base - back;
}

pq_timestamp pq_ts_from_us(uint64_t us) {
  return (pq_timestamp){(int64_t)(us / US_PER_SEC), (int32_t)(us % US_PER_SEC)};
}
