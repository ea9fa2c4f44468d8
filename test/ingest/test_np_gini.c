/*
 * test_np_gini.c - the names of GOES-path (GINI) products
 * (pqutils/ingest/gini_name.h): the PDB read in the clear or from its zlib
 * stream, the name with LDM's shared decimal buffer, the heading bytes
 * rule, the year rule, the failures that make no product and their log
 * lines (docs/noaaport.md, sections "Frames" and "Satellite names"), and
 * the products of LDM's gini and gini-fallback vectors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "pqutils/ingest/gini_name.h"
#include "test/ingest/np_logcap.h"
#include "test/ingest/np_vectors.h"

/* The PDB fields the tests set. */
struct pdb_fields {
  uint8_t platform, sector, channel, year, month, day, hour, minute, res;
  uint16_t nx, ny;
};

static struct pdb_fields goes16(void) {
  struct pdb_fields f = {19, 1, 4, 124, 3, 15, 12, 0, 4, 8, 4};
  return f;
}

static void make_pdb(const struct pdb_fields *f, uint8_t pdb[512]) {
  memset(pdb, 0, 512);
  pdb[0] = 1;
  pdb[1] = f->platform;
  pdb[2] = f->sector;
  pdb[3] = f->channel;
  pdb[5] = 4; /* records */
  pdb[7] = 8; /* record size */
  pdb[8] = f->year;
  pdb[9] = f->month;
  pdb[10] = f->day;
  pdb[11] = f->hour;
  pdb[12] = f->minute;
  pdb[16] = (uint8_t)(f->nx >> 8);
  pdb[17] = (uint8_t)f->nx;
  pdb[18] = (uint8_t)(f->ny >> 8);
  pdb[19] = (uint8_t)f->ny;
  pdb[41] = f->res;
  pdb[42] = 0;
}

/* A first block: the heading line, then the PDB in the clear or, if z,
 * a zlib stream of the heading line and the PDB.  @return its length */
static size_t make_block(const char *heading, const struct pdb_fields *f, int z,
                         uint8_t *b, size_t size) {
  size_t h = strlen(heading);
  uint8_t clear[1024];
  memcpy(clear, heading, h);
  make_pdb(f, clear + h);
  if (!z) {
    memcpy(b, clear, h + 512);
    return h + 512;
  }
  memcpy(b, heading, h);
  uLongf zn = (uLongf)(size - h);
  assert_int_equal(compress(b + h, &zn, clear, h + 512), Z_OK);
  return h + zn;
}

static char name[1024];

static int gini(const uint8_t *b, size_t n, int type, int z,
                struct np_gini_pdb *pdb, struct np_logcap *cap) {
  struct np_log lg = npl_sink(cap);
  struct np_namer nm = {&lg, 0};
  return np_gini_name(b, n, type, z != 0, name, sizeof name, pdb, &nm);
}

static void test_goes16(void **state) {
  (void)state;
  uint8_t b[2048];
  struct pdb_fields f = goes16();
  struct np_gini_pdb pdb;
  struct np_logcap cap;
  size_t n = make_block("TIGE04 KNES 151200\r\r\n", &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), 0);
  assert_string_equal(
      name, "sat/ch1/GOES-16/IR/20240315 1200/EAST-CONUS/4km/ TIGE04 KNES "
            "151200");
  assert_int_equal(pdb.heading_len, 21);
  assert_int_equal(pdb.source, 1);
  assert_int_equal(pdb.platform, 19);
  assert_int_equal(pdb.nrecords, 4);
  assert_int_equal(pdb.record_size, 8);
  assert_int_equal(pdb.year, 2024);
  assert_int_equal(pdb.nx, 8);
  assert_int_equal(pdb.ny, 4);
  assert_int_equal(pdb.res_km, 4);
  assert_int_equal(cap.n, 1);
  assert_string_equal(cap.line[0], "INFO\tTIGE04 KNES 151200 533");
  /* The same, compressed: "satz". */
  n = make_block("TIGE04 KNES 151200\r\r\n", &f, 1, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 1, &pdb, &cap), 0);
  assert_string_equal(
      name, "satz/ch1/GOES-16/IR/20240315 1200/EAST-CONUS/4km/ TIGE04 KNES "
            "151200");
  assert_int_equal(pdb.heading_len, 21);
  assert_int_equal(pdb.nx, 8);
}

