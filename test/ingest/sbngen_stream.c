/*
 * sbngen_stream.c - libsbngen's frames (sbngen.h): a product's blocks as
 * SBN frames (frame header with its checksum, product-definition header,
 * the product-specific header on the first frame), time-sync and test
 * frames, the stream they make laid end to end, and the frame-header
 * check and frame length that split such a stream again
 * (docs/noaaport.md, "Frames").
 */
#include "test/ingest/sbngen.h"

#include <stdlib.h>
#include <string.h>

void sg_stream_init(struct sg_stream *s, uint32_t first_fh_seq) {
  memset(s, 0, sizeof *s);
  s->fh_seq = first_fh_seq;
  s->run = 1;
  s->source = 1;
  s->cut = SIZE_MAX;
}

void sg_stream_free(struct sg_stream *s) {
  for (size_t i = 0; i < s->n; i++)
    sg_buf_free(&s->v[i].b);
  free(s->v);
  memset(s, 0, sizeof *s);
}

static struct sg_frame *sg_new_frame(struct sg_stream *s,
                                     enum sg_frame_kind kind, long product) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (s->v == NULL)
      abort();
  }
  struct sg_frame *f = &s->v[s->n++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->product = product;
  return f;
}

/* The frame header: version 1 and 4 words, the checksum the plain sum of
 * bytes 0 to 13. */
static void sg_fh(struct sg_stream *s, struct sg_buf *b, uint8_t cmd,
                  uint8_t ds) {
  uint8_t h[SG_FH_LEN] = {0xFF, 0, 0x14, 0, cmd, ds, s->source, 0};
  unsigned sum = 0;

  for (int i = 0; i < 4; i++)
    h[8 + i] = (uint8_t)(s->fh_seq >> (24 - 8 * i));
  h[12] = (uint8_t)(s->run >> 8);
  h[13] = (uint8_t)s->run;
  for (int i = 0; i < 14; i++)
    sum += h[i];
  h[14] = (uint8_t)(sum >> 8);
  h[15] = (uint8_t)sum;
  sg_buf_put(b, h, sizeof h);
  s->fh_seq++;
}

struct sg_pdh {
  uint8_t tt;
  uint16_t hdr_len, block, size;
  uint8_t rpb, bpr;
  uint32_t seqno;
};

static void sg_pdh(struct sg_buf *b, const struct sg_pdh *h) {
  sg_buf_byte(b, 0x14); /* version 1, 4 words */
  sg_buf_byte(b, h->tt);
  sg_buf_be(b, h->hdr_len, 2);
  sg_buf_be(b, h->block, 2);
  sg_buf_be(b, 0, 2); /* data-block offset */
  sg_buf_be(b, h->size, 2);
  sg_buf_byte(b, h->rpb);
  sg_buf_byte(b, h->bpr);
  sg_buf_be(b, h->seqno, 4);
}

/* The product-specific header: option field 1, length 36, version 1. */
static void sg_psh(struct sg_buf *b, const struct sg_product *p) {
  uint8_t h[SG_PSH_LEN] = {1, 0, 0, SG_PSH_LEN, 1};

  h[8] = (uint8_t)(p->bytes_per_record >> 8);
  h[9] = (uint8_t)p->bytes_per_record;
  h[10] = p->type;
  h[11] = p->category;
  h[14] = (uint8_t)(p->nblocks >> 8);
  h[15] = (uint8_t)p->nblocks;
  sg_buf_put(b, h, sizeof h);
}

static void sg_interleave(struct sg_stream *s, uint8_t ds) {
  s->ndata++;
  if (s->timesync_every && s->ndata % s->timesync_every == 0)
    sg_put_timesync(s, ds);
  if (s->test_every && s->ndata % s->test_every == 0)
    sg_put_test(s, ds);
}

long sg_put_product(struct sg_stream *s, const struct sg_product *p) {
  long idx = s->nproducts++;

  if (p->nblocks > 0xFFFF)
    abort();
  for (size_t i = 0; i < p->nblocks; i++) {
    const struct sg_buf *d = &p->blocks[i];
    struct sg_frame *f = sg_new_frame(s, SG_F_DATA, idx);
    struct sg_pdh h = {.tt = p->tt_extra,
                       .hdr_len = SG_PDH_LEN + (i == 0 ? SG_PSH_LEN : 0),
                       .block = (uint16_t)i,
                       .size = (uint16_t)d->n,
                       .rpb = p->records_per_block,
                       .bpr = p->blocks_per_record,
                       .seqno = p->seqno};
    if (d->n > 0xFFFF)
      abort();
    h.tt |= i == 0 ? SG_TT_START | SG_TT_PSH : SG_TT_PROGRESS;
    h.tt |= i + 1 == p->nblocks ? SG_TT_END : 0;
    sg_fh(s, &f->b, 3, p->datastream);
    sg_pdh(&f->b, &h);
    if (i == 0)
      sg_psh(&f->b, p);
    sg_buf_put(&f->b, d->p, d->n);
    sg_interleave(s, p->datastream);
  }
  return idx;
}

/* A frame of command cmd with transfer type 0, no PSH and n zero bytes. */
static void sg_put_control(struct sg_stream *s, enum sg_frame_kind kind,
                           uint8_t cmd, uint8_t ds, uint16_t n) {
  struct sg_frame *f = sg_new_frame(s, kind, -1);
  struct sg_pdh h = {.hdr_len = SG_PDH_LEN, .size = n};

  sg_fh(s, &f->b, cmd, ds);
  sg_pdh(&f->b, &h);
  for (uint16_t i = 0; i < n; i++)
    sg_buf_byte(&f->b, 0);
}

void sg_put_timesync(struct sg_stream *s, uint8_t datastream) {
  sg_put_control(s, SG_F_TIMESYNC, 5, datastream, 24);
}

void sg_put_test(struct sg_stream *s, uint8_t datastream) {
  sg_put_control(s, SG_F_TEST, 10, datastream, 8);
}

void sg_stream_bytes(const struct sg_stream *s, struct sg_buf *out) {
  for (size_t i = 0; i < s->n; i++)
    sg_buf_put(out, s->v[i].b.p, s->v[i].b.n);
  if (out->n > s->cut)
    out->n = s->cut;
}

bool sg_fh_valid(const uint8_t fh[SG_FH_LEN]) {
  unsigned sum = 0;

  for (int i = 0; i < 14; i++)
    sum += fh[i];
  return sum == ((unsigned)fh[14] << 8 | fh[15]) && fh[0] == 0xFF &&
         (fh[4] == 3 || fh[4] == 5 || fh[4] == 10);
}

size_t sg_frame_len(const uint8_t *buf, size_t n) {
  if (n < SG_FH_LEN + SG_PDH_LEN || !sg_fh_valid(buf))
    return 0;
  size_t hdr = (size_t)buf[18] << 8 | buf[19];
  size_t size = (size_t)buf[24] << 8 | buf[25];
  return SG_FH_LEN + (hdr > SG_PDH_LEN ? hdr : SG_PDH_LEN) + size;
}

size_t sg_next_unit(const uint8_t *buf, size_t n) {
  size_t len = sg_frame_len(buf, n);

  if (len > 0)
    return len < n ? len : n;
  for (size_t o = 1; o + SG_FH_LEN <= n; o++)
    if (buf[o] == 0xFF && sg_fh_valid(buf + o))
      return o;
  return n;
}
