/*
 * test_np_blend.c - the blender (pqutils/ingest/frame_blend.h): frames of
 * one stream from two receivers come out once each, in uplink order; a
 * reordered stream comes out sorted; late frames are refused in LDM's
 * words and duplicates dropped; uplink switches, data-server switches,
 * sequence wrap-around and corrupt frames keep the order without losing
 * the frames after them; the byte bound releases early and loses nothing;
 * wait 0 passes frames through.  The rules: docs/noaaport.md, section 8.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/frame_blend.h"

/* ---- frames ---- */

#define RAW_LEN 48
#define NODE_BYTES (RAW_LEN + NP_BLEND_OVERHEAD)

struct tf {
  struct np_frame f;
  uint8_t raw[RAW_LEN];
};

static void put16(uint8_t *p, unsigned v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v) {
  put16(p, v >> 16);
  put16(p + 2, v & 0xffff);
}

/* A data frame: FH, PDH, 16 bytes of data naming the frame. */
static void mk(struct tf *t, uint8_t source, uint32_t fh, uint32_t prod,
               uint16_t block) {
  memset(t, 0, sizeof *t);
  uint8_t *r = t->raw;
  r[0] = 0xff;
  r[2] = 0x14;
  r[4] = NP_CMD_DATA;
  r[5] = 1;
  r[6] = source;
  put32(r + 8, fh);
  unsigned sum = 0;
  for (int i = 0; i < 14; i++)
    sum += r[i];
  put16(r + 14, sum);
  r[16] = 0x14;
  r[17] = NP_TT_PROGRESS;
  put16(r + 18, 16);
  put16(r + 20, block);
  put16(r + 24, 16);
  put32(r + 28, prod);
  char payload[17];
  snprintf(payload, sizeof payload, "%02x%08x%04x..", source, prod, block);
  memcpy(r + 32, payload, 16);
  t->f = (struct np_frame){.command = NP_CMD_DATA,
                           .datastream = 1,
                           .source = source,
                           .fh_seq = fh,
                           .pdh_version = 1,
                           .pdh_len = 16,
                           .tt = NP_TT_PROGRESS,
                           .hdr_len = 16,
                           .block = block,
                           .data_len = 16,
                           .prod_seq = prod,
                           .data = r + 32,
                           .raw = r,
                           .raw_len = RAW_LEN};
}

/* ---- the log ---- */

struct logcap {
  int n;
  int level[256];
  char msg[256][200];
};

static void capture(void *arg, int level, const char *msg) {
  struct logcap *c = arg;
  if (c->n < 256) {
    c->level[c->n] = level;
    snprintf(c->msg[c->n], sizeof c->msg[0], "%s", msg);
  }
  c->n++;
}

static int count_level(const struct logcap *c, int level) {
  int k = 0;
  for (int i = 0; i < c->n && i < 256; i++)
    k += c->level[i] == level;
  return k;
}

static int count_msg(const struct logcap *c, int level, const char *msg) {
  int k = 0;
  for (int i = 0; i < c->n && i < 256; i++)
    k += c->level[i] == level && strcmp(c->msg[i], msg) == 0;
  return k;
}

/* ---- what comes out ---- */

#define OUT_MAX 8192

struct out {
  size_t n;
  uint8_t source[OUT_MAX];
  uint32_t fh[OUT_MAX], prod[OUT_MAX];
  uint16_t block[OUT_MAX];
};

/* Record a released frame, checking that its bytes are its own copy. */
static void record(struct out *o, const struct np_frame *f) {
  struct tf want;
  mk(&want, f->source, f->fh_seq, f->prod_seq, f->block);
  assert_int_equal(f->raw_len, RAW_LEN);
  assert_memory_equal(f->raw, want.raw, RAW_LEN);
  assert_ptr_equal(f->data, f->raw + 32);
  assert_true(o->n < OUT_MAX);
  o->source[o->n] = f->source;
  o->fh[o->n] = f->fh_seq;
  o->prod[o->n] = f->prod_seq;
  o->block[o->n] = f->block;
  o->n++;
}

