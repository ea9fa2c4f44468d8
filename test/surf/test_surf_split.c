/*
 * test_surf_split.c - cmocka tests of pqsurf's splitting of surface
 * bulletins (pqutils/surf/surf_split.h) on bulletins the tests make: each
 * kind of report (METAR, SPECI, SYNOP with and without section 0, SHIP,
 * SAO), the identifiers, sequence numbers, bodies and signatures LDM
 * gives them (pqutils/surf/pqsurf.1, "SPLITTING"), NIL reports, reports
 * over several lines, the BBB group, the edge cases LDM's rules have (a
 * short report ends the bulletin, a long one is cut, a missing date is
 * now), and malformed bulletins.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ldmd/site/log.h"
#include "pqutils/surf/surf_split.h"

#define MAX_OBS 16

struct obs {
  char ident[PQ_IDENT_MAX + 1];
  uint32_t seqno;
  size_t size;
  unsigned char body[SURF_OBS_MAX + 1];
  uint8_t sig[PQ_SIGLEN];
};

struct got {
  int n;
  struct obs o[MAX_OBS];
  int refuse_from; /* calls from this one on return non-zero (0: never) */
};

static int collect(const pq_prod_info *info, const void *body, void *arg) {
  struct got *g = arg;
  struct obs *o;

  assert_true(g->n < MAX_OBS);
  assert_true(info->size <= SURF_OBS_MAX);
  o = &g->o[g->n++];
  snprintf(o->ident, sizeof o->ident, "%s", info->ident);
  o->seqno = info->seqno;
  o->size = (size_t)info->size;
  memcpy(o->body, body, o->size);
  memcpy(o->sig, info->signature, PQ_SIGLEN);
  return g->refuse_from != 0 && g->n >= g->refuse_from ? 1 : 0;
}

/* 2026-12-07 18:34:00 UTC: the "now" of the tests. */
#define NOW ((time_t)1796668440)

/* Split text (a whole bulletin: SOH line, sequence line, heading...) as
 * a product with sequence number seqno; the result of surf_split(). */
static int split(const char *text, uint32_t seqno, struct got *g) {
  pq_prod_info info;

  memset(&info, 0, sizeof info);
  info.arrival = (pq_timestamp){1796668000, 0};
  info.feedtype = PQ_FT_IDS;
  info.seqno = seqno;
  snprintf(info.origin, sizeof info.origin, "test-origin");
  snprintf(info.ident, sizeof info.ident, "bulletin");
  info.size = strlen(text);
  memset(g, 0, sizeof *g);
  return surf_split(&info, text, NOW, collect, g);
}

/* The observation has this identifier, sequence number and body, and its
 * signature is the MD5 of the body. */
static void expect_obs(const struct obs *o, const char *ident, uint32_t seqno,
                       const char *body) {
  uint8_t sig[PQ_SIGLEN];

  assert_string_equal(o->ident, ident);
  assert_int_equal(o->seqno, seqno);
  assert_int_equal(o->size, strlen(body));
  assert_memory_equal(o->body, body, strlen(body));
  assert_int_equal(pq_md5(o->body, o->size, sig), 0);
  assert_memory_equal(o->sig, sig, PQ_SIGLEN);
}

#define START "\001\r\r\n123 \r\r\n"

static void metar_collective(void **state) {
  struct got g;
  (void)state;
  int n = split(START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n"
                      "KDEN 071153Z 00000KT 10SM CLR 05/M03 A3012=\r\r\n"
                      "KBOU 071150Z 27005KT 10SM FEW100 04/M04 A3010=\r\r\n"
                      "\003",
                123, &g);
  assert_int_equal(n, 2);
  assert_int_equal(g.n, 2);
  expect_obs(&g.o[0], "metar KDEN 071200", 123001,
             "METAR\r\r\nKDEN 071153Z 00000KT 10SM CLR 05/M03 A3012=\r\r\n");
  expect_obs(&g.o[1], "metar KBOU 071200", 123002,
             "METAR\r\r\nKBOU 071150Z 27005KT 10SM FEW100 04/M04 "
             "A3010=\r\r\n");
}

