/*
 * ingest_stats.h - the ingester's statistics as LDM 6.15's noaaportIngester
 * logs them, on SIGUSR1 and at exit: bytes read, frames received and
 * missed, the times the reader found its FIFO full, products made, for the
 * time since the previous report and since the start, in LDM's layout
 * (docs/noaaport.md, "Statistics").
 */
#ifndef PQUTILS_INGEST_INGEST_STATS_H
#define PQUTILS_INGEST_INGEST_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_log.h"

struct np_stats {
  uint64_t octets;   /* bytes read from the input */
  uint64_t frames;   /* frames counted by gap detection */
  uint64_t missed;   /* frames missed */
  uint64_t fullfifo; /* times the reader waited for room */
  uint64_t products; /* products completed, duplicates and failures too */
};

/** b - a, field by field (the figures of an interval). */
struct np_stats np_stats_diff(const struct np_stats *b,
                              const struct np_stats *a);

/** An ISO-8601 duration as LDM prints it: "PT0.013212S", "P1DT2H3M4.5S". */
void np_iso_duration(double seconds, char *buf, size_t size);

/**
 * Log the statistics block at NOTE, a message a line: the interval's
 * figures (over interval_s seconds) then the totals (over total_s).
 */
void np_stats_log(const struct np_stats *interval, double interval_s,
                  const struct np_stats *total, double total_s,
                  const struct np_log *lg);

#endif