static void drain(struct np_blend *b, double now, bool flush, struct out *o) {
  const struct np_frame *f;
  while ((f = np_blend_next(b, now, flush)) != NULL)
    record(o, f);
}

/* ---- streams ---- */

/* Frame i of a stream: three blocks a product. */
static void stream_frame(struct tf *t, uint8_t source, uint32_t fh0,
                         uint32_t prod0, size_t i) {
  mk(t, source, fh0 + (uint32_t)i, prod0 + (uint32_t)(i / 3),
     (uint16_t)(i % 3));
}

/* Put frame i of a stream, from receiver `from` at time now. */
static int put_frame(struct np_blend *b, uint8_t source, uint32_t fh0,
                     uint32_t prod0, size_t i, const char *from, double now) {
  struct tf t;
  stream_frame(&t, source, fh0, prod0, i);
  return np_blend_put(b, &t.f, from, now);
}

static void assert_stream(const struct out *o, size_t from, uint8_t source,
                          uint32_t fh0, uint32_t prod0, size_t n) {
  assert_true(o->n >= from + n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(o->source[from + i], source);
    assert_int_equal(o->fh[from + i], fh0 + (uint32_t)i);
    assert_int_equal(o->prod[from + i], prod0 + (uint32_t)(i / 3));
    assert_int_equal(o->block[from + i], i % 3);
  }
}

/* An arrival: frame `idx` of a stream, from receiver `src`, at time t. */
struct ev {
  double t;
  size_t seq, idx;
  int src;
};

static void add_ev(struct ev *ev, size_t *n, double t, size_t idx, int src) {
  ev[*n] = (struct ev){t, *n, idx, src};
  (*n)++;
}

