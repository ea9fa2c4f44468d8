/*
 * ldmd_conf.c - ldmd.conf: owns reading the file (LDM's lexical rules:
 * keywords only in column 1, quoting, comments, arguments continuing over
 * lines), checking every entry (feedsets, EREs, REQUEST hosts and ports,
 * EXEC words, INCLUDE paths, cycles and depth), and LDM's post-processing
 * of REQUESTs (reduction of overlapping requests to one server, primary and
 * alternate groups).  The access rules the server applies with the result
 * (ALLOW and ACCEPT) are in ldmd_access.c; the message helpers both use are
 * in ldmd_conf_internal.h.
 *
 * The parser never logs or exits.  Errors go into the caller's buffer as
 * "<file>:<line>: <what>"; warnings are kept in the configuration.  All
 * state lives in a conf_parser context and one conf_src per open file.
 */
#include "ldmd/site/ldmd_conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wordexp.h>

#include "ldmd/site/ldmd_conf_internal.h"

#define MAX_ARGS 9 /* MULTICAST's longest form */

/* ---------------------------------------------------------------------- */
/* Messages                                                               */
/* ---------------------------------------------------------------------- */

/* The hint a message gets when a string holds a carriage return. */
static const char *cr_hint(const char *s) {
  return strchr(s, '\r') != NULL
             ? " (a carriage return: is the file in DOS format?)"
             : "";
}

/* ---------------------------------------------------------------------- */
/* Parser state                                                           */
/* ---------------------------------------------------------------------- */

enum keyword {
  KW_NONE = 0,
  KW_ALLOW,
  KW_ACCEPT,
  KW_EXEC,
  KW_INCLUDE,
  KW_REQUEST,
  KW_RECEIVE,
  KW_MULTICAST,
  KW_COUNT
};

/* Entries: their name, the argument counts the grammar allows (bit n set:
 * n arguments), and a usage line. */
static const struct kw_info {
  const char *name;
  unsigned counts;
  unsigned max;
  const char *needs;
  const char *usage;
} kw_infos[KW_COUNT] = {
    [KW_ALLOW] = {"ALLOW", 1u << 2 | 1u << 3 | 1u << 4, 4, "2 to 4",
                  "ALLOW feedset hostERE [okERE [notERE]]"},
    [KW_ACCEPT] = {"ACCEPT", 1u << 3, 3, "3", "ACCEPT feedset prodERE hostERE"},
    [KW_EXEC] = {"EXEC", 1u << 1, 1, "1", "EXEC \"command\""},
    [KW_INCLUDE] = {"INCLUDE", 1u << 1, 1, "1", "INCLUDE path"},
    [KW_REQUEST] = {"REQUEST", 1u << 3 | 1u << 4, 4, "3 or 4",
                    "REQUEST feedset prodERE host[:port] [PRIMARY|ALTERNATE]"},
    [KW_RECEIVE] = {"RECEIVE", 1u << 2 | 1u << 5 | 1u << 6, 6, "2, 5 or 6",
                    "RECEIVE feedset server[:port] [iface switch port [vlan]]"},
    /* LDM's versions disagree on MULTICAST's forms; it is ignored here. */
    [KW_MULTICAST] = {"MULTICAST", 0x3fcu, 9, "2 to 9",
                      "MULTICAST feedset group[:port] ..."},
};

/* One token.  text is owned (NULL at end of file). */
typedef struct conf_tok {
  enum keyword kw; /* KW_NONE: a string */
  bool eof;
  bool quoted;
  bool bol;      /* began in column 1 */
  bool indented; /* first on its line, after white space */
  unsigned line;
  char *text;
} conf_tok;

/* One open file: its text, the read position, and one token of
 * lookahead.  parent is the including file (NULL for the top one). */
typedef struct conf_src {
  const char *path;
  char *buf;
  size_t len;
  size_t pos;
  unsigned line;
  dev_t dev;
  ino_t ino;
  unsigned depth;
  const struct conf_src *parent;
  unsigned parent_line; /* the INCLUDE's line in parent */
  const char *inc_text; /* the INCLUDE's argument as written */
  conf_tok ahead;
  bool have_ahead;
} conf_src;

typedef struct conf_parser {
  ldm_conf *conf;
  char *err;
  size_t errlen;
  size_t cap_allows, cap_accepts, cap_requests, cap_execs;
  size_t cap_files, cap_warnings;
} conf_parser;

static void tok_free(conf_tok *t) {
  free(t->text);
  t->text = NULL;
}

/* Room for one more element at index n: the (maybe moved) array or NULL. */
static void *grow(void *arr, size_t *cap, size_t n, size_t size) {
  size_t ncap;
  void *p;

  if (n < *cap)
    return arr;
  ncap = *cap == 0 ? 8 : *cap * 2;
  if (ncap > SIZE_MAX / size)
    return NULL;
  p = realloc(arr, ncap * size);
  if (p != NULL)
    *cap = ncap;
  return p;
}

static int nomem(conf_parser *p) {
  set_err(p->err, p->errlen, "out of memory reading the configuration");
  return LDM_CONF_ENOMEM;
}

