/*
 * test_np_grib_names.c - GRIB centre and model names
 * (pqutils/ingest/grib_names.h): the rows of grib-centers.tsv and
 * grib-models.tsv as docs/noaaport.md, "GRIB edition 1", lists them, and
 * the shared decimal buffer: the name resolved last wins, in whichever
 * order the caller resolves them (GRIB1: centre then model; GRIB2: model
 * then centre).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/grib_names.h"

static void test_centres(void **state) {
  (void)state;
  static const struct {
    unsigned centre;
    const char *name;
  } cases[] = {{7, "ncep"},   {8, "nwstg"}, {9, "nws"},   {54, "cms"},
               {58, "noc"},   {59, "fsl"},  {60, "ncar"}, {74, "ukmet"},
               {98, "ecmwf"}, {150, "150"}, {0, "0"},     {7 + 256, "ncep"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct np_grib_names nb;
    assert_string_equal(np_grib_centre_name(cases[i].centre, &nb),
                        cases[i].name);
  }
}

static void test_models(void **state) {
  (void)state;
  static const struct {
    unsigned centre, process;
    const char *name;
  } cases[] = {
      {7, 96, "GFS"},     {7, 84, "NAM_84"},    {7, 113, "SREF_113"},
      {7, 2, "UVI"},      {7, 220, "NCEP_OPC"}, {7, 97, "97"},
      {8, 12, "NWS_12"},  {9, 0, "NWS_0"},      {98, 128, "ECMWF_128"},
      {74, 15, "UKM_15"}, {59, 105, "RUC2"},    {59, 106, "FSL_106"},
      {54, 36, "GEM"},    {54, 35, "CMS_35"},   {60, 255, "NCAR_255"},
      {150, 33, "33"},    {7, 96 + 256, "GFS"}, {7 + 256, 89, "NMM_89"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct np_grib_names nb;
    assert_string_equal(
        np_grib_model_name(cases[i].centre, cases[i].process, &nb),
        cases[i].name);
  }
}

/* docs/noaaport.md: GRIB1's centre 150 with process 33 gives "33/33"; GRIB2
 * (the model first) "200/200" for centre 200. */
static void test_shared_buffer(void **state) {
  (void)state;
  struct np_grib_names nb;
  const char *c = np_grib_centre_name(150, &nb);
  const char *m = np_grib_model_name(150, 33, &nb);
  assert_string_equal(c, "33");
  assert_string_equal(m, "33");
  m = np_grib_model_name(200, 96, &nb);
  c = np_grib_centre_name(200, &nb);
  assert_string_equal(c, "200");
  assert_string_equal(m, "200");
  /* a prefixed name is not in the shared buffer */
  m = np_grib_model_name(8, 96, &nb);
  c = np_grib_centre_name(150, &nb);
  assert_string_equal(m, "NWS_96");
  assert_string_equal(c, "150");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_centres),
      cmocka_unit_test(test_models),
      cmocka_unit_test(test_shared_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
