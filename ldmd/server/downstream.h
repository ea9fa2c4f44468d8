/*
 * downstream.h - the receiving side of LDM-6 product transfer: taking the
 * products an upstream sends (HEREIS, or COMINGSOON followed by BLKDATA)
 * into the local queue, as LDM's down6 does (docs/protocol.md
 * §7).  Used by ldmd's HIYA receiver and by requesters.
 *
 * Every product is vetted first: its creation time must be within the last
 * max_latency seconds (older products could have been evicted from the
 * queue already, so a duplicate would not be recognised) and not after the
 * class's end, and it must match the class.  Its origin is then rewritten
 * "<origin up to the first _v_>_v_<upstream>" (cut to 64 characters), and
 * it is inserted: a HEREIS with reserve, copy and commit (pq_insert).  A
 * COMINGSOON is answered DONT_SEND when the queue already holds the
 * product (or could never hold it), and reserves nothing: the BLKDATA
 * segments that follow are held in this object's memory and the product
 * is inserted when its last byte has come, so an announcement whose data
 * never comes costs the queue nothing (docs/security.md, "Announced
 * products (COMINGSOON)").  Only the first hold_max bytes of a product
 * are held so (/server/max-product-memory); a longer one gets its room in
 * the queue once that many have come, and the rest goes there straight.
 * For long records the data need not be gathered first: the streaming
 * calls say where the caller is to read each part of it from the socket
 * (receive.c), then insert.
 * Duplicates are dropped silently (an INFO line); too-old and unrequested
 * products get a WARNING; every outcome is counted, and also, when the
 * object is given them (ldmd_down_set_metrics()), in the process's slot of
 * the live figures and in the feedtype's aggregate (ldmd/metrics/metrics.h:
 * a few relaxed atomic adds per product, no lock, no system call).
 *
 * Logs through ldmd/site/log.h.  One object per connection; not thread-safe.
 * The queue handle is borrowed and must belong to this process.
 */
#ifndef LDMD_SERVER_DOWNSTREAM_H
#define LDMD_SERVER_DOWNSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "ldmd/metrics/metrics.h"
#include "ldmd/proto/ldm6_types.h"
#include "pq/pq.h"

/* Results. */
#define LDMD_DOWN_OK 0
#define LDMD_DOWN_EPROTO (-1) /**< the upstream broke the protocol: close */
#define LDMD_DOWN_EQUEUE                                                       \
  (-2) /**< the queue failed: close, the process ends                          \
        */

/** The most of one product's data held in memory by default, as the
 *  registry's /server/max-product-memory. */
#define LDMD_DOWN_HOLD_DEFAULT 16000000u
/** A buffer larger than this is freed when the connection is idle. */
#define LDMD_DOWN_HOLD_KEEP (1u << 20)

typedef struct ldmd_down ldmd_down;

/** What happened to the products received so far. */
typedef struct ldmd_down_stats {
  uint64_t received;   /**< HEREIS and COMINGSOON offers */
  uint64_t inserted;   /**< products put into the queue */
  uint64_t bytes;      /**< data bytes inserted */
  uint64_t duplicates; /**< already in the queue */
  uint64_t too_old;    /**< created before now - max_latency */
  uint64_t unwanted;   /**< outside the class */
  uint64_t too_big;    /**< larger than the queue */
  uint64_t no_room;    /**< the queue had no room (all in use) */
  uint64_t bad;        /**< metadata the queue cannot hold */
  uint64_t incomplete; /**< announced, discarded before its data was all in */
} ldmd_down_stats;

/** Products received that could not be stored for want of the queue or
 *  of their data (no room, too big, unfit metadata, incomplete): not
 *  those refused on purpose (duplicates, too old, unwanted). */
uint64_t ldmd_down_lost(const ldmd_down_stats *st);

/**
 * @param pq           a read-write handle of this process (borrowed)
 * @param upstream     the name written after "_v_" in the origin: the
 *                     REQUEST host, or the pushing peer's name or address
 * @param max_latency  seconds
 * @param cls          the wanted class; taken over (the object frees it,
 *                     also on failure).  Its from is replaced by now -
 *                     max_latency for each product.
 * @return NULL when out of memory
 */
ldmd_down *ldmd_down_new(pq_t *pq, const char *upstream, unsigned max_latency,
                         pq_class *cls);

/** Count into the live figures too: slot and feeds may be NULL. */
void ldmd_down_set_metrics(ldmd_down *d, ldmm_slot *slot, ldmm_feed *feeds);

/** The most bytes of one product held in memory until it is complete
 *  (LDMD_DOWN_HOLD_DEFAULT until set); 0: every product gets its room in
 *  the queue when its first data byte is to be read. */
void ldmd_down_set_hold(ldmd_down *d, uint64_t bytes);

/** The connection is idle: free a large buffer no product is using. */
void ldmd_down_idle(ldmd_down *d);

/** Free; a product still waiting for BLKDATA is discarded. */
void ldmd_down_free(ldmd_down *d);

/** A HEREIS: vet and insert.  @return LDMD_DOWN_OK or LDMD_DOWN_EQUEUE */
int ldmd_down_hereis(ldmd_down *d, const ldm6_product *prod);

