/*
 * test_np_wmo.c - the WMO heading as LDM 6.15 rebuilds it, the " /p" PIL
 * of the line after it and the printable prefix of headless products
 * (pqutils/ingest/wmo_heading.h): every observed case of
 * docs/noaaport.md, section "Identifiers", and the edges of the rules
 * (W's blanks, the LF within 31 bytes, a NUL ending the text, the PIL's
 * trailing bytes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/wmo_heading.h"

/* The canonical heading of the text s (its strlen), or "-" if none. */
static const char *heading(const char *s, size_t *after) {
  static char out[NP_WMO_MAX + 1];
  size_t a = 0;
  if (np_wmo_heading((const uint8_t *)s, strlen(s), out, &a, NULL) != 0)
    return "-";
  if (after != NULL)
    *after = a;
  return out;
}

static void test_observed_headings(void **state) {
  (void)state;
  size_t after = 0;
  assert_string_equal(heading("SRUS KWBC 151303\r\r\nABCDEF\r\r\n", NULL),
                      "SRUS00 KWBC 151303");
  assert_string_equal(heading("SRUS8 KWBC 151303 RR A\r\r\nABCDEF\r\r\n", NULL),
                      "SRUS08 KWBC 151303 RR");
  assert_string_equal(heading("NOUS41 KWBC 151201 RRA\r\r\nPNS   \r\r\n", NULL),
                      "NOUS41 KWBC 151201 RRA");
  assert_string_equal(heading("NOUS41 KWBC 151200\r\r\nPNSWSH\r\r\n", &after),
                      "NOUS41 KWBC 151200");
  assert_int_equal(after, 21); /* past the heading line's LF */
  assert_string_equal(heading("SRUS80 KWBC 151302\r\r\n", NULL),
                      "SRUS80 KWBC 151302");
}

static void test_fields(void **state) {
  (void)state;
  /* Extra blanks between fields disappear; no blank is allowed between
   * AA and ii; a trailing Z after DDHHMM becomes BBB. */
  assert_string_equal(heading("  NOUS41   KWBC    151200  \r\r\n", NULL),
                      "NOUS41 KWBC 151200");
  assert_string_equal(heading("NOUS 41 KWBC 151200\r\n", NULL),
                      "NOUS00 41 KWBC 151200");
  assert_string_equal(heading("FPUS51 KBOX 151200Z\r\n", NULL),
                      "FPUS51 KBOX 151200 Z");
  assert_string_equal(heading("NOUS41KWBC151200\n", NULL),
                      "NOUS41 KWBC 151200");
  /* Digits in TT and AA; ii is the whole run of digits. */
  assert_string_equal(heading("1234567 KWBC 151200\n", NULL),
                      "1234567 KWBC 151200");
  assert_string_equal(heading("SRUS123 KWBC 151200\n", NULL),
                      "SRUS123 KWBC 151200");
  /* BBB is at most 9 characters; what follows on the line is ignored. */
  assert_string_equal(heading("NOUS41 KWBC 151200 ABCDEFGHIJK xyz\n", NULL),
                      "NOUS41 KWBC 151200 ABCDEFGHI");
  /* Fields may come out short or empty: W takes nothing at a '.'. */
  assert_string_equal(heading("N. KWBC 151200\n", NULL), "N00  ");
}

static void test_no_heading(void **state) {
  (void)state;
  assert_string_equal(
      heading("hello world, this is not a WMO header at all\r\r\nx\r\r\n",
              NULL),
      "-");
  /* W fails when only blanks are left. */
  assert_string_equal(heading("NOUS41 KWBC   ", NULL), "-");
  assert_string_equal(heading("", NULL), "-");
  assert_string_equal(heading("NOUS41 KWBC 151200", NULL), "-");
  /* The LF must be within the 31 bytes after BBB. */
  char text[80];
  snprintf(text, sizeof text, "NOUS41 KWBC 151200 RRA%30s\n", "");
  assert_string_equal(heading(text, NULL), "NOUS41 KWBC 151200 RRA");
  snprintf(text, sizeof text, "NOUS41 KWBC 151200 RRA%31s\n", "");
  assert_string_equal(heading(text, NULL), "-");
}

static void test_nul_ends_text(void **state) {
  (void)state;
  static const uint8_t a[] = "NOUS41 KWBC\0 151200\r\r\n";
  char out[NP_WMO_MAX + 1];
  size_t after;
  assert_int_equal(np_wmo_heading(a, sizeof a - 1, out, &after, NULL), -1);
  /* The LF is looked for in the raw bytes, past a NUL. */
  static const uint8_t b[] = "NOUS41 KWBC 151200\0\r\r\nPIL\r\r\n";
  assert_int_equal(np_wmo_heading(b, sizeof b - 1, out, &after, NULL), 0);
  assert_string_equal(out, "NOUS41 KWBC 151200");
  assert_int_equal(after, 22);
  /* Only the bytes given are read. */
  assert_int_equal(np_wmo_heading(b, 20, out, &after, NULL), -1);
}

