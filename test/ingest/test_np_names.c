/*
 * test_np_names.c - the identifiers of NWSTG-path products
 * (pqutils/ingest/nwstg_name.h): the CCB, NAME and META as LDM 6.15 makes
 * them from a product's first block, with the NEXRAD level III category,
 * the fallbacks and their log lines (docs/noaaport.md, section
 * "Identifiers"): the observed examples of the docs, then every product of
 * LDM's vectors (test/ingest/vectors/) named from its first frame and
 * compared with the identifier LDM stored.
 *
 * GRIB2 products are named again when complete, by the GRIB2 namer
 * (grib2_name.c): test_vectors compares their identifiers up to
 * " !grib2/", and test_grib2_final_vectors the whole of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/nwstg_name.h"
#include "test/ingest/np_grib1_msg.h"
#include "test/ingest/np_logcap.h"
#include "test/ingest/np_vectors.h"

/* A first block: a 24-byte CCB, then the text (len bytes). */
struct block {
  uint8_t b[4096];
  size_t n;
};

static void make_block(struct block *k, uint8_t mode, uint8_t submode,
                       uint8_t user1, uint8_t user2, const void *text,
                       size_t len) {
  memset(k->b, 0, 24);
  k->b[0] = 0x40;
  k->b[1] = 12; /* 12 words: 24 bytes */
  k->b[10] = mode;
  k->b[11] = submode;
  k->b[12] = user1;
  k->b[13] = user2;
  memcpy(k->b + 24, text, len);
  k->n = 24 + len;
}

/* A block named: the block, the identifiers made from it and the
 * messages logged. */
struct named {
  struct block k;
  struct np_nwstg_name out;
  struct np_logcap cap;
};

/* Name n's block as a product of that PSH type and category. */
static void name(struct named *n, int type, int category) {
  struct np_log lg = npl_sink(&n->cap);
  struct np_namer nm = {&lg, 0};
  struct np_ccb ccb;
  np_ccb_parse(n->k.b, n->k.n, &ccb, &lg);
  np_name_nwstg(n->k.b, n->k.n, &ccb, type, category, &n->out, &nm);
}

/* Make n's block (make_block()) and name it. */
static void name_block(struct named *n, uint8_t mode, uint8_t submode,
                       uint8_t user1, uint8_t user2, const void *text,
                       size_t len, int type, int category) {
  make_block(&n->k, mode, submode, user1, user2, text, len);
  name(n, type, category);
}

#define TEXT(s) s, sizeof(s) - 1

static void test_text(void **state) {
  (void)state;
  struct named n;
  name_block(&n, 1, 0, 0, 0,
             TEXT("NOUS41 KWBC 151200\r\r\nPNSWSH\r\r\nTest body\r\r\n"), 4, 1);
  assert_string_equal(n.out.ident, "NOUS41 KWBC 151200 /pPNSWSH");
  assert_int_equal(n.out.name_len, strlen(n.out.ident));
  assert_int_equal(n.out.category, 1);
  assert_false(n.out.grib2);
  assert_int_equal(n.cap.n, 0);
  name_block(&n, 1, 0, 0, 0,
             TEXT("SRUS8 KWBC 151303 RR A\r\r\nABCDEF\r\r\nx\r\r\n"), 4, 1);
  assert_string_equal(n.out.ident, "SRUS08 KWBC 151303 RR /pABCDEF");
}

