/*
 * test_pqact_subst - the argument substitutions of pqact
 * (pqutils/pqact/subst.c), each step alone and then in LDM's order:
 * sub-matches (\0-\9, \(NN), &, the escapes, groups that did not take
 * part, bad references, overflow), strftime in UTC, (DD:code) across month
 * and year ends and leap days, (seq), and the split into words with double
 * quotes; and the whole against its steps chained by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pqutils/pqact/subst.h"
#include "test/lib/tu_skip.h"

static char said[1024];

static void say(void *arg, const char *msg) {
  (void)arg;
  size_t len = strlen(said);
  snprintf(said + len, sizeof said - len, "%s\n", msg);
}

static int64_t utc(int y, int mo, int d, int h, int mi) {
  struct tm tm = {.tm_year = y - 1900,
                  .tm_mon = mo - 1,
                  .tm_mday = d,
                  .tm_hour = h,
                  .tm_min = mi};
  return (int64_t)timegm(&tm);
}

/* regsub of tmpl with ident matched by ere; the result (static). */
static const char *regsub(const char *ere, const char *ident, const char *tmpl,
                          int want_rc) {
  static char out[PQACT_ARG_MAX];
  regex_t re;
  regmatch_t m[PQACT_NMATCH];
  assert_int_equal(regcomp(&re, ere, REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, ident, PQACT_NMATCH, m, 0), 0);
  said[0] = '\0';
  assert_int_equal(pqact_regsub(tmpl, ident, m, out, sizeof out, say, NULL),
                   want_rc);
  regfree(&re);
  return out;
}

static void test_regsub(void **state) {
  (void)state;
  const char *id = "SAUS43 KXYZ 011200";
  const char *ere = "^(SA)(..)([0-9]+) (K...) (..)(..)(..)";
  assert_string_equal(regsub(ere, id, "\\1/\\2/\\3/\\4/\\5\\6\\7", 0),
                      "SA/US/43/KXYZ/011200");
  assert_string_equal(regsub(ere, id, "\\0|&|\\(00)|\\(1)|\\(07)", 0),
                      "SAUS43 KXYZ 011200|SAUS43 KXYZ 011200|"
                      "SAUS43 KXYZ 011200|SA|00");
  /* escapes: \\ and \& only; any other backslash is kept */
  assert_string_equal(regsub(ere, id, "a\\&b\\\\c\\xd\\", 0), "a&b\\c\\xd\\");
  /* groups past the ERE's, and a group that did not take part: "" */
  assert_string_equal(regsub(ere, id, "[\\8][\\9][\\(42)]", 0), "[][][]");
  assert_string_equal(regsub("^(X)?(SA)", id, "[\\1][\\2]", 0), "[][SA]");
  /* twelve groups: \(10) .. \(12) */
  assert_string_equal(regsub("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)",
                             "abcdefghijkl", "\\(10)\\(11)\\(12)\\10", 0),
                      "jkla0"); /* \10 is \1 and a 0 */
  /* any number of digits; past the ERE's groups: "" */
  assert_string_equal(regsub(ere, id, "[\\(0001)][\\(123)]", 0), "[SA][]");
  /* "\(" without a digit is ordinary text */
  assert_string_equal(regsub(ere, id, "x\\(ab)\\()", 0), "x\\(ab)\\()");
  assert_string_equal(said, "");
  /* digits without ')': said, and the substitution stops there */
  assert_string_equal(regsub(ere, id, "a\\1\\(1b\\2", -2), "aSA");
  assert_string_equal(said, "invalid parenthetical backreference\n");
  assert_string_equal(regsub(ere, id, "\\(1", -2), "");

  /* too long for the buffer */
  regex_t re;
  regmatch_t m[PQACT_NMATCH];
  char small[8];
  assert_int_equal(regcomp(&re, "(.*)", REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, "12345678", PQACT_NMATCH, m, 0), 0);
  assert_int_equal(
      pqact_regsub("\\1", "12345678", m, small, sizeof small, NULL, NULL), -1);
  assert_int_equal(regexec(&re, "1234567", PQACT_NMATCH, m, 0), 0);
  assert_int_equal(
      pqact_regsub("\\1", "1234567", m, small, sizeof small, NULL, NULL), 0);
  assert_string_equal(small, "1234567");
  regfree(&re);
}

