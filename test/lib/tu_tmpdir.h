/*
 * tu_tmpdir.h - a scratch directory for each cmocka test of a file: made
 * under $PQ_TEST_DIR (else /tmp) as TU_TMPDIR_PREFIX.XXXXXX, made the
 * working directory, and removed with what it holds after the test.
 *
 * Define TU_TMPDIR_PREFIX before including; use tu_tmpdir_setup and
 * tu_tmpdir_teardown with cmocka_unit_test_setup_teardown(); the path is
 * in tu_dir.  tu_slurp() reads a small file there (cmocka's asserts: include
 * cmocka.h first).
 */
#ifndef TU_TMPDIR_H
#define TU_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef TU_TMPDIR_PREFIX
#error "define TU_TMPDIR_PREFIX before including tu_tmpdir.h"
#endif

static char tu_dir[256];

static inline int tu_tmpdir_setup(void **state) {
  (void)state;
  const char *base = getenv("PQ_TEST_DIR");
  snprintf(tu_dir, sizeof tu_dir, "%s/%s.XXXXXX", base != NULL ? base : "/tmp",
           TU_TMPDIR_PREFIX);
  if (mkdtemp(tu_dir) == NULL || chdir(tu_dir) != 0)
    return -1;
  return 0;
}

static inline int tu_tmpdir_teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* The first 4 KiB of path, as a string (a static buffer). */
static inline const char *tu_slurp(const char *path) {
  static char buf[4096];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

#endif /* TU_TMPDIR_H */