static void metar_nil_and_no_time(void **state) {
  struct got g;
  (void)state;
  /* NIL reports are skipped without using a sequence number; a report
   * without its time gets the heading's after its station. */
  int n = split(START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n"
                      "KXYZ NIL=\r\r\n"
                      "KABC AUTO 10SM CLR=\r\r\n"
                      "KDEF 071155Z 10SM=\r\r\n\003",
                7, &g);
  assert_int_equal(n, 2);
  expect_obs(&g.o[0], "metar KABC 071200", 7001,
             "METAR\r\r\nKABC 1200Z AUTO 10SM CLR=\r\r\n");
  expect_obs(&g.o[1], "metar KDEF 071200", 7002,
             "METAR\r\r\nKDEF 071155Z 10SM=\r\r\n");
}

static void metar_tagged_reports(void **state) {
  struct got g;
  (void)state;
  /* Each report behind its own METAR or SPECI tag, which names its type */
  int n = split(START "SAUS80 KWBC 071200\r\r\n"
                      "METAR KDEN 071153Z 10SM=\r\r\n"
                      "SPECI KDEN 071210Z 2SM BR=\r\r\n\003",
                1, &g);
  assert_int_equal(n, 2);
  expect_obs(&g.o[0], "metar KDEN 071200", 1001,
             "METAR\r\r\nKDEN 071153Z 10SM=\r\r\n");
  expect_obs(&g.o[1], "speci KDEN 071200", 1002,
             "SPECI\r\r\nKDEN 071210Z 2SM BR=\r\r\n");
}

static void metar_pil_line(void **state) {
  struct got g;
  (void)state;
  /* An AFOS PIL line (MTRDEN) makes the reports METARs at once: LDM then
   * reads the PIL line as the first report's station, up to its '='. */
  int n = split(START "SAUS80 KWBC 071200\r\r\nMTRDEN\r\r\n"
                      "METAR KDEN 071153Z 10SM=\r\r\n"
                      "SPECI KDEN 071210Z 2SM BR=\r\r\n\003",
                1, &g);
  assert_int_equal(n, 2);
  expect_obs(&g.o[0], "metar MTRDEN 071200", 1001,
             "METAR\r\r\nMTRDEN 1200Z METAR KDEN 071153Z 10SM=\r\r\n");
  expect_obs(&g.o[1], "speci KDEN 071200", 1002,
             "SPECI\r\r\nKDEN 071210Z 2SM BR=\r\r\n");
}

static void speci_bulletin(void **state) {
  struct got g;
  (void)state;
  int n = split(START "SPUS70 KWBC 071215\r\r\nSPECI\r\r\n"
                      "KDEN 071210Z 2SM BR=\r\r\n\003",
                42, &g);
  assert_int_equal(n, 1);
  expect_obs(&g.o[0], "speci KDEN 071215", 42001,
             "SPECI\r\r\nKDEN 071210Z 2SM BR=\r\r\n");
  /* without its SPECI line, nothing */
  n = split(START "SPUS70 KWBC 071215\r\r\nKDEN 071210Z 2SM BR=\r\r\n\003", 42,
            &g);
  assert_int_equal(n, 0);
  assert_int_equal(g.n, 0);
}

static void synop_aaxx(void **state) {
  struct got g;
  (void)state;
  /* The AAXX line's day and hour (minute 00) and wind indicator. */
  int n = split(START "SMUS01 KWBC 071215\r\r\nAAXX 07121\r\r\n"
                      "72201 32966 71504 10211 20172=\r\r\n"
                      "72202 32970 80000\r\r\n      10200 20150=\r\r\n"
                      "\003",
                5, &g);
  assert_int_equal(n, 2);
  expect_obs(&g.o[0], "aaxx 72201 071200", 5001,
             "AAXX 07121\r\r\n72201 32966 71504 10211 20172=\r\r\n");
  /* a report over two lines keeps them */
  expect_obs(&g.o[1], "aaxx 72202 071200", 5002,
             "AAXX 07121\r\r\n72202 32970 80000\r\r\n      10200 20150=\r\r\n");
}

static void synop_us_without_section0(void **state) {
  struct got g;
  (void)state;
  int n = split(START "SMUS02 KWBC 071800\r\r\n"
                      "72201 32966 71504=\r\r\n\003",
                9, &g);
  assert_int_equal(n, 1);
  expect_obs(&g.o[0], "aaxx 72201 071800", 9001,
             "AAXX 07184\r\r\n72201 32966 71504=\r\r\n");
}