static int ev_cmp(const void *a, const void *b) {
  const struct ev *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Feed events in time order (draining first at each time), then flush. */
static void run(struct np_blend *b, struct ev *ev, size_t n, uint32_t fh0,
                uint32_t prod0, struct out *o) {
  qsort(ev, n, sizeof *ev, ev_cmp);
  static const char *const names[] = {"dish-a", "dish-b"};
  for (size_t k = 0; k < n; k++) {
    struct tf t;
    stream_frame(&t, 1, fh0, prod0, ev[k].idx);
    drain(b, ev[k].t, false, o);
    int s = np_blend_put(b, &t.f, names[ev[k].src], ev[k].t);
    assert_true(s == NP_BLEND_QUEUED || s == NP_BLEND_DUP);
  }
  drain(b, ev[n - 1].t + 1000, false, o);
  assert_null(np_blend_next(b, 0, true));
}

/* ---- tests ---- */

static void test_two_sources_union(void **state) {
  (void)state;
  struct logcap lc = {0};
  struct np_log lg = {capture, &lc, NP_DEBUG};
  struct np_blend *b = np_blend_new(1.0, 1 << 20, &lg);
  assert_non_null(b);
  enum { N = 60 };
  struct ev ev[2 * N];
  size_t n = 0, both = 0;
  for (size_t i = 0; i < N; i++) {
    bool a_has = i % 7 != 3, b_has = !(i % 5 == 1 && a_has);
    if (a_has)
      add_ev(ev, &n, i * 0.01, i, 0);
    if (b_has) /* the second dish lags 0.3 s */
      add_ev(ev, &n, i * 0.01 + 0.3, i, 1);
    both += a_has && b_has;
  }
  struct out *o = calloc(1, sizeof *o);
  assert_non_null(o);
  run(b, ev, n, 1000, 500, o);
  assert_int_equal(o->n, N);
  assert_stream(o, 0, 1, 1000, 500, N);
  struct np_blend_counts c;
  np_blend_counts(b, &c);
  assert_int_equal(c.put, n);
  assert_int_equal(c.dups, both);
  assert_int_equal(c.late, 0);
  assert_int_equal(c.held, 0);
  assert_int_equal(count_level(&lc, NP_WARN), 0);
  assert_int_equal(count_msg(&lc, NP_DEBUG, "Frame from dish-b is a duplicate"),
                   both);
  free(o);
  np_blend_free(b);
}

static void test_reordered_sorted(void **state) {
  (void)state;
  struct np_blend *b = np_blend_new(1.0, 1 << 20, NULL);
  struct out o = {0};
  /* The earliest-ordered frame is waited for even when a later one's time
   * has come. */
  assert_int_equal(put_frame(b, 1, 10, 20, 1, "a", 0.0), NP_BLEND_QUEUED);
  assert_int_equal(put_frame(b, 1, 10, 20, 0, "a", 0.25), NP_BLEND_QUEUED);
  assert_true(np_blend_due(b) == 1.25);
  assert_null(np_blend_next(b, 1.125, false));
  static const size_t order[] = {4, 2, 3, 7, 5, 6, 8, 10, 9, 11};
  for (size_t k = 0; k < 10; k++) {
    assert_int_equal(put_frame(b, 1, 10, 20, order[k], "a", 0.5 + k / 64.0),
                     NP_BLEND_QUEUED);
  }
  drain(b, 1.25, false, &o);
  assert_int_equal(o.n, 2);
  drain(b, 2.0, false, &o);
  assert_int_equal(o.n, 12);
  assert_stream(&o, 0, 1, 10, 20, 12);
  assert_true(np_blend_due(b) == INFINITY);
  np_blend_free(b);
}

static void test_late_in_ldm_words(void **state) {
  (void)state;
  struct logcap lc = {0};
  struct np_log lg = {capture, &lc, NP_WARN};
  struct np_blend *b = np_blend_new(1.0, 1 << 20, &lg);
  struct out o = {0};
  for (size_t i = 3; i < 6; i++) {
    assert_int_equal(put_frame(b, 1, 10, 20, i, "dish-a", 0.0),
                     NP_BLEND_QUEUED);
  }
  drain(b, 1.0, false, &o);
  assert_int_equal(o.n, 3);
  assert_int_equal(put_frame(b, 1, 10, 20, 2, "dish-b", 1.5),
                   NP_BLEND_LATE); /* missed by dish-a, too late from b */
  assert_int_equal(lc.n, 1);
  assert_int_equal(lc.level[0], NP_WARN);
  assert_string_equal(lc.msg[0], "Frame from dish-b arrived too late to be "
                                 "included. Increase time window?");
  assert_int_equal(put_frame(b, 1, 10, 20, 6, "dish-b", 1.5), NP_BLEND_QUEUED);
  struct np_blend_counts c;
  np_blend_counts(b, &c);
  assert_int_equal(c.late, 1);
  assert_int_equal(c.held, 1);
  np_blend_free(b);
}

static void test_dup_after_release(void **state) {
  (void)state;
  struct logcap lc = {0};
  struct np_log lg = {capture, &lc, NP_DEBUG};
  struct np_blend *b = np_blend_new(1.0, 1 << 20, &lg);
  struct out o = {0};
  assert_int_equal(put_frame(b, 1, 10, 20, 0, "dish-a", 0.0), NP_BLEND_QUEUED);
  assert_int_equal(put_frame(b, 1, 10, 20, 1, "dish-a", 0.0), NP_BLEND_QUEUED);
  assert_int_equal(put_frame(b, 1, 10, 20, 1, "dish-b", 0.2), NP_BLEND_DUP);
  drain(b, 1.0, false, &o);
  assert_int_equal(o.n, 2);
  assert_int_equal(put_frame(b, 1, 10, 20, 0, "dish-b", 1.5),
                   NP_BLEND_DUP); /* its twin went out: not "late" */
  assert_int_equal(count_level(&lc, NP_WARN), 0);
  assert_int_equal(count_msg(&lc, NP_DEBUG, "Frame from dish-b is a duplicate"),
                   2);
  struct np_blend_counts c;
  np_blend_counts(b, &c);
  assert_int_equal(c.dups, 2);
  assert_int_equal(c.late, 0);
  np_blend_free(b);
}

static void test_uplink_switch(void **state) {
  (void)state;
  struct np_blend *b = np_blend_new(1.0, 1 << 20, NULL);
  struct out o = {0};
  /* Primary NCF (source 1) to backup (source 2): the backup's product
   * sequence restarts at 1, circularly before 500, yet its frames follow. */
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(put_frame(b, 1, 1000, 500, i, "a", 0.01 * i),
                     NP_BLEND_QUEUED);
  }
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(put_frame(b, 2, 7, 1, i, "a", 0.1 + 0.01 * i),
                     NP_BLEND_QUEUED);
  }
  drain(b, 10, false, &o);
  assert_int_equal(o.n, 12);
  assert_stream(&o, 0, 1, 1000, 500, 6);
  assert_stream(&o, 6, 2, 7, 1, 6);
  /* Back to the primary after the backup's frames went out: a new uplink,
   * after the backup's, though its numbers are before 500. */
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(put_frame(b, 1, 50, 200, i, "a", 20), NP_BLEND_QUEUED);
  }
  drain(b, 30, false, &o);
  assert_int_equal(o.n, 15);
  assert_stream(&o, 12, 1, 50, 200, 3);
  np_blend_free(b);
}

