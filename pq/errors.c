/*
 * errors.c - the one error namespace of the library.  The table in pq.h
 * (PQ_ERROR_MAP) generates the enum, the names and the messages here, so a
 * code cannot exist without its message.  pq__fail() records the detail of
 * a failure (errno, path, system call) where the caller asked for it, and
 * pq__notice() passes what no result shows to the program's notice
 * function (pq_set_notice()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pq/internal.h"

const char *pq_strerror(int code) {
  switch (code) {
#define PQ__MSG(name, value, msg)                                              \
  case name:                                                                   \
    return msg;
    PQ_ERROR_MAP(PQ__MSG)
#undef PQ__MSG
  default:
    return "PQ_UNKNOWN: unknown error code";
  }
}

const char *pq_errname(int code) {
  switch (code) {
#define PQ__NAME(name, value, msg)                                             \
  case name:                                                                   \
    return #name;
    PQ_ERROR_MAP(PQ__NAME)
#undef PQ__NAME
  default:
    return "PQ_UNKNOWN";
  }
}

int pq__fail(pq_error *e, int code, int sys_errno, const char *fmt, ...) {
  if (e == NULL)
    return code;
  e->pe_code = code;
  e->pe_errno = sys_errno;
  if (fmt == NULL) {
    snprintf(e->pe_msg, sizeof e->pe_msg, "%s", pq_strerror(code));
    return code;
  }
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(e->pe_msg, sizeof e->pe_msg, fmt, ap);
  va_end(ap);
  if (sys_errno != 0 && n >= 0 && (size_t)n < sizeof e->pe_msg)
    snprintf(e->pe_msg + n, sizeof e->pe_msg - (size_t)n, ": %s",
             strerror(sys_errno));
  return code;
}

/* The program's notice function: process-wide, set once at start. */
static pq_notice_fn *notice_fn;
static void *notice_arg;

void pq_set_notice(pq_notice_fn *fn, void *arg) {
  notice_fn = fn;
  notice_arg = arg;
}

void pq__notice(const char *fmt, ...) {
  char msg[640];
  va_list ap;

  if (notice_fn == NULL)
    return;
  va_start(ap, fmt);
  (void)vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  notice_fn(notice_arg, msg);
}
