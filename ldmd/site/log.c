/*
 * log.c - the process's logger, as LDM users know it: levels, the `-l`
 * destinations (syslog, stderr, a file), LDM's "simple" line format with
 * its padded columns, and the signal-driven refresh (after log rotation)
 * and level roll.  One logger per process, so its state is file-scope here,
 * guarded by a mutex (and by fork handlers, so a child never inherits it
 * locked); the two signal requests are sig_atomic_t flags acted on by the
 * next message.
 *
 * Every output line is built whole and written with one write(2) on a
 * descriptor opened O_APPEND, so lines from the many processes of a server
 * sharing one log file never interleave within a line.  A message is one
 * line whatever it holds: its control bytes are escaped (ldm_log_escape()),
 * so that text from a peer (a product's identifier, a pattern) can neither
 * drive an operator's terminal nor forge a line of its own.  The queue
 * library's notices (pq_set_notice()) come here too, as warnings.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pq/pq.h"

/* Columns (characters before the field) of the simple format. */
#define COL_LOCATION 52
#define COL_LEVEL 88
#define COL_MESSAGE 94

#define HEAD_MAX 1024 /* the part of a line before the message */
#define LINE_STACK 4096

enum dest_kind {
  DEST_UNSET, /* the default, not yet resolved */
  DEST_SYSLOG,
  DEST_STDERR,
  DEST_FILE,
};

static struct {
  char ident[256];
  enum ldm_log_level level;
  enum dest_kind kind;
  char path[PATH_MAX];    /* DEST_FILE */
  int fd;                 /* DEST_FILE */
  bool (*stopping)(void); /* ldm_log_set_stop() */
} lg = {.level = LDM_LOG_NOTICE, .kind = DEST_UNSET, .fd = -1};

static pthread_mutex_t lg_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t lg_once = PTHREAD_ONCE_INIT;
static volatile sig_atomic_t refresh_requested;
static volatile sig_atomic_t roll_requested;

static const char *const level_words[] = {"DEBUG", "INFO",  "NOTE",
                                          "WARN",  "ERROR", "FATAL"};
static const int level_priorities[] = {LOG_DEBUG,   LOG_INFO, LOG_NOTICE,
                                       LOG_WARNING, LOG_ERR,  LOG_CRIT};

static bool level_valid(enum ldm_log_level level) {
  return (int)level >= LDM_LOG_DEBUG && (int)level <= LDM_LOG_FATAL;
}

/* ---- the lock, kept consistent across fork() ---- */

static void fork_prepare(void) {
  (void)pthread_mutex_lock(&lg_mutex);
}

static void fork_after(void) {
  (void)pthread_mutex_unlock(&lg_mutex);
}

static void setup_once(void) {
  (void)pthread_atfork(fork_prepare, fork_after, fork_after);
}

static void lock(void) {
  (void)pthread_once(&lg_once, setup_once);
  (void)pthread_mutex_lock(&lg_mutex);
}

static void unlock(void) {
  (void)pthread_mutex_unlock(&lg_mutex);
}

/* ---- identity and destinations (callers hold the lock) ---- */

/* The syslog facility: LOCAL0 unless a program's -u chose another. */
static int lg_facility = LOG_LOCAL0;

static const char *ident_locked(void) {
  return lg.ident[0] != '\0' ? lg.ident : program_invocation_short_name;
}

void ldm_log_set_facility(int facility) {
  (void)pthread_mutex_lock(&lg_mutex);
  lg_facility = facility;
  if (lg.kind == DEST_SYSLOG)
    openlog(ident_locked(), LOG_PID | LOG_NDELAY, lg_facility);
  (void)pthread_mutex_unlock(&lg_mutex);
}

static void set_ident_locked(const char *ident) {
  (void)ldm_log_escape(ident, strlen(ident), lg.ident, sizeof lg.ident);
  if (lg.kind == DEST_SYSLOG) /* syslog keeps the ident it was opened with */
    openlog(ident_locked(), LOG_PID | LOG_NDELAY, lg_facility);
}

static int open_log_file(const char *path) {
  int fd;
  do
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  while (fd < 0 && errno == EINTR);
  return fd;
}

static void close_dest_locked(void) {
  if (lg.kind == DEST_FILE && lg.fd >= 0)
    (void)close(lg.fd);
  else if (lg.kind == DEST_SYSLOG)
    closelog();
  lg.fd = -1;
  lg.kind = DEST_UNSET;
}

