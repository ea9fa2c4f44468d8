/*
 * nwstg_name.h - the identifier of a product on the NWSTG path (every
 * channel but GOES imagery): the communications control block (CCB) at
 * the start of its first block, then NAME (canonical heading, " /p" PIL,
 * " /m" GRIB1 model, or a fallback) and META (" !" and the NIDS, graph or
 * redbook tag, the redbook title, the GRIB tag), as LDM 6.15 makes them
 * (docs/noaaport.md, "Identifiers").  The category may change here: NEXRAD
 * level III becomes 99.  GRIB2 products are named again when complete
 * (np_name_grib2_final()).
 */
#ifndef PQUTILS_INGEST_NWSTG_NAME_H
#define PQUTILS_INGEST_NWSTG_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_namer.h"
#include "pqutils/ingest/wmo_heading.h"

#define NP_IDENT_MAX 1023 /* NAME + META, LDM's buffer */
#define NP_META_MAX 511

/** The communications control block. */
struct np_ccb {
  bool valid;   /* its length fits the block */
  unsigned len; /* bytes (2 x the 14-bit word count) */
  uint8_t mode, submode, user1, user2;
};

/**
 * The CCB at the start of a product's first block of n bytes.  An invalid
 * one (longer than the block) logs LDM's two INFO lines; its mode and
 * submode then read 0/0.
 */
void np_ccb_parse(const uint8_t *block, size_t n, struct np_ccb *ccb,
                  const struct np_log *lg);

/** A product's identifier as its first block makes it. */
struct np_nwstg_name {
  char ident[NP_IDENT_MAX + 1]; /* NAME + META */
  size_t name_len;              /* bytes of NAME at the start of ident */
  int category;                 /* after the NIDS test (99) */
  bool grib2;                   /* META is " !grib2/": name again at the end */
  size_t grib2_at;              /* offset of "GRIB" in the data after the CCB */
};

/**
 * Name a product from its first block (n bytes, the CCB included) and its
 * PSH type and category.  Logs LDM's NOTE "Non-wmo product type ..." for a
 * fallback name.  With a valid CCB, np_is_nids() (feedtype_rules.h) on the
 * data after the CCB decides category 99; an invalid CCB is named from the
 * block's first byte, with an empty META.
 */
void np_name_nwstg(const uint8_t *block, size_t n, const struct np_ccb *ccb,
                   int type, int category, struct np_nwstg_name *out,
                   struct np_namer *nm);

/**
 * At completion, name a GRIB2 product from its first message, if
 * out->grib2: prod is the product as it stands (FOS header and data, no
 * trailer yet), g_off the offset of the message's "GRIB" in it.  META's
 * GRIB2 part is rewritten, or left " !grib2/" if the message cannot be
 * decoded.  np_grib2_name() is given the prod_len - g_off bytes from the
 * G on and bounds the message's length by them.
 */
void np_name_grib2_final(struct np_nwstg_name *out, const uint8_t *prod,
                         size_t prod_len, size_t g_off, struct np_namer *nm);

#endif
