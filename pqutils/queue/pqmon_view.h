/*
 * pqmon_view.h - one frame of pqmon's live view (pqmon -L, pqmon.1): the
 * queue's own statistics and, when ldmd's figures file is there
 * (docs/metrics.md), its feeds and connections, with rates and latency
 * percentiles over the interval between two snapshots, sorted and cut to
 * the size of a screen.  Pure: the text of a frame from figures already
 * read, so that a test can render fixed snapshots; reading the figures,
 * the terminal and the loop are pqmon.c's.
 */
#ifndef PQUTILS_QUEUE_PQMON_VIEW_H
#define PQUTILS_QUEUE_PQMON_VIEW_H

#include <stddef.h>

#include "ldmd/metrics/metrics.h"
#include "ldmd/metrics/render.h"

/** What one frame shows. */
typedef struct pqmon_view {
  const char *queue_path;
  const ldmm_queue *queue;   /**< the queue's figures (ok false: unread) */
  const char *queue_why;     /**< when they were not read: why, or NULL */
  const ldmm_snapshot *now;  /**< ldmd's figures, or NULL: not there */
  const ldmm_snapshot *prev; /**< the previous frame's, or NULL: no rates */
  double dt;                 /**< seconds from prev to now */
  const char *why_none;      /**< when now is NULL: why (a path and why) */
  double interval;           /**< the refresh interval, seconds (shown) */
  double wall;               /**< now, seconds since the epoch (the title,
                                  ldmd's uptime) */
  int width, height;         /**< the screen: columns, lines */
} pqmon_view;

/**
 * The q-quantile (0 < q < 1) of a histogram of non-cumulative counts over
 * LDMM_NBUCKETS buckets with upper bounds bounds_us (the last +Inf), as
 * Prometheus' histogram_quantile() estimates it: linear within the bucket
 * where the rank falls (from 0 for the first bucket).
 * @return seconds; -1 when the histogram is empty; INFINITY when the rank
 *         falls in the +Inf bucket
 */
double pqmon_view_quantile(const uint64_t *counts, const uint64_t *bounds_us,
                           double q);

/**
 * The frame of v: at most v->height lines, each of at most v->width bytes,
 * each ended by "\n".  Feeds (every feedtype that has had a product or a
 * refusal) and connections are sorted by products per second over the
 * interval, most first (by products when there is no interval yet); what
 * does not fit the height is counted on the last line.
 * @return the text (malloc'd, the caller frees), or NULL when out of
 *         memory
 */
char *pqmon_view_render(const pqmon_view *v);

#endif /* PQUTILS_QUEUE_PQMON_VIEW_H */
