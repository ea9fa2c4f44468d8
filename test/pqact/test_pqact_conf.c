/*
 * test_pqact_conf - the pqact.conf reader (pqutils/pqact/conf.c): fields
 * and their tabs, continuations, comments and blank lines (where an entry
 * ends, and where LDM's reader goes on), the 512-byte buffer, feedtypes,
 * patterns (".*" prefix, ^_ELSE_$, bad and explosive EREs, 255 characters),
 * action names in any case, every message with its line number, the
 * sub-matches each entry's arguments can name, and the check of the
 * arguments (pqutils/pqact/check.c): what each action needs, its options
 * by their two letters, \N against the pattern's groups, and the warning
 * for a back-reference in a pattern.  Each file is read from
 * memory (fmemopen).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/pqact/conf.h"
#include "test/lib/tu_skip.h"

struct said {
  unsigned nerr, nwarn;
  char text[4096]; /* every message, one a line, "E " or "W " first */
};

static void say(void *arg, bool error, const char *msg) {
  struct said *s = arg;
  size_t len = strlen(s->text);
  snprintf(s->text + len, sizeof s->text - len, "%s %s\n", error ? "E" : "W",
           msg);
  if (error)
    s->nerr++;
  else
    s->nwarn++;
}

/* Read text; the result of pqact_conf_read(). */
static int read_text(const char *text, struct pqact_conf *conf,
                     struct said *s) {
  memset(s, 0, sizeof *s);
  memset(conf, 0, sizeof *conf);
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  assert_non_null(f);
  int rc = pqact_conf_read(f, conf, say, s);
  fclose(f);
  return rc;
}

/* The file must fail with exactly this one message. */
static void expect_error(const char *text, const char *msg) {
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text(text, &conf, &s), -1);
  assert_int_equal(s.nerr, 1);
  char want[1024];
  snprintf(want, sizeof want, "E %s\n", msg);
  assert_string_equal(s.text, want);
  assert_null(conf.entries);
}

static void test_fields(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("IDS|DDPLUS\t^(SA)\tFILE\tdata/\\1\n"
                             "NEXRAD3\t\t\t^(...)\t\tnoop\n"
                             "EXP\tx\tSTDIOFILE\t-close\tout\twith tab\n",
                             &conf, &s),
                   0);
  assert_int_equal(s.nerr + s.nwarn, 0);
  assert_int_equal(conf.n, 3);
  assert_int_equal(conf.entries[0].line, 1);
  assert_int_equal(conf.entries[0].feedtype, PQ_FT_IDS | PQ_FT_DDPLUS);
  assert_string_equal(conf.entries[0].pattern, "^(SA)");
  assert_int_equal(conf.entries[0].action, PQACT_FILE);
  assert_string_equal(conf.entries[0].args, "data/\\1");
  assert_int_equal(conf.entries[1].feedtype, PQ_FT_NEXRAD3);
  assert_int_equal(conf.entries[1].action, PQACT_NOOP);
  assert_string_equal(conf.entries[1].args, "");
  assert_int_equal(conf.entries[1].re.re_nsub, 1);
  assert_int_equal(conf.entries[2].action, PQACT_STDIOFILE);
  assert_string_equal(conf.entries[2].args, "-close\tout\twith tab");
  assert_false(conf.entries[0].is_else);
  pqact_conf_free(&conf);
  pqact_conf_free(&conf); /* safe twice */
}

static void test_continuations_comments_blanks(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("# a comment\n"
                             "\n"
                             "WMO\t^(SA..)\n"
                             "    \tFILE\t-close  \n"
                             "# between continuation lines\n"
                             "\t  data/\\1 \t\n"
                             "   \n"
                             "\t\n"
                             "ANY\t.\n"
                             " NOOP\n"
                             "#\tFILE\tnever\n",
                             &conf, &s),
                   0);
  assert_int_equal(s.nerr, 0);
  assert_int_equal(conf.n, 2);
  assert_int_equal(conf.entries[0].line, 3);
  assert_string_equal(conf.entries[0].pattern, "^(SA..)");
  assert_int_equal(conf.entries[0].action, PQACT_FILE);
  /* each newline and its leading blanks became one tab; trailing blanks
   * went */
  assert_string_equal(conf.entries[0].args, "-close\tdata/\\1");
  assert_int_equal(conf.entries[1].line, 9);
  assert_int_equal(conf.entries[1].action, PQACT_NOOP);
  pqact_conf_free(&conf);

  /* CRLF line ends and a last line without a newline */
  assert_int_equal(read_text("EXP\ta\tFILE\tx\r\nEXP\tb\tFILE\ty", &conf, &s),
                   0);
  assert_int_equal(conf.n, 2);
  assert_string_equal(conf.entries[0].args, "x");
  assert_string_equal(conf.entries[1].args, "y");
  pqact_conf_free(&conf);

  /* an empty file, and one of comments only */
  assert_int_equal(read_text("", &conf, &s), 0);
  assert_int_equal(conf.n, 0);
  assert_int_equal(read_text("#x\n\n#y\n", &conf, &s), 0);
  assert_int_equal(conf.n, 0);
}

