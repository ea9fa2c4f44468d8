/*
 * grib1_name.h - the name LDM 6.15 gives a GRIB edition 1 message: the
 * model for " /m<model>" and the META part
 * "grib/<centre>/<model>/#<grid>/<YYYYMMDDhhmm>/F<fff>/<param>/<level>/ "
 * (with its trailing space), from wgrib's parameter tables and LDM's centre
 * and model names (tables/), quirks included (docs/noaaport.md, "GRIB
 * edition 1").  A pure function over bounded bytes: bytes past the end
 * read as 0 (and a WARN says so).  wgrib's user parameter table (a
 * "gribtab" file read at run time) is not consulted.
 */
#ifndef PQUTILS_INGEST_GRIB1_NAME_H
#define PQUTILS_INGEST_GRIB1_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_namer.h"

/**
 * Name the GRIB1 message at g ("GRIB" first; n bytes available).
 * @param[out] model  the model name (NUL-terminated)
 * @param[out] tag    the META part, "grib/.../ "
 */
void np_grib1_name(const uint8_t *g, size_t n, char *model, size_t model_size,
                   char *tag, size_t tag_size, struct np_namer *nm);

#endif
