/*
 * grib2_templates.c - the GRIB2 templates LDM 6.15's copy of g2clib knows
 * (docs/noaaport.md, "GRIB edition 2", Decoding): the octet width of each
 * entry of each grid definition (3.N), product definition (4.N) and data
 * representation (5.N) template, from the WMO template definitions, and
 * their extensions whose length depends on a value (time ranges, ensemble
 * members, spectral bands, radials, vertical levels).  A negative width
 * marks an entry that may be negative: its top bit is the sign and the
 * rest the magnitude.  Unpacking one gives its values in g2clib order,
 * and the octets it takes, or fails on a template not listed here or one
 * that runs past the message.
 */
#include <stdbool.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"

/* A run of entries repeated as many times as value `at` says (less one if
 * minus1: a statistical template's first time range is in the base). */
struct run {
  int8_t at; /* the value that counts the repeats, -1 for no run */
  int8_t minus1;
  int8_t w[6]; /* the widths repeated (ended by 0) */
};

struct map {
  uint16_t num;
  int8_t w[48]; /* the base widths (ended by 0) */
  struct run a, b;
};

#define NONE                                                                   \
  {                                                                            \
    -1, 0, {                                                                   \
      0                                                                        \
    }                                                                          \
  }
/* n time ranges after the first: statistical process, type of increment,
 * unit, length, unit, increment (4.8-4.14) */
#define RANGES(at)                                                             \
  {                                                                            \
    at, 1, {                                                                   \
      1, 1, 1, 4, 1, 4                                                         \
    }                                                                          \
  }
/* the ensemble members of a cluster, one octet each (4.3, 4.4, 4.13, 4.14) */
#define MEMBERS(at)                                                            \
  {                                                                            \
    at, 0, {                                                                   \
      1                                                                        \
    }                                                                          \
  }

/* Product definitions.  4.0: category, number, process, background,
 * generating process, cut-off hours and minutes, unit, forecast time, then
 * type, scale and value of the first and of the second fixed surface. */
#define HEAD 1, 1, 1, 1, 1, 2, 1, 1, 4, 1, -1, -4, 1, -1, -4
#define ENSEMBLE 1, 1, 1 /* type, perturbation number, members */
#define DERIVED 1, 1     /* derived forecast, members */
/* derived type, members, cluster number, high and low resolution
 * clusters, clusters, method */
#define CLUSTER 1, 1, 1, 1, 1, 1, 1
#define RECTANGLE -4, -4, 4, 4 /* north and south latitude, east, west */
#define CIRCLE -4, 4, 4        /* centre latitude and longitude, radius */
/* members in the cluster, then scale and value of the standard deviation
 * and of the distance */
#define SPREAD 1, -1, 4, -1, 4
/* forecast probability number, probabilities, type, then scale and value
 * of the lower and of the upper limit */
#define PROBABILITY 1, 1, 1, -1, -4, -1, -4
/* end of the overall interval (year ... second), time ranges, missing
 * values, then the first time range */
#define INTERVAL 2, 1, 1, 1, 1, 1, 1, 4, 1, 1, 1, 4, 1, 4

static const struct map pdts[] = {
    {0, {HEAD}, NONE, NONE},
    {1, {HEAD, ENSEMBLE}, NONE, NONE},
    {2, {HEAD, DERIVED}, NONE, NONE},
    {3, {HEAD, CLUSTER, RECTANGLE, SPREAD}, MEMBERS(26), NONE},
    {4, {HEAD, CLUSTER, CIRCLE, SPREAD}, MEMBERS(25), NONE},
    {5, {HEAD, PROBABILITY}, NONE, NONE},
    {6, {HEAD, 1}, NONE, NONE},
    {7, {HEAD}, NONE, NONE},
    {8, {HEAD, INTERVAL}, RANGES(21), NONE},
    {9, {HEAD, PROBABILITY, INTERVAL}, RANGES(28), NONE},
    {10, {HEAD, 1, INTERVAL}, RANGES(22), NONE},
    {11, {HEAD, ENSEMBLE, INTERVAL}, RANGES(24), NONE},
    {12, {HEAD, DERIVED, INTERVAL}, RANGES(23), NONE},
    {13, {HEAD, CLUSTER, RECTANGLE, SPREAD, INTERVAL}, RANGES(37), MEMBERS(26)},
    {14, {HEAD, CLUSTER, CIRCLE, SPREAD, INTERVAL}, RANGES(36), MEMBERS(25)},
    {15, {HEAD, 1, 1, 1}, NONE, NONE},
    /* radar: site lat, lon, elevation, id, operating mode, ... */
    {20,
     {1, 1, 1, 1, 1, -4, 4, 2, 4, 2, 1, 1, 1, 1, 1, 2, 1, 3, 2},
     NONE,
     NONE},
    /* satellite: 5 values, then per band (value 4): series, number, class,
     * scale and value of the wave number, as LDM's copy has them */
    {30, {1, 1, 1, 1, 1}, {4, 0, {2, 2, 1, 1, 4}}, NONE},
    {31, {1, 1, 1, 1, 1}, {4, 0, {2, 2, 1, 1, 4}}, NONE},
    {254, {1, 1, 4}, NONE, NONE}, /* character string */
    /* cross sections and Hovmoller diagrams */
    {1000, {1, 1, 1, 1, 1, 2, 1, 1, 4}, NONE, NONE},
    {1001, {1, 1, 1, 1, 1, 2, 1, 1, 4, 4, 1, 1, 1, 4, 1, 4}, NONE, NONE},
    {1002, {1, 1, 1, 1, 1, 2, 1, 1, 4, 1, 1, 1, 4, 4, 2}, NONE, NONE},
    {1100, {HEAD}, NONE, NONE},
    {1101, {HEAD, 4, 1, 1, 1, 4, 1, 4}, NONE, NONE},
};