static void test_strftime(void **state) {
  (void)state;
  char out[256];
  int64_t t = utc(2024, 2, 29, 23, 59) + 58;
  assert_int_equal(
      pqact_strftime("%Y%m%d_%H%M%S %j %b %% %y", t, out, sizeof out), 0);
  assert_string_equal(out, "20240229_235958 060 Feb % 24");
  assert_int_equal(pqact_strftime("", t, out, sizeof out), 0);
  assert_string_equal(out, "");
  assert_int_equal(pqact_strftime("no conversions", 0, out, sizeof out), 0);
  assert_string_equal(out, "no conversions");
  assert_int_equal(pqact_strftime("%Y%m%d", 0, out, 4), -1);
}

/* datesub of in at time t; the result (static). */
static const char *ds(const char *in, int64_t t) {
  static char out[PQACT_ARG_MAX];
  said[0] = '\0';
  assert_int_equal(pqact_datesub(in, t, out, sizeof out, say, NULL), 0);
  return out;
}

#define ALL(d)                                                                 \
  "(" d ":yyyy)-(" d ":mm)-(" d ":dd) (" d ":yy) (" d ":mmm) (" d ":ddd) (" d  \
  ":hh)"

/* The date of (DD:yyyy)-(DD:mm)-(DD:dd) at noon of the given day. */
static const char *ymd(const char *dd, int y, int mo, int d) {
  char in[64];
  snprintf(in, sizeof in, "(%s:yyyy)-(%s:mm)-(%s:dd)", dd, dd, dd);
  return ds(in, utc(y, mo, d, 12, 0));
}

static void test_datesub_vectors(void **state) {
  (void)state;
  /* the vectors of LDM's own test of its date substitution, at noon */
  assert_string_equal(ymd("27", 1971, 2, 28), "1971-02-27");
  assert_string_equal(ymd("28", 1971, 2, 28), "1971-02-28");
  assert_string_equal(ymd("29", 1971, 2, 28), "1971-03-01");
  assert_string_equal(ymd("01", 1971, 2, 28), "1971-03-01");
  assert_string_equal(ymd("02", 1971, 2, 28), "1971-02-02");
  assert_string_equal(ymd("28", 1980, 2, 29), "1980-02-28");
  assert_string_equal(ymd("29", 1980, 2, 29), "1980-02-29");
  assert_string_equal(ymd("30", 1980, 2, 29), "1980-03-01");
  assert_string_equal(ymd("01", 1980, 2, 29), "1980-03-01");
  assert_string_equal(ymd("02", 1980, 2, 29), "1980-02-02");
  assert_string_equal(ymd("27", 1980, 2, 28), "1980-02-27");
  assert_string_equal(ymd("29", 1980, 2, 28), "1980-02-29");
  assert_string_equal(ymd("30", 1980, 2, 28), "1980-01-30");
  assert_string_equal(ymd("01", 1980, 2, 28), "1980-02-01");
  assert_string_equal(ymd("28", 1970, 3, 1), "1970-02-28");
  assert_string_equal(ymd("29", 1970, 3, 1), "1970-03-01");
  assert_string_equal(ymd("01", 1970, 3, 1), "1970-03-01");
  assert_string_equal(ymd("02", 1970, 3, 1), "1970-03-02");
  assert_string_equal(ymd("03", 1970, 3, 1), "1970-02-03");
  assert_string_equal(ymd("28", 1980, 3, 1), "1980-02-28");
  assert_string_equal(ymd("29", 1980, 3, 1), "1980-02-29");
  assert_string_equal(ymd("30", 1980, 3, 1), "1980-03-01");
  assert_string_equal(ymd("03", 1980, 3, 1), "1980-02-03");
  assert_string_equal(ymd("31", 2007, 5, 31), "2007-05-31");
  assert_string_equal(ymd("01", 2007, 5, 31), "2007-06-01");
  assert_string_equal(ymd("02", 2007, 5, 31), "2007-05-02");
  /* 00: the creation time itself; hh is the creation time's hour */
  assert_string_equal(ds(ALL("00"), utc(2024, 7, 4, 13, 5)),
                      "2024-07-04 24 jul 186 13");
  assert_string_equal(ds(ALL("01"), utc(2024, 7, 4, 13, 5)),
                      "2024-07-01 24 jul 183 13");
  /* tomorrow is within 1.5 days; the day after, at the same time of day,
   * is not: last month's */
  assert_string_equal(ds(ALL("05"), utc(2024, 7, 4, 23, 59)),
                      "2024-07-05 24 jul 187 23");
  assert_string_equal(ds(ALL("06"), utc(2024, 7, 4, 0, 0)),
                      "2024-06-06 24 jun 158 00");
  assert_string_equal(ds(ALL("06"), utc(2024, 7, 4, 23, 59)),
                      "2024-06-06 24 jun 158 23");
}

