/*
 * gini_name.h - the identifier of a product on the GOES path (GINI
 * imagery): its product-definition block (PDB), read from the first block
 * in the clear or after inflating its zlib stream, and the name
 * "<sat>/ch<type>/<platform>/<channel>/<YYYYMMDD> <hhmm>/<sector>/<res>km/
 * <heading>" as LDM 6.15 makes it, quirks included (docs/noaaport.md,
 * "Satellite names").  Pure functions over bounded bytes; inflating is
 * bounded as LDM bounds it (540 bytes in, 6000 out).
 */
#ifndef PQUTILS_INGEST_GINI_NAME_H
#define PQUTILS_INGEST_GINI_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_namer.h"

#define NP_GINI_PDB_LEN 512

/** The PDB fields the ingester uses. */
struct np_gini_pdb {
  uint8_t source, platform, sector, channel;
  uint16_t nrecords, record_size;
  int year; /* full year */
  uint8_t month, day, hour, minute, second, hundredths;
  uint16_t nx, ny;
  uint8_t res_km, compression;
  size_t heading_len; /* bytes of the heading line, its LF included: where
                         the PDB starts in the clear (on success it is
                         within the block, but the block may end before
                         the PDB's 512 bytes do) */
};

/**
 * Name a GOES-path product from its first block (n bytes): the heading
 * line, then the PDB, or a zlib stream of both if compressed (PDH transfer
 * bit 16).
 * LDM's INFO line "<heading> <n>" is logged here; the name is cut to
 * LDM's 254 bytes (and to name_size - 1).  PDB bytes that the block, or
 * the inflated stream, does not hold read as 0.
 * @param type  the PSH product type
 * @return 0, or -1 if no product can be made (LDM's "Error reading pdb,
 *         punt" logged, with "large inflate error: <code>" first if zlib
 *         reported an error; a stream that does not end within LDM's
 *         bounds gets the second line only, as in LDM)
 */
int np_gini_name(const uint8_t *block, size_t n, int type, bool compressed,
                 char *name, size_t name_size, struct np_gini_pdb *pdb,
                 struct np_namer *nm);

#endif
