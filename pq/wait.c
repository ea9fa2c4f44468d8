/*
 * wait.c - waking readers without signals.  The header holds a futex word,
 * hd_commit_seq, that every commit increments, and a count of the readers
 * sleeping on it.  A committing writer makes the futex system call only when
 * that count is not zero, so an insert with no sleeping reader costs one
 * atomic add.  A reader at the end of the queue first spins briefly (on a
 * virtual machine, parking and being woken costs tens of microseconds and
 * sometimes milliseconds, while a product often follows within microseconds),
 * then registers and sleeps.  The Dekker-style order (the reader increments
 * the count before the kernel compares the word; the writer increments the
 * word before reading the count, both sequentially consistent) means a
 * wake-up cannot be lost.
 */
#include <errno.h>
#include <time.h>

#include "pq/internal.h"

void pq__notify_commit(pq_t *pq) {
  struct pq_hdr *h = pq->hdr;
  __atomic_fetch_add(&h->hd_commit_seq, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&h->hd_waiters, __ATOMIC_SEQ_CST) != 0)
    (void)pq__futex_wake(&h->hd_commit_seq);
}

void pq_set_spin(pq_t *pq, unsigned spin_us) {
  pq->spin_us = spin_us;
}

static int64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int pq_wait(pq_t *pq, int timeout_ms) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  uint32_t *word = &pq->hdr->hd_commit_seq;
  uint32_t seen = pq->seen_seq;
  int64_t start = mono_us();
  int64_t deadline = timeout_ms < 0 ? INT64_MAX : start + timeout_ms * 1000LL;

  for (unsigned i = 0;; i++) {
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
      return PQ_OK;
    if ((i & 63) == 63 && mono_us() - start >= (int64_t)pq->spin_us)
      break;
    if (pq->spin_us == 0)
      break;
    cpu_relax();
  }

  /* A reader that cannot write the mapping cannot register: it sleeps in
   * short slices instead (writers do not know it waits). */
  bool registered = pq->map_writable;
  if (registered)
    __atomic_fetch_add(&pq->hdr->hd_waiters, 1, __ATOMIC_SEQ_CST);
  rc = PQ_TIMEDOUT;
  for (;;) {
    if (__atomic_load_n(word, __ATOMIC_SEQ_CST) != seen) {
      rc = PQ_OK;
      break;
    }
    int64_t now = mono_us();
    if (now >= deadline)
      break;
    int64_t left_ms = (deadline - now + 999) / 1000;
    if (!registered && left_ms > 10)
      left_ms = 10;
    if (left_ms > 3600000)
      left_ms = 3600000;
    if (pq__futex_wait(word, seen, (int)left_ms) < 0 && errno == EINTR) {
      rc = PQ_OK; /* a signal: let the caller look at its flags */
      break;
    }
  }
  if (registered)
    __atomic_fetch_sub(&pq->hdr->hd_waiters, 1, __ATOMIC_SEQ_CST);
  return rc;
}
