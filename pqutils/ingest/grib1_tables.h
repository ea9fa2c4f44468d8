/*
 * grib1_tables.h - the names a GRIB edition 1 identifier is made of, from
 * the tables of tables/: centres (grib-centers.tsv), models
 * (grib-models.tsv), wgrib's parameter tables (grib1-params-*.tsv) and the
 * level texts (grib1-levels.tsv, printf-style templates and their
 * arguments) (docs/noaaport.md, section "GRIB edition 1").  The tables are
 * parsed once, on first use, and never change; every lookup is bounded.
 */
#ifndef PQUTILS_INGEST_GRIB1_TABLES_H
#define PQUTILS_INGEST_GRIB1_TABLES_H

#include <stdbool.h>
#include <stddef.h>

/* wgrib's built-in parameter tables. */
enum np_g1_ptable {
  NP_G1_OPN,      /* NCEP operational */
  NP_G1_REANAL,   /* NCEP/NCAR reanalysis */
  NP_G1_OMB,      /* NCEP OMB (centre 7, table 128) */
  NP_G1_ECMWF128, /* ECMWF table 128 */
  NP_G1_ECMWF160, /* ECMWF table 160 */
  NP_G1_NTABLES
};

/** The centre's name into out.  @return true if it is the decimal
 *  fallback (the centre's number) */
bool np_g1_centre(int centre, char *out, size_t size);

/** The model's name for a centre's generating process into out.
 *  @return true if it is the decimal fallback (the process number) */
bool np_g1_model(int centre, int process, char *out, size_t size);

/** The name of parameter param (0-255) in table t. */
const char *np_g1_param(enum np_g1_ptable t, int param);

/** The level text for a level type and the PDS octets 11 and 12 ("" for a
 *  type the table does not list). */
void np_g1_level(int ltype, int o11, int o12, char *out, size_t size);

#endif
