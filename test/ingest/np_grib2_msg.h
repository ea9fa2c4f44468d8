/*
 * np_grib2_msg.h - the writer of the GRIB edition 2 messages that the
 * GRIB2 namer's test (test_np_grib2.c) and fuzz target's seeds
 * (fuzz_np_grib2.c) build: octets big-endian or sign and magnitude, as the
 * templates have them, sections that get their length when closed, a
 * field's data sections (5 to 7, no values), and the end ("7777" and the
 * total length in section 0).  Sections 1 to 4 are the caller's.  Header-only:
 * each program includes it once.
 */
#ifndef TEST_INGEST_NP_GRIB2_MSG_H
#define TEST_INGEST_NP_GRIB2_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A template entry: its width in octets (negative: sign and magnitude, as
 * the template has it) and its value. */
struct g2e {
  int w;
  int64_t v;
};

/* A message being written: n octets so far, the open section at sec. */
struct g2 {
  uint8_t b[4096];
  size_t n, sec;
};

/* v in |w| octets (octets beyond 8 are 0). */
static inline void g2_put(struct g2 *m, int64_t v, int w) {
  int n = w < 0 ? -w : w;
  uint64_t u = (uint64_t)v;
  if (w < 0 && v < 0)
    u = (uint64_t)-v | (uint64_t)1 << (8 * n - 1);
  for (int i = n - 1; i >= 0; i--)
    m->b[m->n++] = i < 8 ? (uint8_t)(u >> (8 * i)) : 0;
}

static inline void g2_put_all(struct g2 *m, const struct g2e *t, size_t n) {
  for (size_t i = 0; i < n; i++)
    g2_put(m, t[i].v, t[i].w);
}

/* Section num, its length to come. */
static inline void g2_open_section(struct g2 *m, int num) {
  m->sec = m->n;
  g2_put(m, 0, 4);
  g2_put(m, num, 1);
}

static inline void g2_close_section(struct g2 *m) {
  size_t len = m->n - m->sec, n = m->n;
  m->n = m->sec;
  g2_put(m, (int64_t)len, 4);
  m->n = n;
}

/* Sections 5 (DRT 5.drtn: no values, 8 bits), 6 (no bitmap) and 7
 * (empty): the end of a field. */
static inline void g2_data(struct g2 *m, int drtn) {
  g2_open_section(m, 5);
  g2_put(m, 259920, 4);
  g2_put(m, drtn, 2);
  g2_put(m, 0, 4);
  g2_put(m, 0, 2);
  g2_put(m, 0, 2);
  g2_put(m, 8, 1);
  g2_put(m, 0, 1);
  g2_close_section(m);
  g2_open_section(m, 6);
  g2_put(m, 255, 1);
  g2_close_section(m);
  g2_open_section(m, 7);
  g2_close_section(m);
}

/* "7777", and the message's length in octets 9-16.  @return the length */
static inline size_t g2_finish(struct g2 *m) {
  memcpy(m->b + m->n, "7777", 4);
  m->n += 4;
  size_t n = m->n;
  m->n = 8;
  g2_put(m, (int64_t)n, 8);
  m->n = n;
  return n;
}

#endif
