/*
 * test_cli_state - pqact's state file (pqutils/common/cli_state.c): reading
 * it as LDM's pqact does (comment lines skipped, "%ld.%ld", negative,
 * malformed, future, unreadable, absent), its bytes (LDM's three comment
 * lines then "%ld.%06ld\n"), the record kept in place (the same inode)
 * product after product (stored through the mapping or pwritten, read
 * back after each; a writer killed mid-stream leaves one whole record)
 * and the whole file rewritten at a clean exit or when the record's width
 * changes, and the low-water mark over products
 * whose holds are released out of order, with failures, past the ring's
 * first size; the page that lists the decoders behind (one page, LDM's
 * time line first as LDM's fscanf reads it, in place, the lines that do not
 * fit dropped and T1 lowered below them, removed when nothing is held) and
 * reading it back.  In a scratch directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pqutils/common/cli_state.h"
#include "test/lib/tu_skip.h"

#define TU_TMPDIR_PREFIX "cli_state"
#include "test/lib/tu_tmpdir.h"

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* LDM's bytes for a time. */
static const char *ldm_bytes(long sec, long usec) {
  static char buf[512];
  snprintf(buf, sizeof buf, "%s%ld.%06ld\n", CLI_STATE_HEADER, sec, usec);
  return buf;
}

static ino_t inode(const char *path) {
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  return sb.st_ino;
}

/* LDM's pqact's reading, independent of ours: lines that begin with '#'
 * skipped, then fscanf("%ld.%ld").  How many fields it read. */
static int ldm_read(const char *path, long *sec, long *usec) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int c;
  while ((c = getc(f)) == '#')
    while ((c = getc(f)) != EOF && c != '\n')
      ;
  if (c != EOF)
    ungetc(c, f);
  int n = fscanf(f, "%ld.%ld", sec, usec);
  fclose(f);
  return n;
}

#define NOW_US 1800000000000000ULL /* 2027-01-15 */

static void test_format(void **state) {
  (void)state;
  char buf[32];
  assert_int_equal(cli_state_format(1733000000123456ULL, buf), 18);
  assert_string_equal(buf, "1733000000.123456\n");
  assert_int_equal(cli_state_format(5, buf), 9);
  assert_string_equal(buf, "0.000005\n");
  /* the header is LDM's, word for word */
  assert_string_equal(CLI_STATE_HEADER,
                      "# The following line contains the insertion-time of "
                      "the last, successfully-\n# processed data-product.  "
                      "Do not modify it unless you know exactly what\n# "
                      "you're doing!\n");
}

static void test_read(void **state) {
  (void)state;
  uint64_t us = 0;
  assert_int_equal(cli_state_read("absent", NOW_US, &us), CLI_STATE_ABSENT);
  put("s", ldm_bytes(1733000000, 42));
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_FOUND);
  assert_int_equal(us, 1733000000000042ULL);
  /* as LDM's fscanf("%ld.%ld"): blank lines, leading zeros, few digits */
  put("s", "# one\n#two\n\n  0001733000000.000001\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_FOUND);
  assert_int_equal(us, 1733000000000001ULL);
  put("s", "1700000000.5\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_FOUND);
  assert_int_equal(us, 1700000000000005ULL);
  /* refused */
  put("s", "# c\n-5.000000\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_NEGATIVE);
  put("s", "# c\nnot a time\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_MALFORMED);
  put("s", "1700000000\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_MALFORMED);
  put("s", "1700000000.1000000\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_MALFORMED);
  put("s", "# only comments\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_MALFORMED);
  /* the future: the time is given, to be said */
  put("s", ldm_bytes(1800000001, 0));
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_FUTURE);
  assert_int_equal(us, 1800000001000000ULL);
  put("s", "99999999999999999.0\n");
  assert_int_equal(cli_state_read("s", NOW_US, &us), CLI_STATE_FUTURE);
  /* a directory opens but cannot be read */
  assert_int_equal(mkdir("d", 0777), 0);
  assert_int_equal(cli_state_read("d", NOW_US, &us), CLI_STATE_UNREADABLE);
}

static void test_write(void **state) {
  (void)state;
  struct cli_state *st = cli_state_new("w.state");
  assert_non_null(st);
  /* nothing done: nothing written, an existing file left alone */
  assert_int_equal(cli_state_save(st), 0);
  assert_int_equal(access("w.state", F_OK), -1);
  put("w.state", ldm_bytes(1700000000, 1));
  assert_int_equal(cli_state_save(st), 0);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(1700000000, 1));

  /* the first product done writes the whole file; the next ones rewrite
   * the record in place (the same inode) */
  cli_state_release(st, cli_state_begin(st, 1733000000000001ULL), true);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(1733000000, 1));
  ino_t ino = inode("w.state");
  cli_state_release(st, cli_state_begin(st, 1733000000999999ULL), true);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(1733000000, 999999));
  assert_int_equal(inode("w.state"), ino);
  /* a failed product does not advance it; a later success does */
  cli_state_release(st, cli_state_begin(st, 1733000001000000ULL), false);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(1733000000, 999999));
  assert_int_equal(cli_state_mark(st), 1733000000999999ULL);
  cli_state_release(st, cli_state_begin(st, 1733000002000007ULL), true);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(1733000002, 7));
  assert_int_equal(inode("w.state"), ino);
  assert_int_equal(cli_state_sync(st, 0), 0);
  /* the clean exit: whole, by rename (a new inode), no temporary left */
  assert_int_equal(cli_state_save(st), 0);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(1733000002, 7));
  assert_int_not_equal(inode("w.state"), ino);
  assert_int_equal(access("w.state.tmp", F_OK), -1);
  /* a record of another width: the whole file again, still LDM's bytes */
  cli_state_free(st);
  st = cli_state_new("w.state");
  assert_non_null(st);
  cli_state_release(st, cli_state_begin(st, 5), true);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(0, 5));
  cli_state_release(st, cli_state_begin(st, 12345678901000000ULL), true);
  assert_string_equal(tu_slurp("w.state"), ldm_bytes(12345678901L, 0));
  cli_state_free(st);

  /* a file that cannot be written: said, and no harm */
  st = cli_state_new("no/such/dir/x.state");
  assert_non_null(st);
  cli_state_release(st, cli_state_begin(st, 1733000000000000ULL), true);
  assert_int_equal(cli_state_mark(st), 1733000000000000ULL);
  assert_int_equal(cli_state_save(st), -1);
  cli_state_free(st);
}

