/*
 * inflight.c - pq2nats's books of what is in flight: the ring of products,
 * the map of messages by address, the retries and the recovery after a
 * failure (the rules and the contract are
 * inflight.h's).  Pure bookkeeping: no libnats, no lock, no clock, no log.
 */
#include "pqutils/nats/inflight.h"

#include <stdlib.h>
#include <string.h>

int p2n_init(struct p2n_inflight *f, uint64_t maxpending, uint64_t max_bytes,
             int64_t (*backoff_ms)(unsigned n)) {
  memset(f, 0, sizeof *f);
  f->cap = maxpending;
  f->maxpending = maxpending;
  f->max_bytes = max_bytes;
  f->backoff_ms = backoff_ms;
  f->realloc_fn = realloc;
  size_t m = 16;
  while (m < 4 * maxpending + 64)
    m *= 2;
  f->map_mask = m - 1;
  f->ring = calloc(f->cap, sizeof *f->ring);
  f->map = calloc(m, sizeof *f->map);
  return f->ring != NULL && f->map != NULL ? 0 : -1;
}

void p2n_free(struct p2n_inflight *f) {
  free(f->retry);
  free(f->ring);
  free(f->map);
  f->retry = NULL;
  f->ring = NULL;
  f->map = NULL;
  f->nretry = f->retry_cap = 0;
}

void *p2n_drop(struct p2n_inflight *f) {
  while (f->pub_next < f->tail) {
    struct p2n_slot *s = &f->ring[f->pub_next++ % f->cap];
    void *m = s->prod;
    s->prod = NULL;
    if (m != NULL)
      return m;
  }
  return f->nretry > 0 ? f->retry[--f->nretry] : NULL;
}

/* ---- the map of messages in flight ---- */

static size_t hash_ptr(const void *p, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & mask;
}

static void map_put(struct p2n_inflight *f, void *m, uint64_t slot,
                    bool chunk) {
  size_t i = hash_ptr(m, f->map_mask);
  while (f->map[i].msg != NULL)
    i = (i + 1) & f->map_mask;
  f->map[i] = (struct p2n_entry){m, slot, chunk};
}

static struct p2n_entry *map_find(const struct p2n_inflight *f, const void *m) {
  for (size_t i = hash_ptr(m, f->map_mask); f->map[i].msg != NULL;
       i = (i + 1) & f->map_mask)
    if (f->map[i].msg == m)
      return &f->map[i];
  return NULL;
}

/* Remove e, moving back the entries after it that its place would hide. */
static void map_del(struct p2n_inflight *f, const struct p2n_entry *e) {
  size_t i = (size_t)(e - f->map), j = i;
  f->map[i].msg = NULL;
  for (;;) {
    j = (j + 1) & f->map_mask;
    if (f->map[j].msg == NULL)
      return;
    size_t k = hash_ptr(f->map[j].msg, f->map_mask);
    /* does k lie cyclically in (i, j]?  then the entry stays */
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
      continue;
    f->map[i] = f->map[j];
    f->map[j].msg = NULL;
    i = j;
  }
}

/* Make the map hold n messages at most half full (a probe then always
 * ends at a free entry): grown, its entries put in again.  It starts at
 * four times -m, which -m messages never fill; a product of more chunks
 * than that, which goes alone, grows it.  0, or -1 out of memory (the map
 * unchanged). */
static int map_fit(struct p2n_inflight *f, uint64_t n) {
  size_t m = f->map_mask + 1, want = m;
  while (want / 2 < n) {
    if (want > SIZE_MAX / 2 / sizeof *f->map)
      return -1;
    want *= 2;
  }
  if (want == m)
    return 0;
  struct p2n_entry *old = f->map,
                   *map = f->realloc_fn(NULL, want * sizeof *map);
  if (map == NULL)
    return -1;
  memset(map, 0, want * sizeof *map);
  f->map = map;
  f->map_mask = want - 1;
  for (size_t i = 0; i < m; i++)
    if (old[i].msg != NULL)
      map_put(f, old[i].msg, old[i].slot, old[i].chunk);
  free(old);
  return 0;
}

/* ---- products in, messages out ---- */

bool p2n_room(struct p2n_inflight *f, uint64_t nmsgs, uint64_t size) {
  bool room =
      !f->disrupted && !f->draining && f->tail - f->head < f->cap &&
      ((f->msgs + nmsgs <= f->maxpending && f->bytes + size <= f->max_bytes) ||
       f->msgs == 0);
  if (room && map_fit(f, f->msgs + nmsgs) != 0) {
    f->nomem = true;
    return false;
  }
  return room;
}

