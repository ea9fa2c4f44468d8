/*
 * test_sbngen.c - libsbngen (sbngen.h), the tests' frame generator,
 * proven against LDM 6.15's own output: the streams of the vectors
 * (test/ingest/vectors/) made again byte for byte from the products'
 * inputs, the expected result (bytes, size, MD5, feedtype, identifier) of
 * every product LDM made from the vectors, the rules' observed examples
 * of docs/noaaport.md, the split into frames, and the perturbations (what
 * they do, that the seed replays them, that untouched products stay
 * whole).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test/ingest/sbngen.h"

/* ---- helpers ---- */

static struct sg_buf load(const char *name) {
  const char *dir = getenv("NP_VECTORS");
  char path[4096];
  struct sg_buf b = {0};
  uint8_t chunk[4096];
  size_t n;

  assert_non_null(dir);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    sg_buf_put(&b, chunk, n);
  fclose(f);
  return b;
}

/* got equals want[off..off + got->n), or the first difference shows. */
static void assert_same(const struct sg_buf *want, size_t off,
                        const struct sg_buf *got) {
  assert_true(off + got->n <= want->n);
  for (size_t i = 0; i < got->n; i++)
    if (got->p[i] != want->p[off + i]) {
      print_error("byte %zu: got %02x, want %02x\n", i, got->p[i],
                  want->p[off + i]);
      fail();
    }
}

static void stream_bytes(const struct sg_stream *s, struct sg_buf *out) {
  sg_buf_free(out);
  sg_stream_bytes(s, out);
}

/* A product of the NWSTG path, built, put in s, checked against LDM's
 * result, freed. */
static void put_nwstg(struct sg_stream *s, const struct sg_nwstg *in,
                      uint32_t seqno, const char *feed, size_t size,
                      const char *md5, const char *ident) {
  struct sg_product p;

  sg_nwstg_product(&p, in, seqno);
  assert_true(p.expect.known);
  assert_string_equal(p.expect.feedtype, feed);
  assert_int_equal(p.expect.bytes.n, size);
  assert_string_equal(p.expect.md5, md5);
  assert_string_equal(p.expect.ident, ident);
  sg_put_product(s, &p);
  sg_product_free(&p);
}

static struct sg_nwstg text(const char *heading, const char *pil,
                            const char *body, size_t n) {
  struct sg_nwstg in = {.kind = SG_TEXT,
                        .ccb = {.mode = 1},
                        .heading = heading,
                        .pil = pil,
                        .body = (const uint8_t *)body,
                        .body_len = n};
  return in;
}

/* ---- the vector streams made again ---- */

/* nwstg-basic.sbn, 500 to 503: text, PIL, BBB, trailers, the HDS ASCII
 * test, a time-sync frame, a product of three blocks. */
static void put_basic_text(struct sg_stream *s) {
  struct sg_nwstg in =
      text("NOUS41 KWBC 151200", "PNSWSH", "Test body line one\r\r\n", 21);
  put_nwstg(s, &in, 500, "IDS|DDPLUS", 66, "141fe6693c4e9fbf45bec9813dc7a74a",
            "NOUS41 KWBC 151200 /pPNSWSH");
  in = text("NOUS41 KWBC 151201 RRA", "PNS   ",
            "body\r\r\n\r\r\n\003\r\r\n\003", 15);
  put_nwstg(s, &in, 501, "IDS|DDPLUS", 56, "4b8785640ed646d2e6f7e7ae1ac425a0",
            "NOUS41 KWBC 151201 RRA /pPNS");
  sg_put_timesync(s, SG_DS_NMC);
  in = text("SXUS20 KWBC 151202", NULL,
            "\x80\x81"
            "binary\r\r\n",
            11);
  put_nwstg(s, &in, 502, "HDS", 47, "dda8c74f1ee7d20deb654c68b6e2c454",
            "SXUS20 KWBC 151202");
  struct sg_buf body = {0};
  for (int i = 0; i < 160; i++) {
    for (int k = 0; k < 70; k++)
      sg_buf_byte(&body, 'x');
    sg_buf_str(&body, "\r\r\n");
  }
  in = text("FXUS61 KBOX 151203", "AFDBOX", (const char *)body.p, body.n);
  put_nwstg(s, &in, 503, "IDS|DDPLUS", 11725,
            "476a92ce9e552ff4e6fc8e83992c118e", "FXUS61 KBOX 151203 /pAFDBOX");
  sg_buf_free(&body);
}

/* 504 to 506: NEXRAD with user1 0 (" !nids/"), with 'F', and SDUS4x. */
static void put_basic_nexrad(struct sg_stream *s) {
  uint8_t bytes[256];
  for (int i = 0; i < 256; i++)
    bytes[i] = (uint8_t)i;
  struct sg_nwstg in = {.kind = SG_NEXRAD3,
                        .ccb = {.mode = 2},
                        .heading = "SDUS51 KBOX 151204",
                        .pil = "N0QBOX",
                        .body = bytes,
                        .body_len = sizeof bytes};
  put_nwstg(s, &in, 504, "NEXRAD3", 301, "2d58d3de5d959c89bad93fe4454aec68",
            "SDUS51 KBOX 151204 /pN0QBOX !nids/");
  in.heading = "SDUS34 KBOX 151204";
  in.category = 5;
  in.ccb.user1 = 'F';
  in.ccb.user2 = 'Z';
  put_nwstg(s, &in, 505, "NEXRAD3", 301, "64c964a564440c66e58abaca5af26e3e",
            "SDUS34 KBOX 151204 /pN0QBOX");
  in.heading = "SDUS44 KBOX 151204";
  in.ccb.user2 = 0;
  put_nwstg(s, &in, 506, "HDS", 301, "fd3cc149dd4cf0e5bc23afa19626df52",
            "SDUS44 KBOX 151204 /pN0QBOX");
}

