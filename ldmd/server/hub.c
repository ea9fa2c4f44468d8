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
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/server/clock.h"
#include "ldmd/server/hub.h"
#include "ldmd/server/hub_link.h"
#include "ldmd/server/oneway.h"
#include "ldmd/site/log.h"

#define MAX_EVENTS 128     /* epoll events taken per wait */
#define HUB_STOP 1         /* callback result: no member of the group left */
#define HUB_GONE 2         /* callback result: not the product looked for */
#define HUB_AGAIN 3        /* callback result: the socket is full */
#define HUB_EIO 4          /* callback result: the send failed (part_rc) */
#define READ_BURST 64      /* messages read from one downstream a turn */
#define WAKER_SLICE_MS 200 /* the waker's sleep between looks at quit */

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
  bool corked;         /* bytes written with MSG_MORE, not pushed yet */
  uint64_t cursor;     /* insertion time of the last product handled */
  bool oneway_pending; /* HEREIS sent since the last NULLPROC */
  int64_t last_call;
  int64_t stuck_since; /* when the socket last took bytes, while full */
  uint64_t stuck_tx;
  struct {
    bool on;
    uint32_t xid;
    int64_t sent;
  } np;
  ldmd_piece part; /* C_PART: the record the socket has not taken whole */
  int part_rc;     /* put_part()'s send failure */
  bool read_more;  /* readable() stopped at READ_BURST: read again */
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
  uint64_t last; /* insertion time of the last product handed over */
} group;

static int attach(hub *h);

/* ---------------------------------------------------------------------- */
/* Classes and filters                                                    */
/* ---------------------------------------------------------------------- */

static enum pq_verify verify_mode(const hub *h) {
  return h->set->check_each ? PQ_VERIFY_EACH : PQ_VERIFY_ONCE;
}

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

/* A product gone to a feed (info NULL: the end of one sent by pieces,
 * c->part). */
static void sent(hub_conn *c, const pq_prod_info *info, uint64_t size) {
  c->nsent++;
  c->nbytes += size;
  c->oneway_pending = true;
  ldmm_sent(c->ms, size);
  if (ldm_log_enabled(LDM_LOG_DEBUG)) {
    char text[640];

    if (info != NULL)
      pq_prod_info_format(info, true, text, sizeof text);
    else
      snprintf(text, sizeof text, "%u %s", (unsigned)c->part.dlen,
               c->part.ident);
    log_debug("sent %s to %s", text, c->peer);
  }
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

/* One product to one member of a walk, never waiting.  The member's
 * cursor moves past it unless the socket took none of it. */
static void put(hub *h, hub_conn *c, const uint8_t *head, size_t hlen,
                const pq_prod_info *info, const void *data,
                const pq_place *place) {
  uint64_t at = place->pp_inserted;
  struct iovec iov[3];
  uint32_t dlen = (uint32_t)info->size;
  int rc;

  ldmd_record_iov(iov, head, hlen, data, dlen);
  if (ldmd_small_record(hlen, dlen)) {
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
    sent(c, info, dlen);
    return;
  }
  memcpy(c->part.head, head, hlen);
  c->part.hlen = hlen;
  c->part.dlen = dlen;
  memcpy(c->part.sig, info->signature, PQ_SIGLEN);
  snprintf(c->part.ident, sizeof c->part.ident, "%s", info->ident);
  memset(&c->part.st, 0, sizeof c->part.st);
  /* When the batch has more, this record's last bytes may wait to share a
   * segment with the next (walk() pushes what is left waiting). */
  rc = ldm6_io_send_nowait_more(c->io, LDM6_VERSION6, LDM6_HEREIS, iov, 3,
                                &c->part.st, place->pp_more);
  c->corked = true; /* MSG_MORE on the batch written before it, at least */
  if (rc == LDM6_IO_OK) {
    c->cursor = at;
    sent(c, info, dlen);
  } else if (rc == LDM6_IO_AGAIN) {
    /* Begun or not, it is sent from the product found again, or said
     * skipped if it left the queue before any of it went. */
    c->cursor = at;
    stuck(h, c, C_PART);
  } else {
    failed(h, c, rc, "hereis");
  }
}

/* pq_next_many() callback: a product to every member it is for. */
static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  group *g = arg;
  hub *h = g->h;
  uint8_t head[LDMD_INFO_BUF];
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
      put(h, c, head, hlen, info, data, place);
    else
      c->cursor = place->pp_inserted;
    if (c->state == C_READY)
      alive++;
  }
  g->last = place->pp_inserted;
  return alive > 0 ? 0 : HUB_STOP;
}

