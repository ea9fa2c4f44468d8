/*
 * downstream.c - products received from an upstream go into the queue: the
 * vetting (time window, class), the origin rewriting, duplicate detection
 * by the queue's signature index, and the two ways in (HEREIS in one piece;
 * COMINGSOON announcing a product whose BLKDATA segments follow), each also
 * in a streaming form where the caller reads the data where it is told.
 * See downstream.h for the rules; this file owns only their mechanics, the
 * counters, and which products are settled (a requester's resume point).
 *
 * A product whose data is still coming (announced by COMINGSOON, or a long
 * HEREIS being read) is held across calls, so the object remembers the one
 * product in flight and drops it if the sender moves on, closes, or breaks
 * the protocol: the queue never keeps a half-filled product.  Its data
 * waits in this object's memory, not in the queue, until the last byte has
 * come (docs/security.md, "Announced products (COMINGSOON)"): an
 * announcement alone reserves nothing and evicts nothing.  A product whose
 * missing bytes have all come (the caller says so: ldmd_down_room()'s
 * ready) is not held: its room is reserved then and its bytes go there
 * straight, one copy fewer.  Only the first
 * hold_max bytes are held so; a product that has sent that many and has
 * more to come is given its room in the queue then, and the rest goes
 * there straight.  The memory is kept for the next product and freed when
 * the connection is idle.
 */
#include "ldmd/server/downstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"

#define PRODTEXT_LEN 640
#define POPULATE_MIN (64u * 1024u) /* smaller buffers: let them fault */

struct ldmd_down {
  pq_t *pq;
  char upstream[PQ_ORIGIN_MAX + 1];
  unsigned max_latency;
  pq_class cls;
  ldmd_down_stats st;
  uint64_t nsettled;
  pq_prod_info settled; /* the last product whose fate is final */
  /* the product whose data is coming (COMINGSOON, or a streamed HEREIS) */
  bool pending;
  bool dropped;  /* refused once its data came: the rest is read, dropped */
  bool in_queue; /* past hold_max: its room is reserved (resv) */
  bool failed;   /* the queue failed (LDMD_DOWN_EQUEUE) */
  pq_resv resv;
  pq_prod_info pinfo;
  uint64_t have; /* bytes received so far */
  uint8_t *buf;  /* its first bytes, while they are not in the queue */
  size_t cap;    /* buf's size */
  uint64_t hold_max;
  /* what ldmd_down_stream_end() completes */
  enum { STREAM_NONE, STREAM_HEREIS, STREAM_BLKDATA } stream;
  ldmm_slot *ms; /* the live figures, or NULL */
  ldmm_feed *mfeeds;
};

ldmd_down *ldmd_down_new(pq_t *pq, const char *upstream, unsigned max_latency,
                         pq_class *cls) {
  ldmd_down *d = calloc(1, sizeof *d);

  if (d == NULL) {
    pq_class_free(cls);
    return NULL;
  }
  d->pq = pq;
  snprintf(d->upstream, sizeof d->upstream, "%s", upstream);
  d->max_latency = max_latency;
  d->cls = *cls; /* the compiled patterns move with the struct */
  memset(cls, 0, sizeof *cls);
  d->hold_max = LDMD_DOWN_HOLD_DEFAULT;
  return d;
}

void ldmd_down_set_metrics(ldmd_down *d, ldmm_slot *slot, ldmm_feed *feeds) {
  d->ms = slot;
  d->mfeeds = feeds;
}

void ldmd_down_set_hold(ldmd_down *d, uint64_t bytes) {
  d->hold_max = bytes;
}

static void discard_pending(ldmd_down *d, const char *why) {
  char text[PRODTEXT_LEN];
  int rc;

  if (!d->pending)
    return;
  d->pending = false;
  if (d->dropped) /* counted when it was refused */
    return;
  d->st.incomplete++;
  ldmm_refused(d->ms, d->mfeeds, d->pinfo.feedtype, LDMM_INCOMPLETE);
  pq_prod_info_format(&d->pinfo, false, text, sizeof text);
  if (why != NULL)
    log_warning("discarding incomplete product (%s; %llu of its %llu bytes "
                "came): %s",
                why, (unsigned long long)d->have,
                (unsigned long long)d->pinfo.size, text);
  if (!d->in_queue)
    return; /* only memory held it */
  rc = pq_discard(d->pq, &d->resv);
  if (rc != PQ_OK)
    log_error("cannot discard a reservation in %s: %s", pq_path(d->pq),
              pq_last_error(d->pq)->pe_msg);
}

