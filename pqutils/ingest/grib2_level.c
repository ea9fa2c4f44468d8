/*
 * grib2_level.c - the level text of a GRIB2 field as LDM 6.15 makes it
 * (docs/noaaport.md, "GRIB edition 2", Level): the vertical coordinate
 * table chosen by the table versions, the centre and the surface types
 * (PDT values 9 and 12), its first row for those types, the unit ("Pa" at
 * scale -2 printed "hPa", an empty one "-"), and the values of the two
 * surfaces scaled and rounded as GEMPAK does, its quirks included.  A
 * failure is logged in GEMPAK's words.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"

/* "Couldn't compute" codes of GEMPAK's level routines */
enum { NO_ROW = -1, BAD_PDT = -27, NO_TABLE = -29 };

/* GRIB2's "missing" scaled value: -(2^31 - 1) in sign and magnitude. */
#define MISSING_VALUE (-2147483647LL)

/* The C int a double converts to on LDM's platform (INT_MIN out of range). */
static int to_int(double x) {
  if (!(x >= -2147483648.0 && x < 2147483648.0))
    return INT32_MIN;
  return (int)x;
}

static void table_name(const struct np__g2_field *f, const char *abbr,
                       int64_t l1, int64_t l2, char *out, size_t size) {
  int64_t v = f->msg->ids[2], lv = f->msg->ids[3];
  if (v != 255 && (lv == 0 || lv == 255) && (l1 < 192 || l1 == 255) &&
      (l2 < 192 || l2 == 255))
    snprintf(out, size, "g2vcrdwmo%d.tbl", (int)v);
  else
    snprintf(out, size, "g2vcrd%s%d.tbl", abbr, (int)lv);
}

static const struct np__g2_vcrd *row(const struct np__g2_vcrds *t, int64_t l1,
                                     int64_t l2) {
  for (size_t i = 0; i < t->n; i++)
    if (t->rows[i].id1 == l1 && t->rows[i].id2 == l2)
      return &t->rows[i];
  return NULL;
}

/* A surface's value: scaled value k times 10^-(scale factor k - 1). */
static float surface(int64_t scale, int64_t value) {
  double factor = scale == -127 ? 1.0 : pow(10.0, (double)-scale);
  return value == MISSING_VALUE ? 0.0f : (float)((double)value * factor);
}

/* The values of the two surfaces, r[1] == -1 if there is one. */
static void values(const struct np__g2_tmpl *t, int64_t l1, int64_t l2,
                   float r[2]) {
  int64_t v[5] = {0};
  for (size_t k = 10; k <= 14; k++)
    (void)np__g2_value(t, k, &v[k - 10]);
  r[0] = r[1] = -1.0f;
  if (l1 != 255)
    r[0] = surface(v[0], v[1]);
  if (l2 != 255) {
    if (v[4] == MISSING_VALUE)
      r[0] = -1.0f; /* GEMPAK's quirk: the first value, not the second */
    else
      r[1] = surface(v[3], v[4]);
  }
}

static int fail(const struct np_log *lg, int code) {
  np_log(lg, NP_ERROR, "[GB %d] Couldn't compute vertical co-ordinate values",
         code);
  return -1;
}

int np__g2_level(const struct np__g2_field *f, const char *abbr,
                 const struct np_log *lg, char *out, size_t size) {
  int64_t l1, l2, last;
  char tbl[64];
  if (np__g2_value(&f->pdt, 9, &l1) != 0 ||
      np__g2_value(&f->pdt, 12, &l2) != 0 ||
      np__g2_value(&f->pdt, 14, &last) != 0)
    return fail(lg, BAD_PDT); /* a template too short to have surfaces */
  table_name(f, abbr, l1, l2, tbl, sizeof tbl);
  const struct np__g2_vcrds *t = np__g2_vcrd_table(tbl);
  if (t == NULL) {
    np_log(lg, NP_ERROR, "[GB %d] %s", NO_TABLE, tbl);
    return fail(lg, NO_TABLE);
  }
  const struct np__g2_vcrd *r = row(t, l1, l2);
  if (r == NULL)
    return fail(lg, NO_ROW);
  if (f->pdt.num >= 20)
    return fail(lg, BAD_PDT);
  float lv[2];
  values(&f->pdt, l1, l2, lv);
  double scale = pow(10.0, r->scale);
  int a = to_int(rint(lv[0] * scale));
  int b = lv[1] == -1.0f ? -1 : to_int(rint(lv[1] * scale));
  if (l1 == 1) {
    a = 0;
    b = -1;
  }
  const char *unit = r->unit[0] == '\0'                             ? "-"
                     : strcmp(r->unit, "Pa") == 0 && r->scale == -2 ? "hPa"
                                                                    : r->unit;
  if (b == -1)
    snprintf(out, size, "%d %s %s", a, unit, r->abbrev);
  else
    snprintf(out, size, "%d-%d %s %s", a, b, unit, r->abbrev);
  return 0;
}
