/*
 * test_pqact_state - pqact's state file (pqutils/pqact/state.c): reading
 * it as LDM's pqact does (comment lines skipped, "%ld.%ld", negative,
 * malformed, future, unreadable, absent), its bytes (LDM's three comment
 * lines then "%ld.%06ld\n"), the record kept in place (the same inode)
 * product after product and the whole file rewritten at a clean exit or
 * when the record's width changes, and the low-water mark over products
 * whose holds are released out of order, with failures, past the ring's
 * first size.  In a scratch directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pqutils/pqact/state.h"
#include "test/lib/tu_skip.h"

static char dir[256];

static int setup(void **state) {
  (void)state;
  const char *base = getenv("PQ_TEST_DIR");
  snprintf(dir, sizeof dir, "%s/pqact_state.XXXXXX",
           base != NULL ? base : "/tmp");
  if (mkdtemp(dir) == NULL || chdir(dir) != 0)
    return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static const char *slurp(const char *path) {
  static char buf[4096];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* LDM's bytes for a time. */
static const char *ldm_bytes(long sec, long usec) {
  static char buf[512];
  snprintf(buf, sizeof buf, "%s%ld.%06ld\n", PQACT_STATE_HEADER, sec, usec);
  return buf;
}

static ino_t inode(const char *path) {
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  return sb.st_ino;
}

#define NOW_US 1800000000000000ULL /* 2027-01-15 */

static void test_format(void **state) {
  (void)state;
  char buf[32];
  assert_int_equal(pqact_state_format(1733000000123456ULL, buf), 18);
  assert_string_equal(buf, "1733000000.123456\n");
  assert_int_equal(pqact_state_format(5, buf), 9);
  assert_string_equal(buf, "0.000005\n");
  /* the header is LDM's, word for word */
  assert_string_equal(PQACT_STATE_HEADER,
                      "# The following line contains the insertion-time of "
                      "the last, successfully-\n# processed data-product.  "
                      "Do not modify it unless you know exactly what\n# "
                      "you're doing!\n");
}