static void put_grib(struct sg_stream *s, const struct sg_buf *msg,
                     const char *heading, uint32_t seqno, const char *md5,
                     size_t size) {
  struct sg_nwstg in = {.kind = SG_GRIB1,
                        .category = 4,
                        .ccb = {.mode = 2, .submode = 1},
                        .heading = heading,
                        .body = msg->p,
                        .body_len = msg->n};
  put_nwstg(s, &in, seqno, "HDS", size, md5, "");
}

/* 507 to 511: GRIB 1 and 2 (the identifiers are the namers' to check). */
static void put_basic_grib(struct sg_stream *s) {
  struct sg_grib1 g1;
  struct sg_grib2 g2;
  struct sg_buf msg = {0};

  sg_grib1_defaults(&g1);
  g1.flag = 0x80; /* as the vector has it */
  sg_grib1(&msg, &g1);
  assert_int_equal(msg.n, 51);
  put_grib(s, &msg, "HTQA50 KWBC 151200", 507,
           "eae8e0f3bdd322ee9807bff607bb0db1", 87);
  sg_buf_free(&msg);
  sg_grib2_defaults(&g2);
  sg_grib2(&msg, &g2);
  assert_int_equal(msg.n, 179);
  put_grib(s, &msg, "LTPA98 KWBC 151200", 508,
           "3319395ba85e75b2317d18595b815226", 215);
  sg_buf_free(&msg);
  g2.centre = 200;
  g2.process = 50;
  sg_grib2(&msg, &g2);
  put_grib(s, &msg, "LTPA98 KWBC 151200", 509,
           "d701815ce6f1fec3ab8cb3b48a83bf5f", 215);
  sg_buf_free(&msg);
  sg_grib2_defaults(&g2);
  g2.local_version = 0;
  g2.category = g2.number = 0; /* TMP */
  g2.level1_type = 103;        /* 2 m above ground */
  g2.level1_value = 2;
  sg_grib2(&msg, &g2);
  s->fh_seq = 1016; /* three frame numbers skipped, as in the vector */
  put_grib(s, &msg, "LTPA98 KWBC 151200", 510,
           "628e904c91718f200a43f38f029a5f20", 215);
  sg_buf_free(&msg);
  sg_put_test(s, SG_DS_NMC);
  g1.centre = 150;
  g1.process = 33;
  g1.param = 61;
  g1.level_type = 1;
  g1.level = 0;
  g1.p1 = 0;
  g1.p2 = 6;
  g1.time_range = 4;
  sg_grib1(&msg, &g1);
  put_grib(s, &msg, "HTQA50 KXYZ 151200", 511,
           "4c425fdc329caa007e4d356d56d11290", 87);
  sg_buf_free(&msg);
}

static void test_vector_nwstg_basic(void **state) {
  (void)state;
  struct sg_buf want = load("nwstg-basic.sbn"), got = {0};
  struct sg_stream s;

  sg_stream_init(&s, 1000);
  put_basic_text(&s);
  put_basic_nexrad(&s);
  put_basic_grib(&s);
  struct sg_nwstg in = text("TIGE01 KNES 151200", NULL, "image", 5);
  in.type = 2; /* GOES-W */
  in.category = 3;
  put_nwstg(&s, &in, 512, "NIMAGE", 41, "dbd76761f1ca1b709e5da918a2067097",
            "TIGE01 KNES 151200");
  stream_bytes(&s, &got);
  /* the vector starts with a line of junk, "garbage before\n" */
  assert_int_equal(got.n + 15, want.n);
  assert_same(&want, 15, &got);
  sg_buf_free(&got);
  sg_buf_free(&want);
  sg_stream_free(&s);
}

/* gini.sbn: an 8 x 4 image stored as PNG, then the same as "satz". */
static void test_vector_gini(void **state) {
  (void)state;
  struct sg_buf want = load("gini.sbn"), got = {0};
  uint8_t pixels[32];
  struct sg_gini g = {.heading = "TIGE04 KNES 151200",
                      .source = 1,
                      .platform = 19,
                      .sector = 1,
                      .channel = 4,
                      .res = 4,
                      .year = 2024,
                      .month = 3,
                      .day = 15,
                      .hour = 12,
                      .nx = 8,
                      .ny = 4,
                      .rows_per_block = 1,
                      .pixels = pixels};
  struct sg_stream s;
  struct sg_product p;

  for (int i = 0; i < 32; i++)
    pixels[i] = (uint8_t)(10 * (i / 8) + i % 8);
  sg_stream_init(&s, 1);
  sg_gini_product(&p, &g, 1);
  assert_int_equal(p.nblocks, 6); /* block 0, four rows, the filler */
  assert_string_equal(p.expect.feedtype, "NIMAGE");
  assert_true(p.expect.known);
  assert_int_equal(p.expect.bytes.n, 612);
  /* the PNG's bytes are libpng's and zlib's (docs/noaaport.md,
   * "Reassembly"): those scripts/dev.sh installs give LDM's */
  assert_string_equal(p.expect.md5, "ce773c4223aa4b6c3ae58a6d39fbbe79");
  sg_put_product(&s, &p);
  sg_product_free(&p);
  for (int i = 0; i < 32; i++)
    pixels[i] = (uint8_t)(i / 8);
  g.pixels = pixels;
  g.compressed = g.no_filler = true;
  sg_gini_product(&p, &g, 2);
  assert_int_equal(p.nblocks, 5);
  assert_int_equal(p.expect.bytes.n, 119);
  assert_string_equal(p.expect.md5, "2b5fcfb260df8b9e8005095ce1e10909");
  sg_put_product(&s, &p);
  sg_product_free(&p);
  stream_bytes(&s, &got);
  assert_int_equal(got.n, 1116); /* the third product is a broken one */
  assert_same(&want, 0, &got);
  sg_buf_free(&got);
  sg_buf_free(&want);
  sg_stream_free(&s);
}

