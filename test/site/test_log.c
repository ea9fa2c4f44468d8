/*
 * test_log.c - the logger (ldmd/site/log.h): the simple line format column by
 * column, levels and their words, rolling the level (directly and from
 * SIGUSR2), reopening after rotation (directly and from SIGUSR1, and after
 * a chdir() for a relative path), one line per message with its control
 * bytes escaped (ldm_log_escape(), in files, on stderr, in the ident),
 * destinations
 * (file, stderr, syslog, the default with and without a /dev/null stderr),
 * ident, errno kept, long messages, and several processes appending to one
 * file without mixing lines.  Log files
 * live in a scratch directory under $PQ_TEST_DIR (or /tmp).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "test/lib/testutil.h"

static char scratch[4096];

/* ---- helpers ---- */

static void scratch_path(char *buf, size_t len, const char *name) {
  int n = snprintf(buf, len, "%s/%s", scratch, name);
  assert_true(n > 0 && (size_t)n < len);
}

/* A fresh log file for one test, made the destination. */
static void log_to(char *buf, size_t len, const char *name) {
  scratch_path(buf, len, name);
  (void)unlink(buf);
  if (ldm_log_set_destination(buf) != 0)
    fail_msg("ldm_log_set_destination %s: %s", buf, strerror(errno));
  assert_string_equal(ldm_log_get_destination(), buf);
}

/* The file's lines (without newlines), malloc'ed, NULL-terminated. */
static char **read_lines(const char *path, int *count) {
  FILE *f = fopen(path, "r");
  char **lines = calloc(4096, sizeof *lines);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int i = 0;

  assert_non_null(lines);
  if (f == NULL) {
    *count = 0;
    return lines;
  }
  while ((n = getline(&line, &cap, f)) >= 0) {
    assert_true(i < 4095);
    if (n == 0 || line[n - 1] != '\n')
      fail_msg("%s: line %d is not terminated", path, i + 1);
    line[n - 1] = '\0';
    lines[i++] = strdup(line);
  }
  free(line);
  fclose(f);
  *count = i;
  return lines;
}

static void free_lines(char **lines) {
  for (int i = 0; lines[i] != NULL; i++)
    free(lines[i]);
  free(lines);
}

/* Check one line of the simple format and return its message.  loc is the
 * expected location field, level the level word. */
static const char *check_line(const char *line, const char *ident,
                              const char *loc, const char *level) {
  char head[128];
  size_t hlen, len = strlen(line);
  int y, mo, d, h, mi, s;
  long us;
  char z;
  struct tm tm = {0};
  time_t when, now = time(NULL);

  /* YYYYMMDDThhmmss.uuuuuuZ, UTC, about now. */
  if (len < 94)
    fail_msg("line too short: \"%s\"", line);
  assert_int_equal(sscanf(line, "%4d%2d%2dT%2d%2d%2d.%6ld%c", &y, &mo, &d, &h,
                          &mi, &s, &us, &z),
                   8);
  assert_int_equal(z, 'Z');
  assert_int_equal(line[8], 'T');
  assert_int_equal(line[15], '.');
  for (int i = 16; i < 22; i++)
    assert_true(isdigit((unsigned char)line[i]));
  assert_int_equal(line[22], 'Z');
  assert_int_equal(line[23], ' ');
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  when = timegm(&tm);
  assert_true(when >= now - 5 && when <= now + 1);

  /* <ident>[<pid>] then spaces to column 52. */
  hlen = (size_t)snprintf(head, sizeof head, "%s[%ld] ", ident, (long)getpid());
  if (strncmp(line + 24, head, hlen) != 0)
    fail_msg("no \"%s\" at column 24: \"%s\"", head, line);
  for (size_t i = 24 + hlen; i < 52; i++)
    if (line[i] != ' ')
      fail_msg("column %zu is not a space: \"%s\"", i, line);
  assert_true(line[52] != ' ');
  /* The location at 52, then spaces to 88. */
  if (strncmp(line + 52, loc, strlen(loc)) != 0 ||
      line[52 + strlen(loc)] != ' ')
    fail_msg("no \"%s\" at column 52: \"%s\"", loc, line);
  for (size_t i = 52 + strlen(loc); i < 88; i++)
    assert_int_equal(line[i], ' ');
  /* The level at 88, then spaces to 94. */
  if (strncmp(line + 88, level, strlen(level)) != 0)
    fail_msg("no \"%s\" at column 88: \"%s\"", level, line);
  for (size_t i = 88 + strlen(level); i < 94; i++)
    assert_int_equal(line[i], ' ');
  return line + 94;
}

