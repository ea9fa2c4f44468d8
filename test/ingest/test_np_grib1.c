/*
 * test_np_grib1.c - the names of GRIB edition 1 messages
 * (pqutils/ingest/grib1_name.h): the observed cases of docs/noaaport.md,
 * section "GRIB edition 1" (the minute-0 rule, the shared decimal buffer,
 * the reanalysis table, time range 10, layers and sigma levels), every
 * time unit, the parameter tables and their once-per-process warnings, a
 * message too short for its PDS, and the GRIB1 products of LDM's vectors.
 * Times are computed in UTC (the forecast hours of the docs' examples are
 * LDM's with TZ=UTC).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/grib1_name.h"
#include "test/ingest/np_grib1_msg.h"
#include "test/ingest/np_logcap.h"
#include "test/ingest/np_vectors.h"

static char model[64], tag[256];

/* Name the message of these PDS fields (nm may be NULL). */
static const char *name(const struct npg_pds *p, struct np_namer *nm) {
  uint8_t m[NPG_LEN];
  npg_message(p, m);
  np_grib1_name(m, sizeof m, model, sizeof model, tag, sizeof tag, nm);
  return tag;
}

static void test_gfs(void **state) {
  (void)state;
  struct npg_pds p = npg_gfs();
  assert_string_equal(name(&p, NULL),
                      "grib/ncep/GFS/#003/202403151200/F024/TMP/500 mb/ ");
  assert_string_equal(model, "GFS");
  /* Processes named with their number. */
  p.process = 84;
  name(&p, NULL);
  assert_string_equal(model, "NAM_84");
  p.process = 113;
  name(&p, NULL);
  assert_string_equal(model, "SREF_113");
  p.process = 97; /* not in the table: decimal, no aliasing */
  assert_string_equal(name(&p, NULL),
                      "grib/ncep/97/#003/202403151200/F024/TMP/500 mb/ ");
}

static void test_centres_models(void **state) {
  (void)state;
  struct npg_pds p = npg_gfs();
  p.centre = 150;
  p.process = 33;
  p.param = 61;
  p.ltype = 1;
  p.p1 = 6;
  /* Both decimal: both show the model's number (one shared buffer). */
  assert_string_equal(name(&p, NULL),
                      "grib/33/33/#003/202403151200/F006/APCP/sfc/ ");
  assert_string_equal(model, "33");
  static const struct {
    int centre, process;
    const char *centre_name, *model;
  } cases[] = {
      {8, 5, "nwstg", "NWS_5"},    {9, 255, "nws", "NWS_255"},
      {98, 1, "ecmwf", "ECMWF_1"}, {74, 12, "ukmet", "UKM_12"},
      {59, 105, "fsl", "RUC2"},    {59, 86, "fsl", "FSL_86"},
      {54, 36, "cms", "GEM"},      {54, 35, "cms", "CMS_35"},
      {60, 0, "ncar", "NCAR_0"},   {58, 44, "noc", "44"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char want[128];
    p.centre = (uint8_t)cases[i].centre;
    p.process = (uint8_t)cases[i].process;
    snprintf(want, sizeof want, "grib/%s/%s/#003/202403151200/F006/APCP/sfc/ ",
             cases[i].centre_name, cases[i].model);
    assert_string_equal(name(&p, NULL), want);
    assert_string_equal(model, cases[i].model);
  }
}

/* The forecast hours the message of these fields gets: "F..." */
static const char *forecast(const struct npg_pds *p) {
  name(p, NULL);
  static char f[32];
  const char *at = strstr(tag, "/F");
  snprintf(f, sizeof f, "%.*s", (int)strcspn(at + 1, "/"), at + 1);
  return f;
}

static void test_forecast_hours(void **state) {
  (void)state;
  struct npg_pds p = npg_gfs();
  /* The verification time has minute 0; the reference keeps its own. */
  p.minute = 30;
  p.p1 = 6;
  assert_string_equal(forecast(&p), "F005");
  p.p1 = 0;
  assert_string_equal(forecast(&p), "F000"); /* -0.5 h, truncated */
  p.minute = 90;
  assert_string_equal(forecast(&p), "F-01");
  p = npg_gfs();
  /* Time range 10: P1 and P2 make one number; 2 to 5: P2 alone. */
  p.range = 10;
  p.p1 = 1;
  p.p2 = 4;
  assert_string_equal(forecast(&p), "F260");
  p.range = 4;
  assert_string_equal(forecast(&p), "F004");
  p.range = 6;
  assert_string_equal(forecast(&p), "F001");
}

static void test_time_units(void **state) {
  (void)state;
  static const struct {
    int unit, p1;
    const char *f;
  } cases[] = {
      {0, 90, "F001"}, {0, 59, "F000"},  {1, 24, "F024"},   {2, 2, "F048"},
      {4, 1, "F8760"}, {5, 1, "F87648"}, {6, 1, "F262968"}, {7, 1, "F876576"},
      {10, 3, "F009"}, {11, 3, "F018"},  {12, 3, "F036"},   {254, 255, "F000"},
      {9, 24, "F000"}, {13, 24, "F000"}, {255, 1, "F000"},
  };
  struct npg_pds p = npg_gfs();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    p.unit = (uint8_t)cases[i].unit;
    p.p1 = (uint8_t)cases[i].p1;
    assert_string_equal(forecast(&p), cases[i].f);
  }
  /* Seconds: P1 * 256 + P2 = 7200 with time range 10. */
  p.unit = 254;
  p.range = 10;
  p.p1 = 7200 / 256;
  p.p2 = 7200 % 256;
  assert_string_equal(forecast(&p), "F002");
  /* Months keep the day: January 31st + 1 month is "February 31st",
   * March 2nd in 2024. */
  p = npg_gfs();
  p.day = 31;
  p.month = 1;
  p.unit = 3;
  p.p1 = 1;
  assert_string_equal(forecast(&p), "F744");
  p.p1 = 13; /* over the year's end */
  p.month = 12;
  p.day = 15;
  assert_string_equal(forecast(&p), "F9504");
}

