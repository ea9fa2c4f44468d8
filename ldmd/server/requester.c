/*
 * requester.c - a REQUEST entry's process: where it resumes, the
 * connection to the upstream (FEEDME, RECLASS, turn-around), the calls it
 * then serves, the resume point written after the products read in one
 * go (at most RESUME_EVERY of them or RESUME_MS apart), autoshift,
 * and the reconnection policy (see requester.h).
 *
 * The products themselves go through downstream.c (vetting, duplicates,
 * insertion) by way of the same handlers as a HIYA push
 * (ldmd_product_call() in hiya.c), on an ldmd_conn made for the
 * connection: this file owns the requester's life, not product handling.
 */
#include "ldmd/server/requester.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/server/clock.h"
#include "ldmd/server/autoshift.h"
#include "ldmd/server/children.h"
#include "ldmd/proto/ldm6_text.h"
#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/resume.h"

#define MAX_RECLASS 8     /* RECLASS answers in a row before giving up */
#define FEEDPAR_BUF 12288 /* an encoded feedpar (at most ~8.5 KB) */
#define CLASS_TEXT 10240
#define SCAN_SLACK_US (30 * 1000000ull) /* LDM's backward-scan margin */
#define BUSY_NAP_MS 1000
#define MAX_SHIFT 20
#define RESUME_EVERY 256 /* products settled between resume writes, at most */
#define RESUME_MS 20     /* ms between resume writes while products come */
#define RESUME_RETRY_MS                                                        \
  5000 /* ms between tries of a resume file that failed                        \
        */

/* How a connection ended. */
enum outcome {
  OUT_GO_ON,  /* not ended: serve the next message */
  OUT_STOP,   /* the server stops */
  OUT_SWITCH, /* autoshift: reconnect at once in the other mode */
  OUT_SILENT, /* the upstream said nothing too long: reconnect at once */
  OUT_CLOSED, /* the upstream closed the connection */
  OUT_FAIL,   /* something failed: reconnect after a delay */
  OUT_DENIED  /* the upstream refused the request */
};

typedef struct requester {
  const ldmd_settings *set;
  const ldm_conf_request *req;
  char where[320]; /* "host port N", for messages */
  pq_t *pq;
  ldmd_resume *resume; /* NULL while the file cannot be made */
  char resume_path[4096];
  char describe[1024]; /* the REQUEST, for the resume file's comment */
  bool primary;
  unsigned failures; /* failed attempts in a row: the delay's exponent */
  bool have_sig;     /* the resume point */
  uint8_t sig[PQ_SIGLEN];
  pq_timestamp sig_arrival; /* the resume point's creation time */
  bool resume_dirty;        /* r->sig is newer than the file's point */
  unsigned unwritten;       /* products settled since the file was written */
  int64_t written_ms;       /* when it was last written */
  bool resume_failing;      /* the file cannot be made or written (logged) */
  int64_t resume_retry_ms;  /* while failing: when to try the file again */
  ldmd_autoshift shift;
  uint64_t seen_settled, seen_inserted, seen_dups; /* of this connection */
  uint64_t messages;                               /* of this connection */
  uint64_t connections; /* connections made (FEEDME sent) */
  ldmm_slot *ms;        /* the live figures, or NULL */
} requester;

/*
 * The process's SIGTERM handler: it sets the server's stop flag, bounds
 * the stop (children.h, LDMD_CHILD_STOP_S), and ends
 * the process at once while it waits in a name lookup, which no signal
 * cuts short (nothing is lost: every resume point is on disk already and
 * no reservation is open while connecting).  Process-wide state for a
 * signal handler, as the stop flag itself.
 */
static volatile sig_atomic_t *term_flag;
static volatile sig_atomic_t term_exits;

static void on_term(int sig) {
  (void)sig;
  *term_flag = 1;
  ldmd_child_stop_due(); /* busy past the stop's bound: SIGALRM ends it */
  if (term_exits)
    _exit(0);
}

static void catch_term(volatile sig_atomic_t *flag) {
  struct sigaction sa;

  term_flag = flag;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigemptyset(&sa.sa_mask);
  (void)sigaction(SIGTERM, &sa, NULL);
  (void)sigaction(SIGINT, &sa, NULL);
}

