/*
 * grib_names.h - the names LDM 6.15 prints for a GRIB message's originating
 * centre and generating process (the model), in GRIB edition 1 and edition 2
 * identifiers alike (docs/noaaport.md, "GRIB edition 1": centre, model and
 * the shared decimal buffer; "GRIB edition 2": centre and model), from the
 * embedded tables grib-centers.tsv and grib-models.tsv.
 *
 * The shared decimal buffer.  LDM writes every name that falls back to a
 * decimal number into one buffer, so that when two names of one identifier
 * both fall back, both show the number written last.  Here that buffer is
 * the caller's `struct np_grib_names`, one per identifier: a name is a
 * pointer that may point into it, and the caller resolves the names in
 * LDM's order before printing them (GRIB1: the centre, then the model;
 * GRIB2: the model, then the centre).  Nothing lasts beyond the struct.
 *
 * Thread-safe: the tables are parsed once (pthread_once) and never change.
 */
#ifndef PQUTILS_INGEST_GRIB_NAMES_H
#define PQUTILS_INGEST_GRIB_NAMES_H

/** The buffers the names of one identifier are written into. */
struct np_grib_names {
  char dec[12];   /* LDM's shared buffer of decimal fallbacks */
  char model[24]; /* "NWS_<process>" and the like */
};

/**
 * The name of a centre: "ncep", "nwstg", ... or, for a centre not in the
 * table, its number in decimal, written into nb->dec.
 * @param centre  only its low 8 bits count, as in LDM (centre modulo 256)
 * @return a constant string or nb->dec; valid while *nb is
 */
const char *np_grib_centre_name(unsigned centre, struct np_grib_names *nb);

/**
 * The name of a model (generating process) of a centre: a constant name
 * ("GFS"), a prefixed number written into nb->model ("NAM_84", "NWS_12"),
 * or the process number in decimal, written into nb->dec.
 * @param centre, process  only their low 8 bits count, as in LDM
 * @return a constant string, nb->model or nb->dec; valid while *nb is
 */
const char *np_grib_model_name(unsigned centre, unsigned process,
                               struct np_grib_names *nb);

#endif
