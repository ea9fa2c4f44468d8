/*
 * hub_link.h - what goes between a connection process and the feed hub
 * (hub.h): the hand-over message, sent once over the server's hub channel
 * with the connection's socket and the process's end of a socket pair, and
 * the two records the hub writes back on that pair (it took the feed; the
 * feed ended, and how).  Both sides are forks of one ldmd binary, so the
 * messages are C structures, checked by a magic number and their size.
 */
#ifndef LDMD_SERVER_HUB_LINK_H
#define LDMD_SERVER_HUB_LINK_H

#include <stdint.h>

#include "pq/pq.h"

#define HUB_MAGIC 0x4c485542u /* "LHUB" */
#define HUB_CLASS_MAX 16384   /* the XDR of a class (LDMD_RECORD_HEAD) */
#define HUB_PEER_MAX 1100

/** The hand-over (connection process to hub), with two descriptors: the
 *  connection's socket, then the process's end of its pair. */
typedef struct hub_handoff {
  uint32_t magic;
  uint64_t cursor_us;   /**< where the feed starts */
  int32_t metrics_slot; /**< the connection process's, or -1 */
  uint32_t nfilter;     /**< parts of the upstream filter */
  uint32_t filter_ft[PQ_CLASS_MAX];
  uint32_t filter_allow[PQ_CLASS_MAX]; /**< index in conf->allows */
  char peer[HUB_PEER_MAX];             /**< for messages */
  uint32_t class_len;                  /**< bytes of class_xdr */
  uint8_t class_xdr[HUB_CLASS_MAX];    /**< the class (LDM6_T_PROD_CLASS) */
} hub_handoff;

enum hub_reply_kind { HUB_TAKEN = 1, HUB_ENDED = 2 };

/** Hub to connection process, on the pair. */
typedef struct hub_reply {
  uint32_t magic;
  uint32_t kind;  /**< enum hub_reply_kind */
  int32_t status; /**< HUB_ENDED: LDMD_DONE or LDMD_FAIL */
  uint32_t unused;
  uint64_t nsent, nbytes, nskipped, ndamaged;
} hub_reply;

/** The hub's side: receive one hand-over from chan (non-blocking).
 *  @return 1 (got one: *fds the socket and the pair's end, both to be
 *          closed by the caller), 0 (nothing waiting), -1 (a broken or
 *          foreign message: dropped, its descriptors closed; or the
 *          channel failed: errno) */
int hub_link_receive(int chan, hub_handoff *h, int fds[2]);

/** Write a reply on the pair (never waits).  @return 0 or -1 */
int hub_link_reply(int fd, const hub_reply *r);

#endif /* LDMD_SERVER_HUB_LINK_H */