static void use_syslog_locked(void) {
  close_dest_locked();
  openlog(ident_locked(), LOG_PID | LOG_NDELAY, lg_facility);
  lg.kind = DEST_SYSLOG;
}

/* The path a file destination is kept as: absolute, so that the reopen
 * after a rotation (SIGUSR1) finds the same file after the program has
 * changed directory (pqact -d with a relative -l). */
static int absolute_path(const char *dest, char *path, size_t len) {
  size_t n = strlen(dest);

  if (dest[0] == '/') {
    if (n >= len) {
      errno = ENAMETOOLONG;
      return -1;
    }
    memcpy(path, dest, n + 1);
    return 0;
  }
  if (getcwd(path, len) == NULL)
    return -1;
  size_t cwd = strlen(path);
  if (cwd + 1 + n >= len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (cwd > 1) /* not "/" */
    path[cwd++] = '/';
  memcpy(path + cwd, dest, n + 1);
  return 0;
}

static int use_file_locked(const char *dest) {
  char path[PATH_MAX]; /* dest may be lg.path itself */
  int fd;

  if (absolute_path(dest, path, sizeof path) != 0)
    return -1;
  fd = open_log_file(path);
  if (fd < 0)
    return -1;
  close_dest_locked();
  strcpy(lg.path, path);
  lg.fd = fd;
  lg.kind = DEST_FILE;
  return 0;
}

/* Is stderr /dev/null (or closed), as for a daemon? */
static bool stderr_is_null(void) {
  struct stat err, null;

  if (fstat(STDERR_FILENO, &err) != 0)
    return true;
  return S_ISCHR(err.st_mode) && stat("/dev/null", &null) == 0 &&
         err.st_rdev == null.st_rdev;
}

/* The LDM log file: registry /log/file, or its default. */
static void daemon_log_path(char *buf, size_t len) {
  ldm_registry *reg;

  if (ldm_reg_open(NULL, &reg, NULL, 0) == LDM_REG_OK) {
    int rc = ldm_reg_get_string(reg, REG_LOG_FILE, buf, len);
    ldm_reg_close(reg);
    if (rc == LDM_REG_OK && *buf != '\0')
      return;
  }
  const char *home = getenv("LDMHOME");
  (void)snprintf(buf, len, "%s/var/logs/ldmd.log",
                 home != NULL && *home != '\0' ? home : LDM_HOME_DEFAULT);
}

/* Stderr, unless it is /dev/null: then the LDM log file, or syslog if that
 * cannot be opened and there is no destination to keep. */
static int use_default_locked(void) {
  char path[PATH_MAX];
  int saved;

  if (!stderr_is_null()) {
    close_dest_locked();
    lg.kind = DEST_STDERR;
    return 0;
  }
  daemon_log_path(path, sizeof path);
  if (use_file_locked(path) == 0)
    return 0;
  saved = errno;
  if (lg.kind == DEST_UNSET)
    use_syslog_locked();
  errno = saved;
  return -1;
}

static void resolve_dest_locked(void) {
  if (lg.kind == DEST_UNSET)
    (void)use_default_locked();
}

static void roll_locked(void) {
  switch (lg.level) {
  case LDM_LOG_NOTICE:
    lg.level = LDM_LOG_INFO;
    break;
  case LDM_LOG_INFO:
    lg.level = LDM_LOG_DEBUG;
    break;
  default: /* DEBUG, and WARNING and above */
    lg.level = LDM_LOG_NOTICE;
    break;
  }
}

/* Act on what signal handlers asked for since the last message. */
static void apply_requests_locked(void) {
  if (roll_requested) {
    roll_requested = 0;
    roll_locked();
  }
  if (refresh_requested) {
    refresh_requested = 0;
    if (lg.kind == DEST_FILE) {
      int fd = open_log_file(lg.path);
      if (fd >= 0) { /* else keep writing where we were */
        (void)close(lg.fd);
        lg.fd = fd;
      }
    } else if (lg.kind == DEST_SYSLOG) {
      closelog();
      openlog(ident_locked(), LOG_PID | LOG_NDELAY, lg_facility);
    }
  }
}

/* The queue library's notices (pq_set_notice(): damage it found and
 * mended on the way) are warnings: nothing failed, but an operator must
 * know that the queue was damaged. */
static void pq_notice(void *arg, const char *msg) {
  (void)arg;
  log_warning("%s", msg);
}

/* ---- the public functions ---- */

void ldm_log_init(const char *ident) {
  const char *slash = ident != NULL ? strrchr(ident, '/') : NULL;

  lock();
  set_ident_locked(slash != NULL ? slash + 1 : ident != NULL ? ident : "");
  lg.level = LDM_LOG_NOTICE;
  unlock();
  pq_set_notice(pq_notice, NULL);
}

void ldm_log_set_ident(const char *ident) {
  lock();
  set_ident_locked(ident != NULL ? ident : "");
  unlock();
}

void ldm_log_set_stop(bool (*stopping)(void)) {
  lg.stopping = stopping;
}

const char *ldm_log_get_ident(void) {
  const char *ident;

  lock();
  ident = ident_locked();
  unlock();
  return ident;
}

int ldm_log_set_destination(const char *dest) {
  int rc = 0;

  lock();
  if (dest == NULL)
    rc = use_default_locked();
  else if (*dest == '\0')
    use_syslog_locked();
  else if (strcmp(dest, "-") == 0) {
    close_dest_locked();
    lg.kind = DEST_STDERR;
  } else
    rc = use_file_locked(dest);
  unlock();
  return rc;
}

const char *ldm_log_get_destination(void) {
  const char *dest;

  lock();
  resolve_dest_locked();
  dest = lg.kind == DEST_SYSLOG ? "" : lg.kind == DEST_FILE ? lg.path : "-";
  unlock();
  return dest;
}

void ldm_log_set_level(enum ldm_log_level level) {
  if (!level_valid(level))
    return;
  lock();
  lg.level = level;
  unlock();
}

enum ldm_log_level ldm_log_get_level(void) {
  enum ldm_log_level level;

  lock();
  apply_requests_locked();
  level = lg.level;
  unlock();
  return level;
}

void ldm_log_roll_level(void) {
  lock();
  roll_locked();
  unlock();
}

bool ldm_log_enabled(enum ldm_log_level level) {
  bool on;

  lock();
  apply_requests_locked();
  on = level_valid(level) && level >= lg.level;
  unlock();
  return on;
}

void ldm_log_request_refresh(void) {
  refresh_requested = 1;
}

void ldm_log_request_roll(void) {
  roll_requested = 1;
}

/* ---- formatting and writing ---- */

__attribute__((format(printf, 4, 5))) static size_t
append(char *buf, size_t pos, size_t cap, const char *fmt, ...) {
  va_list ap;
  int n;

  if (pos + 1 >= cap)
    return pos;
  va_start(ap, fmt);
  n = vsnprintf(buf + pos, cap - pos, fmt, ap);
  va_end(ap);
  if (n < 0)
    return pos;
  pos += (size_t)n;
  return pos < cap ? pos : cap - 1;
}

static size_t pad_to(char *buf, size_t pos, size_t col) {
  while (pos < col)
    buf[pos++] = ' ';
  return pos;
}

/* Everything of a simple-format line before the message. */
static size_t format_head(char *head, enum ldm_log_level level,
                          const char *file, const char *func, int line) {
  struct timespec now;
  struct tm tm;
  size_t pos = 0;

  (void)clock_gettime(CLOCK_REALTIME, &now);
  (void)gmtime_r(&now.tv_sec, &tm);
  pos = append(head, pos, HEAD_MAX, "%04d%02d%02dT%02d%02d%02d.%06ldZ %s[%ld] ",
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
               tm.tm_min, tm.tm_sec, (long)(now.tv_nsec / 1000), ident_locked(),
               (long)getpid());
  pos = pad_to(head, pos, COL_LOCATION);
  pos = append(head, pos, HEAD_MAX, "%s:%s:%d ", file, func, line);
  pos = pad_to(head, pos, COL_LEVEL);
  pos = append(head, pos, HEAD_MAX, "%s ", level_words[level]);
  return pad_to(head, pos, COL_MESSAGE);
}

/* Once the program is stopping, a line that the destination cannot take
 * now (a pipe nobody reads) is dropped rather than waited for: a stop must
 * not hang on its own log. */
static bool give_up(int fd) {
  struct pollfd pfd = {.fd = fd, .events = POLLOUT};

  if (lg.stopping == NULL || !lg.stopping())
    return false;
  return poll(&pfd, 1, 0) != 1 || (pfd.revents & POLLOUT) == 0;
}

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    if (give_up(fd))
      return;
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue; /* give_up() decides whether to go on */
    if (w <= 0)
      return; /* nowhere left to say so */
    p += w;
    n -= (size_t)w;
  }
}

