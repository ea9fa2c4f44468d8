/*
 * test_np_build.c - the product builder (pqutils/ingest/product_build.h)
 * fed by the frame reader: the FOS header and trailer bytes (the quirk of
 * sequence numbers of 2^31 and above included), trailer stripping, the MD5
 * rule, reassembly (a missing block, a product left unfinished, data
 * before a header, completion by the block count, the end bit, LDM's
 * capacity rule), the feedtype from the category as the product ends,
 * GOES imagery as PNG and as sent, -c and -f (docs/noaaport.md,
 * "Reassembly" and "The product built").  Identifiers are the namers'
 * and are not looked at here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <zlib.h>

#include "np_test_frames.h"
#include "pq/product.h"
#include "pqutils/ingest/product_build.h"
#include "pqutils/ingest/product_internal.h"

#define MAXP 8

struct got {
  struct tbuf data;
  uint32_t feedtype, seqno;
  uint8_t sig[16];
  int category, type, ccb_mode, ccb_submode;
};

/* A builder fed by a reader, and what came out of it. */
struct bench {
  struct tlog log;
  struct np_log lg;
  struct np_namer nm;
  struct np_sbn r;
  struct np_build *b;
  struct got p[MAXP];
  int n;
};

static void keep(void *arg, const struct np_product *p) {
  struct bench *t = arg;
  assert_true(t->n < MAXP);
  struct got *g = &t->p[t->n++];
  tb_add(&g->data, p->data, p->size);
  g->feedtype = p->feedtype;
  g->seqno = p->seqno;
  memcpy(g->sig, p->sig, 16);
  g->category = p->category;
  g->type = p->type;
  g->ccb_mode = p->ccb_mode;
  g->ccb_submode = p->ccb_submode;
}

/* A new bench at level, with the builder's options, fed s whole. */
static void bench_run(struct bench *t, int level, bool inflate, bool fill,
                      const struct tbuf *s) {
  memset(t, 0, sizeof *t);
  t->lg = (struct np_log){tlog_add, &t->log, level};
  t->nm.log = &t->lg;
  np_sbn_init(&t->r, &t->lg);
  struct np_build_opts o = {.inflate = inflate, .fill = fill};
  t->b = np_build_new(&o, &t->nm, keep, t);
  assert_non_null(t->b);
  size_t pos = 0;
  struct np_frame f;
  while (np_sbn_next(&t->r, s->p, s->len, &pos, &f, true) == NP_SBN_FRAME)
    np_build_frame(t->b, &f);
  np_build_end(t->b);
}

static void bench_free(struct bench *t) {
  np_build_free(t->b);
  for (int i = 0; i < t->n; i++)
    tb_free(&t->p[i].data);
  tb_free(&t->log.text);
}

static void md5(const void *p, size_t n, uint8_t out[16]) {
  unsigned len = 0;
  EVP_Digest(p, n, out, &len, EVP_md5(), NULL);
}

/* An NWSTG-path frame: CCB 1/0 then text on block 0. */
static void nwstg_frame(struct tbuf *s, const struct tframe *t,
                        const void *body, size_t n) {
  struct tbuf d = {0};
  if (t->psh)
    tb_ccb(&d, 1, 0);
  tb_add(&d, body, n);
  struct tframe u = *t;
  u.data = d.p;
  u.data_len = d.len;
  tb_frame(s, &u);
  tb_free(&d);
}

static const char heading[] = "NOUS41 KWBC 151200\r\r\nPNSWSH\r\r\n";

/* One single-frame text product on datastream ds. */
static void text_product(struct tbuf *s, uint32_t fh, uint32_t seq, int ds,
                         const char *body, size_t n) {
  struct tframe t = {.fh_seq = fh,
                     .prod_seq = seq,
                     .tt = 69,
                     .psh = true,
                     .nfrag = 1,
                     .datastream = (unsigned)ds};
  nwstg_frame(s, &t, body, n);
}

