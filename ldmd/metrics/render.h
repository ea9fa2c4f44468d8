/*
 * render.h - the figures of a snapshot (metrics.h) and of the queue, as a
 * reader shows them: the Prometheus text of GET /metrics and the JSON of
 * GET /status.json (docs/metrics.md lists every series and field).  The
 * queue's figures are read at render time from the queue's own statistics
 * (pq_stats_get(), pq_stats_held()).  Everything a status page or pqmon's
 * live view needs is here, computed once: the lag of a feeder, the
 * cumulative histograms.
 */
#ifndef LDMD_METRICS_RENDER_H
#define LDMD_METRICS_RENDER_H

#include "ldmd/metrics/metrics.h"
#include "ldmd/metrics/prom.h"
#include "pq/pq.h"

/** The queue's figures at one moment. */
typedef struct ldmm_queue {
  bool ok;      /**< st was read */
  bool held_ok; /**< held was read */
  pq_stats st;
  uint64_t held;
} ldmm_queue;

/** Read the queue's figures (a read-only handle is enough).  pq may be
 *  NULL (q->ok false). */
void ldmm_queue_read(pq_t *pq, ldmm_queue *q);

/**
 * A feeder's lag behind the newest product of the queue, in seconds: the
 * newest insertion time minus the feeder's cursor, 0 when it is ahead.
 * @return the lag, or -1 when it has none (not a feeder, no cursor yet, no
 *         queue figures)
 */
double ldmm_lag_seconds(const ldmm_conn_copy *c, const ldmm_queue *q);

/** The Prometheus text (format 0.0.4) of snap and q, appended to b. */
void ldmm_render_prom(const ldmm_snapshot *snap, const ldmm_queue *q,
                      ldmm_prom_buf *b);

/** The same figures as one JSON object, appended to b. */
void ldmm_render_json(const ldmm_snapshot *snap, const ldmm_queue *q,
                      ldmm_prom_buf *b);

#endif /* LDMD_METRICS_RENDER_H */