static void test_not_enough_fields(void **state) {
  (void)state;
  expect_error("ANY\t.*\n", "syntax error at line 1, not enough fields");
  expect_error("#\n\nANY\n", "syntax error at line 3, not enough fields");
  /* spaces do not separate fields */
  expect_error("ANY ^x FILE out\n",
               "syntax error at line 1, not enough fields");
  /* the line number is where the entry starts */
  expect_error("EXP\tx\tNOOP\nANY\t\n\t\n#\n\n",
               "syntax error at line 2, not enough fields");
  /* a first line that starts with a tab is an entry: the tab is skipped */
  expect_error("\tFILE\tx\n", "syntax error at line 1, not enough fields");
}

static void test_every_error_and_all_of_them(void **state) {
  (void)state;
  expect_error("NOSUCH\tx\tNOOP\n",
               "feedtype error at line 1: unknown feedtype name: \"NOSUCH\"");
  char why[128]; /* regerror()'s text, which is the C library's */
  regex_t re;
  int rc = regcomp(&re, "(ab", REG_EXTENDED);
  assert_int_not_equal(rc, 0);
  regerror(rc, &re, why, sizeof why);
  char msg[256];
  snprintf(msg, sizeof msg, "regcomp error at line 1: \"(ab\": %s", why);
  expect_error("EXP\t(ab\tNOOP\n", msg);
  expect_error("EXP\t((a{255}){255})\tNOOP\n",
               "regcomp error at line 1: \"((a{255}){255})\": its repetitions "
               "would take too much memory to compile");
  expect_error("EXP\tx\tFILES\tout\n", "unknown action \"FILES\" at line 1");
  expect_error("EXP\tx\tstdiofilexxxx\tout\n",
               "unknown action \"stdiofilexxxx\" at line 1");

  /* one run reports every bad entry, and refuses the file */
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("EXP\tx\tNOOP\n"
                             "EXP\tx\n"
                             "BAD\tx\tNOOP\n"
                             "EXP\tx\tPIPEX\n"
                             "EXP\tx\tFILE\tok\n",
                             &conf, &s),
                   -1);
  assert_int_equal(s.nerr, 3);
  assert_string_equal(s.text,
                      "E syntax error at line 2, not enough fields\n"
                      "E feedtype error at line 3: unknown feedtype name: "
                      "\"BAD\"\n"
                      "E unknown action \"PIPEX\" at line 4\n");
  assert_null(conf.entries);
  assert_int_equal(conf.n, 0);
}

static void test_action_names(void **state) {
  (void)state;
  static const struct {
    const char *name;
    enum pqact_action a;
  } names[] = {
      {"noop", PQACT_NOOP},     {"NOOP", PQACT_NOOP},
      {"File", PQACT_FILE},     {"stdioFILE", PQACT_STDIOFILE},
      {"dbfile", PQACT_DBFILE}, {"PIPE", PQACT_PIPE},
      {"spipe", PQACT_SPIPE},   {"XPipe", PQACT_XPIPE},
      {"exec", PQACT_EXEC},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char text[128];
    snprintf(text, sizeof text, "ANY\tx\t%s\targs\n", names[i].name);
    struct pqact_conf conf;
    struct said s;
    assert_int_equal(read_text(text, &conf, &s), 0);
    assert_int_equal(conf.n, 1);
    assert_int_equal(conf.entries[0].action, names[i].a);
    pqact_conf_free(&conf);
  }
  assert_string_equal(pqact_action_name(PQACT_STDIOFILE), "STDIOFILE");
}