static void test_reference_year(void **state) {
  (void)state;
  struct npg_pds p = npg_gfs();
  /* Year of century 0: the century byte alone (2100), while the
   * verification time always uses (century - 1) * 100 + year. */
  p.year = 0;
  assert_string_equal(name(&p, NULL),
                      "grib/ncep/GFS/#003/210003151200/F-876552/TMP/500 mb/ ");
  /* Century 0: LDM takes one from the byte, which wraps to 255. */
  p.year = 24;
  p.century = 0;
  assert_string_equal(
      name(&p, NULL),
      "grib/ncep/GFS/#003/2552403151200/F-224404968/TMP/500 mb/ ");
}

static void test_levels(void **state) {
  (void)state;
  static const struct {
    int type, o11, o12;
    const char *text;
  } cases[] = {
      {100, 1, 244, "500 mb"},
      {101, 50, 85, "500-850 mb"},
      {107, 0x26, 0xAC, "sigma=0.9900"},
      {108, 50, 75, "sigma 0.50-0.75"},
      {105, 0, 10, "10 m above gnd"},
      {104, 1, 2, "100-200 m above msl"},
      {114, 175, 25, "300-450K"},
      {121, 100, 200, "1000-900 mb"},
      {110, 1, 2, "hybrid 1-2"},
      {1, 9, 9, "sfc"},
      {204, 0, 0, "0C isotherm"},
      {234, 0, 0, "high cld lay"},
      {102, 0, 0, "MSL"},
      {0, 1, 2, ""},
      {250, 1, 2, ""},
      {255, 255, 255, ""},
  };
  struct npg_pds p = npg_gfs();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    p.ltype = (uint8_t)cases[i].type;
    p.o11 = (uint8_t)cases[i].o11;
    p.o12 = (uint8_t)cases[i].o12;
    char want[128];
    snprintf(want, sizeof want, "grib/ncep/GFS/#003/202403151200/F024/TMP/%s/ ",
             cases[i].text);
    assert_string_equal(name(&p, NULL), want);
  }
}

/* The parameter name the message of these fields gets. */
static const char *param(const struct npg_pds *p, struct np_namer *nm) {
  name(p, nm);
  static char par[32];
  const char *at = strstr(tag, "/F") + 1;
  at = strchr(at, '/') + 1;
  snprintf(par, sizeof par, "%.*s", (int)strcspn(at, "/"), at);
  return par;
}

