/*
 * grib1_name.c - the name LDM 6.15 gives a GRIB edition 1 message: the
 * model for NAME's " /m" part and META's
 * "grib/<centre>/<model>/#<grid>/<YYYYMMDDhhmm>/F<fff>/<param>/<level>/ ",
 * read at fixed offsets of the product-definition section (PDS) and named
 * from the tables of tables/ (docs/noaaport.md, section "GRIB edition 1"):
 * the centre and model names with their shared decimal buffer, the
 * reference time, the forecast hour from the verification time (computed
 * in UTC), wgrib's parameter table choice with its once-per-process
 * warnings, and the level text.  The PDS is read within the n bytes given:
 * a message too short to hold it reads its missing bytes as 0 (docs
 * section "Hostile input").  wgrib's user table ($GRIBTAB, a file read at
 * run time) is not consulted.
 */
#include "pqutils/ingest/grib1_name.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib1_tables.h"

/* Bytes of the message LDM reads: "GRIB", 4 more, and the PDS to its
 * byte 25 (the subcentre). */
#define G1_NEED 34

/* The PDS fields used (docs/noaaport.md, section "GRIB edition 1"). */
struct pds {
  int version, centre, process, grid, param, ltype, o11, o12;
  int year, month, day, hour, minute, unit, p1, p2, range, century, sub;
};

static void read_pds(const uint8_t *g, size_t n, struct pds *p,
                     const struct np_log *lg) {
  uint8_t b[26];
  for (size_t i = 0; i < sizeof b; i++)
    b[i] = 8 + i < n ? g[8 + i] : 0;
  if (n < G1_NEED)
    np_log(lg, NP_WARN,
           "GRIB1 message too short to name: %zu bytes of %d, missing bytes "
           "read as 0",
           n, G1_NEED);
  p->version = b[3];
  p->centre = b[4];
  p->process = b[5];
  p->grid = b[6];
  p->param = b[8];
  p->ltype = b[9];
  p->o11 = b[10];
  p->o12 = b[11];
  p->year = b[12];
  p->month = b[13];
  p->day = b[14];
  p->hour = b[15];
  p->minute = b[16];
  p->unit = b[17];
  p->p1 = b[18];
  p->p2 = b[19];
  p->range = b[20];
  p->century = b[24];
  p->sub = b[25];
}