static void synop_solidus_wind(void **state) {
  struct got g;
  (void)state;
  /* iw "/": LDM's unavailable value, -1 */
  int n = split(START "SMUS01 KWBC 071215\r\r\nAAXX 0712/\r\r\n"
                      "72201 32966=\r\r\n\003",
                5, &g);
  assert_int_equal(n, 1);
  expect_obs(&g.o[0], "aaxx 72201 071200", 5001,
             "AAXX 0712-1\r\r\n72201 32966=\r\r\n");
}

static void synop_unknown_section0(void **state) {
  struct got g;
  (void)state;
  assert_int_equal(split(START "SMUS01 KWBC 071215\r\r\nAAXY 07121\r\r\n"
                               "72201 32966=\r\r\n\003",
                         5, &g),
                   0);
  assert_int_equal(g.n, 0);
  assert_int_equal(split(START "SMUS01 KWBC 071215\r\r\nZZZZ 07121\r\r\n"
                               "72201 32966=\r\r\n\003",
                         5, &g),
                   0);
}

static void ship_bbxx(void **state) {
  struct got g;
  (void)state;
  /* Each ship's YYGG is its report's time (and stays for the next). */
  int n = split(START "SMVD01 KWBC 071200\r\r\nBBXX\r\r\n"
                      "WDB123 07121 99123 70456 41598=\r\r\n"
                      "KSHIP 07181 99100 70400=\r\r\n"
                      "ELWX5 NIL=\r\r\n\003",
                3, &g);
  assert_int_equal(n, 3);
  expect_obs(&g.o[0], "bbxx WDB123 071200", 3001,
             "BBXX\r\r\nWDB123 07121 99123 70456 41598=\r\r\n");
  expect_obs(&g.o[1], "bbxx KSHIP 071800", 3002,
             "BBXX\r\r\nKSHIP 07181 99100 70400=\r\r\n");
  /* "NIL" read as YYGG gives no day and no hour: now's day and hour
   * (07 18), and the minute 00 (LDM's set_dtime()) */
  expect_obs(&g.o[2], "bbxx ELWX5 071800", 3003, "BBXX\r\r\nELWX5 NIL=\r\r\n");
}

static void ship_call_sign_only(void **state) {
  struct got g;
  (void)state;
  /* A call sign is 7 characters at most.  A report of a call sign alone
   * is skipped, unless the call sign has all 7: LDM then reads past the
   * report's end for YYGG, gives the end back over its last byte (0xFE)
   * and makes the observation anyway, dated now. */
  int n = split(START "SMVD01 KWBC 071200\r\r\nBBXX\r\r\n"
                      "WDB123=\r\r\nWDB1234=\r\r\n"
                      "ABCDEFGHIJ 07121 99123=\r\r\n\003",
                3, &g);
  assert_int_equal(n, 2);
  expect_obs(&g.o[0], "bbxx WDB1234 071800", 3001,
             "BBXX\r\r\nWDB123\xfe=\r\r\n");
  expect_obs(&g.o[1], "bbxx ABCDEFG 071800", 3002,
             "BBXX\r\r\nABCDEFGHIJ 07121 99123=\r\r\n");
}

static void sao_reports(void **state) {
  struct got g;
  (void)state;
  int n = split(START "SAUS80 KWBC 071200\r\r\n"
                      "DEN SA 1150 CLR 15 045/05/M03/0000/012=\r\r\n"
                      "BOU SP 1155 -X M5 OVC 2R-=\r\r\n"
                      "XYZ NIL=\r\r\n"
                      "KGLD 071153Z 18010KT 10SM=\r\r\n"
                      "KHLC NIL=\r\r\n\003",
                11, &g);
  assert_int_equal(n, 3);
  expect_obs(&g.o[0], "sao SA DEN 071200", 11001,
             "DEN SA 1150 CLR 15 045/05/M03/0000/012=\r\r\n");
  expect_obs(&g.o[1], "sao SP BOU 071200", 11002,
             "BOU SP 1155 -X M5 OVC 2R-=\r\r\n");
  /* a report whose "type" is digits is a METAR; the bulletin's reports
   * are METARs from then on (KHLC NIL is skipped as a METAR) */
  expect_obs(&g.o[2], "metar KGLD 071200", 11003,
             "METAR\r\r\nKGLD 071153Z 18010KT 10SM=\r\r\n");
}

