/*
 * test_cli_oldest - the oldest-product warning's bookkeeping that pqact and
 * pq2nats share (pqutils/common/cli.h, cli_oldest_*): a product is noted
 * only when it was the queue's oldest; a warning is due only for a full
 * queue, at most once every CLI_OLDEST_EVERY_S seconds, with the product's
 * line and age; a note is used once.  On a real queue (test/lib/testutil.h)
 * filled past its slots so that it is full.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pqutils/common/cli.h"
#include "test/lib/testutil.h"

static char path[4096];

static int setup(void **state) {
  (void)state;
  tu_path(path, sizeof path, "cli_oldest.pq");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  remove(path);
  return 0;
}

static void insert(pq_t *pq, uint64_t seed) {
  static uint8_t buf[100];
  pq_prod_info info;
  tu_product(&info, buf, sizeof buf, seed);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
}

/* pq_next()'s callback, as pqact's and pq2nats's: note the product. */
static int note(const pq_prod_info *info, const void *data,
                const pq_place *place, void *arg) {
  (void)data;
  cli_oldest_note(arg, info, place);
  return 0;
}

/* Read the next product from the cursor into the note. */
static void read_next(pq_t *pq, struct cli_oldest *o) {
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, note, o), PQ_OK);
}

static void test_not_full_no_warning(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 8);
  struct cli_oldest o = {0};
  pq_stats st;
  double age = -1;
  insert(pq, 1);
  insert(pq, 2);
  pq_cursor_oldest(pq);
  read_next(pq, &o);
  assert_true(o.pending);                          /* the oldest, noted */
  assert_false(cli_oldest_due(&o, pq, &st, &age)); /* but not full */
  assert_false(o.pending);                         /* the note is used */
  read_next(pq, &o);
  assert_false(o.pending); /* the second is not the oldest */
  pq_close(pq);
}

static void test_full_warns_once_per_period(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 8);
  struct cli_oldest o = {0};
  pq_stats st;
  double age = -1;
  for (uint64_t i = 0; i < 20; i++) /* 8 slots: evicting, so full */
    insert(pq, i);
  pq_cursor_oldest(pq);
  read_next(pq, &o);
  assert_true(o.pending);
  assert_true(cli_oldest_due(&o, pq, &st, &age));
  assert_true(st.ps_is_full);
  assert_true(age >= 0 && age < 60);
  assert_non_null(strstr(o.prod, "test/12")); /* 12..19 are left */
  cli_oldest_said(&o);
  assert_true(o.said > 0);
  /* Again at once: the oldest once more, but within the quiet period. */
  pq_cursor_oldest(pq);
  read_next(pq, &o);
  assert_true(o.pending);
  assert_false(cli_oldest_due(&o, pq, &st, &age));
  assert_false(o.pending);
  /* The period over (said moved back): due again. */
  o.said -= CLI_OLDEST_EVERY_S + 1;
  pq_cursor_oldest(pq);
  read_next(pq, &o);
  assert_true(cli_oldest_due(&o, pq, &st, &age));
  pq_close(pq);
}

static void test_nothing_noted_nothing_due(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 8);
  struct cli_oldest o = {0};
  pq_stats st;
  double age = -1;
  for (uint64_t i = 0; i < 20; i++)
    insert(pq, i);
  assert_false(cli_oldest_due(&o, pq, &st, &age)); /* full, no note */
  assert_true(age < 0);                            /* untouched */
  pq_close(pq);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_not_full_no_warning, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_full_warns_once_per_period, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_nothing_noted_nothing_due, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
