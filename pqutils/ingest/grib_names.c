/*
 * grib_names.c - GRIB centre and model names as LDM 6.15 prints them
 * (grib_names.h): the rows of grib-centers.tsv and grib-models.tsv, read
 * once, and the first row that matches, in file order ("*" matches any
 * number).  A name the table gives as "<... in decimal>" is the number,
 * written into the caller's shared decimal buffer (docs/noaaport.md, "GRIB
 * edition 1", the shared-buffer quirk); "<process>" inside a name stands
 * for the process number ("NWS_<process>").
 */
#include "pqutils/ingest/grib_names.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/np_tables.h"

enum { ANY = -1 };

enum kind {
  K_CONST,   /* the text itself */
  K_PREFIX,  /* the text, then the process number */
  K_DECIMAL, /* the number, in the shared decimal buffer */
};

struct row {
  int centre, process; /* or ANY */
  enum kind kind;
  char text[20];
};

#define MAX_CENTRES 32
#define MAX_MODELS 160

static struct row centres[MAX_CENTRES], models[MAX_MODELS];
static int ncentres, nmodels;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int key(const struct np_field *f) {
  return f->n == 1 && f->s[0] == '*' ? ANY : (int)np_field_long(f, -2);
}

/* A name's text: "<... decimal>", "PREFIX_<process>" or a constant. */
static void parse_text(const struct np_field *f, struct row *r) {
  np_field_copy(f, r->text, sizeof r->text);
  char *at = strstr(r->text, "<process>");
  if (r->text[0] == '<') {
    r->kind = K_DECIMAL;
    r->text[0] = '\0';
  } else if (at != NULL) {
    r->kind = K_PREFIX;
    *at = '\0';
  } else {
    r->kind = K_CONST;
  }
}

static int load(const char *file, struct row *rows, int max, int nkeys) {
  struct np_tsv r;
  if (!np_tsv_find(&r, file))
    return 0;
  struct np_field f[3];
  int n = 0;
  while (n < max && np_tsv_row(&r, f, 3) == nkeys + 1) {
    rows[n].centre = key(&f[0]);
    rows[n].process = nkeys == 2 ? key(&f[1]) : ANY;
    parse_text(&f[nkeys], &rows[n]);
    n++;
  }
  return n;
}

static void load_all(void) {
  ncentres = load("grib-centers.tsv", centres, MAX_CENTRES, 1);
  nmodels = load("grib-models.tsv", models, MAX_MODELS, 2);
}

static const struct row *find(const struct row *rows, int n, int centre,
                              int process) {
  for (int i = 0; i < n; i++)
    if ((rows[i].centre == ANY || rows[i].centre == centre) &&
        (rows[i].process == ANY || rows[i].process == process))
      return &rows[i];
  return NULL;
}

/* The name a row gives for number v (the centre or the process). */
static const char *name(const struct row *r, unsigned v,
                        struct np_grib_names *nb) {
  if (r == NULL || r->kind == K_DECIMAL) {
    snprintf(nb->dec, sizeof nb->dec, "%u", v);
    return nb->dec;
  }
  if (r->kind == K_PREFIX) {
    snprintf(nb->model, sizeof nb->model, "%s%u", r->text, v);
    return nb->model;
  }
  return r->text;
}

const char *np_grib_centre_name(unsigned centre, struct np_grib_names *nb) {
  pthread_once(&once, load_all);
  centre &= 0xFF;
  return name(find(centres, ncentres, (int)centre, ANY), centre, nb);
}

const char *np_grib_model_name(unsigned centre, unsigned process,
                               struct np_grib_names *nb) {
  pthread_once(&once, load_all);
  centre &= 0xFF;
  process &= 0xFF;
  return name(find(models, nmodels, (int)centre, (int)process), process, nb);
}
