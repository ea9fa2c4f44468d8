/*
 * surf_split.h - splitting a surface bulletin into single observations, as
 * LDM's pqsurf does (prefix surf_): SYNOP (AAXX, and US reports without
 * section 0), SHIP (BBXX), METAR, SPECI and the old SAO reports.  Each
 * observation becomes a product of its own, with LDM's identifier ("metar
 * KDEN 071153"...), sequence number (the bulletin's times 1000 plus its
 * place), body (a line naming the report type, the report, "=\r\r\n") and
 * signature (the MD5 of the body), so that the same observation in two
 * bulletins is the same product and the queue drops the second
 * (pqutils/surf/pqsurf.1, "SPLITTING").
 *
 * Bounded: a bulletin is read once, byte by byte, and an observation's body
 * is at most SURF_OBS_MAX bytes (longer reports are cut, as LDM cuts them).
 * Malformed bulletins give fewer observations or none, never a failure of
 * the caller.  Not thread-safe: none of it keeps state between calls, but
 * the logger is process-wide.
 */
#ifndef PQUTILS_SURF_SURF_SPLIT_H
#define PQUTILS_SURF_SURF_SPLIT_H

#include <time.h>

#include "pq/pq.h"

/* The largest body of an observation (LDM's MAX_SURF_LEN). */
#define SURF_OBS_MAX 511

/**
 * What surf_split() calls for each observation: its metadata (the
 * bulletin's, with the observation's identifier, sequence number, size and
 * signature) and body.  Return 0 when it was taken (inserted), anything
 * else when not (a duplicate, a failure): surf_split() counts the zeros.
 */
typedef int surf_obs_fn(const pq_prod_info *info, const void *body, void *arg);

/**
 * Split a bulletin (the product's whole bytes, from its start-of-heading
 * line) into observations, calling fn for each in order.
 * @param now  the time that stands in for a missing or malformed date
 *             group (time(NULL) in pqsurf)
 * @return the number of calls of fn that returned 0; 0 for a bulletin of a
 *         known kind whose section 0 is not understood (logged); -1 for
 *         one whose heading cannot be read or whose kind pqsurf does not
 *         split (logged, as LDM logs it).
 */
int surf_split(const pq_prod_info *bulletin, const void *data, time_t now,
               surf_obs_fn *fn, void *arg);

#endif /* PQUTILS_SURF_SURF_SPLIT_H */
