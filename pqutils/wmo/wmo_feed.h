/*
 * wmo_feed.h - what the name pqing runs as (or -f) decides, as LDM 6.15
 * decides it (docs/pqing.md, "Names and feedtypes"): the feedtype of the
 * products (the name read as a feedtype: ids, hds, ddplus, dds, pps, afos,
 * hrs...; any other name, pqing and feedtest included, is WMO), a
 * terminal's default speed and parity, whether identifiers get the " /p"
 * PIL, which framing scanner reads the input and with which check, and the
 * NEXRAD feedtype of radar headings.  Pure functions; thread-safe.
 */
#ifndef PQUTILS_WMO_WMO_FEED_H
#define PQUTILS_WMO_WMO_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "pqutils/wmo/wmo_frame.h"

/** The feedtype of a program name (a path: its last component counts). */
uint32_t wmo_feed_by_name(const char *argv0);

/** A terminal's defaults for a feedtype: speed (baud) and parity ("even",
 *  "odd" or "none"). */
void wmo_feed_tty_defaults(uint32_t feedtype, unsigned *baud,
                           const char **parity);

/** Do this feed's identifiers get the " /p" PIL (unless -i)? */
bool wmo_feed_uses_pil(uint32_t feedtype);

/* -c and -n. */
enum wmo_check_opt { WMO_CHECK_UNSET, WMO_CHECK_ON, WMO_CHECK_OFF };

/**
 * The scanner for a feed, and whether it checks (the HDS CRC, or parity).
 * @param tty          the input is a terminal
 * @param parity_none  the terminal's parity is "none"
 */
void wmo_feed_scanner(uint32_t feedtype, enum wmo_check_opt opt, bool tty,
                      bool parity_none, enum wmo_framing *framing, bool *check);

/** The feedtype of one product: NEXRAD3 for the radar headings SDUS2,
 *  SDUS3, SDUS5 and SDUS7 when nexrad (no -N), else the feed's. */
uint32_t wmo_feed_of_product(uint32_t feedtype, const char *ident, bool nexrad);

#endif
