/*
 * inflight.h - pq2nats's books of what is in flight (pqutils/nats/pq2nats.1,
 * DESCRIPTION and "The position"): the products published and not yet
 * acknowledged, each with its chunks and its product message; the messages
 * handed back for a retry (the same message, so the same Nats-Msg-Id); the
 * order kept across failures and disconnects; the chunk-before-product rule;
 * the -m and byte limits; and which products have left the books.
 *
 * It owns these rules, and nothing else:
 *
 *   1. A product's message goes out only once every chunk of its product is
 *      acknowledged, and product messages go out in the queue's order
 *      (p2n_add(), p2n_next_ready()).
 *   2. A product leaves the books (its place in the ring is free again) only
 *      once its product message and those of every product before it are
 *      acknowledged: an acknowledgment out of order waits for the ones
 *      before it.  The durable position is not kept here: p2n_ack() gives
 *      back each acknowledged product's tag, which pq2nats releases into
 *      its state file's low-water mark (cli_state.h; the unit test drives
 *      one).
 *   3. After a failed publish or a disconnect nothing new goes out
 *      (p2n_room() is false, p2n_recover() says P2N_WAIT) until, the
 *      connection up and the retry wait over, every message then
 *      unacknowledged is taken back (p2n_take_back()) and, with the failed
 *      ones, handed out again in the queue's order, each product's chunks
 *      before its product message (p2n_resend_list()); and until all of
 *      those are acknowledged.
 *   4. An acknowledgment of a message not in flight (already acknowledged,
 *      or never ours) changes nothing (P2N_ACK_UNKNOWN).
 *
 * Messages are the caller's opaque pointers (pq2nats's natsMsg): the books
 * never create, publish nor destroy one, so the unit test
 * (test/nats/test_nats_inflight.c) drives them without libnats or a
 * server.  Time is the caller's (a monotonic clock in seconds).  Not
 * thread-safe: pq2nats calls every function under its mutex, from its main
 * thread and from libnats's acknowledgment thread.  Safe across fork() (no
 * state outside the struct).
 */
#ifndef PQUTILS_NATS_INFLIGHT_H
#define PQUTILS_NATS_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A product in flight. */
struct p2n_slot {
  uint64_t tag;    /* the caller's (pq2nats: its cli_state token) */
  void *prod;      /* its product message, until it is handed out */
  uint32_t chunks; /* its chunks not yet acknowledged */
  bool acked;      /* its product message is acknowledged */
};

/* A message in flight: which product it is of. */
struct p2n_entry {
  void *msg; /* NULL: free */
  uint64_t slot;
  bool chunk;
};

struct p2n_inflight {
  /* the products in flight: ring[i % cap] for head <= i < tail; product
   * messages go out in order, pub_next the first not yet */
  struct p2n_slot *ring;
  uint64_t cap, head, tail, pub_next;
  /* the messages in flight, by address (open addressing, linear probing) */
  struct p2n_entry *map;
  size_t map_mask;
  uint64_t maxpending, max_bytes; /* -m, and the bytes of data at most */
  uint64_t msgs, bytes;           /* in flight: added, not yet acknowledged */
  /* messages to hand out again, in the order their failures came */
  void **retry;
  size_t nretry, retry_cap;
  unsigned fails;  /* failures since the last acknowledgment */
  double retry_at; /* the time the retries are due */
  /* after a failure (or a disconnect) nothing new goes out until what was
   * in flight is handed out again, in order, and acknowledged: disrupted
   * until then, draining while it is acknowledged */
  bool disrupted, draining;
  int64_t unacked;   /* handed out, neither acknowledged nor failed */
  bool nomem;        /* a failed message could not be kept (rule 3 broken) */
  uint64_t nretried; /* messages handed out again */
  /* the wait before retries after n failures in a row, in ms */
  int64_t (*backoff_ms)(unsigned n);
  /* realloc(), or a test's that fails */
  void *(*realloc_fn)(void *p, size_t n);
};

/**
 * Make empty books for at most maxpending messages (and products) and
 * max_bytes bytes of data in flight (a product larger goes alone).
 * @param backoff_ms  the retry wait after n failures in a row
 * @return 0, or -1 out of memory (p2n_free() is then still to be called).
 */
int p2n_init(struct p2n_inflight *f, uint64_t maxpending, uint64_t max_bytes,
             int64_t (*backoff_ms)(unsigned n));

/** Free the books (not the messages: p2n_drop() gives them back first).
 *  Safe on zeroed books. */
void p2n_free(struct p2n_inflight *f);