static void test_fields(void **state) {
  (void)state;
  uint8_t b[2048];
  struct np_gini_pdb pdb;
  struct np_logcap cap;
  static const struct {
    uint8_t year;
    int full;
  } years[] = {{24, 2024}, {124, 2024}, {70, 2070},
               {71, 1971}, {0, 2000},   {255, 2155}};
  struct pdb_fields f = goes16();
  for (size_t i = 0; i < sizeof years / sizeof years[0]; i++) {
    f.year = years[i].year;
    size_t n = make_block("TIGE04 KNES 151200\r\r\n", &f, 0, b, sizeof b);
    assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), 0);
    assert_int_equal(pdb.year, years[i].full);
  }
  f = goes16();
  f.month = 1;
  f.day = 2;
  f.hour = 3;
  f.minute = 4;
  f.res = 255;
  f.platform = 27;
  f.channel = 64;
  f.sector = 10;
  size_t n = make_block("TICZ99 KNES 020304\r\r\n", &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 9, 0, &pdb, &cap), 0);
  assert_string_equal(name, "sat/ch9/POES/11.0/20240102 0304/NHEM-MULTICOMP/"
                            "255km/ TICZ99 KNES 020304");
}

static void test_decimal_names(void **state) {
  (void)state;
  uint8_t b[2048];
  struct np_gini_pdb pdb;
  struct np_logcap cap;
  struct pdb_fields f = goes16();
  /* Every decimal name shows the leftmost decimal one's number. */
  f.platform = 40;
  f.sector = 50;
  f.channel = 60;
  size_t n = make_block("TIGQ53 KNES 151205\r\r\n", &f, 1, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 1, &pdb, &cap), 0);
  assert_string_equal(
      name, "satz/ch1/40/40/20240315 1200/40/4km/ TIGQ53 KNES 151205");
  f.platform = 11;
  n = make_block("TIGQ53 KNES 151205\r\r\n", &f, 1, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 1, &pdb, &cap), 0);
  assert_string_equal(
      name, "satz/ch1/GOES-8/60/20240315 1200/60/4km/ TIGQ53 KNES 151205");
  f.channel = 1;
  n = make_block("TIGQ53 KNES 151205\r\r\n", &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), 0);
  assert_string_equal(
      name, "sat/ch1/GOES-8/VIS/20240315 1200/50/4km/ TIGQ53 KNES 151205");
  f.platform = 255;
  f.channel = 200;
  f.sector = 0;
  n = make_block("TIGQ53 KNES 151205\r\r\n", &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), 0);
  assert_string_equal(
      name, "sat/ch1/255/255/20240315 1200/NHEM-COMP/4km/ TIGQ53 KNES 151205");
}

static void test_heading_bytes(void **state) {
  (void)state;
  uint8_t b[2048];
  struct np_gini_pdb pdb;
  struct np_logcap cap;
  struct pdb_fields f = goes16();
  /* Bytes below 0x20 dropped, 0x20 kept, bytes at or above 0x80 kept. */
  size_t n =
      make_block("TIGE04\x01 KNES\xe9\t151200\r\r\n", &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), 0);
  assert_string_equal(name, "sat/ch1/GOES-16/IR/20240315 1200/EAST-CONUS/4km/"
                            " TIGE04 KNES\xe9"
                            "151200");
  assert_int_equal(pdb.heading_len, 23);
  /* LDM's name is at most 254 bytes. */
  char heading[400];
  memset(heading, 'A', 300);
  strcpy(heading + 300, "\r\r\n");
  n = make_block(heading, &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), 0);
  assert_int_equal(strlen(name), 254);
  assert_memory_equal(name, "sat/ch1/GOES-16/IR/", 19);
  /* And the caller's buffer. */
  char small[12];
  assert_int_equal(
      np_gini_name(b, n, 1, false, small, sizeof small, &pdb, NULL), 0);
  assert_string_equal(small, "sat/ch1/GOE");
}

static void test_failures(void **state) {
  (void)state;
  uint8_t b[4096];
  struct np_gini_pdb pdb;
  struct np_logcap cap;
  struct pdb_fields f = goes16();
  /* nx or ny below 1: no product. */
  f.ny = 0;
  size_t n = make_block("TIGE04 KNES 151200\r\r\n", &f, 0, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 0, &pdb, &cap), -1);
  assert_int_equal(cap.n, 2);
  assert_string_equal(cap.line[1], "ERROR\tError reading pdb, punt");
  f = goes16();
  f.nx = 0;
  n = make_block("TIGE04 KNES 151200\r\r\n", &f, 1, b, sizeof b);
  assert_int_equal(gini(b, n, 1, 1, &pdb, &cap), -1);
  /* Not a zlib stream: zlib's code, then the punt. */
  static const char bad[] = "TIGE04 KNES 151200\r\r\nnotzlibnotzlib";
  assert_int_equal(gini((const uint8_t *)bad, sizeof bad - 1, 1, 1, &pdb, &cap),
                   -1);
  assert_int_equal(cap.n, 3);
  assert_string_equal(cap.line[1], "ERROR\tlarge inflate error: -3");
  assert_string_equal(cap.line[2], "ERROR\tError reading pdb, punt");
  /* A PDB the block does not hold reads as 0: no product. */
  assert_true(make_block("TIGE04 KNES 151200\r\r\n", &f, 0, b, sizeof b) > 40);
  assert_int_equal(gini(b, 40, 1, 0, &pdb, &cap), -1);
  assert_int_equal(gini(b, 5, 1, 0, &pdb, &cap), -1);
  assert_int_equal(cap.n, 2);
  assert_string_equal(cap.line[0], "INFO\tTIGE0 5");
  assert_int_equal(gini(b, 0, 1, 0, &pdb, &cap), -1);
  assert_int_equal(cap.n, 1); /* no heading: no INFO line */
}

