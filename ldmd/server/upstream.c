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
 * No queue lock is held while the network may make the process wait (see
 * "Sending" below): a product read from the queue is held, and a held
 * product cannot be evicted.  On a plain primary feed a product of 16 KiB
 * or more goes from the queue file by reference (sendfile) and stays held
 * (pinned, pins.h) until the peer has its bytes (docs/protocol.md, section
 * 6.8).  Otherwise a large product's data goes to the socket
 * straight from the queue's mapping, as far as the socket takes it at
 * once, the rest piece by piece from the product found again by its
 * signature; small ones (up to 16 KiB) are copied into the connection's
 * output buffer and go out in batches of up to 64 records or 256 KiB
 * (ldm6_io_queue_copy()): one system call and one trip through TCP per
 * batch, not per product, while the feed is behind the queue.
 * COMINGSOON and LDM-5's calls are made after the product is released.
 * At the end of the queue the batch is written and a NULLPROC flushes the
 * one-way calls, if any were sent since the last one, and confirms their
 * delivery; its answer is not waited for (drain() reads it; one at a time,
 * each within 60 s; LDM-5's is synchronous).  The process then sleeps on
 * the queue's wake-up word, so a product committed
 * by any process is sent at once (LDM waits for a signal and can stall up
 * to 30 s).  Every second it also looks at the socket: a peer that closed
 * is noticed within a second, and stray replies (notifyme answers each
 * NOTIFICATION with PROC_UNAVAIL) are read and dropped so they never fill
 * the socket buffers.  After 30 s without a call, a NULLPROC keep-alive.
 *
 * A resumed feed (a trailing {NONE, "SIG=<hex>"} spec) starts just after
 * that product if the queue still has it, else at the class's from time.
 *
 * A feed of data reads with verification on (pq_set_verify()): a
 * product's bytes are checked against the CRC32C its commit recorded
 * before any of them is sent, so bytes damaged in the queue file never go
 * downstream under the product's signature.  By default
 * (/server/check-sent ONCE) a product another reader has already found
 * sound is trusted, so that the check is paid once per product, not once
 * per feed; EACH checks every product in every feed.  A damaged product is
 * logged (ERROR: insertion time, signature, identifier) and skipped, once;
 * the feed goes on with the next (docs/security.md, "Damaged products").
 * A NOTIFYME sends no data and does not pay for the check.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_text.h"
#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/clock.h"
#include "ldmd/server/feeds.h"
#include "ldmd/server/hub.h"
#include "ldmd/server/oneway.h"
#include "ldmd/server/pins.h"
#include "ldmd/server/server.h"

#define DRAIN_EVERY 32   /* products sent between looks at the socket */
#define UP_ESEND 1       /* callback result: a send failed */
#define UP_FLUSH 2       /* callback result: write the batch, then again */
#define UP_GONE 3        /* callback result: not the product looked for */
#define UP_WAIT 4        /* callback result: wait for the socket, then again */
#define UP_LATER 5       /* callback result: finish the last one, then again */
#define UP_ALONE 6       /* callback result: read it alone (to pin it), again */
#define CLASS_TEXT 10240 /* LDM's text of a class */
/* Zero-copy (plain primary feeds): products of at least ZC_MIN bytes go
 * from the queue file by sendfile(2), pinned until the peer has them;
 * at most PIN_BYTES_MAX bytes (and 1/PIN_SHARE of the data area) pinned
 * per connection.  Smaller ones are cheaper copied into the batch. */
#define ZC_MIN LDM6_IO_COPY_MAX
#define PIN_BYTES_MAX (8u << 20)
#define PIN_SHARE 32
#define PIN_LINGER_MS 10000 /* a peer on this host reads what it has */
#define PIN_STOP_MS 1000    /* the same while the server stops */

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
  /* Read one product at a time (zero-copy: only a batch of one is pinned). */
  bool alone;
  enum pq_verify verify; /* a feed of data: products checked before sent */
  uint64_t nsent, nbytes, ndeclined, nskipped, ndamaged;
  uint64_t nzc; /* products whose data went from the queue file */
  /* A large one-way record the socket has not taken whole yet. */
  struct {
    bool on;
    uint32_t proc;
    ldmd_piece r;
  } part;
  /* Zero-copy: the products the socket may still read from the queue
   * file, and the one whose data it has not taken whole yet. */
  bool zero_copy;
  ldmd_pins pins;
  struct {
    bool on;
    uint8_t head[LDMD_INFO_BUF];
    size_t hlen;
    uint32_t dlen;
    pq_pin_t pin;
    char ident[PQ_IDENT_MAX + 1];
    ldm6_io_partial st;
  } zc;
  /* The NULLPROC at the end of the queue (LDM-6), sent without waiting
   * for its answer, which drain() reads: at most one at a time. */
  struct {
    bool on;
    uint32_t xid;
    int64_t sent; /* when (ms) */
    uint64_t pos; /* the connection's byte position then */
  } np;
  /* Alternate and LDM-5 modes: the product taken by the read callback. */
  bool offering;
  ldm6_prod_info offer;
  pq_prod_info offer_info;
  uint8_t v5buf[LDM6_DBUFMAX]; /* a small product, or one packet */
  uint32_t v5off, v5len;       /* the packet copy_packet() takes */
} upstream;

/* LDM's class text, "<from> <to> {{FEEDTYPE, "ERE"},...}", of the class as
 * it goes on the wire.  Ours come from the wire (the request, or the part
 * of it the configuration allows), so the conversion back cannot fail; the
 * text says so if it does. */
