/*
 * sbngen_perturb.c - libsbngen's perturbations of a stream (sbngen.h):
 * frames dropped, duplicated, swapped within a window, damaged by one
 * flipped byte, junk inserted between them, the stream cut short; all
 * decided by a seed, and each product a perturbation touches flagged.
 *
 * Why no other product is touched (docs/noaaport.md, "Reassembly"): the
 * ingester keeps one product in progress, and a frame out of place only
 * discards the product in progress or its own.  A flipped byte never
 * falls on the PDH's lengths (bytes 0, 2-3 and 8-9), which say how many
 * bytes the frame spans; a frame header with a byte flipped fails its
 * checksum.  The ingester's resynchronisation ("Frames") looks at every
 * 0xFF in bytes it skips: junk, damaged frames and the frames of
 * touched products are kept free of a 0xFF that starts a frame header
 * that would pass, so that no false frame swallows a good one.
 */
#include "test/ingest/sbngen.h"

#include <stdlib.h>
#include <string.h>

void sg_perturb_none(struct sg_perturb *p) {
  memset(p, 0, sizeof *p);
  p->window = 1;
  p->junk_max = 1;
  p->truncate = SIZE_MAX;
}

static void sg_mark(bool *affected, size_t n, long product) {
  if (product >= 0 && (size_t)product < n)
    affected[product] = true;
}

static void sg_copy_frame(struct sg_frame *to, const struct sg_frame *from) {
  *to = *from;
  memset(&to->b, 0, sizeof to->b);
  sg_buf_put(&to->b, from->b.p, from->b.n);
}

/* Drops and duplicates (a copy right after its original). */
static void sg_drop_dup(struct sg_stream *s, const struct sg_perturb *p,
                        struct sg_rng *r, bool *affected, size_t na) {
  struct sg_frame *v = calloc(2 * s->n + 1, sizeof *v);
  size_t n = 0;

  if (v == NULL)
    abort();
  for (size_t i = 0; i < s->n; i++) {
    bool drop = sg_chance(r, p->drop), dup = sg_chance(r, p->dup);
    if (drop || dup)
      sg_mark(affected, na, s->v[i].product);
    if (drop) {
      sg_buf_free(&s->v[i].b);
      continue;
    }
    v[n++] = s->v[i];
    if (dup)
      sg_copy_frame(&v[n++], &s->v[i]);
  }
  free(s->v);
  s->v = v;
  s->n = n;
  s->cap = 2 * s->n + 1;
}

/* Swaps a frame with one 1 to window places on; every product with a
 * frame between the two is touched. */
static void sg_swap(struct sg_stream *s, const struct sg_perturb *p,
                    struct sg_rng *r, bool *affected, size_t na) {
  unsigned window = p->window ? p->window : 1;

  for (size_t i = 0; i < s->n; i++) {
    if (!sg_chance(r, p->swap))
      continue;
    size_t j = i + 1 + sg_below(r, window);
    if (j >= s->n)
      continue;
    struct sg_frame t = s->v[i];
    s->v[i] = s->v[j];
    s->v[j] = t;
    for (size_t k = i; k <= j; k++)
      sg_mark(affected, na, s->v[k].product);
  }
}

static bool sg_pdh_length_byte(size_t pos) {
  return pos == 16 || pos == 18 || pos == 19 || pos == 24 || pos == 25;
}

/* One byte of a data frame XORed with a value from 1 to 255. */
static void sg_flip(struct sg_stream *s, const struct sg_perturb *p,
                    struct sg_rng *r, bool *affected, size_t na) {
  for (size_t i = 0; i < s->n; i++) {
    struct sg_frame *f = &s->v[i];
    if (!sg_chance(r, p->flip) || f->kind != SG_F_DATA)
      continue;
    size_t pos;
    do
      pos = sg_below(r, (uint32_t)f->b.n);
    while (sg_pdh_length_byte(pos));
    f->b.p[pos] ^= (uint8_t)(1 + sg_below(r, 255));
    f->damaged = true;
    sg_mark(affected, na, f->product);
  }
}

/* Junk before a frame: 1 to junk_max bytes of any value. */
static void sg_junk(struct sg_stream *s, const struct sg_perturb *p,
                    struct sg_rng *r) {
  size_t max = p->junk_max ? p->junk_max : 1, n = 0;
  struct sg_frame *v = calloc(2 * s->n + 1, sizeof *v);

  if (v == NULL)
    abort();
  for (size_t i = 0; i < s->n; i++) {
    if (sg_chance(r, p->junk)) {
      struct sg_frame *j = &v[n++];
      j->kind = SG_F_JUNK;
      j->product = -1;
      for (size_t k = 1 + sg_below(r, (uint32_t)max); k > 0; k--)
        sg_buf_byte(&j->b, (unsigned)sg_rand(r));
    }
    v[n++] = s->v[i];
  }
  free(s->v);
  s->v = v;
  s->n = n;
  s->cap = 2 * s->n + 1;
}

/* The 16 bytes from frame i's byte o on, across frames; false at the end. */
static bool sg_peek(const struct sg_stream *s, size_t i, size_t o,
                    uint8_t out[SG_FH_LEN]) {
  size_t k = 0;

  for (; i < s->n && k < SG_FH_LEN; i++, o = 0)
    for (; o < s->v[i].b.n && k < SG_FH_LEN; o++)
      out[k++] = s->v[i].b.p[o];
  return k == SG_FH_LEN;
}

/* Where resynchronisation may look in frame f: all of junk, all but the
 * header of a damaged frame, the data of a touched product's frame. */
static size_t sg_scan_from(const struct sg_frame *f, const bool *affected,
                           size_t na) {
  if (f->kind == SG_F_JUNK)
    return 0;
  if (f->damaged)
    return 1;
  if (f->product >= 0 && (size_t)f->product < na && affected[f->product] &&
      f->b.n >= SG_FH_LEN + SG_PDH_LEN)
    return SG_FH_LEN + ((size_t)f->b.p[18] << 8 | f->b.p[19]);
  return SIZE_MAX;
}

/* No 0xFF there starts a header that passes: from the last byte back, so
 * that a byte changed is never part of a header checked before it. */
static void sg_no_false_headers(struct sg_stream *s, const bool *affected,
                                size_t na) {
  uint8_t h[SG_FH_LEN];

  for (size_t i = s->n; i-- > 0;) {
    struct sg_frame *f = &s->v[i];
    size_t from = sg_scan_from(f, affected, na);
    for (size_t o = f->b.n; o-- > from && from < f->b.n;)
      if (f->b.p[o] == 0xFF && sg_peek(s, i, o, h) && sg_fh_valid(h))
        f->b.p[o] = 0xFE;
  }
}

static void sg_truncate(struct sg_stream *s, const struct sg_perturb *p,
                        bool *affected, size_t na) {
  size_t end = 0;

  s->cut = p->truncate;
  for (size_t i = 0; i < s->n; i++) {
    end += s->v[i].b.n;
    if (end > s->cut)
      sg_mark(affected, na, s->v[i].product);
  }
}

void sg_perturb(struct sg_stream *s, const struct sg_perturb *p, uint64_t seed,
                bool *affected, size_t naffected) {
  struct sg_rng r;

  sg_rng_seed(&r, seed);
  sg_drop_dup(s, p, &r, affected, naffected);
  sg_swap(s, p, &r, affected, naffected);
  sg_flip(s, p, &r, affected, naffected);
  sg_junk(s, p, &r);
  sg_truncate(s, p, affected, naffected);
  sg_no_false_headers(s, affected, naffected);
}