/* Records in place, product after product: each read back at once is
 * LDM's bytes for its time, in the same file, whether it was stored
 * through the mapping (at most 16 bytes changed) or pwritten (more: the
 * seconds' first digit changed), after an fdatasync too. */
static void test_in_place(void **state) {
  (void)state;
  static const struct {
    long sec, usec;
  } times[] = {
      {1733000000, 1},      {1733000000, 2},      {1733000000, 999999},
      {1733000001, 0},      {1799999999, 999999}, {1800000000, 0},
      {1899999999, 999999}, {1999999999, 999999}, {2000000000, 0},
      {2000000000, 1},      {2999999999, 123456}, {3000000000, 654321},
      {3000000000, 654322}, {3111111111, 111111},
  };
  struct cli_state *st = cli_state_new("p.state");
  assert_non_null(st);
  ino_t ino = 0;
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
    uint64_t us = (uint64_t)times[i].sec * 1000000 + (uint64_t)times[i].usec;
    cli_state_release(st, cli_state_begin(st, us), true);
    assert_string_equal(tu_slurp("p.state"),
                        ldm_bytes(times[i].sec, times[i].usec));
    if (i == 0)
      ino = inode("p.state");
    assert_int_equal(inode("p.state"), ino);
    if (i == 5)
      assert_int_equal(cli_state_sync(st, 0), 0);
  }
  cli_state_free(st);
  /* what the mapping stored is in the file after the process lets go */
  assert_string_equal(tu_slurp("p.state"), ldm_bytes(3111111111, 111111));
}

/* A writer killed (SIGKILL) while it records product after product, each
 * record changing up to 16 bytes: the file holds, whole, one of the times
 * it recorded, never a mix of two.  Several kills, each at a moment the
 * reader finds the writer busy. */
static void test_killed_writer(void **state) {
  (void)state;
  const uint64_t base = 1111111111111111ULL, step = 111111111ULL;
  for (int round = 0; round < 5; round++) {
    unlink("k.state");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      struct cli_state *st = cli_state_new("k.state");
      for (uint64_t k = 0; st != NULL && k < 50000000; k++)
        cli_state_release(st, cli_state_begin(st, base + k * step), true);
      _exit(0); /* not expected: killed long before */
    }
    /* until the writer has moved the record 100 times (bounded: 60 s) */
    long seen = 0, last = -1;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
      long sec = 0, usec = 0;
      if (access("k.state", F_OK) == 0 &&
          ldm_read("k.state", &sec, &usec) == 2 && sec != last) {
        last = sec;
        seen++;
      }
      clock_gettime(CLOCK_MONOTONIC, &now);
    } while (seen < 100 && now.tv_sec - t0.tv_sec < 60);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_true(seen >= 100);
    long sec = 0, usec = 0;
    assert_int_equal(ldm_read("k.state", &sec, &usec), 2);
    uint64_t us = (uint64_t)sec * 1000000 + (uint64_t)usec;
    assert_true(us >= base && (us - base) % step == 0);
    assert_string_equal(tu_slurp("k.state"), ldm_bytes(sec, usec));
  }
}

