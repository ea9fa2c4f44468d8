/*
 * test_prodclass.c - product classes: building them (limits, bad and long
 * patterns, LDM's ".*" stripping), freeing them, and LDM's matching rule
 * (docs/protocol.md, "Product classes"): inclusive and reversed time
 * windows, the "everything" class, feedtype intersection and unanchored,
 * case-sensitive EREs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pq/product.h"

static pq_timestamp ts(int64_t sec, int32_t usec) {
  return (pq_timestamp){sec, usec};
}

static pq_prod_info product(pq_timestamp arrival, uint32_t feedtype,
                            const char *ident) {
  pq_prod_info info;

  memset(&info, 0, sizeof info);
  info.arrival = arrival;
  info.feedtype = feedtype;
  snprintf(info.ident, sizeof info.ident, "%s", ident);
  return info;
}

/* Does a product made of these fields match cls? */
static bool matches(const pq_class *cls, pq_timestamp t, uint32_t ft,
                    const char *ident) {
  pq_prod_info info = product(t, ft, ident);

  return pq_class_match(cls, &info);
}

static const pq_timestamp T0 = {1700000000, 500000};

static void test_init(void **state) {
  pq_class cls;

  (void)state;
  memset(&cls, 0xa5, sizeof cls);
  pq_class_init(&cls, ts(1, 2), ts(3, 4));
  assert_int_equal(cls.nspecs, 0);
  assert_int_equal(cls.from.sec, 1);
  assert_int_equal(cls.from.usec, 2);
  assert_int_equal(cls.to.sec, 3);
  assert_int_equal(cls.to.usec, 4);
  /* An empty class matches nothing, whatever the time. */
  assert_false(matches(&cls, ts(2, 0), PQ_FT_ANY, "x"));
  pq_class_free(&cls);
}

static void test_add_and_match(void **state) {
  pq_class cls;

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(pq_class_add(&cls, PQ_FT_WMO, "^SA", NULL, 0), 0);
  assert_int_equal(cls.nspecs, 1);
  assert_string_equal(cls.specs[0].pattern, "^SA");
  assert_int_equal(cls.specs[0].feedtype, PQ_FT_WMO);
  assert_false(cls.specs[0].match_all);

  assert_true(matches(&cls, T0, PQ_FT_IDS, "SAUS01 KWBC 010000"));
  assert_true(matches(&cls, T0, PQ_FT_IDS | PQ_FT_EXP, "SAUS01"));
  /* No shared feedtype bit. */
  assert_false(matches(&cls, T0, PQ_FT_EXP, "SAUS01"));
  assert_false(matches(&cls, T0, PQ_FT_NONE, "SAUS01"));
  /* Anchored pattern, and case-sensitive. */
  assert_false(matches(&cls, T0, PQ_FT_IDS, "xSAUS01"));
  assert_false(matches(&cls, T0, PQ_FT_IDS, "saus01"));
  pq_class_free(&cls);

  /* Unanchored search anywhere in the ident, full ERE syntax. */
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(
      pq_class_add(&cls, PQ_FT_ANY, "KWBC (0[0-9]|1[0-2])", NULL, 0), 0);
  assert_true(matches(&cls, T0, PQ_FT_IDS, "SAUS01 KWBC 120000"));
  assert_false(matches(&cls, T0, PQ_FT_IDS, "SAUS01 KWBC 130000"));
  assert_false(matches(&cls, T0, PQ_FT_IDS, "SAUS01 kwbc 120000"));
  pq_class_free(&cls);
}

static void test_any_spec_matches(void **state) {
  pq_class cls;

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(pq_class_add(&cls, PQ_FT_NEXRAD3, "N0Q", NULL, 0), 0);
  assert_int_equal(pq_class_add(&cls, PQ_FT_IDS, "^SA", NULL, 0), 0);
  assert_int_equal(cls.nspecs, 2);
  assert_true(matches(&cls, T0, PQ_FT_NEXRAD3, "SDUS54 KLZK /pN0QLZK"));
  assert_true(matches(&cls, T0, PQ_FT_IDS, "SAUS01"));
  /* Each spec pairs its own feedtype with its own pattern. */
  assert_false(matches(&cls, T0, PQ_FT_NEXRAD3, "SAUS01"));
  assert_false(matches(&cls, T0, PQ_FT_IDS, "SDUS54 KLZK /pN0QLZK"));
  pq_class_free(&cls);
}

