/*
 * test_resume.c - the requester's resume file (ldmd/server/resume.h) and its
 * autoshift rule (ldmd/server/autoshift.h): file names keyed like LDM's .info
 * files, a new file with no point, points written and read back across
 * reopening, the two slots surviving a torn or corrupt one, the lock that
 * keeps a second writer out, and LDM's primary/alternate switching rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/server/autoshift.h"
#include "ldmd/server/resume.h"

static char dir[4096];

static int make_dir(void **state) {
  const char *base = getenv("PQ_TEST_DIR");

  (void)state;
  snprintf(dir, sizeof dir, "%s/resume.XXXXXX",
           base != NULL && *base != '\0' ? base : "/tmp");
  return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state) {
  char cmd[4200];

  (void)state;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void sig_of(int n, uint8_t sig[PQ_SIGLEN]) {
  for (int i = 0; i < PQ_SIGLEN; i++)
    sig[i] = (uint8_t)(n * 31 + i);
}

static void test_path(void **state) {
  ldmd_resume_key k = {"idd.example.edu", 388, 0x0f, "^SA"};
  ldmd_resume_key k2 = {"idd.example.edu", 389, 0x0f, "^SA"};
  char a[4096], b[4096], c[4096];

  (void)state;
  assert_int_equal(ldmd_resume_path(NULL, "/q/dir/ldm.pq", &k, a, sizeof a), 0);
  assert_int_equal(strncmp(a, "/q/dir/ldm.pq.", 14), 0);
  assert_int_equal(strlen(a), strlen("/q/dir/ldm.pq.") + 32 + 7);
  assert_string_equal(a + strlen(a) - 7, ".resume");
  assert_int_equal(ldmd_resume_path("", "/q/dir/ldm.pq", &k2, b, sizeof b), 0);
  assert_string_not_equal(a, b); /* the port is in the key */
  assert_int_equal(
      ldmd_resume_path("/state/", "/q/dir/ldm.pq", &k, c, sizeof c), 0);
  assert_string_equal(c + 7, a + 7); /* same name, other directory */
  assert_int_equal(strncmp(c, "/state/ldm.pq.", 14), 0);
  assert_int_equal(ldmd_resume_path(NULL, "ldm.pq", &k, c, sizeof c), 0);
  assert_int_equal(strncmp(c, "./ldm.pq.", 9), 0);
  assert_int_equal(ldmd_resume_path(NULL, "/q/dir/ldm.pq", &k, c, 20), -1);
}