static void test_low_water(void **state) {
  (void)state;
  struct cli_state *st = cli_state_new("m.state");
  assert_non_null(st);
  const uint64_t t0 = 1733000000000000ULL;
  cli_state_token a = cli_state_begin(st, t0 + 1);
  cli_state_token b = cli_state_begin(st, t0 + 2);
  cli_state_token c = cli_state_begin(st, t0 + 3);
  cli_state_token d = cli_state_begin(st, t0 + 4);
  assert_int_equal(cli_state_pending(st), 4);
  cli_state_hold(st, a); /* a decoder still has a */
  cli_state_release(st, a, true);
  cli_state_release(st, c, true);
  cli_state_release(st, d, true);
  assert_int_equal(cli_state_mark(st), 0); /* a and b not done */
  assert_int_equal(access("m.state", F_OK), -1);
  cli_state_release(st, a, true);
  assert_int_equal(cli_state_mark(st), t0 + 1); /* b not done */
  assert_string_equal(tu_slurp("m.state"), ldm_bytes(1733000000, 1));
  cli_state_release(st, b, false); /* b failed: the mark passes to d */
  assert_int_equal(cli_state_mark(st), t0 + 4);
  assert_string_equal(tu_slurp("m.state"), ldm_bytes(1733000000, 4));
  assert_int_equal(cli_state_pending(st), 0);
  /* stale or unknown tokens change nothing */
  cli_state_release(st, b, true);
  cli_state_hold(st, c);
  cli_state_release(st, CLI_STATE_NOTOKEN, true);
  assert_int_equal(cli_state_mark(st), t0 + 4);

  /* beyond the ring's first size, released newest first */
  enum { N = 1000 };
  static cli_state_token t[N];
  for (unsigned i = 0; i < N; i++)
    t[i] = cli_state_begin(st, t0 + 10 + i);
  assert_int_equal(cli_state_pending(st), N);
  for (unsigned i = N - 1; i > 0; i--)
    cli_state_release(st, t[i], i != N - 1); /* the newest failed */
  assert_int_equal(cli_state_mark(st), t0 + 4);
  cli_state_release(st, t[0], true);
  assert_int_equal(cli_state_mark(st), t0 + 10 + N - 2);
  assert_int_equal(cli_state_pending(st), 0);
  /* interleaved: begun and done in a moving window */
  cli_state_token w[3];
  for (unsigned i = 0; i < 3; i++)
    w[i] = cli_state_begin(st, t0 + 2000 + i);
  for (unsigned i = 3; i < 200; i++) {
    cli_state_release(st, w[i % 3], true);
    assert_int_equal(cli_state_mark(st), t0 + 2000 + i - 3);
    w[i % 3] = cli_state_begin(st, t0 + 2000 + i);
  }
  assert_int_equal(cli_state_pending(st), 3);
  cli_state_free(st);
}

static long size_of(const char *path) {
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  return (long)sb.st_size;
}

/* The page holds LDM's bytes for the time, then only spaces and a final
 * newline (the lines that were there are gone). */
static void page_blank_after(const char *path, long sec, long usec) {
  static char buf[CLI_STATE_PAGE + 1];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(buf, 1, sizeof buf, f), CLI_STATE_PAGE);
  fclose(f);
  const char *ldm = ldm_bytes(sec, usec);
  size_t len = strlen(ldm);
  assert_memory_equal(buf, ldm, len);
  for (size_t i = len; i < CLI_STATE_PAGE - 1; i++)
    assert_int_equal(buf[i], ' ');
  assert_int_equal(buf[CLI_STATE_PAGE - 1], '\n');
}

/* The page ends with the line, then spaces and a newline. */
static void page_ends_with(const char *path, const char *line) {
  static char buf[CLI_STATE_PAGE + 1];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(buf, 1, sizeof buf, f), CLI_STATE_PAGE);
  fclose(f);
  buf[CLI_STATE_PAGE] = '\0';
  const char *at = strstr(buf, line);
  assert_non_null(at);
  for (size_t i = (size_t)(at - buf) + strlen(line); i < CLI_STATE_PAGE - 1;
       i++)
    assert_int_equal(buf[i], ' ');
  assert_int_equal(buf[CLI_STATE_PAGE - 1], '\n');
}

