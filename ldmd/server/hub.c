/*
 * hub.c - the feed hub's process (hub.h; docs/protocol.md, section 6.9):
 * one event loop that sends the queue's products to every plain primary
 * LDM-6 feed the connection processes handed to it.
 *
 * Feeds whose cursors are equal form a group, and a group is served by one
 * walk: one pq_next_many() (one look at the index, one lock, one check of
 * each product's CRC32C) hands a batch of products, and each product goes
 * to every member whose class and upstream filter it passes (evaluated
 * once per distinct class and filter, however many feeds share them) as
 * one HEREIS record per member: copied into the member's batch when it is
 * small, written from the queue's mapping as far as the socket takes it
 * when it is large.  The batches are written, without waiting, after the
 * walk.  Feeds that are caught up all sit at the newest product, so at the
 * IDD's pace a new product costs one wake-up, one walk and one lock for
 * all of them, and a system call per feed.
 *
 * A feed whose socket is full leaves its group where it stands: its cursor
 * is its own, and it is served by walks of its own once the socket takes
 * bytes again (EPOLLOUT), until it reaches the newest product and meets
 * the others there.  A large record begun and not finished is finished
 * from the product found again by its signature, as the connection
 * process does (upstream.c): no lock is held while a socket is full, so a
 * stuck downstream never holds a product or a writer.  A downstream that
 * takes nothing for LDMD_SYNC_TIMEOUT_MS, that does not answer a NULLPROC
 * within it, or that closes, ends its feed alone; the hub tells its
 * connection process, which logs the feed's last line and exits.
 *
 * At the end of the queue a feed that was sent something gets a NULLPROC
 * (answer read later, as upstream.c's send_np()), and an idle one a
 * keep-alive every /server/interval.  A thread of the hub sleeps on the
 * queue's wake-up word (pq_wait(), its own handle) and wakes the loop
 * through an eventfd when a product is committed.  The queue is open (and
 * the thread runs) only while the hub has feeds, as a connection process
 * has it open only while it feeds: an idle server holds no handle on it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/server/clock.h"
#include "ldmd/server/hub.h"
#include "ldmd/server/hub_link.h"
#include "ldmd/site/log.h"

#define INFO_BUF 512       /* an encoded prod_info (364 bytes at most) */
#define MAX_EVENTS 128     /* epoll events taken per wait */
#define HUB_STOP 1         /* callback result: no member of the group left */
#define HUB_GONE 2         /* callback result: not the product looked for */
#define HUB_AGAIN 3        /* callback result: the socket is full */
#define HUB_EIO 4          /* callback result: the send failed (part_rc) */
#define WAKER_SLICE_MS 200 /* the waker's sleep between looks at quit */
#define READ_TURN 64       /* records taken from one downstream per turn */

enum tag_kind { T_CHAN, T_WAKE, T_SOCK, T_PAIR };

enum conn_state {
  C_READY, /* may be sent the next products */
  C_END,   /* at the newest product: waits for a commit */
  C_WAIT,  /* its socket is full; its batch waits */
  C_PART,  /* its socket is full in the middle of a large record */
  C_GONE   /* ended: freed after this turn of the loop */
};

/* What a feed asks for: its class and upstream filter.  Feeds with the
 * same ones share one, so a product is matched once for all of them. */
typedef struct hub_sub {
  struct hub_sub *next;
  unsigned refs;
  size_t keylen;
  uint8_t *key; /* the class's XDR, then the filter's parts */
  pq_class cls;
  ldm_conf_filter filter;
  uint64_t gen; /* the product `match` is for */
  bool match;
} hub_sub;

struct hub_conn;

typedef struct hub_tag {
  enum tag_kind kind;
  struct hub_conn *c;
} hub_tag;