/* A class of every product between first and second (in either order)
 * is the window 1000.000500 to 2000.000250, inclusive at both ends, to the
 * microsecond. */
static void check_window(pq_timestamp first, pq_timestamp second) {
  const struct {
    pq_timestamp t;
    bool in;
  } cases[] = {
      {{1000, 500}, true},  {{2000, 250}, true},  {{1500, 0}, true},
      {{1000, 499}, false}, {{2000, 251}, false}, {{999, 999999}, false},
      {PQ_TS_NONE, false},
  };
  pq_class cls;

  pq_class_init(&cls, first, second);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*", NULL, 0), 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pq_timestamp t = cases[i].t;

    if (matches(&cls, t, PQ_FT_EXP, "a") != cases[i].in)
      fail_msg("window %lld.%06d to %lld.%06d: %lld.%06d %s",
               (long long)first.sec, (int)first.usec, (long long)second.sec,
               (int)second.usec, (long long)t.sec, (int)t.usec,
               cases[i].in ? "not matched" : "matched");
  }
  pq_class_free(&cls);
}

static void test_time_window(void **state) {
  pq_class cls;
  pq_timestamp from = {1000, 500}, to = {2000, 250};

  (void)state;
  check_window(from, to);
  /* from > to: the window is [to, from]. */
  check_window(to, from);

  /* A one-instant window. */
  pq_class_init(&cls, from, from);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*", NULL, 0), 0);
  assert_true(matches(&cls, from, PQ_FT_EXP, "a"));
  assert_false(matches(&cls, ts(1000, 501), PQ_FT_EXP, "a"));
  pq_class_free(&cls);
}

static void test_all_class(void **state) {
  pq_class cls;
  /* Times outside TS_ZERO..TS_ENDT that 64-bit seconds allow. */
  pq_timestamp early = {-5, 0}, late = {0x80000000LL, 0};

  (void)state;
  assert_int_equal(
      pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_ANY, ".*", NULL, 0),
      0);
  assert_true(cls.specs[0].match_all);
  assert_true(matches(&cls, early, PQ_FT_EXP, "a"));
  assert_true(matches(&cls, late, PQ_FT_EXP, "a"));
  assert_true(matches(&cls, PQ_TS_NONE, PQ_FT_EXP, ""));
  /* Feedtypes still count: NONE shares no bit with ANY. */
  assert_false(matches(&cls, late, PQ_FT_NONE, "a"));
  pq_class_free(&cls);

  /* Any difference from the all class brings the window back. */
  assert_int_equal(
      pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_WMO, ".*", NULL, 0),
      0);
  assert_true(matches(&cls, T0, PQ_FT_IDS, "a"));
  assert_false(matches(&cls, late, PQ_FT_IDS, "a"));
  pq_class_free(&cls);
  assert_int_equal(
      pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_ANY, "a", NULL, 0),
      0);
  assert_false(matches(&cls, late, PQ_FT_IDS, "a"));
  pq_class_free(&cls);
  assert_int_equal(
      pq_class_simple(&cls, ts(0, 1), PQ_TS_ENDT, PQ_FT_ANY, ".*", NULL, 0), 0);
  assert_false(matches(&cls, late, PQ_FT_IDS, "a"));
  pq_class_free(&cls);
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*", NULL, 0), 0);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*", NULL, 0), 0);
  assert_false(matches(&cls, late, PQ_FT_IDS, "a"));
  assert_true(matches(&cls, T0, PQ_FT_IDS, "a"));
  pq_class_free(&cls);
}

