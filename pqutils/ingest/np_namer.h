/*
 * np_namer.h - what the namers (wmo_heading.h, nwstg_name.h, grib1_name.h,
 * grib2_name.h, gini_name.h) share: where their messages go, and the
 * warnings LDM gives once per process.  Nothing else carries over from one
 * product to the next: every namer is a function of the bytes it is given,
 * bounded by their length, however damaged (a corrupt GRIB message must
 * neither crash the ingester nor name the next product; docs/noaaport.md,
 * "Hostile input").  Tables are read once, on first use, from the
 * embedded copies (np_tables.h), and never change.
 */
#ifndef PQUTILS_INGEST_NP_NAMER_H
#define PQUTILS_INGEST_NP_NAMER_H

#include "pqutils/ingest/np_log.h"

/* Warnings LDM gives once per process. */
enum {
  NP_ONCE_GRIB1_REANAL = 1u << 0, /* "Using NCEP reanalysis table ..." */
  NP_ONCE_GRIB1_UNDEF = 1u << 1,  /* "Undefined parameter table ..." */
};

struct np_namer {
  const struct np_log *log;
  unsigned once; /* NP_ONCE_ bits already given */
};

#endif