static void test_fos_header(void **state) {
  (void)state;
  struct {
    uint32_t seq;
    const char *hdr;
  } cases[] = {
      {500, "\x01\r\r\n500 \r\r\n"},
      {7, "\x01\r\r\n007 \r\r\n"},
      {1234567, "\x01\r\r\n567 \r\r\n"},
      {4294967289u, "\x01\r\r\n-07 \r\r\n"}, /* -7 as a signed int */
      {4294967239u, "\x01\r\r\n-57 \r\r\n"}, /* -57 */
      {4294967173u, "\x01\r\r\n-123 \r\r"},  /* -123: the LF is lost */
      {2147483648u, "\x01\r\r\n-648 \r\r"},  /* -2147483648 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t hdr[12];
    np_fos_header(cases[i].seq, hdr);
    assert_memory_equal(hdr, cases[i].hdr, 11);
  }
}

static void test_text_product(void **state) {
  (void)state;
  struct tbuf s = {0};
  text_product(&s, 1, 500, 5, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_NOTE, false, false, &s);
  assert_int_equal(t.n, 1);
  struct got *g = &t.p[0];
  struct tbuf want = {0};
  tb_str(&want, "\x01\r\r\n500 \r\r\n");
  tb_str(&want, heading);
  tb_str(&want, "\r\r\n\x03");
  assert_int_equal(g->data.len, want.len);
  assert_memory_equal(g->data.p, want.p, want.len);
  uint8_t sig[16];
  md5(want.p + 11, want.len - 11, sig); /* from offset 11 */
  assert_memory_equal(g->sig, sig, 16);
  assert_int_equal(g->seqno, 500);
  assert_int_equal(g->feedtype, PQ_FT_IDS | PQ_FT_DDPLUS);
  assert_int_equal(g->category, 1);
  assert_int_equal(g->type, 4);
  assert_int_equal(g->ccb_mode, 1);
  assert_int_equal(g->ccb_submode, 0);
  assert_int_equal(t.log.n, 0);
  tb_free(&want);
  tb_free(&s);
  bench_free(&t);
}

static void test_high_sequence(void **state) {
  (void)state;
  struct tbuf s = {0};
  text_product(&s, 1, 4294967173u, 5, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_NOTE, false, false, &s);
  assert_int_equal(t.n, 1);
  /* "-123" takes 12 bytes; LDM counts 11 and the data takes the LF's
   * place */
  assert_memory_equal(t.p[0].data.p, "\x01\r\r\n-123 \r\rNOUS41", 17);
  assert_int_equal(t.p[0].data.len, 11 + sizeof heading - 1 + 4);
  assert_int_equal(t.p[0].seqno, 4294967173u);
  tb_free(&s);
  bench_free(&t);
}

static void test_trailer_stripping(void **state) {
  (void)state;
  struct tbuf s = {0}, body = {0};
  tb_str(&body, heading);
  tb_str(&body, "\r\r\n\x03\r\r\n\x03");
  text_product(&s, 1, 1, 5, (const char *)body.p, body.len);
  /* a trailer on a block that does not end the product stays */
  struct tframe t0 = {
      .fh_seq = 2, .prod_seq = 2, .tt = 65, .psh = true, .nfrag = 2};
  nwstg_frame(&s, &t0, body.p, body.len);
  struct tframe t1 = {.fh_seq = 3, .prod_seq = 2, .tt = 6, .block = 1};
  nwstg_frame(&s, &t1, "\r\r\n\x03", 4); /* only 4 bytes: kept */
  struct bench t;
  bench_run(&t, NP_DEBUG, false, false, &s);
  assert_int_equal(t.n, 2);
  /* both copies gone, one added */
  assert_int_equal(t.p[0].data.len, 11 + sizeof heading - 1 + 4);
  assert_memory_equal(t.p[0].data.p + t.p[0].data.len - 5, "\n\r\r\n\x03", 5);
  assert_int_equal(tlog_count(&t.log, "removing FOS trailer from"), 2);
  assert_int_equal(t.p[1].data.len, 11 + body.len + 4 + 4);
  tb_free(&body);
  tb_free(&s);
  bench_free(&t);
}

static void test_md5_leaves_out_header(void **state) {
  (void)state;
  struct tbuf s = {0};
  text_product(&s, 1, 10, 5, heading, sizeof heading - 1);
  text_product(&s, 2, 11, 5, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_NOTE, false, false, &s);
  assert_int_equal(t.n, 2);
  /* copies differing only in the sequence number: one signature */
  assert_memory_not_equal(t.p[0].data.p, t.p[1].data.p, t.p[0].data.len);
  assert_memory_equal(t.p[0].sig, t.p[1].sig, 16);
  tb_free(&s);
  bench_free(&t);
}

/* Three blocks of product seq (fh numbers from fh), block skip left out. */
static void three_blocks(struct tbuf *s, uint32_t fh, uint32_t seq, int skip) {
  for (unsigned k = 0; k < 3; k++) {
    struct tframe t = {.fh_seq = fh + k,
                       .prod_seq = seq,
                       .block = k,
                       .psh = k == 0,
                       .nfrag = 3,
                       .tt = k == 0   ? 65
                             : k == 2 ? 6
                                      : 2};
    if ((int)k != skip)
      nwstg_frame(s, &t, heading, sizeof heading - 1);
  }
}

static void test_missing_block(void **state) {
  (void)state;
  struct tbuf s = {0};
  three_blocks(&s, 5000, 9000, 1);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 0);
  assert_string_equal(
      tlog_str(&t.log),
      "WARN\tGap in packet sequence: 5000 to 5002 [skipped 1]\n"
      "WARN\tprevProdSeqNum=9000, pdh->seqno=9000, prevBlockNum=0, "
      "pdh->dbno=2\n"
      "ERROR\tMissing fragment in sequence, last 0/9000 this 2/9000\n");
  tb_free(&s);
  bench_free(&t);
}

