/*
 * test_pqact_filing - the data transforms of pqact's FILE and STDIOFILE
 * (pqutils/pqact/filing.c): -removewmo (the SBN header and its trailer,
 * WMO headings with and without BBB and AWIPS line, a heading past 100
 * bytes, short products), -strip (every control character but '\n', bytes
 * above 127 kept) and the -metadata header's bytes; then the options on
 * real files in a scratch directory: two-letter prefixes, append and
 * overwrite, directories made, an open output keeping its first options,
 * -close; the idle close after six hours on a clock the test sets; the
 * open-file limit (outputs kept within it, and EMFILE from open(2) when
 * descriptors are taken by something else: the least recently used closed
 * and the open retried).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pqutils/pqact/filing.h"
#include "test/lib/tu_skip.h"

#define TU_TMPDIR_PREFIX "pqact_filing"
#include "test/lib/tu_tmpdir.h"

/* What -removewmo keeps of s (static). */
static const char *rw(const char *s, size_t len) {
  static char out[512];
  size_t start, n;
  pqact_remove_wmo((const uint8_t *)s, len, &start, &n);
  assert_true(start + n <= len);
  memcpy(out, s + start, n);
  out[n] = '\0';
  return out;
}
#define RW(lit) rw(lit, sizeof lit - 1)

static void test_removewmo(void **state) {
  (void)state;
  assert_string_equal(RW("SAUS43 KXYZ 011200\r\r\nMETAR KXYZ ...\r\r\n"),
                      "METAR KXYZ ...\r\r\n");
  assert_string_equal(RW("SAUS43 KXYZ 011200 RRA\r\r\nbody"), "body");
  assert_string_equal(RW("FXUS61 KBOX 011200\r\r\nAFDBOX\r\r\nbody"), "body");
  /* the AWIPS line is six letters or digits */
  assert_string_equal(RW("FXUS61 KBOX 011200\r\r\nAFD  \r\r\nbody"),
                      "AFD  \r\r\nbody");
  /* the SBN header, and the last 4 bytes with it, trailer or not */
  assert_string_equal(RW("\001\r\r\n123 \r\r\nSAUS43 KXYZ 011200\r\r\n"
                         "body\r\r\n\003"),
                      "body");
  assert_string_equal(RW("\001\r\r\n123 \r\r\nno heading here, just text"),
                      "no heading here, just ");
  /* a heading anywhere in the first line, not only in 100 bytes */
  char buf[300];
  memset(buf, 'x', 150);
  strcpy(buf + 150, "SAUS43 KXYZ 011200\r\r\nbody");
  assert_string_equal(rw(buf, strlen(buf)), "body");
  /* but not after a "\r\r\n" */
  assert_string_equal(RW("hello\r\r\nSAUS43 KXYZ 011200\r\r\nbody"),
                      "hello\r\r\nSAUS43 KXYZ 011200\r\r\nbody");
  /* letters of either case, blanks optional; DDHHMM optional, but the
   * blanks skipped after CCCC include the CR/LF, so that without it the
   * next line is taken for the rest of the heading */
  assert_string_equal(RW("saus43 kxyz 011200\r\r\nbody"), "body");
  assert_string_equal(RW("SAUS43KXYZ011200\r\r\nbody"), "body");
  assert_string_equal(RW("SAUS43 KXYZ RRA\r\r\nbody text"), "body text");
  assert_string_equal(RW("SAUS43  KXYZ\r\r\nbody text"),
                      "SAUS43  KXYZ\r\r\nbody text");
  /* a short CR/LF run ends one character early */
  assert_string_equal(RW("SAUS43 KXYZ 011200\r\nbody text"), "\nbody text");
  /* what cannot be parsed after CCCC: only what precedes the heading goes */
  assert_string_equal(RW("xxSAUS43 KXYZ 011200 ?\r\r\nbody"),
                      "SAUS43 KXYZ 011200 ?\r\r\nbody");
  assert_string_equal(RW("SAUS43 KXYZ 011200 RRAX\r\r\nbody"),
                      "SAUS43 KXYZ 011200 RRAX\r\r\nbody");
  assert_string_equal(RW("SAUS43 KXYZ 01120\r\r\nbody"),
                      "SAUS43 KXYZ 01120\r\r\nbody");
  /* no heading (CCCC missing, or none at all): all of it */
  assert_string_equal(RW("SAUS43 12345 011200\r\r\nbody"),
                      "SAUS43 12345 011200\r\r\nbody");
  assert_string_equal(RW("just some text without a heading"),
                      "just some text without a heading");
  /* short products are left alone, SBN header or not */
  assert_string_equal(RW("\001\r\r\n123 \r\r\nabcdefghi"),
                      "\001\r\r\n123 \r\r\nabcdefghi");
  /* a heading that runs into the trailer leaves nothing */
  assert_string_equal(RW("\001\r\r\n123 \r\r\nSAUS43 KXYZ 011200\r\r\n"), "");
}