/* Grid definitions.  The shape of the earth: shape, then scale and value of
 * the radius, of the major and of the minor axis. */
#define EARTH 1, 1, 4, 1, 4, 1, 4
/* 3.0: Ni, Nj, basic angle, subdivisions, La1, Lo1, resolution flags, La2,
 * Lo2, Di, Dj, scanning mode */
#define LATLON EARTH, 4, 4, 4, 4, -4, 4, 1, -4, 4, 4, 4, 1
#define ROTATION -4, 4, 4    /* south pole latitude, longitude, angle */
#define STRETCHING -4, 4, -4 /* pole latitude, longitude, factor */
/* Nx, Ny, La1, Lo1, resolution flags (then as each projection has it) */
#define PROJECTED EARTH, 4, 4, -4, 4, 1
/* spectral: J, K, M, representation type and mode */
#define SPECTRAL 4, 4, 4, 1, 1

static const struct map gdts[] = {
    {0, {LATLON}, NONE, NONE},
    {1, {LATLON, ROTATION}, NONE, NONE},
    {2, {LATLON, STRETCHING}, NONE, NONE},
    {3, {LATLON, ROTATION, STRETCHING}, NONE, NONE},
    /* Mercator: LaD, La2, Lo2, scanning mode, orientation, Di, Dj */
    {10, {PROJECTED, -4, -4, 4, 1, 4, 4, 4}, NONE, NONE},
    /* polar stereographic: LaD, LoV, Dx, Dy, projection centre, scanning */
    {20, {PROJECTED, -4, 4, 4, 4, 1, 1}, NONE, NONE},
    /* Lambert conformal and Albers: LaD, LoV, Dx, Dy, projection centre,
     * scanning, Latin 1 and 2, south pole latitude and longitude */
    {30, {PROJECTED, -4, 4, 4, 4, 1, 1, -4, -4, -4, 4}, NONE, NONE},
    {31, {PROJECTED, -4, 4, 4, 4, 1, 1, -4, -4, -4, 4}, NONE, NONE},
    /* Gaussian: as 3.0-3.3, with N in place of Dj */
    {40, {LATLON}, NONE, NONE},
    {41, {LATLON, ROTATION}, NONE, NONE},
    {42, {LATLON, STRETCHING}, NONE, NONE},
    {43, {LATLON, ROTATION, STRETCHING}, NONE, NONE},
    {50, {SPECTRAL}, NONE, NONE},
    {51, {SPECTRAL, ROTATION}, NONE, NONE},
    {52, {SPECTRAL, STRETCHING}, NONE, NONE},
    {53, {SPECTRAL, ROTATION, STRETCHING}, NONE, NONE},
    /* space view: Lap, Lop, flags, dx, dy, Xp, Yp, scanning, orientation,
     * Nr, Xo, Yo */
    {90, {PROJECTED, 4, 4, 4, 4, 1, 4, 4, 4, 4}, NONE, NONE},
    /* triangular grid on an icosahedron */
    {100, {1, 1, 2, 1, -4, 4, 4, 1, 1, 1, 4}, NONE, NONE},
    /* equatorial azimuthal equidistant: Dx, Dy, centre flag, scanning */
    {110, {PROJECTED, 4, 4, 1, 1}, NONE, NONE},
    /* azimuth-range: bins, radials (value 1), La1, Lo1, Dx, Dstart,
     * scanning; then azimuth and azimuthal width per radial */
    {120, {4, 4, -4, 4, 4, 4, 1}, {1, 0, {2, -2}}, NONE},
    {204, {LATLON}, NONE, NONE}, /* curvilinear orthogonal */
    /* cross section; then the vertical levels (value 19) */
    {1000, {EARTH, 4, 4, 4, -4, 4, 1, 4, 4, 1, 2, 1, 1, 2}, {19, 0, {4}}, NONE},
    /* Hovmoller diagram */
    {1100,
     {EARTH, 4, 4, 4, -4, 4, 1, -4, 4, 1, 4, 1, -4, 1, 1, -4, 2, 1, 1, 1, 1, 1},
     NONE,
     NONE},
    /* time section; then the vertical levels (value 15) */
    {1200,
     {4, 1, -4, 1, 1, -4, 2, 1, 1, 1, 1, 1, 2, 1, 1, 2},
     {15, 0, {4}},
     NONE},
    {32768, {LATLON}, NONE, NONE}, /* rotated latitude/longitude E-grid */
};

