/*
 * grib2_tables.c - the GEMPAK tables LDM 6.15's GRIB2 namer reads, as it
 * installs and reads them (docs/noaaport.md, "GRIB edition 2", Table
 * files): the parameter tables g2vars{wmo,ncep,nssl}, the vertical
 * coordinate tables g2vcrd{wmo,ncep,nssl} and wmocenter, from the embedded
 * as-parsed copies (np_tables.h), which hold what LDM's own readers hold,
 * fixed-width quirks included.  LDM looks a table up by a versioned name;
 * `make install` links only some versions to each file, and any other name
 * is a table that cannot be read.  Parsed once (pthread_once), never
 * changed: the parameter rows sorted by (discipline, category, number,
 * PDTN), keeping file order among equal keys.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"
#include "pqutils/ingest/np_tables.h"

enum { WMO, NCEP, NSSL, NFILES };

static const char *const vars_files[NFILES] = {
    "g2varswmo.tsv", "g2varsncep.tsv", "g2varsnssl.tsv"};
static const char *const vcrd_files[NFILES] = {
    "g2vcrdwmo.tsv", "g2vcrdncep.tsv", "g2vcrdnssl.tsv"};

/* The names `make install` links, and the file each reaches. */
static const struct {
  const char *name;
  int file;
} vars_links[] =
    {
        {"g2varswmo0.tbl", WMO},   {"g2varswmo1.tbl", WMO},
        {"g2varswmo2.tbl", WMO},   {"g2varswmo3.tbl", WMO},
        {"g2varswmo6.tbl", WMO},   {"g2varsncep0.tbl", NCEP},
        {"g2varsncep1.tbl", NCEP}, {"g2varsnssl1.tbl", NSSL},
},
  vcrd_links[] = {
      {"g2vcrdwmo0.tbl", WMO},   {"g2vcrdwmo1.tbl", WMO},
      {"g2vcrdwmo2.tbl", WMO},   {"g2vcrdwmo3.tbl", WMO},
      {"g2vcrdwmo6.tbl", WMO},   {"g2vcrdwmo255.tbl", WMO},
      {"g2vcrdncep0.tbl", NCEP}, {"g2vcrdncep1.tbl", NCEP},
      {"g2vcrdnssl1.tbl", NSSL},
};

struct centre {
  int id;
  char abbr[16];
};

static struct np__g2_vars vars[NFILES];
static struct np__g2_vcrds vcrds[NFILES];
static const struct np__g2_vcrds *vcrd_ok[NFILES];
static struct centre *centres;
static size_t ncentres;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int cmp_var(const struct np__g2_var *a, const struct np__g2_var *b) {
  for (int i = 0; i < 4; i++)
    if (a->key[i] != b->key[i])
      return a->key[i] < b->key[i] ? -1 : 1;
  return 0;
}

/* Insertion sort: stable, and the tables come nearly sorted. */
static void sort_vars(struct np__g2_var *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    struct np__g2_var x = v[i];
    size_t j = i;
    for (; j > 0 && cmp_var(&v[j - 1], &x) > 0; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

static void load_vars(struct np__g2_vars *out, const char *file) {
  struct np_tsv r;
  if (!np_tsv_find(&r, file))
    return;
  struct np__g2_var *v = calloc(np_tsv_count(&r) + 1, sizeof *v);
  struct np_field f[9];
  size_t n = 0;
  if (v == NULL)
    return;
  while (np_tsv_row(&r, f, 9) > 0) {
    for (int i = 0; i < 4; i++)
      v[n].key[i] = (int)np_field_long(&f[i], -1);
    np_field_copy(&f[6], v[n].gnam, sizeof v[n].gnam);
    n++;
  }
  sort_vars(v, n);
  out->rows = v;
  out->n = n;
}

/* Copy s without blanks. */
static void strip_blanks(const struct np_field *f, char *out, size_t size) {
  size_t n = 0;
  for (size_t i = 0; i < f->n && n + 1 < size; i++)
    if (f->s[i] != ' ' && f->s[i] != '\t')
      out[n++] = f->s[i];
  out[n] = '\0';
}

/* A vertical coordinate table; NULL if any row is not 6 good fields. */
static const struct np__g2_vcrds *load_vcrd(struct np__g2_vcrds *out,
                                            const char *file) {
  struct np_tsv r;
  if (!np_tsv_find(&r, file))
    return NULL;
  struct np__g2_vcrd *v = calloc(np_tsv_count(&r) + 1, sizeof *v);
  struct np_field f[6];
  size_t n = 0;
  int nf;
  if (v == NULL)
    return NULL;
  while ((nf = np_tsv_row(&r, f, 6)) > 0) {
    long id1 = np_field_long(&f[0], -1), id2 = np_field_long(&f[1], -1);
    long scale = np_field_long(&f[5], 99999);
    if (nf != 6 || id1 < 0 || id2 < 0 || scale == 99999)
      break;
    v[n] = (struct np__g2_vcrd){
        .id1 = (int)id1, .id2 = (int)id2, .scale = (int)scale};
    strip_blanks(&f[3], v[n].unit, sizeof v[n].unit);
    np_field_copy(&f[4], v[n].abbrev, sizeof v[n].abbrev);
    n++;
  }
  out->rows = v;
  out->n = n;
  return nf == 0 ? out : NULL;
}

static void load_centres(void) {
  struct np_tsv r;
  if (!np_tsv_find(&r, "wmocenter.tsv") ||
      (centres = calloc(np_tsv_count(&r) + 1, sizeof *centres)) == NULL)
    return;
  struct np_field f[3];
  while (np_tsv_row(&r, f, 3) == 3) {
    struct centre *c = &centres[ncentres++];
    c->id = (int)np_field_long(&f[0], -1);
    strip_blanks(&f[2], c->abbr, sizeof c->abbr);
    for (char *s = c->abbr; *s != '\0'; s++)
      *s = (char)tolower((unsigned char)*s);
  }
}

static void load_all(void) {
  for (int i = 0; i < NFILES; i++) {
    load_vars(&vars[i], vars_files[i]);
    vcrd_ok[i] = load_vcrd(&vcrds[i], vcrd_files[i]);
  }
  load_centres();
}

const struct np__g2_vars *np__g2_vars_table(const char *tbl) {
  pthread_once(&once, load_all);
  for (size_t i = 0; i < sizeof vars_links / sizeof vars_links[0]; i++)
    if (strcmp(vars_links[i].name, tbl) == 0)
      return vars[vars_links[i].file].rows != NULL ? &vars[vars_links[i].file]
                                                   : NULL;
  return NULL;
}

const struct np__g2_vcrds *np__g2_vcrd_table(const char *tbl) {
  pthread_once(&once, load_all);
  for (size_t i = 0; i < sizeof vcrd_links / sizeof vcrd_links[0]; i++)
    if (strcmp(vcrd_links[i].name, tbl) == 0)
      return vcrd_ok[vcrd_links[i].file];
  return NULL;
}

const char *np__g2_centre_abbr(unsigned centre) {
  pthread_once(&once, load_all);
  for (size_t i = 0; i < ncentres; i++)
    if (centres[i].id == (int)centre)
      return centres[i].abbr;
  return NULL;
}
