/*
 * handoff.c - the single-producer, single-consumer ring of handoff.h.
 *
 * The indexes are atomics written by one side each; the slots' contents are
 * published by the release store of the tail (or head) and acquired by the
 * other side's load.  A side that finds nothing to do spins for SPIN_US,
 * then sleeps on a condition variable after raising its "sleeps" flag; the
 * other side signals only when it sees that flag.  The flag and the index
 * are written and read sequentially consistently in opposite orders
 * (Dekker), so either the sleeper sees the new index before it sleeps or
 * the waker sees the flag and signals under the mutex the sleeper holds
 * until it waits: no wake-up is lost.
 */
#include "pqutils/queue/handoff.h"

#include "pqutils/common/cli_io.h"

#define SPIN_US 50

void handoff_init(struct handoff *h, uint64_t size, uint64_t max_weight) {
  atomic_init(&h->head, 0);
  atomic_init(&h->tail, 0);
  atomic_init(&h->weight, 0);
  atomic_init(&h->closed, false);
  atomic_init(&h->stopped, false);
  atomic_init(&h->consumer_sleeps, 0);
  atomic_init(&h->producer_sleeps, 0);
  h->size = size;
  h->max_weight = max_weight;
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->cv, NULL);
}

void handoff_destroy(struct handoff *h) {
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->cv);
}

static uint64_t mono_us(void) {
  return (uint64_t)(cli_monotonic() * 1e6);
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static bool item_ready(struct handoff *h) {
  return atomic_load(&h->tail) !=
             atomic_load_explicit(&h->head, memory_order_relaxed) ||
         atomic_load(&h->closed);
}

static bool room_ready(struct handoff *h) {
  uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
  uint64_t head = atomic_load(&h->head);
  return atomic_load(&h->stopped) ||
         (tail - head < h->size &&
          (tail == head || atomic_load(&h->weight) < h->max_weight));
}

/* Spin, then sleep, until ready(h). */
static void park(struct handoff *h, atomic_int *sleeps,
                 bool (*ready)(struct handoff *)) {
  uint64_t start = 0;
  for (unsigned i = 0;; i++) {
    if (ready(h))
      return;
    if ((i & 63) == 63) {
      uint64_t t = mono_us();
      if (start == 0)
        start = t;
      else if (t - start > SPIN_US)
        break;
    }
    relax();
  }
  pthread_mutex_lock(&h->mu);
  atomic_store(sleeps, 1);
  while (!ready(h))
    pthread_cond_wait(&h->cv, &h->mu);
  atomic_store(sleeps, 0);
  pthread_mutex_unlock(&h->mu);
}

static void wake(struct handoff *h, atomic_int *sleeps) {
  if (atomic_load(sleeps) == 0)
    return;
  pthread_mutex_lock(&h->mu);
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
}

bool handoff_wait_room(struct handoff *h, uint64_t *slot) {
  park(h, &h->producer_sleeps, room_ready);
  if (atomic_load(&h->stopped))
    return false;
  *slot = atomic_load_explicit(&h->tail, memory_order_relaxed) % h->size;
  return true;
}

void handoff_publish(struct handoff *h, uint64_t weight) {
  atomic_fetch_add(&h->weight, weight);
  atomic_store(&h->tail,
               atomic_load_explicit(&h->tail, memory_order_relaxed) + 1);
  wake(h, &h->consumer_sleeps);
}

uint64_t handoff_pending(struct handoff *h) {
  return atomic_load_explicit(&h->tail, memory_order_relaxed) -
         atomic_load(&h->head);
}

void handoff_close(struct handoff *h) {
  atomic_store(&h->closed, true);
  wake(h, &h->consumer_sleeps);
}

bool handoff_wait_item(struct handoff *h, uint64_t *slot) {
  park(h, &h->consumer_sleeps, item_ready);
  uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
  if (atomic_load(&h->tail) == head)
    return false; /* closed, and the last item is taken */
  *slot = head % h->size;
  return true;
}

bool handoff_peek(struct handoff *h, uint64_t k, uint64_t *slot) {
  uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
  if (atomic_load(&h->tail) - head <= k)
    return false;
  *slot = (head + k) % h->size;
  return true;
}

void handoff_release(struct handoff *h, uint64_t weight) {
  atomic_fetch_sub(&h->weight, weight);
  atomic_store(&h->head,
               atomic_load_explicit(&h->head, memory_order_relaxed) + 1);
  wake(h, &h->producer_sleeps);
}

void handoff_stop(struct handoff *h) {
  atomic_store(&h->stopped, true);
  wake(h, &h->producer_sleeps);
}