typedef struct hub_conn {
  struct hub_conn *next;
  ldm6_io *io;
  int pair; /* the connection process's pair, our end */
  hub_tag tsock, tpair;
  hub_sub *sub;
  ldmm_slot *ms;
  char peer[HUB_PEER_MAX];
  enum conn_state state;
  bool out_armed;      /* EPOLLOUT asked for */
  uint64_t cursor;     /* insertion time of the last product handled */
  int interval_ms;     /* keep-alive */
  bool oneway_pending; /* HEREIS sent since the last NULLPROC */
  int64_t last_call;
  int64_t stuck_since; /* when the socket last took bytes, while full */
  uint64_t stuck_tx;
  struct {
    bool on;
    uint32_t xid;
    int64_t sent;
  } np;
  struct {
    uint8_t head[INFO_BUF];
    size_t hlen;
    uint32_t dlen;
    uint8_t sig[PQ_SIGLEN];
    char ident[PQ_IDENT_MAX + 1];
    ldm6_io_partial st;
  } part;
  int part_rc;    /* put_part()'s send failure */
  bool read_more; /* readable() stopped at READ_TURN: more may wait */
  uint64_t nsent, nbytes, nskipped, ndamaged;
  int status; /* how it ended (C_GONE) */
} hub_conn;

typedef struct hub {
  const ldmd_settings *set;
  pq_t *pq;  /* the walks */
  pq_t *wpq; /* the waker thread's */
  int ep, chan, wake;
  hub_tag tchan, twake;
  hub_conn *conns;
  unsigned nconns;
  hub_sub *subs;
  uint64_t gen;
  hub_conn **ready; /* serve()'s scratch */
  size_t readycap;
  pthread_t waker;
  bool waker_on;
  atomic_bool quit;
  int64_t last_retry; /* when the feeds at the end last looked again */
} hub;

/* A walk's group: members all at one cursor. */
typedef struct group {
  hub *h;
  hub_conn **m;
  size_t n;
} group;

static const uint8_t zeros[4];

static int attach(hub *h);

/* ---------------------------------------------------------------------- */
/* Classes and filters                                                    */
/* ---------------------------------------------------------------------- */

static void sub_put(hub *h, hub_sub *s) {
  hub_sub **p;

  if (s == NULL || --s->refs > 0)
    return;
  for (p = &h->subs; *p != NULL; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      break;
    }
  pq_class_free(&s->cls);
  free(s->key);
  free(s);
}

/* The shared class and filter of a hand-over, made if new.  NULL: it
 * cannot be used (logged). */
static hub_sub *sub_get(hub *h, const hub_handoff *ho) {
  size_t flen = ho->nfilter * 2 * sizeof(uint32_t);
  size_t keylen = ho->class_len + flen;
  uint8_t *key = malloc(keylen > 0 ? keylen : 1);
  ldm6_prod_class wire;
  hub_sub *s;
  char err[256];
  size_t used;
  unsigned i;

  if (key == NULL)
    return NULL;
  memcpy(key, ho->class_xdr, ho->class_len);
  memcpy(key + ho->class_len, ho->filter_ft, ho->nfilter * sizeof(uint32_t));
  memcpy(key + ho->class_len + ho->nfilter * sizeof(uint32_t), ho->filter_allow,
         ho->nfilter * sizeof(uint32_t));
  for (s = h->subs; s != NULL; s = s->next)
    if (s->keylen == keylen && memcmp(s->key, key, keylen) == 0) {
      free(key);
      s->refs++;
      return s;
    }
  s = calloc(1, sizeof *s);
  if (s == NULL) {
    free(key);
    return NULL;
  }
  s->key = key;
  s->keylen = keylen;
  s->refs = 1;
  if (ldm6_decode(LDM6_T_PROD_CLASS, ho->class_xdr, ho->class_len, &wire,
                  &used) != 0 ||
      ldm6_class_to_pq(&wire, &s->cls, err, sizeof err) != 0) {
    log_error("feed hub: the class of %s cannot be read: dropped", ho->peer);
    free(key);
    free(s);
    return NULL;
  }
  s->filter.nparts = ho->nfilter;
  for (i = 0; i < ho->nfilter; i++) {
    if (ho->filter_allow[i] >= h->set->conf->nallows) {
      log_error("feed hub: the filter of %s names no ALLOW entry: dropped",
                ho->peer);
      pq_class_free(&s->cls);
      free(key);
      free(s);
      return NULL;
    }
    s->filter.parts[i].feedtype = ho->filter_ft[i];
    s->filter.parts[i].allow = &h->set->conf->allows[ho->filter_allow[i]];
  }
  s->next = h->subs;
  h->subs = s;
  return s;
}

static bool sub_match(hub *h, hub_sub *s, const pq_prod_info *info) {
  if (s->gen != h->gen) {
    s->gen = h->gen;
    s->match = pq_class_match(&s->cls, info) &&
               ldm_conf_filter_match(&s->filter, info->feedtype, info->ident);
  }
  return s->match;
}