/* Data representations: data points' reference, binary and decimal scale,
 * bits, then as each packing has it. */
#define PACKING 4, -2, -2, 1
/* complex packing: type of original values, group splitting and missing
 * value management, primary and secondary missing values, groups, widths
 * and lengths */
#define COMPLEX PACKING, 1, 1, 1, 4, 4, 4, 1, 1, 4, 1, 4, 1

static const struct map drts[] = {
    {0, {PACKING, 1}, NONE, NONE},
    {2, {COMPLEX}, NONE, NONE},
    {3, {COMPLEX, 1, 1}, NONE, NONE},
    {40, {PACKING, 1, 1, 1}, NONE, NONE},
    {41, {PACKING, 1}, NONE, NONE},
    {50, {PACKING, 4}, NONE, NONE},
    {51, {PACKING, -4, 2, 2, 2, 4, 1}, NONE, NONE},
    {40000, {PACKING, 1, 1, 1}, NONE, NONE},
    {40010, {PACKING, 1}, NONE, NONE},
};

static const struct map *find(enum np__g2_kind kind, unsigned num) {
  const struct map *m = kind == NP__G2_GDT   ? gdts
                        : kind == NP__G2_PDT ? pdts
                                             : drts;
  size_t n = kind == NP__G2_GDT   ? sizeof gdts / sizeof gdts[0]
             : kind == NP__G2_PDT ? sizeof pdts / sizeof pdts[0]
                                  : sizeof drts / sizeof drts[0];
  for (size_t i = 0; i < n; i++)
    if (m[i].num == num)
      return &m[i];
  return NULL;
}

static size_t count(const int8_t *w, size_t max) {
  size_t n = 0;
  while (n < max && w[n] != 0)
    n++;
  return n;
}

static uint64_t octets(const int8_t *w, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += (uint64_t)(w[i] < 0 ? -w[i] : w[i]);
  return sum;
}

/* How many times a run repeats, from the base values. */
static uint64_t repeats(const struct run *r, const struct np__g2_tmpl *t) {
  if (r->at < 0)
    return 0;
  int64_t v = t->v[r->at];
  if (r->minus1)
    return v > 1 ? (uint64_t)(v - 1) : 0;
  return v > 0 ? (uint64_t)v : 0;
}

/* The width of entry k (k at least the base's length nb). */
static int width(const struct map *m, size_t nb, uint64_t na, size_t k) {
  uint64_t e = k - nb;
  size_t pa = count(m->a.w, sizeof m->a.w);
  if (e < na * pa)
    return m->a.w[e % pa];
  e -= na * pa;
  size_t pb = count(m->b.w, sizeof m->b.w);
  return pb > 0 ? m->b.w[e % pb] : 1;
}

/* One entry of w octets at p[*pos], within len: 0, or -1 past len. */
static int entry(const uint8_t *p, size_t len, size_t *pos, int w,
                 int64_t *out) {
  size_t n = (size_t)(w < 0 ? -w : w);
  if (*pos > len || len - *pos < n)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v = v << 8 | p[*pos + i];
  *pos += n;
  if (w < 0 && (v >> (8 * n - 1)) != 0)
    *out = -(int64_t)(v & ~((uint64_t)1 << (8 * n - 1)));
  else
    *out = (int64_t)v;
  return 0;
}

int np__g2_unpack(enum np__g2_kind kind, unsigned num, const uint8_t *p,
                  size_t off, size_t len, struct np__g2_tmpl *t,
                  uint64_t *bytes) {
  const struct map *m = find(kind, num);
  if (m == NULL)
    return -1;
  size_t nb = count(m->w, sizeof m->w), pos = off;
  t->num = num;
  for (size_t k = 0; k < nb; k++)
    if (entry(p, len, &pos, m->w[k], &t->v[k]) != 0)
      return -1;
  uint64_t na = repeats(&m->a, t), nbr = repeats(&m->b, t);
  size_t pa = count(m->a.w, sizeof m->a.w), pb = count(m->b.w, sizeof m->b.w);
  uint64_t ext = na * octets(m->a.w, pa) + nbr * octets(m->b.w, pb);
  if (ext > len - pos)
    return -1;
  t->len = nb + (size_t)(na * pa + nbr * pb);
  for (size_t k = nb; k < t->len && k < NP__G2_NVAL; k++)
    if (entry(p, len, &pos, width(m, nb, na, k), &t->v[k]) != 0)
      return -1;
  *bytes = octets(m->w, nb) + ext;
  return 0;
}

int np__g2_value(const struct np__g2_tmpl *t, size_t k, int64_t *out) {
  if (k >= t->len || k >= NP__G2_NVAL)
    return -1;
  *out = t->v[k];
  return 0;
}
