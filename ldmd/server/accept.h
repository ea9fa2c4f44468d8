/*
 * accept.h - taking connections from ldmd's listening sockets, and what
 * to do when the process runs out of descriptors (or of processes).
 *
 * A listening socket stays readable while connections wait in its queue,
 * so a server that returns to poll(2) after accept(2) failed with EMFILE
 * wakes again at once: it spins at full speed, logs every failure, and
 * the waiting connections are never served nor closed.  Here a shortage
 * is an episode:
 *
 *   - when descriptors ran out (EMFILE, ENFILE), the connections waiting
 *     are shed (accepted and closed at once, so their peers learn it and
 *     retry later): a spare descriptor, opened on /dev/null in advance, is
 *     given up for the moment of each accept;
 *   - the listeners are not polled for a pause that doubles with each
 *     failure in a row, from 100 ms up to 5 s, and the next connection
 *     after a pause is tried again;
 *   - one ERROR says that the episode began and why, one NOTICE that it
 *     ended (the first connection handed to its process since), with the
 *     number of connections refused meanwhile.
 *
 * A fork(2) that fails for a connection (ldmd.c) is a shortage as well.
 * The caller keeps the signals it acts on promptly; nothing here waits.
 * One object per process (the top-level ldmd); not thread-safe.
 */
#ifndef LDMD_SERVER_ACCEPT_H
#define LDMD_SERVER_ACCEPT_H

#include <stdbool.h>
#include <stdint.h>

/** ldmd_accept() results besides a descriptor. */
#define LDMD_ACCEPT_NONE (-1)  /**< nothing is waiting: poll again */
#define LDMD_ACCEPT_PAUSE (-2) /**< a shortage: the listeners rest */

typedef struct ldmd_acceptor {
  int spare;         /**< on /dev/null, given up to shed a connection */
  bool shortage;     /**< an episode is going on */
  uint64_t refused;  /**< connections shed or refused in this episode */
  int64_t since_ms;  /**< when it began (monotonic) */
  int pause_ms;      /**< the pause after the last failure */
  int64_t resume_ms; /**< listeners not polled before then */
} ldmd_acceptor;

/** Open the spare descriptor (a failure only means no shedding). */
void ldmd_acceptor_init(ldmd_acceptor *a);

/**
 * Take one waiting connection from the listening socket lfd (its name,
 * "127.0.0.1 port 388", for messages).
 * @return a close-on-exec descriptor; LDMD_ACCEPT_NONE; LDMD_ACCEPT_PAUSE
 *         when descriptors (or memory) ran out: the connections waiting
 *         were shed, and the listeners must rest
 */
int ldmd_accept(ldmd_acceptor *a, int lfd, const char *name);

/**
 * A connection could not be served for want of resources (what: the
 * failed call, "fork"; err its errno): counted as refused, and the
 * listeners rest as after a failed accept.
 */
void ldmd_acceptor_shortage(ldmd_acceptor *a, const char *what, int err);

/** A connection was handed to its process: the end of an episode, if
 *  one was going on (logged with its count). */
void ldmd_acceptor_served(ldmd_acceptor *a);

/** Milliseconds the listeners still rest (0: poll them). */
int ldmd_acceptor_pause_ms(const ldmd_acceptor *a);

/** Close the spare; an episode still going on is logged with its count. */
void ldmd_acceptor_free(ldmd_acceptor *a);

#endif /* LDMD_SERVER_ACCEPT_H */
