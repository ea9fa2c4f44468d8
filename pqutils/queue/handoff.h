/*
 * handoff.h - passing work in order from one thread to another: a ring of
 * slot numbers bounded both in count and in weight (bytes), for pqinsert's
 * reader thread and inserting thread.
 *
 * Each side spins briefly before it sleeps, and wakes the other only when
 * that one sleeps: at 200,000 items a second, a futex wake per item would
 * cost more than the work (a cross-CPU wake-up on a virtual machine takes
 * tens of microseconds).  One producer thread, one consumer thread.
 */
#ifndef PQUTILS_QUEUE_HANDOFF_H
#define PQUTILS_QUEUE_HANDOFF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct handoff {
  _Atomic uint64_t head;   /* next item the consumer takes */
  _Atomic uint64_t tail;   /* next slot the producer fills */
  _Atomic uint64_t weight; /* weight of the items published, not released */
  atomic_bool closed;      /* the producer is done */
  atomic_bool stopped;     /* the consumer wants no more */
  atomic_int consumer_sleeps, producer_sleeps;
  uint64_t size, max_weight;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

/** A ring of `size` slots holding at most max_weight (one heavier item
 *  always fits when the ring is empty). */
void handoff_init(struct handoff *h, uint64_t size, uint64_t max_weight);
void handoff_destroy(struct handoff *h);

/* ---- producer ---- */
/** Wait for a free slot; its number (0..size-1) in *slot.  false: the
 *  consumer stopped. */
bool handoff_wait_room(struct handoff *h, uint64_t *slot);
/** Publish the slot filled since handoff_wait_room(), with its weight. */
void handoff_publish(struct handoff *h, uint64_t weight);
/** No more items. */
void handoff_close(struct handoff *h);
/** Items published and not yet released (a hint: it changes at once). */
uint64_t handoff_pending(struct handoff *h);

/* ---- consumer ---- */
/** Wait for the next item; its slot in *slot.  false: closed and empty. */
bool handoff_wait_item(struct handoff *h, uint64_t *slot);
/** Is the k-th item after the next one (k = 0: the next) published?  Its
 *  slot in *slot if so; never waits.  Items are still released in order. */
bool handoff_peek(struct handoff *h, uint64_t k, uint64_t *slot);
/** Give the item's slot back, with the weight it was published with. */
void handoff_release(struct handoff *h, uint64_t weight);
/** Ask the producer to stop (its next handoff_wait_room() fails). */
void handoff_stop(struct handoff *h);

#endif /* PQUTILS_QUEUE_HANDOFF_H */