/* Two dishes across an NCF switch: dish-a is on the backup while dish-b,
 * 0.3 s behind, still delivers the primary's last frames, one of which
 * dish-a lost.  Interleaved source bytes are not switches. */
static void test_switch_two_dishes(void **state) {
  (void)state;
  struct logcap lc = {0};
  struct np_log lg = {capture, &lc, NP_WARN};
  struct np_blend *b = np_blend_new(1.0, 1 << 20, &lg);
  struct out o = {0};
  for (size_t i = 0; i < 8; i++) {
    double ta = 0.05 * i;
    if (i != 5) {
      assert_int_equal(put_frame(b, 1, 1000, 500, i, "a", ta), NP_BLEND_QUEUED);
    }
    assert_int_equal(put_frame(b, 2, 7, 1, i, "a", ta + 0.4), NP_BLEND_QUEUED);
    assert_int_equal(put_frame(b, 1, 1000, 500, i, "b", ta + 0.3),
                     i == 5 ? NP_BLEND_QUEUED : NP_BLEND_DUP);
    assert_int_equal(put_frame(b, 2, 7, 1, i, "b", ta + 0.7), NP_BLEND_DUP);
  }
  drain(b, 10, false, &o);
  assert_int_equal(o.n, 16);
  assert_stream(&o, 0, 1, 1000, 500, 8);
  assert_stream(&o, 8, 2, 7, 1, 8);
  assert_int_equal(lc.n, 0);
  np_blend_free(b);
}

static void test_wraparound(void **state) {
  (void)state;
  struct np_blend *b = np_blend_new(1.0, 1 << 20, NULL);
  struct out o = {0};
  struct tf t;
  static const uint32_t prods[] = {1, 0xffffffffu, 0, 0xfffffffeu};
  for (size_t k = 0; k < 4; k++) {
    mk(&t, 1, 100 + prods[k], prods[k], 0);
    assert_int_equal(np_blend_put(b, &t.f, "a", 0.1 * k), NP_BLEND_QUEUED);
  }
  drain(b, 5, false, &o);
  assert_int_equal(o.n, 4);
  static const uint32_t want[] = {0xfffffffeu, 0xffffffffu, 0, 1};
  for (size_t k = 0; k < 4; k++)
    assert_int_equal(o.prod[k], want[k]);
  mk(&t, 1, 100 + 0xfffffffdu, 0xfffffffdu, 0); /* before 1, circularly */
  assert_int_equal(np_blend_put(b, &t.f, "a", 6), NP_BLEND_LATE);
  mk(&t, 1, 102, 2, 0);
  assert_int_equal(np_blend_put(b, &t.f, "a", 6), NP_BLEND_QUEUED);
  np_blend_free(b);
}

