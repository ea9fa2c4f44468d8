/*
 * upstream.c - the upstream side of a feed: FEEDME and NOTIFYME are
 * answered (OK with this process's pid, RECLASS with what ALLOW permits,
 * an empty RECLASS when it permits nothing, BADPATTERN for a pattern that
 * does not compile), then the connection is turned around and this process
 * sends products from the queue as calls (docs/protocol.md §5, §6, §10):
 *
 *   primary (max_hereis > 0x7fffffff)   HEREIS, one-way
 *   alternate                           COMINGSOON (synchronous), then one
 *                                       BLKDATA unless the answer is
 *                                       DONT_SEND
 *   NOTIFYME                            NOTIFICATION, one-way
 *   LDM-5 FEEDME (old `feedme`)         every call synchronous: HEREIS up
 *                                       to 16 KiB, else COMINGSOON and
 *                                       16 KiB BLKDATA packets
 *
 * A large product's data goes to the socket straight from the queue's
 * mapping while the product is read-locked (writev of header, data and
 * padding); small ones (up to 16 KiB) are copied into the connection's
 * output buffer and go out in batches of up to 64 records or 256 KiB
 * (ldm6_io_queue_call()): one system call and one trip through TCP per
 * batch, not per product, while the feed is behind the queue.  At the
 * end of the queue the batch is written and a NULLPROC flushes the
 * one-way calls, if any were sent
 * since the last synchronous call, and confirms their delivery; the
 * process then sleeps on the queue's wake-up word, so a product committed
 * by any process is sent at once (LDM waits for a signal and can stall up
 * to 30 s).  Every second it also looks at the socket: a peer that closed
 * is noticed within a second, and stray replies (notifyme answers each
 * NOTIFICATION with PROC_UNAVAIL) are read and dropped so they never fill
 * the socket buffers.  After 30 s without a call, a NULLPROC keep-alive.
 *
 * A resumed feed (a trailing {NONE, "SIG=<hex>"} spec) starts just after
 * that product if the queue still has it, else at the class's from time.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/server.h"

#define INFO_BUF 512     /* an encoded prod_info (at most 372 bytes) */
#define DRAIN_EVERY 32   /* products sent between looks at the socket */
#define UP_ESEND 1       /* callback result: a send failed */
#define CLASS_TEXT 10240 /* LDM's text of a class */

enum up_mode { UP_PRIMARY, UP_ALTERNATE, UP_NOTIFY, UP_V5 };

typedef struct upstream {
  ldmd_conn *c;
  pq_t *pq;
  pq_class cls;
  ldm_conf_filter filter;
  enum up_mode mode;
  bool oneway_pending; /* one-way calls since the last synchronous one */
  int64_t last_call;   /* when the last synchronous call was sent (ms) */
  unsigned since_drain;
  uint64_t nsent, nbytes, ndeclined;
} upstream;

static const uint8_t zeros[4];

static int64_t mono_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* LDM's class text: "<from> <to> {{FEEDTYPE, "ERE"},...}". */
static void class_text(const pq_class *cls, char *buf, size_t len) {
  char from[32], to[32];
  size_t n;
  unsigned i;

  pq_ts_format(cls->from, from, sizeof from);
  pq_ts_format(cls->to, to, sizeof to);
  snprintf(buf, len, "%s %s {", from, to);
  for (i = 0; i < cls->nspecs; i++) {
    char ft[192];

    pq_feedtype_format(cls->specs[i].feedtype, ft, sizeof ft);
    n = strlen(buf);
    snprintf(buf + n, len - n, "%s{%s, \"%s\"}", i > 0 ? "," : "", ft,
             cls->specs[i].pattern);
  }
  n = strlen(buf);
  snprintf(buf + n, len - n, "}");
}

/* ---------------------------------------------------------------------- */
/* The request                                                            */
/* ---------------------------------------------------------------------- */

/* Take the resume point, a trailing {NONE, "SIG=<32 hex>"}, out of the
 * class, and every other NONE spec with it (docs/protocol.md §5.2). */
