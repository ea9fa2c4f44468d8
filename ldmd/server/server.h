/*
 * server.h - what the parts of the ldmd server share: the settings the
 * top-level process hands to each connection child, the connection context
 * every handler works on, and the handlers themselves.
 *
 * The top-level ldmd (ldmd.c) listens, forks one child per connection and
 * calls ldmd_conn_serve() in it.  The child (server_conn.c) checks that the
 * peer may connect, then serves calls; the first FEEDME or NOTIFYME turns
 * the connection around for good (upstream.c), HIYA makes it a receiver of
 * pushed products (hiya.c, with downstream.c; long products through
 * receive.c).  A requester process (requester.c) makes an ldmd_conn for
 * its own connection and receives products with the same handlers.
 * Everything a handler needs is in the ldmd_conn it is given: no
 * file-scope connection state.
 *
 * Not thread-safe: one connection per process, as LDM.
 */
#ifndef LDMD_SERVER_SERVER_H
#define LDMD_SERVER_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldmd/metrics/metrics.h"
#include "ldmd/server/downstream.h"
#include "ldmd/site/ldmd_conf.h"
#include "ldmd/proto/rpc_io.h"
#include "pq/pq.h"

#ifndef LDMD_VERSION
#define LDMD_VERSION "0.1.0"
#endif

/* Timers (docs/protocol.md §17), in milliseconds. */
#define LDMD_IDLE_MS (4 * 30000)    /**< silence before the first call */
#define LDMD_SYNC_TIMEOUT_MS 60000  /**< a synchronous v6 call */
#define LDMD_V5_KEEPALIVE_MS 300000 /**< NULLPROC of an idle v5 feed */
#define LDMD_SLICE_MS 1000          /**< longest wait between checks */
#define LDMD_HANDSHAKE_MS 30000     /**< a TLS handshake, from its first byte */
/** Bytes of a record gathered before its data is streamed (receive.c):
 *  more than any record but HEREIS and BLKDATA (a class of 32 specs with
 *  255-character patterns and its RPC header take about 8.5 KB). */
#define LDMD_RECORD_HEAD 16384
/** Bytes of a longer record (a HEREIS or BLKDATA) gathered before its data
 *  is read straight where it goes (ldm6_io_set_stream_start()): an RPC
 *  call header with the largest credentials and verifier (24 + 2 x 408
 *  bytes) and the largest product metadata (368) take 1,208. */
#define LDMD_RECORD_START 2048

/** Settings of the server, read-only in the children. */
typedef struct ldmd_settings {
  const ldm_conf *conf;
  const char *queue_path;
  unsigned max_latency; /**< seconds (-m) */
  unsigned time_offset; /**< seconds (-o) */
  unsigned rpc_timeout; /**< seconds (-t): LDM-5 calls */
  unsigned port;        /**< the port ldmd listens on (-P) */
  int interval_ms;      /**< keep-alive NULLPROC of an idle feed */
  int silence_ms;       /**< a requester's limit on upstream silence */
  int retry_min_ms;     /**< a requester's first reconnection delay */
  int retry_max_ms;     /**< ... and its bound */
  int autoshift_ms;     /**< period of the primary/alternate evaluation */
  /** A new connection's time for its first whole call (slowloris). */
  int first_call_ms;
  /** The upstream database (feeds.h), shared by the connection
   *  processes; NULL: none (a requester's connection). */
  struct ldmd_feeds *feeds;
  bool anti_dos;  /**< /server/enable-anti-DOS */
  bool zero_copy; /**< /server/zero-copy: sendfile to plain feeds */
  bool feed_hub;  /**< /server/feed-hub: the hub serves plain feeds */
  /** The connection processes' end of the feed hub's channel (hub.h),
   *  or -1: no hub. */
  int hub_fd;
  /** /server/check-sent EACH: a feed checks every product it sends, not
   *  only those no reader has found sound (ONCE). */
  bool check_each;
  /** The largest product a peer may send, in bytes (0: what the queue
   *  can hold, LDM's only bound). */
  uint64_t max_product;
  /** The most of one product's data a connection holds in memory until
   *  the product is complete (downstream.h, ldmd_down_set_hold()). */
  uint64_t max_product_memory;
  /** Directory of the requesters' resume files ("": beside the queue). */
  const char *state_dir;
  /** Set by SIGTERM (and SIGINT): stop at the next check. */
  volatile sig_atomic_t *stop;
  /** The live figures (shared with every process), or NULL when off. */
  ldmm_file *metrics;
  /** This process's slot of them: set in the child after fork(); -1 for
   *  none. */
  int metrics_slot;
  /** TLS (registry /tls/...; docs/security.md): the listener's context
   *  and the requesters', or NULL when TLS is not configured. */
  SSL_CTX *tls_server;
  SSL_CTX *tls_client;
} ldmd_settings;