static void test_datesub_month_ends(void **state) {
  (void)state;
  /* on the 30th of April: day 01 is May 1 (next month) */
  assert_string_equal(ds(ALL("01"), utc(2024, 4, 30, 20, 0)),
                      "2024-05-01 24 may 122 20");
  /* on May 1: day 30 is April 30, day 31 is "April 31" = May 1 */
  assert_string_equal(ds(ALL("30"), utc(2024, 5, 1, 1, 0)),
                      "2024-04-30 24 apr 121 01");
  assert_string_equal(ds(ALL("31"), utc(2024, 5, 1, 1, 0)),
                      "2024-05-01 24 may 122 01");
  /* leap year: on March 1, day 29 is February 29; day 30 is "Feb 30" */
  assert_string_equal(ds(ALL("29"), utc(2024, 3, 1, 6, 0)),
                      "2024-02-29 24 feb 060 06");
  assert_string_equal(ds(ALL("30"), utc(2024, 3, 1, 6, 0)),
                      "2024-03-01 24 mar 061 06");
  /* not a leap year: on March 1, day 29 is "Feb 29" = March 1 */
  assert_string_equal(ds(ALL("29"), utc(2023, 3, 1, 6, 0)),
                      "2023-03-01 23 mar 060 06");
  /* on the 30th of June day 02 is June 2, even late in the day */
  assert_string_equal(ds("(02:mm)-(02:dd)", utc(2024, 6, 30, 23, 59)), "06-02");
  /* day 31 on March 1: April 31 and March 31 are too late, so the month
   * before, normalised (Feb 31 2023 = Mar 3) */
  assert_string_equal(ds("(31:mm)-(31:dd)", utc(2023, 3, 1, 0, 0)), "03-03");
}

static void test_datesub_year_ends(void **state) {
  (void)state;
  /* LDM's: on December 31, day 01 is next year's; day 02 this month's */
  assert_string_equal(ymd("30", 1970, 12, 31), "1970-12-30");
  assert_string_equal(ymd("31", 1970, 12, 31), "1970-12-31");
  assert_string_equal(ymd("01", 1970, 12, 31), "1971-01-01");
  assert_string_equal(ymd("02", 1970, 12, 31), "1970-12-02");
  /* and on January 1, day 31 is last year's, day 03 too */
  assert_string_equal(ymd("31", 1971, 1, 1), "1970-12-31");
  assert_string_equal(ymd("01", 1971, 1, 1), "1971-01-01");
  assert_string_equal(ymd("02", 1971, 1, 1), "1971-01-02");
  assert_string_equal(ymd("03", 1971, 1, 1), "1970-12-03");
  /* every code across the year end */
  assert_string_equal(ds(ALL("01"), utc(2023, 12, 31, 23, 0)),
                      "2024-01-01 24 jan 001 23");
  assert_string_equal(ds(ALL("31"), utc(2024, 1, 1, 0, 30)),
                      "2023-12-31 23 dec 365 00");
  assert_string_equal(ds(ALL("31"), utc(2025, 1, 1, 0, 30)),
                      "2024-12-31 24 dec 366 00");
  /* the century: 1999-12-31 and 2000-01-01 */
  assert_string_equal(ds(ALL("31"), utc(2000, 1, 1, 0, 0)),
                      "1999-12-31 99 dec 365 00");
  assert_string_equal(ds(ALL("01"), utc(1999, 12, 31, 12, 0)),
                      "2000-01-01 00 jan 001 12");
}

