/*
 * receive.c - products whose records are too long to gather first.  A
 * HEREIS or BLKDATA record longer than LDMD_RECORD_HEAD bytes is taken in
 * two parts: its start (the RPC header and the product's metadata, or the
 * packet's signature and length) is decoded and vetted (downstream.c's
 * *_begin()), and the data is read from the socket straight where
 * downstream.c says (ldmd_down_room(), ldm6_io_recv_body()): a buffer of
 * the connection's, reused from product to product, and the queue only
 * once the product is complete, or once /server/max-product-memory bytes
 * of it have come (docs/security.md, "Announced products (COMINGSOON)").
 * A product whose missing bytes have all come already (in the read buffer
 * and the socket's receive queue: ldm6_io_body_ready()) goes to the queue
 * straight, with one copy fewer of each byte: the usual case for products
 * up to a few hundred KiB from a fast upstream.
 * No buffer grows past that bound, as a gathered record of a 20 MB
 * product would.  A record that ends before or after the data it
 * declares is refused (ldmd_refuse_product()) and what came of it
 * discarded.  Shorter records, and every other call, are gathered whole
 * and go through ldmd_product_call() (hiya.c).
 *
 * Used by requesters and by HIYA receivers alike; the connection's
 * ldmd_conn carries the receiving side (c->down).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/server.h"

#define DATAPKT_HEAD LDMD_DATAPKT_HEAD
/* How long a product's data waits to be all in hand before it is read
 * into memory as it comes (a slow link: that would time out no sooner). */
#define IN_HAND_WAIT_MS 1000

/*
 * The data of a product or packet: sz bytes (then padding) of which the
 * first have bytes are already in pre.  When take, each part goes where
 * downstream.c says (ldmd_down_room(): its memory, then the queue, or the
 * queue at once when the rest is in hand: pre, the read buffer and the
 * socket's receive queue hold it), else it is dropped; then the record is
 * ended.  The record must end right after the padding: one longer or
 * shorter than what it declares is a protocol error (LDM6_IO_EPROTO, *why
 * says how).
 * @return an LDM6_IO_* result
 */
static int stream_data(ldmd_conn *c, bool take, uint32_t sz, const uint8_t *pre,
                       size_t have, int timeout_ms, const char **why) {
  size_t total = (size_t)sz + ldm6_xdr_pad(sz);
  size_t done = 0, in_pre = have < sz ? have : sz;
  bool waited = false;
  int rc = LDM6_IO_OK;

  if (have > total) {
    *why = "the record holds more";
    return LDM6_IO_EPROTO;
  }
  while (rc == LDM6_IO_OK && done < sz) {
    size_t n = sz - done, wire = done > in_pre ? done : in_pre;
    uint64_t ready = 0;
    uint8_t *dst;

    if (take && ldmd_down_holding(c->down)) { /* in hand: to the queue */
      /* In hand means the padding too: a peer that stops before it would
       * otherwise hold a reservation until the record times out.  seen:
       * the record's bytes past the data's start read so far (pre may
       * hold some padding as well). */
      size_t seen = have > wire ? have : wire;
      ready = (seen - done) + ldm6_io_body_ready(c->io, total - seen);
      if (ready < total - done && !waited) { /* once: the rest may come */
        waited = true;
        rc = ldm6_io_body_wait(c->io, total - seen,
                               timeout_ms >= 0 && timeout_ms < IN_HAND_WAIT_MS
                                   ? timeout_ms
                                   : IN_HAND_WAIT_MS);
        if (rc == LDM6_IO_TIMEDOUT)
          rc = LDM6_IO_OK; /* not yet: into memory as it comes */
        if (rc != LDM6_IO_OK)
          break;
        ready = (seen - done) + ldm6_io_body_ready(c->io, total - seen);
      }
      if (ready < total - done)
        ready = 0; /* not all of it: held in memory as it comes */
    }
    dst = take ? ldmd_down_room(c->down, n, ready, &n) : NULL;
    if (done < in_pre) { /* bytes already read with the record's start */
      if (n > in_pre - done)
        n = in_pre - done;
      if (dst != NULL)
        memcpy(dst, pre + done, n);
    } else {
      rc = ldm6_io_recv_body(c->io, dst, n, timeout_ms);
    }
    if (take && rc == LDM6_IO_OK)
      ldmd_down_took(c->down, n);
    done += n;
  }
  if (rc == LDM6_IO_OK)
    rc = ldm6_io_recv_body(c->io, NULL, total - sz - (have - in_pre),
                           timeout_ms);
  if (rc == LDM6_IO_OK)
    rc = ldm6_io_recv_end(c->io, timeout_ms);
  *why = ldm6_io_detail(c->io); /* "record longer than its contents"... */
  return rc;
}

