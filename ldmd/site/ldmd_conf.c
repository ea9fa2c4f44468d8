/*
 * ldmd_conf.c - ldmd.conf: the parser's driver and public calls.  It owns
 * the parse of one file and its INCLUDE tree (cycles and depth), the walk
 * from entry keyword to arguments, the errors and warnings of a parse, and
 * freeing a configuration.  The lexical rules are in ldmd_conf_lex.c, the
 * checking of each entry and LDM's post-processing of REQUESTs in
 * ldmd_conf_entries.c (their shared state is in ldmd_conf_parser.h).  The
 * access rules the server applies with the result (ALLOW and ACCEPT) are in
 * ldmd_access.c; the message helpers all use are in ldmd_conf_internal.h.
 *
 * The parser never logs or exits.  Errors go into the caller's buffer as
 * "<file>:<line>: <what>"; warnings are kept in the configuration.  All
 * state lives in a conf_parser context and one conf_src per open file.
 */
#include "ldmd/site/ldmd_conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldmd/site/ldmd_conf_parser.h"

#define MAX_ARGS 9 /* MULTICAST's longest form */

/* ---------------------------------------------------------------------- */
/* Messages                                                               */
/* ---------------------------------------------------------------------- */

/* The hint a message gets when a string holds a carriage return. */
const char *ldm__conf_cr_hint(const char *s) {
  return strchr(s, '\r') != NULL
             ? " (a carriage return: is the file in DOS format?)"
             : "";
}

/* ---------------------------------------------------------------------- */
/* Parser state                                                           */
/* ---------------------------------------------------------------------- */