/* An error in file s at line: "<file>:<line>: <what> (included from..)". */
static int fail(conf_parser *p, const conf_src *s, unsigned line,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(conf_parser *p, const conf_src *s, unsigned line,
                const char *fmt, ...) {
  sbuf sb = sb_over(p->err, p->errlen);
  const conf_src *a;
  va_list ap;

  sb_printf(&sb, "%s:%u: ", s->path, line);
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  for (a = s; a->parent != NULL; a = a->parent)
    sb_printf(&sb, " (included from %s:%u)", a->parent->path, a->parent_line);
  return LDM_CONF_ESYNTAX;
}

/* Keep a warning "<file>:<line>: <what>" in the configuration. */
static int warn(conf_parser *p, const char *path, unsigned line,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int warn(conf_parser *p, const char *path, unsigned line,
                const char *fmt, ...) {
  ldm_conf *conf = p->conf;
  sbuf sb = {NULL, 0, 0};
  char **list;
  char *text;
  va_list ap;

  sb_printf(&sb, "%s:%u: ", path, line);
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  text = malloc(sb.want + 1);
  list = grow(conf->warnings, &p->cap_warnings, conf->nwarnings, sizeof *list);
  if (text == NULL || list == NULL) {
    free(text);
    return nomem(p);
  }
  conf->warnings = list;
  sb = sb_over(text, sb.want + 1);
  sb_printf(&sb, "%s:%u: ", path, line);
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  list[conf->nwarnings++] = text;
  return LDM_CONF_OK;
}

/* ---------------------------------------------------------------------- */
/* Reading a file                                                         */
/* ---------------------------------------------------------------------- */

/* Read a whole regular file.  Opened non-blocking so that a FIFO named by
 * mistake cannot hang the parse; anything but a regular file is refused. */
static int read_file(const char *path, conf_src *s, char *why, size_t wlen) {
  struct stat st;
  size_t got = 0;
  int fd;

  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    snprintf(why, wlen, "%s", strerror(errno));
    return LDM_CONF_EIO;
  }
  if (fstat(fd, &st) != 0) {
    snprintf(why, wlen, "%s", strerror(errno));
    close(fd);
    return LDM_CONF_EIO;
  }
  if (!S_ISREG(st.st_mode) || (uintmax_t)st.st_size > LDM_CONF_MAX_FILE) {
    snprintf(why, wlen, "%s",
             !S_ISREG(st.st_mode) ? "not a regular file" : "file too large");
    close(fd);
    return LDM_CONF_EIO;
  }
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  s->buf = malloc((size_t)st.st_size + 1);
  if (s->buf == NULL) {
    close(fd);
    return LDM_CONF_ENOMEM;
  }
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, s->buf + got, (size_t)st.st_size - got);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      snprintf(why, wlen, "%s", strerror(errno));
      close(fd);
      return LDM_CONF_EIO;
    }
    if (n == 0)
      break; /* the file shrank: take what is there */
    got += (size_t)n;
  }
  close(fd);
  s->buf[got] = '\0';
  s->len = got;
  return LDM_CONF_OK;
}

/* A relative INCLUDE is relative to the including file's directory. */
static char *include_path(const char *including, const char *path) {
  const char *slash = strrchr(including, '/');
  size_t dlen, plen = strlen(path);
  char *out;

  if (path[0] == '/' || slash == NULL)
    return strdup(path);
  dlen = (size_t)(slash - including) + 1; /* keeps the '/' */
  out = malloc(dlen + plen + 1);
  if (out != NULL) {
    memcpy(out, including, dlen);
    memcpy(out + dlen, path, plen + 1);
  }
  return out;
}

static int remember_file(conf_parser *p, const char *path, const char **kept) {
  ldm_conf *conf = p->conf;
  char **files = grow(conf->files, &p->cap_files, conf->nfiles, sizeof *files);
  char *copy = strdup(path);

  if (files == NULL || copy == NULL) {
    free(copy);
    return nomem(p);
  }
  conf->files = files;
  files[conf->nfiles++] = copy;
  *kept = copy;
  return LDM_CONF_OK;
}

/* ---------------------------------------------------------------------- */
/* Lexer                                                                  */
/* ---------------------------------------------------------------------- */

static bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\n';
}

/* A column-1 word that is a keyword (any case; POLL only as POLL/poll). */
static enum keyword keyword_of(const char *w) {
  int k;

  if (strcmp(w, "POLL") == 0 || strcmp(w, "poll") == 0)
    return KW_REQUEST;
  for (k = KW_ALLOW; k < KW_COUNT; k++)
    if (strcasecmp(w, kw_infos[k].name) == 0)
      return (enum keyword)k;
  return KW_NONE;
}

/* An indented keyword: legal as a string, and almost always a mistake. */
static bool misplaced_keyword(const conf_tok *t) {
  return t->indented && !t->quoted && keyword_of(t->text) != KW_NONE;
}

static int lex_quoted(conf_parser *p, conf_src *s, conf_tok *t) {
  size_t i, j = s->pos + 1, n = 0;
  bool esc = false;

  while (j < s->len) {
    if (esc)
      esc = false;
    else if (s->buf[j] == '\\')
      esc = true;
    else if (s->buf[j] == '"')
      break;
    j++;
  }
  if (j >= s->len)
    return fail(p, s, t->line, "quoted string never ends");
  if (j - s->pos - 1 > LDM_CONF_MAX_TOKEN)
    return fail(p, s, t->line, "quoted string longer than %d characters",
                LDM_CONF_MAX_TOKEN);
  t->text = malloc(j - s->pos);
  if (t->text == NULL)
    return nomem(p);
  esc = false;
  for (i = s->pos + 1; i < j; i++) {
    if (s->buf[i] == '\n')
      s->line++;
    if (s->buf[i] == '\\' && !esc) {
      esc = true;
      continue;
    }
    esc = false;
    t->text[n++] = s->buf[i];
  }
  t->text[n] = '\0';
  t->quoted = true;
  s->pos = j + 1;
  return LDM_CONF_OK;
}

