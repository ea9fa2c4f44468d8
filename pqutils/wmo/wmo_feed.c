/*
 * wmo_feed.c - names, feedtypes and scanners (wmo_feed.h), with the
 * feedtype names of the queue library (pq_feedtype_parse()).
 */
#include "pqutils/wmo/wmo_feed.h"

#include <string.h>

#include "pq/pq.h"

/* LDM's NMC2 and NMC3 (CONDUIT and FNEXRAD today) and AFOS (GPSSRC). */
#define FT_NMC2 0x00001000u
#define FT_NMC3 0x00002000u
#define FT_AFOS 0x00000800u
#define FT_FAA604 0x00020000u

uint32_t wmo_feed_by_name(const char *argv0) {
  const char *slash = strrchr(argv0, '/');
  const char *name = slash != NULL ? slash + 1 : argv0;
  uint32_t ft = PQ_FT_NONE;
  if (pq_feedtype_parse(name, &ft) != PQ_FT_OK || ft == PQ_FT_NONE)
    ft = PQ_FT_WMO;
  return ft;
}

void wmo_feed_tty_defaults(uint32_t feedtype, unsigned *baud,
                           const char **parity) {
  switch (feedtype) {
  case PQ_FT_DDPLUS:
    *baud = 19200;
    *parity = "even";
    return;
  case PQ_FT_PPS:
  case PQ_FT_DDS:
  case PQ_FT_IDS:
    *baud = 9600;
    *parity = "even";
    return;
  case PQ_FT_HDS:
    *baud = 19200;
    *parity = "none";
    return;
  case FT_AFOS:
    *baud = 4800;
    *parity = "none";
    return;
  default:
    *baud = 1200;
    *parity = "even";
    return;
  }
}

bool wmo_feed_uses_pil(uint32_t feedtype) {
  /* LDM's DDS, PPS, IDS and HRS; HRS is HDS. */
  return (feedtype & (PQ_FT_DDS | PQ_FT_PPS | PQ_FT_IDS | PQ_FT_HDS)) != 0;
}

void wmo_feed_scanner(uint32_t feedtype, enum wmo_check_opt opt, bool tty,
                      bool parity_none, enum wmo_framing *framing,
                      bool *check) {
  bool parity_check =
      opt == WMO_CHECK_ON || (tty && opt != WMO_CHECK_OFF && !parity_none);
  if (feedtype & PQ_FT_HDS) {
    *framing = WMO_FRAME_BINARY;
    *check = opt == WMO_CHECK_ON || (tty && opt != WMO_CHECK_OFF);
  } else if (feedtype == (PQ_FT_DDPLUS | PQ_FT_IDS) ||
             (feedtype & (FT_NMC2 | FT_NMC3))) {
    *framing = WMO_FRAME_BINARY;
    *check = false;
  } else if (feedtype == FT_AFOS) {
    *framing = WMO_FRAME_AFOS;
    *check = false;
  } else if (feedtype == FT_FAA604) {
    *framing = WMO_FRAME_FAA604;
    *check = parity_check;
  } else {
    *framing = WMO_FRAME_TEXT;
    *check = parity_check;
  }
}

uint32_t wmo_feed_of_product(uint32_t feedtype, const char *ident,
                             bool nexrad) {
  static const char *const radar[] = {"SDUS2", "SDUS3", "SDUS5", "SDUS7"};
  if (!nexrad)
    return feedtype;
  for (size_t i = 0; i < sizeof radar / sizeof radar[0]; i++)
    if (strncmp(ident, radar[i], 5) == 0)
      return PQ_FT_NEXRAD3;
  return feedtype;
}
