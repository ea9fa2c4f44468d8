/*
 * grib_file.h - the GRIB messages of a file, as gribinsert takes them:
 * finding each message in the bytes (np_grib_next()) and the identifier
 * gribinsert gives it (np_grib_file_ident()), whose GRIB part is exactly
 * what the NOAAPORT ingester puts after " !" for the same message
 * (np_grib_tag(): grib1_name.h, grib2_name.h).
 *
 * A file is any bytes: messages laid end to end, with anything before,
 * between and after them (a WMO heading, padding).  A message is "GRIB",
 * its length (edition 0 and 1: octets 5-7; edition 2: octets 9-16) and
 * "7777" as its last four octets.  Everything is bounded by the bytes
 * given: a stated length past them, a length too short to hold the
 * indicator and end sections, an unknown edition or a missing "7777" is
 * reported, and the search goes on four bytes after that "GRIB", so one
 * damaged message costs no other (LDM's gribinsert skips the stated
 * length instead, and loops forever on an unknown edition).
 *
 * Pure functions; thread-safe.
 */
#ifndef PQUTILS_INGEST_GRIB_FILE_H
#define PQUTILS_INGEST_GRIB_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_namer.h"

/* np_grib_next() results. */
enum np_grib_scan {
  NP_GRIB_MSG = 0,        /* a message: m->off, m->len, m->edition */
  NP_GRIB_END = -1,       /* no "GRIB" from `from` on */
  NP_GRIB_TRUNCATED = -2, /* its stated length runs past the bytes given */
  NP_GRIB_EDITION = -3,   /* an edition other than 0, 1 and 2 */
  NP_GRIB_SHORT = -4,     /* a length too short for a message */
  NP_GRIB_NO_END = -7,    /* no "7777" where the length says it ends */
};

/** A message found, or the "GRIB" a failure is about. */
struct np_grib_msg {
  size_t off;    /* where "GRIB" is */
  uint64_t len;  /* the length it states (0 if unknown) */
  int edition;   /* octet 8 */
  size_t resume; /* where the search goes on: after the message, or four
                    bytes after a damaged one's "GRIB" */
};

/**
 * Find the first "GRIB" of buf[from, n) and check the message it starts.
 * @return an enum np_grib_scan; for every result but NP_GRIB_END, *m is
 *         set, and the next search starts at m->resume
 */
int np_grib_next(const uint8_t *buf, size_t n, size_t from,
                 struct np_grib_msg *m);

/** What a result of np_grib_next() means, in words ("no 7777 ..."). */
const char *np_grib_scan_text(int result);

/**
 * The ingester's GRIB part of META for one message (msg[0, len), "GRIB"
 * first): "grib2/<centre>/.../<level>", "grib2/" when edition 2 cannot be
 * decoded, "grib/<centre>/.../<level>/ " for editions 0 and 1, "gribx/"
 * otherwise (docs/noaaport.md, "META tags").  The namers' ERROR and WARN
 * lines go to nm->log and name `name` where LDM names the WMO heading.
 */
void np_grib_tag(const uint8_t *msg, size_t len, const char *name, char *tag,
                 size_t tag_size, struct np_namer *nm);

/**
 * gribinsert's identifier of one message of `file`:
 * "<file> !<tag>! <seqno, 6 digits>", the tag np_grib_tag()'s; cut to 255
 * bytes as LDM's gribinsert cuts it (a file name of 253 bytes or more is
 * the whole identifier, cut to 255).
 * @param ident  at least 256 bytes
 */
void np_grib_file_ident(const uint8_t *msg, size_t len, const char *file,
                        uint32_t seqno, char ident[256], struct np_namer *nm);

#endif
