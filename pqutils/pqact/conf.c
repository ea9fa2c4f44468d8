/*
 * conf.c - reads a pqact.conf file into a table of entries (conf.h says
 * which syntax, and why each rule is LDM's).  Lines are assembled into
 * entries first (comments, blank lines, continuations, the 512-byte limit),
 * then each entry is split into its fields and checked.  The line number in
 * a message is the line where the entry starts, and the messages are LDM's
 * (lowercased).  Unlike LDM's pqact, which stops at the first bad entry,
 * reading goes on, so that one check shows every bad entry.
 */
#include "pqutils/pqact/conf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pqutils/pqact/check.h"

/* LDM compares at most this many characters of an action name. */
#define ACTION_NAME_MAX 12

static const char *const action_names[] = {
    [PQACT_NOOP] = "NOOP",           [PQACT_FILE] = "FILE",
    [PQACT_STDIOFILE] = "STDIOFILE", [PQACT_DBFILE] = "DBFILE",
    [PQACT_PIPE] = "PIPE",           [PQACT_SPIPE] = "SPIPE",
    [PQACT_XPIPE] = "XPIPE",         [PQACT_EXEC] = "EXEC",
};

const char *pqact_action_name(enum pqact_action a) {
  if ((size_t)a >= sizeof action_names / sizeof action_names[0])
    return "?";
  return action_names[a];
}

struct reader {
  pqact_conf_say_fn *say;
  void *arg;
  unsigned nerrors;
  struct pqact_entry *entries;
  size_t n, cap;
};

__attribute__((format(printf, 3, 4))) static void
tell(struct reader *r, bool error, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (error)
    r->nerrors++;
  if (r->say != NULL)
    r->say(r->arg, error, msg);
}

static bool blank(char c) {
  return c == ' ' || c == '\t';
}

/* The next tab-separated field of *p (NUL-terminated in place), or NULL
 * if none is left; *p moves past the tabs after it. */
static char *next_field(char **p) {
  char *s = *p;
  if (*s == '\0')
    return NULL;
  char *end = strchr(s, '\t');
  if (end == NULL) {
    *p = s + strlen(s);
    return s;
  }
  *end++ = '\0';
  while (*end == '\t')
    end++;
  *p = end;
  return s;
}

static int action_parse(const char *name, enum pqact_action *out) {
  if (strlen(name) > ACTION_NAME_MAX)
    return -1; /* cut to 12 characters, it still names no action */
  for (size_t i = 0; i < sizeof action_names / sizeof action_names[0]; i++) {
    if (strcasecmp(name, action_names[i]) == 0) {
      *out = (enum pqact_action)i;
      return 0;
    }
  }
  return -1;
}

/* The sub-matches an argument field can name (conf.h): over-counting is
 * safe, so any backslash before a digit or "(digit" counts. */
static unsigned args_nmatch(const char *args) {
  unsigned n = strchr(args, '&') != NULL ? 1 : 0;
  for (const char *p = strchr(args, '\\'); p != NULL; p = strchr(p + 1, '\\')) {
    if (p[1] == '0' && n < 1)
      n = 1;
    else if (isdigit((unsigned char)p[1]) ||
             (p[1] == '(' && isdigit((unsigned char)p[2])))
      return PQACT_NMATCH;
  }
  return n;
}

/* Where check.c's messages about an entry go: with its line. */
struct checking {
  struct reader *r;
  unsigned line;
};

static void say_check(void *arg, bool error, const char *msg) {
  const struct checking *c = arg;
  tell(c->r, error, "%s at line %u", msg, c->line);
}

/* A pattern with a back-reference is the operator's own, and valid for
 * glibc, but one identifier can keep regexec() busy for ever
 * (docs/security.md, "Patterns from peers"): said, and kept. */
static void warn_backref(struct reader *r, const char *pat, unsigned line) {
  const char *ref = pq_ere_backref(pat);
  if (ref != NULL)
    tell(r, false,
         "back-reference \\%c in the pattern at line %u: matching it can "
         "take exponential time on one identifier, and pqact then acts on "
         "nothing else: \"%s\"",
         ref[1], line, pat);
}