static void class_text(const pq_class *cls, char *buf, size_t len) {
  ldm6_prod_class wire;
  int rc = ldm6_class_from_pq(cls, &wire);

  if (rc != 0)
    snprintf(buf, len, "(a class LDM-6 cannot carry: %s)", ldm6_strerror(rc));
  else
    ldm6_class_format(&wire, buf, len);
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

/* Open the queue: read-write, else read-only (a file this process may
 * only read).  Either way pq_wait() registers for an immediate wake-up when
 * the process may write the file, since a read-only handle then maps it
 * writable too; only a read-only mapping sleeps in 10 ms slices. */
static pq_t *open_queue(const ldmd_conn *c) {
  pq_t *pq = NULL;
  pq_error err;

  if (pq_open(c->set->queue_path, 0, &pq, &err) == PQ_OK ||
      pq_open(c->set->queue_path, PQ_READONLY, &pq, &err) == PQ_OK) {
    /* No spin before pq_wait() sleeps: a feed at the end of the queue
     * has just flushed and waited for the downstream's answer, so a
     * product rarely comes within the spin, and N feeds spinning on
     * every commit cost N times the spin (docs/protocol.md §6.8). */
    pq_set_spin(pq, 0);
    return pq;
  }
  log_error("cannot open the queue %s: %s", c->set->queue_path, err.pe_msg);
  return NULL;
}

/* ---------------------------------------------------------------------- */
/* Sending                                                                */
/* ---------------------------------------------------------------------- */

/*
 * No queue lock is held across the network.  pq_next_many() (pq_next()
 * for alternate, LDM-5 and zero-copy reads, see read_next()) hands
 * products to send_product() read-locked, and a held product cannot be
 * evicted, so the callback never waits for the downstream:
 *
 *   - a small record (HEREIS, NOTIFICATION, BLKDATA up to 16 KiB) is
 *     copied into the connection's batch; when the batch is full the
 *     callback returns UP_FLUSH, feed() writes the batch with no lock held
 *     and the product is offered again;
 *   - a large one on a plain primary feed is pinned (pq_pin()) and its
 *     data handed to the socket from the queue file by sendfile, its
 *     head through the batch (ldm6_io_send_file_nowait()); the rest, if
 *     the socket did not take it all, after the callback from the same
 *     pinned bytes (finish_zc()).  The pin joins the connection's FIFO
 *     (pins.h) and is released once the peer has the product's last byte.
 *     With every pin in use and the socket full, the callback returns
 *     UP_WAIT: feed() waits holding nothing (wait_room()), and the
 *     product is offered again;
 *   - any other large one goes from the mapping to the socket as far as the
 *     socket takes it at once (ldm6_io_send_nowait()); the rest is sent
 *     after the callback, each piece from the product found again by its
 *     signature (pq_find(), held only while the piece is written).  If it
 *     left the queue meanwhile, the downstream was too slow to get it: a
 *     record not begun is skipped, one begun cannot be finished and the
 *     connection closes (the downstream resumes after what it got);
 *   - COMINGSOON (alternate mode) and every LDM-5 call are synchronous:
 *     the callback only takes a copy of the metadata (and of a small
 *     LDM-5 product's data); the call is made after it, and the data of
 *     the BLKDATA found again by signature once the answer is OK.
 */

static void send_failed(const upstream *u, int rc, const char *what) {
  if (rc == LDM6_IO_STOPPED) /* the server stops: no failure */
    log_info("stopping while %s to %s", what, u->c->peer);
  else if (rc == LDM6_IO_CLOSED)
    log_notice("connection closed by %s", u->c->peer);
  else if (rc == LDM6_IO_EREPLY)
    log_error("%s: %s refused the call", what, u->c->peer);
  else
    log_error("%s to %s failed: %s %s", what, u->c->peer, ldm6_io_strerror(rc),
              ldm6_io_detail(u->c->io));
}

/* Write the batch, with no lock held. */
static int flush(upstream *u) {
  int rc = ldm6_io_flush(u->c->io);

  if (rc != LDM6_IO_OK)
    send_failed(u, rc, "sending");
  return rc;
}

/* The next piece of the large record in u->part, its data at data, as
 * far as the socket takes it now.  @return 0 or UP_ESEND */
static int put_piece(upstream *u, const void *data) {
  struct iovec iov[3];
  int rc;

  ldmd_record_iov(iov, u->part.r.head, u->part.r.hlen, data, u->part.r.dlen);
  rc = ldm6_io_send_nowait(u->c->io, LDM6_VERSION6, u->part.proc, iov, 3,
                           &u->part.r.st);
  u->part.on = rc == LDM6_IO_AGAIN; /* finish_part() sends the rest */
  if (rc != LDM6_IO_OK && rc != LDM6_IO_AGAIN) {
    send_failed(u, rc, u->part.proc == LDM6_BLKDATA ? "blkdata" : "hereis");
    return UP_ESEND;
  }
  u->oneway_pending = true; /* idle()'s NULLPROC follows, and dates it */
  return 0;
}

/* A small one-way record into the batch.  @return 0, UP_FLUSH (the batch
 * is full: write it, then again), UP_ESEND */
static int put_copy(upstream *u, uint32_t proc, const uint8_t *head,
                    size_t hlen, const void *data, uint32_t dlen) {
  struct iovec iov[3];
  int rc;

  ldmd_record_iov(iov, head, hlen, data, dlen);
  rc = ldm6_io_queue_copy(u->c->io, LDM6_VERSION6, proc, iov, 3);
  if (rc == LDM6_IO_FULL)
    return UP_FLUSH;
  if (rc != LDM6_IO_OK) {
    send_failed(u, rc, "sending");
    return UP_ESEND;
  }
  u->oneway_pending = true;
  return 0;
}

/* Describe in u->part a record to send by pieces.  @return 0, or -1 for a
 * head longer than any (not made here) */
static int part_set(upstream *u, uint32_t proc, const uint8_t *head,
                    size_t hlen, uint32_t dlen, const uint8_t *sig,
                    const char *ident) {
  if (hlen > sizeof u->part.r.head)
    return -1;
  u->part.proc = proc;
  memcpy(u->part.r.head, head, hlen);
  u->part.r.hlen = hlen;
  u->part.r.dlen = dlen;
  memcpy(u->part.r.sig, sig, PQ_SIGLEN);
  snprintf(u->part.r.ident, sizeof u->part.r.ident, "%s", ident);
  memset(&u->part.r.st, 0, sizeof u->part.r.st);
  return 0;
}

/*
 * A one-way record, from a read callback: copied into the batch when
 * small, else written as far as the socket takes it, the rest left in
 * u->part for finish_part().  Never waits.
 * @return 0, UP_FLUSH, UP_ESEND
 */
static int put_oneway(upstream *u, uint32_t proc, const uint8_t *head,
                      size_t hlen, const void *data, uint32_t dlen,
                      const uint8_t *sig, const char *ident) {
  if (ldmd_small_record(hlen, dlen))
    return put_copy(u, proc, head, hlen, data, dlen);
  if (part_set(u, proc, head, hlen, dlen, sig, ident) != 0)
    return UP_ESEND;
  return put_piece(u, data);
}

/* pq_find() callback: the record in u->part (a BLKDATA not begun: whole,
 * into the batch if small), or its next piece. */
static int put_part(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  upstream *u = arg;

  (void)place;
  if (info->size != u->part.r.dlen)
    return UP_GONE; /* cannot be: the signature is the data's */
  if (!u->part.r.st.started &&
      ldmd_small_record(u->part.r.hlen, u->part.r.dlen)) {
    int rc = put_copy(u, u->part.proc, u->part.r.head, u->part.r.hlen, data,
                      u->part.r.dlen);
    if (rc == 0)
      u->part.on = false;
    return rc;
  }
  return put_piece(u, data);
}

/*
 * pq_find() for the rest of a product being sent: without verification,
 * since pq_next() checked the whole product before the callback took it
 * (each piece or LDM-5 packet would otherwise pay for a pass over all of
 * it).
 */
static int find_again(upstream *u, const uint8_t *sig, pq_read_fn *fn) {
  int rc;

  pq_set_verify(u->pq, false);
  rc = pq_find(u->pq, sig, fn, u);
  pq_set_verify(u->pq, u->verify);
  return rc;
}

/*
 * Finish the record in u->part: wait (no lock held) until the socket takes
 * more, then write the next piece from the product found again; or, for a
 * BLKDATA not begun, put the whole record (u->part.on, st not started).
 * wait_first: the socket was full a moment ago (else try at once).
 * @return LDM6_IO_OK (sent, or skipped: the product left the queue before
 *         any of it was sent), or a failure that ends the feed (logged)
 */
static int finish_part(upstream *u, bool wait_first) {
  int64_t last = ldmd_now_ms();
  uint64_t moved = u->part.r.st.sent;
  bool first = !wait_first;

  while (u->part.on) {
    int rc;

    if (*u->c->set->stop)
      return LDM6_IO_CLOSED; /* the downstream resumes before this one */
    if (!first) {            /* the socket was full */
      rc = ldm6_io_wait_writable(u->c->io, LDMD_SLICE_MS);
      if (rc == LDM6_IO_TIMEDOUT) {
        if (ldmd_now_ms() - last < LDMD_SYNC_TIMEOUT_MS)
          continue;
        log_error("%s took nothing of %s for %d s: closing", u->c->peer,
                  u->part.r.ident, LDMD_SYNC_TIMEOUT_MS / 1000);
        return LDM6_IO_TIMEDOUT;
      }
      if (rc != LDM6_IO_OK) {
        send_failed(u, rc, "sending");
        return rc;
      }
    }
    first = false;
    rc = find_again(u, u->part.r.sig, put_part);
    if (rc == UP_FLUSH) {
      rc = flush(u);
      if (rc != LDM6_IO_OK)
        return rc;
      continue;
    }
    if (rc == UP_ESEND)
      return LDM6_IO_ESYS;
    if (rc == PQ_NOTFOUND || rc == UP_GONE) {
      char hex[33];

      pq_sig_format(u->part.r.sig, hex);
      u->part.on = false;
      if (!u->part.r.st.started) {
        u->nskipped++;
        log_notice("%s (%s) left the queue before it could be sent to %s: "
                   "skipped (the downstream is slow)",
                   u->part.r.ident, hex, u->c->peer);
        return LDM6_IO_OK;
      }
      log_error("%s (%s) left the queue while it was being sent to %s "
                "(%llu bytes of the record sent): closing, the downstream "
                "resumes after what it got",
                u->part.r.ident, hex, u->c->peer,
                (unsigned long long)u->part.r.st.sent);
      return LDM6_IO_EPROTO;
    }
    if (rc != PQ_OK) {
      log_error("cannot read the queue %s: %s", pq_path(u->pq),
                pq_last_error(u->pq)->pe_msg);
      return LDM6_IO_ESYS;
    }
    if (u->part.r.st.sent != moved) {
      moved = u->part.r.st.sent;
      last = ldmd_now_ms();
    }
  }
  return LDM6_IO_OK;
}

/* A synchronous call, with no lock held; the results are decoded as type
 * into value. */
static int send_sync(upstream *u, uint32_t vers, uint32_t proc,
                     const struct iovec *iov, int niov, int timeout_ms,
                     ldm6_type type, void *value, const char *what) {
  ldm6_io_msg reply;
  size_t used;
  int rc = ldm6_io_call(u->c->io, vers, proc, iov, niov, timeout_ms, &reply);

  u->last_call = ldmd_now_ms();
  if (rc != LDM6_IO_OK) {
    send_failed(u, rc, what);
    return rc;
  }
  u->oneway_pending = false;
  /* The peer answered after reading every record before the call, a
   * NULLPROC still unanswered too (drain() dropped its answer, if any). */
  u->np.on = false;
  ldmd_pins_release_all(&u->pins);
  if (type != LDM6_T_VOID &&
      ldm6_decode(type, reply.body, reply.body_len, value, &used) != 0) {
    log_error("%s: undecodable reply from %s", what, u->c->peer);
    return LDM6_IO_EPROTO;
  }
  return LDM6_IO_OK;
}

/* The zero-copy record in u->zc, as far as the socket takes it now; once
 * all its data is taken, its pin joins the FIFO.  @return 0 (done, or
 * u->zc.on: finish_zc() sends the rest), UP_ESEND */
static int put_zc(upstream *u) {
  int rc = ldm6_io_send_file_nowait(u->c->io, LDM6_VERSION6, LDM6_HEREIS,
                                    u->zc.head, u->zc.hlen, pq_fd(u->pq),
                                    u->zc.pin.pn_data, u->zc.dlen, &u->zc.st);

  if (rc == LDM6_IO_AGAIN) {
    u->zc.on = true;
    return 0;
  }
  u->zc.on = false;
  if (rc != LDM6_IO_OK) {
    pq_unpin(u->pq, &u->zc.pin);
    send_failed(u, rc, "hereis");
    return UP_ESEND;
  }
  ldmd_pins_add(&u->pins, &u->zc.pin, ldm6_io_tx_bytes(u->c->io));
  u->nzc++;
  u->oneway_pending = true;
  return 0;
}

/* Can the socket take bytes now? */
static bool writable(const upstream *u) {
  struct pollfd p = {.fd = ldm6_io_fd(u->c->io), .events = POLLOUT};

  return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0;
}

/* Primary mode, from the read callback. */
static int send_hereis(upstream *u, const ldm6_prod_info *w, const void *data) {
  uint8_t head[LDMD_INFO_BUF];
  size_t hlen;

  if (ldm6_encode(LDM6_T_PROD_INFO, w, head, sizeof head, &hlen) != 0)
    return UP_ESEND;
  if (u->zero_copy && w->sz >= ZC_MIN) {
    bool room = ldmd_pins_room(&u->pins, w->sz, ldm6_io_tx_bytes(u->c->io));
    bool pinned;

    if (!room && !writable(u))
      return UP_WAIT; /* a copy would not go now either: wait unheld */
    pinned = room && pq_pin(u->pq, &u->zc.pin) == PQ_OK;
    if (room && !pinned && !u->alone) {
      /* Read in a batch of several, whose one lock cannot become this
       * product's pin: read it alone, and the ones after it while they
       * go from the queue file too. */
      u->alone = true;
      return UP_ALONE;
    }
    if (pinned) {
      memcpy(u->zc.head, head, hlen);
      u->zc.hlen = hlen;
      u->zc.dlen = w->sz;
      snprintf(u->zc.ident, sizeof u->zc.ident, "%s", w->ident);
      memset(&u->zc.st, 0, sizeof u->zc.st);
      return put_zc(u);
    }
  } else {
    u->alone = false; /* copied: batches of several again */
  }
  return put_oneway(u, LDM6_HEREIS, head, hlen, data, w->sz, w->signature,
                    w->ident);
}

/*
 * The pins are all in use and the socket is full: wait, holding nothing,
 * until the socket takes bytes or pins are released, then the product is
 * offered again (if it left the queue meanwhile, it is skipped: the
 * downstream was too slow for it).  A peer that takes nothing for
 * LDMD_SYNC_TIMEOUT_MS is dropped, as in finish_part().
 * @return LDM6_IO_OK, or a failure that ends the feed (logged)
 */
static int wait_room(upstream *u) {
  int64_t start = ldmd_now_ms();
  int rc = flush(u);

  while (rc == LDM6_IO_OK) {
    if (*u->c->set->stop)
      return LDM6_IO_CLOSED;
    if (ldmd_pins_reap(&u->pins, ldm6_io_tx_bytes(u->c->io)) < LDMD_PINS_MAX &&
        u->pins.bytes <= u->pins.limit / 2)
      return LDM6_IO_OK;
    rc = ldm6_io_wait_writable(u->c->io, 10);
    if (rc == LDM6_IO_OK)
      return LDM6_IO_OK;
    if (rc != LDM6_IO_TIMEDOUT) {
      send_failed(u, rc, "sending");
      return rc;
    }
    rc = LDM6_IO_OK;
    if (ldmd_now_ms() - start >= LDMD_SYNC_TIMEOUT_MS) {
      log_error("%s took nothing for %d s: closing", u->c->peer,
                LDMD_SYNC_TIMEOUT_MS / 1000);
      return LDM6_IO_TIMEDOUT;
    }
  }
  return rc;
}

/* Finish the zero-copy record in u->zc: its product is pinned, so the
 * rest comes from the same place.  A peer that takes nothing for
 * LDMD_SYNC_TIMEOUT_MS is dropped, as in finish_part().
 * @return LDM6_IO_OK, or a failure that ends the feed (logged) */
static int finish_zc(upstream *u) {
  int64_t last = ldmd_now_ms();
  uint64_t moved = u->zc.st.sent;

  while (u->zc.on) {
    int rc;

    if (*u->c->set->stop)
      return LDM6_IO_CLOSED;
    rc = ldm6_io_wait_writable(u->c->io, LDMD_SLICE_MS);
    if (rc == LDM6_IO_TIMEDOUT) {
      if (ldmd_now_ms() - last < LDMD_SYNC_TIMEOUT_MS)
        continue;
      log_error("%s took nothing of %s for %d s: closing", u->c->peer,
                u->zc.ident, LDMD_SYNC_TIMEOUT_MS / 1000);
      return LDM6_IO_TIMEDOUT;
    }
    if (rc != LDM6_IO_OK) {
      send_failed(u, rc, "sending");
      return rc;
    }
    if (put_zc(u) != 0)
      return LDM6_IO_ESYS;
    if (u->zc.st.sent != moved) {
      moved = u->zc.st.sent;
      last = ldmd_now_ms();
    }
  }
  return LDM6_IO_OK;
}

/* NOTIFYME, from the read callback. */
static int send_notification(upstream *u, const ldm6_prod_info *w) {
  uint8_t head[LDMD_INFO_BUF];
  size_t hlen;

  if (ldm6_encode(LDM6_T_PROD_INFO, w, head, sizeof head, &hlen) != 0)
    return UP_ESEND;
  return put_oneway(u, LDM6_NOTIFICATION, head, hlen, NULL, 0, w->signature,
                    w->ident);
}

/* Alternate mode, after the read callback: COMINGSOON, then the data in
 * one BLKDATA from the product found again.  @return LDM6_IO_* */
static int send_comingsoon(upstream *u, const ldm6_prod_info *w) {
  ldm6_comingsoon_args args = {.info = *w, .pktsz = w->sz};
  ldm6_datapkt pkt = {.pktnum = 0, .data_len = w->sz};
  ldm6_comingsoon_reply reply = LDM6_DONT_SEND;
  uint8_t head[LDMD_INFO_BUF];
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
  if (part_set(u, LDM6_BLKDATA, head, iov.iov_len, w->sz, w->signature,
               w->ident) != 0)
    return LDM6_IO_EPROTO;
  u->part.on = true;
  return finish_part(u, false);
}

/* An LDM-5 call with an ldm_replyt answer; *code gets the answer. */
static int v5_call(upstream *u, uint32_t proc, const uint8_t *head, size_t hlen,
                   const void *data, uint32_t dlen, ldm6_errt *code,
                   const char *what) {
  struct iovec iov[3];
  ldm6_replyt r;
  int rc;

  ldmd_record_iov(iov, head, hlen, data, dlen);
  r.code = LDM6_OK;
  rc = send_sync(u, LDM6_VERSION5, proc, iov, 3,
                 (int)u->c->set->rpc_timeout * 1000, LDM6_T_REPLYT, &r, what);
  *code = r.code;
  return rc;
}

/* pq_find() callback: copy a packet of the product's data into u->v5buf. */
static int copy_packet(const pq_prod_info *info, const void *data,
                       const pq_place *place, void *arg) {
  upstream *u = arg;

  (void)place;
  if (info->size < (uint64_t)u->v5off + u->v5len)
    return UP_GONE;
  memcpy(u->v5buf, (const uint8_t *)data + u->v5off, u->v5len);
  return 0;
}

/* LDM-5: the data of a large product in packets of LDM6_DBUFMAX bytes,
 * each copied from the product found again and then sent, each answered;
 * stops at the first answer other than OK. */
static int v5_packets(upstream *u, const ldm6_prod_info *w, ldm6_errt *code) {
  uint8_t head[LDMD_INFO_BUF];
  uint32_t off = 0, pktnum = 0;
  int rc = LDM6_IO_OK;

  while (rc == LDM6_IO_OK && *code == LDM6_OK && off < w->sz) {
    uint32_t n = w->sz - off < LDM6_DBUFMAX ? w->sz - off : LDM6_DBUFMAX;
    ldm6_datapkt pkt = {.pktnum = pktnum, .data_len = n};
    size_t hlen;
    int found;

    u->v5off = off;
    u->v5len = n;
    found = find_again(u, w->signature, copy_packet);
    if (found != PQ_OK) {
      log_notice("%s left the queue while it was being sent to %s: "
                 "%u of its %u bytes sent",
                 w->ident, u->c->peer, (unsigned)off, (unsigned)w->sz);
      u->nskipped++;
      return LDM6_IO_OK;
    }
    pktnum++;
    memcpy(pkt.signature, w->signature, PQ_SIGLEN);
    if (ldm6_encode_datapkt_head(&pkt, head, sizeof head, &hlen) != 0)
      return LDM6_IO_EPROTO;
    rc = v5_call(u, LDM6_BLKDATA, head, hlen, u->v5buf, n, code, "blkdata");
    off += n;
  }
  return rc;
}

/* LDM-5, after the read callback: HEREIS for small products (their data
 * copied by the callback), else COMINGSOON and BLKDATA packets, every call
 * answered. */
static int send_v5(upstream *u, const ldm6_prod_info *w) {
  uint8_t head[LDMD_INFO_BUF];
  size_t hlen;
  ldm6_errt code = LDM6_OK;
  int rc;

  if (w->sz <= LDM6_DBUFMAX) {
    if (ldm6_encode(LDM6_T_PROD_INFO, w, head, sizeof head, &hlen) != 0)
      return LDM6_IO_EPROTO;
    rc = v5_call(u, LDM6_HEREIS, head, hlen, u->v5buf, w->sz, &code, "hereis");
  } else {
    ldm6_comingsoon_args args = {.info = *w, .pktsz = LDM6_DBUFMAX};

    if (ldm6_encode(LDM6_T_COMINGSOON_ARGS, &args, head, sizeof head, &hlen) !=
        0)
      return LDM6_IO_EPROTO;
    rc = v5_call(u, LDM6_COMINGSOON, head, hlen, NULL, 0, &code, "comingsoon");
    if (rc == LDM6_IO_OK && code == LDM6_OK)
      rc = v5_packets(u, w, &code);
  }
  if (rc == LDM6_IO_OK && code == LDM6_SHUTTING_DOWN) {
    log_notice("%s is shutting down", u->c->peer);
    return LDM6_IO_CLOSED;
  }
  if (rc == LDM6_IO_OK && code != LDM6_OK)
    u->ndeclined++;
  return rc;
}

static void sent(upstream *u, const pq_prod_info *info) {
  u->nsent++;
  u->nbytes += info->size;
  ldmm_sent(u->c->ms, info->size);
  if (ldm_log_enabled(LDM_LOG_DEBUG)) {
    char text[640];

    pq_prod_info_format(info, true, text, sizeof text);
    log_debug("sent %s", text);
  }
}

/* Read callback (read_next()): a product that passed the class, locked.
 * Primary and notify records are put at once (never waiting); alternate
 * and LDM-5 products are taken for offer() to send after the lock. */
static int send_product(const pq_prod_info *info, const void *data,
                        const pq_place *place, void *arg) {
  upstream *u = arg;
  ldm6_prod_info w;
  int rc;

  (void)place;
  /* In a batch (pq_next_many()): what the product before left for after
   * the lock comes first, and the socket is looked at every DRAIN_EVERY
   * products; this one is offered again after that. */
  if (u->part.on || u->zc.on || u->offering || u->since_drain >= DRAIN_EVERY)
    return UP_LATER;
  u->since_drain++;
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
  case UP_NOTIFY:
    rc = send_notification(u, &w);
    break;
  default: /* UP_ALTERNATE, UP_V5 */
    u->offer = w;
    u->offer_info = *info;
    if (u->mode == UP_V5 && w.sz <= LDM6_DBUFMAX)
      memcpy(u->v5buf, data, w.sz);
    u->offering = true;
    return 0;
  }
  if (rc == 0)
    sent(u, info);
  else
    u->since_drain--; /* offered again, or the feed ends */
  return rc;
}

