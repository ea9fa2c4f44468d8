/*
 * grib_file.c - the GRIB messages of a file and gribinsert's identifiers
 * for them (grib_file.h): the search for each message, bounded by the
 * bytes given, and the identifier built around the NOAAPORT ingester's own
 * GRIB names (grib1_name.c, grib2_name.c), so that a message inserted by
 * gribinsert and the same message ingested from NOAAPORT carry the same
 * GRIB part (docs/noaaport.md, "META tags").
 */
#include "pqutils/ingest/grib_file.h"

#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib1_name.h"
#include "pqutils/ingest/grib2_name.h"

#define ED1_MIN 12u /* indicator (8) and "7777" */
#define ED2_MIN 20u /* indicator (16) and "7777" */

static uint64_t be(const uint8_t *p, int nbytes) {
  uint64_t v = 0;

  for (int i = 0; i < nbytes; i++)
    v = v << 8 | p[i];
  return v;
}

int np_grib_next(const uint8_t *buf, size_t n, size_t from,
                 struct np_grib_msg *m) {
  const uint8_t *g = NULL;

  if (from < n && n - from >= 4)
    g = memmem(buf + from, n - from, "GRIB", 4);
  if (g == NULL)
    return NP_GRIB_END;
  memset(m, 0, sizeof *m);
  m->off = (size_t)(g - buf);
  m->resume = m->off + 4;
  size_t left = n - m->off;
  if (left < 8)
    return NP_GRIB_TRUNCATED;
  m->edition = g[7];
  uint64_t min;
  if (m->edition == 0 || m->edition == 1) {
    m->len = be(g + 4, 3);
    min = ED1_MIN;
  } else if (m->edition == 2) {
    if (left < 16)
      return NP_GRIB_TRUNCATED;
    m->len = be(g + 8, 8);
    min = ED2_MIN;
  } else {
    return NP_GRIB_EDITION;
  }
  if (m->len < min)
    return NP_GRIB_SHORT;
  if (m->len > left)
    return NP_GRIB_TRUNCATED;
  if (memcmp(g + m->len - 4, "7777", 4) != 0)
    return NP_GRIB_NO_END;
  m->resume = m->off + (size_t)m->len;
  return NP_GRIB_MSG;
}

const char *np_grib_scan_text(int result) {
  switch (result) {
  case NP_GRIB_MSG:
    return "a GRIB message";
  case NP_GRIB_END:
    return "no more GRIB messages";
  case NP_GRIB_TRUNCATED:
    return "truncated: its length runs past the end of the file";
  case NP_GRIB_EDITION:
    return "unknown GRIB edition";
  case NP_GRIB_SHORT:
    return "its length is too short for a GRIB message";
  case NP_GRIB_NO_END:
    return "no 7777 where its length says it ends";
  default:
    return "unknown result";
  }
}

void np_grib_tag(const uint8_t *msg, size_t len, const char *name, char *tag,
                 size_t tag_size, struct np_namer *nm) {
  int edition = len >= 8 ? msg[7] : -1;

  if (tag_size == 0)
    return;
  if (edition == 0 || edition == 1) {
    char model[64];
    np_grib1_name(msg, len, model, sizeof model, tag, tag_size, nm);
  } else if (edition == 2) {
    if (np_grib2_name(msg, len, name, tag, tag_size, nm) != 0)
      snprintf(tag, tag_size, "grib2/");
  } else {
    snprintf(tag, tag_size, "gribx/");
  }
}

void np_grib_file_ident(const uint8_t *msg, size_t len, const char *file,
                        uint32_t seqno, char ident[256], struct np_namer *nm) {
  size_t flen = strlen(file);

  if (flen >= 253) {
    snprintf(ident, 256, "%.255s", file);
    return;
  }
  char tag[512], rest[600];
  np_grib_tag(msg, len, file, tag, sizeof tag, nm);
  snprintf(rest, sizeof rest, "%s! %06u", tag, (unsigned)seqno);
  snprintf(ident, 256, "%s !%.*s", file, (int)(253 - flen), rest);
}
