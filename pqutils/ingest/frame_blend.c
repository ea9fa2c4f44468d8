/*
 * frame_blend.c - the blender (frame_blend.h): owns the frames held between
 * the receivers and reassembly, their order (uplinks, circular sequence
 * numbers made into one total order), their release times, the duplicate
 * check against held and recently released frames, and the byte bound.
 * The rules are LDM's blender's (docs/noaaport.md, section 8), adapted as
 * frame_blend.h says; this file says why at each place it departs.
 */
#include "pqutils/ingest/frame_blend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The order key of a frame.  LDM's blender sorts x before y when (a) same
 * uplink and x has an earlier product sequence, or the same one and an
 * earlier block; (b) x has an earlier uplink; (c) same uplink, x has a
 * later FH sequence and an earlier product sequence (docs/noaaport.md,
 * section 8).  Case (c) is contained in case (a), so the order is
 * lexicographic on (uplink, product sequence, block) and the FH sequence
 * never decides it.  Circular comparison alone is not transitive (three
 * sequence numbers 2^31 apart form a cycle), so each product sequence is
 * unwrapped once, at put time, into 64 bits against the latest-ordered
 * frame queued on its uplink (`useq`): among frames within 2^31 of each
 * other it agrees with the circular rule, and being fixed for as long as
 * the frame is held it is a strict total order a heap can rely on.  What
 * case (c) describes, a product sequence that goes back while the FH
 * sequence goes on (a new data server at the NCF), becomes a new uplink
 * (order_key()), ordered after every frame before it.  Uplink ids are
 * 64-bit counters that never wrap.
 */
struct okey {
  uint64_t uplink, useq;
  uint16_t block;
};

/* A held frame, its raw bytes after it. */
struct node {
  struct np_frame f;
  struct okey k;
  uint64_t arrival; /* the order when wait_s is 0 */
  uint64_t dupkey;
  double release;
  size_t bytes;
  struct node *hnext; /* chain of the held-key hash */
  uint8_t raw[];
};

/* One FH source byte's current uplink. */
struct uplink {
  bool valid, has_max;
  uint64_t id;
  /* the latest-ordered frame queued on it: the unwrapping reference */
  uint32_t max_seq, max_fh;
  uint64_t max_useq;
  uint16_t max_block;
};

/* The keys of the last NP_BLEND_RECENT frames released: a ring, hashed. */
#define RECENT_BUCKETS (2 * NP_BLEND_RECENT)
struct recent {
  uint64_t key[NP_BLEND_RECENT];
  int32_t next[NP_BLEND_RECENT];
  int32_t bucket[RECENT_BUCKETS];
  uint32_t head, count;
};

struct np_blend {
  double wait;
  size_t max_bytes, bytes;
  const struct np_log *log;
  struct node **heap; /* binary min-heap on the order */
  size_t n, cap;
  struct node **hb; /* held keys: chained hash, power-of-two buckets */
  size_t nhb;
  struct recent recent;
  struct uplink up[256];
  uint64_t next_uplink, arrivals;
  bool released;    /* a frame has been released */
  struct okey last; /* the last frame released */
  unsigned stuck;   /* late frames in a row */
  struct node *out; /* returned by np_blend_next(), freed on the next call */
  struct np_blend_counts c;
};

#define USEQ_BASE ((uint64_t)1 << 62)

/* a - b in [-2^31, 2^31): a is before b when negative (section 8). */
static int64_t circ(uint32_t a, uint32_t b) {
  uint32_t d = a - b;
  return d > INT32_MAX ? (int64_t)d - ((int64_t)1 << 32) : (int64_t)d;
}

static size_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (size_t)x;
}

/*
 * Twins are told by the FH source byte instead of the uplink id: a second
 * receiver's copy arriving after an uplink was reopened must still be
 * found.  The FH sequence does not count, as in LDM (section 8).
 */
static uint64_t dup_key(const struct np_frame *f) {
  return (uint64_t)f->source << 48 | (uint64_t)f->block << 32 | f->prod_seq;
}

static int okey_cmp(const struct okey *a, const struct okey *b) {
  if (a->uplink != b->uplink)
    return a->uplink < b->uplink ? -1 : 1;
  if (a->useq != b->useq)
    return a->useq < b->useq ? -1 : 1;
  return (a->block > b->block) - (a->block < b->block);
}

