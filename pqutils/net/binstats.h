/*
 * binstats.h - what rtstats computes, apart from the queue and the
 * network: the statistics bins, the one-line report of a bin and its
 * identifier, and when the next report is due.  Kept apart from
 * pqutils/net/rtstats.c so that unit tests (test/rtstats/) drive them with the
 * times and the random draws they choose: nothing here reads a clock,
 * draws a random number, logs or does I/O.
 *
 * BINS.  A product goes into the bin of its (creation-time hour, feedtype,
 * origin), as LDM's rtstats bins them.  A bin holds, for that hour: the
 * number of products and of bytes; the sum of their latencies (insertion
 * time - creation time, in seconds) and the largest, with the insertion
 * time of the product that had it; and the newest product by creation time
 * (a later insertion breaks a tie), with its insertion time.  The bins are
 * kept sorted by hour, then feedtype, then origin, at most `max` of them
 * (RTS_MAX_BINS, LDM's limit).  Each bin says whether it changed since its
 * figures were last confirmed sent: only those are reported, and a report
 * that is not confirmed leaves them changed, so nothing is lost when the
 * server is down.  A bin is dropped once it has nothing left to report and
 * its hour is older than the previous hour (rts_bins_expire()).
 *
 * At the cap, a new bin takes the place of the first bin, in sort order,
 * that has nothing left to report; if every bin has, of the first bin (the
 * oldest hour), unless the new bin would sort before it: then the product
 * is not binned.  Both cases are counted.
 *
 * REPORT LINE.  rts_format_line() writes LDM's line exactly:
 *   "%14.14s %14.14s %32.*s %7.10s %32.*s %12.0f %12.0f %.8g %10.2f
 *    %4.0f@%4.4s %20.20s\n"
 * with: creation time of the newest product and its insertion time
 * (YYYYMMDDhhmmss, UTC); the reporting host (at most RTS_HOST_MAX
 * characters); the feedtype's name (at most 10); the origin; products;
 * bytes; latency of the newest product; mean latency; largest latency,
 * '@', and the minutes and seconds past the hour (MMSS, UTC) of that
 * product's insertion; the version (at most 20).  Its identifier is
 * "rtstats-<version>/<host>/<feedtype>/<origin>" with the feedtype and the
 * origin as the line shows them (its 4th and 5th fields).
 *
 * SCHEDULE.  A report is due `gap` seconds after the last one, where each
 * gap is base + spread * draw() (LDM: 60 + 0..30 s), draw() giving a
 * number from 0 to 1; the caller passes the clock's readings.  The first
 * report does not wait for a gap, as LDM's does not (its last-sent time
 * starts at 0): it is due whenever the reader is at the end of the queue,
 * so it goes as soon as there is something to report, with all that the
 * queue held (-o) or the first products to come.  A queue that never runs
 * dry gets it one gap after the start.
 *
 * Not thread-safe; a `struct rts_bins` belongs to one thread.
 */
#ifndef PQUTILS_NET_BINSTATS_H
#define PQUTILS_NET_BINSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/product.h"

#define RTS_MAX_BINS 4000 /* LDM's limit on the bins kept */
#define RTS_HOUR 3600
#define RTS_HOST_MAX 255 /* longest host name the line shows */
#define RTS_LINE_MAX 640 /* longer than any line rts_format_line() writes */

/** One bin: the figures of an hour, a feedtype and an origin. */
struct rts_bin {
  int64_t hour;                   /* creation-time hour: a multiple of 3600 */
  uint32_t feedtype;              /* the products' feedtype */
  char origin[PQ_ORIGIN_MAX + 1]; /* their origin */
  double nprods;                  /* products */
  double nbytes;                  /* their bytes */
  double latency_sum;             /* sum of their latencies, seconds */
  double max_latency;             /* the largest latency */
  uint64_t slowest_at_us;         /* insertion time of the product with it */
  pq_timestamp recent;            /* creation time of the newest product */
  uint64_t recent_at_us;          /* its insertion time, microseconds */
  bool changed;                   /* not yet confirmed reported */
};

/** The bins, sorted by (hour, feedtype, origin). */
struct rts_bins {
  struct rts_bin *v;
  size_t n;         /* bins in use */
  size_t max;       /* at most this many */
  uint64_t dropped; /* products not binned: the cap, and older than all */
  uint64_t evicted; /* bins replaced at the cap */
  uint64_t lost;    /* of those, bins whose figures were not yet reported */
};

