/*
 * fanout_sink.c - fanout_bench's FEEDME sink (see fanout_sink.h): connect,
 * FEEDME, then serve the upstream's calls: HEREIS (metadata decoded,
 * signature checked, latency noted by seqno, data dropped) and NULLPROC
 * (answered).  Two ways of taking the bytes (fs_way):
 *
 *   FS_DISCARD  the sink reads the socket itself: each record's marks and
 *     its first bytes (RPC header and prod_info) into a small buffer, and
 *     the product's data is dropped by the kernel: recv(2) with MSG_TRUNC
 *     on a TCP socket discards the bytes instead of copying them to the
 *     caller (tcp(7)).  Reads into the buffer never reach further than the
 *     rest of a small record and the start of the next, so the data of a
 *     large product never enters the sink.  Records are framed by the
 *     project's ldm6_rpc_framer (marks, fragment lengths, the largest
 *     record) and decoded by ldm6_xdr; only the reading is the sink's.
 *     Sending (FEEDME, the NULLPROC replies) goes through rpc_io, whose
 *     receiving side this way never uses.
 *   FS_READ  the project's rpc_io receives: ldm6_io_recv_head(), then
 *     ldm6_io_recv_body() with no destination, which reads every byte
 *     into the connection's buffer (the bench's sink until 2026-12-07),
 *     kept to measure the two side by side (fanout_bench -S).
 *
 * docs/fanout-bench.md says what each costs, measured.
 */
#include "test/bench/fanout_sink.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "pq/product.h"

#define HEAD 4096    /* FS_READ: bytes of a record gathered before streaming */
#define WAIT_MS 1000 /* each wait for the upstream; *stop is seen */
/* Connecting and the FEEDME's answer: with hundreds of subscribers
 * started at once on a small machine, the upstream's new processes wait
 * their turn behind the feeds already sending (a real downstream would
 * give up after 60 s and try again). */
#define SYNC_MS 120000
#define SILENT_S 120       /* an upstream that says nothing this long */
#define STALL_S 10         /* no byte of a record begun, this long */
#define SINCE_S 3600       /* the class starts this long ago */
#define FEEDPAR_BUF 12288u /* an encoded feedpar */

/* FS_DISCARD.  A record's start is gathered up to HEAD_MIN bytes, which
 * hold an RPC call header without credentials (40 bytes) and any
 * prod_info (at most 364); to HEAD_MAX if they do not decode (two 400-byte
 * credentials).  A rest of a fragment shorter than TRUNC_MIN is read into
 * the buffer with the next record's start (one system call for both)
 * rather than discarded by a call of its own. */
#define HEAD_MIN 512u
#define HEAD_MAX 2048u
#define TRUNC_MIN 4096u
#define INBUF (TRUNC_MIN + HEAD_MAX)
#define MAX_RECORD (LDM6_IO_DEFAULT_MAX_RECORD)
/* A discard waits for this much of what it knows is coming (SO_RCVLOWAT),
 * so that it is woken once per batch of segments, not once per segment,
 * as rpc_recv.c does for a record's rest. */
#define LOWAT_MIN (64u * 1024u)
#define LOWAT_MAX (512u * 1024u)

/* Results of the discarding reader's steps. */
#define RD_OK 0
#define RD_FAIL (-1) /* slot->error says why */
#define RD_STOP (-2) /* *stop was set */