/* ---------------------------------------------------------------------- */
/* Feeds                                                                  */
/* ---------------------------------------------------------------------- */

static void arm(hub *h, hub_conn *c, bool out) {
  struct epoll_event e = {.events = EPOLLIN | (out ? EPOLLOUT : 0),
                          .data.ptr = &c->tsock};

  if (c->out_armed == out)
    return;
  c->out_armed = out;
  (void)epoll_ctl(h->ep, EPOLL_CTL_MOD, ldm6_io_fd(c->io), &e);
}

/* The feed ends: its connection process is told how (if it is still
 * there), and the connection is closed.  Freed by reap(). */
static void conn_end(hub *h, hub_conn *c, int status) {
  hub_reply r = {.magic = HUB_MAGIC,
                 .kind = HUB_ENDED,
                 .status = status,
                 .nsent = c->nsent,
                 .nbytes = c->nbytes,
                 .nskipped = c->nskipped,
                 .ndamaged = c->ndamaged};

  if (c->state == C_GONE)
    return;
  c->state = C_GONE;
  c->status = status;
  (void)hub_link_reply(c->pair, &r);
  (void)epoll_ctl(h->ep, EPOLL_CTL_DEL, ldm6_io_fd(c->io), NULL);
  (void)epoll_ctl(h->ep, EPOLL_CTL_DEL, c->pair, NULL);
  /* The connection process still has the socket until it exits: the
   * downstream must see the end now. */
  (void)shutdown(ldm6_io_fd(c->io), SHUT_WR);
}

static void failed(hub *h, hub_conn *c, int rc, const char *what) {
  if (rc == LDM6_IO_CLOSED) {
    log_notice("connection closed by %s", c->peer);
    conn_end(h, c, LDMD_DONE);
    return;
  }
  if (rc == LDM6_IO_EREPLY)
    log_error("%s: %s refused the call", what, c->peer);
  else
    log_error("%s to %s failed: %s %s", what, c->peer, ldm6_io_strerror(rc),
              ldm6_io_detail(c->io));
  conn_end(h, c, LDMD_FAIL);
}

/* Free the feeds that ended. */
static void reap(hub *h) {
  hub_conn **p = &h->conns;

  while (*p != NULL) {
    hub_conn *c = *p;

    if (c->state != C_GONE) {
      p = &c->next;
      continue;
    }
    *p = c->next;
    ldm6_io_free(c->io);
    (void)close(c->pair);
    sub_put(h, c->sub);
    h->nconns--;
    log_debug("feed to %s ended (%u left)", c->peer, h->nconns);
    free(c);
  }
}

static void stuck(hub *h, hub_conn *c, enum conn_state state) {
  if (c->state != C_WAIT && c->state != C_PART) {
    c->stuck_since = ldmd_now_ms();
    c->stuck_tx = ldm6_io_tx_bytes(c->io);
  }
  c->state = state;
  arm(h, c, true);
}

static void sent(hub_conn *c, uint64_t size) {
  c->nsent++;
  c->nbytes += size;
  c->oneway_pending = true;
  ldmm_sent(c->ms, size);
}

/* Write the feed's batch as far as the socket takes it. */
static void flush_out(hub *h, hub_conn *c) {
  int rc;

  if (ldm6_io_queued(c->io) == 0)
    return;
  rc = ldm6_io_flush_nowait(c->io);
  if (rc == LDM6_IO_AGAIN)
    stuck(h, c, C_WAIT);
  else if (rc != LDM6_IO_OK)
    failed(h, c, rc, "sending");
}

static bool small_record(size_t hlen, uint64_t dlen) {
  return hlen + dlen + ldm6_xdr_pad(dlen) <= LDM6_IO_COPY_MAX;
}

static void record_iov(struct iovec iov[3], const uint8_t *head, size_t hlen,
                       const void *data, uint32_t dlen) {
  iov[0] = (struct iovec){(void *)head, hlen};
  iov[1] = (struct iovec){(void *)data, dlen};
  iov[2] = (struct iovec){(void *)zeros, ldm6_xdr_pad(dlen)};
}

/* One product to one member of a walk, never waiting.  The member's
 * cursor moves past it unless the socket took none of it. */