static void test_nexrad(void **state) {
  (void)state;
  struct named n;
  name_block(&n, 2, 0, 0, 0,
             TEXT("SDUS51 KBOX 151204\r\r\nN0QBOX\r\r\n\x00\x01\xff"), 4, 1);
  assert_string_equal(n.out.ident, "SDUS51 KBOX 151204 /pN0QBOX !nids/");
  assert_int_equal(n.out.name_len, strlen("SDUS51 KBOX 151204 /pN0QBOX"));
  assert_int_equal(n.out.category, 99);
  /* Real NEXRAD products carry user1 'F': no tag. */
  name_block(&n, 2, 0, 'F', 'Z',
             TEXT("SDUS34 KBOX 151204\r\r\nN0QBOX\r\r\n\x00\x01\xff"), 4, 5);
  assert_string_equal(n.out.ident, "SDUS34 KBOX 151204 /pN0QBOX");
  assert_int_equal(n.out.category, 99);
  /* SDUS4x is not in LDM's list; a leading blank defeats the test. */
  name_block(&n, 2, 0, 'F', 0,
             TEXT("SDUS44 KBOX 151204\r\r\nN0QBOX\r\r\n\x00\x01\xff"), 4, 5);
  assert_string_equal(n.out.ident, "SDUS44 KBOX 151204 /pN0QBOX");
  assert_int_equal(n.out.category, 5);
  name_block(&n, 2, 0, 0, 0, TEXT(" SDUS51 KBOX 151204\r\r\nN0QBOX\r\r\n"), 4,
             1);
  assert_string_equal(n.out.ident, "SDUS51 KBOX 151204 /pN0QBOX");
  assert_int_equal(n.out.category, 1);
  /* PSH type 5 is NEXRAD whatever the CCB. */
  name_block(&n, 1, 0, 0, 0, TEXT("NOUS44 KWBC 151308\r\r\nx\r\r\n"), 5, 1);
  assert_string_equal(n.out.ident, "NOUS44 KWBC 151308 !nids/");
  assert_int_equal(n.out.category, 99);
}

/* A GRIB product's block: heading line, then the message. */
static void grib_block(struct block *k, const char *heading, const uint8_t *m,
                       size_t len) {
  uint8_t text[1024];
  size_t h = strlen(heading);
  memcpy(text, heading, h);
  memcpy(text + h, m, len);
  make_block(k, 2, 1, 0, 0, text, h + len);
}

static void test_grib(void **state) {
  (void)state;
  struct named n;
  uint8_t m[NPG_LEN];
  struct npg_pds p = npg_gfs();
  npg_message(&p, m);
  grib_block(&n.k, "HTQA50 KWBC 151200\r\r\n", m, sizeof m);
  name(&n, 4, 4);
  assert_string_equal(n.out.ident, "HTQA50 KWBC 151200 /mGFS !grib/ncep/GFS/"
                                   "#003/202403151200/F024/TMP/500 mb/ ");
  assert_int_equal(n.out.name_len, strlen("HTQA50 KWBC 151200 /mGFS"));
  assert_false(n.out.grib2);
  /* GRIB2: META waits for the product's end. */
  m[7] = 2;
  grib_block(&n.k, "LTPA98 KWBC 151200\r\r\n", m, sizeof m);
  name(&n, 4, 4);
  assert_string_equal(n.out.ident, "LTPA98 KWBC 151200 !grib2/");
  assert_true(n.out.grib2);
  assert_int_equal(n.out.grib2_at, 21);
  /* Any other edition. */
  m[7] = 3;
  grib_block(&n.k, "LTPA98 KWBC 151200\r\r\n", m, sizeof m);
  name(&n, 4, 4);
  assert_string_equal(n.out.ident, "LTPA98 KWBC 151200 !gribx/");
  assert_false(n.out.grib2);
  m[7] = 0xFF; /* a signed byte: -1 */
  grib_block(&n.k, "LTPA98 KWBC 151200\r\r\n", m, sizeof m);
  name(&n, 4, 4);
  assert_string_equal(n.out.ident, "LTPA98 KWBC 151200 !gribx/");
}

/* The redbook graphic of docs/noaaport.md's example. */
static const uint8_t redbook[] =
    "PGUS99 KWBC 151307\r\r\n"
    "\x40\x10\x01\x01\x00\x00\x00\x00\x00\x00\x00PILNAME01\x07\xe8\x03\x0f"
    "\x0d\x00"
    "ABCDEF"
    "\x40\x0c\x02\x02\x00\x00\x00\x00\x00\x00\x00"
    "CPIL\x01XXXX\x00\x00\x00\x00"
    "\x40\x02\x01\x02";