static void test_param_tables(void **state) {
  (void)state;
  struct np_logcap cap;
  struct np_log lg = npl_sink(&cap);
  struct np_namer nm = {&lg, 0};
  struct npg_pds p = npg_gfs();
  /* Centre 7, process 80, version 2, subcentre 0: reanalysis, warned
   * once per process. */
  p.process = 80;
  p.param = 200;
  assert_string_equal(param(&p, &nm), "SDTZ");
  assert_string_equal(param(&p, &nm), "SDTZ");
  assert_int_equal(cap.n, 1);
  assert_string_equal(cap.line[0], "WARN\tUsing NCEP reanalysis table, see "
                                   "-ncep_opn, -ncep_rean options");
  p.sub = 1; /* reanalysis, without a warning */
  assert_string_equal(param(&p, &nm), "SDTZ");
  p.sub = 2; /* operational */
  assert_string_equal(param(&p, &nm), "EVCW");
  p.sub = 0;
  p.version = 3;
  assert_string_equal(param(&p, &nm), "EVCW");
  p.version = 128; /* OMB */
  p.param = 2;
  assert_string_equal(param(&p, &nm), "GHz6");
  p.centre = 98; /* ECMWF 128 and 160 */
  p.param = 6;
  assert_string_equal(param(&p, &nm), "GP");
  p.version = 160;
  p.param = 253;
  assert_string_equal(param(&p, &nm), "v253");
  assert_int_equal(cap.n, 1);
  /* Any other table: operational, warned once if the version is above 3
   * or the parameter above 127. */
  p.version = 2;
  p.param = 11;
  assert_string_equal(param(&p, &nm), "TMP");
  assert_int_equal(cap.n, 1);
  p.version = 200;
  assert_string_equal(param(&p, &nm), "TMP");
  p.param = 255;
  assert_string_equal(param(&p, &nm), "var255");
  assert_int_equal(cap.n, 2);
  assert_string_equal(cap.line[1],
                      "WARN\tUndefined parameter table {center: 98, "
                      "subcenter: 0, table: 200}. Using NCEP-opn");
  /* Once per process: another namer state warns again. */
  struct np_namer other = {&lg, 0};
  param(&p, &other);
  assert_int_equal(cap.n, 3);
}

static void test_short_message(void **state) {
  (void)state;
  struct np_logcap cap;
  struct np_log lg = npl_sink(&cap);
  struct np_namer nm = {&lg, 0};
  uint8_t m[NPG_LEN];
  struct npg_pds p = npg_gfs();
  npg_message(&p, m);
  /* Bytes the message does not hold read as 0: centre 7 and process 96
   * are there, nothing after the grid. */
  np_grib1_name(m, 15, model, sizeof model, tag, sizeof tag, &nm);
  assert_string_equal(tag, "grib/ncep/GFS/#003/000000000000/F-876576/var0//"
                           " ");
  assert_int_equal(cap.n, 1);
  assert_string_equal(cap.line[0], "WARN\tGRIB1 message too short to name: "
                                   "15 bytes of 34, missing bytes read as 0");
  np_grib1_name(m, 4, model, sizeof model, tag, sizeof tag, &nm);
  assert_string_equal(tag, "grib/0/0/#000/000000000000/F-876576/var0// ");
  assert_string_equal(model, "0");
  np_grib1_name(m, 34, model, sizeof model, tag, sizeof tag, &nm);
  assert_int_equal(cap.n, 2);
  /* Output buffers are respected. */
  char small[10];
  np_grib1_name(m, sizeof m, small, 3, small + 3, 7, NULL);
  assert_string_equal(small, "GF");
  assert_string_equal(small + 3, "grib/n");
}

/* Every GRIB1 product of LDM's grib1 vectors: " /m<model> !<tag>" ends
 * the identifier LDM stored. */
static void test_vectors(void **state) {
  (void)state;
  size_t sn, tn;
  uint8_t *sbn = npv_read("grib1", ".sbn", &sn);
  char *tsv = (char *)npv_read("grib1", ".products.tsv", &tn);
  assert_non_null(sbn);
  assert_non_null(tsv);
  size_t pos = 0;
  struct npv_frame f;
  int named = 0;
  while (npv_next(sbn, sn, &pos, &f)) {
    char want[1024], got[512];
    assert_true(npv_ident(tsv, f.seqno, want, sizeof want));
    const uint8_t *g = memmem(f.data, f.len, "GRIB", 4);
    assert_non_null(g);
    np_grib1_name(g, f.len - (size_t)(g - f.data), model, sizeof model, tag,
                  sizeof tag, NULL);
    snprintf(got, sizeof got, " /m%s !%s", model, tag);
    size_t w = strlen(want), n = strlen(got);
    assert_true(w > n);
    assert_string_equal(want + w - n, got);
    named++;
  }
  assert_int_equal(named, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gfs),
      cmocka_unit_test(test_centres_models),
      cmocka_unit_test(test_forecast_hours),
      cmocka_unit_test(test_time_units),
      cmocka_unit_test(test_reference_year),
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_param_tables),
      cmocka_unit_test(test_short_message),
      cmocka_unit_test(test_vectors),
  };
  return cmocka_run_group_tests(tests, NULL, npv_teardown);
}