static void put(hub *h, hub_conn *c, const uint8_t *head, size_t hlen,
                const pq_prod_info *info, const void *data, uint64_t at) {
  struct iovec iov[3];
  uint32_t dlen = (uint32_t)info->size;
  int rc;

  record_iov(iov, head, hlen, data, dlen);
  if (small_record(hlen, dlen)) {
    rc = ldm6_io_queue_copy(c->io, LDM6_VERSION6, LDM6_HEREIS, iov, 3);
    if (rc == LDM6_IO_FULL) {
      rc = ldm6_io_flush_nowait(c->io);
      if (rc == LDM6_IO_AGAIN) {
        stuck(h, c, C_WAIT); /* offered again from its own cursor */
        return;
      }
      if (rc == LDM6_IO_OK)
        rc = ldm6_io_queue_copy(c->io, LDM6_VERSION6, LDM6_HEREIS, iov, 3);
    }
    if (rc != LDM6_IO_OK) {
      failed(h, c, rc, "hereis");
      return;
    }
    c->cursor = at;
    sent(c, dlen);
    return;
  }
  memcpy(c->part.head, head, hlen);
  c->part.hlen = hlen;
  c->part.dlen = dlen;
  memcpy(c->part.sig, info->signature, PQ_SIGLEN);
  snprintf(c->part.ident, sizeof c->part.ident, "%s", info->ident);
  memset(&c->part.st, 0, sizeof c->part.st);
  rc = ldm6_io_send_nowait(c->io, LDM6_VERSION6, LDM6_HEREIS, iov, 3,
                           &c->part.st);
  if (rc == LDM6_IO_OK) {
    c->cursor = at;
    sent(c, dlen);
  } else if (rc == LDM6_IO_AGAIN && c->part.st.started) {
    c->cursor = at; /* finished from the product found again */
    stuck(h, c, C_PART);
  } else if (rc == LDM6_IO_AGAIN) {
    stuck(h, c, C_WAIT);
  } else {
    failed(h, c, rc, "hereis");
  }
}

/* pq_next_many() callback: a product to every member it is for. */
static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  group *g = arg;
  hub *h = g->h;
  uint8_t head[INFO_BUF];
  size_t hlen = 0, i, alive = 0;
  int encoded = 0; /* 0: not yet, 1: head holds it, -1: cannot be sent */

  h->gen++;
  for (i = 0; i < g->n; i++) {
    hub_conn *c = g->m[i];

    if (c->state != C_READY)
      continue;
    if (encoded == 0 && sub_match(h, c->sub, info)) {
      ldm6_prod_info w;

      encoded = ldm6_info_from_pq(info, &w) == 0 &&
                        ldm6_encode(LDM6_T_PROD_INFO, &w, head, sizeof head,
                                    &hlen) == 0
                    ? 1
                    : -1;
      if (encoded < 0)
        log_warning("product %s cannot be sent with LDM-6: skipped",
                    info->ident);
    }
    if (encoded == 1 && sub_match(h, c->sub, info))
      put(h, c, head, hlen, info, data, place->pp_inserted);
    else
      c->cursor = place->pp_inserted;
    if (c->state == C_READY)
      alive++;
  }
  return alive > 0 ? 0 : HUB_STOP;
}

/* One batch for the members of a group, all at members[0]'s cursor. */
static void walk(hub *h, hub_conn **m, size_t n) {
  group g = {h, m, n};
  size_t i;
  int rc;

  pq_cursor_set(h->pq, m[0]->cursor);
  rc = pq_next_many(h->pq, PQ_FORWARD, NULL, PQ_NEXT_MANY_MAX, on_product, &g);
  if (rc == PQ_DAMAGED) {
    uint64_t past = pq_cursor_get(h->pq);

    log_error("not sent to %zu feeds: %s", n, pq_last_error(h->pq)->pe_msg);
    for (i = 0; i < n; i++)
      if (m[i]->state == C_READY) {
        m[i]->cursor = past;
        m[i]->ndamaged++;
      }
  } else if (rc != PQ_OK && rc != PQ_END && rc != HUB_STOP) {
    log_error("cannot read the queue %s: %s", pq_path(h->pq),
              pq_last_error(h->pq)->pe_msg);
    for (i = 0; i < n; i++)
      conn_end(h, m[i], LDMD_FAIL);
  }
  for (i = 0; i < n; i++) {
    hub_conn *c = m[i];

    if (c->state == C_GONE)
      continue;
    if (rc == PQ_END && c->state == C_READY)
      c->state = C_END;
    ldmm_cursor(c->ms, c->cursor);
    if (c->state == C_READY || c->state == C_END)
      flush_out(h, c);
  }
}