/* Sleep ms, or less if the server stops. */
static void nap(const requester *r, int64_t ms) {
  int64_t end = ldmd_now_ms() + ms;

  while (!*r->set->stop) {
    int64_t left = end - ldmd_now_ms();
    struct timespec ts;

    if (left <= 0)
      return;
    if (left > LDMD_SLICE_MS)
      left = LDMD_SLICE_MS;
    ts.tv_sec = (time_t)(left / 1000);
    ts.tv_nsec = (long)(left % 1000) * 1000000L;
    (void)nanosleep(&ts, NULL); /* SIGTERM cuts it short */
  }
}

/* ---------------------------------------------------------------------- */
/* Classes                                                                */
/* ---------------------------------------------------------------------- */

/* The resume point as the trailing {NONE, "SIG=<hex>"} spec. */
static void add_sig(const requester *r, ldm6_prod_class *cls) {
  ldm6_prod_spec *p;
  char hex[33];

  if (!r->have_sig || cls->psa_len >= LDM6_PSA_MAX)
    return;
  pq_sig_format(r->sig, hex);
  p = &cls->psa[cls->psa_len++];
  p->feedtype = PQ_FT_NONE;
  snprintf(p->pattern, sizeof p->pattern, "SIG=%s", hex);
}

/* LDM: leading ".*" go while more than two characters remain. */
static const char *strip_dotstar(const char *p) {
  while (strncmp(p, ".*", 2) == 0 && strlen(p) > 2)
    p += 2;
  return p;
}

/* What we ask for: from now - offset, the REQUEST's spec, the resume
 * point.  @return 0 or -1 (logged) */
