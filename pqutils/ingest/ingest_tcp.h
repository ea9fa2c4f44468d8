/*
 * ingest_tcp.h - noaaportIngester's TCP sources (-T host:port): a stream
 * of SBN frames from a "fanout server", as LDM's blender reads one
 * receiver's frames (docs/noaaport.md, "Two receivers (blending)").  A
 * thread per source connects, moves what it reads into the FIFO
 * (ingest_fifo.h) tagged with its source, and when the connection is lost
 * logs LDM's blender's line and tries again 60 s later, until a stop.
 * Bytes, not datagrams: the frame reader of the source finds the frames.
 */
#ifndef PQUTILS_INGEST_INGEST_TCP_H
#define PQUTILS_INGEST_INGEST_TCP_H

#include <pthread.h>
#include <stdbool.h>

#include "pqutils/ingest/ingest_fifo.h"

#define NP_TCP_RETRY_S 60 /* LDM's blender's */

struct np_tcp {
  struct np_fifo *fifo;
  const char *spec; /* "host:port" */
  unsigned src;     /* its source number in the FIFO */
  double retry_s;   /* NP_TCP_RETRY_S, or less for the tests */
  pthread_t thread;
  bool started;
};

/** Whether spec is "host:port" with a port from 1 to 65535. */
bool np_tcp_spec_ok(const char *spec);

/** Start t's thread.  0, or -1 (logged). */
int np_tcp_start(struct np_tcp *t);

/** Wait for t's thread; it ends at a stop (cli_io.h). */
void np_tcp_join(struct np_tcp *t);

#endif