static bool before(const struct np_blend *b, const struct node *x,
                   const struct node *y) {
  if (b->wait <= 0)
    return x->arrival < y->arrival;
  return okey_cmp(&x->k, &y->k) < 0;
}

/* ---- the heap ---- */

static bool heap_reserve(struct np_blend *b) {
  if (b->n < b->cap)
    return true;
  size_t cap = b->cap ? 2 * b->cap : 64;
  struct node **h = realloc(b->heap, cap * sizeof *h);
  if (h == NULL)
    return false;
  b->heap = h;
  b->cap = cap;
  return true;
}

static void heap_push(struct np_blend *b, struct node *x) {
  size_t i = b->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!before(b, x, b->heap[p]))
      break;
    b->heap[i] = b->heap[p];
    i = p;
  }
  b->heap[i] = x;
}

static struct node *heap_pop(struct np_blend *b) {
  struct node *top = b->heap[0];
  struct node *x = b->heap[--b->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= b->n)
      break;
    if (c + 1 < b->n && before(b, b->heap[c + 1], b->heap[c]))
      c++;
    if (!before(b, b->heap[c], x))
      break;
    b->heap[i] = b->heap[c];
    i = c;
  }
  if (b->n > 0)
    b->heap[i] = x;
  return top;
}

/* ---- the held keys ---- */

static bool held_find(const struct np_blend *b, uint64_t key) {
  for (const struct node *x = b->hb[mix(key) & (b->nhb - 1)]; x; x = x->hnext)
    if (x->dupkey == key)
      return true;
  return false;
}

/* Double the buckets when the chains grow long; on no memory keep them. */
static void held_grow(struct np_blend *b) {
  if (b->n <= b->nhb)
    return;
  size_t nhb = 2 * b->nhb;
  struct node **hb = calloc(nhb, sizeof *hb);
  if (hb == NULL)
    return;
  for (size_t i = 0; i < b->nhb; i++) {
    struct node *x = b->hb[i];
    while (x) {
      struct node *next = x->hnext;
      size_t h = mix(x->dupkey) & (nhb - 1);
      x->hnext = hb[h];
      hb[h] = x;
      x = next;
    }
  }
  free(b->hb);
  b->hb = hb;
  b->nhb = nhb;
}

static void held_add(struct np_blend *b, struct node *x) {
  size_t h = mix(x->dupkey) & (b->nhb - 1);
  x->hnext = b->hb[h];
  b->hb[h] = x;
  held_grow(b);
}

static void held_remove(struct np_blend *b, const struct node *x) {
  struct node **p = &b->hb[mix(x->dupkey) & (b->nhb - 1)];
  while (*p && *p != x)
    p = &(*p)->hnext;
  if (*p)
    *p = x->hnext;
}

/* ---- the recently released keys ---- */

static void recent_init(struct recent *r) {
  for (size_t i = 0; i < RECENT_BUCKETS; i++)
    r->bucket[i] = -1;
  r->head = r->count = 0;
}

static bool recent_find(const struct recent *r, uint64_t key) {
  for (int32_t i = r->bucket[mix(key) % RECENT_BUCKETS]; i >= 0; i = r->next[i])
    if (r->key[i] == key)
      return true;
  return false;
}

static void recent_add(struct recent *r, uint64_t key) {
  int32_t slot = (int32_t)r->head;
  if (r->count == NP_BLEND_RECENT) { /* forget the oldest */
    int32_t *p = &r->bucket[mix(r->key[slot]) % RECENT_BUCKETS];
    while (*p >= 0 && *p != slot)
      p = &r->next[*p];
    if (*p == slot)
      *p = r->next[slot];
  } else {
    r->count++;
  }
  size_t h = mix(key) % RECENT_BUCKETS;
  r->key[slot] = key;
  r->next[slot] = r->bucket[h];
  r->bucket[h] = slot;
  r->head = (r->head + 1) % NP_BLEND_RECENT;
}

/* ---- uplinks and the order ---- */

static void uplink_open(struct np_blend *b, struct uplink *u) {
  u->valid = true;
  u->has_max = false;
  u->id = b->next_uplink++;
}