/* The PIL of the line s, or "-" if none. */
static const char *pil(const char *s, size_t n) {
  static char out[8];
  return np_wmo_pil((const uint8_t *)s, n, out) ? out : "-";
}

#define PIL(s) pil(s, sizeof(s) - 1)

static void test_observed_pils(void **state) {
  (void)state;
  assert_string_equal(PIL("PNSWSH\r\r\nTest body\r\r\n"), "PNSWSH");
  assert_string_equal(PIL("PNS   \r\r\nbody\r\r\n"), "PNS");
  assert_string_equal(PIL("123456\r\r\nx\r\r\n"), "-");
  assert_string_equal(PIL("AB CDE\r\r\nx\r\r\n"), "-");
  assert_string_equal(PIL("ABCDE\r\r\nx\r\r\n"), "-");
  assert_string_equal(PIL("ABCDEF\r\r\nx\r\r\n"), "ABCDEF");
  assert_string_equal(PIL("N0QBOX\r\r\n\x00\x01\x02"), "N0QBOX");
}

static void test_pil_rules(void **state) {
  (void)state;
  assert_string_equal(PIL("^NMCABCDEF\r\r\n"), "ABCDEF");
  assert_string_equal(PIL("GRIB\x00\x00\x33\x01\n"), "-");
  assert_string_equal(PIL(" ABCDEF\r\r\n"), "-"); /* alnum first */
  assert_string_equal(PIL("ABCDEF\r\r"), "-");    /* no LF in the block */
  assert_string_equal(PIL("ABCDEFG\r\r\n"), "-"); /* 7 characters */
  assert_string_equal(PIL("AB    \r\r\n"), "-");  /* kept to 3: "AB " */
  assert_string_equal(PIL("A1B2C3\x80\x90\n"), "A1B2C3"); /* signed */
  assert_string_equal(PIL("ABC\rEF\r\r\n"), "-");         /* a control inside */
  assert_string_equal(PIL("ABC\tEF\n"), "-");
  assert_string_equal(PIL("ABC \t \n"), "ABC");
  assert_string_equal(PIL("AB\0DEF\r\r\n"), "AB"); /* a NUL ends it */
  assert_string_equal(pil("ABCDEF\r\r\n", 6), "-");
}

static void test_printable_prefix(void **state) {
  (void)state;
  char out[NP_PREFIX_MAX + 1];
  static const uint8_t q[] = "?\xff\x00";
  assert_int_equal(np_printable_prefix(q, 3, out), 1);
  assert_string_equal(out, "?");
  static const uint8_t h[] = "hello world\x7f!\r\r\n";
  assert_int_equal(np_printable_prefix(h, sizeof h - 1, out), 13);
  assert_string_equal(out, "hello world\x7f!");
  assert_int_equal(np_printable_prefix(h, 5, out), 5);
  assert_int_equal(np_printable_prefix(q + 1, 2, out), 0);
  assert_string_equal(out, "");
  uint8_t big[400];
  memset(big, 'A', sizeof big);
  assert_int_equal(np_printable_prefix(big, sizeof big, out), NP_PREFIX_MAX);
  assert_int_equal(strlen(out), NP_PREFIX_MAX);
}

/* The log lines given, for the "wmoid is bizzare" case. */
static char logged[512];
static void collect(void *arg, int level, const char *msg) {
  (void)arg;
  snprintf(logged, sizeof logged, "%d %s", level, msg);
}

static void test_long_heading(void **state) {
  (void)state;
  /* The heading alone cannot pass 128 characters: the widest is short. */
  struct np_log lg = {collect, NULL, NP_DEBUG};
  char out[NP_WMO_MAX + 1];
  size_t after;
  static const uint8_t w[] = "SRUS99999999999999999999 KWBC 151200 ABCDEFGHI\n";
  logged[0] = '\0';
  assert_int_equal(np_wmo_heading(w, sizeof w - 1, out, &after, &lg), 0);
  /* ii as LDM's %d stores it: a long, saturated, kept in an int. */
  assert_string_equal(out, "SRUS-1 KWBC 151200 ABCDEFGHI");
  assert_string_equal(logged, "");
  static const uint8_t v[] = "SRUS4294967296999 KWBC 151200\n";
  assert_int_equal(np_wmo_heading(v, sizeof v - 1, out, &after, &lg), 0);
  assert_string_equal(out, "SRUS999 KWBC 151200");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_observed_headings),
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_no_heading),
      cmocka_unit_test(test_nul_ends_text),
      cmocka_unit_test(test_observed_pils),
      cmocka_unit_test(test_pil_rules),
      cmocka_unit_test(test_printable_prefix),
      cmocka_unit_test(test_long_heading),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