static void test_patterns(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("ANY\t.*\tNOOP\n"
                             "ANY\t.*(SA)\tNOOP\n"
                             "ANY\t^_ELSE_$\tFILE\tx\n"
                             "ANY\t_ELSE_\tNOOP\n",
                             &conf, &s),
                   0);
  assert_int_equal(s.nwarn, 1); /* ".*" alone is kept, as LDM */
  assert_string_equal(s.text, "W adjusting pathological regular-expression at "
                              "line 2: \".*(SA)\"\n");
  assert_string_equal(conf.entries[0].pattern, ".*");
  assert_string_equal(conf.entries[1].pattern, "(SA)");
  assert_true(conf.entries[2].is_else);
  assert_false(conf.entries[3].is_else);
  pqact_conf_free(&conf);

  char text[700], pat[300];
  memset(pat, 'a', 255);
  pat[255] = '\0';
  snprintf(text, sizeof text, "ANY\t%s\tNOOP\n", pat);
  assert_int_equal(read_text(text, &conf, &s), 0);
  assert_string_equal(conf.entries[0].pattern, pat);
  pqact_conf_free(&conf);
  pat[255] = 'a';
  pat[256] = '\0';
  snprintf(text, sizeof text, "ANY\t%s\tNOOP\n", pat);
  char want[700];
  snprintf(want, sizeof want, "pattern string too long at line 1: \"%s\"", pat);
  expect_error(text, want);
}

/* An entry of exactly n characters, continuation tab included, each
 * line with its newline. */
static void entry_of(char *buf, size_t n, bool continued) {
  const char *head = continued ? "ANY\tx\tFILE\n\t" : "ANY\tx\tFILE\t";
  size_t hlen = strlen(head), fixed = strlen("ANY\tx\tFILE\t");
  strcpy(buf, head);
  memset(buf + hlen, 'p', n - fixed);
  strcpy(buf + hlen + (n - fixed), "\n");
}

static void test_entry_limit(void **state) {
  (void)state;
  char text[2048];
  struct pqact_conf conf;
  struct said s;
  /* LDM's 512-byte buffer holds 510 characters, the newline and the NUL */
  for (int continued = 0; continued <= 1; continued++) {
    entry_of(text, PQACT_ENTRY_MAX - 2, continued);
    assert_int_equal(read_text(text, &conf, &s), 0);
    assert_int_equal(strlen(conf.entries[0].args),
                     PQACT_ENTRY_MAX - 2 - strlen("ANY\tx\tFILE\t"));
    pqact_conf_free(&conf);
    entry_of(text, PQACT_ENTRY_MAX - 1, continued);
    expect_error(text, "entry too long at line 1");
  }
  /* the same without the last newline: fgets() stops before the end */
  entry_of(text, PQACT_ENTRY_MAX - 2, false);
  text[strlen(text) - 1] = '\0';
  assert_int_equal(read_text(text, &conf, &s), 0);
  pqact_conf_free(&conf);
  entry_of(text, PQACT_ENTRY_MAX - 1, false);
  text[strlen(text) - 1] = '\0';
  expect_error(text, "entry too long at line 1");
  /* trailing blanks count, as they are read before they are dropped */
  entry_of(text, 505, false);
  strcpy(text + strlen(text) - 1, "     \n"); /* 505 + 5 + newline */
  assert_int_equal(read_text(text, &conf, &s), 0);
  assert_int_equal(strlen(conf.entries[0].args), 505 - 11);
  pqact_conf_free(&conf);
  entry_of(text, 505, false);
  strcpy(text + strlen(text) - 1, "      \n"); /* one more */
  expect_error(text, "entry too long at line 1");
  /* the leading blanks of a continuation do not count */
  char *p = text;
  p += sprintf(p, "EXP\tx\tFILE\n");
  for (int i = 0; i < 4; i++)
    p += sprintf(p, "          \t%0100d\n", i);
  assert_int_equal(read_text(text, &conf, &s), 0);
  pqact_conf_free(&conf);
  /* too long over several lines: the line where the entry starts, and
   * the next entry is still read */
  p = text;
  p += sprintf(p, "EXP\tx\tFILE\n");
  for (int i = 0; i < 6; i++)
    p += sprintf(p, "\t%0100d\n", i);
  sprintf(p, "BAD\tx\tNOOP\n");
  assert_int_equal(read_text(text, &conf, &s), -1);
  assert_string_equal(s.text, "E entry too long at line 1\n"
                              "E feedtype error at line 8: unknown feedtype "
                              "name: \"BAD\"\n");
}