static void test_datesub_codes(void **state) {
  (void)state;
  int64_t t = utc(2024, 7, 4, 13, 5);
  assert_string_equal(ds("(04:YYYY)(04:Mm)(04:DD)(04:MMM)(04:Hh)", t),
                      "20240704jul13");
  assert_string_equal(said, "");
  /* an unknown code is said and dropped */
  assert_string_equal(ds("a(04:jjj)b", t), "ab");
  assert_string_equal(said, "unknown date indicator: jjj\n");
  assert_string_equal(ds("a(04:)b(04:YYYYY)c", t), "abc");
  assert_string_equal(said, "unknown date indicator: \nunknown date "
                            "indicator: yyyyy\n");
  /* a day past 31 is said, and gives the code in lowercase, as LDM's */
  assert_string_equal(ds("a(32:DD)b(99:x)", t), "addbx");
  assert_string_equal(said, "bad day of month in ident: a(32:DD)b(99:x)\n"
                            "bad day of month in ident: a(32:DD)b(99:x)\n");
  /* what is not a (DD:code) stays */
  assert_string_equal(ds("(4:yyyy) (ab:yy) (04;yy) () (04:yyyy", t),
                      "(4:yyyy) (ab:yy) (04;yy) () (04:yyyy");
  assert_string_equal(said, "");
  /* the code runs to the first ')', as LDM's \(([0-9]{2}):([^)]*)\) */
  assert_string_equal(ds("a(04:yyyy (seq)b", t), "ab");
  assert_string_equal(said, "unknown date indicator: yyyy (seq\n");
  assert_string_equal(ds("((04:yyyy))", t), "(2024)");
  char small[4];
  assert_int_equal(
      pqact_datesub("(04:yyyy)", t, small, sizeof small, NULL, NULL), -1);
}

static void test_seqsub(void **state) {
  (void)state;
  char out[64];
  assert_int_equal(pqact_seqsub("a_(seq)_(seq)(seq", 42, out, sizeof out), 0);
  assert_string_equal(out, "a_42_42(seq");
  assert_int_equal(pqact_seqsub("(seq)", 4294967295u, out, sizeof out), 0);
  assert_string_equal(out, "4294967295");
  assert_int_equal(pqact_seqsub("(SEQ)", 1, out, sizeof out), 0);
  assert_string_equal(out, "(SEQ)");
  assert_int_equal(pqact_seqsub("(seq)", 123456, out, 4), -1);
}

/* Split line; the words joined with '|'. */
static const char *words(const char *line) {
  static char buf[PQACT_ARG_MAX], out[PQACT_ARG_MAX];
  static char *argv[PQACT_MAX_ARGS];
  snprintf(buf, sizeof buf, "%s", line);
  int argc = pqact_split(buf, argv);
  assert_true(argc >= 0);
  out[0] = '\0';
  for (int i = 0; i < argc; i++) {
    assert_true(argv[i][0] != '\0'); /* no empty word */
    strcat(out, i ? "|" : "");
    strcat(out, argv[i]);
  }
  return out;
}

static void test_split(void **state) {
  (void)state;
  assert_string_equal(words("  -close\t data/a   b  "), "-close|data/a|b");
  assert_string_equal(words("sh -c \"a && b\" 'x y'"), "sh|-c|a && b|'x|y'");
  /* a quote separates words, opening or closing; empty words go */
  assert_string_equal(words("\"p\"q\"r s\""), "p|q|r s");
  assert_string_equal(words("x \"a b\"c"), "x|a b|c");
  assert_string_equal(words("a\"\"b \"\" c"), "a|b|c");
  assert_string_equal(words("\"unclosed  x"), "unclosed  x");
  assert_string_equal(words("\"\t tab\t\""), "\t tab\t");
  assert_string_equal(words(""), "");
  assert_string_equal(words(" \t \"\""), "");
  /* the most, and one more */
  char *argv[PQACT_MAX_ARGS];
  static char line[3 * PQACT_MAX_ARGS + 8];
  line[0] = '\0';
  for (int i = 0; i < PQACT_MAX_ARGS; i++)
    strcat(line, "w ");
  assert_int_equal(pqact_split(line, argv), PQACT_MAX_ARGS);
  line[0] = '\0';
  for (int i = 0; i <= PQACT_MAX_ARGS; i++)
    strcat(line, "w ");
  assert_int_equal(pqact_split(line, argv), -1);
}

/* All the steps on a product. */
static int subst(const char *ere, const char *tmpl, const pq_prod_info *info,
                 char *buf, char **argv) {
  regex_t re;
  regmatch_t m[PQACT_NMATCH];
  assert_int_equal(regcomp(&re, ere, REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, info->ident, PQACT_NMATCH, m, 0), 0);
  said[0] = '\0';
  int argc = pqact_substitute(tmpl, info, m, buf, argv, say, NULL);
  regfree(&re);
  return argc;
}