static void test_complete_by_nfrag(void **state) {
  (void)state;
  struct tbuf s = {0};
  three_blocks(&s, 1, 9, -1);
  struct bench t;
  bench_run(&t, NP_INFO, false, false, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].data.len, 11 + 3 * (sizeof heading - 1) + 4);
  assert_int_equal(tlog_count(&t.log,
                              "INFO\twe should have a complete product 9 9/3 2 "
                              "/heap 101\n"),
                   1);
  tb_free(&s);
  /* the end bit does not end a product; nfrag 0 ends it at once */
  s.len = 0;
  struct tframe t0 = {
      .fh_seq = 1, .prod_seq = 9, .tt = 65, .psh = true, .nfrag = 3};
  nwstg_frame(&s, &t0, heading, sizeof heading - 1);
  struct tframe t1 = {.fh_seq = 2, .prod_seq = 9, .block = 1, .tt = 6};
  nwstg_frame(&s, &t1, heading, sizeof heading - 1);
  text_product(&s, 3, 10, 5, heading, sizeof heading - 1);
  struct tframe t2 = {.fh_seq = 4, .prod_seq = 11, .tt = 65, .psh = true};
  nwstg_frame(&s, &t2, heading, sizeof heading - 1);
  struct bench u;
  bench_run(&u, NP_WARN, false, false, &s);
  assert_int_equal(u.n, 2);
  assert_int_equal(u.p[0].seqno, 10);
  assert_int_equal(u.p[1].seqno, 11);
  assert_int_equal(tlog_count(&u.log,
                              "ERROR\tHmmm....should call completed product 9 "
                              "[3 1]\n"),
                   1);
  assert_int_equal(tlog_count(&u.log, "OOPS, start of new product [10 ] "
                                      "with unfinished product 9\n"),
                   1);
  tb_free(&s);
  bench_free(&t);
  bench_free(&u);
}

static void test_oops(void **state) {
  (void)state;
  struct tbuf s = {0};
  three_blocks(&s, 1, 9001, 2);
  text_product(&s, 3, 9002, 5, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].seqno, 9002);
  assert_string_equal(
      tlog_str(&t.log),
      "ERROR\tOOPS, start of new product [9002 ] with unfinished product "
      "9001\n"
      "ERROR\tProduct definition header version 1 pdhlen 16\n"
      "ERROR\tPDH transfer type 69\n"
      "ERROR\theader length 52 [pshlen = 36]\n"
      "ERROR\tblocks per record 0 records per block 0\n"
      "ERROR\tproduct seqnumber 9002 block number 0 data block size 54\n"
      "ERROR\tproduct header flag 0\n"
      "ERROR\tprodspecific data length 0\n"
      "ERROR\tbytes per record 0\n"
      "ERROR\tFragments = 1 category 1\n"
      "ERROR\tnext header offset 0\n"
      "ERROR\toriginal seq number 0\n"
      "ERROR\treceive time 0\n"
      "ERROR\ttransmit time 0\n"
      "ERROR\trun ID 0\n"
      "ERROR\toriginal run id 0\n");
  tb_free(&s);
  bench_free(&t);
}