static void test_strip(void **state) {
  (void)state;
  uint8_t d[] = "a\r\nb\tc\001\177d\200\377\n\0e";
  size_t n = pqact_strip(d, sizeof d - 1);
  assert_int_equal(n, 9);
  assert_memory_equal(d, "a\nbcd\200\377\ne", 9);
}

static void test_metadata(void **state) {
  (void)state;
  pq_prod_info info = {.feedtype = 0x12345678, .seqno = 42};
  info.arrival.sec = 1700000000;
  info.arrival.usec = 123456;
  for (int i = 0; i < PQ_SIGLEN; i++)
    info.signature[i] = (uint8_t)(0xa0 + i);
  strcpy(info.ident, "IDENT");
  strcpy(info.origin, "host.example");
  uint8_t buf[PQACT_META_FIXED + 8 + PQ_IDENT_MAX + PQ_ORIGIN_MAX];
  size_t n = pqact_metadata(&info, 1000, buf);
  assert_int_equal(n, 44 + 4 + 5 + 4 + 12);
  uint32_t u32;
  uint64_t u64;
  int32_t i32;
  memcpy(&u32, buf, 4);
  assert_int_equal(u32, n); /* the whole header, both lengths too */
  assert_memory_equal(buf + 4, info.signature, 16);
  memcpy(&u32, buf + 20, 4);
  assert_int_equal(u32, 1000);
  memcpy(&u64, buf + 24, 8);
  assert_int_equal(u64, 1700000000);
  memcpy(&i32, buf + 32, 4);
  assert_int_equal(i32, 123456);
  memcpy(&u32, buf + 36, 4);
  assert_int_equal(u32, 0x12345678);
  memcpy(&u32, buf + 40, 4);
  assert_int_equal(u32, 42);
  memcpy(&u32, buf + 44, 4);
  assert_int_equal(u32, 5);
  assert_memory_equal(buf + 48, "IDENT", 5);
  memcpy(&u32, buf + 53, 4);
  assert_int_equal(u32, 12);
  assert_memory_equal(buf + 57, "host.example", 12);
}

/* ---- on real files ---- */