/* The message of a simple-format line, wherever overlong fields pushed it:
 * each field starts at its column or one space after the previous one. */
static const char *message_of(const char *line) {
  const char *p = strchr(line + 24, ']');
  size_t pos;

  assert_non_null(p);
  pos = (size_t)(p + 2 - line);
  pos = pos > 52 ? pos : 52;
  p = strchr(line + pos, ' '); /* end of the location */
  assert_non_null(p);
  pos = (size_t)(p + 1 - line);
  pos = pos > 88 ? pos : 88;
  p = strchr(line + pos, ' '); /* end of the level word */
  assert_non_null(p);
  pos = (size_t)(p + 1 - line);
  return line + (pos > 94 ? pos : 94);
}

/* "test_log.c:<func>:<line>" */
static void loc_of(char *buf, size_t len, const char *func, int line) {
  snprintf(buf, len, "test_log.c:%s:%d", func, line);
}

static int setup(void **state) {
  (void)state;
  if (tu_scratch_make(scratch, sizeof scratch, "test_log") != 0)
    return -1;
  ldm_log_init("/usr/local/bin/test_log");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  (void)ldm_log_set_destination("-");
  return tu_scratch_remove(scratch);
}

/* ---- format ---- */

static void test_format_columns(void **state) {
  char path[4096], loc[256];
  char **lines;
  int n, at;
  (void)state;

  ldm_log_init("/usr/local/bin/test_log");
  assert_string_equal(ldm_log_get_ident(), "test_log"); /* base name */
  log_to(path, sizeof path, "format.log");
  at = __LINE__ + 1;
  log_notice("hello %d %s", 42, "world");
  lines = read_lines(path, &n);
  assert_int_equal(n, 1);
  loc_of(loc, sizeof loc, __func__, at);
  assert_string_equal(check_line(lines[0], "test_log", loc, "NOTE"),
                      "hello 42 world");
  free_lines(lines);

  /* An ident long enough to pass column 52 pushes the rest right by one
   * space; so does a long location past 88. */
  ldm_log_set_ident("a-very-long-downstream-host.example.edu(feed)");
  at = __LINE__ + 1;
  log_error("pushed");
  ldm_log_set_ident("test_log");
  lines = read_lines(path, &n);
  assert_int_equal(n, 2);
  {
    char want[512];
    size_t wl, ll = strlen(lines[1]);
    wl = (size_t)snprintf(want, sizeof want,
                          " %s[%ld] test_log.c:%s:%d ERROR pushed",
                          "a-very-long-downstream-host.example.edu(feed)",
                          (long)getpid(), __func__, at);
    assert_int_equal(ll, 23 + wl); /* the time, then exactly this */
    assert_string_equal(lines[1] + 23, want);
  }
  free_lines(lines);
}

