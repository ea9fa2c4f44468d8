/*
 * sbngen.c - libsbngen's products (sbngen.h): byte buffers, the seeded
 * generator, and the products themselves cut into blocks as NOAAPORT
 * sends them: NWSTG-path products (a CCB, then the heading, the PIL line
 * and the body, at most 4000 bytes a block) and GINI images (the heading
 * line and the PDB, then rows, then the filler row; or all of it as zlib
 * streams for "satz").  docs/noaaport.md, "Frames" and "Satellite names".
 */
#include "test/ingest/sbngen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

static void *sg_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);

  if (q == NULL) {
    fprintf(stderr, "sbngen: out of memory\n");
    abort();
  }
  return q;
}

void sg_buf_put(struct sg_buf *b, const void *src, size_t n) {
  if (n == 0)
    return;
  if (b->cap - b->n < n) {
    size_t cap = b->cap ? b->cap : 64;

    while (cap - b->n < n)
      cap *= 2;
    b->p = sg_xrealloc(b->p, cap);
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

void sg_buf_byte(struct sg_buf *b, unsigned c) {
  uint8_t x = (uint8_t)c;

  sg_buf_put(b, &x, 1);
}

void sg_buf_str(struct sg_buf *b, const char *s) {
  sg_buf_put(b, s, strlen(s));
}

void sg_buf_be(struct sg_buf *b, uint64_t v, int nbytes) {
  for (int i = nbytes - 1; i >= 0; i--)
    sg_buf_byte(b, (unsigned)(v >> (8 * i)) & 0xFF);
}

void sg_buf_free(struct sg_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* splitmix64: every value of the seed gives its own sequence. */
void sg_rng_seed(struct sg_rng *r, uint64_t seed) {
  r->s = seed;
}

uint64_t sg_rand(struct sg_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint32_t sg_below(struct sg_rng *r, uint32_t n) {
  return (uint32_t)(sg_rand(r) % n);
}

bool sg_chance(struct sg_rng *r, double p) {
  return (double)(sg_rand(r) >> 11) * 0x1.0p-53 < p;
}

void sg_product_free(struct sg_product *p) {
  for (size_t i = 0; i < p->nblocks; i++)
    sg_buf_free(&p->blocks[i]);
  free(p->blocks);
  sg_buf_free(&p->expect.bytes);
  memset(p, 0, sizeof *p);
}

static struct sg_buf *sg_new_block(struct sg_product *p) {
  p->blocks = sg_xrealloc(p->blocks, (p->nblocks + 1) * sizeof *p->blocks);
  memset(&p->blocks[p->nblocks], 0, sizeof *p->blocks);
  return &p->blocks[p->nblocks++];
}

/* The CCB: its length in 2-byte words with the top flag bit set as NWS
 * sends it, the mode, submode and user bytes at 10-13 ("Frames"). */
static void sg_put_ccb(struct sg_buf *b, const struct sg_ccb *c) {
  uint8_t ccb[SG_CCB_LEN] = {0x40, SG_CCB_LEN / 2};

  ccb[10] = c->mode;
  ccb[11] = c->submode;
  ccb[12] = c->user1;
  ccb[13] = c->user2;
  sg_buf_put(b, ccb, sizeof ccb);
}

static const char *const sg_kind_names[] = {"text", "nexrad3", "grib1", "grib2",
                                            "gini"};

static void sg_nwstg_input(struct sg_product *p, const struct sg_nwstg *in) {
  snprintf(p->input, sizeof p->input,
           "%s ds=%u type=%u cat=%u ccb=%u/%u user=%u/%u heading=%s pil=%s "
           "body=%zu",
           sg_kind_names[in->kind], p->datastream, p->type, p->category,
           in->ccb.mode, in->ccb.submode, in->ccb.user1, in->ccb.user2,
           in->heading, in->pil ? in->pil : "", in->body_len);
}

void sg_nwstg_product(struct sg_product *p, const struct sg_nwstg *in,
                      uint32_t seqno) {
  size_t max = in->block_max > SG_CCB_LEN ? in->block_max : SG_BLOCK_MAX;
  struct sg_buf text = {0};

  memset(p, 0, sizeof *p);
  p->kind = in->kind;
  p->datastream = in->datastream ? in->datastream : SG_DS_NMC;
  p->type = in->type ? in->type : 4;
  p->category = in->category ? in->category : 1;
  p->nwstg = true;
  p->seqno = seqno;
  sg_buf_str(&text, in->heading);
  sg_buf_str(&text, "\r\r\n");
  if (in->pil != NULL) {
    sg_buf_str(&text, in->pil);
    sg_buf_str(&text, "\r\r\n");
  }
  sg_buf_put(&text, in->body, in->body_len);
  struct sg_buf *b = sg_new_block(p);
  size_t take = text.n < max - SG_CCB_LEN ? text.n : max - SG_CCB_LEN;
  sg_put_ccb(b, &in->ccb);
  sg_buf_put(b, text.p, take);
  for (size_t off = take; off < text.n; off += take) {
    take = text.n - off < max ? text.n - off : max;
    sg_buf_put(sg_new_block(p), text.p + off, take);
  }
  sg_buf_free(&text);
  sg_nwstg_input(p, in);
  sg_expect(p);
}

/* The 512-byte product-definition block ("Satellite names"). */
static void sg_pdb(uint8_t pdb[SG_PDB_LEN], const struct sg_gini *g) {
  memset(pdb, 0, SG_PDB_LEN);
  pdb[0] = g->source;
  pdb[1] = g->platform;
  pdb[2] = g->sector;
  pdb[3] = g->channel;
  pdb[4] = (uint8_t)(g->ny >> 8); /* number of records */
  pdb[5] = (uint8_t)g->ny;
  pdb[6] = (uint8_t)(g->nx >> 8); /* record size */
  pdb[7] = (uint8_t)g->nx;
  pdb[8] = (uint8_t)(g->year - 1900);
  pdb[9] = g->month;
  pdb[10] = g->day;
  pdb[11] = g->hour;
  pdb[12] = g->minute;
  pdb[13] = g->second;
  pdb[14] = g->hundredths;
  pdb[16] = (uint8_t)(g->nx >> 8);
  pdb[17] = (uint8_t)g->nx;
  pdb[18] = (uint8_t)(g->ny >> 8);
  pdb[19] = (uint8_t)g->ny;
  pdb[41] = g->res;
}

/* src as one zlib stream, zlib's default level, appended to b. */
static void sg_deflate(struct sg_buf *b, const uint8_t *src, size_t n) {
  uLongf len = compressBound((uLong)n);
  uint8_t *z = sg_xrealloc(NULL, len);

  if (compress(z, &len, src, (uLong)n) != Z_OK) {
    fprintf(stderr, "sbngen: compress failed\n");
    abort();
  }
  sg_buf_put(b, z, len);
  free(z);
}

/* A block of bytes, compressed or not. */
static void sg_gini_block(struct sg_product *p, const struct sg_gini *g,
                          const uint8_t *src, size_t n) {
  struct sg_buf *b = sg_new_block(p);

  if (g->compressed)
    sg_deflate(b, src, n);
  else
    sg_buf_put(b, src, n);
}

static void sg_gini_block0(struct sg_product *p, const struct sg_gini *g) {
  struct sg_buf line = {0};
  uint8_t pdb[SG_PDB_LEN];

  sg_buf_str(&line, g->heading);
  sg_buf_str(&line, "\r\r\n");
  sg_pdb(pdb, g);
  struct sg_buf *b = sg_new_block(p);
  sg_buf_put(b, line.p, line.n);
  if (g->compressed) {
    sg_buf_put(&line, pdb, sizeof pdb);
    sg_deflate(b, line.p, line.n);
  } else {
    sg_buf_put(b, pdb, sizeof pdb);
  }
  sg_buf_free(&line);
}

static void sg_gini_input(struct sg_product *p, const struct sg_gini *g) {
  snprintf(p->input, sizeof p->input,
           "gini ds=%u type=%u heading=%s source=%u platform=%u sector=%u "
           "channel=%u res=%u date=%04d%02u%02u %02u%02u nx=%u ny=%u "
           "rows_per_block=%u compressed=%d",
           p->datastream, p->type, g->heading, g->source, g->platform,
           g->sector, g->channel, g->res, g->year, g->month, g->day, g->hour,
           g->minute, g->nx, g->ny, p->records_per_block, g->compressed);
}

void sg_gini_product(struct sg_product *p, const struct sg_gini *g,
                     uint32_t seqno) {
  size_t nx = g->nx ? g->nx : 1;
  size_t rpb = g->rows_per_block ? g->rows_per_block : SG_BLOCK_MAX / nx;

  rpb = rpb < 1 ? 1 : rpb > 255 ? 255 : rpb;
  memset(p, 0, sizeof *p);
  p->kind = SG_GINI;
  p->datastream = g->datastream ? g->datastream : SG_DS_GOES;
  p->type = g->type ? g->type : 1;
  p->category = 3;
  p->tt_extra = g->compressed ? SG_TT_COMPRESSED : 0;
  p->records_per_block = (uint8_t)rpb;
  p->blocks_per_record = 1;
  p->bytes_per_record = g->nx;
  p->seqno = seqno;
  uint8_t *zeros = g->pixels ? NULL : calloc(nx, g->ny ? g->ny : 1);
  const uint8_t *pixels = g->pixels ? g->pixels : zeros;
  if (pixels == NULL)
    abort();
  sg_gini_block0(p, g);
  for (size_t row = 0; row < g->ny; row += rpb) {
    size_t rows = g->ny - row < rpb ? g->ny - row : rpb;
    sg_gini_block(p, g, pixels + row * g->nx, rows * g->nx);
  }
  free(zeros);
  if (!g->no_filler) {
    uint8_t *filler = sg_xrealloc(NULL, nx);
    memset(filler, 0xF0, nx);
    sg_gini_block(p, g, filler, g->nx);
    free(filler);
  }
  sg_gini_input(p, g);
  sg_expect(p);
}
