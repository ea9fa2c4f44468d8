/*
 * ingest_fifo.c - the reader-to-builder ring of ingest_fifo.h.  Records are
 * a 4-byte header (the length in the low 24 bits, the source in the high 8)
 * and the datagram, contiguous: when the room left before
 * the end of the buffer cannot take a whole datagram, the writer marks
 * where the records end (wrap) and goes on at the start.  Only the writer
 * moves positions back to the start, under the lock, and only where no
 * record is held: a reservation stays where it was made.
 */
#include "pqutils/ingest/ingest_fifo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REC_HDR 4
#define REC_MAX (REC_HDR + NP_DATAGRAM_MAX)

int np_fifo_init(struct np_fifo *q, size_t cap) {
  memset(q, 0, sizeof *q);
  if (cap < REC_MAX + 1) {
    errno = EINVAL;
    return -1;
  }
  q->buf = malloc(cap);
  if (q->buf == NULL)
    return -1;
  q->cap = cap;
  q->wrap = cap;
  (void)pthread_mutex_init(&q->mu, NULL);
  (void)pthread_mutex_init(&q->wmu, NULL);
  pthread_condattr_t ca;
  (void)pthread_condattr_init(&ca);
  (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  (void)pthread_cond_init(&q->cv, &ca);
  (void)pthread_condattr_destroy(&ca);
  return 0;
}

void np_fifo_destroy(struct np_fifo *q) {
  free(q->buf);
  (void)pthread_mutex_destroy(&q->mu);
  (void)pthread_mutex_destroy(&q->wmu);
  (void)pthread_cond_destroy(&q->cv);
}

void np_fifo_write_lock(struct np_fifo *q) {
  (void)pthread_mutex_lock(&q->wmu);
}

void np_fifo_write_unlock(struct np_fifo *q) {
  (void)pthread_mutex_unlock(&q->wmu);
}

/* Room for a whole record at the tail, wrapping if need be?  Under mu.
 * The ring is empty when head == tail; the writer never lets the tail
 * catch up with the head from behind. */
static bool room_locked(struct np_fifo *q) {
  if (q->tail >= q->head) { /* free: [tail, cap) and [0, head) */
    if (q->cap - q->tail >= REC_MAX)
      return true;
    if (q->head == q->tail) { /* everything was read: start over */
      q->head = q->tail = 0;
      return true;
    }
    if (q->head > REC_MAX) { /* wrap: the records end at tail */
      q->wrap = q->tail;
      q->tail = 0;
      return true;
    }
    return false;
  }
  return q->head - q->tail > REC_MAX; /* free: [tail, head) */
}

uint8_t *np_fifo_reserve(struct np_fifo *q) {
  (void)pthread_mutex_lock(&q->mu);
  bool counted = false;
  while (!q->closed && !room_locked(q)) {
    if (!counted) /* read by the statistics, without the lock */
      __atomic_add_fetch(&q->fullfifo, 1, __ATOMIC_RELAXED);
    counted = true;
    (void)pthread_cond_wait(&q->cv, &q->mu);
  }
  uint8_t *p = q->closed ? NULL : q->buf + q->tail + REC_HDR;
  (void)pthread_mutex_unlock(&q->mu);
  return p;
}

void np_fifo_commit(struct np_fifo *q, size_t n, unsigned src) {
  (void)pthread_mutex_lock(&q->mu);
  uint32_t len = (uint32_t)n | (src & 0xffu) << 24;
  memcpy(q->buf + q->tail, &len, REC_HDR);
  q->tail += REC_HDR + n;
  (void)pthread_cond_broadcast(&q->cv);
  (void)pthread_mutex_unlock(&q->mu);
}

/* Wait on the condition until the deadline (NULL: none): false once it
 * has passed. */
static bool wait_until(struct np_fifo *q, const struct timespec *deadline) {
  if (deadline == NULL)
    return pthread_cond_wait(&q->cv, &q->mu) == 0;
  return pthread_cond_timedwait(&q->cv, &q->mu, deadline) != ETIMEDOUT;
}

const uint8_t *np_fifo_next(struct np_fifo *q, size_t *n, unsigned *src,
                            int timeout_ms) {
  struct timespec dl, *deadline = NULL;
  if (timeout_ms >= 0) {
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
    deadline = &dl;
  }
  (void)pthread_mutex_lock(&q->mu);
  for (;;) {
    if (q->head == q->wrap && q->head != q->tail) { /* follow the wrap */
      q->head = 0;
      q->wrap = q->cap;
    }
    if (q->head != q->tail || q->closed || !wait_until(q, deadline))
      break;
  }
  const uint8_t *p = NULL;
  if (q->head != q->tail) {
    uint32_t hdr;
    memcpy(&hdr, q->buf + q->head, REC_HDR);
    *n = hdr & 0xffffffu;
    *src = hdr >> 24;
    p = q->buf + q->head + REC_HDR;
  }
  (void)pthread_mutex_unlock(&q->mu);
  return p;
}

bool np_fifo_done(struct np_fifo *q) {
  (void)pthread_mutex_lock(&q->mu);
  bool done = q->closed && q->head == q->tail;
  (void)pthread_mutex_unlock(&q->mu);
  return done;
}

void np_fifo_release(struct np_fifo *q) {
  (void)pthread_mutex_lock(&q->mu);
  uint32_t hdr;
  memcpy(&hdr, q->buf + q->head, REC_HDR);
  q->head += REC_HDR + (hdr & 0xffffffu); /* the writer alone moves both
                                             back to 0 */
  (void)pthread_cond_broadcast(&q->cv);
  (void)pthread_mutex_unlock(&q->mu);
}

void np_fifo_close(struct np_fifo *q) {
  (void)pthread_mutex_lock(&q->mu);
  q->closed = true;
  (void)pthread_cond_broadcast(&q->cv);
  (void)pthread_mutex_unlock(&q->mu);
}
