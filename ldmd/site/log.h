/*
 * log.h - logging as LDM users know it, for the server and the utilities.
 *
 * Levels DEBUG, INFO, NOTICE (printed NOTE), WARNING (WARN), ERROR, FATAL;
 * the default is NOTICE, `-v` selects INFO and `-x` DEBUG.  Destinations as
 * LDM's `-l` option: "" is syslog (facility LOCAL0, LOG_PID|LOG_NDELAY),
 * "-" is stderr, anything else a file appended to.  Without -l: stderr,
 * unless stderr is /dev/null or closed (a daemon), then the registry's
 * /log/file (syslog if that file cannot be opened).  The default is settled
 * by the first message or ldm_log_get_destination(), so -l can replace it
 * without a file being opened first.
 *
 * File and stderr lines use LDM's "simple" format, one output line per
 * message (a final newline is dropped; every other control byte, newline
 * and TAB included, is escaped: see ldm_log_escape()):
 *   YYYYMMDDThhmmss.uuuuuuZ <ident>[<pid>] (pad to col 52)<file>:<func>:<line>
 *   (pad to col 88)<LEVEL> (pad to col 94)<message>
 * Columns count from 0 (the location follows 52 characters); a field that
 * overruns its column pushes the next one right by one space.  The time is
 * UTC and <file> the base name of the source file.  Each line is one
 * write(2) to a descriptor opened O_APPEND.  Syslog gets
 * "<file>:<line>:<func>() <message>", escaped alike, at the matching priority
 * (FATAL is LOG_CRIT).
 *
 * The logger is process-wide state (one per process, like the process's
 * stderr), guarded by a mutex so threads may share it.  Logging preserves
 * errno.  Every function is async-signal-unsafe except
 * ldm_log_request_refresh() and ldm_log_request_roll(), which only set flags
 * that the next message acts on: call them from SIGUSR1 / SIGUSR2 handlers.
 * After fork() the child keeps the parent's destination; call
 * ldm_log_set_ident() to give it its own name.
 */
#ifndef LDMD_SITE_LOG_H
#define LDMD_SITE_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum ldm_log_level {
  LDM_LOG_DEBUG = 0,
  LDM_LOG_INFO = 1,
  LDM_LOG_NOTICE = 2,
  LDM_LOG_WARNING = 3,
  LDM_LOG_ERROR = 4,
  LDM_LOG_FATAL = 5,
};

/** Set the process ident (program name or peer) and default level, and
 *  log the queue library's notices (pq_set_notice()) as warnings. */
void ldm_log_init(const char *ident);
void ldm_log_set_ident(const char *ident);
const char *ldm_log_get_ident(void);
/**
 * Tell the logger how to know that the program is stopping (NULL: never).
 * From then on a line the destination cannot take at once (a pipe nobody
 * reads) is dropped instead of waited for, so that a stop cannot hang on
 * its own log.  stopping must be safe to call from any thread.
 */
void ldm_log_set_stop(bool (*stopping)(void));

/**
 * Choose the destination: "" syslog, "-" stderr, else a file path (created
 * 0644 if missing, appended to).  NULL means the default described above.
 * @return 0, or -1 with errno set if the file cannot be opened (the
 *         previous destination stays).
 */
int ldm_log_set_destination(const char *dest);
/** The current destination ("" syslog, "-" stderr, or the file's path,
 *  made absolute when it was set: a reopen after chdir() finds it). */
const char *ldm_log_get_destination(void);

/** The syslog facility (LOG_LOCAL0 to LOG_LOCAL7; LOCAL0 by default), as
 *  noaaportIngester's -u chooses it. */
void ldm_log_set_facility(int facility);

void ldm_log_set_level(enum ldm_log_level level);
enum ldm_log_level ldm_log_get_level(void);
/** NOTICE -> INFO -> DEBUG -> NOTICE (WARNING and above -> NOTICE). */
void ldm_log_roll_level(void);
bool ldm_log_enabled(enum ldm_log_level level);

/** Async-signal-safe: reopen the file (after rotation) before the next
 *  message.  For SIGUSR1. */
void ldm_log_request_refresh(void);
/** Async-signal-safe: roll the level before the next message.  SIGUSR2. */
void ldm_log_request_roll(void);

/**
 * Terminal-safe text, as every log line is written (docs/security.md,
 * "Logs"): each byte below 0x20 (TAB and newline too) and 0x7f becomes
 * "\xNN" (two lowercase hex digits: ESC is "\x1b"), and a backslash that
 * an "x" follows becomes "\x5c", so that reading every "\xNN" as its byte
 * gives the text back; every other byte (a backslash before anything but
 * "x", UTF-8) is kept as is.  Writes at most cap - 1 bytes and a NUL,
 * never half an escape.
 * @return the bytes written before the NUL
 */
size_t ldm_log_escape(const char *in, size_t len, char *out, size_t cap);

void ldm_log_write(enum ldm_log_level level, const char *file, const char *func,
                   int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define ldm_log(level, ...)                                                    \
  do {                                                                         \
    if (ldm_log_enabled(level))                                                \
      ldm_log_write((level), __FILE__, __func__, __LINE__, __VA_ARGS__);       \
  } while (0)
#define log_debug(...) ldm_log(LDM_LOG_DEBUG, __VA_ARGS__)
#define log_info(...) ldm_log(LDM_LOG_INFO, __VA_ARGS__)
#define log_notice(...) ldm_log(LDM_LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) ldm_log(LDM_LOG_WARNING, __VA_ARGS__)
#define log_error(...) ldm_log(LDM_LOG_ERROR, __VA_ARGS__)
#define log_fatal(...) ldm_log(LDM_LOG_FATAL, __VA_ARGS__)

#endif /* LDMD_SITE_LOG_H */