/* Where LDM's reader ends an entry, and where it goes on. */
static void test_entry_ends(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  /* an empty line ends the entry; the tab line after it is an entry */
  assert_int_equal(read_text("ANY\tx\n\n\tFILE\tout\n", &conf, &s), -1);
  assert_string_equal(s.text, "E syntax error at line 1, not enough fields\n"
                              "E syntax error at line 3, not enough fields\n");
  /* a line of blanks does not */
  assert_int_equal(read_text("ANY\tx\n \t \n\tFILE\tout\n", &conf, &s), 0);
  assert_string_equal(conf.entries[0].args, "out");
  pqact_conf_free(&conf);
  /* an indented comment is skipped, and the line after it continues the
   * entry whatever it starts with */
  assert_int_equal(read_text("EXP\tx\tPIPE\tdec\n"
                             "\t#\t-e GEMTBL=/x\n"
                             "#\n"
                             "\n"
                             "\t-d log\n"
                             "\t-v\n"
                             "EXP\ty\tFILE\n"
                             "  # the path:\n"
                             "data/y\n"
                             "ANY\tz\tNOOP\n",
                             &conf, &s),
                   0);
  assert_int_equal(conf.n, 3);
  assert_string_equal(conf.entries[0].args, "dec\t\t-d log\t-v");
  assert_string_equal(conf.entries[1].args, "data/y");
  assert_int_equal(conf.entries[1].line, 7);
  assert_int_equal(conf.entries[2].line, 10);
  pqact_conf_free(&conf);
  /* a first line that starts with a tab */
  assert_int_equal(read_text("\t\tEXP\tx\tNOOP\n", &conf, &s), 0);
  assert_int_equal(conf.n, 1);
  assert_int_equal(conf.entries[0].feedtype, PQ_FT_EXP);
  pqact_conf_free(&conf);
}

/* The sub-matches each entry's arguments can name, which is all regexec()
 * is asked for. */
static void test_nmatch(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("ANY\t^(a)\tFILE\tplain/%Y/(seq)\n"
                             "ANY\t^(a)\tFILE\tamp/&\n"
                             "ANY\t^(a)\tFILE\tzero/\\0\n"
                             "ANY\t^(a)\tFILE\tone/\\1\n"
                             "ANY\t^(a)(b)?(c)?(d)?(e)?(f)?(g)?(h)?(i)?(j)?"
                             "(k)?(l)?\tFILE\tparen/\\(12)\n"
                             "ANY\t^(a)\tFILE\tday/(\\1:yyyy)\n"
                             "ANY\t^(a)\tFILE\tlit/\\&x\\(y\n"
                             "ANY\t^(a)\tNOOP\n",
                             &conf, &s),
                   0);
  static const unsigned want[] = {
      0, 1, 1, PQACT_NMATCH, PQACT_NMATCH, PQACT_NMATCH, 1, 0};
  assert_int_equal(conf.n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < conf.n; i++)
    if (conf.entries[i].nmatch != want[i])
      fail_msg("entry %zu \"%s\": nmatch %u, not %u", i, conf.entries[i].args,
               conf.entries[i].nmatch, want[i]);
  assert_non_null(conf.match);
  pqact_conf_free(&conf);
  assert_null(conf.match);
}

/* The arguments each action needs, checked when the file is read (the
 * cases of issue 22: each was "successfully read", then failed on every
 * product). */
static void test_arguments_needed(void **state) {
  (void)state;
  expect_error("EXP\tx\tFILE\n", "FILE has no path at line 1");
  expect_error("EXP\tx\tSTDIOFILE\t-close -strip\n",
               "STDIOFILE has no path: \"-strip\" is one of its options at "
               "line 1");
  expect_error("EXP\tx\tDBFILE\t-dblocksize 1024\n",
               "DBFILE has no path at line 1");
  expect_error("EXP\tx\tPIPE\n", "PIPE has no command at line 1");
  expect_error("EXP\tx\tXPIPE\t\"\"\n", "XPIPE has no command at line 1");
  expect_error("EXP\tx\tEXEC\t-wait\n",
               "EXEC has no command: \"-wait\" is one of its options at "
               "line 1");
  expect_error("EXP\tx\tEXEC\t-wa\n",
               "EXEC has no command: \"-wa\" is one of its options at line 1");
  /* the line is the entry's first, continuations included */
  expect_error("EXP\tx\tNOOP\n\n#c\nEXP\tx\n\tPIPE\n\t-close\n",
               "PIPE has no command: \"-close\" is one of its options at "
               "line 4");

  struct pqact_conf conf;
  struct said s;
  /* what they need: nothing more is said */
  assert_int_equal(read_text("EXP\tx\tNOOP\n"
                             "EXP\tx\tNOOP\tanything -at all \\9\n"
                             "EXP\tx\tFILE\t-close\tout\n"
                             "EXP\tx\tFILE\t-bogus\n" /* a path "-bogus" */
                             "EXP\tx\tDBFILE\t-dblocksize 1024 db key\n"
                             "EXP\tx\tDBFILE\t-dblocksize -close db\n"
                             "EXP\tx\tEXEC\t-wait\tsh -c \"exit 0\"\n"
                             "EXP\tx\tEXEC\t-x\n" /* a program "-x" */
                             "EXP\tx\tSPIPE\tcat\n",
                             &conf, &s),
                   0);
  assert_string_equal(s.text, "");
  pqact_conf_free(&conf);
}

