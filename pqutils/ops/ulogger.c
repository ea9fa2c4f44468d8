/*
 * ulogger - write lines to the LDM log from a script, as LDM's ulogger
 * does: the words given on the command line as one message, or else each
 * line of standard input (or of -f file) as a message, at the priority -p
 * names, with the tag -t gives.  The lines are our programs' own
 * (ldmd/site/log.h: the time, tag[pid], the place, the level, the text,
 * escaped alike), and go where they go: the LDM log file (the registry's
 * /log/file), or -l's destination.  This file owns the command line and
 * the splitting into messages; the manual is pqutils/ops/ulogger.1.
 *
 * Every message is written whatever the level (the user asked for it):
 * the threshold is DEBUG.  A line longer than LINE_MAX_BYTES is logged in
 * pieces of that size (LDM's does the same at 1,023 bytes), so any input
 * costs bounded memory.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

/* The longest message: longer input lines are cut into pieces this long. */
#define LINE_MAX_BYTES 4096

static const char usage_text[] =
    "usage: ulogger [options] [message ...]\n"
    "options:\n"
    "  -p pri       priority, [facility.]level: emerg alert crit err\n"
    "               warning notice info debug (default notice); the\n"
    "               facility (local0 ... local7, user, daemon ...) is for\n"
    "               syslog\n"
    "  -t tag       the name the lines carry (default: the login name)\n"
    "  -f file      log the lines of file (default: standard input)\n"
    "  -i           the pid is in every line (taken, for LDM's scripts)\n"
    "  -s           also write each message to standard error\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "               (default: the LDM log, the registry's /log/file)\n"
    "  -h           print this text\n"
    "With words, they are one message; without, each line of input is.\n";

struct name_value {
  const char *name;
  int value;
};

/* syslog(3)'s names, as logger(1) and LDM's ulogger take them. */
static const struct name_value levels[] = {
    {"emerg", LDM_LOG_FATAL},     {"panic", LDM_LOG_FATAL},
    {"alert", LDM_LOG_FATAL},     {"crit", LDM_LOG_FATAL},
    {"err", LDM_LOG_ERROR},       {"error", LDM_LOG_ERROR},
    {"warning", LDM_LOG_WARNING}, {"warn", LDM_LOG_WARNING},
    {"notice", LDM_LOG_NOTICE},   {"info", LDM_LOG_INFO},
    {"debug", LDM_LOG_DEBUG},     {NULL, 0}};

static const struct name_value facilities[] = {
    {"auth", LOG_AUTH},     {"authpriv", LOG_AUTHPRIV}, {"cron", LOG_CRON},
    {"daemon", LOG_DAEMON}, {"kern", LOG_KERN},         {"lpr", LOG_LPR},
    {"mail", LOG_MAIL},     {"news", LOG_NEWS},         {"security", LOG_AUTH},
    {"syslog", LOG_SYSLOG}, {"user", LOG_USER},         {"uucp", LOG_UUCP},
    {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1},     {"local2", LOG_LOCAL2},
    {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4},     {"local5", LOG_LOCAL5},
    {"local6", LOG_LOCAL6}, {"local7", LOG_LOCAL7},     {NULL, 0}};

/* The level of a syslog level number, 0 (emerg) to 7 (debug). */
static const int level_of_number[8] = {
    LDM_LOG_FATAL,   LDM_LOG_FATAL,  LDM_LOG_FATAL, LDM_LOG_ERROR,
    LDM_LOG_WARNING, LDM_LOG_NOTICE, LDM_LOG_INFO,  LDM_LOG_DEBUG};

struct opts {
  enum ldm_log_level level;
  int facility; /* -1: the logger's default (LOCAL0) */
  const char *tag;
  const char *file;
  bool to_stderr; /* -s */
  bool have_dest; /* -l */
};

static int lookup(const struct name_value *t, const char *s, size_t len) {
  for (; t->name != NULL; t++)
    if (strlen(t->name) == len && strncasecmp(t->name, s, len) == 0)
      return t->value;
  return -1;
}

/* -p [facility.]level */
static int parse_priority(struct cli *c, const char *s, struct opts *o) {
  const char *dot = strchr(s, '.');
  const char *lev = dot != NULL ? dot + 1 : s;
  int v;

  if (dot != NULL) {
    v = lookup(facilities, s, (size_t)(dot - s));
    if (v < 0) {
      cli_usage_error(c, usage_text, "unknown facility name: %.*s",
                      (int)(dot - s), s);
      return -1;
    }
    o->facility = v;
  }
  if (lev[0] >= '0' && lev[0] <= '7' && lev[1] == '\0')
    v = level_of_number[lev[0] - '0'];
  else
    v = lookup(levels, lev, strlen(lev));
  if (v < 0) {
    cli_usage_error(c, usage_text, "unknown priority name: %s", lev);
    return -1;
  }
  o->level = (enum ldm_log_level)v;
  return 0;
}

static int option(struct cli *c, int ch, const char *arg, void *p) {
  struct opts *o = p;

  switch (ch) {
  case 'p':
    return parse_priority(c, arg, o);
  case 't':
    o->tag = arg;
    return 0;
  case 'f':
    o->file = arg;
    return 0;
  case 'i':
    return 0; /* every line has tag[pid] */
  case 's':
    o->to_stderr = true;
    return 0;
  default:
    return -1;
  }
}

/* The login name, as LDM's default tag; else the user's name. */
static const char *login_name(void) {
  const char *name = getlogin();
  const struct passwd *pw;

  if (name != NULL && *name != '\0')
    return name;
  pw = getpwuid(geteuid());
  return pw != NULL && pw->pw_name != NULL ? pw->pw_name : "ulogger";
}

static void emit(const struct opts *o, const char *msg, size_t len) {
  /* the place names this program: the lines say where they came from */
  ldm_log_write(o->level, __FILE__, "main", __LINE__, "%.*s", (int)len, msg);
  if (o->to_stderr)
    fprintf(stderr, "%s: %.*s\n", o->tag, (int)len, msg);
}

/* The words as one message, or as several when they would pass the
 * bound: a word that does not fit starts the next one. */
static void log_words(const struct opts *o, char **words, int n) {
  static char buf[LINE_MAX_BYTES];
  size_t used = 0;
  int i;

  for (i = 0; i < n; i++) {
    size_t len = strlen(words[i]);

    if (used > 0 && used + 1 + len > sizeof buf) {
      emit(o, buf, used);
      used = 0;
    }
    if (len >= sizeof buf) { /* alone, in pieces */
      for (size_t at = 0; at < len; at += sizeof buf)
        emit(o, words[i] + at, len - at < sizeof buf ? len - at : sizeof buf);
      continue;
    }
    if (used > 0)
      buf[used++] = ' ';
    memcpy(buf + used, words[i], len);
    used += len;
  }
  if (used > 0 || n == 0)
    emit(o, buf, used);
}

/* Each line of in as a message (pieces of a long one, each its own; the
 * newline that ends a line of exactly a piece's length is no message). */
static int log_lines(const struct opts *o, FILE *in) {
  static char buf[LINE_MAX_BYTES + 1];
  bool after_piece = false; /* the last read was a full piece, no newline */

  while (fgets(buf, sizeof buf, in) != NULL) {
    size_t len = strlen(buf);
    bool newline = len > 0 && buf[len - 1] == '\n';

    if (newline)
      len--;
    if (!(after_piece && newline && len == 0))
      emit(o, buf, len);
    after_piece = !newline && len == LINE_MAX_BYTES;
  }
  if (ferror(in)) {
    fprintf(stderr, "ulogger: cannot read %s: %s\n",
            o->file != NULL ? o->file : "standard input", strerror(errno));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.level = LDM_LOG_NOTICE, .facility = -1};
  int ch, rc;
  FILE *in = stdin;

  cli_init(&c, argv[0]);
  opterr = 0;
  while ((ch = getopt(argc, argv, ":p:t:f:isl:h")) != -1) {
    if (ch == 'h') {
      fputs(usage_text, stdout);
      return 0;
    }
    if (ch == ':' || ch == '?') {
      (void)cli_bad_option(&c, usage_text, ch);
      return CLI_EXIT_USAGE;
    }
    if (ch == 'l') {
      if (cli_common_option(&c, ch, optarg) < 0)
        return CLI_EXIT_USAGE;
      o.have_dest = true;
    } else if (option(&c, ch, optarg, &o) != 0) {
      return CLI_EXIT_USAGE;
    }
  }
  if (o.tag == NULL)
    o.tag = login_name();
  ldm_log_set_ident(o.tag);
  if (o.facility >= 0)
    ldm_log_set_facility(o.facility);
  ldm_log_set_level(LDM_LOG_DEBUG);
  if (!o.have_dest) {
    char path[4096];

    if (cli_reg_string(&c, REG_LOG_FILE, path, sizeof path) != 0)
      return 1;
    if (ldm_log_set_destination(path) != 0) {
      fprintf(stderr, "ulogger: cannot open the LDM log %s (%s): to syslog\n",
              path, strerror(errno));
      (void)ldm_log_set_destination("");
    }
  }
  if (o.file != NULL && optind < argc) {
    cli_usage_error(&c, usage_text, "-f %s and words: one or the other",
                    o.file);
    return CLI_EXIT_USAGE;
  }
  if (optind < argc) {
    log_words(&o, argv + optind, argc - optind);
    return 0;
  }
  if (o.file != NULL && (in = fopen(o.file, "r")) == NULL) {
    fprintf(stderr, "ulogger: %s: %s\n", o.file, strerror(errno));
    return 1;
  }
  rc = log_lines(&o, in);
  if (in != stdin)
    fclose(in);
  return rc;
}
