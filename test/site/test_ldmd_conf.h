/*
 * test_ldmd_conf.h - what the two files of the test program test_ldmd_conf
 * share: test_ldmd_conf.c (the parser) and test_ldmd_conf_access.c (the
 * access rules).  A scratch directory for each cmocka test (setup,
 * teardown; under $PQ_TEST_DIR), files written into it, and texts that
 * must parse as its ldmd.conf.  Header-only: every function is static
 * inline.
 */
#ifndef TEST_SITE_TEST_LDMD_CONF_H
#define TEST_SITE_TEST_LDMD_CONF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/ldmd_conf.h"
#include "test/lib/testutil.h"

#define DIRLEN 1024 /* the scratch directory */
#define PATHLEN 4096
#define ERRLEN 1024

/* The key the identity tests pin: 32 bytes 00, 11, ... ff, twice over. */
#define PIN_HEX                                                                \
  "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* A scratch directory; the files made in it are removed at teardown. */
typedef struct scratch {
  char dir[DIRLEN];
  char files[64][PATHLEN];
  int nfiles;
  char subdirs[8][PATHLEN];
  int nsubdirs;
} scratch;

static inline int setup(void **state) {
  scratch *s = calloc(1, sizeof *s);

  if (s == NULL)
    return -1;
  if (tu_scratch_make(s->dir, sizeof s->dir, "ldmd_conf") != 0) {
    free(s);
    return -1;
  }
  *state = s;
  return 0;
}

static inline int teardown(void **state) {
  scratch *s = *state;
  int i;

  for (i = 0; i < s->nfiles; i++)
    unlink(s->files[i]);
  for (i = s->nsubdirs; i-- > 0;)
    rmdir(s->subdirs[i]);
  rmdir(s->dir);
  free(s);
  return 0;
}

/* A cmocka test with its scratch directory. */
#define SCRATCH_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Write name (relative to the scratch directory) with text; its path. */
static inline const char *put(scratch *s, const char *name, const char *text) {
  char full[PATHLEN];
  char *path = NULL;
  FILE *f;
  int i;

  snprintf(full, sizeof full, "%s/%s", s->dir, name);
  for (i = 0; i < s->nfiles && path == NULL; i++)
    if (strcmp(s->files[i], full) == 0)
      path = s->files[i];
  if (path == NULL) {
    assert_true(s->nfiles < 64);
    path = s->files[s->nfiles++];
    memcpy(path, full, sizeof full);
  }
  f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
  return path;
}

/* Parse text as <dir>/ldmd.conf; expect success.  who names the case. */
static inline ldm_conf *parse_ok_who(scratch *s, const char *who,
                                     const char *text) {
  const char *path = put(s, "ldmd.conf", text);
  char err[ERRLEN];
  ldm_conf *conf = NULL;
  int rc = ldm_conf_parse(path, &conf, err, sizeof err);

  if (rc != LDM_CONF_OK)
    fail_msg("%s: parse failed (%d): %s", who, rc, err);
  assert_non_null(conf);
  assert_string_equal(err, "");
  return conf;
}

static inline ldm_conf *parse_ok(scratch *s, const char *text) {
  return parse_ok_who(s, "parse_ok", text);
}

/* The access rules' tests (test_ldmd_conf_access.c), as a cmocka group.
 * @return the number that failed */
int ldmd_conf_access_tests(void);

#endif
