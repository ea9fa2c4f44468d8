/*
 * surf_heading.h - the WMO abbreviated heading as LDM's pqsurf reads it
 * from a surface bulletin (prefix surf_heading_): TTAAii CCCC YYGGgg and
 * the BBB group's retransmission, correction or amendment, the AFOS PIL on
 * the next line, and the kind of report the heading announces (SYNOP,
 * SHIP, METAR or SAO, SPECI).  Not the NOAAPORT ingester's canonical
 * heading (pqutils/ingest/wmo_heading.h): pqsurf keeps LDM's own reading,
 * with its quirks, because the identifiers of the observations come from
 * it (pqutils/surf/pqsurf.1, "SPLITTING").
 */
#ifndef PQUTILS_SURF_SURF_HEADING_H
#define PQUTILS_SURF_SURF_HEADING_H

#include <stdbool.h>
#include <time.h>

#include "pqutils/surf/surf_scan.h"

/* Day of the month, hour and minute (UTC) of a heading or a report. */
struct surf_time {
  int mday;
  int hour;
  int min;
};

/**
 * Set t to day, hour, minute, as LDM's set_dtime(): a value out of its
 * range (a group that was missing or had a solidus) is taken from now,
 * a bad hour with now's minute, which a good minute then replaces; a good
 * hour comes with minute 0 unless the minute is good.
 */
void surf_time_set(struct surf_time *t, int mday, int hour, int min,
                   time_t now);

enum surf_bbb {
  SURF_ORIGINAL = 0,
  SURF_RTD, /* RRx, RTD: delayed (retransmitted) */
  SURF_COR, /* CCx, COR: corrected */
  SURF_AMD, /* AAx, AMD: amended */
  SURF_PIE, /* Pxx: a segment */
};

/* Kinds of report (LDM's message types). */
enum surf_type {
  SURF_UNKNOWN = 0,
  SURF_SYNOP,
  SURF_SHIP,
  SURF_METAR, /* METAR, or SAO: told apart by each report */
  SURF_SPECI,
};

struct surf_heading {
  char tt[3];   /* T1T2, up to 2 printable characters */
  char aa[3];   /* A1A2 */
  int ii;       /* 0 when missing */
  char cccc[5]; /* the originating centre */
  struct surf_time time;
  enum surf_bbb bbb;
  int bbb_seq;  /* the BBB's letter (a byte), or PIE's segment number */
  char pil[16]; /* " /pXXXXXX" when a PIL was read, else "" */
};

/**
 * Read the heading at s, which stands at its first group (after the
 * start-of-heading and sequence-number lines), to the start of the next
 * line; with use_pil, also look at that line for a PIL, reading nothing.
 * @return 0, or -1 if the bulletin ends within the heading.
 */
int surf_heading_read(struct surf_scan *s, struct surf_heading *h, bool use_pil,
                      time_t now);

/** The BBB text an identifier ends with ("RRA", "CCB", "AMD", "PAB"...),
 *  or NULL for an original. */
const char *surf_heading_bbb(const struct surf_heading *h, char buf[4]);

/** The kind of report the heading announces (LDM's rules on T1T2 and
 *  A1A2: WMO Manual on Codes, tables B1 and C2). */
enum surf_type surf_heading_type(const struct surf_heading *h);

/** The name LDM logs for a kind of report ("SYNOP"...). */
const char *surf_type_name(enum surf_type t);

#endif /* PQUTILS_SURF_SURF_HEADING_H */
