/*
 * pqmon_view.c - the text of one frame of pqmon's live view
 * (pqmon_view.h): the lines of the queue, of ldmd, of its feeds and of its
 * connections, each cut to the width, then cut to the height.  Rates and
 * latencies are over the interval between the previous snapshot and this
 * one, of the same server (same pid and start time); a connection is the
 * same one in both when its slot, pid and start time are.  Text from the
 * figures (peers, classes, the queue's path) is shown with every byte that
 * is not printable ASCII as '?', so that it cannot drive the terminal.
 */
#include "pqutils/queue/pqmon_view.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PER_S 1e6 /* microseconds a second */

/* The lines of a frame, each cut to the width. */
typedef struct lines {
  char **v;
  size_t n, cap;
  int width;
  bool failed;
} lines;

static void add(lines *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(lines *l, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  size_t len;

  if (l->failed)
    return;
  if (l->n == l->cap) {
    size_t cap = l->cap == 0 ? 64 : 2 * l->cap;
    char **v = realloc(l->v, cap * sizeof *v);

    if (v == NULL) {
      l->failed = true;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  len = strlen(buf);
  if (len > (size_t)l->width)
    len = (size_t)l->width;
  while (len > 0 && buf[len - 1] == ' ')
    len--; /* padding at the end, and where the cut fell */
  buf[len] = '\0';
  l->v[l->n] = strdup(buf);
  if (l->v[l->n] == NULL)
    l->failed = true;
  else
    l->n++;
}

/* text over as many lines as the width takes, each after indent spaces. */
static void add_wrapped(lines *l, int indent, const char *text) {
  int room = l->width - indent > 10 ? l->width - indent : 10;
  size_t len = strlen(text), at = 0;

  while (at < len) {
    int n = len - at > (size_t)room ? room : (int)(len - at);

    add(l, "%*s%.*s", indent, "", n, text + at);
    at += (size_t)n;
  }
}

static void lines_free(lines *l) {
  size_t i;

  for (i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
}

/* s with every byte that is not printable ASCII as '?', cut to len - 1. */
static const char *printable(const char *s, char *buf, size_t len) {
  size_t i;

  for (i = 0; s[i] != '\0' && i + 1 < len; i++)
    buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
  buf[i] = '\0';
  return buf;
}

/* ---------------------------------------------------------------------- */
/* Numbers                                                                */
/* ---------------------------------------------------------------------- */

/* A count or a rate with k, M, G (powers of 1000); "-" when v < 0. */
static const char *human(double v, char *buf, size_t len) {
  static const char suffix[] = " kMGTP";
  unsigned i = 0;

  if (v < 0 || v != v) {
    snprintf(buf, len, "-");
    return buf;
  }
  while (v >= 999.95 && i < sizeof suffix - 2) {
    v /= 1000;
    i++;
  }
  if (i == 0)
    snprintf(buf, len, "%.1f", v);
  else
    snprintf(buf, len, "%.1f%c", v, suffix[i]);
  return buf;
}

/* A duration: "0.42s", "12.5s", "3m07s", "2h05m", "3d04h"; "-" when
 * s < 0, ">1h" (the last bound) when infinite. */
static const char *duration(double s, char *buf, size_t len) {
  long t;

  if (s < 0 || s != s)
    snprintf(buf, len, "-");
  else if (isinf(s))
    snprintf(buf, len, ">1h");
  else if (s < 10)
    snprintf(buf, len, "%.2fs", s);
  else if (s < 60)
    snprintf(buf, len, "%.1fs", s);
  else if ((t = (long)s) < 3600)
    snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
  else if (t < 86400)
    snprintf(buf, len, "%ldh%02ldm", t / 3600, t % 3600 / 60);
  else
    snprintf(buf, len, "%ldd%02ldh", t / 86400, t % 86400 / 3600);
  return buf;
}

static double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0 : 100.0 * (double)part / (double)whole;
}

static uint64_t minus(uint64_t now, uint64_t then) {
  return now > then ? now - then : 0;
}

double pqmon_view_quantile(const uint64_t *counts, const uint64_t *bounds_us,
                           double q) {
  uint64_t total = 0, below = 0;
  double rank;
  unsigned i;

  for (i = 0; i < LDMM_NBUCKETS; i++)
    total += counts[i];
  if (total == 0)
    return -1;
  rank = q * (double)total;
  for (i = 0; i < LDMM_NBUCKETS; i++) {
    if (counts[i] > 0 && (double)(below + counts[i]) >= rank)
      break;
    below += counts[i];
  }
  if (i >= LDMM_NBUCKETS - 1)
    return INFINITY;
  {
    double lo = i == 0 ? 0 : (double)bounds_us[i - 1] / PER_S;
    double hi = (double)bounds_us[i] / PER_S;

    return lo + (hi - lo) * (rank - (double)below) / (double)counts[i];
  }
}

/* The latency over the interval: the mean, p50 and p95 of the buckets
 * now - prev (prev NULL: no interval, every figure "-"). */
typedef struct latency {
  double mean, p50, p95;
} latency;

static latency interval_latency(const ldmm_hist_copy *now,
                                const ldmm_hist_copy *prev,
                                const uint64_t *bounds_us) {
  latency l = {-1, -1, -1};
  uint64_t d[LDMM_NBUCKETS], count = 0;
  unsigned i;

  if (prev == NULL)
    return l;
  for (i = 0; i < LDMM_NBUCKETS; i++) {
    d[i] = minus(now->bucket[i], prev->bucket[i]);
    count += d[i];
  }
  if (count == 0)
    return l;
  l.mean = (double)minus(now->sum_us, prev->sum_us) / PER_S / (double)count;
  l.p50 = pqmon_view_quantile(d, bounds_us, 0.50);
  l.p95 = pqmon_view_quantile(d, bounds_us, 0.95);
  return l;
}

static double rate(uint64_t now, uint64_t then, double dt) {
  return dt > 0 ? (double)minus(now, then) / dt : -1;
}

static uint64_t refused_sum(const uint64_t *refused) {
  uint64_t n = 0;
  unsigned k;

  for (k = 0; k < LDMM_NCAUSES; k++)
    n += refused[k];
  return n;
}

/* ---------------------------------------------------------------------- */
/* The parts of the frame                                                 */
/* ---------------------------------------------------------------------- */

static void queue_part(lines *l, const ldmm_queue *q, const char *why) {
  const pq_stats *st = &q->st;
  char b1[32], b2[32], b3[32];

  if (!q->ok) {
    add(l, "queue: its statistics could not be read: %s",
        why != NULL ? why : "unknown error");
    return;
  }
  add(l,
      "queue: %llu products (%llu being written), bytes %.1f%% of %sB, "
      "slots %.1f%% of %llu",
      (unsigned long long)st->ps_nprods, (unsigned long long)st->ps_nreserved,
      percent(st->ps_nbytes, st->ps_data_size),
      human((double)st->ps_data_size, b1, sizeof b1),
      percent(st->ps_slots - st->ps_nempty, st->ps_slots),
      (unsigned long long)st->ps_slots);
  if (q->held_ok)
    snprintf(b3, sizeof b3, "%llu", (unsigned long long)q->held);
  else
    snprintf(b3, sizeof b3, "-");
  add(l, "       oldest %s, mvrt %s, evictions %llu, held %s",
      duration(st->ps_nprods == 0 ? -1 : st->ps_age_oldest, b1, sizeof b1),
      duration(st->ps_mvrt_us < 0 ? -1 : (double)st->ps_mvrt_us / PER_S, b2,
               sizeof b2),
      (unsigned long long)st->ps_evicted, b3);
}

typedef struct feed_row {
  char name[32];
  const ldmm_feed_copy *now, *prev;
  double rate;
} feed_row;

typedef struct conn_row {
  const ldmm_conn_copy *now, *prev;
  double rate;
} conn_row;

/* Most products per second first; without rates, most products; then by
 * name. */
static int by_rate(double ra, double rb, uint64_t pa, uint64_t pb) {
  if (ra != rb)
    return ra > rb ? -1 : 1;
  if (pa != pb)
    return pa > pb ? -1 : 1;
  return 0;
}

static int feed_cmp(const void *a, const void *b) {
  const feed_row *x = a, *y = b;
  int c = by_rate(x->rate, y->rate, x->now->products, y->now->products);

  return c != 0 ? c : strcmp(x->name, y->name);
}

static int conn_cmp(const void *a, const void *b) {
  const conn_row *x = a, *y = b;
  int c = by_rate(x->rate, y->rate, x->now->products, y->now->products);

  if (c != 0)
    return c;
  if (x->now->kind != y->now->kind)
    return x->now->kind < y->now->kind ? -1 : 1;
  return x->now->pid < y->now->pid ? -1 : x->now->pid > y->now->pid;
}

static bool feed_seen(const ldmm_feed_copy *f) {
  return f->products > 0 || refused_sum(f->refused) > 0;
}

static void feeds_part(lines *l, const pqmon_view *v, const ldmm_snapshot *p) {
  const ldmm_snapshot *s = v->now;
  feed_row rows[LDMM_NFEEDS];
  size_t n = 0, i;

  for (i = 0; i < LDMM_NFEEDS; i++) {
    feed_row *r = &rows[n];

    if (!feed_seen(&s->feeds[i]))
      continue;
    ldmm_feed_name((unsigned)i, r->name, sizeof r->name);
    r->now = &s->feeds[i];
    r->prev = p != NULL ? &p->feeds[i] : NULL;
    r->rate = p != NULL ? rate(r->now->products, r->prev->products, v->dt) : -1;
    n++;
  }
  qsort(rows, n, sizeof rows[0], feed_cmp);
  add(l, "%-10s %10s %8s %8s %7s %7s %7s %7s", "FEED", "PRODUCTS", "PROD/S",
      "BYTES/S", "LATENCY", "P50", "P95", "REFUSED");
  if (n == 0)
    add(l, "  (no product received yet)");
  for (i = 0; i < n; i++) {
    const feed_row *r = &rows[i];
    latency lat = interval_latency(
        &r->now->latency, r->prev ? &r->prev->latency : NULL, s->bounds_us);
    char b1[32], b2[32], b3[32], b4[32], b5[32];

    add(l, "%-10s %10llu %8s %8s %7s %7s %7s %7llu", r->name,
        (unsigned long long)r->now->products, human(r->rate, b1, sizeof b1),
        human(r->prev ? rate(r->now->bytes, r->prev->bytes, v->dt) : -1, b2,
              sizeof b2),
        duration(lat.mean, b3, sizeof b3), duration(lat.p50, b4, sizeof b4),
        duration(lat.p95, b5, sizeof b5),
        (unsigned long long)refused_sum(r->now->refused));
  }
}

/* The same connection in the previous snapshot, or NULL. */
static const ldmm_conn_copy *conn_before(const ldmm_snapshot *p,
                                         const ldmm_conn_copy *c) {
  size_t i;

  if (p == NULL)
    return NULL;
  for (i = 0; i < p->nconns; i++)
    if (p->conns[i].index == c->index && p->conns[i].pid == c->pid &&
        p->conns[i].start_us == c->start_us)
      return &p->conns[i];
  return NULL;
}

static void conns_part(lines *l, const pqmon_view *v, const ldmm_snapshot *p) {
  const ldmm_snapshot *s = v->now;
  conn_row *rows = s->nconns > 0 ? calloc(s->nconns, sizeof *rows) : NULL;
  int longest = 4, room = l->width - 51 - 9, peer_w;
  size_t i;

  if (s->nconns > 0 && rows == NULL) {
    l->failed = true;
    return;
  }
  for (i = 0; i < s->nconns; i++) {
    conn_row *r = &rows[i];
    int len = (int)strlen(s->conns[i].peer);

    r->now = &s->conns[i];
    r->prev = conn_before(p, r->now);
    r->rate =
        r->prev != NULL ? rate(r->now->products, r->prev->products, v->dt) : -1;
    if (len > longest)
      longest = len;
  }
  /* The peer as long as the longest, but leaving 8 columns to the class:
   * at 80 columns 20 characters ("127.0.0.1 port 38800"). */
  peer_w = longest < room ? longest : room;
  if (peer_w < 12)
    peer_w = 12;
  if (peer_w > 40)
    peer_w = 40;
  if (s->nconns > 0) /* rows is NULL without any */
    qsort(rows, s->nconns, sizeof rows[0], conn_cmp);
  add(l, "%-10s %7s %8s %7s %5s %7s %-*s %s", "KIND", "PID", "PROD/S", "LAG",
      "RECON", "REFUSED", peer_w, "PEER", "FEED");
  if (s->nconns == 0)
    add(l, "  (no connection)");
  for (i = 0; i < s->nconns; i++) {
    const ldmm_conn_copy *c = rows[i].now;
    bool receiver = ldmm_kind_receives(c->kind);
    char b1[32], b2[32], recon[24], refused[24];
    char peer[LDMM_PEER_MAX], feed[LDMM_FEED_MAX];

    if (c->kind == LDMM_KIND_REQUESTER)
      snprintf(recon, sizeof recon, "%llu",
               (unsigned long long)c->reconnections);
    else
      snprintf(recon, sizeof recon, "-");
    if (receiver)
      snprintf(refused, sizeof refused, "%llu",
               (unsigned long long)refused_sum(c->refused));
    else
      snprintf(refused, sizeof refused, "-");
    add(l, "%-10s %7ld %8s %7s %5s %7s %-*.*s %s", ldmm_kind_name(c->kind),
        (long)c->pid, human(rows[i].rate, b1, sizeof b1),
        duration(ldmm_lag_seconds(c, v->queue), b2, sizeof b2), recon, refused,
        peer_w, peer_w, printable(c->peer, peer, sizeof peer),
        printable(c->feed, feed, sizeof feed));
  }
  free(rows);
}

/* Is p a snapshot of the same server as s, taken before it? */
static bool same_server(const ldmm_snapshot *s, const ldmm_snapshot *p) {
  return p != NULL && p->pid == s->pid && p->start_us == s->start_us;
}

static void ldmd_part(lines *l, const pqmon_view *v) {
  const ldmm_snapshot *s = v->now;
  const ldmm_snapshot *p =
      same_server(s, v->prev) && v->dt > 0 ? v->prev : NULL;
  char b1[32], ver[32], untracked[48] = "";

  if (s->no_slot > 0)
    snprintf(untracked, sizeof untracked, ", %llu untracked",
             (unsigned long long)s->no_slot);
  add(l, "ldmd: pid %ld, up %s, version %s, connections %zu%s", (long)s->pid,
      duration(v->wall - (double)s->start_us / PER_S, b1, sizeof b1),
      printable(s->version, ver, sizeof ver), s->nconns, untracked);
  add(l, "%s", "");
  feeds_part(l, v, p);
  add(l, "%s", "");
  conns_part(l, v, p);
}

char *pqmon_view_render(const pqmon_view *v) {
  lines l = {.width = v->width < 10 ? 10 : v->width};
  size_t height = v->height < 3 ? 3 : (size_t)v->height, shown, i, len = 0;
  char when[32], path[LDMM_PATH_MAX], *text;
  time_t wall = (time_t)v->wall;
  struct tm tm;

  if (gmtime_r(&wall, &tm) == NULL ||
      strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
    snprintf(when, sizeof when, "?");
  add(&l, "pqmon -L  %s UTC  every %gs  %s", when, v->interval,
      printable(v->queue_path, path, sizeof path));
  queue_part(&l, v->queue, v->queue_why);
  if (v->now != NULL)
    ldmd_part(&l, v);
  else {
    char why[2 * LDMM_PATH_MAX + 512];

    add(&l, "ldmd: its figures are not there:");
    add_wrapped(&l, 2,
                printable(v->why_none != NULL ? v->why_none : "no metrics file",
                          why, sizeof why));
  }
  if (l.failed) {
    lines_free(&l);
    return NULL;
  }
  shown = l.n <= height ? l.n : height - 1;
  for (i = 0; i < shown; i++)
    len += strlen(l.v[i]) + 1;
  len += 80;
  text = malloc(len);
  if (text != NULL) {
    char *at = text;

    for (i = 0; i < shown; i++)
      at += sprintf(at, "%s\n", l.v[i]);
    if (shown < l.n) {
      char more[80];

      snprintf(more, sizeof more, "(%zu more lines: the screen is too small)",
               l.n - shown);
      if (strlen(more) > (size_t)l.width)
        more[l.width] = '\0';
      sprintf(at, "%s\n", more);
    }
  }
  lines_free(&l);
  return text;
}