/* Options are known by their first two letters, as LDM's; a word that is
 * no option of the action is a warning (LDM skips it), not an error. */
static void test_options(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("EXP\tx\tFILE\t-overwrit -cl -rem -me -ed out\n"
                             "EXP\tx\tPIPE\t-tr -no -str -fl cmd\n"
                             "EXP\tx\tFILE\t-bogus x\n"
                             "EXP\tx\tEXEC\t-close x\n"
                             "EXP\tx\tSTDIOFILE\t-metadata -x y\n"
                             "EXP\tx\tSPIPE\t-close cmd\n",
                             &conf, &s),
                   0);
  assert_int_equal(conf.n, 6);
  assert_int_equal(s.nerr, 0);
  assert_string_equal(
      s.text, "W unknown option \"-bogus\" of FILE (ignored) at line 3\n"
              "W \"-close\" is not an option of EXEC (ignored) at line 4\n"
              "W \"-metadata\" is not an option of STDIOFILE (ignored) at "
              "line 5\n"
              "W unknown option \"-x\" of STDIOFILE (ignored) at line 5\n"
              "W \"-close\" is not an option of SPIPE (ignored) at line 6\n");
  pqact_conf_free(&conf);
}

/* Every \N and \(N) against the pattern's groups, read as the substitution
 * reads them. */
static void test_backslash_groups(void **state) {
  (void)state;
  expect_error("EXP\t(x)\tFILE\tdata/\\9\n",
               "\"\\9\" names sub-match 9, but the pattern has 1 group at "
               "line 1");
  expect_error("EXP\tx\tEXEC\techo \\1\n",
               "\"\\1\" names sub-match 1, but the pattern has 0 groups at "
               "line 1");
  expect_error("EXP\t(a)(b)\tFILE\t\\1/\\(03)\n",
               "\"\\(03)\" names sub-match 3, but the pattern has 2 groups at "
               "line 1");
  expect_error("EXP\t(a)\tFILE\t\\(100)\n",
               "\"\\(100)\" names a sub-match past \\(99), the last there is "
               "at line 1");
  expect_error("ANY\t^_ELSE_$\tFILE\t\\1\n",
               "\"\\1\" names sub-match 1, but the pattern has 0 groups at "
               "line 1");
  expect_error("EXP\t(a)\tFILE\tx/\\(1y\n",
               "invalid parenthetical backreference \"\\(1\" at line 1");

  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("EXP\t(a)\tFILE\t\\1/\\(1)/\\0/&/\\\\9/\\&\n"
                             "EXP\t^(a)(b)?(c)?(d)?(e)?(f)?(g)?(h)?(i)?(j)?"
                             "\tFILE\t\\(10)/\\9\n"
                             "EXP\tx\tFILE\tlit/\\(y/\\x/\\(\n"
                             "ANY\t^_ELSE_$\tFILE\telse/&\\0\n"
                             "EXP\t(a)\tFILE\tdays/(\\1:yyyy)\n",
                             &conf, &s),
                   0);
  assert_string_equal(s.text, "");
  pqact_conf_free(&conf);
}

/* A back-reference in a pattern is glibc's, and kept, but said. */
static void test_backref_warning(void **state) {
  (void)state;
  struct pqact_conf conf;
  struct said s;
  assert_int_equal(read_text("EXP\t(.*)(.*)\\2\\1x\tFILE\t\\1\n"
                             "EXP\t[\\1]\\\\1\tNOOP\n",
                             &conf, &s),
                   0);
  assert_int_equal(conf.n, 2);
  assert_int_equal(s.nerr, 0);
  assert_string_equal(
      s.text, "W back-reference \\2 in the pattern at line 1: matching it can "
              "take exponential time on one identifier, and pqact then acts "
              "on nothing else: \"(.*)(.*)\\2\\1x\"\n");
  pqact_conf_free(&conf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_continuations_comments_blanks),
      cmocka_unit_test(test_not_enough_fields),
      cmocka_unit_test(test_every_error_and_all_of_them),
      cmocka_unit_test(test_action_names),
      cmocka_unit_test(test_patterns),
      cmocka_unit_test(test_entry_limit),
      cmocka_unit_test(test_entry_ends),
      cmocka_unit_test(test_nmatch),
      cmocka_unit_test(test_arguments_needed),
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_backslash_groups),
      cmocka_unit_test(test_backref_warning),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