static void test_byte_bound(void **state) {
  (void)state;
  struct np_blend *b = np_blend_new(10.0, 3 * NODE_BYTES, NULL);
  struct out o = {0};
  struct np_blend_counts c;
  for (size_t i = 0; i < 10; i++) {
    assert_int_equal(put_frame(b, 1, 10, 20, i, "a", 0.0), NP_BLEND_QUEUED);
    if (i >= 3)
      assert_true(np_blend_due(b) == -INFINITY);
    drain(b, 0.0, false, &o);
    np_blend_counts(b, &c);
    assert_int_equal(c.held, i < 3 ? i + 1 : 3);
  }
  assert_true(np_blend_due(b) == 10.0);
  assert_null(np_blend_next(b, 9.9, false));
  drain(b, 9.9, true, &o);
  assert_int_equal(o.n, 10);
  assert_stream(&o, 0, 1, 10, 20, 10);
  np_blend_counts(b, &c);
  assert_int_equal(c.forced, 7);
  assert_int_equal(c.hiwater_bytes, 4 * NODE_BYTES);
  assert_int_equal(c.late, 0);
  np_blend_free(b);
}

static void test_wait_zero_passes_through(void **state) {
  (void)state;
  struct np_blend *b = np_blend_new(0, 1 << 20, NULL);
  struct out o = {0};
  static const size_t order[] = {3, 1, 2, 1, 0, 4, 4};
  static const int status[] = {
      NP_BLEND_QUEUED, NP_BLEND_QUEUED, NP_BLEND_QUEUED, NP_BLEND_DUP,
      NP_BLEND_QUEUED, NP_BLEND_QUEUED, NP_BLEND_DUP};
  for (size_t k = 0; k < 7; k++) {
    assert_int_equal(put_frame(b, 1, 10, 20, order[k], "a", (double)k),
                     status[k]);
    drain(b, (double)k, false, &o);
  }
  static const size_t want[] = {3, 1, 2, 0, 4};
  assert_int_equal(o.n, 5);
  for (size_t k = 0; k < 5; k++)
    assert_int_equal(o.fh[k], 10 + want[k]);
  /* Several puts before a drain still come out in arrival order. */
  for (size_t i = 7; i > 5; i--) {
    assert_int_equal(put_frame(b, 1, 10, 20, i, "a", 9), NP_BLEND_QUEUED);
  }
  drain(b, 9, false, &o);
  assert_int_equal(o.n, 7);
  assert_int_equal(o.fh[5], 17);
  assert_int_equal(o.fh[6], 16);
  np_blend_free(b);
}

/* A data server switch: the product sequence restarts while the FH
 * sequence goes on.  The new server's frames follow the old ones, whether
 * those are still held or already out. */
static void test_data_server_switch(void **state) {
  (void)state;
  struct logcap lc = {0};
  struct np_log lg = {capture, &lc, NP_WARN};
  struct np_blend *b = np_blend_new(1.0, 1 << 20, &lg);
  struct out o = {0};
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(put_frame(b, 1, 100, 5000, i, "a", 0.0), NP_BLEND_QUEUED);
  }
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(put_frame(b, 1, 106, 1, i, "a", 0.5), NP_BLEND_QUEUED);
  }
  drain(b, 2, false, &o);
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(put_frame(b, 1, 112, 9000, i, "a", 3), NP_BLEND_QUEUED);
  }
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(put_frame(b, 1, 118, 7, i, "a", 3), NP_BLEND_QUEUED);
  }
  drain(b, 5, false, &o);
  assert_int_equal(o.n, 21);
  assert_stream(&o, 0, 1, 100, 5000, 6);
  assert_stream(&o, 6, 1, 106, 1, 6);
  assert_stream(&o, 12, 1, 112, 9000, 6);
  assert_stream(&o, 18, 1, 118, 7, 3);
  assert_int_equal(lc.n, 0);
  np_blend_free(b);
}