static void test_read(void **state) {
  (void)state;
  uint64_t us = 0;
  assert_int_equal(pqact_state_read("absent", NOW_US, &us), PQACT_STATE_ABSENT);
  put("s", ldm_bytes(1733000000, 42));
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_FOUND);
  assert_int_equal(us, 1733000000000042ULL);
  /* as LDM's fscanf("%ld.%ld"): blank lines, leading zeros, few digits */
  put("s", "# one\n#two\n\n  0001733000000.000001\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_FOUND);
  assert_int_equal(us, 1733000000000001ULL);
  put("s", "1700000000.5\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_FOUND);
  assert_int_equal(us, 1700000000000005ULL);
  /* refused */
  put("s", "# c\n-5.000000\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_NEGATIVE);
  put("s", "# c\nnot a time\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_MALFORMED);
  put("s", "1700000000\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_MALFORMED);
  put("s", "1700000000.1000000\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_MALFORMED);
  put("s", "# only comments\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_MALFORMED);
  /* the future: the time is given, to be said */
  put("s", ldm_bytes(1800000001, 0));
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_FUTURE);
  assert_int_equal(us, 1800000001000000ULL);
  put("s", "99999999999999999.0\n");
  assert_int_equal(pqact_state_read("s", NOW_US, &us), PQACT_STATE_FUTURE);
  /* a directory opens but cannot be read */
  assert_int_equal(mkdir("d", 0777), 0);
  assert_int_equal(pqact_state_read("d", NOW_US, &us), PQACT_STATE_UNREADABLE);
}

static void test_write(void **state) {
  (void)state;
  struct pqact_state *st = pqact_state_new("w.state");
  assert_non_null(st);
  /* nothing done: nothing written, an existing file left alone */
  assert_int_equal(pqact_state_save(st), 0);
  assert_int_equal(access("w.state", F_OK), -1);
  put("w.state", ldm_bytes(1700000000, 1));
  assert_int_equal(pqact_state_save(st), 0);
  assert_string_equal(slurp("w.state"), ldm_bytes(1700000000, 1));

  /* the first product done writes the whole file; the next ones rewrite
   * the record in place (the same inode) */
  pqact_state_release(st, pqact_state_begin(st, 1733000000000001ULL), true);
  assert_string_equal(slurp("w.state"), ldm_bytes(1733000000, 1));
  ino_t ino = inode("w.state");
  pqact_state_release(st, pqact_state_begin(st, 1733000000999999ULL), true);
  assert_string_equal(slurp("w.state"), ldm_bytes(1733000000, 999999));
  assert_int_equal(inode("w.state"), ino);
  /* a failed product does not advance it; a later success does */
  pqact_state_release(st, pqact_state_begin(st, 1733000001000000ULL), false);
  assert_string_equal(slurp("w.state"), ldm_bytes(1733000000, 999999));
  assert_int_equal(pqact_state_mark(st), 1733000000999999ULL);
  pqact_state_release(st, pqact_state_begin(st, 1733000002000007ULL), true);
  assert_string_equal(slurp("w.state"), ldm_bytes(1733000002, 7));
  assert_int_equal(inode("w.state"), ino);
  assert_int_equal(pqact_state_sync(st, 0), 0);
  /* the clean exit: whole, by rename (a new inode), no temporary left */
  assert_int_equal(pqact_state_save(st), 0);
  assert_string_equal(slurp("w.state"), ldm_bytes(1733000002, 7));
  assert_int_not_equal(inode("w.state"), ino);
  assert_int_equal(access("w.state.tmp", F_OK), -1);
  /* a record of another width: the whole file again, still LDM's bytes */
  pqact_state_free(st);
  st = pqact_state_new("w.state");
  assert_non_null(st);
  pqact_state_release(st, pqact_state_begin(st, 5), true);
  assert_string_equal(slurp("w.state"), ldm_bytes(0, 5));
  pqact_state_release(st, pqact_state_begin(st, 12345678901000000ULL), true);
  assert_string_equal(slurp("w.state"), ldm_bytes(12345678901L, 0));
  pqact_state_free(st);

  /* a file that cannot be written: said, and no harm */
  st = pqact_state_new("no/such/dir/x.state");
  assert_non_null(st);
  pqact_state_release(st, pqact_state_begin(st, 1733000000000000ULL), true);
  assert_int_equal(pqact_state_mark(st), 1733000000000000ULL);
  assert_int_equal(pqact_state_save(st), -1);
  pqact_state_free(st);
}

static void test_low_water(void **state) {
  (void)state;
  struct pqact_state *st = pqact_state_new("m.state");
  assert_non_null(st);
  const uint64_t t0 = 1733000000000000ULL;
  pqact_state_token a = pqact_state_begin(st, t0 + 1);
  pqact_state_token b = pqact_state_begin(st, t0 + 2);
  pqact_state_token c = pqact_state_begin(st, t0 + 3);
  pqact_state_token d = pqact_state_begin(st, t0 + 4);
  assert_int_equal(pqact_state_pending(st), 4);
  pqact_state_hold(st, a); /* a decoder still has a */
  pqact_state_release(st, a, true);
  pqact_state_release(st, c, true);
  pqact_state_release(st, d, true);
  assert_int_equal(pqact_state_mark(st), 0); /* a and b not done */
  assert_int_equal(access("m.state", F_OK), -1);
  pqact_state_release(st, a, true);
  assert_int_equal(pqact_state_mark(st), t0 + 1); /* b not done */
  assert_string_equal(slurp("m.state"), ldm_bytes(1733000000, 1));
  pqact_state_release(st, b, false); /* b failed: the mark passes to d */
  assert_int_equal(pqact_state_mark(st), t0 + 4);
  assert_string_equal(slurp("m.state"), ldm_bytes(1733000000, 4));
  assert_int_equal(pqact_state_pending(st), 0);
  /* stale or unknown tokens change nothing */
  pqact_state_release(st, b, true);
  pqact_state_hold(st, c);
  pqact_state_release(st, PQACT_STATE_NOTOKEN, true);
  assert_int_equal(pqact_state_mark(st), t0 + 4);

  /* beyond the ring's first size, released newest first */
  enum { N = 1000 };
  static pqact_state_token t[N];
  for (unsigned i = 0; i < N; i++)
    t[i] = pqact_state_begin(st, t0 + 10 + i);
  assert_int_equal(pqact_state_pending(st), N);
  for (unsigned i = N - 1; i > 0; i--)
    pqact_state_release(st, t[i], i != N - 1); /* the newest failed */
  assert_int_equal(pqact_state_mark(st), t0 + 4);
  pqact_state_release(st, t[0], true);
  assert_int_equal(pqact_state_mark(st), t0 + 10 + N - 2);
  assert_int_equal(pqact_state_pending(st), 0);
  /* interleaved: begun and done in a moving window */
  pqact_state_token w[3];
  for (unsigned i = 0; i < 3; i++)
    w[i] = pqact_state_begin(st, t0 + 2000 + i);
  for (unsigned i = 3; i < 200; i++) {
    pqact_state_release(st, w[i % 3], true);
    assert_int_equal(pqact_state_mark(st), t0 + 2000 + i - 3);
    w[i % 3] = pqact_state_begin(st, t0 + 2000 + i);
  }
  assert_int_equal(pqact_state_pending(st), 3);
  pqact_state_free(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format),
      cmocka_unit_test_setup_teardown(test_read, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write, setup, teardown),
      cmocka_unit_test_setup_teardown(test_low_water, setup, teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
