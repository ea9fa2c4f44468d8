/*
 * autoshift.c - LDM's rule for switching a requester between primary and
 * alternate mode (see autoshift.h).
 */
#include "ldmd/server/autoshift.h"

void ldmd_autoshift_init(ldmd_autoshift *a, unsigned feeds, bool primary,
                         int64_t period_ms, int64_t now_ms) {
  a->feeds = feeds > 0 ? feeds : 1;
  a->primary = primary;
  a->period_ms = period_ms;
  a->since_ms = now_ms;
  a->accepted = 0;
  a->rejected = 0;
}

void ldmd_autoshift_add(ldmd_autoshift *a, uint64_t accepted,
                        uint64_t rejected) {
  a->accepted += accepted;
  a->rejected += rejected;
}

bool ldmd_autoshift_due(ldmd_autoshift *a, int64_t now_ms) {
  uint64_t acc = a->accepted, rej = a->rejected, others = a->feeds - 1u;
  bool flip;

  if (a->feeds == 1)
    return !a->primary; /* a lone alternate: primary after one message */
  if (now_ms - a->since_ms < a->period_ms)
    return false;
  a->since_ms = now_ms;
  a->accepted = a->rejected = 0;
  if (acc + rej == 0)
    return false;
  /* mean = rej / others; compare acc * others with rej (no division) */
  if (a->primary)
    flip = acc * others <= rej;
  else
    flip = acc * others >= rej;
  return flip;
}