void *p2n_add(struct p2n_inflight *f, uint64_t tag, void *const *chunks,
              uint32_t nchunks, void *prod, uint64_t size) {
  uint64_t idx = f->tail++;
  struct p2n_slot *sl = &f->ring[idx % f->cap];
  *sl = (struct p2n_slot){.tag = tag, .prod = prod, .chunks = nchunks};
  for (uint32_t i = 0; i < nchunks; i++)
    map_put(f, chunks[i], idx, true);
  map_put(f, prod, idx, false);
  f->msgs += (uint64_t)nchunks + 1;
  f->bytes += size;
  if (nchunks > 0 || f->pub_next != idx)
    return NULL;
  sl->prod = NULL;
  f->pub_next++;
  return prod;
}

void *p2n_next_ready(struct p2n_inflight *f) {
  if (f->pub_next == f->tail)
    return NULL;
  struct p2n_slot *s = &f->ring[f->pub_next % f->cap];
  if (s->chunks > 0)
    return NULL;
  void *m = s->prod;
  s->prod = NULL;
  f->pub_next++;
  return m;
}

void p2n_sending(struct p2n_inflight *f) {
  f->unacked++;
}

/* ---- acknowledgments and failures ---- */

enum p2n_acked p2n_ack(struct p2n_inflight *f, const void *msg, uint64_t len,
                       uint64_t *tag) {
  struct p2n_entry *e = map_find(f, msg);
  if (e == NULL)
    return P2N_ACK_UNKNOWN;
  f->unacked--;
  struct p2n_slot *s = &f->ring[e->slot % f->cap];
  bool chunk = e->chunk;
  f->bytes -= len;
  map_del(f, e);
  f->fails = 0;
  f->msgs--;
  if (chunk) {
    s->chunks--;
    return P2N_ACK_CHUNK;
  }
  s->acked = true;
  *tag = s->tag;
  /* the oldest products whose publishes are all acknowledged leave */
  while (f->head < f->pub_next && f->ring[f->head % f->cap].acked) {
    f->head++;
  }
  return P2N_ACK_PRODUCT;
}

/* Room for one more message to hand out again.  false: out of memory,
 * nomem set. */
static bool retry_room(struct p2n_inflight *f) {
  if (f->nretry < f->retry_cap)
    return true;
  size_t cap = f->retry_cap ? f->retry_cap * 2 : 64;
  void **v = f->realloc_fn(f->retry, cap * sizeof *v);
  if (v == NULL) {
    f->nomem = true;
    return false;
  }
  f->retry = v;
  f->retry_cap = cap;
  return true;
}

int p2n_fail(struct p2n_inflight *f, void *msg, double now) {
  if (map_find(f, msg) == NULL)
    return 1;
  f->unacked--;
  if (!retry_room(f))
    return -1;
  f->retry[f->nretry++] = msg;
  f->disrupted = true;
  double wait = (double)f->backoff_ms(f->fails) / 1000;
  if (f->fails < 64)
    f->fails++;
  f->retry_at = now + wait;
  return 0;
}

/* ---- the recovery ---- */

enum p2n_recovery p2n_recover(struct p2n_inflight *f, bool up, double now) {
  if (!up)
    f->disrupted = true;
  if (!f->disrupted) {
    if (f->draining && f->unacked <= 0 && f->nretry == 0)
      f->draining = false;
    return f->draining ? P2N_WAIT : P2N_GO;
  }
  if (!up || now < f->retry_at)
    return P2N_WAIT;
  f->disrupted = false;
  f->draining = true;
  return P2N_TAKE_BACK;
}

int64_t p2n_unacked(const struct p2n_inflight *f) {
  return f->unacked;
}

int p2n_take_back(struct p2n_inflight *f, void *msg) {
  f->unacked--;
  if (!retry_room(f))
    return -1;
  f->retry[f->nretry++] = msg;
  return 0;
}

/* A message to hand out again, with its place in the queue's order: its
 * product's, the chunks before the product message. */
struct again {
  uint64_t key;
  void *msg;
};

static int again_cmp(const void *a, const void *b) {
  uint64_t x = ((const struct again *)a)->key,
           y = ((const struct again *)b)->key;
  return x < y ? -1 : x > y;
}

void **p2n_resend_list(struct p2n_inflight *f, size_t *n) {
  size_t k = f->nretry;
  *n = 0;
  if (k == 0)
    return NULL;
  struct again *order = f->realloc_fn(NULL, k * sizeof *order);
  if (order == NULL) {
    f->nomem = true;
    return NULL;
  }
  for (size_t i = 0; i < k; i++) {
    const struct p2n_entry *e = map_find(f, f->retry[i]);
    order[i].key = e != NULL ? e->slot * 2 + (e->chunk ? 0 : 1) : 0;
    order[i].msg = f->retry[i];
  }
  qsort(order, k, sizeof *order, again_cmp);
  /* the retry array, sorted, becomes the caller's */
  void **v = f->retry;
  for (size_t i = 0; i < k; i++)
    v[i] = order[i].msg;
  free(order);
  f->retry = NULL;
  f->nretry = f->retry_cap = 0;
  f->nretried += k;
  *n = k;
  return v;
}

bool p2n_idle(const struct p2n_inflight *f) {
  return f->msgs == 0 && f->nretry == 0;
}
