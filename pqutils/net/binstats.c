/*
 * binstats.c - rtstats's bins, its report line and identifier, and its
 * report schedule (pqutils/net/binstats.h says what each is).  The bins are a
 * sorted array searched by bisection: at most 4000 of them, one lookup per
 * product, an insertion only when a product starts a new bin.
 */
#include "pqutils/net/binstats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int rts_bins_init(struct rts_bins *b, size_t max) {
  memset(b, 0, sizeof *b);
  if (max == 0) {
    errno = EINVAL;
    return -1;
  }
  b->v = calloc(max, sizeof *b->v);
  if (b->v == NULL) {
    errno = ENOMEM;
    return -1;
  }
  b->max = max;
  return 0;
}

void rts_bins_free(struct rts_bins *b) {
  free(b->v);
  memset(b, 0, sizeof *b);
}

int64_t rts_hour_of(int64_t sec) {
  int64_t r = sec % RTS_HOUR;

  return r < 0 ? sec - r - RTS_HOUR : sec - r;
}

/* Order of bins: hour, then feedtype, then origin. */
static int key_cmp(int64_t hour, uint32_t feedtype, const char *origin,
                   const struct rts_bin *bin) {
  if (hour != bin->hour)
    return hour < bin->hour ? -1 : 1;
  if (feedtype != bin->feedtype)
    return feedtype < bin->feedtype ? -1 : 1;
  return strcmp(origin, bin->origin);
}

/* Where the key is, or would go: *found tells which. */
static size_t find(const struct rts_bins *b, int64_t hour, uint32_t feedtype,
                   const char *origin, bool *found) {
  size_t lo = 0, hi = b->n;

  *found = false;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = key_cmp(hour, feedtype, origin, &b->v[mid]);

    if (c == 0) {
      *found = true;
      return mid;
    }
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static void remove_at(struct rts_bins *b, size_t i) {
  memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof *b->v);
  b->n--;
}

/* At the cap: free a place for a bin with this key.  @return false if the
 * product is to be dropped instead. */
static bool make_room(struct rts_bins *b, int64_t hour, uint32_t feedtype,
                      const char *origin) {
  size_t victim = 0;

  while (victim < b->n && b->v[victim].changed)
    victim++;
  if (victim == b->n) { /* every bin has figures to report */
    if (key_cmp(hour, feedtype, origin, &b->v[0]) < 0)
      return false;
    victim = 0;
    b->lost++;
  }
  remove_at(b, victim);
  b->evicted++;
  return true;
}

static int64_t ts_us(pq_timestamp t) {
  return t.sec * 1000000 + t.usec;
}

enum rts_add rts_bins_add(struct rts_bins *b, const pq_prod_info *info,
                          uint64_t inserted_us) {
  int64_t hour = rts_hour_of(info->arrival.sec);
  enum rts_add what = RTS_ADDED;
  struct rts_bin *bin;
  double latency;
  bool found;
  size_t i = find(b, hour, info->feedtype, info->origin, &found);

  if (!found) {
    what = RTS_NEW_BIN;
    if (b->n == b->max) {
      if (!make_room(b, hour, info->feedtype, info->origin)) {
        b->dropped++;
        return RTS_DROPPED;
      }
      what = RTS_EVICTED;
      i = find(b, hour, info->feedtype, info->origin, &found);
    }
    memmove(&b->v[i + 1], &b->v[i], (b->n - i) * sizeof *b->v);
    b->n++;
    bin = &b->v[i];
    memset(bin, 0, sizeof *bin);
    bin->hour = hour;
    bin->feedtype = info->feedtype;
    snprintf(bin->origin, sizeof bin->origin, "%s", info->origin);
  }
  bin = &b->v[i];
  latency = (double)((int64_t)inserted_us - ts_us(info->arrival)) / 1e6;
  if (bin->nprods == 0 || latency > bin->max_latency) {
    bin->max_latency = latency;
    bin->slowest_at_us = inserted_us;
  }
  if (bin->nprods == 0 || pq_ts_cmp(info->arrival, bin->recent) > 0 ||
      (pq_ts_cmp(info->arrival, bin->recent) == 0 &&
       inserted_us > bin->recent_at_us)) {
    bin->recent = info->arrival;
    bin->recent_at_us = inserted_us;
  }
  bin->nprods += 1;
  bin->nbytes += (double)info->size;
  bin->latency_sum += latency;
  bin->changed = true;
  return what;
}

size_t rts_bins_changed(const struct rts_bins *b) {
  size_t n = 0;

  for (size_t i = 0; i < b->n; i++)
    n += b->v[i].changed;
  return n;
}

