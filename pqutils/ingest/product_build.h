/*
 * product_build.h - NOAAPORT products out of frames: reassembly (one
 * product in progress, blocks in sequence, a product missing a block
 * discarded and logged), the bytes LDM 6.15 stores (the FOS header and
 * trailer of NWSTG-path products, trailer stripping, GOES imagery as
 * PNG, compressed "satz" products as sent, -c inflating, -f filling), the
 * MD5 signature over the bytes LDM hashes, the feedtype and the
 * identifier (docs/noaaport.md, "Reassembly" and "The product built").
 *
 * Frames come from sbn_frame.h in the order they arrived; every finished
 * product goes to the caller's callback, which inserts it.  Bounded: a
 * product grows by at most one frame's data a frame, up to LDM's capacity
 * rule, and nothing is kept from one product to the next.
 *
 * Not thread-safe: one builder per stream.
 */
#ifndef PQUTILS_INGEST_PRODUCT_BUILD_H
#define PQUTILS_INGEST_PRODUCT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_namer.h"
#include "pqutils/ingest/sbn_frame.h"

/** A finished product, valid during the callback. */
struct np_product {
  const char *ident; /* "_NOHEAD" if the name came out empty */
  uint32_t feedtype; /* PQ_FT_ bits */
  uint32_t seqno;    /* PDH product sequence number */
  const uint8_t *data;
  size_t size;
  uint8_t sig[16];
  /* for the log line "[cat c type t ccb m/s seq n size z]" */
  int category, type, ccb_mode, ccb_submode;
  int datastream;
};

typedef void np_product_fn(void *arg, const struct np_product *p);

struct np_build_opts {
  bool inflate; /* -c: store compressed frames inflated */
  bool fill;    /* -f: fill missing GOES scan lines */
};

struct np_build;

/** A builder.  @return NULL if out of memory. */
struct np_build *np_build_new(const struct np_build_opts *opts,
                              struct np_namer *nm, np_product_fn *fn,
                              void *arg);

/** Take one frame from np_sbn_next(). */
void np_build_frame(struct np_build *b, const struct np_frame *f);

/** End of input: a product still in progress is dropped without a log
 *  line, as LDM does (with -f too). */
void np_build_end(struct np_build *b);

void np_build_free(struct np_build *b);

#endif