static void test_dotstar_stripping(void **state) {
  pq_class cls;
  char err[128];

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  /* ".*" alone stays, and means "match everything". */
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*", NULL, 0), 0);
  assert_true(cls.specs[0].match_all);
  /* ".*.*" is stripped to ".*"; the stored pattern is kept as given. */
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*.*", NULL, 0), 0);
  assert_true(cls.specs[1].match_all);
  assert_string_equal(cls.specs[1].pattern, ".*.*");
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*ABC", NULL, 0), 0);
  assert_false(cls.specs[2].match_all);
  assert_string_equal(cls.specs[2].pattern, ".*ABC");
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".", NULL, 0), 0);
  assert_false(cls.specs[3].match_all);
  pq_class_free(&cls);

  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*.*ABC", NULL, 0), 0);
  assert_true(matches(&cls, T0, PQ_FT_EXP, "xxABCxx"));
  assert_false(matches(&cls, T0, PQ_FT_EXP, "xxABxx"));
  pq_class_free(&cls);

  /* Stripping shows: ".*+a" is a valid ERE, but "+a" is not. */
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  err[0] = '\0';
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".*+a", err, sizeof err),
                   PQ_CLASS_EPATTERN);
  assert_true(strlen(err) > 0);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, ".**", NULL, 0),
                   PQ_CLASS_EPATTERN);
  assert_int_equal(cls.nspecs, 0);
  pq_class_free(&cls);
}

static void test_bad_pattern(void **state) {
  pq_class cls;
  char err[128];
  const char *bad[] = {"(", "[", "a{2,1}", "\\", "*"};
  size_t i;

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(pq_class_add(&cls, PQ_FT_IDS, "^SA", NULL, 0), 0);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(err, 0, sizeof err);
    assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, bad[i], err, sizeof err),
                     PQ_CLASS_EPATTERN);
    assert_true(strlen(err) > 0);
    assert_int_equal(cls.nspecs, 1); /* unchanged */
    assert_string_equal(cls.specs[0].pattern, "^SA");
  }
  /* No error buffer, or a tiny one, is fine. */
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "(", NULL, 0),
                   PQ_CLASS_EPATTERN);
  err[0] = 'x';
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "(", err, 1),
                   PQ_CLASS_EPATTERN);
  assert_int_equal(err[0], '\0');
  /* The class still works. */
  assert_true(matches(&cls, T0, PQ_FT_IDS, "SAUS01"));
  pq_class_free(&cls);

  memset(err, 0, sizeof err);
  assert_int_equal(pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_ANY, "[",
                                   err, sizeof err),
                   PQ_CLASS_EPATTERN);
  assert_true(strlen(err) > 0);
  assert_int_equal(cls.nspecs, 0);
  pq_class_free(&cls);
}

static void test_spec_limit(void **state) {
  pq_class cls;
  char pat[16];
  unsigned i;

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  for (i = 0; i < PQ_CLASS_MAX; i++) {
    snprintf(pat, sizeof pat, "^P%u$", i);
    assert_int_equal(pq_class_add(&cls, 1u << (i % 31), pat, NULL, 0), 0);
  }
  assert_int_equal(cls.nspecs, 32);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "x", NULL, 0), PQ_CLASS_EFULL);
  /* Full wins over a bad pattern: nothing is compiled. */
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "(", NULL, 0), PQ_CLASS_EFULL);
  assert_int_equal(cls.nspecs, 32);
  /* The last spec (number 31, feedtype bit 0) is used. */
  assert_true(matches(&cls, T0, PQ_FT_PPS, "P31"));
  assert_false(matches(&cls, T0, PQ_FT_PPS, "P30"));
  assert_true(matches(&cls, T0, 1u << 30, "P30"));
  pq_class_free(&cls);
}

