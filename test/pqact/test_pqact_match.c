/*
 * test_pqact_match - the index of pqact's patterns (pqutils/pqact/match.c):
 * for sets of patterns, the entries it offers for an identifier always
 * include every entry whose ERE matches it (brute force: regexec of every
 * pattern), come in file order without repeats, and, where the pattern
 * says enough, leave the others out.  Identifiers are crafted (each
 * pattern's own prefixes, cut and changed) and random (from the patterns'
 * alphabet, so that they match often); patterns cover anchors,
 * alternation, groups and their quantifiers, bracket expressions (ranges,
 * negation, ']' first, classes), escapes, ".*", case and the empty
 * pattern.  What a pattern requires is also checked directly on chosen
 * patterns (pqact_ere_key).
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

#include "pqutils/pqact/match.h"

static const char *const patterns[] = {
    "^(SAUS43) (K...) ([0-3][0-9])([0-2][0-9])",
    "^SAUS4",
    "^SAUS43 KXYZ",
    "^SA",
    "^S",
    "^(SA|SP)....",
    "^SA|^SP",
    "SAUS",
    "",
    "^",
    "^$",
    "^_ELSE_$",
    ".*",
    "^.*x",
    "^a*b",
    "^ab*c",
    "^ab?c",
    "^ab+c",
    "^(ab)+c",
    "^(ab)*c",
    "^(ab)?c",
    "^(ab){2}c",
    "^a{2}",
    "^a{0,1}b",
    "^((a)(b))c",
    "^(a(b)?c)",
    "^[A-Z]",
    "^[A-C]x",
    "^[^A-Z]",
    "^[]a]",
    "^[^]a]",
    "^[a-]",
    "^[-a]",
    "^[[:alpha:]]",
    "^[[:digit:]]+",
    "^[A-Z]*x",
    "^[A-Z]?x",
    "^[A-Z]+x",
    "^\\.a",
    "^\\(a",
    "^a\\|b",
    "^\\^a",
    "^\\$",
    "^\\\\a",
    "^a\\.*b",
    "^abc$",
    "^ABC",
    "^abc",
    "^a|b",
    "^(a|b)c",
    "^(a)|(b)",
    "^x(y|z)",
    "^a.c",
    "^(a)",
    "^()a",
    "^a()b",
    "^a)",
    "^[.]a",
    "^[*]",
    "^a^b",
    "^a$b",
    "^ab{1,}c",
    "^a{1}b",
    "^\\w",
    "^a\\w",
    "^(a)\\1",
    "^(ab)(cd)+e",
    "^[ab][cd]",
    "^a[bc]",
    "^[[]a",
    "^[a-c-]",
    "^x*",
    "^NEXRAD3/",
    "^/p(N0R|N0V)",
    "^(LIGHTNING)",
    "^(SA|FX)...",
    "^(a|)b",
    "^(a*|b)",
    "^(a|b)*c",
    "^(a|b)+c",
    "^(.|b)",
    "^((a|b)|c)",
    "^((SA|SP))x",
    "^(a|b|c)",
    "^([ab]|c)d",
    "^(\\.|x)",
    "^(\\w|x)",
    "^(a{0}|b)",
    "^(a|[^a])",
    "^(a|b(c|d))",
    "^(a[|]b|c)",
    "^(a\\|b|c)",
    "^sao",
    "^SAO",
    /* A run of quantifiers: glibc reads "a+*" as "(a+)*", zero of it too. */
    "^a+*b",
    "^a+?b",
    "^(ab)+*c",
    "^(ab)+?c",
    "^[ab]+*c",
    "^(a|b)+*c",
};
#define NPAT (sizeof patterns / sizeof patterns[0])

/* The alphabet of random identifiers: the patterns' characters. */
static const char alphabet[] = "SAUPK43019 XYZ_ELSEabcdxyz.()|^$\\[]-*+?w/NRVF";

struct table {
  regex_t re[NPAT];
  struct pqact_match *m;
};

static void table_init(struct table *t) {
  bool always[NPAT] = {0};
  for (size_t i = 0; i < NPAT; i++) {
    int rc = regcomp(&t->re[i], patterns[i], REG_EXTENDED);
    if (rc != 0)
      fail_msg("pattern %zu \"%s\" does not compile", i, patterns[i]);
    always[i] = strcmp(patterns[i], "^_ELSE_$") == 0;
  }
  t->m = pqact_match_new(patterns, always, NPAT);
  assert_non_null(t->m);
}

