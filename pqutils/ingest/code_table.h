/*
 * code_table.h - the tables of tables/ that name a code from 0 to 255
 * ("code<TAB>name" rows, GINI platforms, channels and sectors, GRIB
 * centres), with their "*" row: a code not listed is named by its number in
 * decimal.  LDM writes every such decimal name into one shared buffer; the
 * namers that print several of them reproduce that (docs/noaaport.md,
 * sections "GRIB edition 1" and "Satellite names"), so a lookup says when
 * it fell back to decimal.
 */
#ifndef PQUTILS_INGEST_CODE_TABLE_H
#define PQUTILS_INGEST_CODE_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#define NP_CODE_NAME_MAX 24

/** A code table, loaded once from its embedded file. */
struct np_code_table {
  char name[256][NP_CODE_NAME_MAX];
  bool listed[256];
};

/** Load the table of that file name (np_tables.h); an absent file lists
 *  nothing. */
void np_code_table_load(struct np_code_table *t, const char *file);

/**
 * The name of code (out of range: decimal) into out, cut to size - 1.
 * @return true if it is the decimal fallback
 */
bool np_code_name(const struct np_code_table *t, int code, char *out,
                  size_t size);

#endif
