/*
 * grib2_grid.c - the grid number in a GRIB2 name (docs/noaaport.md, "GRIB
 * edition 2", Grid and Grid matching): a grid definition matched against
 * grdnav.tbl as LDM 6.15 (GEMPAK) does it, in IEEE single precision where
 * it computes in float, rows in LDM's search order (the reverse of the
 * file's), the row a projection matched last tried first; and the grid
 * number grib2-wmo-grid-fallback.tsv gives a WMO heading.  The remembered
 * rows live in the caller's np__g2_navcache, one per message: nothing
 * carries over to the next product.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"
#include "pqutils/ingest/np_tables.h"

enum proj { CED, MER, STR, LCC, NPROJ };

struct nav {
  int gnum;
  int proj; /* enum proj, or -1 for another projection */
  float angle[3], llt, lln, ult, uln;
  int kx, ky;
};

static struct nav *navs; /* in search order */
static size_t nnavs;

struct fallback {
  char t1, a1;
  int grid;
};

static struct fallback *fallbacks;
static size_t nfallbacks;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static float field_float(const struct np_field *f) {
  char buf[32];
  np_field_copy(f, buf, sizeof buf);
  return strtof(buf, NULL);
}

static int proj_of(const struct np_field *f) {
  static const char *const names[NPROJ] = {"CED", "MER", "STR", "LCC"};
  for (int i = 0; i < NPROJ; i++)
    if (f->n == 3 && memcmp(f->s, names[i], 3) == 0)
      return i;
  return -1;
}

/* grdnav.tsv lists the rows in search order already. */
static void load_navs(void) {
  struct np_tsv r;
  if (!np_tsv_find(&r, "grdnav.tsv") ||
      (navs = calloc(np_tsv_count(&r) + 1, sizeof *navs)) == NULL)
    return;
  struct np_field f[13];
  while (np_tsv_row(&r, f, 13) == 13) {
    struct nav *q = &navs[nnavs++];
    q->gnum = (int)np_field_long(&f[2], 255);
    q->proj = proj_of(&f[3]);
    for (int i = 0; i < 3; i++)
      q->angle[i] = field_float(&f[4 + i]);
    q->llt = field_float(&f[7]);
    q->lln = field_float(&f[8]);
    q->ult = field_float(&f[9]);
    q->uln = field_float(&f[10]);
    q->kx = (int)np_field_long(&f[11], -1);
    q->ky = (int)np_field_long(&f[12], -1);
  }
}

static void load_fallbacks(void) {
  struct np_tsv r;
  if (!np_tsv_find(&r, "grib2-wmo-grid-fallback.tsv") ||
      (fallbacks = calloc(np_tsv_count(&r) + 1, sizeof *fallbacks)) == NULL)
    return;
  struct np_field f[3];
  while (np_tsv_row(&r, f, 3) == 3)
    if (f[0].n == 1 && f[1].n == 1)
      fallbacks[nfallbacks++] = (struct fallback){
          f[0].s[0], f[1].s[0], (int)np_field_long(&f[2], -1)};
}

static void load_all(void) {
  load_navs();
  load_fallbacks();
}

/* GEMPAK subtracts 360 while x > 180, in float.  Exact, so closed form,
 * below 2^27; above that LDM (nearly) never ends: no match here. */
static float norm(float x) {
  if (!(x > 180.0f))
    return x;
  if (!(x < 134217728.0f))
    return NAN;
  double k = ceil(((double)x - 180.0) / 360.0);
  return (float)((double)x - 360.0 * k);
}

static int near(float a, float b) {
  float d = a - b;
  return (d >= 0.0f ? d : -d) < 0.001;
}

/* What a grid definition is compared with: kx, ky, corners, angles. */
struct want {
  int proj, kx, ky;
  float llt, lln, ult, uln, a0, a1;
};

static int matches(const struct want *w, const struct nav *q) {
  if (q->proj != w->proj || q->kx != w->kx || q->ky != w->ky)
    return 0;
  if (w->proj == CED || w->proj == MER)
    return ((near(w->llt, q->llt) && near(w->ult, q->ult)) ||
            (near(w->ult, q->llt) && near(w->llt, q->ult))) &&
           near(w->lln, q->lln) && near(w->uln, q->uln);
  if (w->proj == STR && (w->a0 != q->angle[0] || w->a1 != q->angle[1]))
    return 0;
  return near(w->llt, q->llt) && near(w->lln, q->lln);
}

static int search(const struct want *w, struct np__g2_navcache *c) {
  int last = c->last[w->proj];
  if (last >= 0 && matches(w, &navs[last]))
    return navs[last].gnum;
  for (size_t i = 0; i < nnavs; i++)
    if (matches(w, &navs[i])) {
      c->last[w->proj] = (int)i;
      return navs[i].gnum;
    }
  return 255;
}

/* Corners of CED (lat/lon in units of basic angle / subdivisions) and MER
 * (millionths of a degree): float(value) / float(scale), as GEMPAK. */
static void corners(const int64_t *t, float s, int i1, int i2, struct want *w) {
  w->llt = (float)t[i1] / s;
  w->lln = norm((float)t[i1 + 1] / s);
  w->ult = (float)t[i2] / s;
  w->uln = norm((float)t[i2 + 1] / s);
}

/* STR and LCC divide in double, then store a float. */
static float micro(int64_t v) {
  return (float)((double)v / 1.0e6);
}

static int describe(const struct np__g2_tmpl *g, struct want *w) {
  static const struct {
    unsigned gdtn;
    int proj;
    size_t min;
  } kinds[] = {{0, CED, 18}, {10, MER, 19}, {20, STR, 18}, {30, LCC, 21}};
  const int64_t *t = g->v;
  size_t i = 0;
  while (i < 4 && kinds[i].gdtn != g->num)
    i++;
  if (i == 4 || g->len < kinds[i].min)
    return -1;
  w->proj = kinds[i].proj;
  w->kx = np__g2_int(t[7]);
  w->ky = np__g2_int(t[8]);
  if (w->proj == CED) {
    /* 10^6 * t9 / t10, in double; t10 = 0 makes it +inf, as in IEEE */
    float s = t[9] == 0 || t[9] == 1 ? 1.0e6f
              : t[10] == 0           ? INFINITY
                           : (float)(1.0e6 * (double)t[9] / (double)t[10]);
    corners(t, s, 11, 14, w);
  } else if (w->proj == MER) {
    corners(t, 1.0e6f, 9, 13, w);
  } else {
    w->llt = micro(t[9]);
    w->lln = norm(micro(t[10]));
    w->a0 = (t[16] & 64) != 0 ? -90.0f : 90.0f;
    w->a1 = norm(micro(t[13]));
  }
  return 0;
}

void np__g2_navcache_init(struct np__g2_navcache *c) {
  for (int i = 0; i < 4; i++)
    c->last[i] = -1;
}

int np__g2_grid_number(const struct np__g2_grid *g, struct np__g2_navcache *c) {
  struct want w;
  pthread_once(&once, load_all);
  if (describe(&g->gdt, &w) != 0)
    return 255;
  return search(&w, c);
}

int np__g2_wmo_grid(const char *heading) {
  pthread_once(&once, load_all);
  for (size_t i = 0; i < nfallbacks; i++)
    if (fallbacks[i].t1 == heading[0] && fallbacks[i].a1 == heading[2])
      return fallbacks[i].grid;
  return -1;
}
