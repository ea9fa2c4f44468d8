/*
 * grib2_internal.h - what the files of the GRIB edition 2 namer share
 * (docs/noaaport.md, "GRIB edition 2"); not part of libnoaaport's
 * interface.  grib2_name.c (np_grib2_name) puts a name together from:
 *
 *   grib2_templates.c  the octet layout of every template LDM's copy of
 *                      g2clib knows, and unpacking one "in g2clib order";
 *   grib2_decode.c     the sections of a message, checked against its
 *                      length, and its fields in the order, and with the
 *                      grid, LDM sees them;
 *   grib2_tables.c     the GEMPAK tables as LDM installs and reads them;
 *   grib2_time.c       the time string and the accumulation period;
 *   grib2_param.c      the parameter name of a field;
 *   grib2_level.c      the level text of a field;
 *   grib2_grid.c       the grid number (grdnav.tbl, the WMO heading).
 *
 * Everything here is a function of its arguments and of tables that never
 * change once read: no state lasts from one message to the next.
 */
#ifndef PQUTILS_INGEST_GRIB2_INTERNAL_H
#define PQUTILS_INGEST_GRIB2_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_log.h"

/* How many of a template's first values are kept: more than any name
 * needs (the highest value read is PDT 4.13's value 37). */
#define NP__G2_NVAL 64

/* A template's values "in g2clib order": value k is the k-th entry of the
 * template, extension included; a signed entry is sign and magnitude. */
struct np__g2_tmpl {
  unsigned num;           /* the template number */
  size_t len;             /* its number of values, extension included */
  int64_t v[NP__G2_NVAL]; /* the first min(len, NP__G2_NVAL) of them */
};

/** Value k of t into *out: 0, or -1 if the template has no value k. */
int np__g2_value(const struct np__g2_tmpl *t, size_t k, int64_t *out);

enum np__g2_kind { NP__G2_GDT = 3, NP__G2_PDT = 4, NP__G2_DRT = 5 };

/**
 * Unpack template num of a kind (section 3, 4 or 5) starting at p[off],
 * within the first len bytes of the message.
 * @param[out] bytes  the octets the template takes, extension included
 * @return 0, or -1 if LDM's copy of g2clib does not know the template or
 *         it runs past len
 */
int np__g2_unpack(enum np__g2_kind kind, unsigned num, const uint8_t *p,
                  size_t off, size_t len, struct np__g2_tmpl *t,
                  uint64_t *bytes);

/* Section 0 and section 1 of the message being named. */
struct np__g2_msg {
  unsigned disc;   /* discipline, section 0 */
  int64_t ids[13]; /* section 1: centre, subcentre, master and local table
                      versions, significance, year ... second, status, type */
};

/* The grid definition (section 3) that applies to a field. */
struct np__g2_grid {
  unsigned source;        /* source of grid definition (octet 6) */
  struct np__g2_tmpl gdt; /* num is the GDTN; no values for GDTN 65535 */
};

/* A field, as LDM's namer gets it from g2clib. */
struct np__g2_field {
  const struct np__g2_msg *msg;
  const struct np__g2_grid *grid;
  struct np__g2_tmpl pdt; /* num is the PDTN */
  size_t index, total;    /* 0-based number of the field, fields in all */
};

typedef void np__g2_field_fn(void *arg, const struct np__g2_field *f);

/**
 * Decode the GRIB2 message p[0..len) (len = its total length, within the
 * bytes present) and hand fn each field, in order, at the point where LDM
 * names it.
 * @return 0; or -1 if LDM would not name the message, possibly after some
 *         fields were handed over (as LDM logs the ones it named first)
 */
int np__g2_decode(const uint8_t *p, size_t len, np__g2_field_fn *fn, void *arg);

/* GEMPAK's parameter table rows: discipline, category, number, PDTN. */
struct np__g2_var {
  int key[4];
  char gnam[20];
};

struct np__g2_vars {
  const struct np__g2_var *rows; /* sorted by key */
  size_t n;
};

/** The parameter table installed under that name ("g2varsncep1.tbl"),
 *  or NULL. */
const struct np__g2_vars *np__g2_vars_table(const char *tbl);

/* GEMPAK's vertical coordinate table rows. */
struct np__g2_vcrd {
  int id1, id2;
  char unit[24];  /* blanks removed */
  char abbrev[5]; /* the GEMPAK coordinate name, at most 4 characters */
  int scale;
};

struct np__g2_vcrds {
  const struct np__g2_vcrd *rows; /* file order */
  size_t n;
};

/** The vertical coordinate table installed under that name, or NULL. */
const struct np__g2_vcrds *np__g2_vcrd_table(const char *tbl);

/** wmocenter.tbl's abbreviation of a centre, lower-cased, or NULL. */
const char *np__g2_centre_abbr(unsigned centre);

/* GEMPAK's "missing" integer: an accumulation period not given. */
#define NP__G2_IMISSD (-9999)

/**
 * The field's time string ("202403151200F024", or empty) and accumulation
 * period in hours (NP__G2_IMISSD if none).
 */
void np__g2_time(const struct np__g2_field *f, char out[24], int *accum);

/**
 * The field's parameter name (at most 12 characters, no blanks), logging
 * LDM's lines.  abbr is the centre's abbreviation ("" if unknown).
 * @return 0, or -1 if the field has no name
 */
int np__g2_param(const struct np__g2_field *f, const char *abbr, int accum,
                 const struct np_log *lg, char out[16]);

/**
 * The field's level text ("500 hPa PRES"), logging LDM's lines.
 * @return 0, or -1 if the field has no level
 */
int np__g2_level(const struct np__g2_field *f, const char *abbr,
                 const struct np_log *lg, char *out, size_t size);

/* The grdnav row each projection matched last, tried first (per message). */
struct np__g2_navcache {
  int last[4];
};

void np__g2_navcache_init(struct np__g2_navcache *c);

/** The grid number of a grid definition whose source octet is 0: the
 *  grdnav.tbl number, or 255. */
int np__g2_grid_number(const struct np__g2_grid *g, struct np__g2_navcache *c);

/** The grid number grib2-wmo-grid-fallback.tsv gives a WMO heading, or
 *  -1. */
int np__g2_wmo_grid(const char *heading);

/* The int a C cast of an int64 gives on LDM's platform (the low 32 bits). */
static inline int np__g2_int(int64_t v) {
  return (int)(int32_t)(uint32_t)(uint64_t)v;
}

#endif