/* ---- the expected result of every product LDM made from the vectors ---- */

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static void add_block(struct sg_product *p, const uint8_t *data, size_t n) {
  p->blocks = realloc(p->blocks, (p->nblocks + 1) * sizeof *p->blocks);
  assert_non_null(p->blocks);
  memset(&p->blocks[p->nblocks], 0, sizeof *p->blocks);
  sg_buf_put(&p->blocks[p->nblocks++], data, n);
}

/* A product started by frame f (FH, PDH, PSH): its headers' fields. */
static void start_product(struct sg_product *p, const uint8_t *f) {
  const uint8_t *psh = f + SG_FH_LEN + SG_PDH_LEN;

  memset(p, 0, sizeof *p);
  p->datastream = f[5];
  p->type = psh[10];
  p->category = psh[11];
  p->nwstg = !(p->datastream == 1 || p->datastream == 2 ||
               (p->datastream == 4 && p->category == 3));
  p->tt_extra = f[17] & SG_TT_COMPRESSED;
  p->records_per_block = f[26];
  p->seqno = be32(f + 28);
}

/* The products of a stream rebuilt from its frames: each run of blocks
 * that a frame with a PSH starts, whole and in order, gets its expected
 * result; the others keep none. */
static size_t rebuild(const struct sg_buf *in, struct sg_product *v,
                      size_t max) {
  struct sg_product *cur = NULL;
  size_t n = 0, nfrag = 0;

  for (size_t off = 0, len; off < in->n; off += len) {
    const uint8_t *f = in->p + off;
    len = sg_next_unit(f, in->n - off);
    if (sg_frame_len(f, len) != len || f[4] != 3)
      continue; /* junk, a time-sync or test frame */
    size_t hl = (size_t)f[18] << 8 | f[19];
    unsigned block = (unsigned)f[20] << 8 | f[21];
    if (hl > SG_PDH_LEN) {
      assert_true(n < max);
      cur = &v[n++];
      start_product(cur, f);
      nfrag = (size_t)f[46] << 8 | f[47];
    } else if (cur == NULL || cur->seqno != be32(f + 28) ||
               block != cur->nblocks) {
      cur = NULL;
      continue;
    }
    add_block(cur, f + SG_FH_LEN + hl, len - SG_FH_LEN - hl);
    if (cur->nblocks == nfrag) {
      sg_expect(cur);
      cur = NULL;
    }
  }
  return n;
}

/* One line of a vector's products.tsv against the rebuilt products. */
static void check_line(char *line, struct sg_product *v, size_t n) {
  char *f[5];

  for (int i = 0; i < 5; i++) {
    f[i] = line;
    line = strchr(line, i < 4 ? '\t' : '\n');
    assert_non_null(line);
    *line++ = 0;
  }
  const struct sg_product *p = NULL;
  for (size_t i = 0; i < n; i++)
    if (v[i].seqno == strtoul(f[2], NULL, 10) && v[i].expect.feedtype)
      p = &v[i]; /* the last one: an earlier start was abandoned */
  assert_non_null(p);
  assert_string_equal(p->expect.feedtype, f[1]);
  assert_true(p->expect.known);
  assert_int_equal(p->expect.bytes.n, strtoul(f[3], NULL, 10));
  assert_string_equal(p->expect.md5, f[4]);
  if (p->expect.ident[0]) /* computed: text and NEXRAD */
    assert_string_equal(p->expect.ident, f[0]);
}

static int check_vector(const char *name) {
  char path[256];
  struct sg_product v[64];
  int lines = 0;

  snprintf(path, sizeof path, "%s.sbn", name);
  struct sg_buf sbn = load(path);
  size_t n = rebuild(&sbn, v, 64);
  snprintf(path, sizeof path, "%s.products.tsv", name);
  struct sg_buf tsv = load(path);
  sg_buf_byte(&tsv, 0);
  char *save, *line;
  assert_non_null(strtok_r((char *)tsv.p, "\n", &save)); /* the header */
  while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
    char copy[2048];
    snprintf(copy, sizeof copy, "%s\n", line);
    check_line(copy, v, n);
    lines++;
  }
  for (size_t i = 0; i < n; i++)
    sg_product_free(&v[i]);
  sg_buf_free(&sbn);
  sg_buf_free(&tsv);
  return lines;
}

static void test_vector_expectations(void **state) {
  (void)state;
  assert_int_equal(check_vector("nwstg-basic"), 13);
  assert_int_equal(check_vector("nwstg-errors"), 19);
  assert_int_equal(check_vector("grib1"), 4);
  assert_int_equal(check_vector("grib2"), 13);
  assert_int_equal(check_vector("gini"), 2);
  assert_int_equal(check_vector("gini-fallback"), 4);
}

/* ---- the rules' observed examples (docs/noaaport.md) ---- */