static void test_redbook(void **state) {
  (void)state;
  struct named n;
  name_block(&n, 1, 0, 7, 9, redbook, sizeof redbook - 1, 4, 2);
  assert_string_equal(n.out.ident, "PGUS99 KWBC 151307 !redbook "
                                   "7_7/CPIL/ABCDEF/PILNAME01/20240315 1300");
  assert_int_equal(n.out.name_len, strlen("PGUS99 KWBC 151307"));
  assert_int_equal(n.cap.n, 0);
  /* Not a redbook graphic: user1 twice again. */
  name_block(&n, 1, 0, 7, 9, TEXT("PGUS98 KWBC 151307\r\r\nnot redbook"), 4, 2);
  assert_string_equal(n.out.ident, "PGUS98 KWBC 151307 !graph 7_7/");
  /* A category other than 2 gets no tag. */
  name_block(&n, 1, 0, 7, 9, redbook, sizeof redbook - 1, 4, 1);
  assert_string_equal(n.out.ident, "PGUS99 KWBC 151307");
}

static void test_redbook_edges(void **state) {
  (void)state;
  struct named n;
  /* A short identification block: 2L is not above 31, so no B part; the
   * title's bytes past the block's data read as 0. */
  static const uint8_t a[] = "PGUS97 KWBC 151307\r\r\n"
                             "\x40\x03\x01\x01\x00\x00";
  name_block(&n, 1, 0, 3, 0, a, sizeof a - 1, 4, 2);
  assert_string_equal(n.out.ident,
                      "PGUS97 KWBC 151307 !redbook 3_3////00000000 0000");
  /* A short PIL block is an error and ends the walk. */
  static const uint8_t b[] = "PGUS96 KWBC 151307\r\r\n"
                             "\x40\x10\x01\x01\x00\x00\x00\x00\x00\x00\x00"
                             "PILNAME01\x07\xe8\x03\x0f\x0d\x00"
                             "ABCDEF"
                             "\x40\x05\x02\x02\x00\x00\x00\x00\x00\x00"
                             "\x00\x00";
  name_block(&n, 1, 0, 3, 0, b, sizeof b - 1, 4, 2);
  assert_string_equal(n.out.ident, "PGUS96 KWBC 151307 !redbook "
                                   "3_3//ABCDEF/PILNAME01/20240315 1300");
  assert_int_equal(n.cap.n, 1);
  assert_string_equal(n.cap.line[0], "ERROR\tmode 2 submode 2 short 5");
  /* A block that would run past the data ends the walk: a graph. */
  static const uint8_t c[] = "PGUS95 KWBC 151307\r\r\n\x40\x40\x01\x01xxxx";
  name_block(&n, 1, 0, 3, 0, c, sizeof c - 1, 4, 2);
  assert_string_equal(n.out.ident, "PGUS95 KWBC 151307 !graph 3_3/");
}

static void test_fallbacks(void **state) {
  (void)state;
  struct named n;
  name_block(&n, 1, 0, 0, 0,
             TEXT("hello world, this is not a WMO header at all\r\r\nx\r\r\n"),
             4, 1);
  assert_string_equal(n.out.ident,
                      "hello world, this is not a WMO header at all");
  assert_int_equal(n.cap.n, 1);
  assert_string_equal(n.cap.line[0],
                      "NOTE\tNon-wmo product type hello world, this is not a "
                      "WMO header at all ccbmode 1 ccbsubmode 0");
  name_block(&n, 3, 4, 0, 0, TEXT("\x01\x02 "), 4, 1);
  assert_string_equal(n.out.ident, "Unidentifiable product");
  assert_string_equal(n.cap.line[0],
                      "NOTE\tNon-wmo product type Unidentifiable "
                      "product ccbmode 3 ccbsubmode 4");
  /* Control bytes before a LF make the shortest heading of all. */
  name_block(&n, 1, 0, 0, 0, TEXT("\x01\r\r\nx"), 4, 1);
  assert_string_equal(n.out.ident, "00  ");
  assert_int_equal(n.cap.n, 0);
  /* The NIDS and graph tags are still made. */
  name_block(&n, 1, 0, 7, 0, TEXT("not a heading"), 4, 2);
  assert_string_equal(n.out.ident, "not a heading !graph 7_7/");
  name_block(&n, 2, 0, 0, 0, TEXT("SDUS5"), 4, 1);
  assert_string_equal(n.out.ident, "SDUS5 !nids/");
  assert_int_equal(n.out.category, 99);
  /* NAME is at most 256 bytes. */
  char text[400];
  memset(text, 'A', sizeof text);
  name_block(&n, 1, 0, 0, 0, text, sizeof text, 4, 1);
  assert_int_equal(strlen(n.out.ident), 256);
  assert_int_equal(n.out.name_len, 256);
}

