/*
 * wait.c - waking readers without signals.
 *
 * The header holds a futex word, hd_commit_seq, that every commit
 * increments, and a bitmap of the readers asleep on it, hd_sleepers.  A
 * committing writer makes the futex system call only when some bit is set,
 * so an insert with no sleeping reader costs one atomic add and a look at
 * two cache lines.  A reader at the end of the queue first spins briefly (on
 * a virtual machine, parking and being woken costs tens of microseconds and
 * sometimes milliseconds, while a product often follows within
 * microseconds), then sets its bit and sleeps.  The order (the reader sets
 * its bit before the kernel compares the word; the writer increments the
 * word before it reads the bits, both sequentially consistent) means a
 * wake-up cannot be lost.
 *
 * A reader killed in its sleep cannot clear its bit.  Each sleeping handle
 * therefore owns a waiter lock byte (format.h), held for the handle's life
 * and dropped by the kernel when the process dies.  When a wake-up finds
 * bits set but wakes nobody, the writer probes the lock bytes of the set
 * bits and clears those whose owner is gone, so a crash costs at most one
 * useless system call, not one per commit for ever.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>

#include "pq/internal.h"

#define NWORDS (PQ_MAX_WAITERS / 64)

/* Clear the bits of sleepers whose process died (their lock byte is free). */
static void reap_dead_sleepers(pq_t *pq) {
  uint64_t *words = pq->hdr->hd_sleepers;
  for (unsigned w = 0; w < NWORDS; w++) {
    uint64_t bits = __atomic_load_n(&words[w], __ATOMIC_SEQ_CST);
    while (bits != 0) {
      unsigned b = (unsigned)__builtin_ctzll(bits);
      bits &= bits - 1;
      unsigned idx = w * 64 + b;
      if (pq->waiter >= 0 && idx == (unsigned)pq->waiter)
        continue;
      if (pq__sys_lock_held(pq->fd, F_WRLCK, PQ_LOCK_WAITER + idx, 1) == 0)
        __atomic_fetch_and(&words[w], ~(UINT64_C(1) << b), __ATOMIC_SEQ_CST);
    }
  }
}

void pq__notify_commit(pq_t *pq) {
  struct pq_hdr *h = pq->hdr;
  __atomic_fetch_add(&h->hd_commit_seq, 1, __ATOMIC_SEQ_CST);
  for (unsigned w = 0; w < NWORDS; w++) {
    if (__atomic_load_n(&h->hd_sleepers[w], __ATOMIC_SEQ_CST) != 0) {
      if (pq__futex_wake(&h->hd_commit_seq) == 0 && pq->map_writable)
        reap_dead_sleepers(pq);
      return;
    }
  }
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

/* Take a waiter lock byte for this handle's life; false if none is free or
 * the mapping cannot be written. */
static bool have_waiter_byte(pq_t *pq) {
  if (pq->waiter >= 0)
    return true;
  if (!pq->map_writable)
    return false;
  int i = pq__lock_free_byte(pq, PQ_LOCK_WAITER, PQ_MAX_WAITERS);
  if (i < 0)
    return false;
  pq->waiter = i;
  return true;
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
    if (pq->spin_us == 0 ||
        ((i & 63) == 63 && mono_us() - start >= (int64_t)pq->spin_us))
      break;
    cpu_relax();
  }

  /* A reader that cannot register sleeps in short slices instead (writers
   * do not know it waits). */
  bool registered = have_waiter_byte(pq);
  uint64_t *bitword = NULL, bit = 0;
  if (registered) {
    bitword = &pq->hdr->hd_sleepers[pq->waiter / 64];
    bit = UINT64_C(1) << (pq->waiter % 64);
    __atomic_fetch_or(bitword, bit, __ATOMIC_SEQ_CST);
  }
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
    __atomic_fetch_and(bitword, ~bit, __ATOMIC_SEQ_CST);
  return rc;
}