static void table_free(struct table *t) {
  for (size_t i = 0; i < NPAT; i++)
    regfree(&t->re[i]);
  pqact_match_free(t->m);
}

/* The index's offer for ident must hold every entry that matches, in
 * file order; *offered counts what it offered. */
static void check_ident(const struct table *t, const char *ident,
                        size_t *offered) {
  bool in[NPAT] = {0};
  struct pqact_offer o;
  pqact_match_start(t->m, ident, &o);
  size_t e, prev = 0, n = 0;
  while (pqact_match_next(&o, &e)) {
    assert_true(e < NPAT);
    if (n > 0 && e <= prev)
      fail_msg("offers for \"%s\" out of order: %zu after %zu", ident, e, prev);
    in[e] = true;
    prev = e;
    n++;
  }
  for (size_t i = 0; i < NPAT; i++)
    if (regexec(&t->re[i], ident, 0, NULL, 0) == 0 && !in[i])
      fail_msg("\"%s\" matches entry %zu \"%s\", which was not offered", ident,
               i, patterns[i]);
  /* ^_ELSE_$ is offered for every identifier */
  for (size_t i = 0; i < NPAT; i++)
    if (strcmp(patterns[i], "^_ELSE_$") == 0 && !in[i])
      fail_msg("^_ELSE_$ not offered for \"%s\"", ident);
  *offered += n;
}

static void test_crafted(void **state) {
  (void)state;
  struct table t;
  table_init(&t);
  size_t offered = 0, idents = 0;
  static const char *const extra[] = {
      "",          "S",    "SA",          "SAUS43 KXYZ 011200",
      "SAUS44",    "SPXX", "a",           "ab",
      "abc",       "abbc", "ac",          "abababc",
      "aab",       "x",    "_BEGIN_",     "_ELSE_",
      "(a",        ".a",   "a|b",         "^a",
      "$",         "\\a",  "]",           "-",
      "b",         "zz",   "NEXRAD3/N0R", "/pN0RMKX",
      "LIGHTNING", "sao",  "SAO",         "abcd",
      "abcde",     "acd",  "[a",
  };
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++, idents++)
    check_ident(&t, extra[i], &offered);
  /* Each pattern's text, its prefixes, and each with one byte changed. */
  for (size_t i = 0; i < NPAT; i++) {
    const char *p = patterns[i][0] == '^' ? patterns[i] + 1 : patterns[i];
    char buf[300];
    for (size_t len = 0; len <= strlen(p); len++) {
      snprintf(buf, sizeof buf, "%.*s", (int)len, p);
      check_ident(&t, buf, &offered);
      idents++;
      for (size_t k = 0; k < len; k++) {
        char c = buf[k];
        for (const char *a = alphabet; *a != '\0'; a++) {
          buf[k] = *a;
          check_ident(&t, buf, &offered);
          idents++;
        }
        buf[k] = c;
      }
    }
  }
  /* The index must leave something out, or it is no index. */
  assert_true(offered < idents * NPAT / 2);
  table_free(&t);
}

static void test_random(void **state) {
  (void)state;
  struct table t;
  table_init(&t);
  srand(12345);
  size_t offered = 0;
  char buf[32];
  for (int r = 0; r < 200000; r++) {
    size_t len = (size_t)rand() % 12;
    for (size_t k = 0; k < len; k++)
      buf[k] = alphabet[(size_t)rand() % (sizeof alphabet - 1)];
    buf[len] = '\0';
    check_ident(&t, buf, &offered);
  }
  table_free(&t);
}

/* What chosen patterns require, exactly. */
static void expect_key(const char *ere, bool indexed, const char *prefix) {
  struct pqact_key k;
  pqact_ere_key(ere, &k);
  if (k.indexed != indexed || strcmp(k.prefix, prefix) != 0)
    fail_msg("\"%s\": indexed %d prefix \"%s\", not %d \"%s\"", ere, k.indexed,
             k.prefix, indexed, prefix);
}