static void test_invalid_ccb(void **state) {
  (void)state;
  static const uint8_t b[] = "?\xff\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00"
                             "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                             "\x00SDUS51 KWBC 151304\r\r\nx\r\r\n";
  struct np_logcap cap;
  struct np_log lg = npl_sink(&cap);
  struct np_namer nm = {&lg, 0};
  struct np_ccb ccb;
  np_ccb_parse(b, sizeof b - 1, &ccb, &lg);
  assert_false(ccb.valid);
  assert_int_equal(ccb.len, 32766);
  assert_int_equal(ccb.mode, 0);
  assert_int_equal(ccb.submode, 0);
  assert_int_equal(cap.n, 2);
  assert_string_equal(cap.line[0],
                      "INFO\tInvalid ccb length = 32766 63 255, blen 49");
  assert_string_equal(cap.line[1],
                      "INFO\tError reading ccb, using default name");
  struct np_nwstg_name out;
  np_name_nwstg(b, sizeof b - 1, &ccb, 4, 1, &out, &nm);
  assert_string_equal(out.ident, "?");
  assert_int_equal(out.category, 1); /* no NIDS test */
  assert_int_equal(cap.n, 2);        /* and no "Non-wmo" line */
  /* A block of control bytes only. */
  static const uint8_t z[] = "\x7f\xff\x01";
  np_ccb_parse(z, 3, &ccb, &lg);
  np_name_nwstg(z, 3, &ccb, 4, 1, &out, &nm);
  assert_string_equal(out.ident, "\x7f");
  np_ccb_parse(z + 2, 1, &ccb, &lg);
  assert_false(ccb.valid);
  np_name_nwstg(z + 2, 1, &ccb, 4, 1, &out, &nm);
  assert_string_equal(out.ident, "Unidentifiable product");
}

static void test_ccb_fields(void **state) {
  (void)state;
  struct block k;
  make_block(&k, 2, 1, 7, 9, TEXT("x"));
  struct np_ccb ccb;
  np_ccb_parse(k.b, k.n, &ccb, NULL);
  assert_true(ccb.valid);
  assert_int_equal(ccb.len, 24);
  assert_int_equal(ccb.mode, 2);
  assert_int_equal(ccb.submode, 1);
  assert_int_equal(ccb.user1, 7);
  assert_int_equal(ccb.user2, 9);
  /* The two flag bits are not part of the length. */
  k.b[0] = 0xC0;
  np_ccb_parse(k.b, k.n, &ccb, NULL);
  assert_int_equal(ccb.len, 24);
  /* A CCB exactly as long as the block is valid; one byte more is not. */
  np_ccb_parse(k.b, 24, &ccb, NULL);
  assert_true(ccb.valid);
  np_ccb_parse(k.b, 23, &ccb, NULL);
  assert_false(ccb.valid);
  np_ccb_parse(k.b, 0, &ccb, NULL);
  assert_true(ccb.valid);
  assert_int_equal(ccb.len, 0);
}

/* The FOS-framed product of a one-block NWSTG product: the 11-byte header
 * and the data after the CCB, trailers stripped (docs/noaaport.md,
 * section "The product built"); LDM's trailer not yet added. */