static void test_data_before_header(void **state) {
  (void)state;
  struct tbuf s = {0};
  three_blocks(&s, 1, 9003, 0);
  struct bench t;
  bench_run(&t, NP_INFO, false, false, &s);
  assert_int_equal(t.n, 0);
  assert_int_equal(tlog_count(&t.log, "INFO\tfound data block before header, "
                                      "skipping sequence 9003 frag #1\n"),
                   1);
  assert_int_equal(tlog_count(&t.log, "frag #2\n"), 1);
  tb_free(&s);
  bench_free(&t);
}

static void test_capacity(void **state) {
  (void)state;
  static char big[8200];
  memset(big, 'x', sizeof big);
  struct tbuf s = {0};
  /* nfrag 1: room for 4047 bytes, the header's 11 included */
  struct tframe t0 = {
      .fh_seq = 1, .prod_seq = 1, .tt = 69, .psh = true, .nfrag = 1};
  nwstg_frame(&s, &t0, big, 4013); /* 11 + 24 (CCB) ... 4013 after it */
  struct tframe t1 = {
      .fh_seq = 2, .prod_seq = 2, .tt = 69, .psh = true, .nfrag = 1};
  nwstg_frame(&s, &t1, big, 4037);
  /* nfrag 3: the frame that does not fit is dropped, the product kept,
   * and the next block fails the sequence check */
  struct tframe t2 = {
      .fh_seq = 3, .prod_seq = 3, .tt = 65, .psh = true, .nfrag = 3};
  nwstg_frame(&s, &t2, big, 4000);
  struct tframe t3 = {.fh_seq = 4, .prod_seq = 3, .tt = 2, .block = 1};
  nwstg_frame(&s, &t3, big, 8200);
  struct tframe t4 = {.fh_seq = 5, .prod_seq = 3, .tt = 6, .block = 2};
  nwstg_frame(&s, &t4, big, 10);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].data.len, 11 + 4013 + 4);
  assert_string_equal(
      tlog_str(&t.log),
      "ERROR\tError in heapsize 4047 product size 4048 [11 4037], Punt!\n"
      "ERROR\tError in heapsize 12077 product size 12211 [4011 8200], "
      "Punt!\n"
      "ERROR\tMissing fragment in sequence, last 0/3 this 2/3\n");
  tb_free(&s);
  bench_free(&t);
}

static void test_hds_text(void **state) {
  (void)state;
  char body[80];
  memcpy(body, heading, sizeof heading - 1);
  memset(body + sizeof heading - 1, 'a', sizeof body - (sizeof heading - 1));
  body[40] = (char)0x80;
  struct tbuf s = {0};
  text_product(&s, 1, 1, 5, body, sizeof body); /* NMC: HDS */
  text_product(&s, 2, 2, 8, body, sizeof body); /* NWWS: no test */
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 2);
  assert_int_equal(t.p[0].category, 101);
  assert_int_equal(t.p[0].feedtype, PQ_FT_HDS);
  assert_int_equal(t.p[1].category, 1);
  assert_int_equal(t.p[1].feedtype, PQ_FT_IDS | PQ_FT_DDPLUS);
  tb_free(&s);
  bench_free(&t);
}

static void test_bad_psh_mid_product(void **state) {
  (void)state;
  struct tbuf s = {0};
  struct tframe t0 = {
      .fh_seq = 1, .prod_seq = 4, .tt = 65, .psh = true, .nfrag = 2};
  nwstg_frame(&s, &t0, heading, sizeof heading - 1);
  /* LDM reads this PSH over the product's before finding it wrong */
  struct tframe bad = {.fh_seq = 2,
                       .prod_seq = 4,
                       .tt = 65,
                       .psh = true,
                       .nfrag = 2,
                       .cat = 6,
                       .type = 9,
                       .psh_len_diff = 2};
  nwstg_frame(&s, &bad, heading, sizeof heading - 1);
  struct tframe t1 = {.fh_seq = 3, .prod_seq = 4, .tt = 6, .block = 1};
  nwstg_frame(&s, &t1, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].category, 6);
  assert_int_equal(t.p[0].type, 9);
  assert_int_equal(t.p[0].ccb_mode, 0);
  assert_int_equal(t.p[0].feedtype, PQ_FT_NOTHER);
  assert_int_equal(
      tlog_count(&t.log, "ERROR\tERROR in calculation of psh len 38 16\n"), 1);
  tb_free(&s);
  bench_free(&t);
}