static long long floor_div(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Days from 1970-01-01 to the first of month m (1-12) of year y. */
static long long days_from_civil(long long y, int m) {
  y -= m <= 2;
  long long era = floor_div(y, 400);
  long long yoe = y - era * 400;
  long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5;
  long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Seconds since the epoch of a UTC time whose fields may lie out of their
 * ranges, normalised as timegm() normalises them (mon0: month - 1). */
static long long utc_seconds(long long year, long long mon0, long long mday,
                             long long hour, long long minute) {
  year += floor_div(mon0, 12);
  mon0 -= floor_div(mon0, 12) * 12;
  long long days = days_from_civil(year, (int)mon0 + 1) + mday - 1;
  return ((days * 24 + hour) * 60 + minute) * 60;
}

/* The verification time (docs/noaaport.md, section "GRIB edition 1"):
 * the reference date and hour, minute 0, plus the increment in its unit. */
static long long verification(const struct pds *p) {
  long long y = p->year + 100LL * (p->century - 1), m0 = p->month - 1;
  long long d = p->p1, hours = 0, days = 0;
  if (p->range == 10)
    d = p->p1 * 256LL + p->p2;
  if (p->range > 1 && p->range < 6)
    d = p->p2;
  if (d != 0) {
    switch (p->unit) {
    case 0:
      hours = d / 60;
      break;
    case 1:
      hours = d;
      break;
    case 2:
      days = d;
      break;
    case 3:
      y += (d + m0) / 12;
      m0 = (d + m0) % 12;
      break;
    case 4:
      y += d;
      break;
    case 5:
      y += 10 * d;
      break;
    case 6:
      y += 30 * d;
      break;
    case 7:
      y += 100 * d;
      break;
    case 10:
      hours = 3 * d;
      break;
    case 11:
      hours = 6 * d;
      break;
    case 12:
      hours = 12 * d;
      break;
    case 254:
      hours = d / 60 / 60;
      break;
    default:
      break;
    }
  }
  return utc_seconds(y, m0, p->day + days, p->hour + hours, 0);
}

/* The reference year: the century byte less one (as a byte) when the year
 * of the century is not 0. */
static int reference_year(const struct pds *p) {
  uint8_t c = (uint8_t)p->century;
  if (p->year > 0)
    c = (uint8_t)(c - 1);
  return c * 100 + p->year;
}

/* The forecast hour: whole hours from the reference time (its minute
 * kept) to the verification time, truncated toward zero. */
static long long forecast_hours(const struct pds *p) {
  long long ref =
      utc_seconds(reference_year(p), p->month - 1, p->day, p->hour, p->minute);
  return (verification(p) - ref) / 3600;
}

/* Give a once-per-process warning if it was not given yet. */
static bool first_time(struct np_namer *nm, unsigned bit) {
  if (nm == NULL)
    return false;
  bool first = (nm->once & bit) == 0;
  nm->once |= bit;
  return first;
}

/* wgrib's parameter table for the message, with its warnings. */
static enum np_g1_ptable param_table(const struct pds *p, struct np_namer *nm) {
  const struct np_log *lg = nm != NULL ? nm->log : NULL;
  if (p->centre == 7 && p->version <= 3) {
    if (p->sub == 1)
      return NP_G1_REANAL;
    if (p->sub != 0 || (p->process != 80 && p->process != 180) ||
        (p->version != 1 && p->version != 2))
      return NP_G1_OPN;
    if (first_time(nm, NP_ONCE_GRIB1_REANAL))
      np_log(lg, NP_WARN,
             "Using NCEP reanalysis table, see -ncep_opn, -ncep_rean options");
    return NP_G1_REANAL;
  }
  if (p->centre == 7 && p->version == 128)
    return NP_G1_OMB;
  if (p->centre == 98 && p->version == 128)
    return NP_G1_ECMWF128;
  if (p->centre == 98 && p->version == 160)
    return NP_G1_ECMWF160;
  if ((p->version > 3 || p->param > 127) && first_time(nm, NP_ONCE_GRIB1_UNDEF))
    np_log(lg, NP_WARN,
           "Undefined parameter table {center: %d, subcenter: %d, table: "
           "%d}. Using NCEP-opn",
           p->centre, p->sub, p->version);
  return NP_G1_OPN;
}

void np_grib1_name(const uint8_t *g, size_t n, char *model, size_t model_size,
                   char *tag, size_t tag_size, struct np_namer *nm) {
  struct pds p;
  read_pds(g, n, &p, nm != NULL ? nm->log : NULL);
  /* Every decimal fallback shares one buffer; the model is resolved last,
   * so a decimal centre shows the model's number when it is decimal too
   * (docs/noaaport.md, section "GRIB edition 1"). */
  char centre[32], mname[32], level[64];
  bool model_dec = np_g1_model(p.centre, p.process, mname, sizeof mname);
  if (np_g1_centre(p.centre, centre, sizeof centre) && model_dec)
    snprintf(centre, sizeof centre, "%s", mname);
  np_g1_level(p.ltype, p.o11, p.o12, level, sizeof level);
  const char *param = np_g1_param(param_table(&p, nm), p.param);
  snprintf(model, model_size, "%s", mname);
  snprintf(tag, tag_size,
           "grib/%s/%s/#%03d/%04d%02d%02d%02d%02d/F%03lld/%s/%s/ ", centre,
           mname, p.grid, reference_year(&p), p.month, p.day, p.hour, p.minute,
           forecast_hours(&p), param, level);
}