static int lex_plain(conf_parser *p, conf_src *s, conf_tok *t) {
  size_t start = s->pos, n;

  while (s->pos < s->len) {
    char c = s->buf[s->pos];

    if (c == '\\' && s->pos + 1 < s->len && s->buf[s->pos + 1] == '"') {
      s->pos += 2; /* \" stays in an unquoted string, both characters */
      continue;
    }
    if (is_blank(c) || c == '"')
      break;
    s->pos++;
  }
  n = s->pos - start;
  if (n > LDM_CONF_MAX_TOKEN)
    return fail(p, s, t->line, "string longer than %d characters",
                LDM_CONF_MAX_TOKEN);
  t->text = strndup(s->buf + start, n);
  if (t->text == NULL)
    return nomem(p);
  if (t->bol)
    t->kw = keyword_of(t->text);
  return LDM_CONF_OK;
}

/* Only white space between the start of the line and the position? */
static bool first_on_line(const conf_src *s) {
  size_t k = s->pos;

  while (k > 0 && s->buf[k - 1] != '\n') {
    if (!is_blank(s->buf[k - 1]))
      return false;
    k--;
  }
  return true;
}

/* The next token of s: white space and comments skipped. */
static int lex(conf_parser *p, conf_src *s, conf_tok *t) {
  memset(t, 0, sizeof *t);
  for (;;) {
    while (s->pos < s->len && is_blank(s->buf[s->pos])) {
      if (s->buf[s->pos] == '\n')
        s->line++;
      s->pos++;
    }
    if (s->pos >= s->len || s->buf[s->pos] != '#')
      break;
    while (s->pos < s->len && s->buf[s->pos] != '\n')
      s->pos++;
  }
  t->line = s->line;
  if (s->pos >= s->len) {
    t->eof = true;
    return LDM_CONF_OK;
  }
  t->bol = s->pos == 0 || s->buf[s->pos - 1] == '\n';
  t->indented = !t->bol && first_on_line(s);
  if (s->buf[s->pos] == '"')
    return lex_quoted(p, s, t);
  return lex_plain(p, s, t);
}

static int next_tok(conf_parser *p, conf_src *s, conf_tok *t) {
  if (s->have_ahead) {
    *t = s->ahead;
    s->have_ahead = false;
    return LDM_CONF_OK;
  }
  return lex(p, s, t);
}

/* ---------------------------------------------------------------------- */
/* Pieces of entries                                                      */
/* ---------------------------------------------------------------------- */

static int parse_feedset(conf_parser *p, const conf_src *s, const conf_tok *t,
                         uint32_t *ft) {
  int rc = pq_feedtype_parse(t->text, ft);

  if (rc != PQ_FT_OK) {
    char b[SHOW_LEN];

    return fail(p, s, t->line, "bad feedset \"%s\": %s%s", show(t->text, b),
                pq_feedtype_strerror(rc), cr_hint(t->text));
  }
  return LDM_CONF_OK;
}

/* LDM's re_vetSpec: leading ".*" go while more than two characters stay. */
static const char *vet_ere(const char *ere) {
  size_t len = strlen(ere);

  while (len > 2 && ere[0] == '.' && ere[1] == '*') {
    ere += 2;
    len -= 2;
  }
  return ere;
}

/*
 * Compile the ERE of token t (what names it in messages) with flags, after
 * LDM's ".*" stripping.  On success re is compiled and, when kept is not
 * NULL, *kept is a copy of the ERE as compiled.
 */
static int compile_ere(conf_parser *p, const conf_src *s, const conf_tok *t,
                       const char *what, int flags, regex_t *re, char **kept) {
  const char *ere = vet_ere(t->text);
  char b[SHOW_LEN];
  int rc;

  if (ere != t->text) {
    rc = warn(p, s->path, t->line, "%s \"%s\" begins with \".*\": using \"%s\"",
              what, show(t->text, b), ere);
    if (rc != LDM_CONF_OK)
      return rc;
  }
  if (!pq_ere_tame(ere))
    return fail(p, s, t->line,
                "bad %s \"%s\": too complex (repetitions stacked or nested "
                "too deeply)",
                what, show(t->text, b));
  rc = regcomp(re, ere, flags);
  if (rc != 0) {
    char msg[ERE_ERRLEN];

    regerror(rc, re, msg, sizeof msg);
    return fail(p, s, t->line, "bad %s \"%s\": %s%s", what, show(t->text, b),
                msg, cr_hint(t->text));
  }
  if (kept != NULL) {
    *kept = strdup(ere);
    if (*kept == NULL) {
      regfree(re);
      return nomem(p);
    }
  }
  return LDM_CONF_OK;
}

/* A host ERE: not empty; REG_ICASE, since host names have no case. */
static int host_ere(conf_parser *p, const conf_src *s, const conf_tok *t,
                    regex_t *re, char **kept) {
  if (t->text[0] == '\0')
    return fail(p, s, t->line, "empty host ERE");
  return compile_ere(p, s, t, "host ERE", REG_EXTENDED | REG_ICASE | REG_NOSUB,
                     re, kept);
}