static void test_order(void **state) {
  (void)state;
  pq_prod_info info = {.seqno = 17};
  info.arrival.sec = utc(2023, 12, 31, 22, 10);
  char buf[PQACT_ARG_MAX];
  char *argv[PQACT_MAX_ARGS];
  snprintf(info.ident, sizeof info.ident, "SAUS43 KXYZ 010000");
  assert_int_equal(subst("^(....)(..) (....) (..)",
                         "-close data/%Y/\\3_"
                         "(\\4:yyyy)(\\4:mm)\\4_"
                         "(seq).txt",
                         &info, buf, argv),
                   2);
  assert_string_equal(argv[0], "-close");
  assert_string_equal(argv[1], "data/2023/KXYZ_20240101_17.txt");
  /* a '%' copied from the identifier goes through strftime, as in LDM */
  snprintf(info.ident, sizeof info.ident, "KMKX%%Y");
  assert_int_equal(subst("(.*)", "\\1", &info, buf, argv), 1);
  assert_string_equal(argv[0], "KMKX2023");
  /* so does a (DD:code) or a (seq) built from pieces of the identifier */
  snprintf(info.ident, sizeof info.ident, "(31:yyyy) seq");
  assert_int_equal(subst("^(.*) (.*)$", "\\1_(\\2)", &info, buf, argv), 1);
  assert_string_equal(argv[0], "2023_17");
  /* a sub-match holding blanks splits into words */
  snprintf(info.ident, sizeof info.ident, "500 hPa PRES");
  assert_int_equal(subst("(.*)", "-close \\1", &info, buf, argv), 4);
  assert_string_equal(argv[3], "PRES");
  /* a bad reference ends the substitution there, and the action goes on */
  assert_int_equal(subst("(.*)", "-close a\\(1 b", &info, buf, argv), 2);
  assert_string_equal(argv[1], "a");
  assert_string_equal(said, "invalid parenthetical backreference\n");
  char big[PQACT_ARG_MAX];
  memset(big, '&', 400); /* 400 x 12 bytes */
  big[400] = '\0';
  assert_int_equal(subst("(.*)", big, &info, buf, argv), -1);
  assert_string_equal(said, "arguments too long after substitution\n");
  /* (too many words cannot come out of 4095 bytes: the limit is LDM's
   * _POSIX_ARG_MAX / 2; pqact_split() alone is tested on it above) */
}

/* pqact_substitute() against its four steps chained by hand (the public
 * step functions), for templates and identifiers with and without what
 * steps 2 to 4 convert: the same words; a text with neither '%' nor '('
 * skips those steps (subst.c) and must come out as if it went through. */
static void test_chain(void **state) {
  (void)state;
  static const char *const cases[][3] = {
      /* ERE, identifier, template */
      {"^P([0-9]+) (K...)", "P000001 KXYZ 071200", "-close out/\\1.txt"},
      {"^(.*)$", "a\\b&c", "x\\\\y\\&z/\\1/&"},
      {"^(.*)$", "plain", "-close -log data/\\(1)_\\9_end"},
      {"^(.*)$", "KMKX%Y", "d/\\1"},
      {"^(.*)$", "x(seq)", "d/\\1"},
      {"^(.*)$", "(31:yyyy)", "d/\\1"},
      {"^(.*)$", "x", "%Y/(01:mm)/(seq)/\\1"},
      {"^(.*)$", "", "-close \\1 \"a b\""},
  };
  pq_prod_info info = {.seqno = 42};
  info.arrival.sec = utc(2024, 2, 29, 23, 59);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(info.ident, sizeof info.ident, "%s", cases[i][1]);
    char buf[PQACT_ARG_MAX], a[PQACT_ARG_MAX], b[PQACT_ARG_MAX];
    char *argv[PQACT_MAX_ARGS], *want[PQACT_MAX_ARGS];
    regex_t re;
    regmatch_t m[PQACT_NMATCH];
    assert_int_equal(regcomp(&re, cases[i][0], REG_EXTENDED), 0);
    assert_int_equal(regexec(&re, info.ident, PQACT_NMATCH, m, 0), 0);
    regfree(&re);
    assert_true(
        pqact_regsub(cases[i][2], info.ident, m, a, sizeof a, NULL, NULL) >= 0);
    assert_int_equal(pqact_strftime(a, info.arrival.sec, b, sizeof b), 0);
    assert_int_equal(
        pqact_datesub(b, info.arrival.sec, a, sizeof a, NULL, NULL), 0);
    assert_int_equal(pqact_seqsub(a, info.seqno, b, sizeof b), 0);
    int n = pqact_split(b, want);
    int argc = pqact_substitute(cases[i][2], &info, m, buf, argv, NULL, NULL);
    assert_int_equal(argc, n);
    for (int k = 0; k < n; k++)
      assert_string_equal(argv[k], want[k]);
  }
  /* a creation time gmtime_r() cannot take fails step 2 whatever the
   * template (as before steps 2 to 4 could be skipped) */
  info.arrival.sec = INT64_MAX;
  snprintf(info.ident, sizeof info.ident, "plain");
  char buf[PQACT_ARG_MAX];
  char *argv[PQACT_MAX_ARGS];
  assert_int_equal(subst("^(.*)$", "d/\\1", &info, buf, argv), -1);
  assert_string_equal(said, "arguments too long after substitution\n");
}

