/*
 * wmo_heading.h - the WMO abbreviated heading of a product's text, as LDM
 * 6.15's ingester rebuilds it ("canonical": TTAAii CCCC DDHHMM [BBB]), the
 * AWIPS PIL of the line after it (" /p"), and the printable-prefix name
 * used when there is no heading (docs/noaaport.md, "Identifiers").  Pure
 * functions over bounded bytes.
 */
#ifndef PQUTILS_INGEST_WMO_HEADING_H
#define PQUTILS_INGEST_WMO_HEADING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_log.h"

#define NP_WMO_MAX 128 /* longest canonical heading LDM accepts */
#define NP_PREFIX_MAX 256

/**
 * The canonical heading of the text p[0, n) (a NUL byte also ends it).
 * @param[out] out    the heading, NUL-terminated
 * @param[out] after  offset of the byte after the heading line's LF
 * @return 0, or -1 if there is no heading by LDM's rules (ERROR "wmoid is
 *         bizzare <len>" logged when it is only too long)
 */
int np_wmo_heading(const uint8_t *p, size_t n, char out[NP_WMO_MAX + 1],
                   size_t *after, const struct np_log *lg);

/**
 * The PIL on the line at p (the line after the heading), by LDM's rule:
 * six characters before the line's end, trailing blanks trimmed to at
 * least three, letters and digits, not all digits; "^NMC" skipped first.
 * n is the bytes left in the block.
 * @return true with pil set (NUL-terminated), false if there is none
 */
bool np_wmo_pil(const uint8_t *p, size_t n, char pil[8]);

/**
 * The printable prefix of p[0, n): bytes up to the first below 0x20 or at
 * or above 0x80, at most NP_PREFIX_MAX.
 * @return its length (out holds it, NUL-terminated)
 */
size_t np_printable_prefix(const uint8_t *p, size_t n,
                           char out[NP_PREFIX_MAX + 1]);

#endif