/* The entries of the grammar (see ldmd_conf_parser.h). */
const struct ldm__conf_kw_info ldm__conf_kw_infos[KW_COUNT] = {
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

void ldm__conf_tok_free(conf_tok *t) {
  free(t->text);
  t->text = NULL;
}

/* Room for one more element at index n: the (maybe moved) array or NULL. */
void *ldm__conf_grow(void *arr, size_t *cap, size_t n, size_t size) {
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

/* Append the element at elem (size bytes) to the array *arr of *n
 * elements and capacity *cap; on failure the array is unchanged and the
 * caller still owns what elem holds. */
int ldm__conf_append(conf_parser *p, void **arr, size_t *cap, size_t *n,
                     const void *elem, size_t size) {
  char *list = ldm__conf_grow(*arr, cap, *n, size);

  if (list == NULL)
    return ldm__conf_nomem(p);
  *arr = list;
  memcpy(list + *n * size, elem, size);
  (*n)++;
  return LDM_CONF_OK;
}

int ldm__conf_nomem(conf_parser *p) {
  set_err(p->err, p->errlen, "out of memory reading the configuration");
  return LDM_CONF_ENOMEM;
}

/* An error in file s at line: "<file>:<line>: <what> (included from..)". */
int ldm__conf_fail(conf_parser *p, const conf_src *s, unsigned line,
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
int ldm__conf_warn(conf_parser *p, const char *path, unsigned line,
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
  list = ldm__conf_grow(conf->warnings, &p->cap_warnings, conf->nwarnings,
                        sizeof *list);
  if (text == NULL || list == NULL) {
    free(text);
    return ldm__conf_nomem(p);
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
/* Entries and files                                                      */
/* ---------------------------------------------------------------------- */

static int parse_file(conf_parser *p, const char *path, const conf_src *parent,
                      const conf_tok *inc);

static int do_include(conf_parser *p, const conf_src *s, const conf_tok *t) {
  char *path;
  int rc;

  if (t->text[0] == '\0')
    return ldm__conf_fail(p, s, t->line, "empty INCLUDE path");
  path = ldm__conf_include_path(s->path, t->text);
  if (path == NULL)
    return ldm__conf_nomem(p);
  rc = parse_file(p, path, s, t);
  free(path);
  return rc;
}

static int do_ignored(conf_parser *p, const conf_src *s, const conf_tok *kw) {
  p->conf->nignored++;
  return ldm__conf_warn(
      p, s->path, kw->line,
      "%s entry ignored: this server does not do LDM-7 multicast",
      ldm__conf_kw_infos[kw->kw].name);
}

static int dispatch(conf_parser *p, const conf_src *s, const conf_tok *kw,
                    const conf_tok *args, size_t nargs) {
  switch (kw->kw) {
  case KW_ALLOW:
    return ldm__conf_add_allow(p, s, kw->line, args, nargs);
  case KW_ACCEPT:
    return ldm__conf_add_accept(p, s, kw->line, args);
  case KW_EXEC:
    return ldm__conf_add_exec(p, s, kw->line, &args[0]);
  case KW_INCLUDE:
    return do_include(p, s, &args[0]);
  case KW_REQUEST:
    return ldm__conf_add_request(p, s, kw->line, args, nargs);
  default:
    return do_ignored(p, s, kw);
  }
}

/* The error for string t where a keyword was due (after entry "after",
 * or at the top of the file when after is NULL). */
static int stray(conf_parser *p, const conf_src *s, const conf_tok *t,
                 const char *after) {
  const char *hint = ldm__conf_misplaced_keyword(t)
                         ? " (keywords must start in column 1)"
                         : "";
  char b[SHOW_LEN];

  if (after == NULL)
    return ldm__conf_fail(
        p, s, t->line,
        "expected an entry (ALLOW, ACCEPT, EXEC, INCLUDE, REQUEST) "
        "but found \"%s\"%s%s",
        show(t->text, b), hint, ldm__conf_cr_hint(t->text));
  return ldm__conf_fail(
      p, s, t->line, "unexpected \"%s\" after a complete %s entry%s%s",
      show(t->text, b), after, hint, ldm__conf_cr_hint(t->text));
}

/* An unquoted word in column 1 that is not a keyword.  LDM would take it
 * as one more argument of the entry above; it is nearly always a misspelt
 * keyword ("REQEUST"), whose entry would be lost, so it is an error here:
 * an entry continues only on indented lines (docs/protocol.md §14.1). */
static int not_keyword(conf_parser *p, const conf_src *s, const conf_tok *t) {
  char b[SHOW_LEN];

  return ldm__conf_fail(p, s, t->line,
                        "\"%s\" in column 1 is not a keyword (ALLOW, ACCEPT, "
                        "EXEC, INCLUDE, REQUEST): a line that continues an "
                        "entry must be indented%s",
                        show(t->text, b), ldm__conf_cr_hint(t->text));
}

/*
 * The arguments of the entry kw: every string up to the next keyword or the
 * end of the file (which stays as lookahead).  LDM's grammar fixes how many
 * each entry takes; an extra string is an error at its own line, and so is
 * an unquoted non-keyword in column 1.
 */
static int collect_args(conf_parser *p, conf_src *s, const conf_tok *kw,
                        conf_tok *args, size_t *nargs) {
  const struct ldm__conf_kw_info *info = &ldm__conf_kw_infos[kw->kw];
  conf_tok t;

  for (;;) {
    int rc = ldm__conf_next_tok(p, s, &t);

    if (rc != LDM_CONF_OK)
      return rc;
    if (t.eof || t.kw != KW_NONE) {
      s->ahead = t;
      s->have_ahead = true;
      break;
    }
    if (t.bol && !t.quoted) {
      rc = not_keyword(p, s, &t);
      ldm__conf_tok_free(&t);
      return rc;
    }
    if (*nargs == info->max) {
      rc = stray(p, s, &t, info->name);
      ldm__conf_tok_free(&t);
      return rc;
    }
    args[(*nargs)++] = t;
  }
  if ((info->counts & 1u << *nargs) == 0)
    return ldm__conf_fail(p, s, kw->line, "%s needs %s arguments (%s), not %zu",
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
    if (ldm__conf_misplaced_keyword(&args[i]))
      rc = ldm__conf_warn(
          p, s->path, args[i].line,
          "\"%s\" is taken as an argument, not a keyword: keywords "
          "must start in column 1",
          show(args[i].text, b));
  return rc;
}

static int parse_entries(conf_parser *p, conf_src *s) {
  conf_tok kw, args[MAX_ARGS];
  size_t i, nargs;

  for (;;) {
    int rc = ldm__conf_next_tok(p, s, &kw);

    if (rc != LDM_CONF_OK || kw.eof)
      return rc;
    if (kw.kw == KW_NONE) {
      rc = stray(p, s, &kw, NULL);
      ldm__conf_tok_free(&kw);
      return rc;
    }
    nargs = 0;
    rc = collect_args(p, s, &kw, args, &nargs);
    if (rc == LDM_CONF_OK)
      rc = warn_indented(p, s, args, nargs);
    if (rc == LDM_CONF_OK)
      rc = dispatch(p, s, &kw, args, nargs);
    for (i = 0; i < nargs; i++)
      ldm__conf_tok_free(&args[i]);
    ldm__conf_tok_free(&kw);
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
    return ldm__conf_fail(p, parent, s->parent_line,
                          "INCLUDE \"%s\": files nested more than %d deep",
                          show(s->inc_text, b), LDM_CONF_MAX_DEPTH);
  rc = ldm__conf_read_file(path, s, why, sizeof why);
  if (rc == LDM_CONF_ENOMEM)
    return ldm__conf_nomem(p);
  if (rc != LDM_CONF_OK && parent == NULL) {
    set_err(p->err, p->errlen, "cannot read %s: %s", path, why);
    return rc;
  }
  if (rc != LDM_CONF_OK) {
    ldm__conf_fail(p, parent, s->parent_line,
                   "cannot read included file %s: %s", show(path, b), why);
    return rc;
  }
  for (a = parent; a != NULL; a = a->parent)
    if (a->dev == s->dev && a->ino == s->ino)
      return ldm__conf_fail(
          p, parent, s->parent_line,
          "INCLUDE \"%s\" makes a cycle: %s is already being read",
          show(s->inc_text, b), a->path);
  rc = ldm__conf_remember_file(p, path, &s->path);
  if (rc != LDM_CONF_OK)
    return rc;
  nul = memchr(s->buf, '\0', s->len);
  if (nul != NULL) {
    const char *c;

    for (c = s->buf; c < nul; c++)
      s->line += *c == '\n';
    return ldm__conf_fail(p, s, s->line, "NUL character in the file");
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
    ldm__conf_tok_free(&s.ahead);
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
    return ldm__conf_nomem(&p);
  p.conf->default_port = opts != NULL && opts->default_port != 0
                             ? opts->default_port
                             : LDM_CONF_DEFAULT_PORT;
  rc = parse_file(&p, path, NULL, NULL);
  if (rc == LDM_CONF_OK)
    rc = ldm__conf_group_requests(&p);
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
    ldm__conf_allow_free(&conf->allows[i]);
  for (i = 0; i < conf->naccepts; i++)
    ldm__conf_accept_free(&conf->accepts[i]);
  for (i = 0; i < conf->nrequests; i++)
    ldm__conf_request_free(&conf->requests[i]);
  for (i = 0; i < conf->nexecs; i++)
    ldm__conf_exec_free(&conf->execs[i]);
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

const ldm_conf_origin *ldm_conf_tls_entry(const ldm_conf *conf, bool requests) {
  size_t i;

  for (i = 0; requests && i < conf->nrequests; i++)
    if (conf->requests[i].id.given)
      return &conf->requests[i].where;
  for (i = 0; !requests && i < conf->nallows; i++)
    if (conf->allows[i].id.given)
      return &conf->allows[i].where;
  for (i = 0; !requests && i < conf->naccepts; i++)
    if (conf->accepts[i].id.given)
      return &conf->accepts[i].where;
  return NULL;
}