static void test_long_pattern(void **state) {
  pq_class cls;
  char pat[PQ_PATTERN_MAX + 2];
  char ident[PQ_IDENT_MAX + 1];

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  memset(pat, 'a', PQ_PATTERN_MAX);
  pat[PQ_PATTERN_MAX] = '\0';
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, pat, NULL, 0), 0);
  assert_string_equal(cls.specs[0].pattern, pat);
  memset(ident, 'a', PQ_IDENT_MAX);
  ident[PQ_IDENT_MAX] = '\0';
  assert_true(matches(&cls, T0, PQ_FT_EXP, ident));
  ident[100] = 'b';
  assert_false(matches(&cls, T0, PQ_FT_EXP, ident));

  pat[PQ_PATTERN_MAX] = 'a';
  pat[PQ_PATTERN_MAX + 1] = '\0';
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, pat, NULL, 0), PQ_CLASS_ELONG);
  /* Too long before stripping is too long. */
  pat[0] = '.';
  pat[1] = '*';
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, pat, NULL, 0), PQ_CLASS_ELONG);
  assert_int_equal(cls.nspecs, 1);
  pq_class_free(&cls);
}

static void test_unterminated_ident(void **state) {
  pq_class cls;
  pq_prod_info info = product(T0, PQ_FT_EXP, "");

  (void)state;
  memset(info.ident, 'A', sizeof info.ident); /* no NUL anywhere */
  assert_int_equal(
      pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_ANY, "A", NULL, 0),
      0);
  assert_false(pq_class_match(&cls, &info));
  pq_class_free(&cls);
}

static void test_class_free(void **state) {
  pq_class cls;

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "^A", NULL, 0), 0);
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "B$", NULL, 0), 0);
  pq_class_free(&cls);
  assert_int_equal(cls.nspecs, 0);
  pq_class_free(&cls); /* safe twice */
  assert_int_equal(cls.nspecs, 0);
  assert_false(matches(&cls, T0, PQ_FT_ANY, "A"));
  /* Reusable after free; ASan reports any leaked regex. */
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "C", NULL, 0), 0);
  assert_true(matches(&cls, T0, PQ_FT_ANY, "xCx"));
  pq_class_free(&cls);
}

static void test_simple(void **state) {
  pq_class cls;
  pq_timestamp from = {1700000000, 0};

  (void)state;
  memset(&cls, 0xa5, sizeof cls);
  assert_int_equal(
      pq_class_simple(&cls, from, PQ_TS_ENDT, PQ_FT_NEXRAD3, "N0Q", NULL, 0),
      0);
  assert_int_equal(cls.nspecs, 1);
  assert_int_equal(pq_ts_cmp(cls.from, from), 0);
  assert_int_equal(pq_ts_cmp(cls.to, PQ_TS_ENDT), 0);
  assert_int_equal(cls.specs[0].feedtype, PQ_FT_NEXRAD3);
  assert_string_equal(cls.specs[0].pattern, "N0Q");
  assert_true(matches(&cls, T0, PQ_FT_NEXRAD3, "SDUS54 /pN0QLZK"));
  assert_false(matches(&cls, ts(1699999999, 999999), PQ_FT_NEXRAD3, "N0Q"));
  pq_class_free(&cls);

  {
    char pat[PQ_PATTERN_MAX + 2];

    memset(pat, 'a', sizeof pat - 1);
    pat[sizeof pat - 1] = '\0';
    assert_int_equal(
        pq_class_simple(&cls, from, PQ_TS_ENDT, PQ_FT_ANY, pat, NULL, 0),
        PQ_CLASS_ELONG);
    assert_int_equal(cls.nspecs, 0);
  }
}

