/*
 * autoshift.h - when a requester switches between primary and alternate
 * mode (docs/protocol.md §10), as LDM's autoshift does.
 *
 * Several REQUESTs for the same (feedtype, pattern), usually to different
 * upstreams, share the work: the first in ldmd.conf starts primary (the
 * upstream sends every product with HEREIS), the others alternate
 * (COMINGSOON first, so a product already in the queue is declined before
 * its data is sent).  Each requester counts the products it delivered:
 * accepted (inserted) or rejected (already in the queue).  At least every
 * period it compares them: with A accepted, R rejected and
 * mean = R / (feeds - 1), a primary switches when A <= mean (another feed
 * brings the products first) and an alternate when A >= mean (it brings
 * them first); nothing happens when A + R = 0.  A lone requester (feeds
 * = 1) in alternate mode switches to primary after its first message; a
 * lone primary never switches.  A switch means reconnecting at once in
 * the other mode.
 *
 * Pure logic on the caller's clock: no I/O, no logging.  One object per
 * requester process.
 */
#ifndef LDMD_SERVER_AUTOSHIFT_H
#define LDMD_SERVER_AUTOSHIFT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ldmd_autoshift {
  unsigned feeds;    /**< REQUESTs sharing the subscription (>= 1) */
  bool primary;      /**< the current mode */
  int64_t period_ms; /**< shortest time between evaluations */
  int64_t since_ms;  /**< start of the current evaluation period */
  uint64_t accepted; /**< in the current period */
  uint64_t rejected;
} ldmd_autoshift;

/** Start a connection's accounting in a mode, at now_ms. */
void ldmd_autoshift_init(ldmd_autoshift *a, unsigned feeds, bool primary,
                         int64_t period_ms, int64_t now_ms);

/** Count products delivered since the last call. */
void ldmd_autoshift_add(ldmd_autoshift *a, uint64_t accepted,
                        uint64_t rejected);

/**
 * After a message: should the requester switch modes now?  Evaluates at
 * most once per period (a lone alternate: at once) and starts a new
 * period when it does.  The caller flips its mode and reconnects when
 * true (a->primary is not changed here).
 */
bool ldmd_autoshift_due(ldmd_autoshift *a, int64_t now_ms);

#endif /* LDMD_SERVER_AUTOSHIFT_H */