/* A streamed record of the product ident (NULL: unknown), sig, declared
 * bytes, did not end as it should: nothing of it is stored. */
static int failed(ldmd_conn *c, const ldm6_io_msg *m, int rc, const char *what,
                  const char *ident, const uint8_t *sig, uint64_t declared,
                  const char *why) {
  char hex[33];

  if (*c->set->stop) {
    log_info("stopping in the middle of a %s from %s", what, c->peer);
    return LDMD_FAIL;
  }
  if (rc == LDM6_IO_EPROTO) /* the record is not what it declares */
    return ldmd_refuse_product(c, m->hdr.xid, what, ident, sig, declared, why);
  pq_sig_format(sig, hex);
  log_error("%s of %s%s(%s) from %s failed: %s %s: nothing stored, closing",
            what, ident != NULL ? ident : "", ident != NULL ? " " : "", hex,
            c->peer, ldm6_io_strerror(rc), ldm6_io_detail(c->io));
  return LDMD_FAIL;
}

static int hereis(ldmd_conn *c, const ldm6_io_msg *m, int timeout_ms) {
  ldm6_prod_info info;
  size_t used;
  bool take = false;
  const char *why = "";
  int rc, down;

  rc = ldm6_decode(LDM6_T_PROD_INFO, m->body, m->body_len, &info, &used);
  if (rc != 0) {
    log_error("undecodable HEREIS from %s: %s: closing", c->peer,
              ldm6_strerror(rc));
    return LDMD_FAIL;
  }
  if (ldmd_product_size_check(c, m->hdr.xid, "HEREIS", &info) != LDMD_CONTINUE)
    return LDMD_FAIL;
  if (ldmd_down_hereis_begin(c->down, &info, &take) != LDMD_DOWN_OK) {
    (void)ldmd_down_stream_end(c->down, false);
    return LDMD_FAIL;
  }
  rc = stream_data(c, take, info.sz, m->body + used, m->body_len - used,
                   timeout_ms, &why);
  down = ldmd_down_stream_end(c->down, rc == LDM6_IO_OK);
  if (rc != LDM6_IO_OK)
    return failed(c, m, rc, "HEREIS", info.ident, info.signature, info.sz, why);
  return down == LDMD_DOWN_OK ? LDMD_CONTINUE : LDMD_FAIL;
}

static uint32_t get32(const uint8_t *p) {
  uint32_t v;

  memcpy(&v, p, 4);
  return ntohl(v);
}

static int blkdata(ldmd_conn *c, const ldm6_io_msg *m, int timeout_ms) {
  ldm6_datapkt pkt;
  const pq_prod_info *pending;
  char ident[PQ_IDENT_MAX + 1] = "";
  bool take = false;
  const char *why = "";
  int rc, down;

  if (m->body_len < DATAPKT_HEAD) {
    log_error("undecodable BLKDATA from %s: closing", c->peer);
    return LDMD_FAIL;
  }
  memset(&pkt, 0, sizeof pkt);
  memcpy(pkt.signature, m->body, LDM6_SIGLEN);
  pkt.pktnum = get32(m->body + 16);
  pkt.data_len = get32(m->body + 20);
  pending = ldmd_down_pending(c->down);
  if (pending != NULL &&
      memcmp(pending->signature, pkt.signature, PQ_SIGLEN) == 0)
    snprintf(ident, sizeof ident, "%s", pending->ident);
  if (ldmd_down_blkdata_begin(c->down, &pkt, &take) != LDMD_DOWN_OK) {
    (void)ldmd_down_stream_end(c->down, false);
    /* downstream.c said why */
    return ldmd_refuse_product(
        c, m->hdr.xid, "BLKDATA", ident[0] != '\0' ? ident : NULL,
        pkt.signature, pkt.data_len, "not the data COMINGSOON announced");
  }
  rc = stream_data(c, take, pkt.data_len, m->body + DATAPKT_HEAD,
                   m->body_len - DATAPKT_HEAD, timeout_ms, &why);
  down = ldmd_down_stream_end(c->down, rc == LDM6_IO_OK);
  if (rc != LDM6_IO_OK)
    return failed(c, m, rc, "BLKDATA", ident[0] != '\0' ? ident : NULL,
                  pkt.signature, pkt.data_len, why);
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