static int by_cursor(const void *a, const void *b) {
  const hub_conn *x = *(hub_conn *const *)a, *y = *(hub_conn *const *)b;

  return x->cursor < y->cursor ? -1 : x->cursor > y->cursor;
}

/* A batch for each group of ready feeds.  @return whether any feed is
 * still ready (more to send at once) */
static bool serve(hub *h) {
  size_t n = 0, i, j;
  hub_conn *c;
  bool more = false;

  if (h->readycap < h->nconns) {
    hub_conn **r = realloc(h->ready, h->nconns * sizeof *r);

    if (r == NULL)
      return true; /* try again */
    h->ready = r;
    h->readycap = h->nconns;
  }
  for (c = h->conns; c != NULL; c = c->next)
    if (c->state == C_READY)
      h->ready[n++] = c;
  qsort(h->ready, n, sizeof *h->ready, by_cursor);
  for (i = 0; i < n; i = j) {
    for (j = i + 1; j < n && h->ready[j]->cursor == h->ready[i]->cursor; j++)
      ;
    walk(h, h->ready + i, j - i);
  }
  for (i = 0; i < n; i++)
    if (h->ready[i]->state == C_READY)
      more = true;
  return more;
}

/* ---------------------------------------------------------------------- */
/* A full socket                                                          */
/* ---------------------------------------------------------------------- */

/* pq_find() callback: the next piece of the record in c->part. */
static int put_part(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  hub_conn *c = arg;
  struct iovec iov[3];
  int rc;

  (void)place;
  if (info->size != c->part.dlen)
    return HUB_GONE; /* cannot be: the signature is the data's */
  record_iov(iov, c->part.head, c->part.hlen, data, c->part.dlen);
  rc = ldm6_io_send_nowait(c->io, LDM6_VERSION6, LDM6_HEREIS, iov, 3,
                           &c->part.st);
  if (rc == LDM6_IO_OK)
    return 0;
  if (rc == LDM6_IO_AGAIN)
    return HUB_AGAIN;
  c->part_rc = rc;
  return HUB_EIO;
}

/* The socket takes bytes again. */
static void writable(hub *h, hub_conn *c) {
  int rc;

  if (c->state == C_WAIT) {
    rc = ldm6_io_flush_nowait(c->io);
    if (rc == LDM6_IO_OK) {
      c->state = C_READY;
      arm(h, c, false);
    } else if (rc != LDM6_IO_AGAIN) {
      failed(h, c, rc, "sending");
    }
    return;
  }
  if (c->state != C_PART)
    return;
  pq_set_verify(h->pq, PQ_VERIFY_OFF); /* checked whole when first read */
  rc = pq_find(h->pq, c->part.sig, put_part, c);
  pq_set_verify(h->pq, h->set->check_each ? PQ_VERIFY_EACH : PQ_VERIFY_ONCE);
  if (rc == PQ_OK) { /* put_part() returned LDM6_IO_OK */
    c->state = C_READY;
    arm(h, c, false);
    sent(c, c->part.dlen);
  } else if (rc == HUB_AGAIN) {
    /* more next time */
  } else if (rc == PQ_NOTFOUND || rc == HUB_GONE) {
    char hex[33];

    pq_sig_format(c->part.sig, hex);
    log_error("%s (%s) left the queue while it was being sent to %s "
              "(%llu bytes of the record sent): closing, the downstream "
              "resumes after what it got",
              c->part.ident, hex, c->peer, (unsigned long long)c->part.st.sent);
    conn_end(h, c, LDMD_FAIL);
  } else if (rc == HUB_EIO) {
    failed(h, c, c->part_rc, "hereis");
  } else {
    log_error("cannot read the queue %s: %s", pq_path(h->pq),
              pq_last_error(h->pq)->pe_msg);
    conn_end(h, c, LDMD_FAIL);
  }
}

/* ---------------------------------------------------------------------- */
/* What the downstream sends; NULLPROC                                    */
/* ---------------------------------------------------------------------- */