/*
 * The uplink of a frame with this source byte.  LDM counts a new uplink
 * each time the byte differs from the frame's before, from any receiver
 * (section 8).  Two receivers carry the same byte, so interleaving them
 * changes nothing; but during an NCF switch one receiver can be on the new
 * byte while the other still delivers the old, and one receiver's
 * reordered datagrams can do the same: LDM would then count a switch at
 * every alternation and order the old uplink's last frames after the new
 * one's first.  So a byte keeps its uplink for as long as none of a later
 * uplink has been released: that holds every straggler of the old byte in
 * its place, and a byte seen again after the new uplink's frames went out
 * (a switch back, days later in practice) opens a new uplink as in LDM.
 */
static struct uplink *uplink_of(struct np_blend *b, uint8_t byte) {
  struct uplink *u = &b->up[byte];
  if (!u->valid || (b->released && u->id < b->last.uplink))
    uplink_open(b, u);
  return u;
}

/* The order key of a data frame on uplink u (struct okey above). */
static void order_key(struct np_blend *b, struct uplink *u,
                      const struct np_frame *f, struct okey *k) {
  k->block = f->block;
  if (u->has_max) {
    int64_t d = circ(f->prod_seq, u->max_seq);
    if (d >= 0 || circ(f->fh_seq, u->max_fh) <= 0) {
      k->uplink = u->id;
      k->useq = u->max_useq + (uint64_t)d;
      return;
    }
    np_log(b->log, NP_NOTE,
           "Product sequence went back from %u to %u as the frame sequence "
           "went on from %u to %u: new data server; ordered after the frames "
           "before",
           u->max_seq, f->prod_seq, u->max_fh, f->fh_seq);
    uplink_open(b, u);
  }
  k->uplink = u->id;
  k->useq = USEQ_BASE;
}

/* The latest-ordered frame queued on u becomes the unwrapping reference. */
static void uplink_note(struct uplink *u, const struct np_frame *f,
                        const struct okey *k) {
  if (u->has_max && (k->useq < u->max_useq ||
                     (k->useq == u->max_useq && k->block <= u->max_block)))
    return;
  u->has_max = true;
  u->max_seq = f->prod_seq;
  u->max_fh = f->fh_seq;
  u->max_useq = k->useq;
  u->max_block = k->block;
}

/* ---- put ---- */

/* Whether f's bytes hold: raw present and bounded, data within raw. */
static bool frame_ok(const struct np_frame *f, size_t *data_off) {
  if (f == NULL || f->raw == NULL || f->raw_len == 0 ||
      f->raw_len > NP_FRAME_MAX)
    return false;
  *data_off = 0;
  if (f->data == NULL) /* no data, or none to use: the builder logs why */
    return f->data_len == 0 || f->psh_bad || f->truncated;
  uintptr_t raw = (uintptr_t)f->raw, data = (uintptr_t)f->data;
  if (data < raw || data - raw > f->raw_len)
    return false;
  *data_off = data - raw;
  return f->data_len <= f->raw_len - *data_off;
}

static int ignore(const struct np_blend *b, const struct np_frame *f) {
  if (f->command != NP_CMD_TIMESYNC && f->command != NP_CMD_TEST)
    np_log(b->log, NP_NOTE, "Ignoring frame with command=%u",
           (unsigned)f->command);
  return NP_BLEND_IGNORED;
}

static int queue(struct np_blend *b, const struct np_frame *f, size_t off,
                 const struct okey *k, double now) {
  struct node *x = malloc(sizeof *x + f->raw_len);
  if (x == NULL || !heap_reserve(b)) {
    free(x);
    np_log(b->log, NP_ERROR, "Couldn't add new frame to buffer: %s",
           "out of memory");
    return -1;
  }
  memcpy(x->raw, f->raw, f->raw_len);
  x->f = *f;
  x->f.raw = x->raw;
  x->f.data = f->data ? x->raw + off : NULL;
  x->k = *k;
  x->arrival = b->arrivals++;
  x->dupkey = dup_key(f);
  x->release = now + b->wait;
  x->bytes = f->raw_len + NP_BLEND_OVERHEAD;
  heap_push(b, x);
  held_add(b, x);
  b->bytes += x->bytes;
  if (b->bytes > b->c.hiwater_bytes)
    b->c.hiwater_bytes = b->bytes;
  b->stuck = 0;
  return NP_BLEND_QUEUED;
}

