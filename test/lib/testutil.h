/*
 * testutil.h - helpers shared by the unit tests.  For the queue tests: a
 * unique queue path per test under $PQ_TEST_DIR (or /dev/shm), and the
 * cmocka fixtures of a test file whose tests share one queue
 * (TU_QUEUE_FIXTURE); products with random contents whose signature is
 * their MD5; a child process holding the queue open as a writer.  For
 * the others: a scratch directory made by a setup and
 * removed with everything in it by a teardown, and hex text turned into
 * bytes.  Included here: skips that show (test/lib/tu_skip.h), monotonic
 * time (test/lib/tu_clock.h) and seeded bytes (test/lib/tu_fill.h).
 */
#ifndef PQ_TESTUTIL_H
#define PQ_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/lib/tu_clock.h"
#include "test/lib/tu_fill.h"
#include "test/lib/tu_skip.h"

static inline void tu_path(char *buf, size_t len, const char *name) {
  const char *dir = getenv("PQ_TEST_DIR");
  if (dir == NULL || *dir == '\0')
    dir = "/dev/shm";
  snprintf(buf, len, "%s/%s.%ld.pq", dir, name, (long)getpid());
}

/*
 * TU_QUEUE_FIXTURE(name): the queue of a test file whose tests share one
 * (at file scope, once): `path`, tu_path(name), and the cmocka fixtures
 * setup, which names it, and teardown, which removes it and cancels a
 * failure injection a failed test left unused (pq__sys_inject: the file
 * includes pq/internal.h).
 */
#define TU_QUEUE_FIXTURE(name)                                                 \
  static char path[256];                                                       \
  static int setup(void **state) {                                             \
    (void)state;                                                               \
    tu_path(path, sizeof path, name);                                          \
    return 0;                                                                  \
  }                                                                            \
  static int teardown(void **state) {                                          \
    (void)state;                                                               \
    pq__sys_inject(NULL, 0);                                                   \
    unlink(path);                                                              \
    return 0;                                                                  \
  }

/* A fresh directory "<$PQ_TEST_DIR, or /tmp>/<name>.XXXXXX" into buf.
 * @return 0, or -1 if it cannot be made (a cmocka setup's failure) */
static inline int tu_scratch_make(char *buf, size_t len, const char *name) {
  const char *dir = getenv("PQ_TEST_DIR");
  int n;

  if (dir == NULL || *dir == '\0')
    dir = "/tmp";
  n = snprintf(buf, len, "%s/%s.XXXXXX", dir, name);
  if (n < 0 || (size_t)n >= len)
    return -1;
  return mkdtemp(buf) == NULL ? -1 : 0;
}

static inline int tu__remove_one(const char *path, const struct stat *st,
                                 int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  (void)remove(path);
  return 0;
}

/* Remove dir and everything below it.  @return 0, or nftw's -1 */
static inline int tu_scratch_remove(const char *dir) {
  return nftw(dir, tu__remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Hex text (spaces and newlines ignored) to bytes, at most cap of them.
 * @return the count */
static inline size_t tu_unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;

  while (*hex != '\0') {
    char h[3];

    if (*hex == ' ' || *hex == '\n') {
      hex++;
      continue;
    }
    h[0] = hex[0];
    h[1] = hex[1];
    h[2] = '\0';
    assert_true(n < cap);
    out[n++] = (uint8_t)strtoul(h, NULL, 16);
    hex += 2;
  }
  return n;
}

/* A product of size bytes, contents from seed, ident "test/<seed>". */
static inline void tu_product(pq_prod_info *info, void *buf, size_t size,
                              uint64_t seed) {
  memset(info, 0, sizeof *info);
  info->arrival = pq_ts_now();
  info->feedtype = PQ_FT_EXP;
  info->seqno = (uint32_t)seed;
  info->size = size;
  snprintf(info->ident, sizeof info->ident, "test/%llu",
           (unsigned long long)seed);
  snprintf(info->origin, sizeof info->origin, "unit.test");
  tu_fill(buf, size, seed);
  assert_int_equal(pq_md5(buf, size, info->signature), 0);
}

static inline pq_t *tu_create(const char *path, uint64_t size, uint64_t slots) {
  pq_create_opts o = {
      .pc_data_size = size, .pc_slots = slots, .pc_flags = PQ_CLOBBER};
  pq_error err;
  pq_t *pq = NULL;
  int rc = pq_create(path, &o, &pq, &err);
  if (rc != PQ_OK)
    fail_msg("pq_create %s: %s", path, err.pe_msg);
  return pq;
}

/* A queue at path of 256 KiB and 64 slots holding n products, test/0 to
 * test/<n-1>, of 1000 + i bytes each (buf: a scratch buffer of as many);
 * closed. */
static inline void tu_small_queue(const char *path, unsigned n, void *buf) {
  pq_t *pq = tu_create(path, 256 * 1024, 64);
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info;
    tu_product(&info, buf, 1000 + i, i);
    assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  }
  pq_close(pq);
}

static inline void tu_check(pq_t *pq) {
  pq_check_report r;
  int rc = pq_check(pq, &r);
  if (rc != PQ_OK)
    fail_msg("pq_check: invariant %d: %s", r.pr_invariant, r.pr_msg);
}

/* A child process that opens path for writing and, if info is not NULL,
 * reserves room for that product, then waits to be killed (tu_kill()):
 * returns its pid once it has done so; fails the test if it could not. */
static inline pid_t tu_writer_child(const char *path,
                                    const pq_prod_info *info) {
  int pfd[2];
  char x;

  assert_int_equal(pipe(pfd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    pq_t *w;
    pq_resv r;
    close(pfd[0]);
    if (pq_open(path, 0, &w, NULL) != PQ_OK ||
        (info != NULL && pq_reserve(w, info, &r) != PQ_OK))
      _exit(1);
    (void)!write(pfd[1], "x", 1);
    pause();
    _exit(0);
  }
  close(pfd[1]); /* a child that exits early: read() returns 0 */
  assert_int_equal(read(pfd[0], &x, 1), 1);
  close(pfd[0]);
  return pid;
}

/* SIGKILL a child and reap it. */
static inline void tu_kill(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

#endif