static void sao_us_afos_code(void **state) {
  struct got g;
  (void)state;
  /* SXUS: a 6-character AFOS code before the station is skipped */
  int n = split(START "SXUS40 KWBC 071200\r\r\nDENSAO DEN SA 1150 CLR=\r\r\n"
                      "\003",
                2, &g);
  assert_int_equal(n, 1);
  expect_obs(&g.o[0], "sao SA DEN 071200", 2001,
             "DENSAO DEN SA 1150 CLR=\r\r\n");
}

static void bbb_groups(void **state) {
  static const struct {
    const char *bbb;
    const char *key;
  } cases[] = {{" RRA", "metar KDEN 071200 RRA"},
               {" CCB", "metar KDEN 071200 CCB"},
               {" AAC", "metar KDEN 071200 AAC"},
               {" COR", "metar KDEN 071200 CCA"},
               {" RTD01", "metar KDEN 071200 RRB"},
               {" PAB", "metar KDEN 071200 PAB"},
               {"", "metar KDEN 071200"}};
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256];
    struct got g;

    snprintf(text, sizeof text,
             START "SAUS70 KWBC 071200%s\r\r\nMETAR\r\r\n"
                   "KDEN 071153Z 10SM=\r\r\n\003",
             cases[i].bbb);
    assert_int_equal(split(text, 1, &g), 1);
    assert_string_equal(g.o[0].ident, cases[i].key);
  }
}

static void duplicates_across_bulletins(void **state) {
  struct got a, b;
  (void)state;
  /* The same report in two bulletins (another centre, sequence number):
   * same identifier, body and signature; the queue keeps one. */
  assert_int_equal(split(START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n"
                               "KDEN 071153Z 10SM=\r\r\n\003",
                         100, &a),
                   1);
  assert_int_equal(split("\001\r\r\n456 \r\r\nSAUS44 KDEN 071200\r\r\n"
                         "METAR\r\r\nKBOU 071150Z 5SM=\r\r\n"
                         "KDEN 071153Z 10SM=\r\r\n\003",
                         200, &b),
                   2);
  assert_string_equal(a.o[0].ident, b.o[1].ident);
  assert_memory_equal(a.o[0].sig, b.o[1].sig, PQ_SIGLEN);
  assert_int_equal(a.o[0].seqno, 100001);
  assert_int_equal(b.o[1].seqno, 200002);
  assert_memory_not_equal(b.o[0].sig, b.o[1].sig, PQ_SIGLEN);
}

static void short_report_ends_bulletin(void **state) {
  struct got g;
  (void)state;
  /* "NIL=" has fewer than 5 bytes with its '=': LDM stops there */
  int n = split(START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n"
                      "KDEN 071153Z 10SM=\r\r\nNIL=\r\r\n"
                      "KBOU 071150Z 5SM=\r\r\n\003",
                1, &g);
  assert_int_equal(n, 1);
  assert_string_equal(g.o[0].ident, "metar KDEN 071200");
}

static void long_report_is_cut(void **state) {
  char text[1200];
  char body[SURF_OBS_MAX + 1];
  struct got g;
  size_t n;
  (void)state;
  n = (size_t)snprintf(text, sizeof text,
                       START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\nKDEN 071153Z");
  for (; n < 900; n++)
    text[n] = n % 7 == 0 ? ' ' : 'R';
  memcpy(text + n, "=\r\r\n\003", 6);
  assert_int_equal(split(text, 1, &g), 1);
  assert_int_equal(g.o[0].size, SURF_OBS_MAX);
  /* "METAR\r\r\n" then the report's first 511 - 8 - 4 bytes, "=\r\r\n" */
  memcpy(body, "METAR\r\r\n", 8);
  memcpy(body + 8, strstr(text, "KDEN"), SURF_OBS_MAX - 12);
  memcpy(body + SURF_OBS_MAX - 4, "=\r\r\n", 4);
  assert_memory_equal(g.o[0].body, body, SURF_OBS_MAX);
}

static void missing_date_is_now(void **state) {
  static const struct {
    const char *date;
    const char *key;
  } cases[] = {
      {"321215", "metar KDEN 071215"}, /* day 32: now's day */
      {"072415", "metar KDEN 071815"}, /* hour 24: now's hour */
      {"071275", "metar KDEN 071200"}, /* minute 75: 00 with the hour */
      {"992499", "metar KDEN 071834"}, /* all bad: now */
  };
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[256];
    struct got g;

    snprintf(text, sizeof text,
             START "SAUS70 KWBC %s\r\r\nMETAR\r\r\nKDEN 071153Z 10SM=\r\r\n"
                   "\003",
             cases[i].date);
    assert_int_equal(split(text, 1, &g), 1);
    assert_string_equal(g.o[0].ident, cases[i].key);
  }
}

