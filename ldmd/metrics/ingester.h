/*
 * ingester.h - the ingesters' region of ldmd's metrics file: the figures
 * of a process that is not one of ldmd's children, noaaportIngester, which
 * attaches to the file ldmd made (read-write, ldmm_attach()), claims an
 * entry itself, writes its counters there while it runs and frees the
 * entry at exit (docs/metrics.md, "Ingesters").
 *
 * An entry's owner word is gen << 33 | live << 32 | pid.  A free entry has
 * pid 0; an entry whose pid is no longer a process (the ingester was
 * killed) is free too: a claimer takes it with a compare-and-swap (so two
 * ingesters never take the same one), with the generation bumped and live
 * 0, zeroes the counters and writes the description, then publishes live 1
 * with a release store.  Readers copy only live entries whose pid is a
 * process, and drop an entry whose owner word moved during the copy.  The
 * counters have one writer each (the main thread; a receiver's, its reader
 * thread): relaxed loads and stores, no locked instruction, no system
 * call.  The products also go into the file's per-feedtype aggregates
 * (metrics.h), shared with ldmd's receivers: relaxed atomic adds.  A
 * killed ingester leaves whole counters, and its entry is dropped by
 * readers at once.
 */
#ifndef LDMD_METRICS_INGESTER_H
#define LDMD_METRICS_INGESTER_H

#include "ldmd/metrics/metrics.h"

/** Open ldmd's file at path read-write, its header checked (as
 *  ldmm_open()); NULL with err when it cannot.  Close with ldmm_close(f,
 *  false). */
ldmm_file *ldmm_attach(const char *path, char *err, size_t errlen);

/**
 * Claim an entry for this process: counters zeroed, channel and the
 * receivers' names (nrx of them, at most LDMM_NRX) written, then live.
 * @return the entry, or NULL (f NULL, or every entry taken by a live
 *         process)
 */
ldmm_ingester *ldmm_ingester_claim(ldmm_file *f, const char *channel,
                                   const char *const rx_names[], unsigned nrx);

/** Free the entry (at exit).  e may be NULL. */
void ldmm_ingester_release(ldmm_ingester *e);

/** The owner word's parts. */
static inline uint64_t ldmm_owner(uint64_t gen, bool live, uint32_t pid) {
  return gen << 33 | (uint64_t)live << 32 | pid;
}
static inline uint32_t ldmm_owner_pid(uint64_t o) {
  return (uint32_t)o;
}
static inline bool ldmm_owner_live(uint64_t o) {
  return (o >> 32 & 1) != 0;
}

/** Set a counter this thread alone writes. */
static inline void ldmm__own_set(_Atomic uint64_t *c, uint64_t v) {
  atomic_store_explicit(c, v, memory_order_relaxed);
}

/** The main thread's counters, as the ingester's statistics hold them.
 *  e may be NULL. */
static inline void ldmm_ingester_counts(ldmm_ingester *e, uint64_t frames,
                                        uint64_t missed, uint64_t bytes,
                                        uint64_t fullfifo) {
  if (e == NULL)
    return;
  ldmm__own_set(&e->frames, frames);
  ldmm__own_set(&e->missed, missed);
  ldmm__own_set(&e->bytes, bytes);
  ldmm__own_set(&e->fullfifo, fullfifo);
}

/** The index of a feedtype's aggregate: its bit, or LDMM_FEED_OTHER. */
static inline unsigned ldmm_feed_index(uint32_t feedtype) {
  return feedtype != 0 && (feedtype & (feedtype - 1)) == 0
             ? (unsigned)__builtin_ctz(feedtype)
             : LDMM_FEED_OTHER;
}

/** A product was inserted, or refused for cause (LDMM_DUPLICATE: already
 *  in the queue; another: failed).  Counted in the entry and in the feed
 *  aggregates (latency 0: the ingester makes the product).  e and feeds
 *  may be NULL. */
static inline void ldmm_ingester_product(ldmm_ingester *e, ldmm_feed *feeds,
                                         uint32_t feedtype, uint64_t bytes,
                                         bool inserted, enum ldmm_cause cause) {
  if (e != NULL) {
    ldmm__own_add(&e->products, 1);
    if (inserted)
      ldmm__own_add(&e->inserted[ldmm_feed_index(feedtype)], 1);
    else if (cause == LDMM_DUPLICATE)
      ldmm__own_add(&e->duplicates, 1);
    else
      ldmm__own_add(&e->failed, 1);
  }
  if (inserted)
    ldmm_inserted(NULL, feeds, feedtype, bytes, 0);
  else
    ldmm_refused(NULL, feeds, feedtype, cause);
}

/** A receiver read a datagram of n bytes; queued: the bytes the socket
 *  held as it was read; drops: the kernel's drop count, if known (< 0:
 *  not).  e may be NULL; rx past nrx is ignored. */
static inline void ldmm_ingester_datagram(ldmm_ingester *e, unsigned rx,
                                          uint64_t n, uint64_t queued,
                                          int64_t drops) {
  if (e == NULL || rx >= LDMM_NRX)
    return;
  ldmm_rx *r = &e->rx[rx];
  ldmm__own_add(&r->datagrams, 1);
  ldmm__own_add(&r->bytes, n);
  if (queued > atomic_load_explicit(&r->queue_max, memory_order_relaxed))
    ldmm__own_set(&r->queue_max, queued);
  if (drops >= 0)
    ldmm__own_set(&r->drops, (uint64_t)drops);
}

/** A receiver's buffer size (the kernel's, after SO_RCVBUF). */
static inline void ldmm_ingester_rcvbuf(ldmm_ingester *e, unsigned rx,
                                        uint64_t bytes) {
  if (e != NULL && rx < LDMM_NRX)
    ldmm__own_set(&e->rx[rx].rcvbuf, bytes);
}

/* metrics.c's: entry i of an open file; the region copied into snap. */
ldmm_ingester *ldmm__ingester_at(ldmm_file *f, unsigned i);
ldmm_file *ldmm__open(const char *path, bool rw, char *err, size_t errlen);
void ldmm__ingesters_copy(const uint8_t *base, uint32_t size,
                          ldmm_snapshot *snap);

#endif /* LDMD_METRICS_INGESTER_H */