static bool separate_signature(ldm6_prod_class *cls, uint8_t sig[PQ_SIGLEN],
                               const char *peer) {
  bool have = false;
  uint32_t i, k = 0;

  if (cls->psa_len > 0) {
    const ldm6_prod_spec *last = &cls->psa[cls->psa_len - 1];

    if (last->feedtype == PQ_FT_NONE &&
        strncasecmp(last->pattern, "SIG=", 4) == 0) {
      if (strlen(last->pattern) == 4 + 2 * PQ_SIGLEN &&
          pq_sig_parse(last->pattern + 4, sig) == 0)
        have = true;
      else
        log_warning("invalid signature \"%s\" from %s ignored", last->pattern,
                    peer);
    }
  }
  for (i = 0; i < cls->psa_len; i++)
    if (cls->psa[i].feedtype != PQ_FT_NONE)
      cls->psa[k++] = cls->psa[i];
  cls->psa_len = k;
  return have;
}

/* Answer a FEEDME or NOTIFYME: v6 with a fornme_reply_t, v5 with an
 * ldm_replyt.  cls is the RECLASS class (NULL: the empty class). */
static int answer(ldmd_conn *c, const ldm6_io_msg *m, ldm6_errt code,
                  const pq_class *cls) {
  ldm6_prod_class wire;

  memset(&wire, 0, sizeof wire);
  if (code == LDM6_RECLASS && cls != NULL && cls->nspecs > 0) {
    int rc = ldm6_class_from_pq(cls, &wire);

    if (rc != 0) {
      log_error("cannot express the allowed class for %s: %s", c->peer,
                ldm6_strerror(rc));
      return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    }
  }
  if (m->hdr.u.call.vers == LDM6_VERSION5) {
    ldm6_replyt r;

    memset(&r, 0, sizeof r);
    r.code = code;
    if (code == LDM6_RECLASS)
      r.u.reclass = wire;
    return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_REPLYT, &r);
  } else {
    ldm6_fornme_reply r;

    memset(&r, 0, sizeof r);
    r.code = code;
    if (code == LDM6_OK)
      r.u.id = (uint32_t)getpid();
    else if (code == LDM6_RECLASS)
      r.u.prod_class = wire;
    return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_FORNME_REPLY, &r);
  }
}

/* Open the queue.  Read-write when possible: only a writable mapping lets
 * pq_wait() register for an immediate wake-up. */
