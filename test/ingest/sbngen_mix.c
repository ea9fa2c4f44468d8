/*
 * sbngen_mix.c - libsbngen's random products (sbngen.h): text bulletins,
 * NEXRAD level III products, GRIB 1 and 2 messages and GINI images with
 * realistic headings and random fields, drawn from the seeded generator
 * by a mix of kinds and sizes; and the manifest line that says what a
 * perfect ingester makes of each.
 */
#include "test/ingest/sbngen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_mix_default(struct sg_mix *m) {
  memset(m, 0, sizeof *m);
  m->weight[SG_TEXT] = 4;
  m->weight[SG_NEXRAD3] = 1;
  m->weight[SG_GRIB1] = 1;
  m->weight[SG_GRIB2] = 1;
  m->weight[SG_GINI] = 1;
  m->weight[SG_NKINDS] = 1; /* compressed GINI */
  m->min_size = 100;
  m->max_size = 5000;
  m->datastream = SG_DS_NMC;
}

static const char *sg_pick(struct sg_rng *r, const char *const *v, size_t n) {
  return v[sg_below(r, (uint32_t)n)];
}

#define SG_PICK(r, v) sg_pick(r, v, sizeof v / sizeof v[0])

static size_t sg_size(const struct sg_mix *m, struct sg_rng *r) {
  size_t lo = m->min_size, hi = m->max_size > lo ? m->max_size : lo;

  return lo + sg_below(r, (uint32_t)(hi - lo + 1));
}

/* "TTAAii CCCC DDHHMM", ii below 100. */
static void sg_random_heading(char *out, size_t n, const char *ttaa,
                              unsigned ii, struct sg_rng *r) {
  static const char *const cccc[] = {"KWBC", "KBOX", "KOKX", "PAFC", "KNHC"};

  snprintf(out, n, "%s%02u %s %02u%02u%02u", ttaa, ii % 100, SG_PICK(r, cccc),
           1 + sg_below(r, 28), sg_below(r, 24), sg_below(r, 60));
}

/* Lines of printable ASCII ending in CR CR LF; one body in eight has a
 * byte from 0x80 (the ASCII test then decides by where it falls). */
static void sg_text_body(struct sg_buf *b, size_t n, struct sg_rng *r) {
  while (b->n < n) {
    for (size_t k = 20 + sg_below(r, 50); k > 0; k--)
      sg_buf_byte(b, 0x20 + sg_below(r, 0x5F));
    sg_buf_str(b, "\r\r\n");
  }
  if (b->n > 0 && sg_below(r, 8) == 0)
    b->p[sg_below(r, (uint32_t)b->n)] = (uint8_t)(0x80 + sg_below(r, 0x80));
}

/* Bytes of any value, none a 0xFF that starts a frame header that would
 * pass: resynchronisation may scan them (sbngen_perturb.c). */
static void sg_binary_body(struct sg_buf *b, size_t n, struct sg_rng *r) {
  for (size_t i = 0; i < n; i++)
    sg_buf_byte(b, (unsigned)sg_rand(r));
  for (size_t o = n >= SG_FH_LEN ? n - SG_FH_LEN + 1 : 0; o-- > 0;)
    if (b->p[o] == 0xFF && sg_fh_valid(b->p + o))
      b->p[o] = 0xFE;
}

static void sg_random_text(struct sg_product *p, const struct sg_mix *m,
                           struct sg_rng *r, uint32_t seqno) {
  static const char *const ttaa[] = {"NOUS", "FXUS", "SRUS", "WWUS", "FPUS"};
  static const char *const nnn[] = {"AFD", "PNS", "ZFP", "RWR", "SPS"};
  char heading[32], pil[8];
  struct sg_buf body = {0};
  struct sg_nwstg in = {.kind = SG_TEXT, .datastream = m->datastream};

  sg_random_heading(heading, sizeof heading, SG_PICK(r, ttaa), sg_below(r, 100),
                    r);
  snprintf(pil, sizeof pil, "%s%c%c%c", SG_PICK(r, nnn), 'A' + sg_below(r, 26),
           'A' + sg_below(r, 26), 'A' + sg_below(r, 26));
  sg_text_body(&body, sg_size(m, r), r);
  in.ccb.mode = 1;
  in.heading = heading;
  in.pil = sg_below(r, 4) ? pil : NULL;
  in.body = body.p;
  in.body_len = body.n;
  sg_nwstg_product(p, &in, seqno);
  sg_buf_free(&body);
}