static void test_levels(void **state) {
  static const struct {
    enum ldm_log_level level;
    const char *word;
  } words[] = {{LDM_LOG_DEBUG, "DEBUG"}, {LDM_LOG_INFO, "INFO"},
               {LDM_LOG_NOTICE, "NOTE"}, {LDM_LOG_WARNING, "WARN"},
               {LDM_LOG_ERROR, "ERROR"}, {LDM_LOG_FATAL, "FATAL"}};
  char path[4096], loc[256];
  char **lines;
  int n, at[6];
  (void)state;

  ldm_log_init("test_log");
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE); /* the default */
  assert_false(ldm_log_enabled(LDM_LOG_DEBUG));
  assert_false(ldm_log_enabled(LDM_LOG_INFO));
  assert_true(ldm_log_enabled(LDM_LOG_NOTICE));
  assert_true(ldm_log_enabled(LDM_LOG_FATAL));
  assert_false(ldm_log_enabled((enum ldm_log_level)9));

  log_to(path, sizeof path, "levels.log");
  log_debug("not shown");
  log_info("not shown");
  /* Called directly, below the level, it writes nothing either. */
  ldm_log_write(LDM_LOG_DEBUG, __FILE__, __func__, __LINE__, "not shown");
  log_notice("notice");
  log_warning("warning");
  log_error("error");
  log_fatal("fatal");
  lines = read_lines(path, &n);
  assert_int_equal(n, 4);
  for (int i = 0; i < 4; i++) {
    const char *msg = message_of(lines[i]);
    assert_int_equal(
        strncmp(lines[i] + 88, words[i + 2].word, strlen(words[i + 2].word)),
        0);
    assert_null(strstr(msg, "not shown"));
  }
  free_lines(lines);

  /* Every level, with its word and its own line number. */
  log_to(path, sizeof path, "levels2.log");
  ldm_log_set_level(LDM_LOG_DEBUG);
  assert_int_equal(ldm_log_get_level(), LDM_LOG_DEBUG);
  ldm_log_set_level((enum ldm_log_level)42); /* ignored */
  ldm_log_set_level((enum ldm_log_level) - 1);
  assert_int_equal(ldm_log_get_level(), LDM_LOG_DEBUG);
  for (int i = 0; i < 6; i++) {
    at[i] = __LINE__ + 1;
    ldm_log(words[i].level, "level %d", i);
  }
  lines = read_lines(path, &n);
  assert_int_equal(n, 6);
  for (int i = 0; i < 6; i++) {
    char want[32];
    loc_of(loc, sizeof loc, __func__, at[i]);
    snprintf(want, sizeof want, "level %d", i);
    assert_string_equal(check_line(lines[i], "test_log", loc, words[i].word),
                        want);
  }
  free_lines(lines);

  ldm_log_set_level(LDM_LOG_ERROR);
  assert_false(ldm_log_enabled(LDM_LOG_WARNING));
  assert_true(ldm_log_enabled(LDM_LOG_ERROR));
  ldm_log_init("test_log"); /* back to the default level */
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE);
}

static void on_sigusr2(int sig) {
  (void)sig;
  ldm_log_request_roll();
}

static void test_roll(void **state) {
  struct sigaction sa;
  (void)state;

  ldm_log_set_level(LDM_LOG_NOTICE);
  ldm_log_roll_level();
  assert_int_equal(ldm_log_get_level(), LDM_LOG_INFO);
  ldm_log_roll_level();
  assert_int_equal(ldm_log_get_level(), LDM_LOG_DEBUG);
  ldm_log_roll_level();
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE);
  ldm_log_set_level(LDM_LOG_WARNING);
  ldm_log_roll_level();
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE);
  ldm_log_set_level(LDM_LOG_ERROR);
  ldm_log_roll_level();
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE);
  ldm_log_set_level(LDM_LOG_FATAL);
  ldm_log_roll_level();
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE);

  /* Requested (as from a handler): acted on by the next enabled check. */
  ldm_log_request_roll();
  assert_true(ldm_log_enabled(LDM_LOG_INFO));
  assert_false(ldm_log_enabled(LDM_LOG_DEBUG));

  /* From a real SIGUSR2. */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigusr2;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR2, &sa, NULL), 0);
  assert_int_equal(raise(SIGUSR2), 0);
  assert_int_equal(ldm_log_get_level(), LDM_LOG_DEBUG);
  assert_int_equal(raise(SIGUSR2), 0);
  assert_int_equal(ldm_log_get_level(), LDM_LOG_NOTICE);
  signal(SIGUSR2, SIG_DFL);
}

/* ---- rotation ---- */

static void on_sigusr1(int sig) {
  (void)sig;
  ldm_log_request_refresh();
}

static bool file_has(const char *path, const char *msg) {
  char **lines;
  int n;
  bool found = false;

  lines = read_lines(path, &n);
  for (int i = 0; i < n; i++)
    if (strcmp(message_of(lines[i]), msg) == 0)
      found = true;
  free_lines(lines);
  return found;
}

