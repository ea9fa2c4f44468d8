/*
 * fanout_sink.h - the cheap subscriber of fanout_bench (fanout_bench.c):
 * one LDM-6 connection that asks an upstream ldmd for everything (FEEDME,
 * primary mode: every product a one-way HEREIS), reads each product and
 * drops its bytes, answers the NULLPROCs that flush the feed, and notes
 * for each product, by its seqno, how long after its creation (the
 * prod_info's arrival time, set by whoever inserted it upstream) its last
 * byte came.  It stores nothing, so what a run of sinks costs the machine
 * is the upstream's sending and little else: the upstream's cost seen
 * apart from the downstreams'.
 *
 * Speaks the protocol through the project's ldmd/proto library (rpc_io's
 * streamed records: the head and metadata decoded, the data read and
 * dropped).  One sink per process (fanout_bench forks them); its figures
 * go into memory the bench shares with it.
 */
#ifndef TEST_BENCH_FANOUT_SINK_H
#define TEST_BENCH_FANOUT_SINK_H

#include <signal.h>
#include <stdint.h>

/** What one sink tells the bench (in shared memory; the sink writes, the
 *  bench reads). */
typedef struct fs_slot {
  volatile int connected;    /**< FEEDME answered OK */
  volatile int done;         /**< the sink has ended (see error) */
  volatile uint64_t arrived; /**< distinct products of seqno < cap */
  volatile uint64_t bytes;   /**< their bytes */
  volatile uint64_t dups;    /**< products of a seqno seen before */
  volatile uint64_t strays;  /**< products of seqno >= cap */
  volatile uint64_t last_us; /**< when the last product came (epoch us) */
  volatile uint64_t lagged;  /**< a real downstream (the bench reads its
                                  queue): products the bench found oldest
                                  in that queue after the first, so it may
                                  have missed some the ring evicted */
  char error[160];           /**< why it ended early, or "" */
} fs_slot;

/**
 * Connect to 127.0.0.1:port, FEEDME everything created since an hour
 * ago, and take products until *stop is set (by a signal) or the
 * connection ends.  lat[seqno] (cap entries, -1 beforehand) gets each
 * product's latency in microseconds from its creation to its arrival
 * here (at least 0).
 * @return 0 when stopped, -1 after a failure (slot->error says which)
 */
int fs_run(unsigned port, fs_slot *slot, int32_t *lat, uint32_t cap,
           const volatile sig_atomic_t *stop);

#endif /* TEST_BENCH_FANOUT_SINK_H */
