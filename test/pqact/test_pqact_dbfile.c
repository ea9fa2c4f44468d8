/*
 * test_pqact_dbfile - DBFILE's databases among FILE's outputs
 * (pqutils/pqact/dbfile.c, filing.h): they count against the same limit
 * and the least recently used output, file or database, is closed first;
 * a closed database is reopened and keeps what it had.  A database is
 * closed when a gdbm reader can open it (gdbm lets no reader in beside a
 * writer).  dbfile.sh tests the bytes stored.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <gdbm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pqutils/pqact/dbfile.h"
#include "test/lib/tu_skip.h"

#define TU_TMPDIR_PREFIX "pqact_dbfile"
#include "test/lib/tu_tmpdir.h"

static pq_prod_info info = {.feedtype = PQ_FT_EXP, .size = 2};

/* One action of type with argument words w1 (and w2). */
static int act(struct pqact_outputs *o, enum pqact_action type, const char *w1,
               const char *w2) {
  char a[64], b[64];
  char *argv[2] = {a, b};
  snprintf(a, sizeof a, "%s", w1);
  snprintf(b, sizeof b, "%s", w2 != NULL ? w2 : "");
  int argc = w2 != NULL ? 2 : 1;
  if (type == PQACT_DBFILE)
    return pqact_dbfile_action(o, argc, argv, &info, "xy");
  return pqact_file_action(o, type, argc, argv, &info, "xy");
}

/* Is the database at path closed (can a reader open it)?  With how many
 * keys. */
static bool closed(const char *path, int *nkeys) {
  GDBM_FILE db = gdbm_open(path, 0, GDBM_READER, 0, NULL);
  if (db == NULL)
    return false;
  *nkeys = 0;
  for (datum k = gdbm_firstkey(db); k.dptr != NULL;) {
    datum next = gdbm_nextkey(db, k);
    free(k.dptr);
    k = next;
    (*nkeys)++;
  }
  gdbm_close(db);
  return true;
}

static void test_shared_limit(void **state) {
  (void)state;
  int n;
  strcpy(info.ident, "ID1");
  struct pqact_outputs *o = pqact_outputs_new(2);
  assert_non_null(o);
  assert_int_equal(act(o, PQACT_DBFILE, "a.db", NULL), 0);
  assert_int_equal(act(o, PQACT_DBFILE, "b.db", NULL), 0);
  assert_int_equal(pqact_outputs_open(o), 2);
  assert_false(closed("a.db", &n));
  /* a file needs room: the least recently used, a.db, is closed */
  assert_int_equal(act(o, PQACT_FILE, "c.txt", NULL), 0);
  assert_int_equal(pqact_outputs_open(o), 2);
  assert_true(closed("a.db", &n));
  assert_int_equal(n, 1);
  assert_false(closed("b.db", &n));
  /* a.db again: reopened, b.db (now the least recently used) closed */
  strcpy(info.ident, "ID2");
  assert_int_equal(act(o, PQACT_DBFILE, "a.db", NULL), 0);
  assert_true(closed("b.db", &n));
  assert_false(closed("a.db", &n));
  /* the same database under an explicit key: no second handle */
  assert_int_equal(act(o, PQACT_DBFILE, "a.db", "KEY"), 0);
  assert_int_equal(pqact_outputs_open(o), 2);
  /* -close closes it whoever opened it */
  assert_int_equal(act(o, PQACT_DBFILE, "-close", "a.db"), 0);
  assert_int_equal(pqact_outputs_open(o), 1);
  assert_true(closed("a.db", &n));
  assert_int_equal(n, 3); /* ID1, ID2, KEY: kept across the reopening */
  /* no path */
  assert_int_equal(pqact_dbfile_action(o, 0, NULL, &info, "xy"), -1);
  pqact_outputs_free(o);
  assert_true(closed("b.db", &n));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_shared_limit, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