/*
 * Whether a frame ordered at k is late.  A frame is late when it orders
 * at or before the last one released (section 8); with wait_s 0 nothing
 * is.  After NP_BLEND_STUCK late frames in a row, with none queued
 * between, the stream itself has moved behind what was released (a
 * corrupt frame far ahead went out, or the sequence numbers were reset
 * without the FH sequence going on): LDM would refuse every frame from
 * then on; we take the frame as the first of a new uplink instead.
 */
static bool late(struct np_blend *b, struct uplink *u, struct okey *k,
                 const char *who) {
  if (b->wait <= 0 || !b->released || okey_cmp(k, &b->last) > 0)
    return false;
  if (++b->stuck < NP_BLEND_STUCK) {
    b->c.late++;
    np_log(b->log, NP_WARN,
           "Frame from %s arrived too late to be included. Increase time "
           "window?",
           who);
    return true;
  }
  np_log(b->log, NP_NOTE,
         "%u frames in a row ordered before the last one released: "
         "ordering afresh from the frame from %s",
         (unsigned)NP_BLEND_STUCK, who);
  uplink_open(b, u);
  k->uplink = u->id;
  k->useq = USEQ_BASE;
  return false;
}

int np_blend_put(struct np_blend *b, const struct np_frame *f, const char *src,
                 double now) {
  if (b == NULL)
    return -1;
  b->c.put++;
  const char *who = src ? src : "?";
  size_t off;
  if (!frame_ok(f, &off)) {
    np_log(b->log, NP_ERROR, "Frame from %s not taken: its lengths do not hold",
           who);
    return -1;
  }
  if (f->command != NP_CMD_DATA)
    return ignore(b, f);
  uint64_t dk = dup_key(f);
  if (held_find(b, dk) || recent_find(&b->recent, dk)) {
    b->c.dups++;
    np_log(b->log, NP_DEBUG, "Frame from %s is a duplicate", who);
    return NP_BLEND_DUP;
  }
  struct uplink *u = uplink_of(b, f->source);
  struct okey k;
  order_key(b, u, f, &k);
  if (late(b, u, &k, who))
    return NP_BLEND_LATE;
  int status = queue(b, f, off, &k, now);
  if (status == NP_BLEND_QUEUED)
    uplink_note(u, f, &k);
  return status;
}

/* ---- release ---- */

const struct np_frame *np_blend_next(struct np_blend *b, double now,
                                     bool flush) {
  if (b == NULL)
    return NULL;
  free(b->out);
  b->out = NULL;
  if (b->n == 0)
    return NULL;
  struct node *top = b->heap[0];
  bool early = now < top->release;
  if (early && !flush) {
    if (b->bytes <= b->max_bytes)
      return NULL;
    b->c.forced++;
  }
  heap_pop(b);
  held_remove(b, top);
  b->bytes -= top->bytes;
  recent_add(&b->recent, top->dupkey);
  b->released = true;
  b->last = top->k;
  b->out = top;
  return &top->f;
}

double np_blend_due(const struct np_blend *b) {
  if (b == NULL || b->n == 0)
    return INFINITY;
  if (b->bytes > b->max_bytes)
    return -INFINITY;
  return b->heap[0]->release;
}

/* ---- life ---- */

struct np_blend *np_blend_new(double wait_s, size_t max_bytes,
                              const struct np_log *lg) {
  struct np_blend *b = calloc(1, sizeof *b);
  if (b == NULL)
    return NULL;
  b->nhb = 64;
  b->hb = calloc(b->nhb, sizeof *b->hb);
  if (b->hb == NULL) {
    free(b);
    return NULL;
  }
  b->wait = wait_s > 0 ? wait_s : 0; /* NaN and negatives: 0 */
  b->max_bytes = max_bytes;
  b->log = lg;
  recent_init(&b->recent);
  return b;
}

void np_blend_counts(const struct np_blend *b, struct np_blend_counts *c) {
  if (b == NULL) {
    memset(c, 0, sizeof *c);
    return;
  }
  *c = b->c;
  c->held = b->n;
}

void np_blend_free(struct np_blend *b) {
  if (b == NULL)
    return;
  free(b->out);
  for (size_t i = 0; i < b->n; i++)
    free(b->heap[i]);
  free(b->heap);
  free(b->hb);
  free(b);
}