static const char *slurp(const char *path, size_t *len) {
  static char buf[4096];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  *len = fread(buf, 1, sizeof buf - 1, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

static int act(struct pqact_outputs *o, enum pqact_action type,
               const char *args, const char *data) {
  static char line[512];
  char *argv[16];
  int argc = 0;
  snprintf(line, sizeof line, "%s", args);
  for (char *w = strtok(line, " "); w != NULL; w = strtok(NULL, " "))
    argv[argc++] = w;
  pq_prod_info info = {.size = strlen(data), .feedtype = PQ_FT_EXP};
  strcpy(info.ident, "ID");
  strcpy(info.origin, "o");
  return pqact_file_action(o, type, argc, argv, &info, data);
}

static void test_files(void **state) {
  (void)state;
  size_t len;
  struct pqact_outputs *o = pqact_outputs_new(0);
  assert_non_null(o);
  for (int t = PQACT_FILE; t <= PQACT_STDIOFILE; t++) {
    const char *a = t == PQACT_FILE ? "f/a/b/append" : "s/a/b/append";
    char args[64];
    /* appended to, across closes; directories made */
    snprintf(args, sizeof args, "-cl %s", a);
    assert_int_equal(act(o, t, args, "one\n"), 0);
    assert_int_equal(act(o, t, args, "two\n"), 0);
    assert_int_equal(act(o, t, args, "three\r\n"), 0);
    assert_string_equal(slurp(a, &len), "one\ntwo\nthree\r\n");
    /* -overwrit -st: a new output each time with -close */
    const char *w = t == PQACT_FILE ? "fw" : "sw";
    snprintf(args, sizeof args, "-overwrit -st -clo %s", w);
    assert_int_equal(act(o, t, args, "first\r\nproduct\n"), 0);
    assert_string_equal(slurp(w, &len), "first\nproduct\n");
    assert_int_equal(act(o, t, args, "2nd\n"), 0);
    assert_string_equal(slurp(w, &len), "2nd\n");
    /* an open output keeps its first options: -strip and -close are
     * ignored (the sync flushes STDIOFILE's buffer) */
    const char *k = t == PQACT_FILE ? "fk" : "sk";
    assert_int_equal(act(o, t, k, "a\r\n"), 0);
    snprintf(args, sizeof args, "-strip -close %s", k);
    assert_int_equal(act(o, t, args, "b\r\n"), 0);
    pqact_outputs_sync(o);
    assert_string_equal(slurp(k, &len), "a\r\nb\r\n");
    /* unknown options and the words before the path are ignored */
    snprintf(args, sizeof args, "-nodata -x -close ignored u%s", k);
    assert_int_equal(act(o, t, args, "c\n"), 0);
    snprintf(args, sizeof args, "u%s", k);
    assert_string_equal(slurp(args, &len), "c\n");
    /* the last word is the path, even "-close" */
    assert_int_equal(act(o, t, "-overwrite -cl -close", "x\n"), 0);
    assert_string_equal(slurp("-close", &len), "x\n");
    assert_int_equal(act(o, t, "-overwrite -cl -close", "y\n"), 0);
    assert_string_equal(slurp("-close", &len), "y\n");
    unlink("-close");
  }
  assert_int_equal(pqact_outputs_open(o), 2); /* fk and sk */
  /* -overwrite kept open: each product replaces the last */
  assert_int_equal(act(o, PQACT_FILE, "-overwrite keep", "a longer one\n"), 0);
  assert_int_equal(act(o, PQACT_FILE, "-overwrite keep", "short\n"), 0);
  assert_int_equal(pqact_outputs_open(o), 3);
  assert_string_equal(slurp("keep", &len), "short\n");
  assert_int_equal(act(o, PQACT_STDIOFILE, "-ov skeep", "a longer one\n"), 0);
  assert_int_equal(act(o, PQACT_STDIOFILE, "-ov skeep", "short\n"), 0);
  assert_int_equal(act(o, PQACT_STDIOFILE, "-ov skeep", "tiny\n"), 0);
  pqact_outputs_sync(o);
  assert_string_equal(slurp("skeep", &len), "tiny\n");
  assert_int_equal(act(o, PQACT_STDIOFILE, "-ov skeep", "longer again\n"), 0);
  pqact_outputs_sync(o);
  assert_string_equal(slurp("skeep", &len), "longer again\n");
  assert_int_equal(pqact_outputs_open(o), 4);
  /* a path that cannot be made */
  assert_int_equal(act(o, PQACT_FILE, "keep/x", "x"), -1);
  pqact_outputs_free(o);

  /* at most 2 open: the least recently used is closed (and stays right) */
  o = pqact_outputs_new(2);
  assert_int_equal(act(o, PQACT_FILE, "l1", "1"), 0);
  assert_int_equal(act(o, PQACT_FILE, "l2", "2"), 0);
  assert_int_equal(act(o, PQACT_FILE, "l1", "1"), 0);
  assert_int_equal(act(o, PQACT_FILE, "l3", "3"), 0); /* closes l2 */
  assert_int_equal(pqact_outputs_open(o), 2);
  assert_int_equal(act(o, PQACT_FILE, "l2", "2"), 0);
  pqact_outputs_free(o);
  assert_string_equal(slurp("l1", &len), "11");
  assert_string_equal(slurp("l2", &len), "22");
  assert_string_equal(slurp("l3", &len), "3");
}

/* /proc/self/fd, opened once (before the test takes every descriptor)
 * and read again from its start each time. */
static DIR *fd_dir;

/* How many of this process's descriptors are open on tu_dir/name. */
static int fds_on(const char *name) {
  char want[600], link[600], path[300];
  int n = 0;
  snprintf(want, sizeof want, "%s/%s", tu_dir, name);
  if (fd_dir == NULL)
    fd_dir = opendir("/proc/self/fd");
  DIR *d = fd_dir;
  assert_non_null(d);
  rewinddir(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len < 0)
      continue;
    link[len] = '\0';
    n += strcmp(link, want) == 0;
  }
  return n;
}

static int64_t fake_now;
static int64_t fake_clock(void) {
  return fake_now;
}

#define SIX_HOURS (6 * 3600)

/* LDM closes outputs not used for six hours at the end of the queue; a
 * -close output never stays open. */
static void test_idle(void **state) {
  (void)state;
  size_t len;
  struct pqact_outputs *o = pqact_outputs_new(0);
  assert_non_null(o);
  pqact_outputs_set_clock(o, fake_clock);
  fake_now = 1000000;
  assert_int_equal(act(o, PQACT_FILE, "idle_a", "a"), 0);
  assert_int_equal(act(o, PQACT_STDIOFILE, "idle_s", "s"), 0);
  assert_int_equal(act(o, PQACT_FILE, "-close idle_c", "c"), 0);
  assert_int_equal(pqact_outputs_open(o), 2); /* -close: gone already */
  assert_int_equal(fds_on("idle_c"), 0);
  fake_now += 2;
  assert_int_equal(act(o, PQACT_FILE, "idle_b", "b"), 0);
  pqact_outputs_sync(o);
  assert_int_equal(pqact_outputs_open(o), 3);
  /* 6 h + 1 s after idle_a and idle_s were used, 6 h - 1 s after idle_b */
  fake_now += SIX_HOURS - 1;
  pqact_outputs_sync(o);
  assert_int_equal(pqact_outputs_open(o), 1);
  assert_int_equal(fds_on("idle_a"), 0);
  assert_int_equal(fds_on("idle_s"), 0);
  assert_int_equal(fds_on("idle_b"), 1);
  assert_string_equal(slurp("idle_s", &len), "s"); /* flushed, closed */
  /* used again, idle_a is opened again and appended to */
  assert_int_equal(act(o, PQACT_FILE, "idle_a", "A"), 0);
  assert_int_equal(fds_on("idle_a"), 1);
  fake_now += 2; /* idle_b: 6 h + 1 s; idle_a: 2 s */
  pqact_outputs_sync(o);
  assert_int_equal(pqact_outputs_open(o), 1);
  assert_int_equal(fds_on("idle_b"), 0);
  assert_int_equal(fds_on("idle_a"), 1);
  pqact_outputs_free(o);
  assert_string_equal(slurp("idle_a", &len), "aA");
  assert_string_equal(slurp("idle_b", &len), "b");
  assert_string_equal(slurp("idle_c", &len), "c");
}

/* Take every free descriptor (copies of src) into fds; their number. */
static int eat_fds(int src, int *fds, int max) {
  int n = 0;
  while (n < max) {
    int fd = fcntl(src, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      assert_true(errno == EMFILE);
      break;
    }
    fds[n++] = fd;
  }
  assert_true(n < max);
  return n;
}

static void test_open_limit(void **state) {
  (void)state;
  struct rlimit old, low;
  size_t len;
  char name[32];
  int eaten[256];
  int src = open("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true(src >= 0);
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
  low = old;
  low.rlim_cur = 32;

  /* the limit less 7 open at most, the least recently used closed: the
   * set reads the limit when made (the limit is back up while it is
   * used, so that descriptors this process inherited cannot matter) */
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  struct pqact_outputs *o = pqact_outputs_new(0);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
  assert_non_null(o);
  for (int i = 0; i < 30; i++) {
    snprintf(name, sizeof name, "lim%02d", i);
    assert_int_equal(act(o, PQACT_FILE, name, name), 0);
  }
  assert_int_equal(pqact_outputs_open(o), 25);
  assert_int_equal(fds_on("lim04"), 0);
  assert_int_equal(fds_on("lim05"), 1);
  pqact_outputs_free(o);

  /* something else holds all but 10 free descriptors: the 11th output's
   * open(2) fails with EMFILE, so the least recently used (emf01, as
   * emf00 was used again) is closed and the open retried; then emf02
   * (the limit is raised by the descriptors this process inherited, so
   * that more than 10 are free under it) */
  for (int fd = 0; fd < 256; fd++)
    low.rlim_cur += fcntl(fd, F_GETFD) >= 0;
  assert_true(low.rlim_cur <= old.rlim_cur && low.rlim_cur < 200);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  int n = eat_fds(src, eaten, 256);
  assert_true(n > 10);
  for (int i = 0; i < 10; i++)
    close(eaten[--n]);
  o = pqact_outputs_new(0);
  assert_non_null(o);
  for (int i = 0; i < 10; i++) {
    snprintf(name, sizeof name, "emf%02d", i);
    assert_int_equal(act(o, PQACT_FILE, name, name), 0);
  }
  assert_int_equal(act(o, PQACT_FILE, "emf00", "+"), 0);
  assert_int_equal(act(o, PQACT_FILE, "emf10", "emf10"), 0);
  assert_int_equal(pqact_outputs_open(o), 10);
  assert_int_equal(fds_on("emf01"), 0);
  assert_int_equal(fds_on("emf00"), 1);
  assert_int_equal(fds_on("emf02"), 1);
  assert_int_equal(act(o, PQACT_FILE, "emf11", "emf11"), 0);
  assert_int_equal(fds_on("emf02"), 0);
  assert_int_equal(fds_on("emf03"), 1);
  /* STDIOFILE too */
  assert_int_equal(act(o, PQACT_STDIOFILE, "-close emfs", "s"), 0);
  assert_int_equal(pqact_outputs_open(o), 9);
  assert_int_equal(fds_on("emf03"), 0);
  assert_int_equal(fds_on("emf04"), 1);
  /* FILE -close, which opens and closes its file outside the set: the
   * descriptor emfs let go taken again, the least recently used closed */
  n += eat_fds(src, eaten + n, 256 - n);
  assert_int_equal(act(o, PQACT_FILE, "-close emff", "f"), 0);
  assert_string_equal(slurp("emff", &len), "f");
  assert_int_equal(pqact_outputs_open(o), 8);
  assert_int_equal(fds_on("emff"), 0);
  assert_int_equal(fds_on("emf04"), 0);
  assert_int_equal(fds_on("emf05"), 1);
  pqact_outputs_free(o);

  /* with nothing left to close, the action fails (and says so) */
  int m = eat_fds(src, eaten + n, 256 - n);
  o = pqact_outputs_new(0);
  assert_non_null(o);
  assert_int_equal(act(o, PQACT_FILE, "none", "x"), -1);
  assert_int_equal(pqact_outputs_open(o), 0);
  for (int i = 0; i < n + m; i++)
    close(eaten[i]);
  assert_int_equal(act(o, PQACT_FILE, "none", "y"), 0); /* and goes on */
  pqact_outputs_free(o);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);

  for (int i = 0; i < 30; i++) {
    snprintf(name, sizeof name, "lim%02d", i);
    assert_string_equal(slurp(name, &len), name);
  }
  for (int i = 0; i < 12; i++) {
    snprintf(name, sizeof name, "emf%02d", i);
    char want[40];
    snprintf(want, sizeof want, "%s%s", name, i == 0 ? "+" : "");
    assert_string_equal(slurp(name, &len), want);
  }
  assert_string_equal(slurp("emfs", &len), "s");
  assert_string_equal(slurp("none", &len), "y");
  closedir(fd_dir);
  fd_dir = NULL;
  close(src);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_removewmo),
      cmocka_unit_test(test_strip),
      cmocka_unit_test(test_metadata),
      cmocka_unit_test_setup_teardown(test_files, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_idle, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_open_limit, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