static void sg_random_nexrad(struct sg_product *p, const struct sg_mix *m,
                             struct sg_rng *r, uint32_t seqno) {
  static const unsigned nids[] = {2, 3, 5, 6, 7, 8}; /* SDUSn */
  char heading[32], pil[8];
  struct sg_buf body = {0};
  struct sg_nwstg in = {.kind = SG_NEXRAD3, .datastream = m->datastream};

  sg_random_heading(heading, sizeof heading, "SDUS",
                    10 * nids[sg_below(r, 6)] + sg_below(r, 10), r);
  snprintf(pil, sizeof pil, "N0Q%c%c%c", 'A' + sg_below(r, 26),
           'A' + sg_below(r, 26), 'A' + sg_below(r, 26));
  sg_binary_body(&body, sg_size(m, r), r);
  in.category = sg_below(r, 2) ? 1 : 5;
  in.ccb.mode = 2;
  in.ccb.user1 = sg_below(r, 2) ? 'F' : 0;
  in.heading = heading;
  in.pil = pil;
  in.body = body.p;
  in.body_len = body.n;
  sg_nwstg_product(p, &in, seqno);
  sg_buf_free(&body);
}

/* A GRIB message under a heading, CCB 2/1, category 4 (grid). */
static void sg_grib_product(struct sg_product *p, const struct sg_mix *m,
                            enum sg_kind kind, const struct sg_buf *msg,
                            const char *heading, uint32_t seqno) {
  struct sg_nwstg in = {.kind = kind,
                        .datastream = m->datastream,
                        .category = 4,
                        .ccb = {.mode = 2, .submode = 1},
                        .heading = heading,
                        .body = msg->p,
                        .body_len = msg->n};

  sg_nwstg_product(p, &in, seqno);
}

static void sg_random_grib1(struct sg_product *p, const struct sg_mix *m,
                            struct sg_rng *r, uint32_t seqno) {
  static const uint8_t centres[] = {7, 8, 9, 54, 59, 60, 74, 98, 150};
  static const uint8_t levels[] = {1, 100, 101, 105, 107};
  struct sg_grib1 g;
  struct sg_buf msg = {0};
  char heading[32];

  sg_grib1_defaults(&g);
  g.centre = centres[sg_below(r, sizeof centres)];
  g.process = (uint8_t)sg_below(r, 256);
  g.grid = (uint8_t)sg_below(r, 256);
  g.param = (uint8_t)(1 + sg_below(r, 255));
  g.level_type = levels[sg_below(r, sizeof levels)];
  g.level = (uint16_t)sg_below(r, 65536);
  g.year = 2020 + (int)sg_below(r, 10);
  g.month = (uint8_t)(1 + sg_below(r, 12));
  g.day = (uint8_t)(1 + sg_below(r, 28));
  g.hour = (uint8_t)sg_below(r, 24);
  g.p1 = (uint8_t)sg_below(r, 241);
  sg_grib1(&msg, &g);
  sg_random_heading(heading, sizeof heading, "HTQA", 50, r);
  sg_grib_product(p, m, SG_GRIB1, &msg, heading, seqno);
  size_t len = strlen(p->input);
  snprintf(p->input + len, sizeof p->input - len,
           " table=%u centre=%u process=%u grid=%u param=%u "
           "level=%u/%u time=%04d%02u%02u%02u%02u unit=%u p1=%u",
           g.table_version, g.centre, g.process, g.grid, g.param, g.level_type,
           g.level, g.year, g.month, g.day, g.hour, g.minute, g.time_unit,
           g.p1);
  sg_buf_free(&msg);
}