static void test_fos_header(void **state) {
  (void)state;
  uint8_t h[11];

  sg_fos_header(h, 500);
  assert_memory_equal(h, "\001\r\r\n500 \r\r\n", 11);
  sg_fos_header(h, 1234567);
  assert_memory_equal(h, "\001\r\r\n567 \r\r\n", 11);
  sg_fos_header(h, 0xFFFFFFF9u); /* -7 as a signed int */
  assert_memory_equal(h, "\001\r\r\n-07 \r\r\n", 11);
  sg_fos_header(h, (uint32_t)-123); /* 12 bytes written, 11 counted */
  assert_memory_equal(h, "\001\r\r\n-123 \r\r", 11);
}

/* buf: the FOS header and n - 11 bytes of 'a', one byte set at i. */
static bool ascii_with(size_t n, size_t i, uint8_t c) {
  uint8_t buf[400];

  assert_true(n <= sizeof buf);
  sg_fos_header(buf, 1);
  memset(buf + 11, 'a', n - 11);
  buf[i] = c;
  return sg_ascii_ok(buf, n);
}

static void test_ascii(void **state) {
  (void)state;
  assert_true(ascii_with(300, 50, 'b'));
  assert_false(ascii_with(300, 50, 0x80)); /* among the first 100 */
  assert_true(ascii_with(300, 150, 0x90)); /* between the two ranges */
  assert_true(ascii_with(300, 299, 0x90)); /* the last byte: not checked */
  assert_false(ascii_with(300, 298, 0x90));
  assert_false(ascii_with(300, 100, 0x90)); /* the ranges' ends: 100 */
  assert_true(ascii_with(300, 101, 0x90));
  assert_true(ascii_with(300, 198, 0x90));
  assert_false(ascii_with(300, 199, 0x90)); /* and N - 101 */
  assert_false(ascii_with(300, 295, 0x03)); /* ETX near the end */
  assert_true(ascii_with(300, 60, 0x7F));   /* DEL is printable */
  assert_true(ascii_with(300, 60, 0x1E));   /* RS, HT, NUL allowed */
  assert_true(ascii_with(300, 61, '\t'));
  assert_true(ascii_with(300, 62, 0));
  assert_false(ascii_with(40, 38, 0x01)); /* small: the ranges merge */
}

static void assert_heading(const char *in, const char *want) {
  char out[256];
  size_t next = 0;
  bool ok = sg_heading((const uint8_t *)in, strlen(in), out, sizeof out, &next);

  if (want == NULL) {
    assert_false(ok);
    return;
  }
  assert_true(ok);
  assert_string_equal(out, want);
  assert_int_equal(in[next - 1], '\n');
}

static void assert_pil(const char *line, const char *want) {
  char pil[8];
  bool ok = sg_pil((const uint8_t *)line, strlen(line), pil);

  assert_int_equal(ok, want != NULL);
  if (want)
    assert_string_equal(pil, want);
}

static void test_heading_and_pil(void **state) {
  (void)state;
  assert_heading("SRUS KWBC 151303\r\r\n", "SRUS00 KWBC 151303");
  assert_heading("SRUS8 KWBC 151303 RR A\r\r\n", "SRUS08 KWBC 151303 RR");
  assert_heading("NOUS41 KWBC 151201 RRA\r\r\n", "NOUS41 KWBC 151201 RRA");
  assert_heading("NOUS41   KWBC  151200\r\r\n", "NOUS41 KWBC 151200");
  assert_heading("NOUS41 KWBC 151200Z\r\r\n", "NOUS41 KWBC 151200 Z");
  assert_heading("hello world, this is not a WMO header at all\r\r\n", NULL);
  assert_heading("NOUS41 KWBC 151200", NULL); /* no LF */
  assert_pil("PNSWSH\r\r\n", "PNSWSH");
  assert_pil("PNS   \r\r\n", "PNS");
  assert_pil("123456\r\r\n", NULL);
  assert_pil("AB CDE\r\r\n", NULL);
  assert_pil("ABCDE\r\r\n", NULL);
  assert_pil("^NMCABCDEF\r\r\n", "ABCDEF");
  assert_pil("GRIB\r\r\n", NULL);
  assert_pil("PNSWSH", NULL); /* no LF in the block */
}

/* ---- frames ---- */

static unsigned be16(const uint8_t *p) {
  return (unsigned)p[0] << 8 | p[1];
}

static void check_fh(const uint8_t *f, uint8_t cmd, uint8_t ds, uint32_t seq) {
  unsigned sum = 0;

  for (int i = 0; i < 14; i++)
    sum += f[i];
  assert_int_equal(f[0], 0xFF);
  assert_int_equal(f[2], 0x14); /* version 1, 4 words */
  assert_int_equal(f[4], cmd);
  assert_int_equal(f[5], ds);
  assert_int_equal(f[6], 1); /* the primary NCF */
  assert_int_equal(be32(f + 8), seq);
  assert_int_equal(be16(f + 12), 1); /* run */
  assert_int_equal(be16(f + 14), sum);
  assert_true(sg_fh_valid(f));
}

/* A text product of three blocks: headers, CCB on block 0 only, at most
 * 4000 bytes a block, the data whole again once the CCB is taken off. */
