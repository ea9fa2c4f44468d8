/*
 * ingest_run.c - noaaportIngester's frames-to-queue work (ingest_run.h).
 *
 * Each source keeps the bytes not yet made into frames (at most one
 * partial frame, as the reader of sbn_frame.h leaves it, and what was just
 * read).  Without blending there is one source and its reader also does
 * gap detection, as LDM's ingester; with blending each source's reader
 * only finds frames, the blender orders them, and gap detection runs on
 * the blended stream (a reader of its own, fed np_sbn_gap()), so that the
 * statistics count what the products are made of.
 */
#include "pqutils/ingest/ingest_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/ingest/frame_blend.h"
#include "pqutils/ingest/ingest_insert.h"
#include "pqutils/ingest/ingest_stats.h"
#include "pqutils/ingest/sbn_frame.h"

/* The most bytes the blender holds: about 30 s of every SBN channel. */
#define BLEND_MAX_BYTES (400u << 20)

struct source {
  struct np_sbn sbn;
  uint8_t *buf; /* [0, len) not yet made into frames */
  size_t len, cap;
  const char *name;
};

struct ingest {
  struct np_log log;
  struct np_namer namer;
  struct np_sbn gaps; /* gap detection of the blended stream */
  struct np_build *build;
  struct np_blend *blend; /* NULL: no blending */
  struct np_inserter ins;
  struct source src[NP_MAX_SOURCES];
  size_t nsrc;
  uint64_t octets, fullfifo;
  struct np_stats last; /* at the previous report */
  double start, last_at;
  ldmm_ingester *fig; /* NULL: no live figures */
  ldmm_feed *feeds;
};

static struct np_stats current(const struct ingest *g);
static void publish(const struct ingest *g);

/* ---- the library's messages to the logger ---- */

static void to_logger(void *arg, int level, const char *msg) {
  (void)arg;
  if (ldm_log_enabled((enum ldm_log_level)level))
    ldm_log_write((enum ldm_log_level)level, "noaaportIngester.c", "ingest", 0,
                  "%s", msg);
}

/* The library's level follows the logger's (SIGUSR2 changes it). */
static void sync_level(struct np_log *lg) {
  lg->level = (int)ldm_log_get_level();
}

static void on_product(void *arg, const struct np_product *p) {
  struct ingest *g = arg;
  int rc = np_insert(&g->ins, p);
  ldmm_ingester_product(g->fig, g->feeds, p->feedtype, p->size, rc == PQ_OK,
                        rc == PQ_DUP      ? LDMM_DUPLICATE
                        : rc == PQ_LOCKED ? LDMM_NO_ROOM
                        : rc == PQ_BIG    ? LDMM_TOO_BIG
                                          : LDMM_INVALID);
}

struct ingest *ingest_new(const struct ingest_opts *o, pq_t *pq,
                          const char *origin) {
  struct ingest *g = calloc(1, sizeof *g);
  if (g == NULL) {
    log_error("Out of memory");
    return NULL;
  }
  g->log = (struct np_log){to_logger, NULL, NP_WARN};
  sync_level(&g->log);
  g->namer = (struct np_namer){.log = &g->log};
  g->ins = (struct np_inserter){.pq = pq, .origin = origin, .log = &g->log};
  g->fig = o->fig;
  g->feeds = o->feeds;
  g->nsrc = o->nsources > 0 ? o->nsources : 1;
  bool blend = o->wait_s >= 0;
  for (size_t i = 0; i < g->nsrc; i++) {
    np_sbn_init(&g->src[i].sbn, &g->log);
    g->src[i].sbn.no_gaps = blend;
    g->src[i].name = o->source_names[i] != NULL ? o->source_names[i] : "-";
  }
  np_sbn_init(&g->gaps, &g->log);
  g->build = np_build_new(&o->build, &g->namer, on_product, g);
  if (blend)
    g->blend = np_blend_new(o->wait_s, BLEND_MAX_BYTES, &g->log);
  if (g->build == NULL || (blend && g->blend == NULL)) {
    log_error("Out of memory");
    ingest_free(g);
    return NULL;
  }
  g->start = g->last_at = cli_monotonic();
  return g;
}