const pq_prod_info *ldmd_down_pending(const ldmd_down *d) {
  return d->pending ? &d->pinfo : NULL;
}

bool ldmd_down_discard(ldmd_down *d, const char *why) {
  bool was = d->pending && !d->dropped;

  discard_pending(d, why);
  return was;
}

void ldmd_down_idle(ldmd_down *d) {
  if (d == NULL || d->pending || d->cap <= LDMD_DOWN_HOLD_KEEP)
    return;
  free(d->buf);
  d->buf = NULL;
  d->cap = 0;
}

void ldmd_down_free(ldmd_down *d) {
  if (d == NULL)
    return;
  discard_pending(d, "connection ended");
  pq_class_free(&d->cls);
  free(d->buf);
  free(d);
}

const ldmd_down_stats *ldmd_down_stats_get(const ldmd_down *d) {
  return &d->st;
}

uint64_t ldmd_down_lost(const ldmd_down_stats *st) {
  return st->no_room + st->too_big + st->bad + st->incomplete;
}

uint64_t ldmd_down_settled(const ldmd_down *d, pq_prod_info *info) {
  if (info != NULL && d->nsettled > 0)
    *info = d->settled;
  return d->nsettled;
}

/* The fate of a product is final. */
static void settle(ldmd_down *d, const pq_prod_info *info) {
  d->settled = *info;
  d->nsettled++;
}

/* Append s at out[*len], cut at PQ_ORIGIN_MAX characters. */
static void append(char *out, size_t *len, const char *s) {
  size_t n = strlen(s);

  if (n > PQ_ORIGIN_MAX - *len)
    n = PQ_ORIGIN_MAX - *len;
  memcpy(out + *len, s, n);
  *len += n;
}

void ldmd_down_origin(const char *origin, const char *upstream,
                      char out[PQ_ORIGIN_MAX + 1]) {
  const char *v = strstr(origin, "_v_");
  size_t keep = v != NULL ? (size_t)(v - origin) : strlen(origin);

  if (keep > PQ_ORIGIN_MAX)
    keep = PQ_ORIGIN_MAX;
  memcpy(out, origin, keep);
  append(out, &keep, "_v_");
  append(out, &keep, upstream);
  out[keep] = '\0';
}

/* Vetting outcomes. */
enum vet { VET_OK, VET_REFUSED };

/* Refuse a product whose metadata is sound: count it (in *count and as
 * cause), settle its fate and log "what: ignoring <kind> product: ...". */
static enum vet refuse(ldmd_down *d, const pq_prod_info *info, uint64_t *count,
                       enum ldmm_cause cause, const char *what,
                       const char *kind) {
  char text[PRODTEXT_LEN];

  (*count)++;
  ldmm_refused(d->ms, d->mfeeds, info->feedtype, cause);
  settle(d, info);
  pq_prod_info_format(info, false, text, sizeof text);
  log_warning("%s: ignoring %s product: %s", what, kind, text);
  return VET_REFUSED;
}

/*
 * Convert, vet and rewrite a product's metadata into info.  what names the
 * call for messages ("hereis", "comingsoon").
 */
static enum vet vet(ldmd_down *d, const ldm6_prod_info *w, pq_prod_info *info,
                    const char *what) {
  pq_timestamp from;

  d->st.received++;
  if (ldm6_info_to_pq(w, info) != 0) {
    d->st.bad++;
    ldmm_refused(d->ms, d->mfeeds, w->feedtype, LDMM_INVALID);
    log_warning("%s: ignoring product with invalid metadata: %s", what,
                w->ident);
    return VET_REFUSED;
  }
  info->size = w->sz;
  ldmd_down_origin(w->origin, d->upstream, info->origin);
  from = pq_ts_now();
  from.sec -= (int64_t)d->max_latency;
  if (pq_ts_cmp(info->arrival, from) < 0)
    return refuse(d, info, &d->st.too_old, LDMM_TOO_OLD, what, "too-old");
  d->cls.from = from;
  if (pq_ts_cmp(from, d->cls.to) > 0 || !pq_class_match(&d->cls, info))
    return refuse(d, info, &d->st.unwanted, LDMM_UNWANTED, what, "unrequested");
  return VET_OK;
}