/** One connection, in its child process. */
typedef struct ldmd_conn {
  const ldmd_settings *set;
  ldm6_io *io;
  /** Monotonic ms by which the first whole call must have come (counted
   *  from the start of the connection process, right after accept), or 0
   *  once it has: see ldmd_conn_deadline_left_ms(). */
  int64_t deadline_ms;
  char ip[64];     /**< the peer's address text */
  char name[1025]; /**< its reverse-DNS name (NI_MAXHOST), or the address */
  bool named;      /**< name is a real name */
  char peer[1100]; /**< "name (address)" or "address", for messages */
  /** The peer's TLS identity for ldmd.conf's "{...}" rules: &tls_id on a
   *  TLS connection, NULL on a plain one. */
  const ldm_conf_peer_id *tls;
  ldm_conf_peer_id tls_id;
  const char *tls_dns[LDM6_TLS_MAX_DNS]; /**< tls_id.dns points here */
  /** Connection children of the server when this one was forked (for
   *  IS_ALIVE). */
  const pid_t *siblings;
  size_t nsiblings;
  /* After HIYA: the queue (read-write) and the receiving side. */
  pq_t *pq;
  ldmd_down *down;
  /** A push (HIYA): a NULLPROC is answered SUCCESS only if every product
   *  since the one before was stored or refused on purpose. */
  bool push;
  uint64_t lost_told; /**< ldmd_down_lost() at the last NULLPROC */
  /** This process's figures and the feed aggregates (NULL: none). */
  ldmm_slot *ms;
  ldmm_feed *mfeeds;
} ldmd_conn;

/** What a handler asks the call loop to do next. */
enum ldmd_next {
  LDMD_CONTINUE = 0, /**< serve the next call */
  LDMD_DONE = 1,     /**< close the connection: all went well */
  LDMD_FAIL = 2      /**< close the connection: something failed */
};

/* ---- server_conn.c ---- */

/**
 * Serve one accepted connection in a child process: check the peer against
 * ALLOW and ACCEPT, then serve calls until the peer leaves, the connection
 * fails or *set->stop is set.  Takes ownership of fd.
 * @return the child's exit status (0 when all went well)
 */
int ldmd_conn_serve(const ldmd_settings *set, int fd, const pid_t *siblings,
                    size_t nsiblings);

/**
 * What is left of the first-call deadline (/server/first-call-limit),
 * in milliseconds: what a step before the first call (the name lookup, a
 * TLS handshake) may still wait.  0 when the deadline has passed: close
 * the connection (ldmd_conn_serve() logs it when its call loop sees it);
 * -1 when there is no deadline any more (the first call came).
 */
int ldmd_conn_deadline_left_ms(const ldmd_conn *c);
/** Fill c->tls_id from a TLS connection's handshake and point c->tls at
 *  it (a requester's connection too). */
void ldmd_conn_tls_identity(ldmd_conn *c);

/** The peer's name for messages ("host (1.2.3.4)" or "1.2.3.4"). */
const char *ldmd_conn_peer(const ldmd_conn *c);

/** Reply SUCCESS with an encoded value of type (LDM6_T_VOID: none); a
 *  failure is logged.  @return LDMD_CONTINUE or LDMD_FAIL */
int ldmd_conn_reply(ldmd_conn *c, uint32_t xid, int type, const void *value);

/** Reply with an accept_stat error (PROC_UNAVAIL, GARBAGE_ARGS,
 *  SYSTEM_ERR).  @return LDMD_CONTINUE or LDMD_FAIL */
