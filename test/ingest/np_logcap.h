/*
 * np_logcap.h - a struct np_log sink for the namers' tests: it keeps the
 * messages given, as "LEVEL<TAB>message" with LDM's level names (the form
 * of the .log files of test/ingest/vectors/), so that a test compares them with
 * what LDM 6.15 logged.  Header-only: each test program is one .c file.
 */
#ifndef TEST_INGEST_NP_LOGCAP_H
#define TEST_INGEST_NP_LOGCAP_H

#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/np_log.h"

#define NPL_LINES 64
#define NPL_LEN 600

struct np_logcap {
  char line[NPL_LINES][NPL_LEN];
  int n;
};

static inline const char *npl_level(int level) {
  static const char *const names[] = {"DEBUG", "INFO", "NOTE", "WARN", "ERROR"};
  return level >= 0 && level <= NP_ERROR ? names[level] : "?";
}

static inline void npl_fn(void *arg, int level, const char *msg) {
  struct np_logcap *c = arg;
  if (c->n < NPL_LINES)
    snprintf(c->line[c->n++], NPL_LEN, "%s\t%s", npl_level(level), msg);
}

/* A sink of every level into c, emptied. */
static inline struct np_log npl_sink(struct np_logcap *c) {
  memset(c, 0, sizeof *c);
  struct np_log lg = {npl_fn, c, NP_DEBUG};
  return lg;
}

/* Whether c holds that line. */
static inline int npl_has(const struct np_logcap *c, const char *line) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->line[i], line) == 0)
      return 1;
  return 0;
}

#endif