/* After the read: the product taken for alternate or LDM-5 mode.
 * @return LDM6_IO_* */
static int offer(upstream *u) {
  int rc;

  u->offering = false;
  rc = u->mode == UP_V5 ? send_v5(u, &u->offer) : send_comingsoon(u, &u->offer);
  if (rc == LDM6_IO_OK)
    sent(u, &u->offer_info);
  return rc;
}

/*
 * The flush at the end of the queue (LDM-6): a NULLPROC, sent after the
 * batch, whose answer is not waited for: drain() reads it, and idle()
 * ends the feed if it has not come within LDMD_SYNC_TIMEOUT_MS, as
 * a synchronous call's would.  The feed goes back to the queue at once
 * instead of sleeping until the downstream has answered, and a product
 * that comes meanwhile is sent at once; the next flush waits for this
 * one's answer.  @return LDM6_IO_OK, or a send failure (logged)
 */
static int send_np(upstream *u) {
  int rc = ldm6_io_send_call(u->c->io, LDM6_VERSION6, LDM6_NULLPROC, NULL, 0,
                             &u->np.xid);

  u->last_call = ldmd_now_ms();
  if (rc != LDM6_IO_OK) {
    send_failed(u, rc, "nullproc");
    return rc;
  }
  u->np.on = true;
  u->np.sent = u->last_call;
  u->np.pos = ldm6_io_tx_bytes(u->c->io);
  u->oneway_pending = false; /* the flush is on its way */
  return LDM6_IO_OK;
}