/* read_behind on path after t0: T1, and the decoders (freed). */
static uint64_t behind_of(const char *path, uint64_t t0, size_t *n,
                          struct cli_state_dec *first) {
  uint64_t t1;
  struct cli_state_dec *d;
  assert_int_equal(cli_state_read_behind(path, t0, &t1, &d, n), 0);
  if (*n > 0 && first != NULL) {
    static char type[16], cmd[4096];
    snprintf(type, sizeof type, "%s", d[0].type);
    snprintf(cmd, sizeof cmd, "%s", d[0].cmd);
    *first = (struct cli_state_dec){type, cmd, d[0].from_us};
  }
  cli_state_decs_free(d, *n);
  return t1;
}

static void test_behind(void **state) {
  (void)state;
  const uint64_t t0 = 1733000000000000ULL;
  struct cli_state *st = cli_state_new("b.state");
  assert_non_null(st);
  long sec, usec;
  size_t n;
  struct cli_state_dec d0;
  /* nothing held: LDM's bytes, no lines */
  cli_state_end(st, cli_state_begin(st, t0 + 1), true);
  assert_string_equal(tu_slurp("b.state"), ldm_bytes(1733000000, 1));
  assert_int_equal(behind_of("b.state", t0 + 1, &n, NULL), 0);
  ino_t ino = inode("b.state");
  /* a decoder holds b: the page, LDM's time first, then T1 and the line */
  cli_state_token b = cli_state_begin(st, t0 + 2);
  cli_state_hold(st, b);
  assert_int_equal(cli_state_holds(st), 2);
  const struct cli_state_dec one = {"PIPE", "/bin/dec -x 1", t0 + 2};
  cli_state_behind(st, &one, 1);
  assert_true(cli_state_any_behind(st));
  cli_state_end(st, b, true);
  assert_int_equal(cli_state_holds(st), 1);
  assert_int_equal(size_of("b.state"), CLI_STATE_PAGE);
  assert_int_equal(inode("b.state"), ino);
  assert_int_equal(ldm_read("b.state", &sec, &usec), 2);
  assert_int_equal(sec, 1733000000);
  assert_int_equal(usec, 1);
  const char *text = tu_slurp("b.state");
  assert_int_equal(
      strncmp(text, ldm_bytes(1733000000, 1), strlen(ldm_bytes(1733000000, 1))),
      0);
  assert_non_null(strstr(text, "\n#+1733000000.000002\n"
                               "#-1733000000.000002 PIPE /bin/dec -x 1\n"));
  page_ends_with("b.state", "#-1733000000.000002 PIPE /bin/dec -x 1\n");
  assert_int_equal(behind_of("b.state", t0 + 1, &n, &d0), t0 + 2);
  assert_int_equal(n, 1);
  assert_string_equal(d0.type, "PIPE");
  assert_string_equal(d0.cmd, "/bin/dec -x 1");
  assert_int_equal(d0.from_us, t0 + 2);
  /* the next product done: T1 moves, in place */
  cli_state_end(st, cli_state_begin(st, t0 + 3), true);
  assert_int_equal(behind_of("b.state", t0 + 1, &n, NULL), t0 + 3);
  assert_int_equal(n, 1);
  /* a failed one does not move T1 */
  cli_state_end(st, cli_state_begin(st, t0 + 4), false);
  assert_int_equal(behind_of("b.state", t0 + 1, &n, NULL), t0 + 3);
  /* a T1 not after the given time says nothing */
  assert_int_equal(behind_of("b.state", t0 + 3, &n, NULL), 0);
  assert_int_equal(n, 0);
  /* the clean exit keeps the lines, in the page, whole */
  assert_int_equal(cli_state_save(st), 0);
  assert_int_not_equal(inode("b.state"), ino);
  ino = inode("b.state");
  assert_int_equal(size_of("b.state"), CLI_STATE_PAGE);
  assert_int_equal(behind_of("b.state", t0 + 1, &n, NULL), t0 + 3);
  assert_int_equal(n, 1);
  /* the decoder takes b: the mark passes the products done, the lines go
   * (spaces in their place), and the record is written in place again */
  cli_state_release(st, b, true);
  cli_state_behind(st, NULL, 0);
  cli_state_flush(st);
  assert_false(cli_state_any_behind(st));
  assert_int_equal(cli_state_mark(st), t0 + 3);
  assert_int_equal(behind_of("b.state", 0, &n, NULL), 0);
  assert_int_equal(n, 0);
  page_blank_after("b.state", 1733000000, 3);
  cli_state_end(st, cli_state_begin(st, t0 + 5), true);
  assert_int_equal(ldm_read("b.state", &sec, &usec), 2);
  assert_int_equal(usec, 5);
  assert_int_equal(inode("b.state"), ino);
  assert_int_equal(size_of("b.state"), CLI_STATE_PAGE);
  page_blank_after("b.state", 1733000000, 5);
  cli_state_free(st);
}