/**
 * A COMINGSOON: vet it, look it up in the queue, and take it as the
 * product whose data comes next; nothing is reserved.  A product still
 * waiting for its data is discarded first (with a warning).
 * @param reply  LDM6_OK (send the data) or LDM6_DONT_SEND
 * @return LDMD_DOWN_OK or LDMD_DOWN_EQUEUE
 */
int ldmd_down_comingsoon(ldmd_down *d, const ldm6_comingsoon_args *args,
                         ldm6_errt *reply);

/**
 * A BLKDATA: append its bytes to the product announced by COMINGSOON and
 * commit it when complete.  With no product pending the packet is ignored
 * (a warning; it follows a DONT_SEND).
 * @return LDMD_DOWN_OK; LDMD_DOWN_EPROTO when the signature is not the
 *         pending product's or the data overruns it (LDM then replies
 *         SYSTEM_ERR and closes); LDMD_DOWN_EQUEUE
 */
int ldmd_down_blkdata(ldmd_down *d, const ldm6_datapkt *pkt);

/*
 * Streaming: the data of a long HEREIS or BLKDATA is still on the wire.
 * After *_begin() the caller asks ldmd_down_room() where the next bytes
 * go, reads that many there straight from the socket
 * (ldm6_io_recv_body()), says so with ldmd_down_took(), and so on to the
 * end of the data; then it always calls ldmd_down_stream_end().  A product
 * not taken (refused, duplicate, no COMINGSOON pending) gives take false
 * and a NULL room: the caller reads the bytes and drops them.
 */

/**
 * A HEREIS whose info.sz data bytes follow: vet it (nothing is reserved).
 * @param take  whether its data is wanted
 * @return LDMD_DOWN_OK (a product the queue could never hold is refused)
 */
int ldmd_down_hereis_begin(ldmd_down *d, const ldm6_prod_info *info,
                           bool *take);

/**
 * A BLKDATA whose pkt->data_len bytes follow (pkt->data is not read).
 * @param take  whether they belong to the product announced by
 *              COMINGSOON (false when none is pending: a warning)
 * @return LDMD_DOWN_OK; LDMD_DOWN_EPROTO (another product's signature, or
 *         more bytes than announced: the pending product is discarded)
 */
int ldmd_down_blkdata_begin(ldmd_down *d, const ldm6_datapkt *pkt, bool *take);

/**
 * Where the next of the pending product's data bytes go: room for *n of
 * them (1 .. want, fewer than want where the memory ends and the queue
 * takes over).  NULL (with *n = want) when no product takes them: the
 * product was refused by the queue when given its room (an error was
 * logged) and the caller drops the bytes.  Call ldmd_down_took() for the
 * *n bytes either way.
 * @param ready  how many of the product's next bytes have come already
 *               and can be taken without a wait (in the caller's memory,
 *               or in the socket's receive queue): when they are all that
 *               is missing, the product is in hand, so it is given its
 *               room in the queue now and its bytes go there straight
 *               instead of through this object's memory.  0 when unknown.
 */
void *ldmd_down_room(ldmd_down *d, size_t want, uint64_t ready, size_t *n);

/** Whether the pending product's data would go to this object's memory
 *  (it is not yet given its room in the queue): whether ldmd_down_room()
 *  can use its ready argument, which may cost the caller a system call. */
bool ldmd_down_holding(const ldmd_down *d);

/** n data bytes of the pending product were read (into the last room). */
void ldmd_down_took(ldmd_down *d, size_t n);

/**
 * The bytes promised to the last *_begin() are all there (ok), or did not
 * come (the connection failed: the product is discarded).  A HEREIS is
 * inserted; a BLKDATA's product is inserted once complete.
 * @return LDMD_DOWN_OK or LDMD_DOWN_EQUEUE
 */
int ldmd_down_stream_end(ldmd_down *d, bool ok);

/** The product announced by COMINGSOON whose data is still coming (its
 *  origin rewritten), or NULL. */
const pq_prod_info *ldmd_down_pending(const ldmd_down *d);

/**
 * Give up the product announced by COMINGSOON, if its data is still
 * incomplete: what came of it is dropped with a warning that names it,
 * why, and how many of its bytes came.
 * @return true if a product was pending
 */
bool ldmd_down_discard(ldmd_down *d, const char *why);

/** The counters. */
const ldmd_down_stats *ldmd_down_stats_get(const ldmd_down *d);

/**
 * The products settled so far: those whose fate is final (committed into
 * the queue, or dropped as a duplicate, too old, unwanted, too big, with no
 * room or with bad metadata).  A product announced by COMINGSOON settles
 * only when its last BLKDATA is committed (or when it is refused), never
 * at the announcement: a requester that persists the last settled
 * signature as its resume point then never skips a product whose data it
 * did not get.
 * @param info  if not NULL and the count is not 0, set to the last settled
 *              product's metadata (origin rewritten)
 * @return the number of products settled since ldmd_down_new()
 */
uint64_t ldmd_down_settled(const ldmd_down *d, pq_prod_info *info);

/**
 * LDM's origin rewriting: origin up to its first "_v_", then "_v_" and
 * upstream, cut to PQ_ORIGIN_MAX characters.
 */
void ldmd_down_origin(const char *origin, const char *upstream,
                      char out[PQ_ORIGIN_MAX + 1]);

#endif /* LDMD_SERVER_DOWNSTREAM_H */