/* What the downstream sent, READ_TURN records at most: a downstream that
 * sends without end (calls after the turn-around are only ignored) would
 * otherwise keep the loop here, and every other feed would wait for it.
 * The rest is read at the next turns (read_again()). */
static void readable(hub *h, hub_conn *c) {
  int i;

  c->read_more = false;
  for (i = 0; i < READ_TURN; i++) {
    ldm6_io_msg m;
    int rc = ldm6_io_recv(c->io, 0, &m);

    if (rc == LDM6_IO_TIMEDOUT)
      return;
    if (rc != LDM6_IO_OK) {
      failed(h, c, rc, "reading");
      return;
    }
    if (m.hdr.type == LDM6_RPC_CALL) {
      log_debug("call %u from %s after the turn-around ignored",
                (unsigned)m.hdr.u.call.proc, c->peer);
    } else if (c->np.on && m.hdr.xid == c->np.xid) {
      c->np.on = false;
      if (m.hdr.u.reply.reply_stat != LDM6_RPC_MSG_ACCEPTED ||
          m.hdr.u.reply.accept_stat != LDM6_RPC_SUCCESS) {
        failed(h, c, LDM6_IO_EREPLY, "nullproc");
        return;
      }
    }
  }
  c->read_more = true;
}

/* The downstreams readable() left records of, another turn each (their
 * bytes may be in the connection's buffer, where epoll does not see
 * them).  @return whether any is left with more */
static bool read_again(hub *h) {
  hub_conn *c;
  bool more = false;

  for (c = h->conns; c != NULL; c = c->next)
    if (c->read_more && c->state != C_GONE) {
      readable(h, c);
      more = more || (c->read_more && c->state != C_GONE);
    }
  return more;
}

static void send_np(hub *h, hub_conn *c) {
  int rc = ldm6_io_queue_copy_xid(c->io, LDM6_VERSION6, LDM6_NULLPROC, NULL, 0,
                                  &c->np.xid);

  if (rc == LDM6_IO_FULL)
    return; /* after the batch has gone */
  if (rc != LDM6_IO_OK) {
    failed(h, c, rc, "nullproc");
    return;
  }
  c->np.on = true;
  c->np.sent = c->last_call = ldmd_now_ms();
  c->oneway_pending = false;
  flush_out(h, c);
}

/* Timers: the flush and keep-alive at the end of the queue, and the
 * limits on a silent or stuck downstream. */
static void tick(hub *h) {
  int64_t now = ldmd_now_ms();
  hub_conn *c;

  for (c = h->conns; c != NULL; c = c->next) {
    if (c->state == C_GONE)
      continue;
    if (c->np.on && now - c->np.sent >= LDMD_SYNC_TIMEOUT_MS) {
      log_error("nullproc to %s failed: no answer in %d s", c->peer,
                LDMD_SYNC_TIMEOUT_MS / 1000);
      conn_end(h, c, LDMD_FAIL);
      continue;
    }
    if (c->state == C_WAIT || c->state == C_PART) {
      uint64_t tx = ldm6_io_tx_bytes(c->io);

      if (tx != c->stuck_tx) {
        c->stuck_tx = tx;
        c->stuck_since = now;
      } else if (now - c->stuck_since >= LDMD_SYNC_TIMEOUT_MS) {
        log_error("%s took nothing for %d s: closing", c->peer,
                  LDMD_SYNC_TIMEOUT_MS / 1000);
        conn_end(h, c, LDMD_FAIL);
      }
      continue;
    }
    if (c->state == C_END && !c->np.on &&
        (c->oneway_pending || now - c->last_call >= c->interval_ms))
      send_np(h, c);
  }
}

/* ---------------------------------------------------------------------- */
/* Hand-overs                                                             */
/* ---------------------------------------------------------------------- */