/* Back-references: "\1".."\9" outside a bracket expression, nothing else. */
static void test_backref(void **state) {
  static const char *const refs[][2] = {
      {"(.*)(.*)(.*)(.*)(.*)(.*)(.*)(.*)\\8\\7\\6\\5\\4\\3\\2\\1x", "\\8"},
      {"(a)\\1", "\\1"},
      {"\\9", "\\9"},
      {"\\\\\\1", "\\1"},        /* an escaped backslash, then \1 */
      {"[a]\\2", "\\2"},         /* after a bracket expression */
      {"[]]\\3", "\\3"},         /* "]" first is in the bracket */
      {"[^]]\\4", "\\4"},        /* likewise after "^" */
      {"[[:digit:]]\\5", "\\5"}, /* "]" of a class does not end it */
      {"[[.].]]\\6", "\\6"},     /* nor that of a collating element */
      {"\\w\\7", "\\7"},         /* after another escape */
      {"\\.\\1", "\\1"},
      {"(a|b)\\{\\1", "\\1"},
  };
  static const char *const none[] = {
      "\\\\1",     /* a backslash, then the digit 1 */
      "\\\\\\\\1", /* two backslashes, then 1 */
      "[\\1]",     /* in a bracket: backslash or 1 */
      "[^\\1]",
      "[]\\1]", /* "]" first, then backslash and 1 */
      "[[:alpha:]\\1]",
      "[[=a=]\\2]",
      "\\0",          /* the character 0 to glibc */
      "a{1,9}[0-9]1", /* digits, no backslash */
      "\\w1\\.2",     /* digits after other escapes */
      "^SDUS[0-9]{2} K(LZK|TLX) .*/pN0Q",
      "",
      "abc\\", /* a lone backslash at the end */
      "[\\",   /* an unterminated bracket */
  };
  size_t i;

  (void)state;
  for (i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    const char *at = pq_ere_backref(refs[i][0]);

    assert_non_null(at);
    assert_memory_equal(at, refs[i][1], 2);
  }
  for (i = 0; i < sizeof none / sizeof none[0]; i++)
    if (pq_ere_backref(none[i]) != NULL)
      fail_msg("\"%s\" has no back-reference", none[i]);
}

static void test_explosive_pattern(void **state) {
  pq_class cls;
  char err[128] = "";

  (void)state;
  pq_class_init(&cls, PQ_TS_ZERO, PQ_TS_ENDT);
  /* glibc would take seconds and gigabytes to compile these. */
  assert_false(pq_ere_tame("((a{255}){255}){255}"));
  assert_false(pq_ere_tame(".{1,30000}"));
  assert_false(pq_ere_tame("$.****************************************"));
  assert_true(pq_ere_tame("a*?"));
  /* Nor this, which fuzz_pqact found (8 s): empty alternatives of a group
   * repeated, of which four at most are taken, wherever they are. */
  assert_false(pq_ere_tame("^(SA|[x-z]bFFFFFFFFFFFFFFFFFFFFFF|||||||||||||X|||"
                           "FFFFFFFFF|||||||||||||X||||FF)+?+"));
  assert_false(pq_ere_tame("(|a)(|b)(|c)(|d)(|e)"));
  assert_false(pq_ere_tame("(a|)(b|)(c|)(d|)(e|)"));
  assert_false(pq_ere_tame("a||||||b"));
  assert_false(pq_ere_tame("a||||b||"));
  assert_true(pq_ere_tame("(|a)(b|)c||d|"));
  assert_true(pq_ere_tame("()()()()()()[|||||]\\|\\|\\|\\|\\|\\|"));
  assert_int_equal(
      pq_class_add(&cls, PQ_FT_ANY, "((a{255}){255}){255}", err, sizeof err),
      PQ_CLASS_EPATTERN);
  assert_non_null(strstr(err, "too complex"));
  assert_int_equal(cls.nspecs, 0);
  assert_true(pq_ere_tame("^SDUS[0-9]{2} K(LZK|TLX) .*/pN0Q"));
  assert_int_equal(pq_class_add(&cls, PQ_FT_ANY, "^SA.{1,20}KWBC", NULL, 0), 0);
  pq_class_free(&cls);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init),
      cmocka_unit_test(test_add_and_match),
      cmocka_unit_test(test_any_spec_matches),
      cmocka_unit_test(test_time_window),
      cmocka_unit_test(test_all_class),
      cmocka_unit_test(test_dotstar_stripping),
      cmocka_unit_test(test_bad_pattern),
      cmocka_unit_test(test_spec_limit),
      cmocka_unit_test(test_long_pattern),
      cmocka_unit_test(test_unterminated_ident),
      cmocka_unit_test(test_class_free),
      cmocka_unit_test(test_simple),
      cmocka_unit_test(test_explosive_pattern),
      cmocka_unit_test(test_backref),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