static void seqno_wraps_as_ldm(void **state) {
  struct got g;
  (void)state;
  /* 4294968 * 1000 = 4294968000 = 2^32 + 704: LDM's 32-bit arithmetic */
  assert_int_equal(split(START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n"
                               "KDEN 071153Z 10SM=\r\r\n\003",
                         4294968u, &g),
                   1);
  assert_int_equal(g.o[0].seqno, 705);
}

static void refused_obs_not_counted(void **state) {
  struct got g;
  pq_prod_info info;
  const char *text = START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n"
                           "KDEN 071153Z 10SM=\r\r\nKBOU 071150Z 5SM=\r\r\n"
                           "KGLD 071153Z 2SM=\r\r\n\003";
  (void)state;
  memset(&info, 0, sizeof info);
  info.size = strlen(text);
  memset(&g, 0, sizeof g);
  g.refuse_from = 2; /* the second and third are refused (duplicates) */
  assert_int_equal(surf_split(&info, text, NOW, collect, &g), 1);
  assert_int_equal(g.n, 3);
}

static void not_surface_bulletins(void **state) {
  struct got g;
  (void)state;
  assert_int_equal(
      split(START "UAUS01 KWBC 071200\r\r\nTTAA 57121=\r\r\n\003", 1, &g), -1);
  assert_int_equal(
      split(START "FTUS80 KWBC 071200\r\r\nTAF KDEN=\r\r\n\003", 1, &g), -1);
  assert_int_equal(g.n, 0);
}

static void malformed_bulletins(void **state) {
  static const char *const bad[] = {
      "",
      "\001",
      START,
      START "SA",
      START "SAUS70 KWBC 0712",
      START "SAUS70 KWBC 071200",
      START "SAUS70 KWBC 071200\r\r\n",
      START "SAUS70 KWBC 071200\r\r\nMETAR",
      START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\n====",
      START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\nMETAR=\r\r\n",
      START "SAUS70 KWBC 071200\r\r\nMETAR\r\r\nMETAR       =",
      START "SMUS01 KWBC 071215\r\r\nA",
      START "SMUS01 KWBC 071215\r\r\nAAXX",
      START "SMVD01 KWBC 071200\r\r\nBBXX\r\r\nWDB12",
      START "SAUS70 KWBC 071200 P\377\377\r\r\nMETAR\r\r\nKDEN 1=\r\r\n",
      "\001\r\r\n\377\377\377\377\377\377\377\377\377\377\377\377\377\r\r\n",
  };
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct got g;
    int n = split(bad[i], 1, &g);

    assert_true(n >= -1 && n <= g.n);
    for (int k = 0; k < g.n; k++)
      assert_true(g.o[k].size >= 4 &&
                  memcmp(g.o[k].body + g.o[k].size - 4, "=\r\r\n", 4) == 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(metar_collective),
      cmocka_unit_test(metar_nil_and_no_time),
      cmocka_unit_test(metar_tagged_reports),
      cmocka_unit_test(metar_pil_line),
      cmocka_unit_test(speci_bulletin),
      cmocka_unit_test(synop_aaxx),
      cmocka_unit_test(synop_us_without_section0),
      cmocka_unit_test(synop_solidus_wind),
      cmocka_unit_test(synop_unknown_section0),
      cmocka_unit_test(ship_bbxx),
      cmocka_unit_test(ship_call_sign_only),
      cmocka_unit_test(sao_reports),
      cmocka_unit_test(sao_us_afos_code),
      cmocka_unit_test(bbb_groups),
      cmocka_unit_test(duplicates_across_bulletins),
      cmocka_unit_test(short_report_ends_bulletin),
      cmocka_unit_test(long_report_is_cut),
      cmocka_unit_test(missing_date_is_now),
      cmocka_unit_test(seqno_wraps_as_ldm),
      cmocka_unit_test(refused_obs_not_counted),
      cmocka_unit_test(not_surface_bulletins),
      cmocka_unit_test(malformed_bulletins),
  };
  ldm_log_init("test_surf_split");
  ldm_log_set_destination("-");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