static uint64_t now_us(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int fail(fs_slot *slot, const char *what, ldm6_io *io, int rc) {
  snprintf(slot->error, sizeof slot->error, "%s: %s %s", what,
           rc != 0 ? ldm6_io_strerror(rc) : "",
           io != NULL ? ldm6_io_detail(io) : "");
  return -1;
}

/* A product has come (its last byte just now): count it, by seqno. */
static void arrived(const fs_conf *c, fs_slot *slot,
                    const ldm6_prod_info *info) {
  uint64_t now = now_us();

  slot->last_us = now;
  if (info->seqno >= c->cap) {
    slot->strays++;
  } else if (c->sigs != NULL &&
             memcmp(c->sigs + (size_t)info->seqno * LDM6_SIGLEN,
                    info->signature, LDM6_SIGLEN) != 0) {
    slot->badsig++;
  } else if (c->lat[info->seqno] >= 0) {
    slot->dups++;
  } else {
    int64_t d =
        (int64_t)now - (int64_t)pq_ts_to_us(ldm6_ts_to_pq(info->arrival));

    c->lat[info->seqno] = d < 0 ? 0 : d > INT32_MAX ? INT32_MAX : (int32_t)d;
    slot->bytes += info->sz;
    slot->arrived++;
  }
}

/* The FEEDME argument: everything created in the last SINCE_S seconds,
 * primary mode.  @return 0 or -1 */
static int feedpar(fs_slot *slot, uint8_t *buf, size_t cap, size_t *len) {
  ldm6_feedpar fp;

  memset(&fp, 0, sizeof fp);
  if (ldm6_ts_from_pq(pq_ts_from_us(now_us() - SINCE_S * 1000000ull),
                      &fp.prod_class.from) != 0 ||
      ldm6_ts_from_pq(PQ_TS_ENDT, &fp.prod_class.to) != 0)
    return fail(slot, "time", NULL, 0);
  fp.prod_class.psa_len = 1;
  fp.prod_class.psa[0].feedtype = PQ_FT_ANY;
  snprintf(fp.prod_class.psa[0].pattern, sizeof fp.prod_class.psa[0].pattern,
           ".*");
  fp.max_hereis = LDM6_MAX_HEREIS_PRIMARY;
  if (ldm6_encode(LDM6_T_FEEDPAR, &fp, buf, cap, len) != 0)
    return fail(slot, "cannot encode FEEDME", NULL, 0);
  return 0;
}

/* The FEEDME's answer must be OK.  @return 0 or -1 */
static int feedme_answer(fs_slot *slot, const uint8_t *body, size_t len) {
  ldm6_fornme_reply rep;
  size_t used;

  if (ldm6_decode(LDM6_T_FORNME_REPLY, body, len, &rep, &used) != 0 ||
      rep.code != LDM6_OK) {
    snprintf(slot->error, sizeof slot->error,
             "FEEDME not answered OK (code %d)", (int)rep.code);
    return -1;
  }
  slot->connected = 1;
  return 0;
}

/* Answer a call other than HEREIS (NULLPROC: empty; others: refused).
 * @return 0 or -1 */
static int answer(ldm6_io *io, fs_slot *slot, const ldm6_rpc_msg *hdr) {
  int rc = hdr->u.call.proc == LDM6_NULLPROC
               ? ldm6_io_reply(io, hdr->xid, NULL, 0)
               : ldm6_io_reply_error(io, hdr->xid, LDM6_RPC_PROC_UNAVAIL);

  return rc == LDM6_IO_OK ? 0 : fail(slot, "reply", io, rc);
}

/* ---------------------------------------------------------------------- */
/* FS_READ: rpc_io reads every byte                                       */
/* ---------------------------------------------------------------------- */

/* One HEREIS begun by ldm6_io_recv_head(): the rest read and dropped. */
static int read_hereis(ldm6_io *io, const ldm6_io_msg *m, bool more,
                       const fs_conf *c, fs_slot *slot) {
  ldm6_prod_info info;
  size_t used, total;

  if (ldm6_decode(LDM6_T_PROD_INFO, m->body, m->body_len, &info, &used) != 0)
    return fail(slot, "undecodable HEREIS", NULL, 0);
  total = used + info.sz + ldm6_xdr_pad(info.sz);
  if (more) {
    int rc;

    if (total < m->body_len)
      return fail(slot, "HEREIS shorter than its record", NULL, 0);
    rc = ldm6_io_recv_body(io, NULL, total - m->body_len, WAIT_MS * STALL_S);
    if (rc == LDM6_IO_OK)
      rc = ldm6_io_recv_end(io, WAIT_MS * STALL_S);
    if (rc != LDM6_IO_OK)
      return fail(slot, "HEREIS data", io, rc);
  } else if (total != m->body_len) {
    return fail(slot, "HEREIS of the wrong length", NULL, 0);
  }
  arrived(c, slot, &info);
  return 0;
}

static int read_serve(ldm6_io *io, const fs_conf *c, fs_slot *slot,
                      const volatile sig_atomic_t *stop) {
  static uint8_t buf[FEEDPAR_BUF];
  struct iovec iov = {buf, 0};
  ldm6_io_msg reply;
  unsigned silent = 0;
  int rc;

  if (feedpar(slot, buf, sizeof buf, &iov.iov_len) != 0)
    return -1;
  rc = ldm6_io_call(io, LDM6_VERSION6, LDM6_FEEDME, &iov, 1, SYNC_MS, &reply);
  if (rc != LDM6_IO_OK)
    return fail(slot, "FEEDME", io, rc);
  if (feedme_answer(slot, reply.body, reply.body_len) != 0)
    return -1;
  while (!*stop) {
    ldm6_io_msg m;
    bool more = false;

    rc = ldm6_io_recv_head(io, WAIT_MS, HEAD, &m, &more);
    if (rc == LDM6_IO_TIMEDOUT || rc == LDM6_IO_STOPPED) {
      if (++silent > SILENT_S)
        return fail(slot, "upstream silent", io, rc);
      continue;
    }
    silent = 0;
    if (rc != LDM6_IO_OK)
      return *stop ? 0 : fail(slot, "receive", io, rc);
    if (m.hdr.type != LDM6_RPC_CALL)
      return fail(slot, "a reply where a call was due", NULL, 0);
    if (m.hdr.u.call.proc == LDM6_HEREIS) {
      if (read_hereis(io, &m, more, c, slot) != 0)
        return -1;
    } else if (more) {
      return fail(slot, "long record that is not a HEREIS", NULL, 0);
    } else if (answer(io, slot, &m.hdr) != 0) {
      return -1;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------------- */
/* FS_DISCARD: the sink's own reads, the data dropped in the kernel       */
/* ---------------------------------------------------------------------- */

typedef struct rd {
  int fd;
  fs_slot *slot;
  const volatile sig_atomic_t *stop;
  ldm6_rpc_framer fr;
  bool partial;    /* bytes of the current record have been taken */
  int lowat;       /* the socket's SO_RCVLOWAT */
  size_t pos, len; /* unread bytes are in[pos..len) */
  uint8_t in[INBUF];
} rd;

static int rd_fail(rd *r, const char *what) {
  snprintf(r->slot->error, sizeof r->slot->error, "%s", what);
  return RD_FAIL;
}

static int rd_fail_errno(rd *r, const char *what) {
  snprintf(r->slot->error, sizeof r->slot->error, "%s: %s", what,
           strerror(errno));
  return RD_FAIL;
}

/* Wait for the socket to hold `want` bytes (its end or an error too),
 * for up to limit_s seconds in waits of WAIT_MS that see *stop. */
static int rd_wait(rd *r, size_t want, unsigned limit_s) {
  int v = want < LOWAT_MIN ? 1 : (int)(want < LOWAT_MAX ? want : LOWAT_MAX);
  unsigned waited = 0;

  if (v != r->lowat &&
      setsockopt(r->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0)
    r->lowat = v;
  for (;;) {
    struct pollfd p = {r->fd, POLLIN, 0};
    int n;

    if (*r->stop)
      return RD_STOP;
    n = poll(&p, 1, WAIT_MS);
    if (n > 0)
      return RD_OK;
    if (n < 0 && errno != EINTR)
      return rd_fail_errno(r, "poll");
    if (n == 0 && ++waited >= limit_s)
      return rd_fail(r, r->partial ? "upstream stalled inside a record"
                                   : "upstream silent");
  }
}

/* The socket's end, or a failure, where bytes were due. */
static int rd_closed(rd *r, ssize_t n) {
  if (n == 0 || errno == ECONNRESET)
    return rd_fail(r, r->partial ? "connection closed inside a record"
                                 : "upstream closed the connection");
  return rd_fail_errno(r, "receive");
}

/* Read up to max bytes (at least 1) into the empty buffer. */
static int rd_fill(rd *r, size_t max) {
  r->pos = r->len = 0;
  if (max > sizeof r->in)
    max = sizeof r->in;
  for (;;) {
    ssize_t n = recv(r->fd, r->in, max, MSG_DONTWAIT);
    int rc;

    if (n > 0) {
      r->len = (size_t)n;
      return RD_OK;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
      return rd_closed(r, n);
    rc = rd_wait(r, 1, r->partial ? STALL_S : SILENT_S);
    if (rc != RD_OK)
      return rc;
  }
}

/* Feed the framer from the buffer, storing at most head bytes of a record
 * (between fragments only a mark's bytes), as rpc_recv.c's feed() does.
 * @return 1 the record is complete; 2 head bytes are stored and the
 *         record goes on; 0 the buffer is used up; RD_FAIL */
static int rd_feed(rd *r, size_t head) {
  for (;;) {
    size_t avail = r->len - r->pos, used = 0;
    size_t left = ldm6_rpc_framer_frag_left(&r->fr);
    int rc;

    if (left > 0) {
      size_t stored = ldm6_rpc_framer_stored(&r->fr, NULL);

      if (stored >= head)
        return 2;
      if (avail > head - stored)
        avail = head - stored;
    } else if (avail > ldm6_rpc_framer_want(&r->fr)) {
      avail = ldm6_rpc_framer_want(&r->fr); /* the mark only */
    }
    if (avail == 0)
      return 0;
    rc = ldm6_rpc_framer_feed(&r->fr, r->in + r->pos, avail, &used);
    r->pos += used;
    if (rc < 0)
      return rd_fail(r, "bad record mark (or a record over 64 MiB)");
    if (used > 0)
      r->partial = true;
    if (rc == 1) {
      r->partial = false;
      return 1;
    }
  }
}

/* Gather the next record's first head bytes (all of it if shorter).
 * @return 1 complete, 2 it goes on, or RD_FAIL, RD_STOP */
static int rd_head(rd *r, size_t head) {
  for (;;) {
    int rc = rd_feed(r, head);

    if (rc != 0)
      return rc;
    rc = rd_fill(r, head + LDM6_RPC_MARK_LEN);
    if (rc != RD_OK)
      return rc;
  }
}

/* Drop the next n bytes of the record begun by rd_head(): the buffer's
 * first, then the rest of each fragment discarded in the kernel (a short
 * rest read, with the next record's start). */
static int rd_skip(rd *r, size_t n) {
  while (n > 0) {
    size_t left = ldm6_rpc_framer_frag_left(&r->fr), k;
    ssize_t got;
    int rc;

    if (left == 0) { /* a mark */
      rc = rd_feed(r, 0);
      if (rc == 1 || ldm6_rpc_framer_complete(&r->fr))
        return rd_fail(r, "record ends before its contents do");
      if (rc < 0)
        return rc;
      if (rc == 0 && (rc = rd_fill(r, LDM6_RPC_MARK_LEN)) != RD_OK)
        return rc;
      continue;
    }
    k = n < left ? n : left;
    if (r->pos < r->len) {
      got = (ssize_t)(k < r->len - r->pos ? k : r->len - r->pos);
      r->pos += (size_t)got;
    } else if (k < TRUNC_MIN) {
      rc = rd_fill(r, k + LDM6_RPC_MARK_LEN + HEAD_MIN);
      if (rc != RD_OK)
        return rc;
      continue;
    } else {
      got = recv(r->fd, NULL, k, MSG_TRUNC | MSG_DONTWAIT);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        rc = rd_wait(r, k, STALL_S);
        if (rc != RD_OK)
          return rc;
        continue;
      }
      if (got <= 0)
        return rd_closed(r, got);
      if ((size_t)got > k) /* tcp(7) says it cannot; a check costs nothing */
        return rd_fail(r, "recv(MSG_TRUNC) dropped more than asked");
    }
    (void)ldm6_rpc_framer_skip(&r->fr, (size_t)got);
    n -= (size_t)got;
  }
  return RD_OK;
}

/* The record begun by rd_head() must end here (an empty last fragment
 * may follow). */
static int rd_end(rd *r) {
  for (;;) {
    int rc;

    if (ldm6_rpc_framer_complete(&r->fr)) {
      r->partial = false;
      return RD_OK;
    }
    if (ldm6_rpc_framer_frag_left(&r->fr) > 0)
      return rd_fail(r, "record longer than its contents");
    rc = rd_feed(r, 0);
    if (rc == 1)
      return RD_OK;
    if (rc < 0)
      return rc;
    if (rc == 0 && (rc = rd_fill(r, LDM6_RPC_MARK_LEN)) != RD_OK)
      return rc;
  }
}

/* The RPC header of what rd_head() gathered, and the body after it. */
static int rd_header(rd *r, ldm6_rpc_msg *hdr, const uint8_t **body,
                     size_t *body_len) {
  uint8_t *rec;
  size_t len = ldm6_rpc_framer_stored(&r->fr, &rec), used;

  if (ldm6_rpc_decode(rec, len, hdr, &used) != 0)
    return rd_fail(r, "bad RPC header");
  *body = rec + used;
  *body_len = len - used;
  return RD_OK;
}

/* One HEREIS whose start rd_head() gathered (more: the record goes on). */
static int rd_hereis(rd *r, const fs_conf *c, const uint8_t *body,
                     size_t body_len, bool more) {
  ldm6_prod_info info;
  ldm6_rpc_msg hdr;
  size_t used, total;
  int rc;

  if (ldm6_decode(LDM6_T_PROD_INFO, body, body_len, &info, &used) != 0) {
    if (!more || ldm6_rpc_framer_stored(&r->fr, NULL) >= HEAD_MAX)
      return rd_fail(r, "undecodable HEREIS");
    rc = rd_head(r, HEAD_MAX); /* long credentials: gather more */
    if (rc < 0)
      return rc;
    more = rc == 2;
    if ((rc = rd_header(r, &hdr, &body, &body_len)) != RD_OK)
      return rc;
    if (ldm6_decode(LDM6_T_PROD_INFO, body, body_len, &info, &used) != 0)
      return rd_fail(r, "undecodable HEREIS");
  }
  total = used + info.sz + ldm6_xdr_pad(info.sz);
  if (!more && total != body_len)
    return rd_fail(r, "HEREIS of the wrong length");
  if (more) {
    if (total < body_len)
      return rd_fail(r, "HEREIS shorter than its record");
    if ((rc = rd_skip(r, total - body_len)) != RD_OK ||
        (rc = rd_end(r)) != RD_OK)
      return rc;
  }
  arrived(c, r->slot, &info);
  return RD_OK;
}

static int discard_serve(ldm6_io *io, const fs_conf *c, fs_slot *slot,
                         const volatile sig_atomic_t *stop) {
  static uint8_t buf[FEEDPAR_BUF];
  static rd r;
  struct iovec iov = {buf, 0};
  uint32_t xid;
  int rc = RD_FAIL;

  memset(&r, 0, sizeof r);
  r.fd = ldm6_io_fd(io);
  r.slot = slot;
  r.stop = stop;
  r.lowat = -1;
  ldm6_rpc_framer_init(&r.fr, MAX_RECORD);
  if (feedpar(slot, buf, sizeof buf, &iov.iov_len) != 0)
    goto out;
  rc = ldm6_io_send_call(io, LDM6_VERSION6, LDM6_FEEDME, &iov, 1, &xid);
  if (rc != LDM6_IO_OK) {
    fail(slot, "FEEDME", io, rc);
    goto out;
  }
  rc = RD_OK;
  while (!*stop && rc == RD_OK) {
    ldm6_rpc_msg hdr;
    const uint8_t *body;
    size_t body_len;
    int got = rd_head(&r, slot->connected ? HEAD_MIN : FEEDPAR_BUF);

    if (got < 0) {
      rc = got;
      break;
    }
    if ((rc = rd_header(&r, &hdr, &body, &body_len)) != RD_OK)
      break;
    if (!slot->connected) { /* the FEEDME's answer, whole */
      if (got != 1 || hdr.type != LDM6_RPC_REPLY || hdr.xid != xid ||
          hdr.u.reply.reply_stat != LDM6_RPC_MSG_ACCEPTED ||
          hdr.u.reply.accept_stat != LDM6_RPC_SUCCESS)
        rc = rd_fail(&r, "FEEDME not answered as a call is");
      else if (feedme_answer(slot, body, body_len) != 0)
        rc = RD_FAIL;
    } else if (hdr.type != LDM6_RPC_CALL) {
      rc = rd_fail(&r, "a reply where a call was due");
    } else if (hdr.u.call.proc == LDM6_HEREIS) {
      rc = rd_hereis(&r, c, body, body_len, got == 2);
    } else if (got == 2) {
      rc = rd_fail(&r, "long record that is not a HEREIS");
    } else if (answer(io, slot, &hdr) != 0) {
      rc = RD_FAIL;
    }
  }
out:
  ldm6_rpc_framer_free(&r.fr);
  return rc == RD_FAIL || slot->error[0] != '\0' ? -1 : 0;
}

int fs_run(const fs_conf *c, fs_slot *slot, const volatile sig_atomic_t *stop) {
  char err[256];
  ldm6_io *io = ldm6_io_connect_cancel("127.0.0.1", c->port, SYNC_MS, stop, err,
                                       sizeof err);
  int rc;

  if (io == NULL) {
    snprintf(slot->error, sizeof slot->error, "%.150s", err);
    return -1;
  }
  rc = c->way == FS_READ ? read_serve(io, c, slot, stop)
                         : discard_serve(io, c, slot, stop);
  ldm6_io_free(io);
  return rc;
}
