/*
 * np_tables.h - the tables NOAAPORT identifiers are made from, built into
 * the program.  They are the files of tables/ (their sources are in
 * tables/README.md), embedded at build time by embed_tables.cmake, so that
 * an ingester names products the same way wherever it is installed and
 * whatever is on the disk.  This header finds a table by its file name and
 * reads it row by row; each namer parses the rows it needs, once.
 *
 * A .tsv table has a header line (skipped) and rows of TAB-separated
 * fields; fields keep their blanks (the as-parsed GEMPAK rows keep LDM's
 * fixed-width padding).  A .tbl table (grdnav.tbl) is GEMPAK's own text,
 * read whole.
 */
#ifndef PQUTILS_INGEST_NP_TABLES_H
#define PQUTILS_INGEST_NP_TABLES_H

#include <stdbool.h>
#include <stddef.h>

struct np_table {
  const char *name; /* file name, as "g2varswmo.tsv" */
  const char *text; /* the file's bytes, NUL-terminated */
  size_t len;       /* without the NUL */
};

/** The table of that file name, or NULL. */
const struct np_table *np_table_find(const char *name);

/** One field of a row: not NUL-terminated. */
struct np_field {
  const char *s;
  size_t n;
};

/** A reader of a .tsv table's rows. */
struct np_tsv {
  const char *p, *end;
};

/** Start reading tab's rows, after its header line. */
void np_tsv_open(struct np_tsv *t, const struct np_table *tab);

/** Start reading the rows of the table of that file name.
 *  @return false if there is no such table */
bool np_tsv_find(struct np_tsv *t, const char *name);

/** The non-empty rows t has left to read, for sizing (t does not move). */
size_t np_tsv_count(const struct np_tsv *t);

/**
 * The next non-empty row, split at TABs into at most max fields (the last
 * one takes the rest of the line).
 * @return the number of fields, 0 at the end of the table.
 */
int np_tsv_row(struct np_tsv *t, struct np_field *f, int max);

/** A field as a long (leading blanks allowed, nothing after the digits),
 *  or def if it is not one. */
long np_field_long(const struct np_field *f, long def);

/** Copy a field into buf (NUL-terminated, cut to size - 1 bytes). */
void np_field_copy(const struct np_field *f, char *buf, size_t size);

#endif