static void take(hub *h, const hub_handoff *ho, const int fds[2]) {
  hub_reply r = {.magic = HUB_MAGIC, .kind = HUB_TAKEN};
  struct epoll_event e = {.events = EPOLLIN};
  hub_conn *c = calloc(1, sizeof *c);

  if (c == NULL || (h->pq == NULL && attach(h) != 0) ||
      (c->sub = sub_get(h, ho)) == NULL) {
    /* Refused before HUB_TAKEN: the connection process serves it. */
    free(c);
    (void)close(fds[0]);
    (void)close(fds[1]);
    return;
  }
  c->io = ldm6_io_new(fds[0], 0); /* closes fds[0] if it fails */
  c->pair = fds[1];
  if (c->io == NULL || hub_link_reply(c->pair, &r) != 0) {
    /* The connection process gave up waiting: it closes the connection. */
    log_notice("feed hub: the feed of %s was handed over too late: dropped",
               ho->peer);
    if (c->io != NULL)
      ldm6_io_free(c->io);
    (void)close(c->pair);
    sub_put(h, c->sub);
    free(c);
    return;
  }
  snprintf(c->peer, sizeof c->peer, "%s", ho->peer);
  c->tsock = (hub_tag){T_SOCK, c};
  c->tpair = (hub_tag){T_PAIR, c};
  c->ms = ldmm_slot_at(h->set->metrics, ho->metrics_slot);
  c->cursor = ho->cursor_us;
  c->interval_ms = ho->interval_ms;
  c->last_call = ldmd_now_ms();
  c->state = C_READY;
  e.data.ptr = &c->tsock;
  (void)epoll_ctl(h->ep, EPOLL_CTL_ADD, ldm6_io_fd(c->io), &e);
  e.data.ptr = &c->tpair;
  (void)epoll_ctl(h->ep, EPOLL_CTL_ADD, c->pair, &e);
  c->next = h->conns;
  h->conns = c;
  h->nconns++;
  log_info("feeding %s (%u feeds)", c->peer, h->nconns);
}

static void take_all(hub *h) {
  static hub_handoff ho; /* 24 KB: not on the stack */

  for (;;) {
    int fds[2];
    int rc = hub_link_receive(h->chan, &ho, fds);

    if (rc == 0)
      return;
    if (rc < 0) {
      if (errno == EPROTO)
        continue;
      log_error("feed hub: cannot read its channel: %s", strerror(errno));
      return;
    }
    take(h, &ho, fds);
  }
}

/* ---------------------------------------------------------------------- */
/* The loop                                                               */
/* ---------------------------------------------------------------------- */

/* The waker thread: an eventfd write for each commit it sees. */
static void *waker(void *arg) {
  hub *h = arg;
  uint64_t one = 1;

  (void)pq_cursor_newest(h->wpq);
  while (!atomic_load(&h->quit)) {
    int rc = pq_wait(h->wpq, WAKER_SLICE_MS);

    if (rc == PQ_TIMEDOUT)
      continue;
    if (rc != PQ_OK)
      break; /* the loop looks every second anyway */
    (void)pq_cursor_newest(h->wpq);
    if (write(h->wake, &one, sizeof one) < 0 && errno != EAGAIN)
      break;
  }
  return NULL;
}

static pq_t *open_queue(const ldmd_settings *set) {
  pq_t *pq = NULL;
  pq_error err;

  if (pq_open(set->queue_path, 0, &pq, &err) == PQ_OK ||
      pq_open(set->queue_path, PQ_READONLY, &pq, &err) == PQ_OK) {
    pq_set_spin(pq, 0);
    return pq;
  }
  log_error("feed hub: cannot open the queue %s: %s", set->queue_path,
            err.pe_msg);
  return NULL;
}

/* Open the queue and start the waker: at the first feed. */
static int attach(hub *h) {
  sigset_t all, old;
  int rc;

  h->pq = open_queue(h->set);
  h->wpq = open_queue(h->set);
  if (h->pq == NULL || h->wpq == NULL) {
    pq_close(h->pq);
    pq_close(h->wpq);
    h->pq = h->wpq = NULL;
    return -1;
  }
  pq_set_verify(h->pq, h->set->check_each ? PQ_VERIFY_EACH : PQ_VERIFY_ONCE);
  atomic_store(&h->quit, false);
  /* The signals are the loop's: the thread takes none. */
  sigfillset(&all);
  (void)pthread_sigmask(SIG_SETMASK, &all, &old);
  rc = pthread_create(&h->waker, NULL, waker, h);
  (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) { /* the loop looks every second anyway */
    log_warning("feed hub: cannot start its waker thread: %s", strerror(rc));
    return 0;
  }
  h->waker_on = true;
  return 0;
}

/* Stop the waker and close the queue: when the last feed has ended. */
static void detach(hub *h) {
  if (h->waker_on) {
    atomic_store(&h->quit, true);
    (void)pthread_join(h->waker, NULL);
    h->waker_on = false;
  }
  pq_close(h->pq);
  pq_close(h->wpq);
  h->pq = h->wpq = NULL;
}