/**
 * Make room for max bins (RTS_MAX_BINS for rtstats; at least 1).
 * @return 0, or -1 with errno ENOMEM (or EINVAL for max 0).
 */
int rts_bins_init(struct rts_bins *b, size_t max);
/** Free what rts_bins_init() allocated; b may be reused after init. */
void rts_bins_free(struct rts_bins *b);

/** What rts_bins_add() did. */
enum rts_add {
  RTS_ADDED,   /* into an existing bin */
  RTS_NEW_BIN, /* into a new bin */
  RTS_EVICTED, /* into a new bin that replaced another (the cap) */
  RTS_DROPPED, /* not binned (the cap; see the top of this file) */
};

/** Bin one product inserted at inserted_us (microseconds since the epoch;
 *  its creation time is info->arrival). */
enum rts_add rts_bins_add(struct rts_bins *b, const pq_prod_info *info,
                          uint64_t inserted_us);

/** The creation-time hour of a time (seconds): the multiple of 3600 at or
 *  before it, negative times included. */
int64_t rts_hour_of(int64_t sec);

/** Bins that changed since they were last confirmed reported. */
size_t rts_bins_changed(const struct rts_bins *b);

/** The report of every changed bin was confirmed: none is changed now. */
void rts_bins_mark_sent(struct rts_bins *b);

/**
 * Drop the bins that have nothing left to report and whose hour is before
 * the previous hour of now_sec (wall clock, seconds since the epoch).
 * @return how many were dropped.
 */
size_t rts_bins_expire(struct rts_bins *b, int64_t now_sec);

/** The mean latency of a bin (0 for a bin without products). */
double rts_bin_mean(const struct rts_bin *bin);

/** The latency of a bin's newest product, seconds. */
double rts_bin_latest(const struct rts_bin *bin);

/**
 * Write the report line of a bin (with its '\n') into buf.
 * @param myname   the reporting host (shows at most RTS_HOST_MAX chars)
 * @param version  the version field (shows at most 20 characters)
 * @return its length, or -1 if it does not fit in len (it always fits in
 *         RTS_LINE_MAX).
 */
int rts_format_line(const struct rts_bin *bin, const char *myname,
                    const char *version, char *buf, size_t len);

/**
 * The identifier of a report line: "rtstats-<version>/<myname>/<the
 * line's 4th field>/<its 5th field>", cut to fit len (PQ_IDENT_MAX + 1
 * for a product's).
 * @return 0, or -1 if the line has fewer than 5 fields.
 */
int rts_format_ident(const char *line, const char *version, const char *myname,
                     char *buf, size_t len);

/** A time as the line shows it, YYYYMMDDhhmmss (UTC), into out. */
void rts_format_time(int64_t sec, char out[16]);

/** MMSS (UTC minutes and seconds past the hour) of a time in
 *  microseconds, into out. */
void rts_format_mmss(uint64_t us, char out[8]);

/* ---- the report schedule ---- */

/** A random number from 0 to 1, for the gap's spread. */
typedef double rts_draw_fn(void *arg);

struct rts_sched {
  double base;   /* seconds: the shortest gap */
  double spread; /* seconds: at most this much more, at random */
  double last;   /* clock reading of the last cycle (or of the start) */
  double gap;    /* the gap from last to the next report */
  bool reported; /* a cycle has had something to report */
  rts_draw_fn *draw;
  void *arg;
};

/** Start the schedule at clock reading now: the first report is due at the
 *  end of the queue, or one gap later.  draw may be NULL when spread is 0. */
void rts_sched_init(struct rts_sched *s, double base, double spread,
                    rts_draw_fn *draw, void *arg, double now);
/** Is a report due at now?  at_end: the reader is at the end of the queue,
 *  where the first report is always due. */
bool rts_sched_due(const struct rts_sched *s, double now, bool at_end);
/** Seconds from now until the next report (0 if it is due). */
double rts_sched_left(const struct rts_sched *s, double now);
/** A report was made (or tried) at now: the next one is a new gap later. */
void rts_sched_done(struct rts_sched *s, double now);
/** A cycle at now had nothing to report: the next one is a new gap later
 *  (LDM's timer restarts on every cycle), but until a report is made the
 *  first one stays due at the end of the queue. */
void rts_sched_idle(struct rts_sched *s, double now);

#endif /* PQUTILS_NET_BINSTATS_H */