/* with_corrupt()'s stream: 80 frames 0.1 s apart, with a pause of 2 s (more
 * than the window: everything held goes out) before frame 30. */
#define CS_N 80
#define CS_BAD_PROD (100 + 1000000000u)

/* Feed the stream with one extra frame after frame 15; return the late
 * count. */
static uint64_t with_corrupt(const struct tf *bad, struct out *o) {
  struct np_blend *b = np_blend_new(1.0, 1 << 20, NULL);
  struct tf t;
  for (size_t i = 0; i < CS_N; i++) {
    double now = 0.1 * i + (i >= 30 ? 2.0 : 0.0);
    drain(b, now, false, o);
    stream_frame(&t, 1, 1000, 100, i);
    int s = np_blend_put(b, &t.f, "a", now);
    assert_true(s == NP_BLEND_QUEUED || s == NP_BLEND_LATE);
    if (i == 15)
      assert_int_equal(np_blend_put(b, &bad->f, "a", now), NP_BLEND_QUEUED);
  }
  drain(b, 0, true, o);
  struct np_blend_counts c;
  np_blend_counts(b, &c);
  np_blend_free(b);
  return c.late;
}

/* The genuine frames of with_corrupt()'s output are the stream in order,
 * less `lost` frames from frame `from` on. */
static void assert_genuine(const struct out *o, size_t from, size_t lost) {
  size_t i = 0;
  for (size_t k = 0; k < o->n; k++) {
    if (o->prod[k] == CS_BAD_PROD || o->source[k] == 9)
      continue;
    if (i == from)
      i += lost;
    struct tf t;
    stream_frame(&t, 1, 1000, 100, i);
    assert_int_equal(o->fh[k], t.f.fh_seq);
    assert_int_equal(o->prod[k], t.f.prod_seq);
    assert_int_equal(o->block[k], t.f.block);
    i++;
  }
  assert_int_equal(i, CS_N);
}

static void test_corrupt_frames(void **state) {
  (void)state;
  struct out *o = calloc(1, sizeof *o);
  assert_non_null(o);
  struct tf bad;
  /* A product sequence far ahead, FH sequence in place: the next frame
   * reads as a new data server; nothing lost. */
  mk(&bad, 1, 1015, CS_BAD_PROD, 0);
  assert_int_equal(with_corrupt(&bad, o), 0);
  assert_int_equal(o->n, CS_N + 1);
  assert_genuine(o, 0, 0);
  /* A source byte of nowhere: nothing lost. */
  memset(o, 0, sizeof *o);
  mk(&bad, 9, 1015, 105, 1);
  assert_int_equal(with_corrupt(&bad, o), 0);
  assert_int_equal(o->n, CS_N + 1);
  assert_genuine(o, 0, 0);
  /* Both sequences far ahead: it goes out in the pause, and the stream
   * behind it is late until NP_BLEND_STUCK frames in a row make a new
   * uplink; LDM's blender would refuse every frame from then on. */
  memset(o, 0, sizeof *o);
  mk(&bad, 1, 1000 + 0x40000000u, CS_BAD_PROD, 0);
  assert_int_equal(with_corrupt(&bad, o), NP_BLEND_STUCK - 1);
  assert_int_equal(o->n, CS_N + 1 - (NP_BLEND_STUCK - 1));
  assert_genuine(o, 30, NP_BLEND_STUCK - 1);
  free(o);
}

