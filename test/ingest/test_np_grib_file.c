/*
 * test_np_grib_file.c - gribinsert's search for GRIB messages and its
 * identifiers (pqutils/ingest/grib_file.h): messages of both editions with
 * junk around them; every kind of damage reported with the search going
 * on after its "GRIB"; no read past the bytes given (each buffer is
 * exactly its size, for the sanitizers); the identifier's layout and its
 * cut at 255 bytes, with the GRIB part equal to what the ingester's namers
 * give (np_grib1_name(), np_grib2_name()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/grib1_name.h"
#include "pqutils/ingest/grib2_name.h"
#include "pqutils/ingest/grib_file.h"
#include "test/ingest/sbngen.h"

/* GRIB1 and GRIB2 messages of libsbngen (test/ingest/sbngen.h), the
 * tests' own writer: a GFS 500 mb temperature, and its GRIB2 default. */
static size_t grib1(uint8_t *b) {
  struct sg_grib1 g;
  struct sg_buf out = {0};
  sg_grib1_defaults(&g);
  sg_grib1(&out, &g);
  memcpy(b, out.p, out.n);
  size_t n = out.n;
  sg_buf_free(&out);
  return n;
}

static size_t grib2(uint8_t *b) {
  struct sg_grib2 g;
  struct sg_buf out = {0};
  sg_grib2_defaults(&g);
  sg_grib2(&out, &g);
  memcpy(b, out.p, out.n);
  size_t n = out.n;
  sg_buf_free(&out);
  return n;
}

/* Copy buf[0, n) into a heap buffer of exactly n bytes. */
static uint8_t *exact(const uint8_t *buf, size_t n) {
  uint8_t *p = malloc(n > 0 ? n : 1);
  assert_non_null(p);
  memcpy(p, buf, n);
  return p;
}

static void test_messages_and_junk(void **state) {
  (void)state;
  static uint8_t buf[8192];
  size_t n = 0, a, b, len1;
  memcpy(buf, "header GRI\r\r\n", 13);
  n = 13;
  a = n;
  len1 = grib1(buf + n);
  n += len1;
  memcpy(buf + n, "GRIxx", 5);
  n += 5;
  b = n;
  n += grib2(buf + n);
  memcpy(buf + n, "tail", 4);
  n += 4;
  uint8_t *p = exact(buf, n);
  struct np_grib_msg m;
  assert_int_equal(np_grib_next(p, n, 0, &m), NP_GRIB_MSG);
  assert_int_equal(m.off, a);
  assert_int_equal(m.len, len1);
  assert_int_equal(m.edition, 1);
  assert_int_equal(m.resume, a + len1);
  assert_int_equal(np_grib_next(p, n, m.resume, &m), NP_GRIB_MSG);
  assert_int_equal(m.off, b);
  assert_int_equal(m.edition, 2);
  assert_int_equal(m.resume, n - 4);
  assert_int_equal(np_grib_next(p, n, m.resume, &m), NP_GRIB_END);
  assert_int_equal(np_grib_next(p, n, n, &m), NP_GRIB_END);
  assert_int_equal(np_grib_next(p, n, n + 10, &m), NP_GRIB_END);
  assert_int_equal(np_grib_next(p, 0, 0, &m), NP_GRIB_END);
  free(p);
}

/* Each damage: its result, and the search goes on 4 bytes after "GRIB",
 * where the good message that follows is found. */
static void damaged(const uint8_t *bad, size_t badlen, int want) {
  static uint8_t buf[8192];
  memcpy(buf, bad, badlen);
  size_t good = badlen, n = badlen + grib2(buf + badlen);
  uint8_t *p = exact(buf, n);
  struct np_grib_msg m;
  assert_int_equal(np_grib_next(p, n, 0, &m), want);
  assert_int_equal(m.off, 0);
  assert_int_equal(m.resume, 4);
  assert_int_equal(np_grib_next(p, n, m.resume, &m), NP_GRIB_MSG);
  assert_int_equal(m.off, good);
  assert_string_not_equal(np_grib_scan_text(want), "unknown result");
  free(p);
}

