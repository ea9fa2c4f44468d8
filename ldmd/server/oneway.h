/*
 * oneway.h - what the two senders of products (a connection process's
 * feed, upstream.c, and the feed hubs, hub.c) share about a one-way
 * record: its arguments laid out for writev (the encoded metadata, the
 * data, the XDR padding), whether it is small enough for the batch, and
 * where a large one stands while the socket takes it piece by piece, the
 * rest sent from the product found again by its signature
 * (docs/protocol.md, sections 6.8 and 6.9).
 */
#ifndef LDMD_SERVER_ONEWAY_H
#define LDMD_SERVER_ONEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "pq/pq.h"

/** An encoded prod_info (364 bytes at most), or COMINGSOON's arguments
 *  (368). */
#define LDMD_INFO_BUF 512

/** A large record being written by pieces. */
typedef struct ldmd_piece {
  uint8_t head[LDMD_INFO_BUF]; /**< the encoded arguments before the data */
  size_t hlen;
  uint32_t dlen;                /**< bytes of data */
  uint8_t sig[PQ_SIGLEN];       /**< the product, to find it again */
  char ident[PQ_IDENT_MAX + 1]; /**< for messages */
  ldm6_io_partial st;
} ldmd_piece;

/** A one-way record's arguments: head, data, padding. */
static inline void ldmd_record_iov(struct iovec iov[3], const uint8_t *head,
                                   size_t hlen, const void *data,
                                   uint32_t dlen) {
  static const uint8_t zeros[4] = {0, 0, 0, 0};

  iov[0] = (struct iovec){(void *)head, hlen};
  iov[1] = (struct iovec){(void *)data, dlen};
  iov[2] = (struct iovec){(void *)zeros, ldm6_xdr_pad(dlen)};
}

/** Does the record go into the batch (ldm6_io_queue_copy())? */
static inline bool ldmd_small_record(size_t hlen, uint64_t dlen) {
  return hlen + dlen + ldm6_xdr_pad(dlen) <= LDM6_IO_COPY_MAX;
}

#endif /* LDMD_SERVER_ONEWAY_H */
