/*
 * wmo_message.h - what pqing makes of one framed message: its product
 * identifier and sequence number, as LDM 6.15's pqing makes them
 * (docs/pqing.md, "Identifiers").
 *
 *   WMO     "<canonical heading>[ /p<PIL>][ /m<model>]": the starting line
 *           holds the sequence number (0-999), the next the heading, in the
 *           NOAAPORT ingester's canonical form (pqutils/ingest/wmo_heading.h,
 *           reused: docs/noaaport.md, "WMO heading"); the PIL is the line
 *           after it, by the same rule; headings beginning H, Y or Z must
 *           carry a whole GRIB message, whose model (its centre and
 *           generating process, named as the ingester names them) follows
 *           " /m";
 *   AFOS    the first upper-case line after ZCZC, then "   (<heading>)"
 *           when a WMO heading follows; the sequence number is the count of
 *           messages;
 *   FAA604  "<catalogue> <ddhhmm>", then " (<heading>)" when one follows;
 *           the sequence number is the message's.
 *
 * A message that is none of these is refused, and the reason goes to the
 * log given, in LDM's words (ERROR), with the GRIB checks' NOTEs.  Pure
 * functions over bounded bytes; thread-safe.
 */
#ifndef PQUTILS_WMO_WMO_MESSAGE_H
#define PQUTILS_WMO_WMO_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/ingest/np_log.h"

struct wmo_product {
  char ident[PQ_IDENT_MAX + 1];
  unsigned seqno;
};

/**
 * Identify a WMO message (SOH CR CR LF first, as the scanner hands it).
 * @param pil  append the " /p" PIL (pqing without -i, for the feeds that
 *             use it: wmo_feed_uses_pil())
 * @return 0, or -1 if it is not a WMO message, or a GRIB heading without
 *         its whole GRIB message (said in lg)
 */
int wmo_parse(const uint8_t *msg, size_t len, bool pil, struct wmo_product *out,
              const struct np_log *lg);

/**
 * Identify an AFOS message (ZCZC ... NNNN).
 * @param seqno  the message's number (LDM counts every message seen)
 * @param no_zczc  the scanner found no ZCZC before it
 * @return 0, or -1 if it is refused (said in lg)
 */
int wmo_parse_afos(const uint8_t *msg, size_t len, unsigned seqno,
                   struct wmo_product *out, const struct np_log *lg);

/**
 * Identify an FAA604 message (SOH ... ETX).
 * @return 0, or -1 if it is refused (said in lg)
 */
int wmo_parse_faa604(const uint8_t *msg, size_t len, struct wmo_product *out,
                     const struct np_log *lg);

/**
 * What LDM's error lines show of a WMO message: its length ("%8u"), then
 * its sequence number and its heading as far as they can be read.
 */
void wmo_err_ident(const uint8_t *msg, size_t len, char *out, size_t outlen);

/** The same for an FAA604 message: length, sequence number, catalogue
 *  number and date as they stand. */
void wmo_faa604_err_ident(const uint8_t *msg, size_t len, char *out,
                          size_t outlen);

#endif