void rts_bins_mark_sent(struct rts_bins *b) {
  for (size_t i = 0; i < b->n; i++)
    b->v[i].changed = false;
}

size_t rts_bins_expire(struct rts_bins *b, int64_t now_sec) {
  int64_t oldest_kept = rts_hour_of(now_sec) - RTS_HOUR;
  size_t kept = 0, n = b->n;

  for (size_t i = 0; i < n; i++) {
    if (b->v[i].hour < oldest_kept && !b->v[i].changed)
      continue;
    if (kept != i)
      b->v[kept] = b->v[i];
    kept++;
  }
  b->n = kept;
  return n - kept;
}

double rts_bin_mean(const struct rts_bin *bin) {
  return bin->nprods > 0 ? bin->latency_sum / bin->nprods : 0;
}

double rts_bin_latest(const struct rts_bin *bin) {
  return (double)((int64_t)bin->recent_at_us - ts_us(bin->recent)) / 1e6;
}

void rts_format_time(int64_t sec, char out[16]) {
  time_t t = (time_t)sec;
  struct tm tm;

  if (gmtime_r(&t, &tm) == NULL || strftime(out, 16, "%Y%m%d%H%M%S", &tm) == 0)
    snprintf(out, 16, "00000000000000");
}

void rts_format_mmss(uint64_t us, char out[8]) {
  int64_t into = (int64_t)(us / 1000000) % RTS_HOUR;

  snprintf(out, 8, "%02d%02d", (int)(into / 60), (int)(into % 60));
}

int rts_format_line(const struct rts_bin *bin, const char *myname,
                    const char *version, char *buf, size_t len) {
  char created[16], inserted[16], mmss[8], ft[180];
  int n;

  rts_format_time(bin->recent.sec, created);
  rts_format_time((int64_t)(bin->recent_at_us / 1000000), inserted);
  rts_format_mmss(bin->slowest_at_us, mmss);
  pq_feedtype_format(bin->feedtype, ft, sizeof ft);
  n = snprintf(buf, len,
               "%14.14s %14.14s %32.*s %7.10s %32.*s %12.0f %12.0f %.8g "
               "%10.2f %4.0f@%4.4s %20.20s\n",
               created, inserted, RTS_HOST_MAX, myname, ft, PQ_ORIGIN_MAX,
               bin->origin, bin->nprods, bin->nbytes, rts_bin_latest(bin),
               rts_bin_mean(bin), bin->max_latency, mmss, version);
  return n < 0 || (size_t)n >= len ? -1 : n;
}

/* The k-th (from 1) whitespace-separated field of line: its start, and its
 * length in *flen; NULL if the line has fewer fields. */
static const char *field(const char *line, int k, size_t *flen) {
  const char *p = line;

  for (;;) {
    p += strspn(p, " \t\n");
    if (*p == '\0')
      return NULL;
    *flen = strcspn(p, " \t\n");
    if (--k == 0)
      return p;
    p += *flen;
  }
}

int rts_format_ident(const char *line, const char *version, const char *myname,
                     char *buf, size_t len) {
  size_t flen = 0, olen = 0;
  const char *ft = field(line, 4, &flen);
  const char *origin = field(line, 5, &olen);

  if (ft == NULL || origin == NULL)
    return -1;
  snprintf(buf, len, "rtstats-%s/%s/%.*s/%.*s", version, myname, (int)flen, ft,
           (int)olen, origin);
  return 0;
}

void rts_sched_init(struct rts_sched *s, double base, double spread,
                    rts_draw_fn *draw, void *arg, double now) {
  s->base = base;
  s->spread = spread;
  s->draw = draw;
  s->arg = arg;
  s->reported = false;
  rts_sched_idle(s, now);
}

bool rts_sched_due(const struct rts_sched *s, double now, bool at_end) {
  return (at_end && !s->reported) || now - s->last >= s->gap;
}

double rts_sched_left(const struct rts_sched *s, double now) {
  double left = s->last + s->gap - now;

  return left > 0 ? left : 0;
}

void rts_sched_done(struct rts_sched *s, double now) {
  rts_sched_idle(s, now);
  s->reported = true;
}

void rts_sched_idle(struct rts_sched *s, double now) {
  double u = s->spread > 0 && s->draw != NULL ? s->draw(s->arg) : 0;

  if (u < 0)
    u = 0;
  if (u > 1)
    u = 1;
  s->last = now;
  s->gap = s->base + s->spread * u;
}