int ldmd_conn_reply_error(ldmd_conn *c, uint32_t xid, uint32_t accept_stat);

/* ---- upstream.c ---- */

/**
 * FEEDME (v6 or v5) or NOTIFYME (v6): reduce the class to what ALLOW
 * permits and answer; after OK, turn the connection around and send
 * products from the queue until the peer leaves or the server stops.
 * @return LDMD_CONTINUE after RECLASS, BADPATTERN or an error reply (the
 *         peer may ask again), else LDMD_DONE or LDMD_FAIL.
 */
int ldmd_upstream(ldmd_conn *c, const ldm6_io_msg *call);

/* ---- hiya.c ---- */

/** HIYA: compute the class ACCEPT permits, answer OK or RECLASS (or
 *  refuse), and get ready to receive products. */
int ldmd_hiya(ldmd_conn *c, const ldm6_io_msg *call);

/**
 * HEREIS, COMINGSOON or BLKDATA (v6) on a connection that receives
 * products: after HIYA, or a requester's connection after FEEDME.  The
 * arguments are decoded (GARBAGE_ARGS if they cannot be), handed to
 * c->down, and COMINGSOON answered.  A HEREIS or BLKDATA whose record
 * holds more or fewer data bytes than it declares is refused
 * (ldmd_refuse_product()).
 */
int ldmd_product_call(ldmd_conn *c, const ldm6_io_msg *call);

/**
 * NULLPROC on a connection that receives products: the sender has sent
 * everything before it, so a product announced by COMINGSOON whose data
 * has not all come never will: it is discarded, with a warning.  Then the
 * NULLPROC is answered: SUCCESS, or, on a push (c->push), SYSTEM_ERR if a
 * product received since the last NULLPROC could not be stored (no room,
 * too big, unfit, incomplete; see ldmd_down_lost()), so that the sender,
 * for whom that answer confirms what it sent, does not take it as
 * stored.  A requester's upstream always gets SUCCESS, as from LDM.
 */
int ldmd_product_flush(ldmd_conn *c, const ldm6_io_msg *call);

/**
 * Refuse a product larger than c->set->max_product (HEREIS, COMINGSOON):
 * an error names the product, the peer, its size and the limit, nothing
 * of it is stored, and the connection is to be closed.
 * @return LDMD_CONTINUE if the product may come; LDMD_FAIL if refused
 */
int ldmd_product_size_check(ldmd_conn *c, uint32_t xid, const char *call,
                            const ldm6_prod_info *info);

/** The largest record a receiver of products takes: its largest product
 *  (the queue's data size, or less by c->set->max_product) and the
 *  record's other bytes. */
uint64_t ldmd_product_record_max(const ldmd_settings *set, const pq_t *pq);

/** Bytes of a datapkt before its data: signature, pktnum, dbuf length. */
#define LDMD_DATAPKT_HEAD 24

/**
 * Refuse a product's record whose data does not match what it declares
 * (call: "HEREIS", "BLKDATA"; ident may be NULL): the pending product, if
 * any, is discarded, an error names the product, the peer, the size
 * declared and why (what the record holds), and the call is answered
 * SYSTEM_ERR, as LDM answers a BLKDATA it cannot take.
 * @return LDMD_FAIL: close the connection
 */
int ldmd_refuse_product(ldmd_conn *c, uint32_t xid, const char *call,
                        const char *ident, const uint8_t *sig,
                        uint64_t declared, const char *why);

/* ---- receive.c ---- */

/**
 * The rest of a long HEREIS or BLKDATA record whose start
 * ldm6_io_recv_head() gave (its "more" was true): the data is read from the
 * socket straight into the queue (c->down).  Anything else in a long
 * record is a protocol error.  timeout_ms bounds each wait for bytes.
 * @return LDMD_CONTINUE, or LDMD_FAIL (logged; close the connection: it is
 *         out of step)
 */
int ldmd_product_stream(ldmd_conn *c, const ldm6_io_msg *head, int timeout_ms);

#endif /* LDMD_SERVER_SERVER_H */