/* Each feed takes two descriptors here (its socket and its pair), where a
 * connection process takes one: the hub lifts its own soft limit on open
 * files to the hard one, or a common soft limit of 1024 would send every
 * feed past about 500 back to its connection process (a hand-over whose
 * descriptors do not fit arrives broken). */
static void raise_fd_limit(void) {
  struct rlimit rl;

  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
    return;
  rl.rlim_cur = rl.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
    log_warning("feed hub: cannot raise its limit on open files: %s",
                strerror(errno));
}

static int start(hub *h) {
  struct epoll_event e = {.events = EPOLLIN};

  raise_fd_limit();
  h->ep = epoll_create1(EPOLL_CLOEXEC);
  h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (h->ep < 0 || h->wake < 0) {
    log_error("feed hub: %s: %s", h->ep < 0 ? "epoll_create1" : "eventfd",
              strerror(errno));
    return -1;
  }
  h->tchan = (hub_tag){T_CHAN, NULL};
  h->twake = (hub_tag){T_WAKE, NULL};
  e.data.ptr = &h->tchan;
  (void)epoll_ctl(h->ep, EPOLL_CTL_ADD, h->chan, &e);
  e.data.ptr = &h->twake;
  (void)epoll_ctl(h->ep, EPOLL_CTL_ADD, h->wake, &e);
  return 0;
}

static void finish(hub *h) {
  hub_conn *c;

  for (c = h->conns; c != NULL; c = c->next)
    conn_end(h, c, LDMD_DONE);
  reap(h);
  detach(h);
  free(h->ready);
  if (h->ep >= 0)
    (void)close(h->ep);
  if (h->wake >= 0)
    (void)close(h->wake);
}

/* A commit (or a second gone by): the feeds at the end look again. */
static void retry_end(hub *h) {
  hub_conn *c;

  h->last_retry = ldmd_now_ms();
  for (c = h->conns; c != NULL; c = c->next)
    if (c->state == C_END)
      c->state = C_READY;
}

static void dispatch(hub *h, const struct epoll_event *e) {
  hub_tag *t = e->data.ptr;
  hub_conn *c = t->c;
  uint64_t n;

  switch (t->kind) {
  case T_CHAN:
    take_all(h);
    return;
  case T_WAKE:
    if (read(h->wake, &n, sizeof n) < 0 && errno != EAGAIN)
      log_warning("feed hub: eventfd: %s", strerror(errno));
    retry_end(h);
    return;
  case T_PAIR: /* the connection process ended or was stopped */
    if (c->state != C_GONE) {
      log_info("the process of %s's feed ended: feed dropped", c->peer);
      conn_end(h, c, LDMD_DONE);
    }
    return;
  case T_SOCK:
    /* Writing first: a record begun whose product has left the queue is
     * said so before a closed connection is. */
    if (c->state != C_GONE && (e->events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
      writable(h, c);
    if (c->state != C_GONE && (e->events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
      readable(h, c);
    return;
  }
}

int ldmd_hub_run(const ldmd_settings *set, int chan) {
  static hub h;
  struct epoll_event ev[MAX_EVENTS];
  int status = 0;

  memset(&h, 0, sizeof h);
  h.set = set;
  h.chan = chan;
  h.ep = h.wake = -1;
  ldm_log_set_ident("hub");
  if (start(&h) != 0) {
    finish(&h);
    return 1;
  }
  log_notice("feed hub serving the plain primary feeds");
  while (!*set->stop) {
    bool more = serve(&h);
    int n, i;

    more = read_again(&h) || more;
    tick(&h);
    reap(&h);
    n = epoll_wait(h.ep, ev, MAX_EVENTS, more ? 0 : LDMD_SLICE_MS);
    if (n < 0 && errno != EINTR) {
      log_error("feed hub: epoll_wait: %s", strerror(errno));
      status = 1;
      break;
    }
    for (i = 0; i < n; i++)
      dispatch(&h, &ev[i]);
    if (ldmd_now_ms() - h.last_retry >= LDMD_SLICE_MS)
      retry_end(&h);
    reap(&h);
    if (h.nconns == 0 && h.pq != NULL)
      detach(&h);
  }
  if (*set->stop)
    log_info("stopping");
  finish(&h);
  return status;
}
