/*
 * surf_scan.h - the token reader pqsurf's bulletin parser walks a bulletin
 * with (prefix surf_scan_): a cursor over bytes that reads LDM's tokens
 * (words of printable characters, numbers with WMO's solidus for a missing
 * digit, the rest of a line, one observation up to its '=') the way LDM's
 * pqsurf reads them, so that our observations and their identifiers are
 * LDM's, byte for byte (pqutils/surf/pqsurf.1, "SPLITTING").
 *
 * Every read is bounded by the scan's end; the few looks LDM takes past an
 * observation's end (at the bytes after it) are bounded by the end of the
 * bulletin.  As LDM's, giving a byte back writes it where it is given back,
 * the end-of-scan value too (as the byte 0xFE, over the last byte read):
 * the scan works on a copy of the bulletin (surf_split() makes it), and
 * what LDM's pqsurf makes of a report cut short, we make too.  Nothing here
 * allocates or logs.
 */
#ifndef PQUTILS_SURF_SURF_SCAN_H
#define PQUTILS_SURF_SURF_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* What a read returns at the end of the scan (LDM's EOB). */
#define SURF_EOB (-2)
/* The byte that ends an observation besides '=': ASCII RS. */
#define SURF_RECORD_SEP 0x1e

struct surf_scan {
  unsigned char *origin; /* the bulletin's first byte */
  unsigned char *limit;  /* just past the bulletin's last byte */
  unsigned char *base;   /* this scan's first byte */
  unsigned char *end;    /* just past this scan's last byte */
  unsigned char *p;      /* the next byte to read */
};

/** A scan over a whole bulletin of len bytes (which it may write). */
void surf_scan_init(struct surf_scan *s, void *data, size_t len);

/** Bytes left to read. */
static inline size_t surf_scan_left(const struct surf_scan *s) {
  return (size_t)(s->end - s->p);
}

/** The next byte (0-255), or SURF_EOB. */
int surf_scan_nextc(struct surf_scan *s);
/** Step back one byte and write ch there (SURF_EOB as 0xFE), unless at
 *  the scan's first byte: LDM's unnextc(). */
void surf_scan_unnextc(struct surf_scan *s, int ch);
/** The byte at p + off if it lies in the bulletin, else SURF_EOB: LDM's
 *  looks past an observation's end. */
int surf_scan_peek(const struct surf_scan *s, size_t off);

/** Is ch white space (ASCII isspace)? */
bool surf_scan_isspace(int ch);

/** Read up to maxskip bytes, stopping after a newline: the last byte read. */
int surf_scan_skipline(struct surf_scan *s, int maxskip);

/**
 * A word: up to maxlen printable ASCII bytes (isgraph) into str (maxlen + 1
 * bytes), NUL-terminated; the byte that ended it is left unread.  The _w
 * form first skips what is not printable (white space, control bytes).
 * @return the byte that ended the word, the last byte stored when maxlen
 *         were stored, or SURF_EOB at the end.
 */
int surf_scan_str(struct surf_scan *s, char *str, int maxlen);
int surf_scan_wstr(struct surf_scan *s, char *str, int maxlen);

/**
 * A number of up to maxlen digits into *num (-1 without any).  The _d forms
 * take WMO's solidus: a '/' counts as a digit and makes the value -1 so
 * far (later digits go on from it, as LDM's do).  The _w forms first skip
 * white space.  Return as surf_scan_str().
 */
int surf_scan_num(struct surf_scan *s, int *num, int maxlen);
int surf_scan_wnum(struct surf_scan *s, int *num, int maxlen);
int surf_scan_dnum(struct surf_scan *s, int *num, int maxlen);
int surf_scan_dwnum(struct surf_scan *s, int *num, int maxlen);

/**
 * The rest of a line, after spaces and tabs: its letters and digits (up to
 * cap - 1) into str; carriage returns are dropped, and the first other
 * byte ends it (consumed, as is the newline).
 * @return the byte that ended it, or SURF_EOB.
 */
int surf_scan_wline(struct surf_scan *s, char *str, size_t cap);

/** If the next bytes are str (up to 16), read them: true; else leave them.
 *  The _w form first skips white space (which stays skipped). */
bool surf_scan_has(struct surf_scan *s, const char *str);
bool surf_scan_whas(struct surf_scan *s, const char *str);

/**
 * The next observation: after white space, the bytes up to the next '=',
 * RS or the end (the '=' or RS is read), into *ob as a scan of its own,
 * without the trailing white space and '='.
 * @return a value > 0 if there is one; SURF_EOB if fewer than 5 bytes are
 *         left, or if the observation, '=' included, has fewer than 5
 *         bytes: LDM stops the bulletin there (pqsurf.1, "SPLITTING").
 */
int surf_scan_next_ob(struct surf_scan *s, struct surf_scan *ob);

#endif /* PQUTILS_SURF_SURF_SCAN_H */