/* What peek_info() takes of a product. */
struct peek {
  pq_prod_info info;
  uint64_t at;
};

/* pq_next() callback: the product's description. */
static int peek_info(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  struct peek *p = arg;

  (void)data;
  p->info = *info;
  p->at = place->pp_inserted;
  return 0;
}

/* The description of the damaged product a walk (of class cls, NULL:
 * every product) stopped at, inserted at past, the first of the class
 * after before: read again, unverified, so that it is charged only to the
 * feeds whose class and filter it passes, as a feed's own pq_next_many()
 * with its class would.  @return whether found */
static bool damaged_info(hub *h, const pq_class *cls, uint64_t before,
                         uint64_t past, pq_prod_info *info) {
  struct peek p = {.at = 0};
  int rc;

  pq_cursor_set(h->pq, before);
  pq_set_verify(h->pq, PQ_VERIFY_OFF);
  rc = pq_next(h->pq, PQ_FORWARD, cls, peek_info, &p);
  pq_set_verify(h->pq, verify_mode(h));
  if (rc != PQ_OK || p.at != past)
    return false;
  *info = p.info;
  return true;
}

/* One batch for the members of a group, all at members[0]'s cursor. */
static void walk(hub *h, hub_conn **m, size_t n) {
  group g = {h, m, n, m[0]->cursor};
  const pq_class *cls = &m[0]->sub->cls;
  size_t i;
  int rc;

  /* Members that all ask the same class let the queue skip what none of
   * them wants, unread and unchecked; otherwise every product comes and
   * each member's class is matched here. */
  for (i = 1; i < n && cls != NULL; i++)
    if (m[i]->sub != m[0]->sub)
      cls = NULL;
  pq_cursor_set(h->pq, m[0]->cursor);
  rc = pq_next_many(h->pq, PQ_FORWARD, cls, PQ_NEXT_MANY_MAX, on_product, &g);
  if (cls != NULL && (rc == PQ_OK || rc == PQ_END)) {
    /* Past the products skipped too: those still in the group took every
     * product handed over. */
    uint64_t past = pq_cursor_get(h->pq);

    for (i = 0; i < n; i++)
      if (m[i]->state == C_READY)
        m[i]->cursor = past;
  }
  if (rc == PQ_DAMAGED) {
    uint64_t past = pq_cursor_get(h->pq);
    char msg[sizeof pq_last_error(h->pq)->pe_msg];
    pq_prod_info info;
    bool known;

    snprintf(msg, sizeof msg, "%s", pq_last_error(h->pq)->pe_msg);
    known = damaged_info(h, cls, g.last, past, &info);
    h->gen++;
    for (i = 0; i < n; i++)
      if (m[i]->state == C_READY) {
        m[i]->cursor = past;
        if (known && !sub_match(h, m[i]->sub, &info))
          continue; /* not for it: a feed of its own would not see it */
        m[i]->ndamaged++;
        log_error("not sent to %s: %s", m[i]->peer, msg); /* upstream.c's */
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
    if ((c->state == C_READY || c->state == C_END) && ldm6_io_queued(c->io) > 0)
      flush_out(h, c); /* a write without MSG_MORE: pushes the rest */
    else if (c->corked)
      ldm6_io_push(c->io);
    c->corked = false;
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
  if (n > 1) /* h->ready is NULL until the first feed */
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
  ldmd_record_iov(iov, c->part.head, c->part.hlen, data, c->part.dlen);
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
  pq_set_verify(h->pq, verify_mode(h));
  if (rc == PQ_OK) { /* put_part() returned LDM6_IO_OK */
    c->state = C_READY;
    arm(h, c, false);
    sent(c, NULL, c->part.dlen);
  } else if (rc == HUB_AGAIN) {
    /* more next time */
  } else if ((rc == PQ_NOTFOUND || rc == HUB_GONE) && !c->part.st.started) {
    char hex[33];

    pq_sig_format(c->part.sig, hex);
    c->nskipped++;
    log_notice("%s (%s) left the queue before it could be sent to %s: "
               "skipped (the downstream is slow)",
               c->part.ident, hex, c->peer);
    c->state = C_READY;
    arm(h, c, false);
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

/* What the downstream sent: the NULLPROC's answer, stray calls (ignored),
 * its end.  At most READ_BURST messages a turn, so that a peer that never
 * stops sending does not keep the loop from the others; the rest next
 * turn (c->read_more: epoll does not see what the connection's buffer
 * already holds, only what the socket still does). */
static void readable(hub *h, hub_conn *c) {
  unsigned k;

  c->read_more = false;
  for (k = 0; k < READ_BURST; k++) {
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

/* The feeds whose readable() stopped at READ_BURST read on.  @return
 * whether one still has more (the loop must not sleep) */
static bool read_on(hub *h) {
  hub_conn *c;
  bool more = false;

  for (c = h->conns; c != NULL; c = c->next) {
    if (c->state != C_GONE && c->read_more)
      readable(h, c);
    if (c->state != C_GONE && c->read_more)
      more = true;
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
 * limits on a silent or stuck downstream.  @return the milliseconds until
 * the next keep-alive is due (LDMD_SLICE_MS at most): the loop sleeps no
 * longer, as upstream.c's idle() does, or a downstream whose silence limit
 * is little more than the interval would hear nothing for too long. */
static int tick(hub *h) {
  int64_t now = ldmd_now_ms(), next = LDMD_SLICE_MS;
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
        /* upstream.c's lines: finish_part()'s names the record begun */
        if (c->state == C_PART)
          log_error("%s took nothing of %s for %d s: closing", c->peer,
                    c->part.ident, LDMD_SYNC_TIMEOUT_MS / 1000);
        else
          log_error("%s took nothing for %d s: closing", c->peer,
                    LDMD_SYNC_TIMEOUT_MS / 1000);
        conn_end(h, c, LDMD_FAIL);
      }
      continue;
    }
    if (c->state == C_END && !c->np.on &&
        (c->oneway_pending || now - c->last_call >= h->set->interval_ms))
      send_np(h, c);
    if (c->state == C_END && !c->np.on) {
      int64_t left = c->last_call + h->set->interval_ms - now;

      if (left > 0 && left < next)
        next = left;
    }
  }
  return (int)next;
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
  /* After the turn-around a downstream sends answers of a few bytes: a
   * longer record is refused (the connection closes) rather than held. */
  c->io = ldm6_io_new(fds[0], LDMD_RECORD_HEAD); /* closes fds[0] on failure */
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
    if (rc != PQ_OK) {
      log_warning("feed hub: cannot wait on the queue (%s): new products "
                  "are looked for every second",
                  pq_strerror(rc));
      break;
    }
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
  pq_set_verify(h->pq, verify_mode(h));
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

static int start(hub *h) {
  struct epoll_event e = {.events = EPOLLIN};
  struct rlimit rl;

  /* Two descriptors a feed: as many as the hard limit lets it have (a
   * hand-over that finds none left is refused, and its connection
   * process serves the feed itself). */
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl);
  }
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
    bool more = read_on(&h);
    int n, i, wait_ms;

    more = serve(&h) || more;
    wait_ms = tick(&h);
    reap(&h);
    n = epoll_wait(h.ep, ev, MAX_EVENTS, more ? 0 : wait_ms);
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