static void test_damage(void **state) {
  (void)state;
  uint8_t b[8192];
  size_t n = grib2(b);
  b[n - 1] = 'X'; /* no 7777 */
  damaged(b, n, NP_GRIB_NO_END);
  n = grib2(b);
  b[15] = (uint8_t)(b[15] + 8); /* length past the good message too */
  damaged(b, n, NP_GRIB_NO_END);
  memcpy(b, "GRIB\0\0\0\3", 8); /* edition 3 */
  damaged(b, 8, NP_GRIB_EDITION);
  memcpy(b, "GRIB\0\0\x05\1", 8); /* GRIB1 of length 5 */
  damaged(b, 8, NP_GRIB_SHORT);
  n = grib2(b);
  memset(b + 8, 0, 8); /* GRIB2 of length 0 */
  damaged(b, n, NP_GRIB_SHORT);
  n = grib2(b);
  b[8] = 0x80; /* a length of 2^63 and more */
  damaged(b, n, NP_GRIB_TRUNCATED);
}

/* Every prefix of a message is truncated, never read past. */
static void test_truncated(void **state) {
  (void)state;
  uint8_t b[8192];
  size_t n = grib2(b);
  for (size_t k = 4; k < n; k++) {
    uint8_t *p = exact(b, k);
    struct np_grib_msg m;
    assert_int_equal(np_grib_next(p, k, 0, &m), NP_GRIB_TRUNCATED);
    assert_int_equal(m.resume, 4);
    free(p);
  }
  n = grib1(b);
  for (size_t k = 4; k < n; k++) {
    uint8_t *p = exact(b, k);
    struct np_grib_msg m;
    assert_int_equal(np_grib_next(p, k, 0, &m), NP_GRIB_TRUNCATED);
    free(p);
  }
  uint8_t *p = exact((const uint8_t *)"GRI", 3);
  struct np_grib_msg m;
  assert_int_equal(np_grib_next(p, 3, 0, &m), NP_GRIB_END);
  free(p);
}

/* The identifier: "<file> !<the ingester's GRIB part>! <seqno>". */
static void test_ident(void **state) {
  (void)state;
  uint8_t b[8192];
  char ident[256], tag[512], model[64], want[700];
  size_t n = grib2(b);
  uint8_t *p = exact(b, n);
  assert_int_equal(np_grib2_name(p, n, "ndfd.grb", tag, sizeof tag, NULL), 0);
  np_grib_file_ident(p, n, "ndfd.grb", 7, ident, NULL);
  snprintf(want, sizeof want, "ndfd.grb !%s! 000007", tag);
  assert_string_equal(ident, want);
  assert_string_equal(
      ident, "ndfd.grb !grib2/ncep/GFS/#004/202403151200F024/VVEL/250 hPa "
             "PRES! 000007");
  free(p);

  n = grib1(b);
  p = exact(b, n);
  np_grib1_name(p, n, model, sizeof model, tag, sizeof tag, NULL);
  np_grib_file_ident(p, n, "d/gfs", 123456, ident, NULL);
  snprintf(want, sizeof want, "d/gfs !%s! 123456", tag);
  assert_string_equal(ident, want);
  assert_string_equal(ident,
                      "d/gfs !grib/ncep/GFS/#003/202403151200/F024/TMP/500 "
                      "mb/ ! 123456");
  free(p);

  /* undecodable GRIB2: "grib2/", as the ingester's META " !grib2/" */
  n = grib2(b);
  b[16 + 4] = 9; /* section 1 becomes section 9 */
  p = exact(b, n);
  np_grib_file_ident(p, n, "x", 0, ident, NULL);
  assert_string_equal(ident, "x !grib2/! 000000");
  free(p);
}

/* Cut to 255 bytes as LDM cuts it. */
static void test_ident_cut(void **state) {
  (void)state;
  uint8_t b[8192];
  char ident[256], file[400];
  size_t n = grib2(b);
  uint8_t *p = exact(b, n);
  memset(file, 'f', sizeof file);
  file[240] = '\0'; /* 240 + " !" + 13 of the tag */
  np_grib_file_ident(p, n, file, 1, ident, NULL);
  assert_int_equal(strlen(ident), 255);
  assert_memory_equal(ident + 240, " !grib2/ncep/GF", 15);
  file[240] = 'f';
  file[252] = '\0';
  np_grib_file_ident(p, n, file, 1, ident, NULL);
  assert_int_equal(strlen(ident), 255);
  assert_memory_equal(ident + 252, " !g", 3);
  file[252] = 'f';
  file[399] = '\0'; /* 253 or more: the file name alone, cut */
  np_grib_file_ident(p, n, file, 1, ident, NULL);
  assert_int_equal(strlen(ident), 255);
  assert_null(strchr(ident, '!'));
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_messages_and_junk), cmocka_unit_test(test_damage),
      cmocka_unit_test(test_truncated),         cmocka_unit_test(test_ident),
      cmocka_unit_test(test_ident_cut),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