/* Room for n more bytes in a source's buffer. */
static bool reserve(struct source *s, size_t n) {
  if (s->cap - s->len >= n)
    return true;
  size_t cap = s->cap != 0 ? s->cap : 1u << 20;
  while (cap - s->len < n)
    cap *= 2;
  uint8_t *p = realloc(s->buf, cap);
  if (p == NULL) {
    log_error("Out of memory for %zu bytes of frames", cap);
    return false;
  }
  s->buf = p;
  s->cap = cap;
  return true;
}

/* Build what the blender releases (all it holds if flush). */
static void drain(struct ingest *g, bool flush) {
  double now = cli_monotonic();
  const struct np_frame *f;
  while ((f = np_blend_next(g->blend, now, flush)) != NULL) {
    np_sbn_gap(&g->gaps, f);
    np_build_frame(g->build, f);
  }
}

/* Make frames of what source s holds and move the rest to the front. */
static void frames_of(struct ingest *g, struct source *s, bool eof) {
  sync_level(&g->log);
  size_t pos = 0;
  struct np_frame f;
  while (np_sbn_next(&s->sbn, s->buf, s->len, &pos, &f, eof) == NP_SBN_FRAME) {
    if (g->blend == NULL) {
      np_build_frame(g->build, &f);
      continue;
    }
    (void)np_blend_put(g->blend, &f, s->name, cli_monotonic());
    drain(g, false); /* what is due, and what the byte bound forces */
  }
  memmove(s->buf, s->buf + pos, s->len - pos);
  s->len -= pos;
}

bool ingest_bytes(struct ingest *g, unsigned src, const uint8_t *p, size_t n) {
  struct source *s = &g->src[src < g->nsrc ? src : 0];
  if (!reserve(s, n))
    return false;
  memcpy(s->buf + s->len, p, n);
  s->len += n;
  g->octets += n;
  frames_of(g, s, false);
  ingest_tick(g);
  publish(g);
  return true;
}

void ingest_tick(struct ingest *g) {
  if (g->blend != NULL)
    drain(g, false);
  if (cli_stats_requested())
    ingest_report(g);
}

int ingest_due_ms(const struct ingest *g) {
  if (g->blend == NULL)
    return -1;
  double due = np_blend_due(g->blend);
  if (isinf(due) && due > 0)
    return -1;
  double ms = (due - cli_monotonic()) * 1000;
  return ms <= 0 ? 0 : ms > 60000 ? 60000 : (int)ceil(ms);
}

void ingest_end(struct ingest *g) {
  for (size_t i = 0; i < g->nsrc; i++)
    frames_of(g, &g->src[i], true);
  if (g->blend != NULL)
    drain(g, true);
  np_build_end(g->build);
  publish(g);
}

void ingest_set_fullfifo(struct ingest *g, uint64_t n) {
  g->fullfifo = n;
  publish(g);
}

/* The live figures follow the statistics: a few relaxed stores. */
static void publish(const struct ingest *g) {
  if (g->fig != NULL) {
    struct np_stats s = current(g);
    ldmm_ingester_counts(g->fig, s.frames, s.missed, s.octets, s.fullfifo);
  }
}

static struct np_stats current(const struct ingest *g) {
  struct np_stats s = {.octets = g->octets,
                       .fullfifo = g->fullfifo,
                       .products = g->ins.products};
  const struct np_sbn *c = g->blend != NULL ? &g->gaps : &g->src[0].sbn;
  s.frames = c->counts.frames;
  s.missed = c->counts.missed;
  return s;
}

void ingest_report(struct ingest *g) {
  enum ldm_log_level was = ldm_log_get_level();
  if (was > LDM_LOG_NOTICE)
    ldm_log_set_level(LDM_LOG_NOTICE);
  struct np_log lg = {to_logger, NULL, NP_NOTE};
  struct np_stats now = current(g);
  struct np_stats iv = np_stats_diff(&now, &g->last);
  double t = cli_monotonic();
  np_stats_log(&iv, t - g->last_at, &now, t - g->start, &lg);
  g->last = now;
  g->last_at = t;
  if (was > LDM_LOG_NOTICE)
    ldm_log_set_level(was);
}

void ingest_free(struct ingest *g) {
  if (g == NULL)
    return;
  for (size_t i = 0; i < g->nsrc; i++)
    free(g->src[i].buf);
  if (g->build != NULL)
    np_build_free(g->build);
  if (g->blend != NULL)
    np_blend_free(g->blend);
  free(g);
}
