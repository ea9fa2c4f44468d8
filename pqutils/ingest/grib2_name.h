/*
 * grib2_name.h - the name LDM 6.15 gives a GRIB edition 2 message:
 * "grib2/<centre>/<model>/#<grid>/<time>/<params>/<level>", from its
 * sections 1, 3 and 4, GEMPAK's parameter and vertical-coordinate tables
 * as LDM reads them, and grid navigation (grdnav.tbl), quirks included
 * (docs/noaaport.md, "GRIB edition 2").  Our own decoder of the sections
 * and templates: every length is checked against the bytes present, and a
 * message that cannot be decoded names nothing (META stays " !grib2/").
 */
#ifndef PQUTILS_INGEST_GRIB2_NAME_H
#define PQUTILS_INGEST_GRIB2_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_namer.h"

/**
 * Name the GRIB2 message at msg ("GRIB" first; n bytes available, to the
 * end of the product).  Only this first message is named, over the length
 * it states, which must lie within the n bytes (LDM reads on regardless:
 * docs/noaaport.md, "GRIB edition 2", UB).  LDM's ERROR and WARN lines go
 * to nm->log (nm may be NULL).  Thread-safe; nothing lasts between calls.
 * @param name  the product's NAME (for LDM's error line and the WMO-heading
 *              grid fallback)
 * @param[out] tag  "grib2/<centre>/<model>/#<grid>/<time>/<params>/<level>"
 *              (NUL-terminated; cut to tag_size - 1)
 * @return 0, or -1 if the message cannot be decoded (tag untouched)
 */
int np_grib2_name(const uint8_t *msg, size_t n, const char *name, char *tag,
                  size_t tag_size, struct np_namer *nm);

#endif