static void test_ignored_and_invalid(void **state) {
  (void)state;
  struct logcap lc = {0};
  struct np_log lg = {capture, &lc, NP_DEBUG};
  struct np_blend *b = np_blend_new(1.0, 1 << 20, &lg);
  struct tf t;
  mk(&t, 1, 10, 20, 0);
  t.f.command = NP_CMD_TIMESYNC;
  assert_int_equal(np_blend_put(b, &t.f, "a", 0), NP_BLEND_IGNORED);
  t.f.command = NP_CMD_TEST;
  assert_int_equal(np_blend_put(b, &t.f, "a", 0), NP_BLEND_IGNORED);
  assert_int_equal(lc.n, 0);
  t.f.command = 7;
  assert_int_equal(np_blend_put(b, &t.f, "a", 0), NP_BLEND_IGNORED);
  assert_int_equal(count_msg(&lc, NP_NOTE, "Ignoring frame with command=7"), 1);
  mk(&t, 1, 10, 20, 0);
  t.f.data_len = 17; /* runs past the frame */
  assert_int_equal(np_blend_put(b, &t.f, "a", 0), -1);
  mk(&t, 1, 10, 20, 0);
  t.f.raw_len = 0;
  assert_int_equal(np_blend_put(b, &t.f, "a", 0), -1);
  assert_int_equal(np_blend_put(b, NULL, "a", 0), -1);
  assert_int_equal(count_level(&lc, NP_ERROR), 3);
  struct np_blend_counts c;
  np_blend_counts(b, &c);
  assert_int_equal(c.put, 6);
  assert_int_equal(c.held, 0);
  /* The blender keeps its own copy of the bytes. */
  mk(&t, 1, 10, 20, 0);
  assert_int_equal(np_blend_put(b, &t.f, NULL, 0), NP_BLEND_QUEUED);
  memset(t.raw, 0, sizeof t.raw);
  struct out o = {0};
  drain(b, 1, false, &o);
  assert_int_equal(o.n, 1);
  np_blend_free(b);
}

/* ---- property: bounded displacement below the window ---- */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static double rng_unit(uint64_t *s) {
  return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static void test_random_arrivals(void **state) {
  (void)state;
  enum { N = 3000 };
  struct ev *ev = calloc(2 * N, sizeof *ev);
  struct out *o = calloc(1, sizeof *o);
  assert_non_null(ev);
  assert_non_null(o);
  for (uint64_t seed = 1; seed <= 12; seed++) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL;
    bool two = seed % 2 == 0;
    size_t n = 0;
    for (size_t i = 0; i < N; i++) {
      /* each receiver loses a frame in ten, never both the same one */
      bool a_has = !two || rng_next(&s) % 10 != 0;
      bool b_has = two && (!a_has || rng_next(&s) % 10 != 0);
      double base = i * 0.002;
      if (a_has)
        add_ev(ev, &n, base + 0.45 * rng_unit(&s), i, 0);
      if (b_has)
        add_ev(ev, &n, base + 0.2 + 0.25 * rng_unit(&s), i, 1);
    }
    memset(o, 0, sizeof *o);
    struct np_blend *b = np_blend_new(0.5, 1 << 24, NULL);
    run(b, ev, n, 0xfffffe00u, 0xffffff00u, o); /* across the wrap */
    assert_int_equal(o->n, N);
    assert_stream(o, 0, 1, 0xfffffe00u, 0xffffff00u, N);
    struct np_blend_counts c;
    np_blend_counts(b, &c);
    assert_int_equal(c.late, 0);
    assert_int_equal(c.dups, n - N);
    np_blend_free(b);
  }
  free(o);
  free(ev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_sources_union),
      cmocka_unit_test(test_reordered_sorted),
      cmocka_unit_test(test_late_in_ldm_words),
      cmocka_unit_test(test_dup_after_release),
      cmocka_unit_test(test_uplink_switch),
      cmocka_unit_test(test_switch_two_dishes),
      cmocka_unit_test(test_wraparound),
      cmocka_unit_test(test_byte_bound),
      cmocka_unit_test(test_wait_zero_passes_through),
      cmocka_unit_test(test_data_server_switch),
      cmocka_unit_test(test_corrupt_frames),
      cmocka_unit_test(test_ignored_and_invalid),
      cmocka_unit_test(test_random_arrivals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
