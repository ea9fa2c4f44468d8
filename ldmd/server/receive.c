/*
 * receive.c - products whose records are too long to gather first.  A
 * HEREIS or BLKDATA record longer than LDMD_RECORD_HEAD bytes is taken in
 * two parts: its start (the RPC header and the product's metadata, or the
 * packet's signature and length) is decoded, room is reserved in the queue
 * (downstream.c's *_begin()), and the data is read from the socket
 * straight into that room (ldm6_io_recv_body()) and committed.  A 20 MB
 * product is thus copied once, by the kernel, and no buffer grows to its
 * size and is faulted in for every product, as a gathered record would
 * be.  Shorter records, and every other call, are gathered whole and go
 * through ldmd_product_call() (hiya.c).
 *
 * Used by requesters and by HIYA receivers alike; the connection's
 * ldmd_conn carries the receiving side (c->down).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/server.h"

#define DATAPKT_HEAD 24            /* signature, pktnum, dbuf length */
#define POPULATE_MIN (64u * 1024u) /* smaller products: let them fault */

/* Map the pages of dst[0..n) into this process in one call before the
 * socket's bytes are read into them: a process new to the queue's pages
 * (a new connection) would otherwise take a page fault for every 4 KiB
 * of a large product, inside each read(2), which halves its rate.  Only
 * an optimisation: any failure (an old kernel) is ignored. */
static void populate(uint8_t *dst, size_t n) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t lo, hi;

  if (dst == NULL || n < POPULATE_MIN || page <= 0)
    return;
  lo = (uintptr_t)dst & ~((uintptr_t)page - 1);
  hi = (uintptr_t)dst + n;
  (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
  (void)dst;
  (void)n;
#endif
}

/* Read the rest of a streamed record: data_rest bytes into dst (NULL:
 * dropped), then pad_rest bytes dropped, then the record's end. */
static int take_rest(ldmd_conn *c, uint8_t *dst, size_t data_rest,
                     size_t pad_rest, int timeout_ms) {
  int rc = ldm6_io_recv_body(c->io, dst, data_rest, timeout_ms);

  if (rc == LDM6_IO_OK)
    rc = ldm6_io_recv_body(c->io, NULL, pad_rest, timeout_ms);
  if (rc == LDM6_IO_OK)
    rc = ldm6_io_recv_end(c->io, timeout_ms);
  return rc;
}

/*
 * The data of a product or packet: sz bytes (then padding) of which the
 * first have bytes are already in pre.  Copies them to dst (if not NULL),
 * reads the rest there, and ends the record.
 * @return an LDM6_IO_* result
 */
static int stream_data(ldmd_conn *c, uint8_t *dst, uint32_t sz,
                       const uint8_t *pre, size_t have, int timeout_ms) {
  size_t total = (size_t)sz + ldm6_xdr_pad(sz);
  size_t in_pre = have < sz ? have : sz;

  if (have > total)
    return LDM6_IO_EPROTO; /* more record than the data it announced */
  if (dst != NULL)
    populate(dst, sz);
  if (dst != NULL && in_pre > 0)
    memcpy(dst, pre, in_pre);
  return take_rest(c, dst != NULL ? dst + in_pre : NULL, sz - in_pre,
                   total - have - (sz - in_pre), timeout_ms);
}

static int failed(ldmd_conn *c, int rc, const char *what) {
  if (*c->set->stop)
    log_info("stopping in the middle of a %s from %s", what, c->peer);
  else
    log_error("%s from %s failed: %s %s: closing", what, c->peer,
              ldm6_io_strerror(rc), ldm6_io_detail(c->io));
  return LDMD_FAIL;
}

static int hereis(ldmd_conn *c, const ldm6_io_msg *m, int timeout_ms) {
  ldm6_prod_info info;
  size_t used;
  void *dst = NULL;
  int rc, down;

  rc = ldm6_decode(LDM6_T_PROD_INFO, m->body, m->body_len, &info, &used);
  if (rc != 0) {
    log_error("undecodable HEREIS from %s: %s: closing", c->peer,
              ldm6_strerror(rc));
    return LDMD_FAIL;
  }
  if (ldmd_down_hereis_begin(c->down, &info, &dst) != LDMD_DOWN_OK) {
    (void)ldmd_down_stream_end(c->down, false);
    return LDMD_FAIL;
  }
  rc = stream_data(c, dst, info.sz, m->body + used, m->body_len - used,
                   timeout_ms);
  down = ldmd_down_stream_end(c->down, rc == LDM6_IO_OK);
  if (rc != LDM6_IO_OK)
    return failed(c, rc, "HEREIS");
  return down == LDMD_DOWN_OK ? LDMD_CONTINUE : LDMD_FAIL;
}

static uint32_t get32(const uint8_t *p) {
  uint32_t v;

  memcpy(&v, p, 4);
  return ntohl(v);
}

static int blkdata(ldmd_conn *c, const ldm6_io_msg *m, int timeout_ms) {
  ldm6_datapkt pkt;
  void *dst = NULL;
  int rc, down;

  if (m->body_len < DATAPKT_HEAD) {
    log_error("undecodable BLKDATA from %s: closing", c->peer);
    return LDMD_FAIL;
  }
  memset(&pkt, 0, sizeof pkt);
  memcpy(pkt.signature, m->body, LDM6_SIGLEN);
  pkt.pktnum = get32(m->body + 16);
  pkt.data_len = get32(m->body + 20);
  if (ldmd_down_blkdata_begin(c->down, &pkt, &dst) != LDMD_DOWN_OK) {
    (void)ldmd_down_stream_end(c->down, false);
    log_error("invalid BLKDATA from %s: closing", c->peer);
    return LDMD_FAIL;
  }
  rc = stream_data(c, dst, pkt.data_len, m->body + DATAPKT_HEAD,
                   m->body_len - DATAPKT_HEAD, timeout_ms);
  down = ldmd_down_stream_end(c->down, rc == LDM6_IO_OK);
  if (rc != LDM6_IO_OK)
    return failed(c, rc, "BLKDATA");
  return down == LDMD_DOWN_OK ? LDMD_CONTINUE : LDMD_FAIL;
}

int ldmd_product_stream(ldmd_conn *c, const ldm6_io_msg *m, int timeout_ms) {
  const ldm6_rpc_call *call = &m->hdr.u.call;

  if (m->hdr.type != LDM6_RPC_CALL) {
    log_error("unexpected long reply from %s: closing", c->peer);
    return LDMD_FAIL;
  }
  if (call->rpcvers != LDM6_RPC_VERSION || call->prog != LDM6_PROG ||
      call->vers != LDM6_VERSION6 || c->down == NULL ||
      (call->proc != LDM6_HEREIS && call->proc != LDM6_BLKDATA)) {
    log_error("unexpected long record (procedure %u of version %u) from %s: "
              "closing",
              (unsigned)call->proc, (unsigned)call->vers, c->peer);
    return LDMD_FAIL;
  }
  return call->proc == LDM6_HEREIS ? hereis(c, m, timeout_ms)
                                   : blkdata(c, m, timeout_ms);
}