size_t ldm_log_escape(const char *in, size_t len, char *out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  size_t i, pos = 0;

  if (cap == 0)
    return 0;
  for (i = 0; i < len; i++) {
    unsigned char b = (unsigned char)in[i];
    bool esc =
        b < 0x20 || b == 0x7f || (b == '\\' && i + 1 < len && in[i + 1] == 'x');

    if (pos + (esc ? 4 : 1) >= cap)
      break; /* never half an escape */
    if (!esc) {
      out[pos++] = (char)b;
      continue;
    }
    out[pos++] = '\\';
    out[pos++] = 'x';
    out[pos++] = hex[b >> 4];
    out[pos++] = hex[b & 0xf];
  }
  out[pos] = '\0';
  return pos;
}

/* One output line: head, text escaped, newline, in one write. */
static void emit_line(int fd, const char *head, size_t hlen, const char *text,
                      size_t tlen) {
  char stack[LINE_STACK];
  size_t n = hlen + 4 * tlen + 2;
  char *line = n <= sizeof stack ? stack : malloc(n);

  if (line == NULL) { /* keep what fits */
    line = stack;
    n = sizeof stack;
  }
  memcpy(line, head, hlen);
  n = hlen + ldm_log_escape(text, tlen, line + hlen, n - hlen - 1);
  line[n++] = '\n';
  write_all(fd, line, n);
  if (line != stack)
    free(line);
}

