/*
 * np_log.h - where the NOAAPORT library's messages go.  The library
 * (libnoaaport, prefix np_) never writes a log itself: every module takes a
 * `struct np_log` and hands it finished message texts, LDM's words (spec:
 * docs/noaaport.md, "Log lines"), with a level.  noaaportIngester sends
 * them to the LDM logger (ldmd/site/log.h); the tests collect them and
 * compare them with what LDM 6.15 logged for the same frames.
 *
 * A NULL `struct np_log *`, or one whose fn is NULL, drops every message.
 * Messages below `level` are not even formatted: the per-frame INFO and
 * DEBUG lines cost nothing at the default level.
 */
#ifndef PQUTILS_INGEST_NP_LOG_H
#define PQUTILS_INGEST_NP_LOG_H

/* The levels, with the numbers of ldmd/site/log.h's enum ldm_log_level. */
enum np_level {
  NP_DEBUG = 0,
  NP_INFO = 1,
  NP_NOTE = 2,
  NP_WARN = 3,
  NP_ERROR = 4,
};

/** Receives one message (no trailing newline; it may hold several lines). */
typedef void np_log_fn(void *arg, int level, const char *msg);

struct np_log {
  np_log_fn *fn;
  void *arg;
  int level; /* the least level passed on */
};

/** Format and pass on a message of the given level (up to 4 KiB). */
void np_log(const struct np_log *lg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Whether a message of this level would be passed on. */
int np_log_on(const struct np_log *lg, int level);

#endif