/* The lines that do not fit the page are dropped, oldest kept, and T1
 * goes below the first one dropped; a command with a newline cannot be a
 * line, so it is dropped the same way. */
static void test_behind_overflow(void **state) {
  (void)state;
  const uint64_t t0 = 1733000000000000ULL;
  static char long1[2000], long2[2000];
  memset(long1, 'a', sizeof long1 - 1);
  memset(long2, 'b', sizeof long2 - 1);
  struct cli_state *st = cli_state_new("o.state");
  assert_non_null(st);
  cli_state_end(st, cli_state_begin(st, t0 + 1), true);
  cli_state_token h = cli_state_begin(st, t0 + 10);
  cli_state_hold(st, h);
  cli_state_end(st, h, true);
  for (uint64_t t = t0 + 11; t <= t0 + 40; t++)
    cli_state_end(st, cli_state_begin(st, t), true);
  /* given newest first: written oldest first */
  const struct cli_state_dec three[] = {{"PIPE", long2, t0 + 30},
                                        {"XPIPE", long1, t0 + 20},
                                        {"SPIPE", "short", t0 + 10}};
  cli_state_behind(st, three, 3);
  cli_state_flush(st);
  size_t n;
  struct cli_state_dec d0;
  assert_int_equal(size_of("o.state"), CLI_STATE_PAGE);
  assert_int_equal(behind_of("o.state", t0 + 1, &n, &d0), t0 + 29);
  assert_int_equal(n, 2);
  assert_string_equal(d0.type, "SPIPE");
  assert_int_equal(d0.from_us, t0 + 10);
  /* all of them fit: T1 as it is */
  cli_state_behind(st, three + 1, 2);
  cli_state_flush(st);
  assert_int_equal(behind_of("o.state", t0 + 1, &n, NULL), t0 + 40);
  assert_int_equal(n, 2);
  /* a newline in the command */
  const struct cli_state_dec nl[] = {{"PIPE", "short", t0 + 10},
                                     {"PIPE", "two\nlines", t0 + 15}};
  cli_state_behind(st, nl, 2);
  cli_state_flush(st);
  assert_int_equal(behind_of("o.state", t0 + 1, &n, &d0), t0 + 14);
  assert_int_equal(n, 1);
  assert_string_equal(d0.cmd, "short");
  /* the first does not fit: no lines, T0 alone says what was done */
  const struct cli_state_dec none[] = {{"PIPE", "two\nlines", t0 + 2}};
  cli_state_behind(st, none, 1);
  cli_state_flush(st);
  assert_int_equal(behind_of("o.state", t0 + 1, &n, NULL), 0);
  long sec, usec;
  assert_int_equal(ldm_read("o.state", &sec, &usec), 2);
  assert_int_equal(usec, 1);
  cli_state_free(st);
  /* lines that do not parse are skipped */
  put("o.state", "# c\n1733000000.000001\n#+1733000000.000009\n"
                 "#-x PIPE a\n#-1733000000.000002 PIPE\n"
                 "#-1733000000.000003 PIPE a b\n");
  assert_int_equal(behind_of("o.state", t0 + 1, &n, &d0), t0 + 9);
  assert_int_equal(n, 1);
  assert_string_equal(d0.cmd, "a b");
  /* no file: nothing */
  assert_int_equal(behind_of("absent.state", 0, &n, NULL), 0);
  /* decoders behind before any product is begun: no time to write yet,
   * the file (a run before's) is left alone */
  st = cli_state_new("absent.state");
  assert_non_null(st);
  cli_state_resume(st, t0 + 9);
  cli_state_behind(st, three, 3);
  cli_state_flush(st);
  assert_int_equal(access("absent.state", F_OK), -1);
  cli_state_free(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format),
      cmocka_unit_test_setup_teardown(test_read, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_write, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_in_place, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_killed_writer, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_low_water, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_behind, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_behind_overflow, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
