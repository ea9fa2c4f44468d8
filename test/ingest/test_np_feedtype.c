/*
 * test_np_feedtype.c - a NOAAPORT product's feedtype
 * (pqutils/ingest/feedtype_rules.h): the NEXRAD level III prefixes, LDM's
 * ASCII test with its checked positions and quirks, and the decision
 * table, on every case docs/noaaport.md ("Feedtypes") gives as observed
 * on LDM 6.15.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pq/product.h"
#include "pqutils/ingest/feedtype_rules.h"

static bool nids(int type, int mode, int sub, const char *s) {
  return np_is_nids(type, mode, sub, (const uint8_t *)s, strlen(s));
}

static void test_nids_prefixes(void **state) {
  (void)state;
  static const char *const yes[] = {"SDUS21 KBOX", "SDUS31 KBOX",
                                    "SDUS51 KBOX", "SDUS61 KBOX",
                                    "SDUS71 KBOX", "SDUS81 KBOX"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
    assert_true(nids(4, 2, 0, yes[i]));
  assert_false(nids(4, 2, 0, "SDUS44 KBOX"));  /* SDUS4x is not in the list */
  assert_false(nids(4, 2, 0, "SDCN01 CWAO"));  /* LDM issue #132 */
  assert_false(nids(4, 2, 0, " SDUS51 KBOX")); /* compared raw */
  assert_false(nids(4, 2, 1, "SDUS51 KBOX"));  /* CCB 2/0 only */
  assert_false(nids(4, 1, 0, "SDUS51 KBOX"));
  assert_false(nids(4, 2, 0, "SDUS"));       /* too short to compare */
  assert_true(nids(5, 1, 0, "NOUS44 KWBC")); /* PSH type 5 (NEXRAD) */
  assert_true(nids(5, 0, 0, ""));
}

/* A product at completion: SOH, CR CR LF, "123 ", CR CR LF, then n - 11
 * bytes of text. */
static void text_product(uint8_t *p, size_t n) {
  memcpy(p, "\x01\r\r\n123 \r\r\n", 11);
  for (size_t i = 11; i < n; i++)
    p[i] = (uint8_t)('a' + i % 26);
}

static void test_ascii_positions(void **state) {
  (void)state;
  uint8_t p[400];
  text_product(p, sizeof p);
  assert_true(np_ascii_text(p, sizeof p));
  p[50] = 0x80; /* among the first 100 bytes: HDS */
  assert_false(np_ascii_text(p, sizeof p));
  text_product(p, sizeof p);
  p[100] = 0x90; /* the last of the first range */
  assert_false(np_ascii_text(p, sizeof p));
  text_product(p, sizeof p);
  p[101] = 0x90; /* beyond byte 100 and before N - 101: not checked */
  p[200] = 0x90;
  p[298] = 0x90;
  assert_true(np_ascii_text(p, sizeof p));
  p[299] = 0x90; /* N - 101: checked */
  assert_false(np_ascii_text(p, sizeof p));
  text_product(p, sizeof p);
  p[399] = 0x90; /* the very last byte is never checked */
  assert_true(np_ascii_text(p, sizeof p));
  p[398] = 0x90; /* N - 2 is */
  assert_false(np_ascii_text(p, sizeof p));
  text_product(p, sizeof p);
  p[0] = 0xFF; /* nor is position 0 */
  assert_true(np_ascii_text(p, sizeof p));
}

static void test_ascii_bytes(void **state) {
  (void)state;
  uint8_t p[60];
  static const uint8_t ok[] = {0x00, 0x1E, '\t', '\n', '\r', 0x20, 0x7F};
  for (size_t i = 0; i < sizeof ok; i++) {
    text_product(p, sizeof p);
    p[30] = ok[i];
    assert_true(np_ascii_text(p, sizeof p));
  }
  static const uint8_t bad[] = {0x01, 0x02, 0x1B, 0x1F, 0x80, 0xF0, 0xFF};
  for (size_t i = 0; i < sizeof bad; i++) {
    text_product(p, sizeof p);
    p[30] = bad[i];
    assert_false(np_ascii_text(p, sizeof p));
  }
  /* ETX in the last 8 bytes: LDM means to allow it, but it fails. */
  text_product(p, sizeof p);
  p[sizeof p - 3] = 0x03;
  assert_false(np_ascii_text(p, sizeof p));
  /* Small products: the ranges merge; nothing to check below 3 bytes. */
  assert_true(np_ascii_text((const uint8_t *)"\x01\x02", 2));
  assert_false(np_ascii_text((const uint8_t *)"\x01\x02\x03", 3));
  assert_true(np_ascii_text(NULL, 0));
}

