/*
 * test_np_stats.c - the ingester's statistics block
 * (pqutils/ingest/ingest_stats.h) in LDM 6.15's layout: the ISO-8601
 * durations, the value column, %g numbers (0/0 is "-nan"), the interval
 * figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/ingest_stats.h"

static char lines[64][128];
static int nlines;

static void collect(void *arg, int level, const char *msg) {
  (void)arg;
  assert_int_equal(level, NP_NOTE);
  if (nlines < 64)
    snprintf(lines[nlines++], sizeof lines[0], "%s", msg);
}

static void test_durations(void **state) {
  (void)state;
  char b[64];
  np_iso_duration(0.013212, b, sizeof b);
  assert_string_equal(b, "PT0.013212S");
  np_iso_duration(86400 + 2 * 3600 + 3 * 60 + 4.5, b, sizeof b);
  assert_string_equal(b, "P1DT2H3M4.500000S");
  np_iso_duration(3600, b, sizeof b);
  assert_string_equal(b, "PT1H0.000000S");
}

static void test_block(void **state) {
  (void)state;
  struct np_stats total = {
      .octets = 14841, .frames = 10, .missed = 2, .products = 4};
  struct np_stats zero = {0};
  struct np_log lg = {collect, NULL, NP_DEBUG};
  nlines = 0;
  np_stats_log(&total, 2.0, &zero, 0.0, &lg);
  assert_int_equal(nlines, 2 * 19 + 4);
  assert_string_equal(lines[0], "");
  assert_string_equal(lines[1], "----------------------------------------");
  assert_string_equal(lines[2], "Ingestion Statistics:");
  assert_string_equal(lines[3], "    Since Previous Report (or Start):");
  assert_string_equal(lines[4], "        Duration          PT2.000000S");
  assert_string_equal(lines[6], "            Octets        14841");
  assert_string_equal(lines[8], "                Octets    7420.5/s");
  assert_string_equal(lines[9], "                Bits      59364/s");
  assert_string_equal(lines[11], "            Number        10");
  assert_string_equal(lines[15], "            %             16.6667");
  assert_string_equal(lines[18], "            %             0");
  assert_string_equal(lines[20], "            Inserted      4");
  assert_string_equal(lines[21], "            Mean Rate     2/s");
  assert_string_equal(lines[22], "    Since Start:");
  /* Nothing over no time: LDM prints what C's %g makes of 0/0. */
  assert_string_equal(lines[34], "            %             -nan");
  assert_string_equal(lines[41], "----------------------------------------");
}

static void test_diff(void **state) {
  (void)state;
  struct np_stats a = {1, 2, 3, 4, 5}, b = {11, 12, 13, 14, 15};
  struct np_stats d = np_stats_diff(&b, &a);
  assert_int_equal(d.octets, 10);
  assert_int_equal(d.products, 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_durations),
      cmocka_unit_test(test_block),
      cmocka_unit_test(test_diff),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
