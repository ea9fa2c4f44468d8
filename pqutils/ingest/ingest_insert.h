/*
 * ingest_insert.h - a finished NOAAPORT product into the queue, and the
 * line LDM 6.15's ingester logs for it: "<ident> inserted <FEED> [cat c
 * type t ccb m/s seq n size z]" at NOTE, "<ident> already in queue
 * [<seqno>]" for a duplicate signature, LDM's two ERROR lines for a
 * failure (docs/noaaport.md, "Log lines").  The product's creation time is
 * now, its origin this host.
 *
 * Beyond LDM: an identifier longer than the queue's 255 bytes (long GRIB2
 * names) makes LDM's insert fail and the product is lost; here it is cut
 * to 255 bytes, with a warning, and the product kept.
 */
#ifndef PQUTILS_INGEST_INGEST_INSERT_H
#define PQUTILS_INGEST_INGEST_INSERT_H

#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/ingest/np_log.h"
#include "pqutils/ingest/product_build.h"

struct np_inserter {
  pq_t *pq;
  const char *origin;
  const struct np_log *log;
  uint64_t products; /* completed, duplicates and failures included */
  uint64_t inserted, duplicates, failed;
};

/**
 * Insert p.
 * @return pq_insert()'s status (PQ_OK, PQ_DUP, ...)
 */
int np_insert(struct np_inserter *in, const struct np_product *p);

#endif