static void test_fragheap(void **state) {
  (void)state;
  struct tbuf s = {0};
  struct tframe t0 = {
      .fh_seq = 1, .prod_seq = 1, .tt = 65, .psh = true, .nfrag = 1000};
  nwstg_frame(&s, &t0, heading, sizeof heading - 1);
  t0.fh_seq = 2;
  t0.prod_seq = 2;
  nwstg_frame(&s, &t0, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_NOTE, false, false, &s);
  assert_int_equal(tlog_count(&t.log, "NOTE\tincreasing fragheap to 1001\n"),
                   1);
  assert_int_equal(tlog_count(&t.log, "increasing fragheap"), 1);
  tb_free(&s);
  bench_free(&t);
}

/* A GINI first block: heading, then the 512-byte PDB for an nx x ny image
 * of 1 km, 2024-03-15 12:00, GOES-16 (platform 19), EAST-CONUS (1), IR
 * (channel 4); compression byte 0 as sent. */
static void gini_block0(struct tbuf *d, unsigned nx, unsigned ny) {
  tb_str(d, "TIGE04 KNES 151200\r\r\n");
  uint8_t pdb[512] = {1, 19,          1,   4, 0,  (uint8_t)ny,
                      0, (uint8_t)nx, 124, 3, 15, 12};
  pdb[16] = (uint8_t)(nx >> 8);
  pdb[17] = (uint8_t)nx;
  pdb[18] = (uint8_t)(ny >> 8);
  pdb[19] = (uint8_t)ny;
  pdb[41] = 1;
  tb_add(d, pdb, sizeof pdb);
}

/* The PNG chunks after offset at: their types, one letter each (H IHDR, D
 * IDAT, E IEND, ? other), and the IHDR's width and height. */
static void png_chunks(const struct tbuf *p, size_t at, char *types,
                       uint32_t *w, uint32_t *h) {
  assert_memory_equal(p->p + at, "\x89PNG\r\n\x1a\n", 8);
  size_t k = 0;
  for (size_t i = at + 8; i + 12 <= p->len;) {
    const uint8_t *c = p->p + i;
    uint32_t n = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
                 (uint32_t)c[2] << 8 | c[3];
    if (memcmp(c + 4, "IHDR", 4) == 0) {
      *w = (uint32_t)c[8] << 24 | (uint32_t)c[9] << 16 | c[10] << 8 | c[11];
      *h = (uint32_t)c[12] << 24 | (uint32_t)c[13] << 16 | c[14] << 8 | c[15];
    }
    types[k++] = memcmp(c + 4, "IHDR", 4) == 0   ? 'H'
                 : memcmp(c + 4, "IDAT", 4) == 0 ? 'D'
                 : memcmp(c + 4, "IEND", 4) == 0 ? 'E'
                                                 : '?';
    i += 12 + n;
    assert_true(i <= p->len);
  }
  types[k] = '\0';
}

/* Frame `block` of a GOES product (datastream 1, product 1, FH number
 * 1 + block): block 0 carries the PSH (type 1, category 3, nfrag blocks);
 * rpb records a block. */
static void goes_frame(struct tbuf *s, unsigned block, unsigned tt,
                       unsigned nfrag, unsigned rpb, const void *data,
                       size_t len) {
  struct tframe t = {.fh_seq = 1 + block,
                     .prod_seq = 1,
                     .block = block,
                     .tt = tt,
                     .psh = block == 0,
                     .nfrag = nfrag,
                     .datastream = 1,
                     .type = 1,
                     .cat = 3,
                     .rpb = rpb,
                     .data = data,
                     .data_len = len};
  tb_frame(s, &t);
}