/* A product ERE that travels in a product class: not empty, not longer
 * than a class holds, and it must compile (then it is not kept). */
static int product_ere(conf_parser *p, const conf_src *s, const conf_tok *t) {
  regex_t re;
  int rc;

  if (t->text[0] == '\0')
    return fail(p, s, t->line, "empty product ERE");
  if (strlen(t->text) > PQ_PATTERN_MAX)
    return fail(p, s, t->line, "product ERE longer than %d characters",
                PQ_PATTERN_MAX);
  rc = compile_ere(p, s, t, "product ERE", REG_EXTENDED | REG_NOSUB, &re, NULL);
  if (rc == LDM_CONF_OK)
    regfree(&re);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* ALLOW, ACCEPT, EXEC                                                    */
/* ---------------------------------------------------------------------- */

static void allow_free(ldm_conf_allow *a) {
  if (a->host_ere != NULL)
    regfree(&a->host_re);
  if (a->ok_ere != NULL && !a->ok_all)
    regfree(&a->ok_re);
  if (a->not_ere != NULL)
    regfree(&a->not_re);
  free(a->host_ere);
  free(a->ok_ere);
  free(a->not_ere);
}

/* The OK and NOT EREs of an ALLOW: case-sensitive; OK ".*" needs none. */
static int allow_patterns(conf_parser *p, const conf_src *s,
                          const conf_tok *args, size_t nargs,
                          ldm_conf_allow *a) {
  int rc = LDM_CONF_OK;

  if (nargs < 3 || strcmp(vet_ere(args[2].text), ".*") == 0) {
    a->ok_all = true;
    a->ok_ere = strdup(".*");
    if (a->ok_ere == NULL)
      return nomem(p);
  } else {
    rc = compile_ere(p, s, &args[2], "OK ERE", REG_EXTENDED | REG_NOSUB,
                     &a->ok_re, &a->ok_ere);
  }
  if (rc == LDM_CONF_OK && nargs == 4)
    rc = compile_ere(p, s, &args[3], "NOT ERE", REG_EXTENDED | REG_NOSUB,
                     &a->not_re, &a->not_ere);
  return rc;
}

static int add_allow(conf_parser *p, const conf_src *s, unsigned line,
                     const conf_tok *args, size_t nargs) {
  ldm_conf *conf = p->conf;
  ldm_conf_allow a, *list;
  int rc;

  memset(&a, 0, sizeof a);
  a.where = (ldm_conf_origin){s->path, line};
  rc = parse_feedset(p, s, &args[0], &a.feedtype);
  if (rc == LDM_CONF_OK)
    rc = host_ere(p, s, &args[1], &a.host_re, &a.host_ere);
  if (rc == LDM_CONF_OK)
    rc = allow_patterns(p, s, args, nargs, &a);
  if (rc == LDM_CONF_OK) {
    list = grow(conf->allows, &p->cap_allows, conf->nallows, sizeof *list);
    if (list == NULL)
      rc = nomem(p);
  }
  if (rc != LDM_CONF_OK) {
    allow_free(&a);
    return rc;
  }
  conf->allows = list;
  list[conf->nallows++] = a;
  return LDM_CONF_OK;
}

static void accept_free(ldm_conf_accept *a) {
  if (a->host_ere != NULL)
    regfree(&a->host_re);
  free(a->host_ere);
  free(a->pattern);
}

static int add_accept(conf_parser *p, const conf_src *s, unsigned line,
                      const conf_tok *args) {
  ldm_conf *conf = p->conf;
  ldm_conf_accept a, *list;
  int rc;

  memset(&a, 0, sizeof a);
  a.where = (ldm_conf_origin){s->path, line};
  rc = parse_feedset(p, s, &args[0], &a.feedtype);
  if (rc == LDM_CONF_OK)
    rc = product_ere(p, s, &args[1]);
  if (rc == LDM_CONF_OK) {
    a.pattern = strdup(args[1].text);
    rc = a.pattern == NULL ? nomem(p) : LDM_CONF_OK;
  }
  if (rc == LDM_CONF_OK)
    rc = host_ere(p, s, &args[2], &a.host_re, &a.host_ere);
  if (rc == LDM_CONF_OK) {
    list = grow(conf->accepts, &p->cap_accepts, conf->naccepts, sizeof *list);
    if (list == NULL)
      rc = nomem(p);
  }
  if (rc != LDM_CONF_OK) {
    accept_free(&a);
    return rc;
  }
  conf->accepts = list;
  list[conf->naccepts++] = a;
  return LDM_CONF_OK;
}

static void exec_free(ldm_conf_exec *e) {
  if (e->argv != NULL) {
    size_t i;

    for (i = 0; i < e->argc; i++)
      free(e->argv[i]);
  }
  free(e->argv);
  free(e->command);
}

static const char *wordexp_why(int rc) {
  switch (rc) {
  case WRDE_BADCHAR:
    return "a character such as | & ; < > ( ) { } needs quoting";
  case WRDE_CMDSUB:
    return "command substitution is not allowed";
  case WRDE_SYNTAX:
    return "shell syntax error, such as an unbalanced quote";
  case WRDE_NOSPACE:
    return "out of memory";
  default:
    return "cannot split it into words";
  }
}

/* Copy wordexp's words into e (owned), so the configuration owns them. */
static int exec_words(ldm_conf_exec *e, const wordexp_t *we) {
  size_t i;

  e->argv = calloc(we->we_wordc + 1, sizeof *e->argv);
  if (e->argv == NULL)
    return -1;
  for (i = 0; i < we->we_wordc; i++) {
    e->argv[i] = strdup(we->we_wordv[i]);
    if (e->argv[i] == NULL)
      return -1;
    e->argc = i + 1;
  }
  return 0;
}

static int add_exec(conf_parser *p, const conf_src *s, unsigned line,
                    const conf_tok *cmd) {
  ldm_conf *conf = p->conf;
  ldm_conf_exec e, *list;
  wordexp_t we;
  int rc;

  memset(&e, 0, sizeof e);
  memset(&we, 0, sizeof we);
  e.where = (ldm_conf_origin){s->path, line};
  rc = wordexp(cmd->text, &we, WRDE_NOCMD);
  if (rc != 0) {
    char b[SHOW_LEN];

    if (rc == WRDE_NOSPACE)
      wordfree(&we);
    return fail(p, s, cmd->line, "bad EXEC command \"%s\": %s",
                show(cmd->text, b), wordexp_why(rc));
  }
  if (we.we_wordc == 0) {
    wordfree(&we);
    return fail(p, s, cmd->line, "empty EXEC command");
  }
  e.command = strdup(cmd->text);
  rc = e.command == NULL || exec_words(&e, &we) != 0 ? nomem(p) : LDM_CONF_OK;
  wordfree(&we);
  if (rc == LDM_CONF_OK) {
    list = grow(conf->execs, &p->cap_execs, conf->nexecs, sizeof *list);
    if (list == NULL)
      rc = nomem(p);
  }
  if (rc != LDM_CONF_OK) {
    exec_free(&e);
    return rc;
  }
  conf->execs = list;
  list[conf->nexecs++] = e;
  return LDM_CONF_OK;
}

/* ---------------------------------------------------------------------- */
/* REQUEST                                                                */
/* ---------------------------------------------------------------------- */

static void request_free(ldm_conf_request *r) {
  free(r->pattern);
  free(r->host);
}

/* "[v6]" with an optional "%zone": the address part must parse. */
static bool valid_ipv6(const char *host, size_t len) {
  char addr[INET6_ADDRSTRLEN];
  struct in6_addr in6;
  const char *pct = memchr(host, '%', len);
  size_t alen = pct != NULL ? (size_t)(pct - host) : len;

  if (alen == 0 || alen >= sizeof addr || (pct != NULL && alen + 1 == len))
    return false;
  memcpy(addr, host, alen);
  addr[alen] = '\0';
  return inet_pton(AF_INET6, addr, &in6) == 1;
}

/* LDM: strtol base 0, all of it, 1-65535. */
static int parse_port(conf_parser *p, const conf_src *s, const conf_tok *t,
                      const char *text, unsigned *port) {
  char *end;
  long v;

  errno = 0;
  v = strtol(text, &end, 0);
  if (errno != 0 || *end != '\0' || v < 1 || v > 65535) {
    char b[SHOW_LEN];

    return fail(p, s, t->line, "bad port \"%s\" in \"%s\": not 1-65535%s", text,
                show(t->text, b), cr_hint(text));
  }
  *port = (unsigned)v;
  return LDM_CONF_OK;
}

/*
 * host, host:port, [v6], [v6]:port.  As with LDM's strtok split, an empty
 * port ("host:") is the default port.  A second ':' outside brackets is an
 * error: it is almost certainly an IPv6 address without its brackets.
 */
static int parse_hostport(conf_parser *p, const conf_src *s, const conf_tok *t,
                          ldm_conf_request *r) {
  const char *spec = t->text, *host = spec, *port = NULL, *colon;
  char b[SHOW_LEN];
  size_t hlen;

  if (spec[0] == '[') {
    const char *close = strchr(spec, ']');

    if (close == NULL)
      return fail(p, s, t->line, "\"%s\": no \"]\" after the IPv6 address",
                  show(spec, b));
    if (close[1] != '\0' && close[1] != ':')
      return fail(p, s, t->line, "\"%s\": only \":port\" may follow \"]\"",
                  show(spec, b));
    host = spec + 1;
    hlen = (size_t)(close - host);
    if (!valid_ipv6(host, hlen))
      return fail(p, s, t->line, "\"%s\": not an IPv6 address", show(spec, b));
    r->ipv6 = true;
    port = close[1] == ':' ? close + 2 : NULL;
  } else {
    colon = strchr(spec, ':');
    if (colon != NULL && strchr(colon + 1, ':') != NULL)
      return fail(p, s, t->line,
                  "\"%s\": more than one \":\" (write an IPv6 address in "
                  "brackets, as [::1]:388)",
                  show(spec, b));
    hlen = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    port = colon != NULL ? colon + 1 : NULL;
  }
  if (hlen == 0)
    return fail(p, s, t->line, "\"%s\": no host name", show(spec, b));
  r->host = strndup(host, hlen);
  if (r->host == NULL)
    return nomem(p);
  r->port = p->conf->default_port;
  if (port == NULL || *port == '\0')
    return LDM_CONF_OK;
  r->port_given = true;
  return parse_port(p, s, t, port, &r->port);
}

/* The fifth word: recorded, otherwise ignored (LDM ignores it). */
static int request_word(conf_parser *p, const conf_src *s, const conf_tok *t,
                        ldm_conf_request *r) {
  char b[SHOW_LEN];

  if (strcasecmp(t->text, "PRIMARY") == 0) {
    r->word = LDM_CONF_WORD_PRIMARY;
  } else if (strcasecmp(t->text, "ALTERNATE") == 0) {
    r->word = LDM_CONF_WORD_ALTERNATE;
  } else {
    r->word = LDM_CONF_WORD_OTHER;
    return warn(p, s->path, t->line, "REQUEST field \"%s\" ignored%s",
                show(t->text, b), cr_hint(t->text));
  }
  return LDM_CONF_OK;
}

static const char *server_text(const ldm_conf_request *r, char *buf,
                               size_t len) {
  char b[SHOW_LEN];

  snprintf(buf, len, r->ipv6 ? "[%s]:%u" : "%s:%u", show(r->host, b), r->port);
  return buf;
}

/*
 * LDM's reduction: a REQUEST to the same host string and port as earlier
 * ones, with a byte-identical ERE, loses their feedtype bits; with none
 * left it is dropped.  Both events are warnings.  *keep says whether r
 * stays.
 */
static int reduce_request(conf_parser *p, const conf_src *s,
                          ldm_conf_request *r, bool *keep) {
  const ldm_conf *conf = p->conf;
  char f1[FT_LEN], b[SHOW_LEN], srv[SHOW_LEN + 16];
  size_t i;

  for (i = 0; i < conf->nrequests; i++) {
    const ldm_conf_request *e = &conf->requests[i];

    if (e->port == r->port && strcmp(e->host, r->host) == 0 &&
        strcmp(e->pattern, r->pattern) == 0)
      r->feedtype &= ~e->feedtype;
  }
  *keep = r->feedtype != PQ_FT_NONE;
  server_text(r, srv, sizeof srv);
  if (!*keep)
    return warn(p, s->path, r->where.line,
                "REQUEST (%s, \"%s\") to %s ignored: earlier REQUESTs to "
                "that server cover it, or it asks for nothing",
                ft_text(r->written, f1), show(r->pattern, b), srv);
  if (r->feedtype != r->written) {
    char f2[FT_LEN];

    return warn(p, s->path, r->where.line,
                "REQUEST (%s, \"%s\") to %s reduced to %s by earlier "
                "REQUESTs to that server with the same ERE",
                ft_text(r->written, f1), show(r->pattern, b), srv,
                ft_text(r->feedtype, f2));
  }
  return LDM_CONF_OK;
}

static int add_request(conf_parser *p, const conf_src *s, unsigned line,
                       const conf_tok *args, size_t nargs) {
  ldm_conf *conf = p->conf;
  ldm_conf_request r, *list = NULL;
  bool keep = false;
  int rc;

  memset(&r, 0, sizeof r);
  r.where = (ldm_conf_origin){s->path, line};
  conf->nrequest_entries++;
  rc = parse_feedset(p, s, &args[0], &r.written);
  if (rc == LDM_CONF_OK)
    rc = product_ere(p, s, &args[1]);
  if (rc == LDM_CONF_OK) {
    r.pattern = strdup(args[1].text);
    rc = r.pattern == NULL ? nomem(p) : LDM_CONF_OK;
  }
  if (rc == LDM_CONF_OK)
    rc = parse_hostport(p, s, &args[2], &r);
  if (rc == LDM_CONF_OK && nargs == 4)
    rc = request_word(p, s, &args[3], &r);
  r.feedtype = r.written;
  if (rc == LDM_CONF_OK)
    rc = reduce_request(p, s, &r, &keep);
  if (rc == LDM_CONF_OK && keep) {
    list =
        grow(conf->requests, &p->cap_requests, conf->nrequests, sizeof *list);
    if (list == NULL)
      rc = nomem(p);
  }
  if (rc != LDM_CONF_OK || !keep) {
    request_free(&r);
    return rc;
  }
  conf->requests = list;
  list[conf->nrequests++] = r;
  return LDM_CONF_OK;
}

/*
 * LDM's initial modes (section 4.7): REQUESTs with the same (feedtype, ERE)
 * form a group; the first in file order starts primary.  More than two in a
 * group is worth a warning: autoshift does not work well then.
 */
static int group_requests(conf_parser *p) {
  ldm_conf *conf = p->conf;
  char f[FT_LEN], b[SHOW_LEN];
  unsigned ngroups = 0;
  size_t i, j;
  int rc = LDM_CONF_OK;

  for (i = 0; i < conf->nrequests; i++) {
    ldm_conf_request *r = &conf->requests[i];

    for (j = 0; j < i; j++)
      if (conf->requests[j].feedtype == r->feedtype &&
          strcmp(conf->requests[j].pattern, r->pattern) == 0)
        break;
    r->primary = j == i;
    r->group = j == i ? ngroups++ : conf->requests[j].group;
  }
  for (i = 0; i < conf->nrequests; i++) {
    ldm_conf_request *r = &conf->requests[i];

    r->group_size = 0;
    for (j = 0; j < conf->nrequests; j++)
      r->group_size += conf->requests[j].group == r->group;
  }
  for (i = 0; i < conf->nrequests && rc == LDM_CONF_OK; i++) {
    const ldm_conf_request *r = &conf->requests[i];

    if (!r->primary || r->group_size <= 2)
      continue;
    rc = warn(p, r->where.file, r->where.line,
              "%u REQUESTs ask for (%s, \"%s\"): switching between primary "
              "and alternate mode won't work correctly with more than 2",
              r->group_size, ft_text(r->feedtype, f), show(r->pattern, b));
  }
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Entries and files                                                      */
/* ---------------------------------------------------------------------- */

static int parse_file(conf_parser *p, const char *path, const conf_src *parent,
                      const conf_tok *inc);

static int do_include(conf_parser *p, const conf_src *s, const conf_tok *t) {
  char *path;
  int rc;

  if (t->text[0] == '\0')
    return fail(p, s, t->line, "empty INCLUDE path");
  path = include_path(s->path, t->text);
  if (path == NULL)
    return nomem(p);
  rc = parse_file(p, path, s, t);
  free(path);
  return rc;
}

static int do_ignored(conf_parser *p, const conf_src *s, const conf_tok *kw) {
  p->conf->nignored++;
  return warn(p, s->path, kw->line,
              "%s entry ignored: this server does not do LDM-7 multicast",
              kw_infos[kw->kw].name);
}

static int dispatch(conf_parser *p, const conf_src *s, const conf_tok *kw,
                    const conf_tok *args, size_t nargs) {
  switch (kw->kw) {
  case KW_ALLOW:
    return add_allow(p, s, kw->line, args, nargs);
  case KW_ACCEPT:
    return add_accept(p, s, kw->line, args);
  case KW_EXEC:
    return add_exec(p, s, kw->line, &args[0]);
  case KW_INCLUDE:
    return do_include(p, s, &args[0]);
  case KW_REQUEST:
    return add_request(p, s, kw->line, args, nargs);
  default:
    return do_ignored(p, s, kw);
  }
}

/* The error for string t where a keyword was due (after entry "after",
 * or at the top of the file when after is NULL). */
static int stray(conf_parser *p, const conf_src *s, const conf_tok *t,
                 const char *after) {
  const char *hint =
      misplaced_keyword(t) ? " (keywords must start in column 1)" : "";
  char b[SHOW_LEN];

  if (after == NULL)
    return fail(p, s, t->line,
                "expected an entry (ALLOW, ACCEPT, EXEC, INCLUDE, REQUEST) "
                "but found \"%s\"%s%s",
                show(t->text, b), hint, cr_hint(t->text));
  return fail(p, s, t->line, "unexpected \"%s\" after a complete %s entry%s%s",
              show(t->text, b), after, hint, cr_hint(t->text));
}

/*
 * The arguments of the entry kw: every string up to the next keyword or the
 * end of the file (which stays as lookahead).  LDM's grammar fixes how many
 * each entry takes; an extra string is an error at its own line.
 */
static int collect_args(conf_parser *p, conf_src *s, const conf_tok *kw,
                        conf_tok *args, size_t *nargs) {
  const struct kw_info *info = &kw_infos[kw->kw];
  conf_tok t;

  for (;;) {
    int rc = next_tok(p, s, &t);

    if (rc != LDM_CONF_OK)
      return rc;
    if (t.eof || t.kw != KW_NONE) {
      s->ahead = t;
      s->have_ahead = true;
      break;
    }
    if (*nargs == info->max) {
      rc = stray(p, s, &t, info->name);
      tok_free(&t);
      return rc;
    }
    args[(*nargs)++] = t;
  }
  if ((info->counts & 1u << *nargs) == 0)
    return fail(p, s, kw->line, "%s needs %s arguments (%s), not %zu",
                info->name, info->needs, info->usage, *nargs);
  return LDM_CONF_OK;
}

/* An argument spelled like a keyword but not in column 1 is legal and
 * almost always a mistake (an indented entry): say so. */
static int warn_indented(conf_parser *p, const conf_src *s,
                         const conf_tok *args, size_t nargs) {
  char b[SHOW_LEN];
  size_t i;
  int rc = LDM_CONF_OK;

  for (i = 0; i < nargs && rc == LDM_CONF_OK; i++)
    if (misplaced_keyword(&args[i]))
      rc = warn(p, s->path, args[i].line,
                "\"%s\" is taken as an argument, not a keyword: keywords "
                "must start in column 1",
                show(args[i].text, b));
  return rc;
}

static int parse_entries(conf_parser *p, conf_src *s) {
  conf_tok kw, args[MAX_ARGS];
  size_t i, nargs;

  for (;;) {
    int rc = next_tok(p, s, &kw);

    if (rc != LDM_CONF_OK || kw.eof)
      return rc;
    if (kw.kw == KW_NONE) {
      rc = stray(p, s, &kw, NULL);
      tok_free(&kw);
      return rc;
    }
    nargs = 0;
    rc = collect_args(p, s, &kw, args, &nargs);
    if (rc == LDM_CONF_OK)
      rc = warn_indented(p, s, args, nargs);
    if (rc == LDM_CONF_OK)
      rc = dispatch(p, s, &kw, args, nargs);
    for (i = 0; i < nargs; i++)
      tok_free(&args[i]);
    tok_free(&kw);
    if (rc != LDM_CONF_OK)
      return rc;
  }
}

/* Open, check and load one file of the INCLUDE tree. */
static int open_src(conf_parser *p, const char *path, conf_src *s) {
  const conf_src *parent = s->parent, *a;
  char why[160], b[SHOW_LEN];
  const char *nul;
  int rc;

  if (parent != NULL && s->depth > LDM_CONF_MAX_DEPTH)
    return fail(p, parent, s->parent_line,
                "INCLUDE \"%s\": files nested more than %d deep",
                show(s->inc_text, b), LDM_CONF_MAX_DEPTH);
  rc = read_file(path, s, why, sizeof why);
  if (rc == LDM_CONF_ENOMEM)
    return nomem(p);
  if (rc != LDM_CONF_OK && parent == NULL) {
    set_err(p->err, p->errlen, "cannot read %s: %s", path, why);
    return rc;
  }
  if (rc != LDM_CONF_OK) {
    fail(p, parent, s->parent_line, "cannot read included file %s: %s",
         show(path, b), why);
    return rc;
  }
  for (a = parent; a != NULL; a = a->parent)
    if (a->dev == s->dev && a->ino == s->ino)
      return fail(p, parent, s->parent_line,
                  "INCLUDE \"%s\" makes a cycle: %s is already being read",
                  show(s->inc_text, b), a->path);
  rc = remember_file(p, path, &s->path);
  if (rc != LDM_CONF_OK)
    return rc;
  nul = memchr(s->buf, '\0', s->len);
  if (nul != NULL) {
    const char *c;

    for (c = s->buf; c < nul; c++)
      s->line += *c == '\n';
    return fail(p, s, s->line, "NUL character in the file");
  }
  return LDM_CONF_OK;
}

static int parse_file(conf_parser *p, const char *path, const conf_src *parent,
                      const conf_tok *inc) {
  conf_src s;
  int rc;

  memset(&s, 0, sizeof s);
  s.path = path;
  s.line = 1;
  s.parent = parent;
  if (inc != NULL) {
    s.parent_line = inc->line;
    s.inc_text = inc->text;
  }
  s.depth = parent != NULL ? parent->depth + 1 : 0;
  rc = open_src(p, path, &s);
  if (rc == LDM_CONF_OK)
    rc = parse_entries(p, &s);
  if (s.have_ahead)
    tok_free(&s.ahead);
  free(s.buf);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Public: parsing                                                        */
/* ---------------------------------------------------------------------- */

int ldm_conf_parse_opts(const char *path, const ldm_conf_options *opts,
                        ldm_conf **out, char *err, size_t errlen) {
  conf_parser p;
  int rc;

  if (out != NULL)
    *out = NULL;
  if (path == NULL || out == NULL) {
    set_err(err, errlen, "ldm_conf_parse: NULL argument");
    return LDM_CONF_EINVAL;
  }
  memset(&p, 0, sizeof p);
  p.err = err;
  p.errlen = errlen;
  p.conf = calloc(1, sizeof *p.conf);
  if (p.conf == NULL)
    return nomem(&p);
  p.conf->default_port = opts != NULL && opts->default_port != 0
                             ? opts->default_port
                             : LDM_CONF_DEFAULT_PORT;
  rc = parse_file(&p, path, NULL, NULL);
  if (rc == LDM_CONF_OK)
    rc = group_requests(&p);
  if (rc != LDM_CONF_OK) {
    ldm_conf_free(p.conf);
    return rc;
  }
  set_err(err, errlen, "%s", "");
  *out = p.conf;
  return LDM_CONF_OK;
}

int ldm_conf_parse(const char *path, ldm_conf **out, char *err, size_t errlen) {
  return ldm_conf_parse_opts(path, NULL, out, err, errlen);
}

void ldm_conf_free(ldm_conf *conf) {
  size_t i;

  if (conf == NULL)
    return;
  for (i = 0; i < conf->nallows; i++)
    allow_free(&conf->allows[i]);
  for (i = 0; i < conf->naccepts; i++)
    accept_free(&conf->accepts[i]);
  for (i = 0; i < conf->nrequests; i++)
    request_free(&conf->requests[i]);
  for (i = 0; i < conf->nexecs; i++)
    exec_free(&conf->execs[i]);
  for (i = 0; i < conf->nfiles; i++)
    free(conf->files[i]);
  for (i = 0; i < conf->nwarnings; i++)
    free(conf->warnings[i]);
  free(conf->allows);
  free(conf->accepts);
  free(conf->requests);
  free(conf->execs);
  free(conf->files);
  free(conf->warnings);
  free(conf);
}

const char *ldm_conf_strerror(int code) {
  switch (code) {
  case LDM_CONF_OK:
    return "success";
  case LDM_CONF_ESYNTAX:
    return "error in the configuration file";
  case LDM_CONF_EIO:
    return "cannot read a configuration file";
  case LDM_CONF_ENOMEM:
    return "out of memory";
  case LDM_CONF_EDENIED:
    return "not allowed by the configuration";
  case LDM_CONF_EOVERLAP:
    return "requested feedtypes overlap in the upstream filter";
  case LDM_CONF_EPATTERN:
    return "bad pattern in the product class";
  case LDM_CONF_EFULL:
    return "too many specs for a product class";
  case LDM_CONF_EINVAL:
    return "invalid argument";
  default:
    return "unknown error";
  }
}

bool ldm_conf_is_empty(const ldm_conf *conf) {
  return conf->nexecs == 0 && conf->nrequest_entries == 0 &&
         conf->nallows == 0 && conf->naccepts == 0;
}

bool ldm_conf_needs_listener(const ldm_conf *conf) {
  return conf->nallows > 0 || conf->naccepts > 0;
}