static void sg_random_grib2(struct sg_product *p, const struct sg_mix *m,
                            struct sg_rng *r, uint32_t seqno) {
  static const uint16_t centres[] = {7, 8, 161, 200};
  static const uint8_t levels[] = {1, 100, 103};
  struct sg_grib2 g;
  struct sg_buf msg = {0};
  char heading[32];

  sg_grib2_defaults(&g);
  g.centre = centres[sg_below(r, sizeof centres / sizeof centres[0])];
  g.category = (uint8_t)sg_below(r, 4);
  g.number = (uint8_t)sg_below(r, 10);
  g.process = (uint8_t)sg_below(r, 256);
  g.forecast = sg_below(r, 385);
  g.level1_type = levels[sg_below(r, sizeof levels)];
  g.level1_value = sg_below(r, 100000);
  sg_grib2(&msg, &g);
  sg_random_heading(heading, sizeof heading, "LTPA", 98, r);
  sg_grib_product(p, m, SG_GRIB2, &msg, heading, seqno);
  size_t len = strlen(p->input);
  snprintf(p->input + len, sizeof p->input - len,
           " discipline=%u centre=%u master=%u local=%u "
           "param=%u/%u process=%u forecast=%u level=%u/%u/%u",
           g.discipline, g.centre, g.master_version, g.local_version,
           g.category, g.number, g.process, g.forecast, g.level1_type,
           g.level1_scale, g.level1_value);
  sg_buf_free(&msg);
}

static void sg_random_gini(struct sg_product *p, const struct sg_mix *m,
                           struct sg_rng *r, uint32_t seqno, bool satz) {
  static const uint8_t platforms[] = {15, 16, 17, 18, 19, 40};
  char heading[32];
  struct sg_buf pixels = {0};
  struct sg_gini g = {.platform = platforms[sg_below(r, sizeof platforms)],
                      .source = 1,
                      .sector = (uint8_t)sg_below(r, 6),
                      .channel = (uint8_t)(1 + sg_below(r, 5)),
                      .res = (uint8_t)(1 + sg_below(r, 8)),
                      .year = 2020 + (int)sg_below(r, 10),
                      .month = (uint8_t)(1 + sg_below(r, 12)),
                      .day = (uint8_t)(1 + sg_below(r, 28)),
                      .hour = (uint8_t)sg_below(r, 24),
                      .minute = (uint8_t)sg_below(r, 60),
                      .nx = (uint16_t)(8 + sg_below(r, 505)),
                      .compressed = satz};
  size_t rows = sg_size(m, r) / g.nx;

  g.ny = (uint16_t)(rows < 1 ? 1 : rows > 1000 ? 1000 : rows);
  unsigned most = SG_BLOCK_MAX / g.nx < 255 ? SG_BLOCK_MAX / g.nx : 255;
  g.rows_per_block = (uint8_t)(1 + sg_below(r, most));
  sg_random_heading(heading, sizeof heading, "TIGE", sg_below(r, 100), r);
  g.heading = heading;
  sg_binary_body(&pixels, (size_t)g.nx * g.ny, r);
  g.pixels = pixels.p;
  sg_gini_product(p, &g, seqno);
  sg_buf_free(&pixels);
}

void sg_random_product(struct sg_product *p, const struct sg_mix *m,
                       struct sg_rng *r, uint32_t seqno) {
  unsigned total = 0, k = 0;

  for (int i = 0; i <= SG_NKINDS; i++)
    total += m->weight[i];
  unsigned pick = sg_below(r, total ? total : 1);
  while (k < SG_NKINDS && pick >= m->weight[k])
    pick -= m->weight[k++];
  switch (k) {
  case SG_TEXT:
    sg_random_text(p, m, r, seqno);
    break;
  case SG_NEXRAD3:
    sg_random_nexrad(p, m, r, seqno);
    break;
  case SG_GRIB1:
    sg_random_grib1(p, m, r, seqno);
    break;
  case SG_GRIB2:
    sg_random_grib2(p, m, r, seqno);
    break;
  default:
    sg_random_gini(p, m, r, seqno, k == SG_NKINDS);
    break;
  }
}

void sg_manifest_line(FILE *f, const struct sg_product *p, const char *prefix) {
  const struct sg_expect *e = &p->expect;

  if (e->known)
    fprintf(f, "%s%u\t%s\t%zu\t%s\t%s\t%s\n", prefix, p->seqno, e->feedtype,
            e->bytes.n, e->md5, e->ident, p->input);
  else
    fprintf(f, "%s%u\t%s\t-\t-\t%s\t%s\n", prefix, p->seqno, e->feedtype,
            e->ident, p->input);
}