static void test_goes_png(void **state) {
  (void)state;
  struct tbuf s = {0}, d = {0};
  gini_block0(&d, 8, 4);
  goes_frame(&s, 0, 65, 6, 1, d.p, d.len);
  for (unsigned k = 1; k <= 5; k++) {
    uint8_t row[8];
    memset(row, k == 5 ? 0xF0 : (int)(k * 10), sizeof row);
    goes_frame(&s, k, k == 5 ? 6 : 2, 6, 1, row, sizeof row);
  }
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 1);
  struct got *g = &t.p[0];
  assert_true(g->data.len > d.len);
  /* the first block as sent, but the PDB's compression byte now 128 */
  d.p[21 + 42] = 128;
  assert_memory_equal(g->data.p, d.p, d.len);
  char types[16];
  uint32_t w = 0, h = 0;
  png_chunks(&g->data, d.len, types, &w, &h);
  assert_string_equal(types, "HDE");
  assert_int_equal(w, 8);
  assert_int_equal(h, 5);
  uint8_t sig[16];
  md5(g->data.p, g->data.len, sig); /* every byte */
  assert_memory_equal(g->sig, sig, 16);
  assert_int_equal(g->feedtype, PQ_FT_NIMAGE);
  assert_int_equal(g->category, 3);
  assert_int_equal(g->ccb_mode, 0);
  assert_int_equal(t.log.n, 0);
  tb_free(&d);
  tb_free(&s);
  bench_free(&t);
}

static void test_goes_rows_per_block(void **state) {
  (void)state;
  struct tbuf s = {0}, d = {0};
  gini_block0(&d, 8, 4);
  goes_frame(&s, 0, 65, 3, 2, d.p, d.len);
  static const uint8_t rows[20] = {0};
  goes_frame(&s, 1, 2, 3, 2, rows, sizeof rows);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 0);
  assert_string_equal(tlog_str(&t.log),
                      "ERROR\tnscan exceeding records per block 2 [2 8 20]\n");
  tb_free(&d);
  tb_free(&s);
  bench_free(&t);
}

static void zip(struct tbuf *out, const void *p, size_t n) {
  uLongf len = compressBound((uLong)n);
  uint8_t *z = malloc(len);
  assert_non_null(z);
  assert_int_equal(compress(z, &len, p, (uLong)n), Z_OK);
  tb_add(out, z, len);
  free(z);
}

/* A compressed GINI product: block 0 the clear heading then a zlib stream
 * of heading and PDB, the rows zlib streams. */
static void satz_product(struct tbuf *s, struct tbuf *whole, unsigned nfrag,
                         int skip, unsigned ds) {
  uint32_t fh = 1;
  struct tbuf clear = {0}, d = {0};
  gini_block0(&clear, 8, 4);
  tb_str(&d, "TIGE04 KNES 151200\r\r\n");
  zip(&d, clear.p, clear.len);
  for (unsigned k = 0; k < nfrag; k++) {
    struct tbuf blk = {0};
    if (k == 0) {
      tb_add(&blk, d.p, d.len);
    } else {
      uint8_t row[8];
      memset(row, (int)k, sizeof row);
      zip(&blk, row, sizeof row);
    }
    struct tframe t = {.fh_seq = fh,
                       .prod_seq = 1,
                       .block = k,
                       .psh = k == 0,
                       .nfrag = nfrag,
                       .datastream = ds,
                       .type = 1,
                       .cat = 3,
                       .rpb = 1,
                       .tt = 16u | (k == 0           ? 65u
                                    : k + 1 == nfrag ? 6u
                                                     : 2u),
                       .data = blk.p,
                       .data_len = blk.len};
    if ((int)k != skip) {
      fh++;
      tb_frame(s, &t);
      tb_add(whole, blk.p, blk.len);
    }
    tb_free(&blk);
  }
  tb_free(&clear);
  tb_free(&d);
}

static void test_satz_verbatim(void **state) {
  (void)state;
  struct tbuf s = {0}, whole = {0};
  satz_product(&s, &whole, 3, -1, 1);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].data.len, whole.len);
  assert_memory_equal(t.p[0].data.p, whole.p, whole.len);
  uint8_t sig[16];
  md5(whole.p, whole.len, sig);
  assert_memory_equal(t.p[0].sig, sig, 16);
  tb_free(&whole);
  tb_free(&s);
  bench_free(&t);
}