static void test_inflate_bounds(void **state) {
  (void)state;
  static uint8_t clear[7000], b[8000];
  struct np_gini_pdb pdb;
  struct np_logcap cap;
  /* A stream that needs more than 540 bytes in never ends: no zlib
   * error, so only the punt. */
  memcpy(clear, "TIGE04 KNES 151200\r\r\n", 21);
  uint32_t x = 12345;
  for (size_t i = 21; i < 2000; i++) {
    x = x * 1103515245u + 12345u;
    clear[i] = (uint8_t)(x >> 16);
  }
  clear[21 + 17] = 8;
  clear[21 + 19] = 4;
  memcpy(b, clear, 21);
  uLongf zn = sizeof b - 21;
  assert_int_equal(compress(b + 21, &zn, clear, 2000), Z_OK);
  assert_true(zn > 540);
  assert_int_equal(gini(b, 21 + zn, 1, 1, &pdb, &cap), -1);
  assert_int_equal(cap.n, 2);
  assert_string_equal(cap.line[1], "ERROR\tError reading pdb, punt");
  /* One that gives more than 6000 bytes out: the same. */
  memset(clear + 21, 'x', sizeof clear - 21);
  zn = sizeof b - 21;
  assert_int_equal(compress(b + 21, &zn, clear, sizeof clear), Z_OK);
  assert_true(zn <= 540);
  assert_int_equal(gini(b, 21 + zn, 1, 1, &pdb, &cap), -1);
  assert_int_equal(cap.n, 2);
  /* A stream cut short by the block's end. */
  struct pdb_fields f = goes16();
  size_t n = make_block("TIGE04 KNES 151200\r\r\n", &f, 1, b, sizeof b);
  assert_int_equal(gini(b, n - 1, 1, 1, &pdb, &cap), -1);
  /* A stream without a LF in what it gives. */
  memset(clear, 'x', 600);
  zn = sizeof b - 21;
  assert_int_equal(compress(b + 21, &zn, clear, 600), Z_OK);
  assert_int_equal(gini(b, 21 + zn, 1, 1, &pdb, &cap), -1);
  assert_int_equal(cap.n, 2);
  assert_string_equal(cap.line[1], "ERROR\tError reading pdb, punt");
}

/* Every GOES-path product of a vector case named as LDM named it, or
 * refused with LDM's lines. */
static void check_case(const char *c, int *named, int *refused) {
  size_t sn, tn, ln;
  uint8_t *sbn = npv_read(c, ".sbn", &sn);
  char *tsv = (char *)npv_read(c, ".products.tsv", &tn);
  char *log = (char *)npv_read(c, ".log", &ln);
  assert_non_null(sbn);
  assert_non_null(tsv);
  assert_non_null(log);
  size_t pos = 0;
  struct npv_frame f;
  while (npv_next(sbn, sn, &pos, &f)) {
    if (!npv_goes(&f))
      continue;
    struct np_gini_pdb pdb;
    struct np_logcap cap;
    char want[1024];
    int rc = gini(f.data, f.len, f.type, f.transfer & 16, &pdb, &cap);
    if (npv_ident(tsv, f.seqno, want, sizeof want)) {
      assert_int_equal(rc, 0);
      assert_string_equal(name, want);
      (*named)++;
      continue;
    }
    assert_int_equal(rc, -1);
    for (int i = 0; i < cap.n; i++)
      if (strncmp(cap.line[i], "INFO", 4) != 0)
        assert_non_null(strstr(log, cap.line[i]));
    (*refused)++;
  }
}

static void test_vectors(void **state) {
  (void)state;
  int named = 0, refused = 0;
  check_case("gini", &named, &refused);
  assert_int_equal(named, 2);
  assert_int_equal(refused, 1);
  check_case("gini-fallback", &named, &refused);
  assert_int_equal(named, 6);
  assert_int_equal(refused, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_goes16),
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_decimal_names),
      cmocka_unit_test(test_heading_bytes),
      cmocka_unit_test(test_failures),
      cmocka_unit_test(test_inflate_bounds),
      cmocka_unit_test(test_vectors),
  };
  return cmocka_run_group_tests(tests, NULL, npv_teardown);
}