static void test_points(void **state) {
  ldmd_resume_key k = {"up.example", 388, 8, ".*"};
  char path[4096], err[512];
  ldmd_resume *r, *r2;
  uint8_t sig[PQ_SIGLEN], got[PQ_SIGLEN];
  pq_timestamp t = {1700000000, 123456}, tg;
  int fd, i;

  (void)state;
  assert_int_equal(ldmd_resume_path(dir, "/x/ldm.pq", &k, path, sizeof path),
                   0);
  assert_int_equal(
      ldmd_resume_open(path, "REQUEST IDS .* up", &r, err, sizeof err),
      LDMD_RESUME_OK);
  assert_false(ldmd_resume_get(r, got, &tg));

  /* A second opener is kept out while the first holds the file. */
  assert_int_equal(ldmd_resume_open(path, "x", &r2, err, sizeof err),
                   LDMD_RESUME_BUSY);
  for (i = 1; i <= 5; i++) {
    sig_of(i, sig);
    t.usec = i;
    assert_int_equal(ldmd_resume_put(r, sig, t), 0);
  }
  assert_true(ldmd_resume_get(r, got, &tg));
  assert_memory_equal(got, sig, PQ_SIGLEN);
  ldmd_resume_close(r);

  /* Reopened: the last point. */
  assert_int_equal(ldmd_resume_open(path, "x", &r, err, sizeof err),
                   LDMD_RESUME_OK);
  assert_true(ldmd_resume_get(r, got, &tg));
  assert_memory_equal(got, sig, PQ_SIGLEN);
  assert_int_equal(tg.sec, 1700000000);
  assert_int_equal(tg.usec, 5);
  ldmd_resume_close(r);

  /* The slot of the last write is torn: the one before it remains. */
  fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, "0000000000000000000X", 20, 96), 20); /* 5: 1 */
  close(fd);
  assert_int_equal(ldmd_resume_open(path, "x", &r, err, sizeof err),
                   LDMD_RESUME_OK);
  assert_true(ldmd_resume_get(r, got, &tg));
  sig_of(4, sig);
  assert_memory_equal(got, sig, PQ_SIGLEN);
  /* Writing goes on from there, into the torn slot. */
  sig_of(6, sig);
  assert_int_equal(ldmd_resume_put(r, sig, t), 0);
  ldmd_resume_close(r);
  assert_int_equal(ldmd_resume_open(path, "x", &r, err, sizeof err),
                   LDMD_RESUME_OK);
  assert_true(ldmd_resume_get(r, got, &tg));
  assert_memory_equal(got, sig, PQ_SIGLEN);
  ldmd_resume_close(r);

  /* Both slots damaged: no point (the requester then asks from its time
   * offset and the queue drops what it has). */
  fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, "garbage", 7, 30), 7);
  assert_int_equal(pwrite(fd, "garbage", 7, 96 + 30), 7);
  close(fd);
  assert_int_equal(ldmd_resume_open(path, "x", &r, err, sizeof err),
                   LDMD_RESUME_OK);
  assert_false(ldmd_resume_get(r, got, &tg));
  ldmd_resume_close(r);

  /* A directory that does not exist: an error that names the path. */
  assert_int_equal(
      ldmd_resume_open("/nonexistent-dir/x.resume", "x", &r, err, sizeof err),
      LDMD_RESUME_ESYS);
  assert_non_null(strstr(err, "/nonexistent-dir/x.resume"));
}

static void test_autoshift(void **state) {
  ldmd_autoshift a;

  (void)state;
  /* Alone: an alternate switches after its first message, a primary never. */
  ldmd_autoshift_init(&a, 1, false, 60000, 0);
  assert_true(ldmd_autoshift_due(&a, 1));
  ldmd_autoshift_init(&a, 1, true, 60000, 0);
  ldmd_autoshift_add(&a, 0, 100);
  assert_false(ldmd_autoshift_due(&a, 120000));

  /* Two feeds: nothing before the period; nothing when nothing came. */
  ldmd_autoshift_init(&a, 2, true, 1000, 0);
  ldmd_autoshift_add(&a, 0, 10);
  assert_false(ldmd_autoshift_due(&a, 999));
  assert_true(ldmd_autoshift_due(&a, 1000));  /* primary, A 0 <= R 10 */
  assert_false(ldmd_autoshift_due(&a, 2500)); /* A + R = 0 */

  ldmd_autoshift_init(&a, 2, true, 1000, 0);
  ldmd_autoshift_add(&a, 10, 2);
  assert_false(ldmd_autoshift_due(&a, 1000)); /* primary that brings them */

  ldmd_autoshift_init(&a, 2, false, 1000, 0);
  ldmd_autoshift_add(&a, 0, 10);
  assert_false(ldmd_autoshift_due(&a, 1000)); /* alternate, all dups */
  ldmd_autoshift_add(&a, 5, 5);
  assert_true(ldmd_autoshift_due(&a, 2000)); /* alternate, A >= R */

  /* Three feeds: mean = R / 2. */
  ldmd_autoshift_init(&a, 3, true, 1000, 0);
  ldmd_autoshift_add(&a, 5, 10);
  assert_true(ldmd_autoshift_due(&a, 1000)); /* 5 <= 10 / 2 */
  ldmd_autoshift_init(&a, 3, true, 1000, 0);
  ldmd_autoshift_add(&a, 6, 10);
  assert_false(ldmd_autoshift_due(&a, 1000)); /* 6 > 5 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_path),
      cmocka_unit_test(test_points),
      cmocka_unit_test(test_autoshift),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
