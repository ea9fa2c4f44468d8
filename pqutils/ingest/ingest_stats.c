/*
 * ingest_stats.c - formats the statistics block of ingest_stats.h in LDM's
 * layout: values from column 26, numbers with C's %g (so 0/0 prints
 * "-nan", as LDM's does).
 */
#include "pqutils/ingest/ingest_stats.h"

#include <math.h>
#include <stdio.h>

struct np_stats np_stats_diff(const struct np_stats *b,
                              const struct np_stats *a) {
  return (struct np_stats){
      .octets = b->octets - a->octets,
      .frames = b->frames - a->frames,
      .missed = b->missed - a->missed,
      .fullfifo = b->fullfifo - a->fullfifo,
      .products = b->products - a->products,
  };
}

void np_iso_duration(double seconds, char *buf, size_t size) {
  if (!(seconds >= 0))
    seconds = 0;
  unsigned long days = (unsigned long)(seconds / 86400);
  seconds -= (double)days * 86400;
  unsigned hours = (unsigned)(seconds / 3600);
  seconds -= hours * 3600.0;
  unsigned minutes = (unsigned)(seconds / 60);
  seconds -= minutes * 60.0;
  int n = snprintf(buf, size, "P");
  if (days > 0 && n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "%luD", days);
  if (n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "T");
  if (hours > 0 && n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "%uH", hours);
  if (minutes > 0 && n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n, "%uM", minutes);
  if (n >= 0 && (size_t)n < size)
    (void)snprintf(buf + n, size - (size_t)n, "%.6fS", seconds);
}

/* One section's lines. */
static void section(const char *title, const struct np_stats *s, double secs,
                    const struct np_log *lg) {
  char dur[64];
  np_iso_duration(secs, dur, sizeof dur);
  double oct = (double)s->octets, fr = (double)s->frames;
  double mi = (double)s->missed, ff = (double)s->fullfifo;
  double pr = (double)s->products;
  np_log(lg, NP_NOTE, "    %s:", title);
  np_log(lg, NP_NOTE, "        Duration          %s", dur);
  np_log(lg, NP_NOTE, "        Raw Data:");
  np_log(lg, NP_NOTE, "            Octets        %g", oct);
  np_log(lg, NP_NOTE, "            Mean Rate:");
  np_log(lg, NP_NOTE, "                Octets    %g/s", oct / secs);
  np_log(lg, NP_NOTE, "                Bits      %g/s", 8 * oct / secs);
  np_log(lg, NP_NOTE, "        Received frames:");
  np_log(lg, NP_NOTE, "            Number        %g", fr);
  np_log(lg, NP_NOTE, "            Mean Rate     %g/s", fr / secs);
  np_log(lg, NP_NOTE, "        Missed frames:");
  np_log(lg, NP_NOTE, "            Number        %g", mi);
  np_log(lg, NP_NOTE, "            %%             %g", 100 * mi / (mi + fr));
  np_log(lg, NP_NOTE, "        Full FIFO:");
  np_log(lg, NP_NOTE, "            Number        %g", ff);
  np_log(lg, NP_NOTE, "            %%             %g", 100 * ff / fr);
  np_log(lg, NP_NOTE, "        Products:");
  np_log(lg, NP_NOTE, "            Inserted      %g", pr);
  np_log(lg, NP_NOTE, "            Mean Rate     %g/s", pr / secs);
}

void np_stats_log(const struct np_stats *interval, double interval_s,
                  const struct np_stats *total, double total_s,
                  const struct np_log *lg) {
  np_log(lg, NP_NOTE, "%s", "");
  np_log(lg, NP_NOTE, "----------------------------------------");
  np_log(lg, NP_NOTE, "Ingestion Statistics:");
  section("Since Previous Report (or Start)", interval, interval_s, lg);
  section("Since Start", total, total_s, lg);
  np_log(lg, NP_NOTE, "----------------------------------------");
}