static void test_split(void **state) {
  (void)state;
  uint8_t body[9000];
  struct sg_nwstg in = text("FXUS61 KBOX 151203", "AFDBOX", NULL, 0);
  struct sg_product p;
  struct sg_stream s;
  struct sg_buf data = {0};

  for (size_t i = 0; i < sizeof body; i++)
    body[i] = (uint8_t)('a' + i % 26);
  in.body = body;
  in.body_len = sizeof body;
  sg_nwstg_product(&p, &in, 77);
  assert_int_equal(p.nblocks, 3);
  sg_stream_init(&s, 0xFFFFFFFE); /* a checksum well above 255 */
  sg_put_product(&s, &p);
  assert_int_equal(s.n, 3);
  static const uint8_t tt[] = {SG_TT_START | SG_TT_PSH, SG_TT_PROGRESS,
                               SG_TT_PROGRESS | SG_TT_END};
  for (size_t i = 0; i < 3; i++) {
    const uint8_t *f = s.v[i].b.p, *pdh = f + SG_FH_LEN;
    size_t hl = i == 0 ? SG_PDH_LEN + SG_PSH_LEN : SG_PDH_LEN;
    check_fh(f, 3, SG_DS_NMC, 0xFFFFFFFEu + (uint32_t)i);
    assert_int_equal(pdh[0], 0x14);
    assert_int_equal(pdh[1], tt[i]);
    assert_int_equal(be16(pdh + 2), hl);
    assert_int_equal(be16(pdh + 4), i);
    assert_int_equal(be16(pdh + 6), 0);
    assert_int_equal(be32(pdh + 12), 77);
    size_t size = be16(pdh + 8);
    assert_true(size <= SG_BLOCK_MAX);
    assert_int_equal(s.v[i].b.n, SG_FH_LEN + hl + size);
    assert_int_equal(sg_frame_len(f, s.v[i].b.n), s.v[i].b.n);
    const uint8_t *d = f + SG_FH_LEN + hl;
    if (i == 0) {
      const uint8_t *psh = pdh + SG_PDH_LEN;
      assert_int_equal(be16(psh + 2), SG_PSH_LEN);
      assert_int_equal(psh[10], 4); /* NWSTG */
      assert_int_equal(psh[11], 1); /* text */
      assert_int_equal(be16(psh + 14), 3);
      assert_int_equal(d[0], 0x40); /* CCB: 12 words */
      assert_int_equal(d[1], 12);
      assert_int_equal(d[10], 1); /* mode 1 */
      d += SG_CCB_LEN;
      size -= SG_CCB_LEN;
    }
    sg_buf_put(&data, d, size);
  }
  assert_int_equal(data.n, 21 + 9 + sizeof body);
  assert_memory_equal(data.p, "FXUS61 KBOX 151203\r\r\nAFDBOX\r\r\n", 30);
  assert_memory_equal(data.p + 30, body, sizeof body);
  assert_int_equal(p.expect.bytes.n, 11 + data.n + 4);
  sg_buf_free(&data);
  sg_product_free(&p);
  sg_stream_free(&s);
}

/* GINI: records-per-block rows a block, the filler last, "satz" marked
 * compressed in every frame. */
static void test_split_gini(void **state) {
  (void)state;
  struct sg_gini g = {.heading = "TIGE04 KNES 151200",
                      .year = 2024,
                      .nx = 10,
                      .ny = 7,
                      .rows_per_block = 3};
  struct sg_product p;
  struct sg_stream s;

  sg_gini_product(&p, &g, 5);
  assert_int_equal(p.nblocks, 5); /* PDB, 3 + 3 + 1 rows, filler */
  assert_int_equal(p.blocks[0].n, 21 + SG_PDB_LEN);
  assert_int_equal(p.blocks[1].n, 30);
  assert_int_equal(p.blocks[3].n, 10);
  assert_int_equal(p.blocks[4].p[9], 0xF0);
  assert_int_equal(p.expect.bytes.p[21 + 42], 128); /* stored as PNG */
  assert_memory_equal(p.expect.bytes.p + 21 + SG_PDB_LEN, "\x89PNG", 4);
  sg_product_free(&p);
  g.compressed = true;
  sg_gini_product(&p, &g, 6);
  sg_stream_init(&s, 1);
  sg_put_product(&s, &p);
  assert_int_equal(s.n, 5);
  for (size_t i = 0; i < s.n; i++) {
    check_fh(s.v[i].b.p, 3, SG_DS_GOES, 1 + (uint32_t)i);
    assert_true(s.v[i].b.p[17] & SG_TT_COMPRESSED);
    assert_int_equal(s.v[i].b.p[26], 3); /* records per block */
  }
  const uint8_t *psh = s.v[0].b.p + SG_FH_LEN + SG_PDH_LEN;
  assert_int_equal(be16(psh + 8), 10); /* bytes per record */
  assert_int_equal(psh[10], 1);        /* GOES-E */
  assert_int_equal(psh[11], 3);        /* image */
  assert_string_equal(p.expect.feedtype, "NIMAGE");
  size_t all = 0; /* "satz": every block as it is */
  for (size_t i = 0; i < p.nblocks; i++)
    all += p.blocks[i].n;
  assert_int_equal(p.expect.bytes.n, all);
  sg_product_free(&p);
  sg_stream_free(&s);
}

/* Time-sync and test frames every so many data frames, FH numbers
 * consecutive across all of them. */
static void test_control_frames(void **state) {
  (void)state;
  struct sg_nwstg in = text("NOUS41 KWBC 151200", NULL, "x\r\r\n", 4);
  struct sg_product p;
  struct sg_stream s;

  sg_stream_init(&s, 10);
  s.timesync_every = 2;
  s.test_every = 3;
  sg_nwstg_product(&p, &in, 1);
  for (int i = 0; i < 6; i++)
    sg_put_product(&s, &p);
  static const enum sg_frame_kind want[] = {
      SG_F_DATA, SG_F_DATA,     SG_F_TIMESYNC, SG_F_DATA,
      SG_F_TEST, SG_F_DATA,     SG_F_TIMESYNC, SG_F_DATA,
      SG_F_DATA, SG_F_TIMESYNC, SG_F_TEST};
  assert_int_equal(s.n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < s.n; i++) {
    static const uint8_t cmd[] = {3, 5, 10};
    assert_int_equal(s.v[i].kind, want[i]);
    check_fh(s.v[i].b.p, cmd[want[i]], SG_DS_NMC, 10 + (uint32_t)i);
    if (want[i] != SG_F_DATA) { /* transfer type 0, no PSH */
      assert_int_equal(s.v[i].b.p[17], 0);
      assert_int_equal(be16(s.v[i].b.p + 18), SG_PDH_LEN);
    }
  }
  sg_product_free(&p);
  sg_stream_free(&s);
}