static void test_keys(void **state) {
  (void)state;
  expect_key("^(SAUS43) (K...) ([0-3][0-9])", true, "SAUS43 K");
  expect_key("^(SA|SP)", true, ""); /* first bytes {S} */
  expect_key("^(SA|FX)...", true, "");
  expect_key("^(a|)b", false, "");
  expect_key("^(a*|b)", false, "");
  expect_key("^(a|b)*c", false, "");
  expect_key("^(.|b)", false, "");
  expect_key("^((a|b)|c)", false, "");
  expect_key("^x(y|z)", true, "x");
  expect_key("^SA|^SP", false, "");
  expect_key("SAUS", false, "");
  expect_key("", false, "");
  expect_key("^", false, "");
  expect_key("^ab*c", true, "a");
  expect_key("^ab?c", true, "a");
  expect_key("^ab+c", true, "ab");
  expect_key("^a{2}", false, "");
  expect_key("^(ab)+c", true, "ab");
  expect_key("^(ab)*c", false, "");
  expect_key("^((a)(b))c", true, "abc");
  expect_key("^(a(b)?c)", true, "a");
  expect_key("^\\.a", true, ".a");
  expect_key("^\\w", false, "");
  expect_key("^(a)\\1", true, "a");
  expect_key("^a.c", true, "a");
  expect_key("^abc$", true, "abc");
  expect_key("^[A-Z]", true, ""); /* a set, no prefix */
  expect_key("^[^A-Z]", true, "");
  expect_key("^[A-Z]*x", false, "");
  expect_key("^[[:alpha:]]", false, "");
  expect_key("^.", false, "");
  /* a run of quantifiers that allows zero: nothing required */
  expect_key("^a+*b", false, "");
  expect_key("^ab+?c", true, "a");
  expect_key("^(ab)+*c", false, "");
  expect_key("^(a|b)+*c", false, "");
  expect_key("^[ab]+?c", false, "");
  expect_key("^a++b", true, "a");
  struct pqact_key k;
  pqact_ere_key("^[A-C]x", &k);
  for (unsigned c = 0; c < 256; c++) {
    bool in = (k.first[c >> 3] >> (c & 7)) & 1;
    assert_int_equal(in, c >= 'A' && c <= 'C');
  }
  pqact_ere_key("^(SA|[x-z]b|\\.c)+d", &k);
  for (unsigned c = 0; c < 256; c++) {
    bool in = (k.first[c >> 3] >> (c & 7)) & 1;
    assert_int_equal(in, c == 'S' || (c >= 'x' && c <= 'z') || c == '.');
  }
  /* a long literal is cut, still a true requirement */
  char longp[80] = "^";
  memset(longp + 1, 'q', 60);
  expect_key(longp, true, "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq");
}

/* The empty table, and one where nothing can be indexed by prefix: the
 * prefix index alone offers every entry; with the Hyperscan database (when
 * this machine runs it) "a" is not offered for "", which it cannot match. */
static void test_small_tables(void **state) {
  (void)state;
  struct pqact_match *m = pqact_match_new(NULL, NULL, 0);
  assert_non_null(m);
  struct pqact_offer o;
  size_t e;
  pqact_match_start(m, "anything", &o);
  assert_false(pqact_match_next(&o, &e));
  pqact_match_free(m);
  const char *const pats[] = {"a", "", "^_ELSE_$"};
  const bool always[] = {false, false, true};
  m = pqact_match_build(pats, always, 3, PQACT_MATCH_NO_HS);
  assert_non_null(m);
  pqact_match_start(m, "", &o);
  for (size_t i = 0; i < 3; i++) {
    assert_true(pqact_match_next(&o, &e));
    assert_int_equal(e, i);
  }
  assert_false(pqact_match_next(&o, &e));
  pqact_match_free(m);
  if (pqact_hs_available()) {
    m = pqact_match_new(pats, always, 3);
    assert_non_null(m);
    struct pqact_match_stats st;
    pqact_match_stats(m, &st);
    assert_int_equal(st.hs, 1); /* "a"; "" matches empty: refused */
    pqact_match_start(m, "", &o);
    assert_true(pqact_match_next(&o, &e));
    assert_int_equal(e, 1);
    assert_true(pqact_match_next(&o, &e));
    assert_int_equal(e, 2);
    assert_false(pqact_match_next(&o, &e));
    pqact_match_start(m, "xay", &o);
    for (size_t i = 0; i < 3; i++) {
      assert_true(pqact_match_next(&o, &e));
      assert_int_equal(e, i);
    }
    assert_false(pqact_match_next(&o, &e));
    pqact_match_free(m);
  }
  pqact_match_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_keys),
      cmocka_unit_test(test_crafted),
      cmocka_unit_test(test_random),
      cmocka_unit_test(test_small_tables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