/* Does the last word of tmpl, substituted for ident (ERE "^(.*)$" and
 * the creation time 2023-12-31 22:10), hold a ".." the product made?
 * The words must come out as want (joined by '|'). */
static bool dotdot(const char *ident, const char *tmpl, const char *want) {
  pq_prod_info info = {.seqno = 7};
  info.arrival.sec = utc(2023, 12, 31, 22, 10);
  snprintf(info.ident, sizeof info.ident, "%s", ident);
  regex_t re;
  regmatch_t m[PQACT_NMATCH];
  char buf[PQACT_ARG_MAX], taint[PQACT_ARG_MAX], got[PQACT_ARG_MAX];
  char *argv[PQACT_MAX_ARGS];
  assert_int_equal(regcomp(&re, "^(.*)$", REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, info.ident, PQACT_NMATCH, m, 0), 0);
  regfree(&re);
  int argc =
      pqact_substitute_taint(tmpl, &info, m, buf, taint, argv, NULL, NULL);
  assert_true(argc > 0);
  got[0] = '\0';
  for (int i = 0; i < argc; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "|" : "",
             argv[i]);
  assert_string_equal(got, want);
  return pqact_product_dotdot(buf, taint, argv[argc - 1]);
}

static void test_product_dotdot(void **state) {
  (void)state;
  /* the product's ".." components, however they are made */
  assert_true(dotdot("../../tmp/x", "data/\\1", "data/../../tmp/x"));
  assert_true(dotdot("a/../../b", "data/\\1", "data/a/../../b"));
  assert_true(dotdot("..", "data/\\1", "data/.."));
  assert_true(dotdot("./x", "data/.\\1", "data/../x")); /* one dot each */
  assert_true(dotdot("/x", "data/..\\1", "data/../x")); /* the '/' after */
  assert_true(dotdot("a/", "data/\\1..", "data/a/..")); /* the '/' before */
  assert_true(dotdot("a ", "-close \\1../x", "-close|a|../x")); /* a blank */
  assert_true(dotdot("x \"../y", "\\1", "x|../y"));             /* a quote */
  assert_true(dotdot("%%/../a", "d/\\1", "d/%/../a")); /* through strftime */
  /* the operator's own ".." is kept, whatever the product adds */
  assert_false(dotdot("a/b", "../data/\\1", "../data/a/b"));
  assert_false(dotdot("x", "data/../\\1/..", "data/../x/.."));
  assert_false(dotdot("x", "%Y/../\\1", "2023/../x"));
  /* dots that are no ".." component */
  assert_false(dotdot("...", "data/\\1", "data/..."));
  assert_false(dotdot("a..b", "data/\\1", "data/a..b"));
  assert_false(dotdot("..x", "data/\\1", "data/..x"));
  assert_true(dotdot("..", "data/\\1/x_(seq)", "data/../x_7"));
  assert_false(dotdot("x", "data/(seq)/../\\1", "data/7/../x"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_regsub),
      cmocka_unit_test(test_strftime),
      cmocka_unit_test(test_datesub_vectors),
      cmocka_unit_test(test_datesub_month_ends),
      cmocka_unit_test(test_datesub_year_ends),
      cmocka_unit_test(test_datesub_codes),
      cmocka_unit_test(test_seqsub),
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_order),
      cmocka_unit_test(test_chain),
      cmocka_unit_test(test_product_dotdot),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