static void test_decision(void **state) {
  (void)state;
  /* NMC2 by type alone, text included */
  assert_int_equal(np_feedtype(6, 1, 3), PQ_FT_NIMAGE);
  assert_int_equal(np_feedtype(6, 3, 1), PQ_FT_NIMAGE);
  assert_int_equal(np_feedtype(6, 4, 1), PQ_FT_NGRID);
  assert_int_equal(np_feedtype(6, 4, 4), PQ_FT_NGRID);
  assert_int_equal(np_feedtype(6, 5, 99), PQ_FT_NEXRAD3);
  assert_int_equal(np_feedtype(6, 9, 1), PQ_FT_NOTHER);
  /* types below 4 on any other channel */
  assert_int_equal(np_feedtype(5, 2, 3), PQ_FT_NIMAGE);
  assert_int_equal(np_feedtype(1, 1, 3), PQ_FT_NIMAGE);
  assert_int_equal(np_feedtype(5, 0, 1), PQ_FT_NIMAGE);
  /* by category */
  assert_int_equal(np_feedtype(5, 4, 1), PQ_FT_IDS | PQ_FT_DDPLUS);
  assert_int_equal(np_feedtype(5, 4, 7), PQ_FT_IDS | PQ_FT_DDPLUS);
  assert_int_equal(np_feedtype(5, 4, 101), PQ_FT_HDS);
  assert_int_equal(np_feedtype(5, 4, 107), PQ_FT_HDS);
  assert_int_equal(np_feedtype(5, 4, 2), PQ_FT_HDS);
  assert_int_equal(np_feedtype(5, 4, 4), PQ_FT_HDS);
  assert_int_equal(np_feedtype(5, 4, 5), PQ_FT_HDS); /* SDUS44 as point */
  assert_int_equal(np_feedtype(5, 4, 99), PQ_FT_NEXRAD3);
  assert_int_equal(np_feedtype(5, 5, 99), PQ_FT_NEXRAD3);
  assert_int_equal(np_feedtype(5, 4, 6), PQ_FT_NOTHER);
  assert_int_equal(np_feedtype(5, 4, 3), PQ_FT_NOTHER);
  assert_int_equal(np_feedtype(5, 4, 8), PQ_FT_NOTHER);
  assert_int_equal(np_feedtype(5, 4, 0), PQ_FT_NOTHER);
  assert_int_equal(np_feedtype(8, 11, 1), PQ_FT_IDS | PQ_FT_DDPLUS);
}

static void test_names(void **state) {
  (void)state;
  assert_int_equal(PQ_FT_IDS | PQ_FT_DDPLUS, 11);
  assert_int_equal(PQ_FT_NIMAGE, 1u << 21);
  assert_int_equal(PQ_FT_NGRID, 1u << 23);
  assert_int_equal(PQ_FT_NOTHER, 1u << 26);
  assert_int_equal(PQ_FT_NEXRAD3, 1u << 27);
  assert_string_equal(np_feedtype_name(PQ_FT_IDS | PQ_FT_DDPLUS), "IDS|DDPLUS");
  assert_string_equal(np_feedtype_name(PQ_FT_HDS), "HDS");
  assert_string_equal(np_feedtype_name(PQ_FT_NIMAGE), "NIMAGE");
  assert_string_equal(np_feedtype_name(PQ_FT_NGRID), "NGRID");
  assert_string_equal(np_feedtype_name(PQ_FT_NOTHER), "NOTHER");
  assert_string_equal(np_feedtype_name(PQ_FT_NEXRAD3), "NEXRAD3");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nids_prefixes),
      cmocka_unit_test(test_ascii_positions),
      cmocka_unit_test(test_ascii_bytes),
      cmocka_unit_test(test_decision),
      cmocka_unit_test(test_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