static void test_refresh_after_rotation(void **state) {
  char path[4096], old[4096];
  struct sigaction sa;
  int n;
  (void)state;

  ldm_log_set_level(LDM_LOG_NOTICE);
  log_to(path, sizeof path, "rotate.log");
  scratch_path(old, sizeof old, "rotate.log.1");
  log_notice("one");
  assert_int_equal(rename(path, old), 0); /* as "ldmadmin newlog" */
  log_notice("two");                      /* still into the renamed file */
  ldm_log_request_refresh();
  log_notice("three"); /* into a new file at the path */
  assert_true(file_has(old, "one"));
  assert_true(file_has(old, "two"));
  assert_false(file_has(old, "three"));
  assert_true(file_has(path, "three"));
  assert_false(file_has(path, "two"));
  assert_string_equal(ldm_log_get_destination(), path);

  /* The same from a real SIGUSR1. */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigusr1;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
  assert_int_equal(unlink(old), 0);
  assert_int_equal(rename(path, old), 0);
  assert_int_equal(raise(SIGUSR1), 0);
  log_notice("four");
  assert_true(file_has(path, "four"));
  assert_false(file_has(old, "four"));
  signal(SIGUSR1, SIG_DFL);

  /* A refresh with nothing renamed keeps appending to the same file. */
  ldm_log_request_refresh();
  log_notice("five");
  free_lines(read_lines(path, &n));
  assert_int_equal(n, 2);
}

/* A relative path is kept absolute: after a chdir() (pqact -d) the
 * reopen of a rotation makes the file where it was, not under the new
 * directory. */
static void test_refresh_relative_after_chdir(void **state) {
  char cwd[4096], path[4096], old[4096], sub[4096];
  (void)state;

  assert_non_null(getcwd(cwd, sizeof cwd));
  scratch_path(path, sizeof path, "rel.log");
  scratch_path(old, sizeof old, "rel.log.1");
  scratch_path(sub, sizeof sub, "elsewhere");
  (void)unlink(path);
  (void)mkdir(sub, 0755);
  assert_int_equal(chdir(scratch), 0);
  ldm_log_set_level(LDM_LOG_NOTICE);
  assert_int_equal(ldm_log_set_destination("rel.log"), 0);
  const char *dest = ldm_log_get_destination();
  size_t n = strlen(dest);
  assert_true(dest[0] == '/' && n > 8 && strcmp(dest + n - 8, "/rel.log") == 0);
  log_notice("before");
  assert_int_equal(chdir(sub), 0);
  assert_int_equal(rename(path, old), 0);
  ldm_log_request_refresh();
  log_notice("after");
  assert_int_equal(chdir(cwd), 0);
  assert_true(file_has(old, "before"));
  assert_false(file_has(old, "after"));
  assert_true(file_has(path, "after"));
  assert_int_equal(access("elsewhere/rel.log", F_OK), -1);
}

/* ---- message lines ---- */

static void test_multiline(void **state) {
  char path[4096], loc[256];
  char **lines;
  int n, at;
  (void)state;

  ldm_log_set_level(LDM_LOG_NOTICE);
  log_to(path, sizeof path, "multi.log");
  at = __LINE__ + 1;
  log_warning("first\nsecond\n\nfourth\n");
  loc_of(loc, sizeof loc, __func__, at);
  lines = read_lines(path, &n);
  assert_int_equal(n, 1); /* one message, one line; the final \n is its own */
  assert_string_equal(check_line(lines[0], "test_log", loc, "WARN"),
                      "first\\x0asecond\\x0a\\x0afourth");
  free_lines(lines);

  log_to(path, sizeof path, "multi2.log");
  log_notice("%s", "");
  log_notice("only\n");
  lines = read_lines(path, &n);
  assert_int_equal(n, 2);
  assert_string_equal(message_of(lines[0]), "");
  assert_string_equal(message_of(lines[1]), "only");
  free_lines(lines);
}

/* Read every "\xNN" of s as its byte (the reverse of ldm_log_escape()). */
static size_t unescape(const char *s, char *out) {
  size_t n = 0;

  while (*s != '\0') {
    unsigned v;

    if (s[0] == '\\' && s[1] == 'x' && isxdigit((unsigned char)s[2]) &&
        isxdigit((unsigned char)s[3]) && sscanf(s + 2, "%2x", &v) == 1) {
      out[n++] = (char)v;
      s += 4;
    } else {
      out[n++] = *s++;
    }
  }
  return n;
}

