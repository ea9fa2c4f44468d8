/*
 * np_log.c - formats the NOAAPORT library's messages and hands them to the
 * sink its caller chose (np_log.h).
 */
#include "pqutils/ingest/np_log.h"

#include <stdarg.h>
#include <stdio.h>

int np_log_on(const struct np_log *lg, int level) {
  return lg != NULL && lg->fn != NULL && level >= lg->level;
}

void np_log(const struct np_log *lg, int level, const char *fmt, ...) {
  if (!np_log_on(lg, level))
    return;
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  lg->fn(lg->arg, level, msg);
}