/**
 * A message the books still hold and that is not in libnats's hands: the
 * product messages not yet handed out, then the messages waiting for a
 * retry; each is given once, then forgotten.  For the end of a run.
 * @return a message to destroy, or NULL when there is none left.
 */
void *p2n_drop(struct p2n_inflight *f);

/**
 * May a product of nmsgs messages (its chunks and its product message) and
 * size bytes go out now?  Not while recovering (rule 3); not past -m nor
 * max_bytes, unless nothing is in flight (a product of more messages than
 * -m then goes alone: the map of messages grows to take them); not when
 * the ring is full; not when the map cannot grow (out of memory: nomem is
 * then set, the run is to end).
 */
bool p2n_room(struct p2n_inflight *f, uint64_t nmsgs, uint64_t size);

/**
 * Add a product that p2n_room() let in, of size bytes: its nchunks chunks,
 * then its product message prod.
 * @param tag  kept with the product, given back by p2n_ack()
 * @return the product message when it is to go out now (no chunks, its
 *         turn come), else NULL: the chunks go out now, the caller hands
 *         them out; the product message waits for p2n_next_ready().
 */
void *p2n_add(struct p2n_inflight *f, uint64_t tag, void *const *chunks,
              uint32_t nchunks, void *prod, uint64_t size);

/** The next product message whose turn has come (the chunks of its product
 *  acknowledged, the products before it handed out), or NULL.  Not while
 *  recovering (p2n_recover() returns P2N_GO first). */
void *p2n_next_ready(struct p2n_inflight *f);

/** A message is about to be handed to libnats (before: its acknowledgment
 *  may come at once). */
void p2n_sending(struct p2n_inflight *f);

/* What an acknowledgment was. */
enum p2n_acked {
  P2N_ACK_UNKNOWN = 0, /* not in flight: nothing changed, the caller frees */
  P2N_ACK_CHUNK,       /* a chunk of a product */
  P2N_ACK_PRODUCT,     /* a product message: *tag is its product's */
};

/**
 * msg, of len bytes of data (its part of its product's size), was
 * acknowledged: it leaves the books (the caller then frees it), and
 * the oldest products whose product messages are all acknowledged leave
 * the ring (rule 2).
 */
enum p2n_acked p2n_ack(struct p2n_inflight *f, const void *msg, uint64_t len,
                       uint64_t *tag);

/**
 * msg, handed out, failed (or could not be handed out: then after
 * p2n_sending() too): it is kept to go out again once the retry wait,
 * from now, is over; the books are disrupted (rule 3).
 * @return 0; 1 when msg is not in flight (nothing changed, the caller
 *         frees it); -1 when it could not be kept (out of memory): nomem is
 *         then set, the run is to end, and msg is the caller's to free
 *         (its product's position never advances).
 */
int p2n_fail(struct p2n_inflight *f, void *msg, double now);

/* What p2n_recover() says. */
enum p2n_recovery {
  P2N_GO = 0,   /* not recovering: new products may go out */
  P2N_WAIT,     /* recovering: wait (for the connection, the retry wait,
                   or the acknowledgments of what went out again) */
  P2N_TAKE_BACK /* the time has come: take back from libnats what it holds
                   (p2n_take_back()) if p2n_unacked() > 0, then hand out
                   p2n_resend_list(); nothing new goes out meanwhile */
};

/**
 * Where the recovery is (rule 3).
 * @param up   is the connection up?  (false disrupts)
 * @param now  the time
 */
enum p2n_recovery p2n_recover(struct p2n_inflight *f, bool up, double now);

/** Messages handed out and neither acknowledged nor failed. */
int64_t p2n_unacked(const struct p2n_inflight *f);

/**
 * A message handed out and not acknowledged, taken back from libnats
 * (P2N_TAKE_BACK): it joins those to go out again.
 * @return 0, or -1 out of memory (nomem set; the caller frees msg).
 */
int p2n_take_back(struct p2n_inflight *f, void *msg);

/**
 * The messages to go out again, in the queue's order (each product's chunks
 * before its product message), into a new array of *n (the caller frees
 * it, and hands each out with p2n_sending() first).  The books then hold
 * none for a retry.
 * @return the array, or NULL out of memory (nomem set, the books unchanged)
 *         or when *n is 0.
 */
void **p2n_resend_list(struct p2n_inflight *f, size_t *n);

/** Nothing in flight nor waiting for a retry? */
bool p2n_idle(const struct p2n_inflight *f);

#endif /* PQUTILS_NATS_INFLIGHT_H */