/* A stream cut into frames and the runs of bytes between them. */
static void test_next_unit(void **state) {
  (void)state;
  struct sg_nwstg in = text("NOUS41 KWBC 151200", NULL, "x\r\r\n", 4);
  struct sg_product p;
  struct sg_stream s;
  struct sg_buf b = {0}, frames = {0};

  sg_stream_init(&s, 1);
  sg_nwstg_product(&p, &in, 1);
  sg_put_product(&s, &p);
  sg_put_timesync(&s, SG_DS_NMC);
  sg_stream_bytes(&s, &frames);
  size_t f0 = s.v[0].b.n, f1 = s.v[1].b.n;
  sg_buf_str(&b, "junk\377\001");
  sg_buf_put(&b, frames.p, frames.n);
  sg_buf_put(&b, frames.p, 20); /* a frame cut short */
  assert_int_equal(sg_next_unit(b.p, b.n), 6);
  assert_int_equal(sg_next_unit(b.p + 6, b.n - 6), f0);
  assert_int_equal(sg_next_unit(b.p + 6 + f0, b.n - 6 - f0), f1);
  assert_int_equal(sg_next_unit(b.p + 6 + f0 + f1, 20), 20);
  assert_int_equal(sg_frame_len(b.p + 6, 31), 0); /* no whole PDH */
  b.p[6 + 3] ^= 1;                                /* a header damaged */
  assert_false(sg_fh_valid(b.p + 6));
  assert_int_equal(sg_next_unit(b.p, b.n), 6 + f0);
  sg_buf_free(&b);
  sg_buf_free(&frames);
  sg_product_free(&p);
  sg_stream_free(&s);
}

/* ---- perturbations ---- */

#define NPRODUCTS 120

/* Random products, as generated (orig) and as perturbed (s). */
struct world {
  struct sg_stream s, orig;
  bool affected[NPRODUCTS];
  struct sg_buf bytes;
};

static void world_make(struct world *w, uint64_t seed,
                       const struct sg_perturb *pt) {
  struct sg_mix m;
  struct sg_rng r;

  memset(w, 0, sizeof *w);
  sg_mix_default(&m);
  m.min_size = 50;
  m.max_size = 6000; /* one to two blocks */
  sg_rng_seed(&r, seed);
  sg_stream_init(&w->s, 1);
  sg_stream_init(&w->orig, 1);
  w->s.timesync_every = w->orig.timesync_every = 5;
  w->s.test_every = w->orig.test_every = 17;
  for (uint32_t i = 0; i < NPRODUCTS; i++) {
    struct sg_product p;
    sg_random_product(&p, &m, &r, 100 + i);
    sg_put_product(&w->s, &p);
    sg_put_product(&w->orig, &p);
    sg_product_free(&p);
  }
  sg_perturb(&w->s, pt, seed, w->affected, NPRODUCTS);
  sg_stream_bytes(&w->s, &w->bytes);
}

static void world_free(struct world *w) {
  sg_stream_free(&w->s);
  sg_stream_free(&w->orig);
  sg_buf_free(&w->bytes);
}

static bool same_frame(const struct sg_frame *a, const struct sg_frame *b) {
  return a->b.n == b->b.n && memcmp(a->b.p, b->b.p, a->b.n) == 0;
}

static size_t naffected(const struct world *w) {
  size_t n = 0;

  for (size_t i = 0; i < NPRODUCTS; i++)
    n += w->affected[i];
  return n;
}