static void test_inflate_option(void **state) {
  (void)state;
  /* GOES: block 0 inflated after its 21-byte heading, the rows whole */
  struct tbuf s = {0}, whole = {0};
  satz_product(&s, &whole, 3, -1, 1);
  struct bench t;
  bench_run(&t, NP_WARN, true, false, &s);
  assert_int_equal(t.n, 1);
  struct tbuf want = {0};
  gini_block0(&want, 8, 4);
  tb_add(&want, "\x01\x01\x01\x01\x01\x01\x01\x01", 8);
  tb_add(&want, "\x02\x02\x02\x02\x02\x02\x02\x02", 8);
  assert_int_equal(t.p[0].data.len, want.len);
  assert_memory_equal(t.p[0].data.p, want.p, want.len);
  bench_free(&t);
  /* NWSTG: the clear heading and PIL lines left out, the stream stored */
  tb_free(&s);
  struct tbuf d = {0};
  tb_str(&d, heading);
  zip(&d, heading, sizeof heading - 1);
  struct tframe t0 = {
      .fh_seq = 1, .prod_seq = 3, .tt = 69 | 16, .psh = true, .nfrag = 1};
  nwstg_frame(&s, &t0, d.p, d.len);
  bench_run(&t, NP_WARN, true, false, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].data.len, 11 + sizeof heading - 1 + 4);
  assert_memory_equal(t.p[0].data.p + 11, heading, sizeof heading - 1);
  assert_int_equal(t.log.n, 0);
  bench_free(&t);
  tb_free(&d);
  tb_free(&want);
  tb_free(&whole);
  tb_free(&s);
}

static void test_fill_option(void **state) {
  (void)state;
  struct tbuf s = {0}, whole = {0};
  satz_product(&s, &whole, 4, 2, 1); /* block 2 missing */
  /* without -c: the blank block cannot be compressed; nothing added */
  struct bench t;
  bench_run(&t, NP_NOTE, false, true, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].data.len, whole.len);
  assert_string_equal(
      tlog_str(&t.log),
      "ERROR\tMissing GOES fragment in sequence, last 1/1 this 3/1\n"
      "NOTE\tBalance frames left 1 scanlines per frame 1\n"
      "ERROR\tFAIL -2 delate (STREAM_ERROR)\n"
      "NOTE\tTotal 1 scanlines filled for block 1 into prod seq 1 \n");
  bench_free(&t);
  /* with -c: a block of zeros (1 row of the PDB's 8-byte records) */
  bench_run(&t, NP_WARN, true, true, &s);
  assert_int_equal(t.n, 1);
  assert_int_equal(t.p[0].data.len, 21 + 512 + 8 + 8 + 8);
  assert_memory_equal(t.p[0].data.p + 21 + 512 + 8, "\0\0\0\0\0\0\0\0\x03\x03",
                      10);
  bench_free(&t);
  /* without -f the product is lost */
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 0);
  bench_free(&t);
  tb_free(&whole);
  tb_free(&s);
}

static void test_opt_channel(void **state) {
  (void)state;
  /* datastream 4: an image takes the GOES path, anything else the NWSTG
   * path with its framing */
  struct tbuf s = {0}, whole = {0};
  satz_product(&s, &whole, 2, -1, 4);
  text_product(&s, 3, 2, 4, heading, sizeof heading - 1);
  struct bench t;
  bench_run(&t, NP_WARN, false, false, &s);
  assert_int_equal(t.n, 2);
  assert_int_equal(t.p[0].data.len, whole.len);
  assert_memory_equal(t.p[0].data.p, whole.p, whole.len);
  assert_memory_equal(t.p[1].data.p, "\x01\r\r\n002 \r\r\n", 11);
  tb_free(&whole);
  tb_free(&s);
  bench_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fos_header),
      cmocka_unit_test(test_text_product),
      cmocka_unit_test(test_high_sequence),
      cmocka_unit_test(test_trailer_stripping),
      cmocka_unit_test(test_md5_leaves_out_header),
      cmocka_unit_test(test_missing_block),
      cmocka_unit_test(test_complete_by_nfrag),
      cmocka_unit_test(test_oops),
      cmocka_unit_test(test_data_before_header),
      cmocka_unit_test(test_capacity),
      cmocka_unit_test(test_hds_text),
      cmocka_unit_test(test_bad_psh_mid_product),
      cmocka_unit_test(test_fragheap),
      cmocka_unit_test(test_goes_png),
      cmocka_unit_test(test_goes_rows_per_block),
      cmocka_unit_test(test_satz_verbatim),
      cmocka_unit_test(test_inflate_option),
      cmocka_unit_test(test_fill_option),
      cmocka_unit_test(test_opt_channel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
