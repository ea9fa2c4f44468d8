/*
 * tables.c - finds an embedded table and reads its rows (np_tables.h).  The
 * table data itself is generated at build time from tables/ into
 * np_tables_data.c (embed_tables.cmake).
 */
#include "pqutils/ingest/np_tables.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Generated: every file of tables/, sorted by name. */
extern const struct np_table np_tables[];
extern const size_t np_ntables;

const struct np_table *np_table_find(const char *name) {
  for (size_t i = 0; i < np_ntables; i++)
    if (strcmp(np_tables[i].name, name) == 0)
      return &np_tables[i];
  return NULL;
}

void np_tsv_open(struct np_tsv *t, const struct np_table *tab) {
  t->p = tab->text;
  t->end = tab->text + tab->len;
  const char *nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
  t->p = nl != NULL ? nl + 1 : t->end;
}

bool np_tsv_find(struct np_tsv *t, const char *name) {
  const struct np_table *tab = np_table_find(name);
  if (tab == NULL)
    return false;
  np_tsv_open(t, tab);
  return true;
}

size_t np_tsv_count(const struct np_tsv *t) {
  struct np_tsv r = *t;
  struct np_field f[1];
  size_t n = 0;
  while (np_tsv_row(&r, f, 1) > 0)
    n++;
  return n;
}

int np_tsv_row(struct np_tsv *t, struct np_field *f, int max) {
  while (t->p < t->end) {
    const char *line = t->p;
    const char *nl = memchr(line, '\n', (size_t)(t->end - line));
    const char *eol = nl != NULL ? nl : t->end;
    t->p = nl != NULL ? nl + 1 : t->end;
    if (eol > line && eol[-1] == '\r')
      eol--;
    if (eol == line)
      continue;
    int n = 0;
    const char *s = line;
    while (n < max) {
      const char *tab = n + 1 < max ? memchr(s, '\t', (size_t)(eol - s)) : NULL;
      const char *e = tab != NULL ? tab : eol;
      f[n].s = s;
      f[n].n = (size_t)(e - s);
      n++;
      if (tab == NULL)
        break;
      s = tab + 1;
    }
    return n;
  }
  return 0;
}

long np_field_long(const struct np_field *f, long def) {
  char buf[32];
  if (f->n == 0 || f->n >= sizeof buf)
    return def;
  memcpy(buf, f->s, f->n);
  buf[f->n] = '\0';
  char *end;
  errno = 0;
  long v = strtol(buf, &end, 10);
  if (end == buf || *end != '\0' || errno != 0)
    return def;
  return v;
}

void np_field_copy(const struct np_field *f, char *buf, size_t size) {
  if (size == 0)
    return;
  size_t n = f->n < size - 1 ? f->n : size - 1;
  memcpy(buf, f->s, n);
  buf[n] = '\0';
}
