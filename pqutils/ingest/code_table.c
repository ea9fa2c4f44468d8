/*
 * code_table.c - tables that name a code from 0 to 255, read from their
 * embedded .tsv files (code_table.h).
 */
#include "pqutils/ingest/code_table.h"

#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/np_tables.h"

void np_code_table_load(struct np_code_table *t, const char *file) {
  memset(t, 0, sizeof *t);
  struct np_tsv r;
  if (!np_tsv_find(&r, file))
    return;
  struct np_field f[2];
  while (np_tsv_row(&r, f, 2) == 2) {
    long code = np_field_long(&f[0], -1);
    if (code < 0 || code > 255)
      continue; /* the "*" row: decimal, the default */
    np_field_copy(&f[1], t->name[code], sizeof t->name[code]);
    t->listed[code] = true;
  }
}

bool np_code_name(const struct np_code_table *t, int code, char *out,
                  size_t size) {
  if (code >= 0 && code <= 255 && t->listed[code]) {
    snprintf(out, size, "%s", t->name[code]);
    return false;
  }
  snprintf(out, size, "%d", code);
  return true;
}