static void inserted(ldmd_down *d, const pq_prod_info *info) {
  settle(d, info);
  d->st.inserted++;
  d->st.bytes += info->size;
  if (d->ms != NULL || d->mfeeds != NULL) /* the clock is vDSO: no syscall */
    ldmm_inserted(
        d->ms, d->mfeeds, info->feedtype, info->size,
        (int64_t)(pq_ts_to_us(pq_ts_now()) - pq_ts_to_us(info->arrival)));
  if (ldm_log_enabled(LDM_LOG_INFO)) {
    char text[PRODTEXT_LEN];

    pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), text,
                        sizeof text);
    log_info("%s", text);
  }
}

/* An insert or reserve that did not succeed: count it, say so.
 * @return LDMD_DOWN_OK for outcomes that only drop the product. */
static int refused(ldmd_down *d, int rc, const pq_prod_info *info,
                   const char *what) {
  char text[PRODTEXT_LEN];

  pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), text, sizeof text);
  if (rc == PQ_DUP || rc == PQ_BIG || rc == PQ_LOCKED || rc == PQ_INVAL)
    settle(d, info); /* dropped for good */
  switch (rc) {
  case PQ_DUP:
    d->st.duplicates++;
    ldmm_refused(d->ms, d->mfeeds, info->feedtype, LDMM_DUPLICATE);
    log_info("%s: duplicate: %s", what, text);
    return LDMD_DOWN_OK;
  case PQ_BIG:
    d->st.too_big++;
    ldmm_refused(d->ms, d->mfeeds, info->feedtype, LDMM_TOO_BIG);
    log_warning("%s: product too big for %s: %s", what, pq_path(d->pq), text);
    return LDMD_DOWN_OK;
  case PQ_LOCKED:
    d->st.no_room++;
    ldmm_refused(d->ms, d->mfeeds, info->feedtype, LDMM_NO_ROOM);
    log_warning("%s: no room in %s (all products in use), dropped: %s", what,
                pq_path(d->pq), text);
    return LDMD_DOWN_OK;
  case PQ_INVAL:
    d->st.bad++;
    ldmm_refused(d->ms, d->mfeeds, info->feedtype, LDMM_INVALID);
    log_warning("%s: metadata unfit for the queue, dropped: %s", what, text);
    return LDMD_DOWN_OK;
  default:
    log_error("%s: cannot insert into %s: %s", what, pq_path(d->pq),
              pq_last_error(d->pq)->pe_msg);
    return LDMD_DOWN_EQUEUE;
  }
}

int ldmd_down_hereis(ldmd_down *d, const ldm6_product *prod) {
  pq_prod_info info;
  int rc;

  if (vet(d, &prod->info, &info, "hereis") != VET_OK)
    return LDMD_DOWN_OK;
  rc = pq_insert(d->pq, &info, prod->data);
  if (rc != PQ_OK)
    return refused(d, rc, &info, "hereis");
  inserted(d, &info);
  return LDMD_DOWN_OK;
}

/* pq_find() callback: the product is there; nothing to read. */
static int found(const pq_prod_info *info, const void *data,
                 const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  (void)place;
  (void)arg;
  return 0;
}

/*
 * A product whose data is still to come: vet it, refuse it at once if the
 * queue could never hold it (or, when ask_dup, if it is queued already),
 * else make it the pending product.  Nothing is reserved in the queue.
 * @return LDMD_DOWN_OK (d->pending says whether it is taken)
 */
