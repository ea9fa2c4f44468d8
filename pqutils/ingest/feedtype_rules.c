/*
 * feedtype_rules.c - owns the LDM feedtype of a NOAAPORT product: the
 * NEXRAD level III test on the first block, the ASCII test that sends
 * NMC-channel text with binary bytes to HDS, and LDM 6.15's decision table
 * with the names its log lines give the feedtypes (docs/noaaport.md,
 * "Feedtypes").  The quirks are LDM's and kept on purpose: SDUS4x and
 * SDCN are not NEXRAD (LDM issue #132), bytes are read as signed chars,
 * and an ETX anywhere in the checked bytes fails the ASCII test.
 */
#include "pqutils/ingest/feedtype_rules.h"

#include <string.h>

#include "pq/product.h"

/* Whether LDM's ASCII test lets the byte through: printable when read as a
 * signed char (0x20 to 0x7F), or NUL, RS, HT, LF, CR. */
static bool ascii_ok(uint8_t c) {
  if (c >= 0x20 && c <= 0x7F)
    return true;
  return c == 0 || c == 0x1E || c == '\t' || c == '\n' || c == '\r';
}

bool np_ascii_text(const uint8_t *buf, size_t n) {
  /* Positions 1 to 100, then N - 101 to N - 2: never the SOH nor the last
   * byte.  The ETX LDM means to allow near the end fails like any other
   * control byte. */
  size_t i = 1;
  while (i + 1 < n) {
    if (!ascii_ok(buf[i]))
      return false;
    i++;
    if (i > 100 && i + 101 < n)
      i = n - 101;
  }
  return true;
}

bool np_is_nids(int type, int ccb_mode, int ccb_submode, const uint8_t *data,
                size_t n) {
  static const char *const prefixes[] = {"SDUS2", "SDUS3", "SDUS5",
                                         "SDUS6", "SDUS7", "SDUS8"};
  if (type == 5)
    return true;
  if (ccb_mode != 2 || ccb_submode != 0 || n < 5)
    return false;
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (memcmp(data, prefixes[i], 5) == 0)
      return true;
  return false;
}

/* Datastream 6 (NMC2) goes by the product type alone. */
static uint32_t nmc2_feedtype(int type) {
  switch (type) {
  case 1:
  case 2:
  case 3:
    return PQ_FT_NIMAGE;
  case 4:
    return PQ_FT_NGRID;
  case 5:
    return PQ_FT_NEXRAD3;
  default:
    return PQ_FT_NOTHER;
  }
}

uint32_t np_feedtype(int datastream, int type, int category) {
  if (datastream == 6)
    return nmc2_feedtype(type);
  if (type < 4)
    return PQ_FT_NIMAGE;
  switch (category) {
  case 1:
  case 7:
    return PQ_FT_IDS | PQ_FT_DDPLUS;
  case NP_CAT_HDS_TEXT:
  case NP_CAT_HDS_OTHER:
  case 2:
  case 4:
  case 5:
    return PQ_FT_HDS;
  case NP_CAT_NIDS:
    return PQ_FT_NEXRAD3;
  default:
    return PQ_FT_NOTHER;
  }
}

const char *np_feedtype_name(uint32_t ft) {
  switch (ft) {
  case PQ_FT_IDS | PQ_FT_DDPLUS:
    return "IDS|DDPLUS";
  case PQ_FT_HDS:
    return "HDS";
  case PQ_FT_NIMAGE:
    return "NIMAGE";
  case PQ_FT_NGRID:
    return "NGRID";
  case PQ_FT_NOTHER:
    return "NOTHER";
  case PQ_FT_NEXRAD3:
    return "NEXRAD3";
  default:
    return "NONE";
  }
}
