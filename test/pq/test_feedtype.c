/*
 * test_feedtype.c - LDM's feedtype names, expression parser and printer,
 * checked against LDM's table, grammar, error numbers and examples
 * (docs/protocol.md, "Feedtypes"), typed in here independently of
 * feedtype.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "pq/product.h"

typedef struct name_case {
  const char *name;
  uint32_t value;
} name_case;

/* Section 5.1, every printed name and every parse alias (ftN apart). */
static const name_case spec_names[] = {
    {"none", 0x00000000u},      {"pps", 0x00000001u},
    {"dds", 0x00000002u},       {"domestic", 0x00000002u},
    {"ddplus", 0x00000003u},    {"hds", 0x00000004u},
    {"hrs", 0x00000004u},       {"ids", 0x00000008u},
    {"intnl", 0x00000008u},     {"spare", 0x00000010u},
    {"nps", 0x00000010u},       {"wmo", 0x0000000fu},
    {"uniwisc", 0x00000020u},   {"mcidas", 0x00000020u},
    {"unidata", 0x0000002fu},   {"pcws", 0x00000040u},
    {"acars", 0x00000040u},     {"fsl2", 0x00000080u},
    {"profiler", 0x00000080u},  {"fsl3", 0x00000100u},
    {"fsl4", 0x00000200u},      {"fsl5", 0x00000400u},
    {"fsl", 0x000007c0u},       {"profs", 0x000007c0u},
    {"gpssrc", 0x00000800u},    {"afos", 0x00000800u},
    {"nmc1", 0x00000800u},      {"conduit", 0x00001000u},
    {"nmc2", 0x00001000u},      {"nceph", 0x00001000u},
    {"fnexrad", 0x00002000u},   {"nmc3", 0x00002000u},
    {"nmc", 0x00003800u},       {"lightning", 0x00004000u},
    {"nldn", 0x00004000u},      {"wsi", 0x00008000u},
    {"satellite", 0x00010000u}, {"difax", 0x00010000u},
    {"faa604", 0x00020000u},    {"faa", 0x00020000u},
    {"604", 0x00020000u},       {"gps", 0x00040000u},
    {"fnmoc", 0x00080000u},     {"nogaps", 0x00080000u},
    {"seismic", 0x00080000u},   {"gem", 0x00100000u},
    {"cmc", 0x00100000u},       {"nimage", 0x00200000u},
    {"image", 0x00200000u},     {"ntext", 0x00400000u},
    {"text", 0x00400000u},      {"ngrid", 0x00800000u},
    {"grid", 0x00800000u},      {"npoint", 0x01000000u},
    {"point", 0x01000000u},     {"nbufr", 0x01000000u},
    {"bufr", 0x01000000u},      {"ngraph", 0x02000000u},
    {"graph", 0x02000000u},     {"nother", 0x04000000u},
    {"other", 0x04000000u},     {"nport", 0x07c00000u},
    {"nexrad3", 0x08000000u},   {"nnexrad", 0x08000000u},
    {"nexrad", 0x08000000u},    {"nexrad2", 0x10000000u},
    {"nexrd2", 0x10000000u},    {"craft", 0x10000000u},
    {"nxrdsrc", 0x20000000u},   {"exp", 0x40000000u},
    {"any", 0xffffffffu},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int parse(const char *expr, uint32_t *out) {
  *out = 0xdeadbeefu;
  return pq_feedtype_parse(expr, out);
}

static void check_value(const char *expr, uint32_t want) {
  uint32_t got;
  int rc = parse(expr, &got);

  if (rc != PQ_FT_OK || got != want)
    print_error("\"%s\": rc %d, 0x%08x, want 0x%08x\n", expr, rc, (unsigned)got,
                (unsigned)want);
  assert_int_equal(rc, PQ_FT_OK);
  assert_int_equal(got, want);
}

static void check_error(const char *expr, int want) {
  uint32_t got;
  int rc = parse(expr, &got);

  if (rc != want)
    print_error("\"%s\": rc %d, want %d\n", expr, rc, want);
  assert_int_equal(rc, want);
  assert_int_equal(got, 0xdeadbeefu); /* untouched on error */
}

static void check_text(uint32_t ft, const char *want) {
  char buf[180];
  int n = pq_feedtype_format(ft, buf, sizeof buf);

  assert_string_equal(buf, want);
  assert_int_equal(n, (int)strlen(want));
}

static void test_spec_parse_examples(void **state) {
  (void)state;
  check_value("WMO|NEXRAD", 0x0800000Fu);
  check_value("ANY-NEXRAD", 0xF7FFFFFFu);
  check_value("ANY-EXP", 0xBFFFFFFFu);
  check_value("WMO - HRS", 0x0Bu);
  check_value("~WMO", 0xFFFFFFF0u);
  check_value("conduit+nexrad2", 0x10001000u);
  check_error("WMO|", PQ_FT_ESYNTAX);
  check_error("foo", PQ_FT_EUNKNOWN);
}

static void test_every_name_any_case(void **state) {
  size_t i, j;

  (void)state;
  for (i = 0; i < NELEM(spec_names); i++) {
    char upper[32], mixed[32];
    const char *name = spec_names[i].name;

    for (j = 0; name[j] != '\0'; j++) {
      upper[j] = (char)toupper((unsigned char)name[j]);
      mixed[j] = j % 2 ? upper[j] : name[j];
    }
    upper[j] = mixed[j] = '\0';
    check_value(name, spec_names[i].value);
    check_value(upper, spec_names[i].value);
    check_value(mixed, spec_names[i].value);
  }
}

static void test_ftN_names(void **state) {
  unsigned n;
  char name[8];

  (void)state;
  for (n = 0; n <= 30; n++) {
    snprintf(name, sizeof name, "ft%u", n);
    check_value(name, 1u << n);
    snprintf(name, sizeof name, "FT%u", n);
    check_value(name, 1u << n);
  }
  check_error("ft31", PQ_FT_EUNKNOWN); /* bit 31 has no name */
  check_error("ft012", PQ_FT_EUNKNOWN);
  check_error("ft", PQ_FT_EUNKNOWN);
}

static void test_header_constants(void **state) {
  (void)state;
  check_value("none", PQ_FT_NONE);
  check_value("pps", PQ_FT_PPS);
  check_value("dds", PQ_FT_DDS);
  check_value("ddplus", PQ_FT_DDPLUS);
  check_value("hds", PQ_FT_HDS);
  check_value("ids", PQ_FT_IDS);
  check_value("spare", PQ_FT_SPARE);
  check_value("wmo", PQ_FT_WMO);
  check_value("uniwisc", PQ_FT_UNIWISC);
  check_value("pcws", PQ_FT_PCWS);
  check_value("fsl2", PQ_FT_FSL2);
  check_value("conduit", PQ_FT_CONDUIT);
  check_value("lightning", PQ_FT_LIGHTNING);
  check_value("satellite", PQ_FT_SATELLITE);
  check_value("nimage", PQ_FT_NIMAGE);
  check_value("ntext", PQ_FT_NTEXT);
  check_value("ngrid", PQ_FT_NGRID);
  check_value("nother", PQ_FT_NOTHER);
  check_value("nexrad3", PQ_FT_NEXRAD3);
  check_value("nexrad2", PQ_FT_NEXRAD2);
  check_value("exp", PQ_FT_EXP);
  check_value("any", PQ_FT_ANY);
}

static void test_precedence_and_whitespace(void **state) {
  (void)state;
  /* '-' binds tighter than '|': WMO|(IDS-IDS), not (WMO|IDS)-IDS. */
  check_value("WMO|IDS-IDS", 0x0Fu);
  check_value("(WMO|IDS)-IDS", 0x07u);
  /* Both are left-associative. */
  check_value("ANY-WMO-EXP", 0xBFFFFFF0u);
  check_value("ANY-(WMO-IDS)", 0xFFFFFFF8u);
  check_value("PPS|DDS+HDS", 0x07u);
  /* '~' applies to one primary. */
  check_value("~WMO|IDS", 0xFFFFFFF8u);
  check_value("~(WMO|IDS)", 0xFFFFFFF0u);
  check_value("~~WMO", 0x0Fu);
  check_value("~ANY", 0u);
  check_value("((((wmo))))", 0x0Fu);
  check_value(" \t(WMO\n| NEXRAD ) - ( IDS ) ", 0x08000007u);
}

static void test_parse_errors(void **state) {
  char deep[256];
  uint32_t out = 0;
  size_t i;

  (void)state;
  check_error("(WMO", PQ_FT_EPAREN);
  check_error("((WMO)", PQ_FT_EPAREN);
  check_error("(WMO IDS)", PQ_FT_EPAREN);
  check_error("(WMO $", PQ_FT_EPAREN);

  check_error("", PQ_FT_ESYNTAX);
  check_error("   ", PQ_FT_ESYNTAX);
  check_error("|WMO", PQ_FT_ESYNTAX);
  check_error("WMO||IDS", PQ_FT_ESYNTAX);
  check_error("WMO-", PQ_FT_ESYNTAX);
  check_error("~", PQ_FT_ESYNTAX);
  check_error("()", PQ_FT_ESYNTAX);
  check_error("(", PQ_FT_ESYNTAX);
  check_error("$WMO", PQ_FT_ESYNTAX);
  check_error("WMO|)", PQ_FT_ESYNTAX);

  check_error("WMO)", PQ_FT_EGARBAGE);
  check_error("WMO IDS", PQ_FT_EGARBAGE);
  check_error("WMO $", PQ_FT_EGARBAGE);
  check_error("WMO_IDS", PQ_FT_EGARBAGE);
  check_error("(WMO)(IDS)", PQ_FT_EGARBAGE);

  check_error("3", PQ_FT_EUNKNOWN); /* bare numbers are not names */
  check_error("0x0f", PQ_FT_EUNKNOWN);
  check_error("nexrad4", PQ_FT_EUNKNOWN);
  check_error("WMO|foo", PQ_FT_EUNKNOWN);
  check_error("(foo", PQ_FT_EUNKNOWN); /* first error wins */
  check_error("foo)", PQ_FT_EUNKNOWN);

  assert_int_equal(pq_feedtype_parse(NULL, &out), PQ_FT_EOTHER);
  assert_int_equal(pq_feedtype_parse("WMO", NULL), PQ_FT_EOTHER);
  memset(deep, '(', 200);
  strcpy(deep + 200, "WMO");
  check_error(deep, PQ_FT_EOTHER);
  memset(deep, '~', 200);
  strcpy(deep + 200, "WMO");
  check_error(deep, PQ_FT_EOTHER);
  /* Reasonable nesting still parses: 63 '~' and a name are 64 levels. */
  memset(deep, '~', 63);
  strcpy(deep + 63, "WMO");
  check_value(deep, 0xFFFFFFF0u);
  for (i = 0; i < 30; i++)
    deep[i] = '(';
  strcpy(deep + 30, "WMO");
  for (i = 0; i < 30; i++)
    deep[33 + i] = ')';
  deep[63] = '\0';
  check_value(deep, 0x0Fu);
}

static void test_strerror(void **state) {
  int codes[] = {PQ_FT_OK,       PQ_FT_EPAREN,   PQ_FT_ESYNTAX,
                 PQ_FT_EGARBAGE, PQ_FT_EUNKNOWN, PQ_FT_EOTHER};
  size_t i, j;

  (void)state;
  assert_string_equal(pq_feedtype_strerror(PQ_FT_EPAREN),
                      "missing right parenthesis");
  assert_string_equal(pq_feedtype_strerror(PQ_FT_EUNKNOWN),
                      "unknown feedtype name");
  for (i = 0; i < NELEM(codes); i++) {
    const char *msg = pq_feedtype_strerror(codes[i]);

    assert_non_null(msg);
    assert_true(strlen(msg) > 0);
    for (j = 0; j < i; j++)
      assert_string_not_equal(msg, pq_feedtype_strerror(codes[j]));
  }
  assert_non_null(pq_feedtype_strerror(-1));
  assert_non_null(pq_feedtype_strerror(99));
  assert_string_not_equal(pq_feedtype_strerror(99),
                          pq_feedtype_strerror(PQ_FT_EOTHER));
}

static void test_spec_format_examples(void **state) {
  (void)state;
  check_text(0x0800000Fu, "NEXRAD3|WMO");
  check_text(0x0Bu, "IDS|DDPLUS");
  check_text(0x0Cu, "IDS|HDS");
  check_text(0x3u, "DDPLUS");
  check_text(0x10001000u, "NEXRAD2|CONDUIT");
  check_text(0xF7FFFFFFu,
             "EXP|NXRDSRC|NEXRAD2|NPORT|NIMAGE|GEM|FNMOC|GPS|FAA604|"
             "SATELLITE|WSI|LIGHTNING|NMC|FSL|UNIDATA|SPARE|0x80000000");
  check_text(0xFFFFFFFFu, "ANY");
  check_text(0u, "NONE");
}

static void test_format_more(void **state) {
  (void)state;
  check_text(0x80000000u, "0x80000000");
  check_text(0x80000008u, "IDS|0x80000000");
  check_text(0x2Fu, "UNIDATA");
  check_text(0x1Fu, "WMO|SPARE");
  check_text(0x7C0u, "FSL");
  check_text(0x3800u, "NMC");
  check_text(0x07C00000u, "NPORT");
  check_text(0x7FFFFFFFu, "EXP|NXRDSRC|NEXRAD2|NEXRAD3|NPORT|NIMAGE|GEM|"
                          "FNMOC|GPS|FAA604|SATELLITE|WSI|LIGHTNING|NMC|FSL|"
                          "UNIDATA|SPARE");
  /* The longest text there is: no group complete, bit 31 set. */
  check_text(0xFF7FF3FDu,
             "EXP|NXRDSRC|NEXRAD2|NEXRAD3|NOTHER|NGRAPH|NPOINT|NTEXT|"
             "NIMAGE|GEM|FNMOC|GPS|FAA604|SATELLITE|WSI|LIGHTNING|FNEXRAD|"
             "CONDUIT|FSL4|FSL3|FSL2|PCWS|UNIWISC|SPARE|IDS|HDS|PPS|"
             "0x80000000");
  assert_int_equal(pq_feedtype_format(0xFF7FF3FDu, NULL, 0), 179);
}

static void test_format_truncation(void **state) {
  char buf[8];

  (void)state;
  assert_int_equal(pq_feedtype_format(0x0800000Fu, NULL, 0), 11);
  memset(buf, 'x', sizeof buf);
  assert_int_equal(pq_feedtype_format(0x0800000Fu, buf, sizeof buf), 11);
  assert_string_equal(buf, "NEXRAD3");
  memset(buf, 'x', sizeof buf);
  assert_int_equal(pq_feedtype_format(0x80000008u, buf, 6), 14);
  assert_string_equal(buf, "IDS|0");
  memset(buf, 'x', sizeof buf);
  assert_int_equal(pq_feedtype_format(0u, buf, 1), 4);
  assert_string_equal(buf, "");
  memset(buf, 'x', sizeof buf);
  assert_int_equal(pq_feedtype_format(0xFFFFFFFFu, buf, 4), 3);
  assert_string_equal(buf, "ANY");
}

/* Printed text parses back to the same mask (bit 31 has no name). */
static void test_round_trip(void **state) {
  uint32_t x = 12345u, got;
  char buf[180];
  size_t i;
  int k;

  (void)state;
  for (i = 0; i < NELEM(spec_names); i++) {
    pq_feedtype_format(spec_names[i].value, buf, sizeof buf);
    check_value(buf, spec_names[i].value);
  }
  for (k = 0; k < 20000; k++) {
    x = x * 1664525u + 1013904223u; /* fixed LCG: deterministic */
    pq_feedtype_format(x & 0x7FFFFFFFu, buf, sizeof buf);
    assert_int_equal(parse(buf, &got), PQ_FT_OK);
    assert_int_equal(got, x & 0x7FFFFFFFu);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_parse_examples),
      cmocka_unit_test(test_every_name_any_case),
      cmocka_unit_test(test_ftN_names),
      cmocka_unit_test(test_header_constants),
      cmocka_unit_test(test_precedence_and_whitespace),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_strerror),
      cmocka_unit_test(test_spec_format_examples),
      cmocka_unit_test(test_format_more),
      cmocka_unit_test(test_format_truncation),
      cmocka_unit_test(test_round_trip),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
