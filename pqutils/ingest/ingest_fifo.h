/*
 * ingest_fifo.h - the bytes between noaaportIngester's reader thread (a
 * multicast socket, read at high priority so that the kernel's buffer
 * never overflows) and its builder (frames, products, inserts): a bounded
 * ring of datagrams, LDM's "-b npages" FIFO.  One reader; writers take
 * turns (np_fifo_write_lock()) from reserve to commit.
 *
 * The writer asks for room for a whole datagram (65507 bytes) before each
 * read; when there is none it waits, and that wait is counted (LDM's "Full
 * FIFO" statistic).  The reader takes datagrams in order.  Closing wakes
 * both sides; the reader still gets what was written.
 */
#ifndef PQUTILS_INGEST_INGEST_FIFO_H
#define PQUTILS_INGEST_INGEST_FIFO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NP_DATAGRAM_MAX 65507

struct np_fifo {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_mutex_t wmu; /* held by a writer from reserve to commit */
  uint8_t *buf;
  size_t cap;
  size_t head, tail; /* next record read, next record written */
  size_t wrap;       /* where the written records end before the wrap,
                        or cap */
  bool closed;
  uint64_t fullfifo; /* times the writer waited */
};

/** A FIFO of cap bytes.  0, or -1 (ENOMEM, or cap too small for one
 *  datagram: EINVAL). */
int np_fifo_init(struct np_fifo *q, size_t cap);
void np_fifo_destroy(struct np_fifo *q);

/**
 * Room for one datagram of up to NP_DATAGRAM_MAX bytes, waiting for it.
 * @return where to write it, or NULL once the FIFO is closed
 */
uint8_t *np_fifo_reserve(struct np_fifo *q);
/** For several writers: hold it from np_fifo_reserve() to
 *  np_fifo_commit(), so that one reservation is outstanding at a time. */
void np_fifo_write_lock(struct np_fifo *q);
void np_fifo_write_unlock(struct np_fifo *q);

/** The datagram of n bytes written at the reserved place is in; src (0 to
 *  255) says which of the reader's sockets it came from. */
void np_fifo_commit(struct np_fifo *q, size_t n, unsigned src);

/**
 * The next datagram, waiting up to timeout_ms for one (-1: no limit).  *n
 * is its size, *src its source.  Call np_fifo_release() when done with it.
 * @return NULL if none came in time, or once the FIFO is closed and empty
 *         (np_fifo_done() then says so)
 */
const uint8_t *np_fifo_next(struct np_fifo *q, size_t *n, unsigned *src,
                            int timeout_ms);
/** Closed and empty: nothing more will come. */
bool np_fifo_done(struct np_fifo *q);
void np_fifo_release(struct np_fifo *q);

/** No more writes: wakes the reader (and a waiting writer). */
void np_fifo_close(struct np_fifo *q);

#endif