/* Syslog's line: its own head, the message escaped. */
static void emit_syslog(enum ldm_log_level level, const char *file,
                        const char *func, int line, const char *msg,
                        size_t len) {
  char stack[LINE_STACK];
  size_t n = 4 * len + 1;
  char *text = n <= sizeof stack ? stack : malloc(n);

  if (text == NULL) { /* keep what fits */
    text = stack;
    n = sizeof stack;
  }
  (void)ldm_log_escape(msg, len, text, n);
  syslog(level_priorities[level], "%s:%d:%s() %s", file, line, func, text);
  if (text != stack)
    free(text);
}

/* Write a message, as one output line, to the destination. */
static void emit_locked(enum ldm_log_level level, const char *file,
                        const char *func, int line, const char *msg) {
  char head[HEAD_MAX];
  size_t len = strlen(msg);

  if (len > 0 && msg[len - 1] == '\n')
    len--; /* a final newline is the line's own */
  if (lg.kind == DEST_SYSLOG) {
    emit_syslog(level, file, func, line, msg, len);
    return;
  }
  emit_line(lg.kind == DEST_FILE ? lg.fd : STDERR_FILENO, head,
            format_head(head, level, file, func, line), msg, len);
}

void ldm_log_write(enum ldm_log_level level, const char *file, const char *func,
                   int line, const char *fmt, ...) {
  int saved_errno = errno; /* callers log errno, then use it */
  char stack[1024];
  char *heap = NULL;
  const char *msg = stack;
  const char *slash;
  va_list ap, again;
  int n;

  if (!level_valid(level))
    level = LDM_LOG_ERROR;
  va_start(ap, fmt);
  va_copy(again, ap);
  n = vsnprintf(stack, sizeof stack, fmt, ap);
  if (n < 0)
    msg = "(the message could not be formatted)";
  else if ((size_t)n >= sizeof stack && (heap = malloc((size_t)n + 1)) != NULL)
    msg = vsnprintf(heap, (size_t)n + 1, fmt, again) >= 0 ? heap : stack;
  va_end(again);
  va_end(ap);

  file = file != NULL ? file : "?";
  slash = strrchr(file, '/');
  lock();
  apply_requests_locked();
  if (level >= lg.level) {
    resolve_dest_locked();
    emit_locked(level, slash != NULL ? slash + 1 : file,
                func != NULL ? func : "?", line, msg);
  }
  unlock();
  free(heap);
  errno = saved_errno;
}