static int request_class(const requester *r, ldm6_prod_class *cls) {
  pq_timestamp from = pq_ts_now();

  memset(cls, 0, sizeof *cls);
  from.sec -= (int64_t)r->set->time_offset;
  from.usec = 0;
  if (from.sec < 0)
    from = PQ_TS_ZERO;
  if (ldm6_ts_from_pq(from, &cls->from) != 0 ||
      ldm6_ts_from_pq(PQ_TS_ENDT, &cls->to) != 0) {
    log_error("cannot express the time of a request to %s", r->where);
    return -1;
  }
  cls->psa_len = 1;
  cls->psa[0].feedtype = r->req->feedtype;
  snprintf(cls->psa[0].pattern, sizeof cls->psa[0].pattern, "%s",
           strip_dotstar(r->req->pattern));
  add_sig(r, cls);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Where to resume                                                        */
/* ---------------------------------------------------------------------- */

#define SCAN_FOUND 1
#define SCAN_PAST 2

typedef struct scan {
  char suffix[PQ_ORIGIN_MAX + 1]; /* "_v_<host>": received from it */
  uint64_t limit_us;              /* stop at products inserted before */
  pq_prod_info info;
} scan;

static int scan_one(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  scan *s = arg;
  size_t n = strlen(info->origin), k = strlen(s->suffix);

  (void)data;
  if (place->pp_inserted < s->limit_us)
    return SCAN_PAST;
  if (n < k || strcmp(info->origin + n - k, s->suffix) != 0)
    return 0;
  s->info = *info;
  return SCAN_FOUND;
}

/* No resume file yet: LDM looks for the newest product of the request in
 * the queue.  We also want it received from this upstream (its origin ends
 * with "_v_<host>"), since a product that came by another way says nothing
 * about what this upstream sent. */
static void scan_queue(requester *r) {
  pq_timestamp from = pq_ts_now();
  pq_class cls;
  scan s;
  int rc;

  from.sec -= (int64_t)r->set->time_offset;
  memset(&s, 0, sizeof s);
  ldmd_down_origin("", r->req->host, s.suffix);
  s.limit_us = pq_ts_to_us(from);
  s.limit_us = s.limit_us > SCAN_SLACK_US ? s.limit_us - SCAN_SLACK_US : 0;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  if (pq_class_add(&cls, r->req->feedtype, r->req->pattern, NULL, 0) != 0)
    return;
  pq_cursor_set(r->pq, PQ_CURSOR_END);
  do
    rc = pq_next(r->pq, PQ_BACKWARD, &cls, scan_one, &s);
  while (rc == PQ_OK && pq_cursor_get(r->pq) >= s.limit_us && !*r->set->stop);
  pq_class_free(&cls);
  if (rc != SCAN_FOUND)
    return;
  memcpy(r->sig, s.info.signature, PQ_SIGLEN);
  r->sig_arrival = s.info.arrival;
  r->have_sig = true;
  r->resume_dirty = true; /* written by the first put_resume() */
}

/*
 * A resume file that cannot be made or written (a full or read-only file
 * system) does not stop the feed: the point is kept in memory, the file
 * tried again at most every RESUME_RETRY_MS, and the trouble logged once,
 * as its end is (docs/protocol.md §11.4).
 */
static void resume_failed(requester *r, int64_t now, const char *why) {
  r->resume_retry_ms = now + RESUME_RETRY_MS;
  if (r->resume_failing)
    return;
  r->resume_failing = true;
  log_warning("%s: receiving without recording the resume point (a restart "
              "would ask again from an older one); trying again every %d s",
              why, RESUME_RETRY_MS / 1000);
}

/* Open (waiting while another process holds it, if wait) and read the
 * resume file.  @return 0; 1 if the file cannot be made or read (logged
 * once); -1 if the server stops */
static int open_resume_file(requester *r, bool wait) {
  char err[4400];
  bool said = false;

  for (;;) {
    int rc = ldmd_resume_open(r->resume_path, r->describe, &r->resume, err,
                              sizeof err);

    if (rc == LDMD_RESUME_OK)
      return 0;
    if (rc != LDMD_RESUME_BUSY) {
      resume_failed(r, ldmd_now_ms(), err);
      return 1;
    }
    if (!wait) {
      r->resume_retry_ms = ldmd_now_ms() + RESUME_RETRY_MS;
      return 1;
    }
    if (!said)
      log_warning("%s is in use by another process: waiting for it",
                  r->resume_path);
    said = true;
    nap(r, BUSY_NAP_MS);
    if (*r->set->stop)
      return -1;
  }
}

/* Name and open the resume file, and read it.  @return 0, or -1 (logged,
 * or stopped) */
static int open_resume(requester *r) {
  const ldm_conf_request *q = r->req;
  ldmd_resume_key key = {q->host, q->port, q->feedtype, q->pattern};
  char ft[192];
  pq_timestamp t;
  int rc;

  pq_feedtype_format(q->feedtype, ft, sizeof ft);
  snprintf(r->describe, sizeof r->describe, "REQUEST %s \"%s\" %s:%u (%s:%u)",
           ft, q->pattern, q->host, q->port, q->where.file, q->where.line);
  if (ldmd_resume_path(r->set->state_dir, r->set->queue_path, &key,
                       r->resume_path, sizeof r->resume_path) != 0) {
    log_error("cannot name the resume file of %s: path too long", r->describe);
    return -1;
  }
  rc = open_resume_file(r, true);
  if (rc < 0)
    return -1;
  r->have_sig = rc == 0 && ldmd_resume_get(r->resume, r->sig, &t);
  if (r->have_sig)
    r->sig_arrival = t;
  else
    scan_queue(r);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* FEEDME                                                                 */
/* ---------------------------------------------------------------------- */

/* The upstream refused us (MSG_DENIED/AUTH_ERROR; at connection time
 * with xid 0, before it read the FEEDME), or answered FEEDME with another
 * RPC error. */
static enum outcome call_refused(const requester *r, const ldm6_rpc_msg *h) {
  const ldm6_rpc_reply *rep = &h->u.reply;

  if (ldm6_rpc_reply_is_refusal(h)) {
    char ft[192], why[32];

    pq_feedtype_format(r->req->feedtype, ft, sizeof ft);
    if (rep->auth_stat == LDM6_RPC_AUTH_TOOWEAK)
      snprintf(why, sizeof why, "AUTH_TOOWEAK");
    else
      snprintf(why, sizeof why, "auth_stat %u", (unsigned)rep->auth_stat);
    log_error("request denied by upstream LDM %s: REQUEST %s \"%s\" not "
              "allowed (%s)",
              r->where, ft, r->req->pattern, why);
    return OUT_DENIED;
  }
  if (rep->reply_stat == LDM6_RPC_MSG_ACCEPTED &&
      rep->accept_stat == LDM6_RPC_PROG_MISMATCH) {
    log_error("upstream LDM %s does not speak LDM-6 (versions %u-%u)", r->where,
              (unsigned)rep->low, (unsigned)rep->high);
    return OUT_DENIED;
  }
  log_error("FEEDME refused by upstream LDM %s (reply %u, accept_stat %u)",
            r->where, (unsigned)rep->reply_stat, (unsigned)rep->accept_stat);
  return OUT_FAIL;
}

/* Is a RECLASS class usable?  @return OUT_GO_ON when it is, else the
 * outcome (logged). */
static enum outcome check_reclass(const requester *r,
                                  const ldm6_prod_class *cls) {
  if (cls->psa_len == 0) {
    log_error("request denied by upstream LDM %s: request not allowed. Does "
              "it overlap with another?",
              r->where);
    return OUT_DENIED;
  }
  if ((cls->from.tv_sec == -1 && cls->from.tv_usec == -1) ||
      (cls->to.tv_sec == -1 && cls->to.tv_usec == -1)) {
    log_error("invalid RECLASS from upstream LDM %s: no time window", r->where);
    return OUT_DENIED;
  }
  return OUT_GO_ON;
}

/*
 * Ask for the class, following RECLASS on the same connection.
 * @return OUT_GO_ON once the upstream said OK, else how the attempt ended
 *         (logged)
 */
static enum outcome feedme(requester *r, ldm6_io *io, ldm6_prod_class *cls) {
  ldm6_feedpar fp;
  ldm6_fornme_reply rep;
  uint8_t buf[FEEDPAR_BUF];
  char a[CLASS_TEXT], b[CLASS_TEXT];
  int n;

  for (n = 0; n < MAX_RECLASS; n++) {
    struct iovec iov = {buf, 0};
    ldm6_io_msg reply;
    size_t used;
    int rc;

    fp.prod_class = *cls;
    fp.max_hereis = r->primary ? LDM6_MAX_HEREIS_PRIMARY : 0;
    if (ldm6_encode(LDM6_T_FEEDPAR, &fp, buf, sizeof buf, &iov.iov_len) != 0) {
      log_error("cannot encode the request to %s", r->where);
      return OUT_FAIL;
    }
    rc = ldm6_io_call(io, LDM6_VERSION6, LDM6_FEEDME, &iov, 1,
                      LDMD_SYNC_TIMEOUT_MS, &reply);
    if (*r->set->stop)
      return OUT_STOP;
    if (rc == LDM6_IO_EREPLY || rc == LDM6_IO_DENIED)
      return call_refused(r, &reply.hdr);
    if (rc != LDM6_IO_OK) {
      log_notice("FEEDME to upstream LDM %s failed: %s %s", r->where,
                 ldm6_io_strerror(rc), ldm6_io_detail(io));
      return OUT_FAIL;
    }
    if (ldm6_decode(LDM6_T_FORNME_REPLY, reply.body, reply.body_len, &rep,
                    &used) != 0) {
      log_error("undecodable FEEDME reply from upstream LDM %s", r->where);
      return OUT_FAIL;
    }
    switch (rep.code) {
    case LDM6_OK:
      log_notice("upstream LDM-6 on %s is willing to be %s feeder (process "
                 "%u)",
                 r->where, r->primary ? "a primary" : "an alternate",
                 (unsigned)rep.u.id);
      return OUT_GO_ON;
    case LDM6_RECLASS: {
      enum outcome o = check_reclass(r, &rep.u.prod_class);

      if (o != OUT_GO_ON)
        return o;
      ldm6_class_format(cls, a, sizeof a);
      ldm6_class_format(&rep.u.prod_class, b, sizeof b);
      log_notice("product reclassification by upstream LDM %s: %s -> %s",
                 r->where, a, b);
      *cls = rep.u.prod_class;
      add_sig(r, cls); /* LDM loses it here; the upstream ignores it */
      break;
    }
    case LDM6_BADPATTERN:
      log_error("upstream LDM %s says the pattern \"%s\" is bad", r->where,
                r->req->pattern);
      return OUT_DENIED;
    default:
      log_error("unexpected FEEDME reply %d from upstream LDM %s",
                (int)rep.code, r->where);
      return OUT_FAIL;
    }
  }
  log_error("upstream LDM %s reclassified the request %d times: giving up",
            r->where, MAX_RECLASS);
  return OUT_FAIL;
}

/* ---------------------------------------------------------------------- */
/* Serving the upstream's calls                                           */
/* ---------------------------------------------------------------------- */

static int dispatch(ldmd_conn *c, const ldm6_io_msg *m) {
  const ldm6_rpc_call *call = &m->hdr.u.call;

  if (call->rpcvers != LDM6_RPC_VERSION)
    return ldm6_io_reply_rpc_mismatch(c->io, m->hdr.xid) == LDM6_IO_OK
               ? LDMD_CONTINUE
               : LDMD_FAIL;
  if (call->prog != LDM6_PROG)
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_PROG_UNAVAIL);
  if (call->vers != LDM6_VERSION6)
    return ldm6_io_reply_prog_mismatch(c->io, m->hdr.xid, LDM6_VERSION6,
                                       LDM6_VERSION6) == LDM6_IO_OK
               ? LDMD_CONTINUE
               : LDMD_FAIL;
  switch (call->proc) {
  case LDM6_NULLPROC:
    return ldmd_product_flush(c, m);
  case LDM6_HEREIS:
  case LDM6_COMINGSOON:
  case LDM6_BLKDATA:
    return ldmd_product_call(c, m);
  case LDM6_NOTIFICATION:
    log_warning("unexpected NOTIFICATION from upstream LDM %s ignored",
                c->peer);
    return LDMD_CONTINUE; /* one-way: never answered */
  default:
    log_info("procedure %u from upstream LDM %s is not served",
             (unsigned)call->proc, c->peer);
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
}

/* Write the resume point kept in r->sig, if it moved since the last
 * write; while the file fails, at most every RESUME_RETRY_MS. */
static void put_resume(requester *r, int64_t now) {
  if (!r->resume_dirty || (r->resume_failing && now < r->resume_retry_ms))
    return;
  r->unwritten = 0;
  r->written_ms = now;
  if (r->resume == NULL && open_resume_file(r, false) != 0)
    return;
  if (ldmd_resume_put(r->resume, r->sig, r->sig_arrival) != 0) {
    char why[4400];

    snprintf(why, sizeof why, "cannot record the resume point in %s: %s",
             r->resume_path, strerror(errno));
    resume_failed(r, now, why);
    return;
  }
  r->resume_dirty = false;
  if (r->resume_failing)
    log_notice("the resume point is recorded in %s again", r->resume_path);
  r->resume_failing = false;
}

/*
 * After a message: note the resume point if a product settled, and count
 * for autoshift.  The point is written to the file when no more bytes of
 * the upstream wait in the receive buffer (before the requester waits
 * for the socket), and at the latest every RESUME_EVERY products or
 * RESUME_MS milliseconds, not after every product: a batch of small
 * products read in one go costs one pwrite, not one each.  A kill leaves
 * a point that lags by at most those products, all committed in the
 * queue moments before; the upstream sends them again and the queue
 * refuses them as duplicates (resume.h).
 */
static void note_products(requester *r, const ldmd_conn *c, int64_t now) {
  const ldmd_down_stats *st = ldmd_down_stats_get(c->down);
  pq_prod_info info;
  uint64_t n = ldmd_down_settled(c->down, &info);

  if (n != r->seen_settled) {
    r->unwritten += n - r->seen_settled;
    r->seen_settled = n;
    memcpy(r->sig, info.signature, PQ_SIGLEN);
    r->sig_arrival = info.arrival;
    r->have_sig = true;
    r->resume_dirty = true;
  }
  if (r->resume_dirty &&
      (!ldm6_io_buffered(c->io) || r->unwritten >= RESUME_EVERY ||
       now - r->written_ms >= RESUME_MS))
    put_resume(r, now);
  ldmd_autoshift_add(&r->shift, st->inserted - r->seen_inserted,
                     st->duplicates - r->seen_dups);
  r->seen_inserted = st->inserted;
  r->seen_dups = st->duplicates;
}

static void log_summary(const requester *r, const ldmd_down *d) {
  const ldmd_down_stats *st = ldmd_down_stats_get(d);

  log_notice("from upstream LDM %s: %llu products received, %llu inserted "
             "(%llu bytes), %llu duplicates, %llu too old, %llu unwanted",
             r->where, (unsigned long long)st->received,
             (unsigned long long)st->inserted, (unsigned long long)st->bytes,
             (unsigned long long)st->duplicates,
             (unsigned long long)st->too_old, (unsigned long long)st->unwanted);
}

/* The receiving side made for this connection. */
static ldmd_down *make_down(const requester *r) {
  pq_class cls;
  char err[256];

  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  if (pq_class_add(&cls, r->req->feedtype, r->req->pattern, err, sizeof err) !=
      0) {
    log_error("cannot use the pattern \"%s\": %s", r->req->pattern, err);
    return NULL;
  }
  return ldmd_down_new(r->pq, r->req->host, r->set->max_latency, &cls);
}

/* Read one message and act on it.  @return OUT_GO_ON, else how the
 * connection ends */
static enum outcome serve_one(requester *r, ldmd_conn *c, int64_t *last,
                              uint64_t *rx) {
  ldm6_io_msg m;
  bool more;
  int rc = ldm6_io_recv_head(c->io, LDMD_SLICE_MS, LDMD_RECORD_HEAD, &m, &more);
  int64_t now;

  if (*r->set->stop)
    return OUT_STOP;
  if (rc == LDM6_IO_TIMEDOUT) {
    now = ldmd_now_ms();
    put_resume(r, now); /* a quiet moment: the file catches up */
    ldmd_down_idle(c->down);
    if (ldm6_io_rx_bytes(c->io) != *rx) { /* inside a long record */
      *rx = ldm6_io_rx_bytes(c->io);
      *last = now;
    }
    if (now - *last < r->set->silence_ms)
      return OUT_GO_ON;
    log_notice("no message from upstream LDM %s for %d s: reconnecting",
               r->where, r->set->silence_ms / 1000);
    return OUT_SILENT;
  }
  if (rc == LDM6_IO_CLOSED) {
    log_notice("connection closed by upstream LDM %s", r->where);
    return OUT_CLOSED;
  }
  if (rc != LDM6_IO_OK) {
    log_error("bad message from upstream LDM %s: %s %s", r->where,
              ldm6_io_strerror(rc), ldm6_io_detail(c->io));
    return OUT_FAIL;
  }
  r->messages++;
  if (more)
    rc = ldmd_product_stream(c, &m, r->set->silence_ms);
  else if (m.hdr.type != LDM6_RPC_CALL)
    rc = LDMD_CONTINUE; /* a stray reply */
  else
    rc = dispatch(c, &m);
  now = ldmd_now_ms(); /* one clock reading per message */
  note_products(r, c, now);
  if (*r->set->stop)
    return OUT_STOP;
  if (rc != LDMD_CONTINUE)
    return OUT_FAIL; /* the handler said why */
  *last = now;
  *rx = ldm6_io_rx_bytes(c->io);
  if (ldmd_autoshift_due(&r->shift, now)) {
    r->primary = !r->primary;
    log_notice("switching data-product transfer-mode to %s",
               r->primary ? "primary" : "alternate");
    return OUT_SWITCH;
  }
  return OUT_GO_ON;
}

/* After OK: serve the upstream's calls until the connection ends. */
static enum outcome serve(requester *r, ldm6_io *io) {
  uint64_t max = ldmd_product_record_max(r->set, r->pq), rx = 0;
  int64_t last = ldmd_now_ms();
  enum outcome o = OUT_GO_ON;
  ldmd_conn c;

  memset(&c, 0, sizeof c);
  c.set = r->set;
  c.io = io;
  c.pq = r->pq;
  c.named = true;
  snprintf(c.ip, sizeof c.ip, "%s", ldm6_io_peer_addr(io));
  snprintf(c.name, sizeof c.name, "%s", r->req->host);
  snprintf(c.peer, sizeof c.peer, "%s", r->where);
  c.down = make_down(r);
  if (c.down == NULL)
    return OUT_FAIL;
  c.ms = r->ms;
  c.mfeeds = ldmm_feeds(r->set->metrics);
  ldmd_down_set_metrics(c.down, c.ms, c.mfeeds);
  ldmd_down_set_hold(c.down, r->set->max_product_memory);
  ldm6_io_set_max_record(io, max > SIZE_MAX ? SIZE_MAX : (size_t)max);
  ldm6_io_set_stream_start(io, LDMD_RECORD_START);
  r->seen_settled = r->seen_inserted = r->seen_dups = 0;
  ldmd_autoshift_init(&r->shift, r->req->group_size, r->primary,
                      r->set->autoshift_ms, last);
  while (o == OUT_GO_ON)
    o = serve_one(r, &c, &last, &rx);
  put_resume(r, ldmd_now_ms());
  log_summary(r, c.down);
  ldmd_down_free(c.down);
  return o;
}

/* ---------------------------------------------------------------------- */
/* The requester's life                                                   */
/* ---------------------------------------------------------------------- */

/*
 * TLS to the upstream when the REQUEST's host field has "{...}"
 * (ldmd_conf.h): a handshake, then the upstream's certificate must verify
 * against /tls/ca and name the host, or meet the cn=, dns= or sha256= that
 * the entry gives instead.  @return 0, or -1 (logged)
 */
static int upstream_tls(requester *r, ldm6_io *io) {
  const ldm_conf_ident *id = &r->req->id;
  const ldm6_tls_peer *t;
  char who[1024];
  ldmd_conn c;
  bool ok;
  int rc;

  if (!id->given)
    return 0;
  rc = ldm6_io_start_tls(io, r->set->tls_client, false, r->req->host,
                         LDMD_HANDSHAKE_MS);
  if (rc == LDM6_IO_STOPPED)
    return -1; /* the server stops: nothing to say */
  if (rc != LDM6_IO_OK) {
    log_warning("TLS handshake with upstream LDM %s failed: %s", r->where,
                ldm6_io_detail(io));
    return -1;
  }
  t = ldm6_io_tls_peer(io);
  ldm6_tls_peer_text(t, who, sizeof who);
  memset(&c, 0, sizeof c);
  c.io = io;
  ldmd_conn_tls_identity(&c);
  if (id->cn_ere != NULL || id->dns_ere != NULL || id->pin)
    ok = ldm_conf_ident_match(id, c.tls);
  else
    ok = t->verified && ldm6_io_tls_names_host(io, r->req->host);
  if (!ok) {
    log_error("refusing upstream LDM %s: its certificate (%s) is not the "
              "one %s:%u asks for%s%s",
              r->where, who, r->req->where.file, r->req->where.line,
              t->verified ? "" : ": not verified: ",
              t->verified ? "" : t->verify_error);
    return -1;
  }
  log_notice("TLS to upstream LDM %s: %s, %s, certificate %s, %s", r->where,
             t->version, t->cipher, who,
             t->verified ? "verified" : "admitted by its pinned key");
  return 0;
}

/* One connection, from connect to its end. */
static enum outcome session(requester *r) {
  ldm6_prod_class cls;
  char err[512], text[CLASS_TEXT], hex[33] = "NONE";
  enum outcome o;
  ldm6_io *io;

  r->messages = 0;
  if (request_class(r, &cls) != 0)
    return OUT_FAIL;
  term_exits = 1; /* a name lookup does not end on a signal */
  io = *r->set->stop ? NULL
                     : ldm6_io_connect_cancel(r->req->host, r->req->port,
                                              LDMD_SYNC_TIMEOUT_MS,
                                              r->set->stop, err, sizeof err);
  term_exits = 0;
  if (io == NULL) {
    if (*r->set->stop)
      return OUT_STOP;
    log_warning("%s", err);
    return OUT_FAIL;
  }
  if (upstream_tls(r, io) != 0) {
    ldm6_io_free(io);
    return OUT_FAIL;
  }
  if (r->connections++ > 0)
    ldmm_reconnected(r->ms);
  if (r->have_sig)
    pq_sig_format(r->sig, hex);
  ldm6_class_format(&cls, text, sizeof text);
  log_info("requesting %s from upstream LDM %s (%s mode, SIG=%s)", text,
           r->where, r->primary ? "primary" : "alternate", hex);
  o = feedme(r, io, &cls);
  if (o == OUT_GO_ON)
    o = serve(r, io);
  ldm6_io_free(io);
  return o;
}

/* How long to wait before the next attempt after outcome o. */
static int64_t delay_after(requester *r, enum outcome o) {
  int64_t d;

  if (r->messages > 0)
    r->failures = 0; /* the connection worked */
  if (o == OUT_STOP || o == OUT_SWITCH || o == OUT_SILENT)
    return 0;
  d = (int64_t)r->set->retry_min_ms
      << (r->failures < MAX_SHIFT ? r->failures : MAX_SHIFT);
  if (d > r->set->retry_max_ms)
    d = r->set->retry_max_ms;
  if (r->failures < MAX_SHIFT)
    r->failures++;
  return d;
}

/* Open what the requester needs.  @return 0 or -1 (logged) */
static int start(requester *r) {
  pq_error err;
  char ft[192];

  if (pq_open(r->set->queue_path, 0, &r->pq, &err) != PQ_OK) {
    log_error("cannot open the queue %s for writing: %s", r->set->queue_path,
              err.pe_msg);
    r->pq = NULL;
    return -1;
  }
  if (open_resume(r) != 0)
    return -1;
  pq_feedtype_format(r->req->feedtype, ft, sizeof ft);
  if (r->have_sig) {
    char hex[33];

    pq_sig_format(r->sig, hex);
    log_notice("requesting (%s, \"%s\") from %s as %s; resuming after product "
               "%s",
               ft, r->req->pattern, r->where,
               r->primary ? "primary" : "alternate", hex);
  } else {
    log_notice("requesting (%s, \"%s\") from %s as %s; starting %u s back", ft,
               r->req->pattern, r->where, r->primary ? "primary" : "alternate",
               r->set->time_offset);
  }
  return 0;
}

int ldmd_requester_run(const ldmd_settings *set, const ldm_conf_request *req) {
  requester r;
  char ident[300];
  int status = 0;

  memset(&r, 0, sizeof r);
  r.set = set;
  r.req = req;
  r.primary = req->primary;
  snprintf(r.where, sizeof r.where, req->ipv6 ? "[%s] port %u" : "%s port %u",
           req->host, req->port);
  snprintf(ident, sizeof ident, "%s(req)", req->host);
  ldm_log_set_ident(ident);
  r.ms = ldmm_slot_at(set->metrics, set->metrics_slot);
  if (r.ms != NULL) {
    char ft[192], feed[LDMM_FEED_MAX];

    pq_feedtype_format(req->feedtype, ft, sizeof ft);
    snprintf(feed, sizeof feed, "%s \"%s\"", ft, req->pattern);
    ldmm_describe(r.ms, LDMM_KIND_REQUESTER, r.where, feed);
  }
  catch_term(set->stop);
  if (start(&r) != 0) {
    status = *set->stop ? 0 : 1;
  } else {
    while (!*set->stop) {
      enum outcome o = session(&r);
      int64_t d = delay_after(&r, o);

      if (o == OUT_STOP)
        break;
      if (d > 0) {
        log_info("reconnecting to upstream LDM %s in %lld ms", r.where,
                 (long long)d);
        nap(&r, d);
      }
    }
    log_notice("stopping");
  }
  ldmd_resume_close(r.resume);
  if (r.pq != NULL)
    pq_close(r.pq);
  return status;
}
