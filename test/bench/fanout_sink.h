/*
 * fanout_sink.h - the cheap subscriber of fanout_bench (fanout_bench.c):
 * one LDM-6 connection that asks an upstream ldmd for everything (FEEDME,
 * primary mode: every product a one-way HEREIS), takes each product and
 * drops its bytes, answers the NULLPROCs that flush the feed, and notes
 * for each product, by its seqno, how long after its creation (the
 * prod_info's arrival time, set by whoever inserted it upstream) its last
 * byte came, and whether its signature is the one inserted under that
 * seqno.  It stores nothing, so what a run of sinks costs the machine is
 * the upstream's sending and as little else as a receiver can cost: the
 * upstream's cost seen apart from the downstreams'.
 *
 * Two ways of taking a product's bytes (fs_way; fanout_bench -S): by
 * default the data is discarded in the kernel (recv(2) with MSG_TRUNC),
 * never copied into the sink; FS_READ reads every byte through the
 * project's rpc_io, as the bench's sink did before, to compare the two.
 * One sink per process (fanout_bench forks them); its figures go into
 * memory the bench shares with it.
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
  volatile uint64_t badsig;  /**< products whose signature is not the one
                                  inserted under their seqno (not counted
                                  as arrived: they count as lost) */
  volatile uint64_t last_us; /**< when the last product came (epoch us) */
  volatile uint64_t lagged;  /**< a real downstream (the bench reads its
                                  queue): products the bench found oldest
                                  in that queue after the first, so it may
                                  have missed some the ring evicted */
  char error[160];           /**< why it ended early, or "" */
} fs_slot;

/** How a sink takes a product's data. */
typedef enum fs_way {
  FS_DISCARD, /**< marks and each record's start read; the data dropped by
                   the kernel (MSG_TRUNC), never copied to the sink */
  FS_READ     /**< every byte read through rpc_io (the sink until
                   2026-12-07) */
} fs_way;

/** One sink's task. */
typedef struct fs_conf {
  unsigned port;       /**< the upstream's, on 127.0.0.1 */
  fs_way way;          /**< how the data is taken */
  int32_t *lat;        /**< cap entries, -1 beforehand: each product's
                            latency in us from its creation to its arrival
                            (at least 0) */
  uint32_t cap;        /**< seqnos counted: 0..cap-1 */
  const uint8_t *sigs; /**< cap x 16 bytes: the signature inserted under
                            each seqno, written before the product goes in;
                            NULL: not checked */
} fs_conf;

/**
 * Connect to 127.0.0.1:c->port, FEEDME everything created since an hour
 * ago, and take products until *stop is set (by a signal) or the
 * connection ends.  A record shorter or longer than its contents, a
 * connection closed inside one, or garbage ends the sink with the reason.
 * @return 0 when stopped, -1 after a failure (slot->error says which)
 */
int fs_run(const fs_conf *c, fs_slot *slot, const volatile sig_atomic_t *stop);

#endif /* TEST_BENCH_FANOUT_SINK_H */