/* Check one assembled entry and add it to the table. */
static int add_entry(struct reader *r, char *text, unsigned line) {
  char *p = text;
  while (*p == '\t')
    p++;
  char *ft = next_field(&p), *pat = next_field(&p), *act = next_field(&p);
  if (act == NULL) {
    tell(r, true, "syntax error at line %u, not enough fields", line);
    return 0;
  }
  struct pqact_entry e = {.line = line};
  int rc = pq_feedtype_parse(ft, &e.feedtype);
  if (rc != PQ_FT_OK) {
    tell(r, true, "feedtype error at line %u: %s: \"%s\"", line,
         pq_feedtype_strerror(rc), ft);
    return 0;
  }
  if (strlen(pat) > PQ_PATTERN_MAX) {
    tell(r, true, "pattern string too long at line %u: \"%s\"", line, pat);
    return 0;
  }
  if (strlen(pat) > 2 && strncmp(pat, ".*", 2) == 0) {
    tell(r, false,
         "adjusting pathological regular-expression at line %u: \"%s\"", line,
         pat);
    pat += 2;
  }
  snprintf(e.pattern, sizeof e.pattern, "%s", pat);
  e.is_else = strcmp(pat, PQACT_ELSE) == 0;
  if (!pq_ere_tame(pat)) {
    tell(r, true,
         "regcomp error at line %u: \"%s\": its repetitions would take too "
         "much memory to compile",
         line, pat);
    return 0;
  }
  rc = regcomp(&e.re, pat, REG_EXTENDED);
  if (rc != 0) {
    char why[256];
    regerror(rc, &e.re, why, sizeof why);
    tell(r, true, "regcomp error at line %u: \"%s\": %s", line, pat, why);
    return 0;
  }
  warn_backref(r, pat, line);
  if (action_parse(act, &e.action) != 0) {
    tell(r, true, "unknown action \"%s\" at line %u", act, line);
    regfree(&e.re);
    return 0;
  }
  struct checking ck = {.r = r, .line = line};
  if (pqact_check_args(e.action, p, e.re.re_nsub, say_check, &ck) > 0) {
    regfree(&e.re);
    return 0;
  }
  e.args = strdup(p);
  e.nmatch = args_nmatch(p);
  if (e.args == NULL) {
    regfree(&e.re);
    return -1;
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    struct pqact_entry *grown = realloc(r->entries, cap * sizeof *grown);
    if (grown == NULL) {
      regfree(&e.re);
      free(e.args);
      return -1;
    }
    r->entries = grown;
    r->cap = cap;
  }
  r->entries[r->n++] = e;
  return 0;
}

/* The index of the entries' patterns; NULL for no entries, or if out of
 * memory (the table walk then tries every entry, which gives the same
 * result more slowly).
 * ^_ELSE_$ is offered for every identifier: it fires on what no entry
 * before it matched, not on its pattern. */
static struct pqact_match *build_match(const struct pqact_entry *e, size_t n) {
  if (n == 0)
    return NULL; /* nothing to index, and an empty table owns no memory */
  const char **pats = calloc(n, sizeof *pats);
  bool *always = calloc(n, sizeof *always);
  struct pqact_match *m = NULL;
  if (pats != NULL && always != NULL) {
    for (size_t i = 0; i < n; i++) {
      pats[i] = e[i].pattern;
      always[i] = e[i].is_else;
    }
    m = pqact_match_new(pats, always, n);
  }
  free(pats);
  free(always);
  return m;
}

/* What is being assembled from the lines.  LDM reads an entry into one
 * 512-byte buffer, line by line: each line must arrive whole, its newline
 * and trailing blanks included, in what is left of the buffer; the
 * trailing blanks are then dropped, and a continuation's leading blanks
 * are skipped before it is read.  `len` counts what LDM holds. */
struct assembly {
  char buf[PQACT_ENTRY_MAX];
  size_t len;
  unsigned line; /* its first line; 0: none under way */
  bool too_long;
  bool glue; /* after an indented comment: the next line continues */
};

static int finish(struct reader *r, struct assembly *a) {
  int rc = 0;
  if (a->line == 0)
    return 0;
  if (a->too_long)
    tell(r, true, "entry too long at line %u", a->line);
  else
    rc = add_entry(r, a->buf, a->line);
  a->line = 0;
  a->len = 0;
  a->too_long = false;
  a->glue = false;
  return rc;
}