static int admit(ldmd_down *d, const ldm6_prod_info *w, bool ask_dup,
                 const char *what) {
  pq_prod_info info;

  if (vet(d, w, &info, what) != VET_OK)
    return LDMD_DOWN_OK;
  if (info.size >
      pq_max_product_size(d->pq, strlen(info.origin), strlen(info.ident)))
    return refused(d, PQ_BIG, &info, what);
  if (ask_dup && pq_find(d->pq, info.signature, found, NULL) == PQ_OK)
    return refused(d, PQ_DUP, &info, what);
  d->pending = true;
  d->dropped = false;
  d->in_queue = false;
  d->failed = false;
  d->pinfo = info;
  d->have = 0;
  return LDMD_DOWN_OK;
}

int ldmd_down_comingsoon(ldmd_down *d, const ldm6_comingsoon_args *args,
                         ldm6_errt *reply) {
  int rc;

  *reply = LDM6_DONT_SEND;
  discard_pending(d, "a new COMINGSOON arrived first");
  rc = admit(d, &args->info, true, "comingsoon");
  if (d->pending)
    *reply = LDM6_OK;
  return rc;
}

/* The pending product has more than hold_max bytes (or memory ran out):
 * reserve its room in the queue and move what came there.  @return false
 * if the queue refused it (it is then dropped; d->failed if the queue
 * failed) */
static bool to_queue(ldmd_down *d) {
  const char *what = d->stream == STREAM_HEREIS ? "hereis" : "blkdata";
  int rc = pq_reserve(d->pq, &d->pinfo, &d->resv);

  if (rc != PQ_OK) {
    d->dropped = true;
    d->failed = refused(d, rc, &d->pinfo, what) != LDMD_DOWN_OK;
    return false;
  }
  d->in_queue = true;
  if (d->have > 0)
    memcpy(d->resv.pr_data, d->buf, (size_t)d->have);
  return true;
}

/* Map the pages of a new buffer p[0..n) into this process in one call
 * before the socket's bytes are read into them: a fresh buffer would
 * otherwise take a page fault for every 4 KiB of a large product, inside
 * each read(2), which halves its rate.  Once per buffer, since it is kept
 * from product to product (the queue's pages are pq's: populate.c).  Only
 * an optimisation: any failure (an old kernel) is ignored. */
