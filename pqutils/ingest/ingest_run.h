/*
 * ingest_run.h - noaaportIngester's work between its input and the queue:
 * bytes from one or more sources made into frames (a frame reader per
 * source), blended when asked (frame_blend.h: several receivers, or one
 * whose datagrams come reordered), counted by gap detection, built into
 * products (product_build.h) and inserted (ingest_insert.h), with LDM's
 * statistics on request and at the end, and the same figures in ldmd's
 * live figures when it runs beside ldmd (ingester.h).  The program's readers
 * hand it bytes as they come: ingest_bytes(); its clock tells it when a held
 * frame is due: ingest_due_ms() and ingest_tick().  One thread.
 */
#ifndef PQUTILS_INGEST_INGEST_RUN_H
#define PQUTILS_INGEST_INGEST_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldmd/metrics/ingester.h"
#include "pq/pq.h"
#include "pqutils/ingest/product_build.h"

#define NP_MAX_SOURCES 8

struct ingest;

struct ingest_opts {
  struct np_build_opts build;
  double wait_s; /* -W: blend with this wait; < 0: no blending */
  size_t nsources;
  const char *source_names[NP_MAX_SOURCES]; /* for the blender's lines */
  ldmm_ingester *fig; /* ldmd's live figures' entry; NULL: none */
  ldmm_feed *feeds;   /* and its per-feedtype aggregates */
};

/** Start: NULL if out of memory (logged). */
struct ingest *ingest_new(const struct ingest_opts *o, pq_t *pq,
                          const char *origin);

/** n bytes read from source src; false if out of memory (logged). */
bool ingest_bytes(struct ingest *g, unsigned src, const uint8_t *p, size_t n);

/** Release the held frames that are due (blending); log the statistics if
 *  SIGUSR1 asked for them. */
void ingest_tick(struct ingest *g);

/** Milliseconds until a held frame is due, -1 if none is held. */
int ingest_due_ms(const struct ingest *g);

/** The input has ended: what every source holds is made into frames, the
 *  frames held are released, the product in progress ends. */
void ingest_end(struct ingest *g);

/** The times the reader found its FIFO full, for the statistics. */
void ingest_set_fullfifo(struct ingest *g, uint64_t n);

/** Log the statistics block (LDM's, at NOTE whatever the level). */
void ingest_report(struct ingest *g);

void ingest_free(struct ingest *g);

#endif
