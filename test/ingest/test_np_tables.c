/*
 * test_np_tables.c - the naming tables built into libnoaaport
 * (pqutils/ingest/np_tables.h): every table is there, whole, and reads row
 * by row with its fields as in the file, found by name and counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/np_tables.h"

static void test_every_table(void **state) {
  (void)state;
  static const char *const names[] = {
      "g2varsncep.tsv",    "g2varsnssl.tsv",     "g2varswmo.tsv",
      "g2vcrdncep.tsv",    "g2vcrdnssl.tsv",     "g2vcrdwmo.tsv",
      "gini-channels.tsv", "gini-platforms.tsv", "gini-sectors.tsv",
      "grdnav.tbl",        "grdnav.tsv",         "grib-centers.tsv",
      "grib-models.tsv",   "grib1-levels.tsv",   "grib1-params-ncep-opn.tsv",
      "sbn-channels.tsv",  "wmocenter.tsv"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const struct np_table *t = np_table_find(names[i]);
    assert_non_null(t);
    assert_true(t->len > 100);
    assert_int_equal(strlen(t->text), t->len);
  }
  assert_null(np_table_find("nonesuch.tsv"));
}

static void test_rows(void **state) {
  (void)state;
  const struct np_table *t = np_table_find("grib-centers.tsv");
  assert_non_null(t);
  struct np_tsv r;
  np_tsv_open(&r, t);
  assert_int_equal(np_tsv_count(&r), 10);
  struct np_field f[4];
  assert_int_equal(np_tsv_row(&r, f, 4), 2);
  assert_int_equal(np_tsv_count(&r), 9); /* the rows left */
  assert_int_equal(np_field_long(&f[0], -1), 7);
  char name[16];
  np_field_copy(&f[1], name, sizeof name);
  assert_string_equal(name, "ncep");
  int rows = 1;
  while (np_tsv_row(&r, f, 4) > 0)
    rows++;
  assert_int_equal(rows, 10); /* 9 centres and the "*" rule */
  assert_int_equal(np_tsv_count(&r), 0);
  /* by name: the same rows, from the first */
  assert_true(np_tsv_find(&r, "grib-centers.tsv"));
  assert_int_equal(np_tsv_row(&r, f, 4), 2);
  assert_int_equal(np_field_long(&f[0], -1), 7);
  assert_false(np_tsv_find(&r, "nonesuch.tsv"));
}

static void test_blanks_kept(void **state) {
  (void)state;
  /* The as-parsed GEMPAK rows keep LDM's fixed-width padding. */
  const struct np_table *t = np_table_find("g2varswmo.tsv");
  assert_non_null(t);
  struct np_tsv r;
  np_tsv_open(&r, t);
  struct np_field f[9];
  assert_int_equal(np_tsv_row(&r, f, 9), 9);
  assert_int_equal(f[4].n, 32); /* "Temperature" padded to 32 */
  char gem[16];
  np_field_copy(&f[6], gem, sizeof gem);
  assert_string_equal(gem, "TMPK");
  struct np_field bad = {"12x", 3};
  assert_int_equal(np_field_long(&bad, -5), -5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_table),
      cmocka_unit_test(test_rows),
      cmocka_unit_test(test_blanks_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