/* CHECK_ESCAPE(literal, want): a literal's bytes, NULs included. */
#define CHECK_ESCAPE(in, want) check_escape(in, sizeof in - 1, want)

static void check_escape(const char *in, size_t len, const char *want) {
  char out[256], back[256];

  assert_int_equal(ldm_log_escape(in, len, out, sizeof out), strlen(want));
  assert_string_equal(out, want);
  assert_int_equal(unescape(out, back), len);
  assert_memory_equal(back, in, len);
}

static void test_escape(void **state) {
  unsigned char all[256];
  char out[1100], back[1100], small[8];
  (void)state;

  CHECK_ESCAPE("plain text", "plain text");
  CHECK_ESCAPE("a\x1b[31mred\x1b[0m", "a\\x1b[31mred\\x1b[0m");
  CHECK_ESCAPE("tab\there\nnl\r\x7f\x01", "tab\\x09here\\x0anl\\x0d\\x7f\\x01");
  CHECK_ESCAPE("a\0b", "a\\x00b");
  /* A backslash is kept, but written \x5c before an x, so that no text
   * reads as an escape it is not: regexes stay as they were written. */
  CHECK_ESCAPE("^127\\.0\\.0\\.1$", "^127\\.0\\.0\\.1$");
  CHECK_ESCAPE("\\x1b", "\\x5cx1b");
  CHECK_ESCAPE("\\\\x", "\\\\x5cx");
  CHECK_ESCAPE("end\\", "end\\");
  CHECK_ESCAPE("caf\xc3\xa9", "caf\xc3\xa9"); /* UTF-8 kept */
  /* Every byte: only 0x20..0x7e and 0x80..0xff are left as they are. */
  for (int i = 0; i < 256; i++)
    all[i] = (unsigned char)i;
  assert_int_equal(ldm_log_escape((char *)all, 256, out, sizeof out),
                   256 + 3 * 33);
  for (size_t i = 0; out[i] != '\0'; i++)
    assert_true((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
  assert_int_equal(unescape(out, back), 256);
  assert_memory_equal(back, all, 256);
  /* Cut short: never half an escape, always a NUL. */
  assert_int_equal(ldm_log_escape("ab\x1b", 3, small, 6), 2);
  assert_string_equal(small, "ab");
  assert_int_equal(ldm_log_escape("ab\x1b", 3, small, 7), 2 + 4);
  assert_string_equal(small, "ab\\x1b");
  assert_int_equal(ldm_log_escape("abc", 3, small, 1), 0);
  assert_string_equal(small, "");
}

/* A file's bytes: no control byte but the newlines that end its lines. */
static void assert_no_control(const char *path) {
  FILE *f = fopen(path, "r");
  int c, prev = '\n', lines = 0;

  assert_non_null(f);
  while ((c = fgetc(f)) != EOF) {
    if (c == '\n')
      lines++;
    else if (c < 0x20 || c == 0x7f)
      fail_msg("%s: control byte 0x%02x", path, c);
    prev = c;
  }
  fclose(f);
  assert_int_equal(prev, '\n');
  assert_true(lines > 0);
}

/* Control bytes in a message and in the ident reach a file and stderr
 * escaped, each message on its line. */
static void test_control_bytes(void **state) {
  char path[4096];
  char **lines;
  int n, saved, fd;
  (void)state;

  ldm_log_set_level(LDM_LOG_NOTICE);
  log_to(path, sizeof path, "control.log");
  ldm_log_set_ident("evil\x1b[2J");
  log_notice("product \"%s\" received", "SAUS\x1b]0;pwned\x07\r\n\tKWBC");
  ldm_log_set_ident("test_log");
  assert_no_control(path);
  lines = read_lines(path, &n);
  assert_int_equal(n, 1);
  assert_non_null(strstr(lines[0], " evil\\x1b[2J["));
  assert_string_equal(message_of(lines[0]), "product \"SAUS\\x1b]0;pwned\\x07"
                                            "\\x0d\\x0a\\x09KWBC\" received");
  free_lines(lines);

  scratch_path(path, sizeof path, "control.err");
  saved = dup(STDERR_FILENO);
  assert_true(saved >= 0);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
  close(fd);
  assert_int_equal(ldm_log_set_destination("-"), 0);
  log_warning("on stderr: %s", "a\x1b[31mb\x7f");
  assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
  close(saved);
  assert_no_control(path);
  lines = read_lines(path, &n);
  assert_int_equal(n, 1);
  assert_string_equal(message_of(lines[0]), "on stderr: a\\x1b[31mb\\x7f");
  free_lines(lines);
}

static void test_long_message(void **state) {
  enum { LEN = 20000 };
  char path[4096];
  char *big = malloc(LEN + 1);
  char **lines;
  int n;
  (void)state;

  assert_non_null(big);
  for (int i = 0; i < LEN; i++)
    big[i] = (char)('a' + i % 26);
  big[LEN] = '\0';
  log_to(path, sizeof path, "long.log");
  log_notice("<%s>", big);
  lines = read_lines(path, &n);
  assert_int_equal(n, 1);
  assert_int_equal(strlen(lines[0]), 94 + LEN + 2);
  assert_int_equal(lines[0][94], '<');
  assert_int_equal(memcmp(lines[0] + 95, big, LEN), 0);
  free_lines(lines);
  free(big);
}

static void test_errno_kept(void **state) {
  char path[4096];
  (void)state;

  log_to(path, sizeof path, "errno.log");
  errno = EACCES;
  log_error("failed: %s", strerror(errno));
  assert_int_equal(errno, EACCES);
  errno = ENOSPC;
  log_debug("not shown");
  assert_int_equal(errno, ENOSPC);
  assert_true(file_has(path, "failed: Permission denied"));
}

/* ---- destinations ---- */

static void test_destinations(void **state) {
  char path[4096], bad[4096];
  (void)state;

  log_to(path, sizeof path, "dest.log");
  assert_int_equal(ldm_log_set_destination("-"), 0);
  assert_string_equal(ldm_log_get_destination(), "-");
  assert_int_equal(ldm_log_set_destination(""), 0);
  assert_string_equal(ldm_log_get_destination(), "");
  log_debug("syslog message from test_log, not shown");
  ldm_log_set_ident("test_log-syslog");
  ldm_log_set_ident("test_log");

  /* A file that cannot be opened leaves the destination as it was. */
  assert_int_equal(ldm_log_set_destination(path), 0);
  scratch_path(bad, sizeof bad, "no-such-dir/x.log");
  errno = 0;
  assert_int_equal(ldm_log_set_destination(bad), -1);
  assert_int_equal(errno, ENOENT);
  assert_string_equal(ldm_log_get_destination(), path);
  log_notice("still here");
  assert_true(file_has(path, "still here"));
  /* Passing the current destination back reopens it. */
  assert_int_equal(ldm_log_set_destination(ldm_log_get_destination()), 0);
  assert_string_equal(ldm_log_get_destination(), path);
  log_notice("again");
  assert_true(file_has(path, "again"));
}

static bool stderr_is_null(void) {
  struct stat err, null;
  return fstat(STDERR_FILENO, &err) == 0 && S_ISCHR(err.st_mode) &&
         stat("/dev/null", &null) == 0 && err.st_rdev == null.st_rdev;
}

/* Without -l: stderr, unless stderr is /dev/null: then /log/file. */
static void test_default_destination(void **state) {
  char reg[4096], logfile[4096], home[2048], dir[4096];
  FILE *f;
  int saved, null;
  (void)state;

  /* Stderr as it is (ctest gives a pipe): the default is stderr. */
  if (!stderr_is_null()) {
    assert_int_equal(ldm_log_set_destination(NULL), 0);
    assert_string_equal(ldm_log_get_destination(), "-");
  }

  scratch_path(reg, sizeof reg, "registry.xml");
  scratch_path(logfile, sizeof logfile, "from-registry.log");
  f = fopen(reg, "w");
  assert_non_null(f);
  fprintf(f, "<registry><log><file>%s</file></log></registry>\n", logfile);
  fclose(f);
  setenv("LDM_REGISTRY", reg, 1);

  saved = dup(STDERR_FILENO);
  null = open("/dev/null", O_WRONLY);
  assert_true(saved >= 0 && null >= 0);
  assert_int_equal(dup2(null, STDERR_FILENO), STDERR_FILENO);
  int rc = ldm_log_set_destination(NULL);
  const char *dest = ldm_log_get_destination();
  char got[4096];
  snprintf(got, sizeof got, "%s", dest);
  log_notice("to the registry's log file");

  /* A malformed registry: $LDMHOME/var/logs/ldmd.log. */
  f = fopen(reg, "w");
  assert_non_null(f);
  fputs("<registry><log>", f);
  fclose(f);
  scratch_path(home, sizeof home, "home");
  snprintf(dir, sizeof dir, "%s/var", home);
  mkdir(home, 0755);
  mkdir(dir, 0755);
  snprintf(dir, sizeof dir, "%s/var/logs", home);
  mkdir(dir, 0755);
  setenv("LDMHOME", home, 1);
  int rc2 = ldm_log_set_destination(NULL);
  char got2[4096];
  snprintf(got2, sizeof got2, "%s", ldm_log_get_destination());

  assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
  close(saved);
  close(null);
  unsetenv("LDM_REGISTRY");
  unsetenv("LDMHOME");

  assert_int_equal(rc, 0);
  assert_string_equal(got, logfile);
  assert_true(file_has(logfile, "to the registry's log file"));
  assert_int_equal(rc2, 0);
  snprintf(dir, sizeof dir, "%s/var/logs/ldmd.log", home);
  assert_string_equal(got2, dir);
  assert_int_equal(ldm_log_set_destination("-"), 0);
}

/* ---- several processes, one file ---- */

static void test_processes_share_a_file(void **state) {
  enum { NPROC = 4, NLINES = 300, MSGLEN = 500 };
  char path[4096], msg[MSGLEN + 1];
  pid_t pids[NPROC];
  char **lines;
  int n, counts[NPROC] = {0};
  (void)state;

  ldm_log_set_level(LDM_LOG_NOTICE);
  log_to(path, sizeof path, "shared.log");
  for (int p = 0; p < NPROC; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      char ident[32];
      snprintf(ident, sizeof ident, "child%d", p);
      ldm_log_set_ident(ident);
      memset(msg, 'a' + p, MSGLEN);
      msg[MSGLEN] = '\0';
      for (int i = 0; i < NLINES; i++)
        log_notice("%d %s\nsecond line %d", p, msg, p);
      _exit(0);
    }
  }
  for (int p = 0; p < NPROC; p++) {
    int status;
    assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  lines = read_lines(path, &n);
  assert_int_equal(n, NPROC * NLINES); /* a message is one line */
  for (int i = 0; i < n; i++) {
    const char *m = message_of(lines[i]);
    char tail[32];
    int p = -1;
    if (sscanf(m, "%d ", &p) != 1 || p < 0 || p >= NPROC) {
      fail_msg("mixed line: \"%.120s\"", lines[i]);
      continue;
    }
    memset(msg, 'a' + p, MSGLEN);
    msg[MSGLEN] = '\0';
    snprintf(tail, sizeof tail, "\\x0asecond line %d", p);
    assert_int_equal(strlen(m), 2 + MSGLEN + strlen(tail));
    assert_memory_equal(m + 2, msg, MSGLEN); /* whole, unmixed */
    assert_string_equal(m + 2 + MSGLEN, tail);
    counts[p]++;
  }
  for (int p = 0; p < NPROC; p++)
    assert_int_equal(counts[p], NLINES);
  free_lines(lines);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_columns),
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_roll),
      cmocka_unit_test(test_refresh_after_rotation),
      cmocka_unit_test(test_refresh_relative_after_chdir),
      cmocka_unit_test(test_multiline),
      cmocka_unit_test(test_escape),
      cmocka_unit_test(test_control_bytes),
      cmocka_unit_test(test_long_message),
      cmocka_unit_test(test_errno_kept),
      cmocka_unit_test(test_destinations),
      cmocka_unit_test(test_default_destination),
      cmocka_unit_test(test_processes_share_a_file),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
