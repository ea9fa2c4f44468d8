/*
 * grib2_time.c - the time part of a GRIB2 name and a field's accumulation
 * period, as LDM 6.15 (GEMPAK's routines) computes them (docs/noaaport.md,
 * "GRIB edition 2", Time): the reference time of section 1, the forecast
 * time in minutes (from PDT values 7 and 8, or from the end of the overall
 * interval for PDT 8-14), coded as flag*100000 + hours*100 + minutes and
 * printed as "YYYYMMDDhhmm" plus "F024" or "F00130".  GEMPAK computes in C
 * int; this code computes in 64 bits and keeps the low 32, as LDM's
 * platform does, so that no input is undefined behaviour here.
 */
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"

/* year, month, day, hour, minute */
struct when {
  int v[5];
};

/* Forecast time t in unit u, in minutes (0 for a unit not listed). */
static int minutes(int t, int u) {
  int64_t m;
  switch (u) {
  case 0:
    m = t;
    break;
  case 1:
    m = (int64_t)t * 60;
    break;
  case 2:
    m = (int64_t)t * 1440;
    break;
  case 10:
    m = (int64_t)t * 180;
    break;
  case 11:
    m = (int64_t)t * 360;
    break;
  case 12:
    m = (int64_t)t * 720;
    break;
  case 13:
    m = t / 60;
    break;
  default:
    m = 0;
  }
  return np__g2_int(m);
}

static int leap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in(int y, int m) {
  static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : d[m - 1];
}

static int valid(const struct when *w) {
  return w->v[0] >= 0 && w->v[1] >= 1 && w->v[1] <= 12 && w->v[2] >= 1 &&
         w->v[2] <= days_in(w->v[0], w->v[1]);
}

/* Days from year 0 to 1 January of year y (y >= 0). */
static int64_t year_days(int64_t y) {
  return 365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400;
}

static int64_t day_number(const struct when *w) {
  int64_t d = year_days(w->v[0]) + w->v[2] - 1;
  for (int m = 1; m < w->v[1]; m++)
    d += days_in(w->v[0], m);
  return d;
}

/* GEMPAK's ti_mdif: the minutes from b to a.  LDM reads uninitialised
 * memory for an invalid date (no such month or day); here that is 0. */
static int mdif(const struct when *a, const struct when *b) {
  if (!valid(a) || !valid(b))
    return 0;
  int64_t ma = day_number(a) * 1440 + (int64_t)a->v[3] * 60 + a->v[4];
  int64_t mb = day_number(b) * 1440 + (int64_t)b->v[3] * 60 + b->v[4];
  return np__g2_int(ma - mb);
}

/* GEMPAK's ti_addm: w plus m minutes; unchanged if m < 0 or w's date is
 * invalid.  Minutes and hours carry once, days roll over the calendar. */
static void addm(struct when *w, int m) {
  if (m < 0 || !valid(w))
    return;
  int y0 = w->v[0];
  int64_t days = m / 60 / 24;
  w->v[4] += m % 60;
  int hours = m / 60 % 24;
  if (w->v[4] > 59) {
    w->v[4] -= 60;
    hours++;
  }
  w->v[3] += hours;
  if (w->v[3] > 23) {
    w->v[3] -= 24;
    days++;
  }
  int64_t d = day_number(w) + days;
  int64_t y = d * 400 / 146097; /* 146097 days in 400 years: off by one */
  while (year_days(y + 1) <= d)
    y++;
  while (y > 0 && year_days(y) > d)
    y--;
  d -= year_days(y);
  int mo = 1;
  while (d >= days_in((int)y, mo))
    d -= days_in((int)y, mo++);
  w->v[0] = (int)(y0 < 100 ? y % 100 : y);
  w->v[1] = mo;
  w->v[2] = (int)d + 1;
}

/* The values 7 and 8 (unit, forecast time), as C ints. */
static int forecast(const struct np__g2_tmpl *t) {
  int64_t unit = 0, ft = 0;
  (void)np__g2_value(t, 7, &unit);
  (void)np__g2_value(t, 8, &ft);
  return minutes(np__g2_int(ft), np__g2_int(unit));
}

/* PDT 8-14: forecast minutes to the end of the overall interval, and the
 * accumulation in hours from reference + forecast time to that end. */
static int interval(const struct np__g2_field *f, const struct when *ref,
                    int *accum) {
  static const int at[7] = {15, 22, 16, 18, 17, 31, 30};
  struct when end, start = *ref;
  for (int i = 0; i < 5; i++) {
    int64_t v = 0;
    (void)np__g2_value(&f->pdt, (size_t)at[f->pdt.num - 8] + (size_t)i, &v);
    end.v[i] = np__g2_int(v);
  }
  int fc = mdif(&end, ref);
  addm(&start, forecast(&f->pdt));
  *accum = mdif(&end, &start) / 60;
  return fc;
}

/* GEMPAK's tg_itoc: "YYYYMMDD/hhmm" and the forecast code, cut to 20
 * characters; empty unless the code is positive. */
static void print(const struct when *ref, int code, char out[24]) {
  char s[48];
  int ymd = ref->v[0] * 10000 + ref->v[1] * 100 + ref->v[2];
  int hm = ref->v[3] * 100 + ref->v[4];
  out[0] = '\0';
  if (code <= 0)
    return;
  static const char letter[4] = {'A', 'F', 'G', 'I'};
  int type = code / 100000, r = code % 100000;
  char c = type < 4 ? letter[type] : 'N';
  if (code % 100 != 0)
    snprintf(s, sizeof s, "%08d/%04d%c%05d", ymd, hm, c, r);
  else
    snprintf(s, sizeof s, "%08d/%04d%c%03d", ymd, hm, c, r / 100);
  s[20] = '\0';
  size_t n = 0;
  for (const char *p = s; *p != '\0'; p++)
    if (*p != '/')
      out[n++] = *p;
  out[n] = '\0';
}

void np__g2_time(const struct np__g2_field *f, char out[24], int *accum) {
  struct when ref;
  int flag = 1, fc;
  for (int i = 0; i < 5; i++)
    ref.v[i] = (int)f->msg->ids[5 + i];
  *accum = NP__G2_IMISSD;
  if (f->pdt.num <= 7 || f->pdt.num == 15) {
    fc = forecast(&f->pdt);
  } else if (f->pdt.num <= 14) {
    fc = interval(f, &ref, accum);
  } else {
    fc = 0;
    flag = 0;
  }
  int64_t code = (int64_t)flag * 100000 + (int64_t)(fc / 60) * 100 + fc % 60;
  print(&ref, np__g2_int(code), out);
}
