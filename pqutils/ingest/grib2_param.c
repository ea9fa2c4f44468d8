/*
 * grib2_param.c - the parameter name of a GRIB2 field as LDM 6.15 makes
 * it (docs/noaaport.md, "GRIB edition 2", Parameter name): the table file
 * chosen by the master and local table versions and the centre, the row
 * found by glibc bsearch's probe order (with LDM's fallback to a row of
 * another PDTN), then the time range, probability and process suffixes,
 * cut to 12 characters without blanks; and the WARN and ERROR lines LDM
 * logs on the way, in its words.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"

/* The C int a float converts to on LDM's platform (x86-64: INT_MIN for a
 * value out of range or not a number). */
static int to_int(float x) {
  if (!(x >= -2147483648.0f && x < 2147483648.0f))
    return INT32_MIN;
  return (int)x;
}

static int64_t val(const struct np__g2_field *f, size_t k) {
  int64_t v = 0;
  (void)np__g2_value(&f->pdt, k, &v);
  return v;
}

/* Step 1: the table file's name. */
static void table_name(const struct np__g2_field *f, const char *abbr,
                       char *out, size_t size) {
  int64_t v = f->msg->ids[2], lv = f->msg->ids[3];
  int64_t d = f->msg->disc, c = val(f, 0), n = val(f, 1), t = f->pdt.num;
  int wmo = v != 255 && (d < 192 || d == 255) && (c < 192 || c == 255) &&
            (n < 192 || n == 255) && (t < 32768 || t == 65535) &&
            (lv == 0 || lv == 255);
  if (wmo)
    snprintf(out, size, "g2varswmo%d.tbl", (int)v);
  else
    snprintf(out, size, "g2vars%s%d.tbl", abbr, (int)lv);
}

static int same3(const int *a, const int *b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Step 2: glibc bsearch's probes; the exact row, else the last probed row
 * with the same discipline, category and number, else NULL. */
static const struct np__g2_var *probe(const struct np__g2_vars *tab,
                                      const int key[4]) {
  const struct np__g2_var *near = NULL;
  size_t lo = 0, hi = tab->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const struct np__g2_var *r = &tab->rows[mid];
    int cmp = 0;
    for (int i = 0; i < 4 && cmp == 0; i++)
      cmp = key[i] < r->key[i] ? -1 : key[i] > r->key[i];
    if (cmp == 0)
      return r;
    if (same3(key, r->key))
      near = r;
    if (cmp < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return near;
}

/* Step 3: the time range, in place of the first "--" or appended. */
static void time_range(char *s, size_t size, int accum) {
  char t[16];
  if (accum == NP__G2_IMISSD)
    snprintf(t, sizeof t, "XX");
  else if (accum >= 0 && accum < 10)
    snprintf(t, sizeof t, "%.2d", accum);
  else
    snprintf(t, sizeof t, "%d", accum);
  char *dash = strstr(s, "--");
  if (dash != NULL) {
    char rest[32];
    snprintf(rest, sizeof rest, "%s", dash + 2);
    snprintf(dash, size - (size_t)(dash - s), "%s%s", t, rest);
  } else if (accum > 0 && accum != NP__G2_IMISSD) {
    size_t len = strlen(s);
    snprintf(s + len, size - len, "%s", t);
  }
}

/* Append at most 12 - length characters of x (nothing from 12 on). */
static void append12(char *s, size_t size, const char *x) {
  size_t len = strlen(s);
  if (len < 12)
    snprintf(s + len, size - len, "%.*s", (int)(12 - len), x);
}

/* Step 4: PDT 5 and 9, the probability limits. */
static void probability(const struct np__g2_field *f, char *s, size_t size) {
  char x[40];
  int64_t type = val(f, 17);
  float lower = (float)((double)val(f, 19) * pow(10.0, (double)-val(f, 18)));
  float upper = (float)((double)val(f, 21) * pow(10.0, (double)-val(f, 20)));
  if (type == 0)
    snprintf(x, sizeof x, "%04dPB", to_int(lower));
  else if (type == 1)
    snprintf(x, sizeof x, "%04dPA", to_int(upper));
  else if (type == 2)
    snprintf(x, sizeof x, "%04d%04d", to_int(lower), to_int(upper));
  else
    return;
  append12(s, size, x);
}

/* Steps 3 to 6 on the row's GEMPAK name. */
static void finish(const struct np__g2_field *f, const char *gnam, int accum,
                   char out[16]) {
  char s[64];
  size_t n = 0;
  snprintf(s, sizeof s, "%s", gnam);
  time_range(s, sizeof s, accum);
  if (f->pdt.num == 5 || f->pdt.num == 9)
    probability(f, s, sizeof s);
  if (f->pdt.num == 0 && (val(f, 2) == 6 || val(f, 2) == 7))
    append12(s, sizeof s, val(f, 2) == 6 ? "FERR" : "AERR");
  for (size_t i = 0; i < 12 && s[i] != '\0'; i++)
    if (s[i] != ' ' && s[i] != '\t')
      out[n++] = s[i];
  out[n] = '\0';
}

int np__g2_param(const struct np__g2_field *f, const char *abbr, int accum,
                 const struct np_log *lg, char out[16]) {
  char tbl[64];
  int iv = (int)f->msg->ids[2], lv = (int)f->msg->ids[3];
  int key[4] = {(int)f->msg->disc, (int)val(f, 0), (int)val(f, 1),
                (int)f->pdt.num};
  table_name(f, abbr, tbl, sizeof tbl);
  const struct np__g2_vars *tab = np__g2_vars_table(tbl);
  const struct np__g2_var *r = NULL;
  if (tab == NULL) {
    np_log(lg, NP_ERROR, "Couldn't read GRIB2 parameter file \"%s\"", tbl);
    np_log(lg, NP_ERROR,
           "Couldn't get parameter table: iver=%d, disc=%d, cat=%d, id=%d, "
           "pdtn=%d, center=%s, lclver=%d",
           iv, key[0], key[1], key[2], key[3], abbr, lv);
  } else if ((r = probe(tab, key)) == NULL) {
    np_log(lg, NP_WARN,
           "Couldn't get parameter info: iver=%d, disc=%d, cat=%d, id=%d, "
           "pdtn=%d, center=%s, lclver=%d, file=%s",
           iv, key[0], key[1], key[2], key[3], abbr, lv, tbl);
  } else if (r->key[3] != key[3]) {
    np_log(lg, NP_WARN,
           "Using parameter with different PDTN: iver=%d, disc=%d, cat=%d, "
           "id=%d, desired pdtn=%d, used pdtn=%d, center=%s, lclver=%d, "
           "file=%s",
           iv, key[0], key[1], key[2], key[3], r->key[3], abbr, lv, tbl);
  }
  if (r == NULL) {
    np_log(lg, NP_ERROR, "[GB 1] Couldn't get parameter values");
    return -1;
  }
  finish(f, r->gnam, accum, out);
  return 0;
}