static uint64_t test_seed(const char *test) {
  const char *env = getenv("PQ_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);

  print_message("%s seed %llu (PQ_TEST_SEED)\n", test,
                (unsigned long long)seed);
  return seed;
}

static void test_perturb_none(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world w;
  struct sg_buf orig = {0};

  sg_perturb_none(&pt);
  world_make(&w, 1, &pt);
  sg_stream_bytes(&w.orig, &orig);
  assert_int_equal(w.bytes.n, orig.n);
  assert_memory_equal(w.bytes.p, orig.p, orig.n);
  assert_int_equal(naffected(&w), 0);
  sg_buf_free(&orig);
  world_free(&w);
}

/* A drop really drops: what is left is the original frames in order,
 * fewer of them, and exactly the products that lost one are flagged. */
static void test_perturb_drop(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world w;
  bool lost[NPRODUCTS] = {false};

  sg_perturb_none(&pt);
  pt.drop = 1;
  world_make(&w, 2, &pt);
  assert_int_equal(w.s.n, 0);
  assert_int_equal(w.bytes.n, 0);
  assert_int_equal(naffected(&w), NPRODUCTS);
  world_free(&w);
  pt.drop = 0.2;
  world_make(&w, test_seed("test_perturb_drop"), &pt);
  assert_true(w.s.n < w.orig.n);
  size_t k = 0;
  for (size_t i = 0; i < w.orig.n; i++) {
    if (k < w.s.n && same_frame(&w.s.v[k], &w.orig.v[i]))
      k++;
    else if (w.orig.v[i].product >= 0)
      lost[w.orig.v[i].product] = true;
  }
  assert_int_equal(k, w.s.n); /* a subsequence */
  for (size_t i = 0; i < NPRODUCTS; i++)
    assert_int_equal(w.affected[i], lost[i]);
  world_free(&w);
}

/* A duplicate follows its original; its product is flagged. */
static void test_perturb_dup(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world w;
  size_t dups = 0;

  sg_perturb_none(&pt);
  pt.dup = 0.2;
  world_make(&w, test_seed("test_perturb_dup"), &pt);
  for (size_t i = 0, k = 0; i < w.orig.n; i++, k++) {
    assert_true(same_frame(&w.s.v[k], &w.orig.v[i]));
    if (k + 1 < w.s.n && same_frame(&w.s.v[k + 1], &w.orig.v[i])) {
      k++;
      dups++;
      if (w.orig.v[i].product >= 0)
        assert_true(w.affected[w.orig.v[i].product]);
    }
  }
  assert_int_equal(w.s.n, w.orig.n + dups);
  assert_true(dups > 0);
  world_free(&w);
}

/* One byte flipped, never a PDH length; a frame header flipped fails. */
static void test_perturb_flip(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world w;
  size_t damaged = 0;

  sg_perturb_none(&pt);
  pt.flip = 0.3;
  world_make(&w, test_seed("test_perturb_flip"), &pt);
  assert_int_equal(w.s.n, w.orig.n);
  for (size_t i = 0; i < w.s.n; i++) {
    const struct sg_buf *a = &w.s.v[i].b, *b = &w.orig.v[i].b;
    size_t flips = 0, pos = 0;
    assert_int_equal(a->n, b->n);
    for (size_t k = 0; k < a->n; k++)
      if (a->p[k] != b->p[k] && !(b->p[k] == 0xFF && a->p[k] == 0xFE)) {
        flips++;
        pos = k;
      }
    assert_int_equal(flips, w.s.v[i].damaged ? 1 : 0);
    if (!w.s.v[i].damaged)
      continue;
    damaged++;
    assert_true(w.affected[w.s.v[i].product]);
    assert_true(pos != 16 && pos != 18 && pos != 19 && pos != 24 && pos != 25);
    assert_int_equal(sg_fh_valid(a->p), pos >= SG_FH_LEN);
  }
  assert_true(damaged > 0);
  world_free(&w);
}

/* Junk between frames: the frames stay as they were, resynchronisation
 * finds each of them, and no product is flagged. */
static void test_perturb_junk(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world w;
  size_t junk = 0, k = 0;

  sg_perturb_none(&pt);
  pt.junk = 0.5;
  pt.junk_max = 40;
  world_make(&w, test_seed("test_perturb_junk"), &pt);
  for (size_t off = 0, len; off < w.bytes.n; off += len) {
    len = sg_next_unit(w.bytes.p + off, w.bytes.n - off);
    if (sg_frame_len(w.bytes.p + off, len) == len) {
      assert_true(k < w.orig.n);
      assert_int_equal(len, w.orig.v[k].b.n);
      assert_memory_equal(w.bytes.p + off, w.orig.v[k].b.p, len);
      k++;
    } else {
      junk++;
    }
  }
  assert_int_equal(k, w.orig.n);
  assert_true(junk > 0);
  assert_int_equal(naffected(&w), 0);
  world_free(&w);
}

/* The stream cut: the products past the cut are flagged, no other. */
static void test_perturb_truncate(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world w;
  struct sg_buf orig = {0};

  sg_perturb_none(&pt);
  world_make(&w, 3, &pt);
  sg_stream_bytes(&w.orig, &orig);
  world_free(&w);
  pt.truncate = orig.n / 2 + 7;
  world_make(&w, 3, &pt);
  assert_int_equal(w.bytes.n, pt.truncate);
  assert_memory_equal(w.bytes.p, orig.p, pt.truncate);
  size_t end = 0;
  for (size_t i = 0; i < w.orig.n; i++) {
    end += w.orig.v[i].b.n;
    long k = w.orig.v[i].product;
    if (k >= 0 && end > pt.truncate)
      assert_true(w.affected[k]);
    else if (k >= 0 && i + 1 < w.orig.n && w.orig.v[i + 1].product != k &&
             end + w.orig.v[i + 1].b.n <= pt.truncate)
      assert_false(w.affected[k]); /* its last frame, well before */
  }
  sg_buf_free(&orig);
  world_free(&w);
}

/* A frame header that would pass, hidden in junk, in a damaged frame
 * after its first byte, or in the data of a touched product, is defused:
 * resynchronisation could take it for a frame. */
static void test_perturb_false_header(void **state) {
  (void)state;
  struct sg_stream s, hidden;
  struct sg_product p;
  struct sg_perturb pt;
  struct sg_buf body = {0};
  bool affected[3] = {false, false, true};

  sg_stream_init(&hidden, 1);
  sg_put_timesync(&hidden, SG_DS_NMC); /* a frame header that passes */
  sg_buf_str(&body, "x\r\r\n");
  sg_buf_put(&body, hidden.v[0].b.p, hidden.v[0].b.n);
  struct sg_nwstg in = text("NOUS41 KWBC 151200", NULL, (char *)body.p, body.n);
  sg_nwstg_product(&p, &in, 1);
  sg_stream_init(&s, 1);
  for (int i = 0; i < 3; i++)
    sg_put_product(&s, &p);
  s.v[0].kind = SG_F_JUNK; /* as junk */
  s.v[0].product = -1;
  s.v[1].damaged = true; /* as damaged, and as a touched product's */
  sg_perturb_none(&pt);
  sg_perturb(&s, &pt, 1, affected, 3);
  assert_int_equal(s.v[0].b.p[0], 0xFE);
  assert_true(sg_fh_valid(s.v[1].b.p));
  assert_true(sg_fh_valid(s.v[2].b.p));
  for (size_t i = 0; i < 3; i++) {
    const uint8_t *at = s.v[i].b.p + s.v[i].b.n - hidden.v[0].b.n;
    assert_int_equal(at[0], 0xFE);
    assert_memory_equal(at + 1, hidden.v[0].b.p + 1, hidden.v[0].b.n - 1);
  }
  sg_buf_free(&body);
  sg_product_free(&p);
  sg_stream_free(&s);
  sg_stream_free(&hidden);
}

static void all_perturbations(struct sg_perturb *pt) {
  sg_perturb_none(pt);
  pt->drop = pt->dup = pt->swap = pt->flip = pt->junk = 0.04;
  pt->window = 3;
  pt->junk_max = 64;
}

/* The seed replays the perturbations; another seed gives others. */
static void test_perturb_seed(void **state) {
  (void)state;
  struct sg_perturb pt;
  struct world a, b;

  all_perturbations(&pt);
  world_make(&a, 1234, &pt);
  world_make(&b, 1234, &pt);
  assert_int_equal(a.bytes.n, b.bytes.n);
  assert_memory_equal(a.bytes.p, b.bytes.p, a.bytes.n);
  assert_memory_equal(a.affected, b.affected, sizeof a.affected);
  world_free(&b);
  world_make(&b, 1235, &pt);
  assert_true(a.bytes.n != b.bytes.n ||
              memcmp(a.bytes.p, b.bytes.p, a.bytes.n) != 0);
  world_free(&a);
  world_free(&b);
}

/* Synchronisation finds the frames where they are: the valid frame
 * headers of the bytes are exactly those of the stream's frames. */
static void check_sync(const struct world *w) {
  size_t off = 0, u = 0, f = 0;

  for (size_t i = 0; i < w->s.n; i++) {
    const struct sg_frame *fr = &w->s.v[i];
    bool counted = fr->kind != SG_F_JUNK && sg_fh_valid(fr->b.p) &&
                   off + SG_FH_LEN + SG_PDH_LEN <= w->bytes.n;
    for (; u < off && u < w->bytes.n;
         u += sg_next_unit(w->bytes.p + u, w->bytes.n - u))
      assert_int_equal(sg_frame_len(w->bytes.p + u, w->bytes.n - u), 0);
    if (counted) {
      assert_int_equal(u, off);
      assert_true(sg_frame_len(w->bytes.p + u, w->bytes.n - u) > 0);
      u += sg_next_unit(w->bytes.p + u, w->bytes.n - u);
      f++;
    }
    off += fr->b.n;
  }
  assert_true(f > 0);
}

/* An untouched product's frames are all there, whole, in order, with
 * only time-sync, test frames and junk between them. */
static void check_untouched(const struct world *w, long k) {
  size_t last = SIZE_MAX, end = 0;

  for (size_t i = 0; i < w->orig.n; i++) {
    if (w->orig.v[i].product != k)
      continue;
    size_t at = SIZE_MAX;
    for (size_t j = 0; j < w->s.n && at == SIZE_MAX; j++)
      if (w->s.v[j].kind == SG_F_DATA && same_frame(&w->s.v[j], &w->orig.v[i]))
        at = j;
    assert_true(at != SIZE_MAX);
    assert_false(w->s.v[at].damaged);
    if (last != SIZE_MAX) {
      assert_true(at > last);
      for (size_t j = last + 1; j < at; j++)
        assert_int_not_equal(w->s.v[j].kind, SG_F_DATA);
    }
    last = at;
  }
  for (size_t j = 0; j <= last; j++)
    end += w->s.v[j].b.n;
  assert_true(end <= w->bytes.n);
}

static void test_perturb_untouched(void **state) {
  (void)state;
  struct sg_perturb pt;
  uint64_t seed = test_seed("test_perturb_untouched");

  all_perturbations(&pt);
  for (uint64_t i = 0; i < 8; i++) {
    struct world w;
    pt.truncate = i % 2 ? SIZE_MAX : 200000;
    world_make(&w, seed + i, &pt);
    size_t n = naffected(&w);
    assert_true(n > 0 && n < NPRODUCTS);
    check_sync(&w);
    for (long k = 0; k < NPRODUCTS; k++)
      if (!w.affected[k])
        check_untouched(&w, k);
    world_free(&w);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vector_nwstg_basic),
      cmocka_unit_test(test_vector_gini),
      cmocka_unit_test(test_vector_expectations),
      cmocka_unit_test(test_fos_header),
      cmocka_unit_test(test_ascii),
      cmocka_unit_test(test_heading_and_pil),
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_split_gini),
      cmocka_unit_test(test_control_frames),
      cmocka_unit_test(test_next_unit),
      cmocka_unit_test(test_perturb_none),
      cmocka_unit_test(test_perturb_drop),
      cmocka_unit_test(test_perturb_dup),
      cmocka_unit_test(test_perturb_flip),
      cmocka_unit_test(test_perturb_junk),
      cmocka_unit_test(test_perturb_truncate),
      cmocka_unit_test(test_perturb_false_header),
      cmocka_unit_test(test_perturb_seed),
      cmocka_unit_test(test_perturb_untouched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