static size_t fos_product(const uint8_t *block, size_t n, size_t ccb_len,
                          uint32_t seqno, uint8_t *prod) {
  int len =
      snprintf((char *)prod, 12, "\001\r\r\n%03d \r\r\n", (int)(seqno % 1000));
  size_t d = n - ccb_len;
  while (d > 4 && memcmp(block + ccb_len + d - 4, "\r\r\n\003", 4) == 0)
    d -= 4;
  memcpy(prod + len, block + ccb_len, d);
  return (size_t)len + d;
}

/* The first frame of the product of that seqno in a vector case. */
static int vector_frame(const char *c, uint32_t seqno, uint8_t **sbn,
                        struct npv_frame *f) {
  size_t sn, pos = 0;
  memset(f, 0, sizeof *f);
  *sbn = npv_read(c, ".sbn", &sn);
  while (*sbn != NULL && npv_next(*sbn, sn, &pos, f))
    if (f->seqno == seqno)
      return 1;
  return 0;
}

static void test_grib2_final(void **state) {
  (void)state;
  static const char want[] = "LTPA98 KWBC 151200 !grib2/ncep/GFS/#004/"
                             "202403151200F024/VVEL/250 hPa PRES";
  uint8_t *sbn, prod[2048];
  struct npv_frame f;
  assert_true(vector_frame("nwstg-basic", 508, &sbn, &f));
  struct np_ccb ccb;
  struct np_nwstg_name out;
  np_ccb_parse(f.data, f.len, &ccb, NULL);
  np_name_nwstg(f.data, f.len, &ccb, f.type, f.category, &out, NULL);
  assert_string_equal(out.ident, "LTPA98 KWBC 151200 !grib2/");
  size_t len = fos_product(f.data, f.len, ccb.len, f.seqno, prod);
  size_t g = 11 + out.grib2_at;
  /* Not named when the G is too near the end, or the bytes there are not
   * "GRIB", or META is more than " !grib2/". */
  np_name_grib2_final(&out, prod, g + 16, g, NULL);
  assert_string_equal(out.ident, "LTPA98 KWBC 151200 !grib2/");
  np_name_grib2_final(&out, prod, len, g + 1, NULL);
  assert_string_equal(out.ident, "LTPA98 KWBC 151200 !grib2/");
  np_name_grib2_final(&out, prod, 15, 0, NULL);
  assert_string_equal(out.ident, "LTPA98 KWBC 151200 !grib2/");
  struct np_nwstg_name graph;
  np_name_nwstg(f.data, f.len, &ccb, f.type, 2, &graph, NULL);
  assert_string_equal(graph.ident, "LTPA98 KWBC 151200 !graph 0_0/grib2/");
  np_name_grib2_final(&graph, prod, len, g, NULL);
  assert_string_equal(graph.ident, "LTPA98 KWBC 151200 !graph 0_0/grib2/");
  /* Named: the GRIB2 namer's tag replaces META's. */
  np_name_grib2_final(&out, prod, len, g, NULL);
  assert_string_equal(out.ident, want);
  assert_int_equal(out.name_len, strlen("LTPA98 KWBC 151200"));
}

/* LDM's log lines that naming makes (not the GRIB2 namer's). */
static int naming_line(const char *line) {
  static const char *const words[] = {
      "Non-wmo product type", "Using NCEP reanalysis table",
      "Undefined parameter table", "wmoid is bizzare",
      "mode 2 submode 2 short"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strstr(line, words[i]) != NULL)
      return 1;
  return 0;
}

/* From LDM's "inserted" line for seqno: category and CCB mode/submode. */
static int inserted(const char *log, uint32_t seqno, int *cat, int *mode,
                    int *sub) {
  char key[32];
  snprintf(key, sizeof key, " seq %u size ", seqno);
  const char *at = strstr(log, key);
  if (at == NULL)
    return 0;
  while (at > log && strncmp(at, "[cat ", 5) != 0)
    at--;
  int type;
  return sscanf(at, "[cat %d type %d ccb %d/%d", cat, &type, mode, sub) == 4;
}

