/*
 * tu_skip.h - skips that show, for the cmocka tests.  cmocka's skip()
 * marks a test skipped, but the program still exits 0 and ctest counts a
 * pass.  A test that cannot run here calls tu_skip() instead, which counts
 * the skip, and main returns tu_exit_code() of cmocka's result: 1 if a test
 * failed, else 77 if one was skipped (ctest reports 77 as skipped: every
 * test is registered with SKIP_RETURN_CODE 77), else 0.  Under CI=true a
 * skip is a failure: the CI machine has what the tests need.
 *
 * So that one test that may skip does not turn its whole program into a
 * skip, tu_select() lets test/CMakeLists.txt register it as a ctest entry
 * of its own: "--only NAME" runs only the test NAME, "--skip NAME" all the
 * others.  Header-only; one program per test file.
 */
#ifndef TEST_TU_SKIP_H
#define TEST_TU_SKIP_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tu_skips; /* tests of this program that skipped */

/* Say why, count it (or fail under CI=true); tu_skip() then skips. */
__attribute__((format(printf, 1, 2))) static inline void
tu_skip_note(const char *fmt, ...) {
  const char *ci = getenv("CI");
  char why[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (ci != NULL && strcmp(ci, "true") == 0)
    fail_msg("cannot run here: %s (a skip is a failure under CI=true)", why);
  print_message("skipped: %s\n", why);
  tu_skips++;
}

/** Skip the running test, saying why (printf format). */
#define tu_skip(...)                                                           \
  do {                                                                         \
    tu_skip_note(__VA_ARGS__);                                                 \
    skip();                                                                    \
  } while (0)

/** "--only NAME" / "--skip NAME": which tests to run.  @return 0, or -1
 *  after a usage message */
static inline int tu_select(int argc, char **argv) {
  if (argc == 1)
    return 0;
  if (argc == 3 && strcmp(argv[1], "--only") == 0) {
    cmocka_set_test_filter(argv[2]);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "--skip") == 0) {
    cmocka_set_skip_filter(argv[2]);
    return 0;
  }
  fprintf(stderr, "usage: %s [--only TEST | --skip TEST]\n", argv[0]);
  return -1;
}

/** The exit status for cmocka's count of failed tests. */
static inline int tu_exit_code(int failed) {
  return failed != 0 ? 1 : tu_skips > 0 ? 77 : 0;
}

#endif /* TEST_TU_SKIP_H */