static pq_t *open_queue(const ldmd_conn *c) {
  pq_t *pq = NULL;
  pq_error err;

  if (pq_open(c->set->queue_path, 0, &pq, &err) == PQ_OK)
    return pq;
  if (pq_open(c->set->queue_path, PQ_READONLY, &pq, &err) == PQ_OK)
    return pq;
  log_error("cannot open the queue %s: %s", c->set->queue_path, err.pe_msg);
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* Sending                                                                */
/* ---------------------------------------------------------------------- */

static void send_failed(const upstream *u, int rc, const char *what) {
  if (rc == LDM6_IO_CLOSED)
    log_notice("connection closed by %s", u->c->peer);
  else if (rc == LDM6_IO_EREPLY)
    log_error("%s: %s refused the call", what, u->c->peer);
  else
    log_error("%s to %s failed: %s %s", what, u->c->peer, ldm6_io_strerror(rc),
              ldm6_io_detail(u->c->io));
}

/* A one-way call whose arguments are head, data and padding: queued in
 * the connection's output buffer (copied, when small) until a batch is
 * full or the feed catches up with the queue (see idle()). */
static int send_oneway(upstream *u, uint32_t proc, const uint8_t *head,
                       size_t hlen, const void *data, uint32_t dlen,
                       const char *what) {
  struct iovec iov[3] = {{(void *)head, hlen},
                         {(void *)data, dlen},
                         {(void *)zeros, ldm6_xdr_pad(dlen)}};
  int rc = ldm6_io_queue_call(u->c->io, LDM6_VERSION6, proc, iov, 3);

  if (rc != LDM6_IO_OK) {
    send_failed(u, rc, what);
    return rc;
  }
  u->oneway_pending = true; /* idle()'s NULLPROC follows, and dates it */
  return LDM6_IO_OK;
}

/* A synchronous call; the results are decoded as type into value. */
static int send_sync(upstream *u, uint32_t vers, uint32_t proc,
                     const struct iovec *iov, int niov, int timeout_ms,
                     ldm6_type type, void *value, const char *what) {
  ldm6_io_msg reply;
  size_t used;
  int rc = ldm6_io_call(u->c->io, vers, proc, iov, niov, timeout_ms, &reply);

  u->last_call = mono_ms();
  if (rc != LDM6_IO_OK) {
    send_failed(u, rc, what);
    return rc;
  }
  u->oneway_pending = false;
  if (type != LDM6_T_VOID &&
      ldm6_decode(type, reply.body, reply.body_len, value, &used) != 0) {
    log_error("%s: undecodable reply from %s", what, u->c->peer);
    return LDM6_IO_EPROTO;
  }
  return LDM6_IO_OK;
}

static int send_hereis(upstream *u, const ldm6_prod_info *w, const void *data) {
  uint8_t head[INFO_BUF];
  size_t hlen;

  if (ldm6_encode(LDM6_T_PROD_INFO, w, head, sizeof head, &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_oneway(u, LDM6_HEREIS, head, hlen, data, w->sz, "hereis");
}

static int send_notification(upstream *u, const ldm6_prod_info *w) {
  uint8_t head[INFO_BUF];
  size_t hlen;

  if (ldm6_encode(LDM6_T_PROD_INFO, w, head, sizeof head, &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_oneway(u, LDM6_NOTIFICATION, head, hlen, NULL, 0, "notification");
}

/* Alternate mode: COMINGSOON, then the data in one BLKDATA. */
static int send_comingsoon(upstream *u, const ldm6_prod_info *w,
                           const void *data) {
  ldm6_comingsoon_args args = {.info = *w, .pktsz = w->sz};
  ldm6_datapkt pkt = {.pktnum = 0, .data_len = w->sz};
  ldm6_comingsoon_reply reply = LDM6_DONT_SEND;
  uint8_t head[INFO_BUF];
  struct iovec iov;
  int rc;

  if (ldm6_encode(LDM6_T_COMINGSOON_ARGS, &args, head, sizeof head,
                  &iov.iov_len) != 0)
    return LDM6_IO_EPROTO;
  iov.iov_base = head;
  rc = send_sync(u, LDM6_VERSION6, LDM6_COMINGSOON, &iov, 1,
                 LDMD_SYNC_TIMEOUT_MS, LDM6_T_COMINGSOON_REPLY, &reply,
                 "comingsoon");
  if (rc != LDM6_IO_OK)
    return rc;
  if (reply != LDM6_OK) {
    u->ndeclined++;
    return LDM6_IO_OK; /* DONT_SEND: it has it, or does not want it */
  }
  memcpy(pkt.signature, w->signature, PQ_SIGLEN);
  if (ldm6_encode_datapkt_head(&pkt, head, sizeof head, &iov.iov_len) != 0)
    return LDM6_IO_EPROTO;
  return send_oneway(u, LDM6_BLKDATA, head, iov.iov_len, data, w->sz,
                     "blkdata");
}

/* An LDM-5 call with an ldm_replyt answer; *code gets the answer. */
static int v5_call(upstream *u, uint32_t proc, const uint8_t *head, size_t hlen,
                   const void *data, uint32_t dlen, ldm6_errt *code,
                   const char *what) {
  struct iovec iov[3] = {{(void *)head, hlen},
                         {(void *)data, dlen},
                         {(void *)zeros, ldm6_xdr_pad(dlen)}};
  ldm6_replyt r;
  int rc =
      send_sync(u, LDM6_VERSION5, proc, iov, 3,
                (int)u->c->set->rpc_timeout * 1000, LDM6_T_REPLYT, &r, what);

  *code = r.code;
  return rc;
}

/* LDM-5: the data of a large product in packets of LDM6_DBUFMAX bytes,
 * each answered; stops at the first answer other than OK. */
static int v5_packets(upstream *u, const ldm6_prod_info *w, const void *data,
                      ldm6_errt *code) {
  uint8_t head[INFO_BUF];
  uint32_t off = 0, pktnum = 0;
  int rc = LDM6_IO_OK;

  while (rc == LDM6_IO_OK && *code == LDM6_OK && off < w->sz) {
    uint32_t n = w->sz - off < LDM6_DBUFMAX ? w->sz - off : LDM6_DBUFMAX;
    ldm6_datapkt pkt = {.pktnum = pktnum, .data_len = n};
    size_t hlen;

    pktnum++;
    memcpy(pkt.signature, w->signature, PQ_SIGLEN);
    if (ldm6_encode_datapkt_head(&pkt, head, sizeof head, &hlen) != 0)
      return LDM6_IO_EPROTO;
    rc = v5_call(u, LDM6_BLKDATA, head, hlen, (const uint8_t *)data + off, n,
                 code, "blkdata");
    off += n;
  }
  return rc;
}

/* LDM-5: HEREIS for small products, else COMINGSOON and BLKDATA packets,
 * every call answered. */
static int send_v5(upstream *u, const ldm6_prod_info *w, const void *data) {
  uint8_t head[INFO_BUF];
  size_t hlen;
  ldm6_errt code = LDM6_OK;
  int rc;

  if (w->sz <= LDM6_DBUFMAX) {
    if (ldm6_encode(LDM6_T_PROD_INFO, w, head, sizeof head, &hlen) != 0)
      return LDM6_IO_EPROTO;
    rc = v5_call(u, LDM6_HEREIS, head, hlen, data, w->sz, &code, "hereis");
  } else {
    ldm6_comingsoon_args args = {.info = *w, .pktsz = LDM6_DBUFMAX};

    if (ldm6_encode(LDM6_T_COMINGSOON_ARGS, &args, head, sizeof head, &hlen) !=
        0)
      return LDM6_IO_EPROTO;
    rc = v5_call(u, LDM6_COMINGSOON, head, hlen, NULL, 0, &code, "comingsoon");
    if (rc == LDM6_IO_OK && code == LDM6_OK)
      rc = v5_packets(u, w, data, &code);
  }
  if (rc == LDM6_IO_OK && code == LDM6_SHUTTING_DOWN) {
    log_notice("%s is shutting down", u->c->peer);
    return LDM6_IO_CLOSED;
  }
  if (rc == LDM6_IO_OK && code != LDM6_OK)
    u->ndeclined++;
  return rc;
}

/* pq_next() callback: send one product that passed the class. */
static int send_product(const pq_prod_info *info, const void *data,
                        const pq_place *place, void *arg) {
  upstream *u = arg;
  ldm6_prod_info w;
  int rc;

  (void)place;
  if (!ldm_conf_filter_match(&u->filter, info->feedtype, info->ident))
    return 0;
  if (ldm6_info_from_pq(info, &w) != 0) {
    log_warning("product %s cannot be sent with LDM-6: skipped", info->ident);
    return 0;
  }
  switch (u->mode) {
  case UP_PRIMARY:
    rc = send_hereis(u, &w, data);
    break;
  case UP_ALTERNATE:
    rc = send_comingsoon(u, &w, data);
    break;
  case UP_NOTIFY:
    rc = send_notification(u, &w);
    break;
  default:
    rc = send_v5(u, &w, data);
    break;
  }
  if (rc != LDM6_IO_OK)
    return UP_ESEND;
  u->nsent++;
  u->nbytes += info->size;
  if (ldm_log_enabled(LDM_LOG_DEBUG)) {
    char text[640];

    pq_prod_info_format(info, true, text, sizeof text);
    log_debug("sent %s", text);
  }
  return 0;
}

/* Read what the downstream sent us: stray replies are dropped, an EOF or
 * a broken record ends the feed.  Never blocks. */
static int drain(upstream *u) {
  ldm6_io *io = u->c->io;

  u->since_drain = 0;
  for (;;) {
    struct pollfd p = {.fd = ldm6_io_fd(io), .events = POLLIN};
    ldm6_io_msg m;
    int rc;

    if (!ldm6_io_buffered(io) && poll(&p, 1, 0) <= 0)
      return LDM6_IO_OK;
    rc = ldm6_io_recv(io, 0, &m);
    if (rc == LDM6_IO_TIMEDOUT)
      return LDM6_IO_OK; /* part of a record: the rest comes later */
    if (rc != LDM6_IO_OK) {
      send_failed(u, rc, "reading");
      return rc;
    }
    if (m.hdr.type == LDM6_RPC_CALL)
      log_debug("call %u from %s after the turn-around ignored",
                (unsigned)m.hdr.u.call.proc, u->c->peer);
  }
}

/* At the end of the queue: flush, keep alive, wait for the next product. */
static int idle(upstream *u) {
  int64_t keepalive =
      u->mode == UP_V5 ? LDMD_V5_KEEPALIVE_MS : u->c->set->interval_ms;
  uint32_t vers = u->mode == UP_V5 ? LDM6_VERSION5 : LDM6_VERSION6;
  int timeout = u->mode == UP_V5 ? (int)u->c->set->rpc_timeout * 1000
                                 : LDMD_SYNC_TIMEOUT_MS;
  int64_t left;
  int rc;

  if (u->oneway_pending || mono_ms() - u->last_call >= keepalive) {
    rc = send_sync(u, vers, LDM6_NULLPROC, NULL, 0, timeout, LDM6_T_VOID, NULL,
                   "nullproc");
    if (rc != LDM6_IO_OK)
      return rc;
  }
  rc = drain(u);
  if (rc != LDM6_IO_OK)
    return rc;
  left = u->last_call + keepalive - mono_ms();
  if (left > LDMD_SLICE_MS)
    left = LDMD_SLICE_MS;
  if (left < 0)
    left = 0;
  rc = pq_wait(u->pq, (int)left);
  if (rc != PQ_OK && rc != PQ_TIMEDOUT) {
    log_error("cannot wait on the queue %s: %s", pq_path(u->pq),
              pq_strerror(rc));
    return LDM6_IO_ESYS;
  }
  return LDM6_IO_OK;
}

/* The feed: products as they come, until the peer leaves, a send fails,
 * or the server stops.  @return LDMD_DONE or LDMD_FAIL */
static int feed(upstream *u) {
  for (;;) {
    int rc;

    if (*u->c->set->stop) {
      /* Calls still queued are dropped: the downstream resumes before
       * them. */
      log_info("stopping");
      return LDMD_DONE;
    }
    rc = pq_next(u->pq, PQ_FORWARD, &u->cls, send_product, u);
    if (rc == PQ_OK) {
      if (++u->since_drain >= DRAIN_EVERY && drain(u) != LDM6_IO_OK)
        return LDMD_DONE;
      continue;
    }
    if (rc == UP_ESEND)
      return LDMD_DONE;
    if (rc != PQ_END) {
      log_error("cannot read the queue %s: %s", pq_path(u->pq),
                pq_last_error(u->pq)->pe_msg);
      return LDMD_FAIL;
    }
    rc = idle(u);
    if (rc == LDM6_IO_CLOSED)
      return LDMD_DONE;
    if (rc != LDM6_IO_OK)
      return LDMD_FAIL;
  }
}

/* Put the cursor where the feed starts: after the resume product if the
 * queue still has it, else at the class's from time. */
static void position(upstream *u, bool have_sig, const uint8_t *sig) {
  if (have_sig) {
    int rc = pq_cursor_after_signature(u->pq, sig);
    char hex[33];

    pq_sig_format(sig, hex);
    if (rc == PQ_OK) {
      log_info("resuming after product %s", hex);
      return;
    }
    log_info("product %s is not in the queue: starting from the class's time",
             hex);
  }
  pq_cursor_set(u->pq, pq_ts_to_us(u->cls.from));
}

/* After OK: the whole life of the feed. */
static int start_feed(upstream *u, const ldm6_io_msg *m, bool have_sig,
                      const uint8_t *sig) {
  static const char *const modes[] = {"primary", "alternate", "notify",
                                      "LDM-5"};
  char ident[1100], text[CLASS_TEXT], hex[33] = "NONE";
  int rc;

  u->pq = open_queue(u->c);
  if (u->pq == NULL) {
    (void)ldmd_conn_reply_error(u->c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_FAIL;
  }
  position(u, have_sig, sig);
  rc = answer(u->c, m, LDM6_OK, NULL);
  if (rc != LDMD_CONTINUE)
    return rc;
  snprintf(ident, sizeof ident, "%s(%s)", u->c->name,
           u->mode == UP_NOTIFY ? "noti" : "feed");
  ldm_log_set_ident(ident);
  class_text(&u->cls, text, sizeof text);
  if (have_sig)
    pq_sig_format(sig, hex);
  log_notice("starting up (ldmd %s/%u): %s, SIG=%s, %s", LDMD_VERSION,
             (unsigned)m->hdr.u.call.vers, text, hex, modes[u->mode]);
  if (ldm_conf_filter_format(&u->filter, text, sizeof text) >= 0)
    log_info("topo: %s %s", u->c->name, text);
  u->last_call = mono_ms();
  rc = feed(u);
  log_notice("%llu products sent (%llu bytes), %llu declined",
             (unsigned long long)u->nsent, (unsigned long long)u->nbytes,
             (unsigned long long)u->ndeclined);
  pq_close(u->pq);
  return rc;
}

/* Decode the request into wire (the class) and choose the mode. */
static int decode_request(ldmd_conn *c, const ldm6_io_msg *m, ldm6_feedpar *fp,
                          enum up_mode *mode) {
  uint32_t proc = m->hdr.u.call.proc;
  size_t used;
  int rc;

  if (proc == LDM6_NOTIFYME) {
    *mode = UP_NOTIFY;
    rc = ldm6_decode(LDM6_T_PROD_CLASS, m->body, m->body_len, &fp->prod_class,
                     &used);
  } else if (m->hdr.u.call.vers == LDM6_VERSION6) {
    rc = ldm6_decode(LDM6_T_FEEDPAR, m->body, m->body_len, fp, &used);
    *mode = fp->max_hereis > 0x7fffffffu ? UP_PRIMARY : UP_ALTERNATE;
  } else {
    *mode = UP_V5;
    rc = ldm6_decode(LDM6_T_PROD_CLASS, m->body, m->body_len, &fp->prod_class,
                     &used);
  }
  if (rc != 0)
    log_warning("undecodable %s from %s: %s",
                proc == LDM6_NOTIFYME ? "NOTIFYME" : "FEEDME", c->peer,
                ldm6_strerror(rc));
  return rc;
}

int ldmd_upstream(ldmd_conn *c, const ldm6_io_msg *m) {
  upstream u;
  ldm6_feedpar fp;
  pq_class want, allowed;
  uint8_t sig[PQ_SIGLEN];
  char err[512], text[CLASS_TEXT];
  bool have_sig;
  int rc;

  memset(&u, 0, sizeof u);
  u.c = c;
  if (decode_request(c, m, &fp, &u.mode) != 0)
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_GARBAGE_ARGS);
  have_sig = separate_signature(&fp.prod_class, sig, c->peer);
  rc = ldm6_class_to_pq(&fp.prod_class, &want, err, sizeof err);
  if (rc == LDM6_EPATTERN) {
    log_warning("bad pattern from %s: %s", c->peer, err);
    return answer(c, m, LDM6_BADPATTERN, NULL);
  }
  if (rc != 0) {
    log_warning("bad class from %s: %s", c->peer, ldm6_strerror(rc));
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_GARBAGE_ARGS);
  }
  rc = ldm_conf_allowed_class(c->set->conf, c->named ? c->name : NULL, c->ip,
                              &want, &allowed, &u.filter, err, sizeof err);
  if (rc == LDM_CONF_OK && ldm_conf_class_equal(&allowed, &want)) {
    pq_class_free(&allowed);
    u.cls = want;
    rc = start_feed(&u, m, have_sig, sig);
    pq_class_free(&u.cls);
    return rc;
  }
  pq_class_free(&want);
  switch (rc) {
  case LDM_CONF_OK:
    class_text(&allowed, text, sizeof text);
    log_notice("reclassifying the request of %s to %s", c->peer, text);
    rc = answer(c, m, LDM6_RECLASS, &allowed);
    break;
  case LDM_CONF_EDENIED:
    log_notice("nothing requested by %s is allowed: %s", c->peer, err);
    rc = answer(c, m, LDM6_RECLASS, NULL);
    break;
  case LDM_CONF_EPATTERN:
    log_warning("bad pattern from %s: %s", c->peer, err);
    rc = answer(c, m, LDM6_BADPATTERN, NULL);
    break;
  default:
    log_error("cannot serve the request of %s: %s", c->peer, err);
    rc = ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    break;
  }
  pq_class_free(&allowed);
  return rc;
}