/* Name every NWSTG-path product of a vector case and compare with LDM. */
static void check_case(const char *c, int *named) {
  size_t sn, tn, ln;
  uint8_t *sbn = npv_read(c, ".sbn", &sn);
  char *tsv = (char *)npv_read(c, ".products.tsv", &tn);
  char *log = (char *)npv_read(c, ".log", &ln);
  assert_non_null(sbn);
  assert_non_null(tsv);
  assert_non_null(log);
  struct np_logcap cap;
  struct np_log lg = npl_sink(&cap);
  lg.level = NP_NOTE;
  struct np_namer nm = {&lg, 0};
  size_t pos = 0;
  struct npv_frame f;
  while (npv_next(sbn, sn, &pos, &f)) {
    char want[1024];
    if (npv_goes(&f) || !npv_ident(tsv, f.seqno, want, sizeof want))
      continue;
    struct np_ccb ccb;
    struct np_nwstg_name out;
    np_ccb_parse(f.data, f.len, &ccb, &lg);
    np_name_nwstg(f.data, f.len, &ccb, f.type, f.category, &out, &nm);
    if (out.grib2)
      assert_memory_equal(out.ident, want, strlen(out.ident));
    else
      assert_string_equal(out.ident, want);
    int cat, mode, sub;
    assert_true(inserted(log, f.seqno, &cat, &mode, &sub));
    assert_int_equal(out.category, cat > 100 ? cat - 100 : cat);
    assert_int_equal(ccb.mode, mode);
    assert_int_equal(ccb.submode, sub);
    (*named)++;
  }
  /* The naming lines LDM logged, in order, and nothing else. */
  int k = 0;
  for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n"))
    if (naming_line(line)) {
      assert_true(k < cap.n);
      assert_string_equal(cap.line[k++], line);
    }
  assert_int_equal(k, cap.n);
}

static void test_vectors(void **state) {
  (void)state;
  int named = 0;
  check_case("nwstg-basic", &named);
  assert_int_equal(named, 13);
  named = 0;
  check_case("nwstg-errors", &named);
  assert_int_equal(named, 19);
  named = 0;
  check_case("grib1", &named);
  assert_int_equal(named, 4);
  named = 0;
  check_case("grib2", &named);
  assert_int_equal(named, 13);
}

/* With the GRIB2 namer: the whole identifiers of LDM's GRIB2 products. */
static void final_case(const char *c, int *named) {
  size_t sn, tn;
  uint8_t *sbn = npv_read(c, ".sbn", &sn);
  char *tsv = (char *)npv_read(c, ".products.tsv", &tn);
  assert_non_null(sbn);
  assert_non_null(tsv);
  struct np_namer nm = {NULL, 0};
  size_t pos = 0;
  struct npv_frame f;
  static uint8_t prod[65536];
  while (npv_next(sbn, sn, &pos, &f)) {
    char want[1024];
    if (npv_goes(&f) || !npv_ident(tsv, f.seqno, want, sizeof want))
      continue;
    struct np_ccb ccb;
    struct np_nwstg_name out;
    np_ccb_parse(f.data, f.len, &ccb, NULL);
    np_name_nwstg(f.data, f.len, &ccb, f.type, f.category, &out, &nm);
    if (!out.grib2)
      continue;
    size_t len = fos_product(f.data, f.len, ccb.len, f.seqno, prod);
    np_name_grib2_final(&out, prod, len, 11 + out.grib2_at, &nm);
    assert_string_equal(out.ident, want);
    (*named)++;
  }
}

static void test_grib2_final_vectors(void **state) {
  (void)state;
  int named = 0;
  final_case("nwstg-basic", &named);
  final_case("grib2", &named);
  assert_int_equal(named, 16);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text),
      cmocka_unit_test(test_nexrad),
      cmocka_unit_test(test_grib),
      cmocka_unit_test(test_redbook),
      cmocka_unit_test(test_redbook_edges),
      cmocka_unit_test(test_fallbacks),
      cmocka_unit_test(test_invalid_ccb),
      cmocka_unit_test(test_ccb_fields),
      cmocka_unit_test(test_grib2_final),
      cmocka_unit_test(test_vectors),
      cmocka_unit_test(test_grib2_final_vectors),
  };
  return cmocka_run_group_tests(tests, NULL, npv_teardown);
}