static void populate(uint8_t *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t lo, hi;

  if (n < POPULATE_MIN || page <= 0)
    return;
  lo = (uintptr_t)p & ~((uintptr_t)page - 1);
  hi = (uintptr_t)p + n;
  (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* Make buf hold at least need bytes, keeping the d->have bytes it holds.
 * @return false when out of memory */
static bool hold(ldmd_down *d, size_t need) {
  uint8_t *p;

  if (d->cap >= need)
    return true;
  if (d->have == 0) { /* nothing to keep: no copy */
    free(d->buf);
    d->buf = NULL;
    d->cap = 0;
    p = malloc(need);
  } else {
    p = realloc(d->buf, need);
  }
  if (p == NULL)
    return false;
  populate(p, need);
  d->buf = p;
  d->cap = need;
  return true;
}

bool ldmd_down_holding(const ldmd_down *d) {
  return d->pending && !d->dropped && !d->in_queue;
}

void *ldmd_down_room(ldmd_down *d, size_t want, uint64_t ready, size_t *n) {
  *n = want;
  if (!d->pending || d->dropped)
    return NULL;
  if (want > d->pinfo.size - d->have)
    *n = want = (size_t)(d->pinfo.size - d->have);
  /* Held in memory only while some of it may never come: a product whose
   * missing bytes are all in hand costs the queue only what a whole one
   * does (docs/security.md, "Announced products (COMINGSOON)"). */
  if (!d->in_queue && d->have < d->hold_max &&
      ready < d->pinfo.size - d->have) {
    uint64_t end = d->pinfo.size < d->hold_max ? d->pinfo.size : d->hold_max;

    if (hold(d, (size_t)end)) {
      if (want > end - d->have)
        *n = (size_t)(end - d->have);
      return d->buf + d->have;
    }
    log_warning("no memory for the %llu bytes of a product from %s: writing "
                "it into the queue as it comes",
                (unsigned long long)end, d->upstream);
  }
  if (!d->in_queue && !to_queue(d))
    return NULL;
  return (uint8_t *)d->resv.pr_data + d->have;
}

void ldmd_down_took(ldmd_down *d, size_t n) {
  if (d->pending)
    d->have += n;
}

/* What became of the pending product's data so far: LDMD_DOWN_EQUEUE if
 * the queue failed when it was given its room. */
static int so_far(const ldmd_down *d) {
  return d->failed ? LDMD_DOWN_EQUEUE : LDMD_DOWN_OK;
}

/* The pending product's last byte has come: into the queue with it. */
static int finish(ldmd_down *d, const char *what) {
  int rc;

  d->pending = false;
  if (d->dropped)
    return so_far(d);
  rc = d->in_queue ? pq_commit(d->pq, &d->resv)
                   : pq_insert(d->pq, &d->pinfo, d->buf);
  if (rc != PQ_OK && !d->in_queue)
    return refused(d, rc, &d->pinfo, what);
  if (rc != PQ_OK) {
    log_error("%s: cannot commit into %s: %s", what, pq_path(d->pq),
              pq_last_error(d->pq)->pe_msg);
    (void)pq_discard(d->pq, &d->resv);
    return LDMD_DOWN_EQUEUE;
  }
  inserted(d, &d->pinfo);
  return LDMD_DOWN_OK;
}

/* Check a BLKDATA against the pending product.  @return LDMD_DOWN_OK (and
 * *take: whether a product is pending) or LDMD_DOWN_EPROTO */
static int blkdata_check(ldmd_down *d, const ldm6_datapkt *pkt, bool *take) {
  *take = false;
  if (!d->pending) {
    log_warning("blkdata: no COMINGSOON pending: packet of %u bytes ignored",
                (unsigned)pkt->data_len);
    return LDMD_DOWN_OK;
  }
  if (memcmp(pkt->signature, d->pinfo.signature, PQ_SIGLEN) != 0) {
    discard_pending(d, "BLKDATA of another product");
    return LDMD_DOWN_EPROTO;
  }
  if (pkt->data_len > d->pinfo.size - d->have) {
    char why[128];

    snprintf(why, sizeof why,
             "a BLKDATA of %u bytes, past the size COMINGSOON announced",
             (unsigned)pkt->data_len);
    discard_pending(d, why);
    return LDMD_DOWN_EPROTO;
  }
  *take = true;
  return LDMD_DOWN_OK;
}

int ldmd_down_blkdata(ldmd_down *d, const ldm6_datapkt *pkt) {
  const uint8_t *src = pkt->data;
  size_t left = pkt->data_len;
  bool take;
  int rc = blkdata_check(d, pkt, &take);

  if (rc != LDMD_DOWN_OK || !take)
    return rc;
  while (left > 0) {
    size_t n;
    uint8_t *dst = ldmd_down_room(d, left, left, &n); /* all in hand */

    if (dst != NULL)
      memcpy(dst, src, n);
    ldmd_down_took(d, n);
    src += n;
    left -= n;
  }
  if (d->have < d->pinfo.size)
    return so_far(d);
  return finish(d, "blkdata");
}

int ldmd_down_hereis_begin(ldmd_down *d, const ldm6_prod_info *w, bool *take) {
  int rc;

  d->stream = STREAM_HEREIS;
  discard_pending(d, "a HEREIS arrived first");
  rc = admit(d, w, false, "hereis");
  *take = d->pending;
  return rc;
}

int ldmd_down_blkdata_begin(ldmd_down *d, const ldm6_datapkt *pkt, bool *take) {
  int rc = blkdata_check(d, pkt, take);

  d->stream = STREAM_BLKDATA;
  return rc;
}

int ldmd_down_stream_end(ldmd_down *d, bool ok) {
  int kind = d->stream;

  d->stream = STREAM_NONE;
  if (!d->pending || kind == STREAM_NONE)
    return LDMD_DOWN_OK;
  if (!ok) {
    discard_pending(d, "its data did not all arrive");
    return so_far(d);
  }
  if (d->have < d->pinfo.size) /* more BLKDATA to come */
    return so_far(d);
  return finish(d, kind == STREAM_HEREIS ? "hereis" : "blkdata");
}