/* The answer to the NULLPROC of send_np(): the peer has everything sent
 * before it.  @return LDM6_IO_OK, or LDM6_IO_EREPLY (refused: logged) */
static int np_answered(upstream *u, const ldm6_io_msg *m) {
  u->np.on = false;
  if (m->hdr.u.reply.reply_stat != LDM6_RPC_MSG_ACCEPTED ||
      m->hdr.u.reply.accept_stat != LDM6_RPC_SUCCESS) {
    send_failed(u, LDM6_IO_EREPLY, "nullproc");
    return LDM6_IO_EREPLY;
  }
  ldmd_pins_release_to(&u->pins, u->np.pos);
  return LDM6_IO_OK;
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
    else if (u->np.on && m.hdr.xid == u->np.xid &&
             (rc = np_answered(u, &m)) != LDM6_IO_OK)
      return rc;
  }
}

/* At the end of the queue: flush, keep alive, wait for the next product. */
static int idle(upstream *u) {
  int64_t keepalive =
      u->mode == UP_V5 ? LDMD_V5_KEEPALIVE_MS : u->c->set->interval_ms;
  int timeout = u->mode == UP_V5 ? (int)u->c->set->rpc_timeout * 1000
                                 : LDMD_SYNC_TIMEOUT_MS;
  bool due = u->oneway_pending || ldmd_now_ms() - u->last_call >= keepalive;
  int64_t left;
  /* What the peer sent first: the last NULLPROC's answer, if it came, lets
   * this burst's go now. */
  int rc = drain(u);

  if (rc != LDM6_IO_OK)
    return rc;
  if (u->mode == UP_V5 && due) /* LDM-5: every call synchronous */
    rc = send_sync(u, LDM6_VERSION5, LDM6_NULLPROC, NULL, 0, timeout,
                   LDM6_T_VOID, NULL, "nullproc");
  else if (due && !u->np.on)
    rc = send_np(u); /* the batch first */
  else
    rc = flush(u);
  if (rc != LDM6_IO_OK)
    return rc;
  if (u->np.on && ldmd_now_ms() - u->np.sent >= timeout) {
    log_error("nullproc to %s failed: no answer in %d s", u->c->peer,
              timeout / 1000);
    return LDM6_IO_TIMEDOUT;
  }
  /* Until the keep-alive is due, or a second while a NULLPROC is
   * unanswered (the keep-alive waits for it). */
  left = u->np.on ? LDMD_SLICE_MS : u->last_call + keepalive - ldmd_now_ms();
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

/*
 * The next products from the queue.  Primary and NOTIFYME feeds take them
 * in batches (pq_next_many(): one walk of the index and one lock for up to
 * PQ_NEXT_MANY_MAX products, instead of per product); a product whose
 * record the socket did not take whole ends the batch (UP_LATER), so no
 * batch is held while the feed waits.  A zero-copy product is read alone,
 * since only a batch of one may become a pin.  Alternate and LDM-5 feeds
 * make a synchronous call per product after its read, so they read one
 * at a time (a batch would end at its second product anyway).
 */
static int read_next(upstream *u) {
  if (u->mode == UP_ALTERNATE || u->mode == UP_V5 || u->alone)
    return pq_next(u->pq, PQ_FORWARD, &u->cls, send_product, u);
  return pq_next_many(u->pq, PQ_FORWARD, &u->cls, PQ_NEXT_MANY_MAX,
                      send_product, u);
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
    rc = read_next(u);
    /* Where the feed is, for its lag behind the queue (one store). */
    ldmm_cursor(u->c->ms, pq_cursor_get(u->pq));
    if (rc == UP_ESEND)
      return LDMD_DONE;
    /* What the callback left for after the lock: whatever ended the
     * batch, its products before that one were handled. */
    if (u->part.on && finish_part(u, true) != LDM6_IO_OK)
      return LDMD_DONE;
    if (u->zc.on && finish_zc(u) != LDM6_IO_OK)
      return LDMD_DONE;
    if (u->offering && offer(u) != LDM6_IO_OK)
      return LDMD_DONE;
    if (u->since_drain >= DRAIN_EVERY && drain(u) != LDM6_IO_OK)
      return LDMD_DONE;
    if (rc == PQ_OK || rc == UP_LATER || rc == UP_ALONE)
      continue;           /* UP_*: the product is offered again */
    if (rc == UP_FLUSH) { /* the product is offered again after this */
      if (flush(u) != LDM6_IO_OK)
        return LDMD_DONE;
      continue;
    }
    if (rc == UP_WAIT) { /* the product is offered again after this */
      if (wait_room(u) != LDM6_IO_OK)
        return LDMD_DONE;
      continue;
    }
    if (rc == PQ_DAMAGED) { /* not sent; the cursor is past it */
      u->ndamaged++;
      log_error("not sent to %s: %s", u->c->peer, pq_last_error(u->pq)->pe_msg);
      continue;
    }
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

/* At the end of a zero-copy feed: no page of the queue may go out once
 * its pin is released (pins.h). */
static void end_pins(upstream *u) {
  int linger = *u->c->set->stop ? PIN_STOP_MS : PIN_LINGER_MS;
  unsigned left;

  if (u->zc.on) { /* a record begun: the peer has what the socket took */
    ldmd_pins_add(&u->pins, &u->zc.pin, ldm6_io_tx_bytes(u->c->io));
    u->zc.on = false;
  }
  left = ldmd_pins_end(&u->pins, ldm6_io_tx_bytes(u->c->io), linger);
  if (left > 0)
    log_warning("%s, on this host, had not read %u products after %d ms: "
                "released",
                u->c->peer, left, linger);
  ldmd_pins_close(&u->pins);
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

/* Has the class a pattern that may take long to match (pq_spec.costly)? */
static bool class_costly(const pq_class *cls) {
  unsigned i;

  for (i = 0; i < cls->nspecs; i++)
    if (cls->specs[i].costly)
      return true;
  return false;
}

/* Is the feed one for the feed hub (hub.h): plain primary LDM-6, with a
 * hub running and zero-copy off?  Not a class with a costly pattern: the
 * hub matches every feed's class in its one loop, so a pattern from a peer
 * that glibc's matcher takes seconds over would hold back every feed it
 * serves; in its own process it costs only its peer (docs/security.md,
 * "Patterns from peers"). */
static bool by_hub(const upstream *u) {
  return u->mode == UP_PRIMARY && !u->zero_copy && !ldm6_io_is_tls(u->c->io) &&
         u->c->set->feed_hub && u->c->set->hub_fd >= 0 &&
         !class_costly(&u->cls);
}

/* After OK: the whole life of the feed. */
static int start_feed(upstream *u, const ldm6_io_msg *m, bool have_sig,
                      const uint8_t *sig) {
  static const char *const modes[] = {"Primary", "Alternate", "notify",
                                      "LDM-5"};
  char ident[1100], text[CLASS_TEXT], hex[33] = "NONE", skipped[96] = "";
  char damaged[64] = "", zc[64] = "";
  int rc, slot = -1;

  u->pq = open_queue(u->c);
  if (u->pq == NULL) {
    (void)ldmd_conn_reply_error(u->c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_FAIL;
  }
  /* /server/check-sent: ONCE trusts a check another reader has made. */
  u->verify = u->mode == UP_NOTIFY    ? PQ_VERIFY_OFF
              : u->c->set->check_each ? PQ_VERIFY_EACH
                                      : PQ_VERIFY_ONCE;
  pq_set_verify(u->pq, u->verify);
  u->zero_copy = u->mode == UP_PRIMARY && !ldm6_io_is_tls(u->c->io) &&
                 u->c->set->zero_copy;
  if (u->zero_copy) {
    uint64_t limit = pq_data_size(u->pq) / PIN_SHARE;

    ldmd_pins_init(&u->pins, u->pq, ldm6_io_fd(u->c->io),
                   limit < PIN_BYTES_MAX ? limit : PIN_BYTES_MAX);
  } else {
    ldmd_pins_init_off(&u->pins);
  }
  position(u, have_sig, sig);
  /* One feed per downstream address and class (feeds.h); before OK, as
   * LDM's upstream database.  NOTIFYME never counts. */
  if (u->mode != UP_NOTIFY)
    slot = ldmd_feeds_join(u->c->set->feeds, u->c->ip, &u->cls,
                           u->c->set->anti_dos, u->c->peer);
  rc = answer(u->c, m, LDM6_OK, NULL);
  if (rc != LDMD_CONTINUE) {
    ldmd_feeds_leave(u->c->set->feeds, slot);
    return rc;
  }
  snprintf(ident, sizeof ident, "%s(%s)", u->c->name,
           u->mode == UP_NOTIFY ? "noti" : "feed");
  ldm_log_set_ident(ident);
  class_text(&u->cls, text, sizeof text);
  ldmm_describe(u->c->ms,
                u->mode == UP_NOTIFY ? LDMM_KIND_NOTIFYME : LDMM_KIND_UPSTREAM,
                u->c->peer, text);
  if (have_sig)
    pq_sig_format(sig, hex);
  /* LDM's words, which operators grep for: a feed's line ends with its
   * mode, a notifier's with its SIG= (docs/protocol.md, section 18) */
  if (u->mode == UP_NOTIFY)
    log_notice("Starting Up(%s/%u): %s, SIG=%s", LDMD_VERSION,
               (unsigned)m->hdr.u.call.vers, text, hex);
  else
    log_notice("Starting Up(%s/%u): %s, SIG=%s, %s", LDMD_VERSION,
               (unsigned)m->hdr.u.call.vers, text, hex, modes[u->mode]);
  if (ldm_conf_filter_format(&u->filter, text, sizeof text) >= 0)
    log_info("topo: %s %s", u->c->name, text);
  u->last_call = ldmd_now_ms();
  rc = -1;
  if (by_hub(u)) { /* hub.h: this process only waits for its end */
    ldmd_hub_end e;

    rc = ldmd_hub_delegate(u->c, &u->cls, &u->filter, pq_cursor_get(u->pq), &e);
    u->nsent = e.nsent;
    u->nbytes = e.nbytes;
    u->nskipped = e.nskipped;
    u->ndamaged = e.ndamaged;
  }
  if (rc < 0) {
    bool shared = rc == LDMD_HUB_SHARED;

    rc = feed(u);
    if (shared) /* the downstream must see the end (hub.h) */
      (void)shutdown(ldm6_io_fd(u->c->io), SHUT_RDWR);
  }
  if (u->nskipped > 0)
    snprintf(skipped, sizeof skipped,
             ", %llu left the queue before they could be sent",
             (unsigned long long)u->nskipped);
  if (u->ndamaged > 0)
    snprintf(damaged, sizeof damaged, ", %llu damaged not sent",
             (unsigned long long)u->ndamaged);
  if (u->nzc > 0)
    snprintf(zc, sizeof zc, ", %llu from the queue file",
             (unsigned long long)u->nzc);
  log_notice("%llu products sent (%llu bytes), %llu declined%s%s%s",
             (unsigned long long)u->nsent, (unsigned long long)u->nbytes,
             (unsigned long long)u->ndeclined, skipped, damaged, zc);
  ldmd_feeds_leave(u->c->set->feeds, slot);
  end_pins(u);
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
  rc = ldm_conf_allowed_class_peer(c->set->conf, c->named ? c->name : NULL,
                                   c->ip, c->tls, &want, &allowed, &u.filter,
                                   err, sizeof err);
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