/* Add one line as LDM reads it (after a tab if it continues the entry):
 * raw (n bytes, its newline included if it has one) must fit whole, with
 * its newline, in what is left (a last line without one needs the room
 * too: LDM's fgets() then stops short of the end of the file), then its
 * trailing white space goes. */
static void append(struct assembly *a, bool continues, const char *raw,
                   size_t n) {
  size_t need = (continues ? 1 : 0) + n + (n > 0 && raw[n - 1] == '\n' ? 0 : 1);
  if (a->too_long)
    return;
  if (a->len + need > sizeof a->buf - 1) {
    a->too_long = true;
    return;
  }
  if (continues)
    a->buf[a->len++] = '\t';
  while (n > 0 && isspace((unsigned char)raw[n - 1]))
    n--;
  memcpy(a->buf + a->len, raw, n);
  a->len += n;
  a->buf[a->len] = '\0';
}

static void free_entries(struct pqact_entry *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    regfree(&e[i].re);
    pqact_submatch_free(e[i].sm);
    free(e[i].args);
  }
  free(e);
}

/* Is the line nothing but white space (and its newline)? */
static bool all_space(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isspace((unsigned char)s[i]))
      return false;
  return true;
}

int pqact_conf_read(FILE *f, struct pqact_conf *conf, pqact_conf_say_fn *say,
                    void *arg) {
  struct reader r = {.say = say, .arg = arg};
  struct assembly *a = calloc(1, sizeof *a);
  char *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  int status = 0;
  if (a == NULL)
    return -2;
  for (;;) {
    errno = 0;
    ssize_t got = getline(&line, &cap, f);
    if (got < 0) {
      if (ferror(f)) {
        tell(&r, true, "cannot read the file after line %u: %s", lineno,
             strerror(errno));
        status = -2;
      }
      break;
    }
    size_t n = (size_t)got;
    lineno++;
    if (a->glue) { /* LDM reads the line after "<blanks>#..." as it is */
      if (line[0] == '#' || line[0] == '\n')
        continue;
      append(a, true, line, n);
      a->glue = false;
      continue;
    }
    if (a->line != 0) { /* an entry is under way: does this line go on? */
      if (line[0] == '#')
        continue; /* a comment between continuation lines */
      if (blank(line[0])) {
        size_t skip = 0;
        while (skip < n && blank(line[skip]))
          skip++;
        if (all_space(line + skip, n - skip))
          continue; /* a blank line within the entry */
        if (line[skip] == '#') {
          /* an indented comment: skipped, and the next line that is not
           * a comment or empty continues the entry, whatever it starts
           * with (LDM's reader goes on reading into the entry) */
          a->glue = true;
          continue;
        }
        append(a, true, line + skip, n - skip);
        continue;
      }
      /* anything else, an empty line too, ends the entry */
      if (finish(&r, a) != 0) {
        status = -2;
        break;
      }
    }
    if (line[0] == '#' || all_space(line, n))
      continue; /* a comment or a blank line between entries */
    /* A new entry.  One that starts with a blank (the first line of the
     * file, or after an empty line) keeps it: the tabs are skipped when
     * the fields are split, as LDM's do. */
    a->line = lineno;
    append(a, false, line, n);
  }
  if (status == 0 && finish(&r, a) != 0)
    status = -2;
  if (status == -2 && errno == 0)
    errno = ENOMEM;
  free(line);
  free(a);
  if (status == 0 && r.nerrors > 0)
    status = -1;
  if (status != 0) {
    free_entries(r.entries, r.n);
    return status;
  }
  for (size_t i = 0; i < r.n; i++) /* NULL (regexec) if not shown same */
    if (r.entries[i].nmatch > 0 && !r.entries[i].is_else)
      r.entries[i].sm =
          pqact_submatch_new(r.entries[i].pattern, &r.entries[i].re);
  conf->entries = r.entries;
  conf->n = r.n;
  conf->match = build_match(r.entries, r.n);
  return 0;
}

void pqact_conf_free(struct pqact_conf *conf) {
  free_entries(conf->entries, conf->n);
  pqact_match_free(conf->match);
  conf->entries = NULL;
  conf->n = 0;
  conf->match = NULL;
}
