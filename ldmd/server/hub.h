/*
 * hub.h - the feed hubs: one process per CPU that sends products to the
 * plain primary LDM-6 feeds of the server (FEEDME with max_hereis above
 * 0x7fffffff, on a connection without TLS, /server/zero-copy FALSE) handed
 * to it, so that a product is found in the queue, locked and checked once
 * per hub for all of its feeds instead of once per connection process
 * (docs/protocol.md, section 6.9).  Each feed goes to the first hub that
 * reads the shared channel.
 *
 * The connection process still does everything up to the feed: the
 * access check, the request's class against ALLOW, the anti-DOS rule, OK
 * and the "Starting Up" line.  Then it hands the connection to the hub
 * (ldmd_hub_delegate()): the socket and one end of a socket pair of its
 * own go over the server's hub channel (SCM_RIGHTS), with the class, the
 * upstream filter (as indexes of the ALLOW entries: the hub is forked from
 * the same top-level process, whose configuration never changes), the
 * cursor and the metrics slot.  It then waits, holding its place in the
 * connection limits and the upstream database, until the hub says the
 * feed ended and how (what it logs as before: "N products sent ..."), or
 * until it is told to stop: its end of the pair closing is the hub's
 * signal to drop that feed, and the hub's end closing tells it the hub
 * died (the downstream then reconnects; the top-level process starts a new
 * hub).
 *
 * Feeds that are not plain primary LDM-6 ones (alternate, NOTIFYME,
 * LDM-5, TLS) are served by their connection process as before.
 */
#ifndef LDMD_SERVER_HUB_H
#define LDMD_SERVER_HUB_H

#include <stdint.h>

#include "ldmd/server/server.h"

/** How a feed served by the hub ended, for the connection process's last
 *  line. */
typedef struct ldmd_hub_end {
  int status; /**< LDMD_DONE or LDMD_FAIL */
  uint64_t nsent, nbytes, nskipped, ndamaged;
} ldmd_hub_end;

/** How many hubs the server runs: one per CPU it may run on (its
 *  affinity: a container's cpuset, taskset(1)), at most LDMD_HUB_MAX
 *  (each walks the queue for its own feeds). */
#define LDMD_HUB_MAX 16
unsigned ldmd_hub_count(void);

/** The server's hub channel: a SOCK_SEQPACKET pair, [0] the hub's end,
 *  [1] the connection processes'.  @return 0 or -1 (errno) */
int ldmd_hub_channel(int fds[2]);

/**
 * The hub's process: serve the feeds handed over chan until *set->stop.
 * @return the process's exit status
 */
int ldmd_hub_run(const ldmd_settings *set, int chan);

/**
 * In a connection process, after OK to a plain primary FEEDME: hand the
 * feed to the hub over set->hub_fd and wait until it ends (or the server
 * stops).  cursor_us: where the feed starts (pq_cursor_get()).
 * @return LDMD_DONE or LDMD_FAIL, with *end filled (zeros if the hub never
 *         took the feed); -1 if the hub could not be reached before it
 *         had anything, or LDMD_HUB_SHARED if a hub refused it or did not
 *         take it in time: the caller serves the feed itself, and in the
 *         second case a copy of its socket may still wait, unread, in the
 *         channel, so it must shut the socket down at the end (close()
 *         alone would not end the connection).
 */
#define LDMD_HUB_SHARED (-2)
int ldmd_hub_delegate(ldmd_conn *c, const pq_class *cls,
                      const ldm_conf_filter *filter, uint64_t cursor_us,
                      ldmd_hub_end *end);

#endif /* LDMD_SERVER_HUB_H */
