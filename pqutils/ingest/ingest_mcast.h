/*
 * ingest_mcast.h - noaaportIngester's multicast input: the group's socket
 * on each interface given (LDM's: bound to the group and its port, joined
 * on the interface, SO_RCVBUF as -R says; with several interfaces each
 * socket takes only its own interface's datagrams), and the reader thread
 * that moves their datagrams into the FIFO (ingest_fifo.h), tagged with
 * the socket they came from, at real-time priority where the system
 * allows (LDM's), until a stop.  A socket that fails is logged and left
 * out; the others go on (a site's second dish); the reader ends when none
 * is left.
 */
#ifndef PQUTILS_INGEST_INGEST_MCAST_H
#define PQUTILS_INGEST_INGEST_MCAST_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/ingest_fifo.h"
#include "pqutils/ingest/ingest_run.h"

struct np_mcast {
  struct np_fifo *fifo;
  int fd[NP_MAX_SOURCES];
  size_t nfd;
  pthread_t thread;
  int started;
  bool failed;        /* the reader stopped because every socket failed */
  ldmm_ingester *fig; /* live figures of each socket (receiver); NULL */
};

/**
 * Open and join: one socket per interface (none: one, the system's
 * choice).  Logs LDM's receive-buffer lines.
 * @return 0, or -1 (logged; what was opened is closed by np_mcast_close())
 */
int np_mcast_open(struct np_mcast *m, const struct in_addr *group,
                  uint16_t port, const char *const ifaces[], size_t nifaces,
                  uint64_t rcvbuf);

/** Start the reader thread.  0, or -1 (logged). */
int np_mcast_start(struct np_mcast *m);

/** Wait for the reader thread (it ends at a stop, or when the FIFO is
 *  closed). */
void np_mcast_join(struct np_mcast *m);

void np_mcast_close(struct np_mcast *m);

/** Ask for real-time priority for the calling thread, below_max under the
 *  highest; warn if the system refuses. */
void np_mcast_realtime(const char *who, int below_max);

#endif
