/*
 * ldmd_conf_entries.c - the entries of ldmd.conf, checked as LDM checks
 * them: feedsets and EREs (LDM's leading ".*" vetting, host EREs without
 * case), ALLOW, ACCEPT and EXEC (its words split as a shell would, with
 * wordexp), and REQUEST (host, port, the fifth word), each host field with
 * the certificate identity that may open it (ldmd_conf_ident.c), then LDM's
 * post-processing of requests: overlapping requests to one server reduced
 * to one, and primary and alternate groups.  Part of the parser described
 * in ldmd_conf_parser.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wordexp.h>

#include "ldmd/site/ldmd_conf_parser.h"

/* ---------------------------------------------------------------------- */
/* Pieces of entries                                                      */
/* ---------------------------------------------------------------------- */

static int parse_feedset(conf_parser *p, const conf_src *s, const conf_tok *t,
                         uint32_t *ft) {
  int rc = pq_feedtype_parse(t->text, ft);

  if (rc != PQ_FT_OK) {
    char b[SHOW_LEN];

    return ldm__conf_fail(p, s, t->line, "bad feedset \"%s\": %s%s",
                          show(t->text, b), pq_feedtype_strerror(rc),
                          ldm__conf_cr_hint(t->text));
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
 * Refuse what regcomp or regexec could not do in bounded time: an ERE too
 * complex to compile (pq_ere_tame()), or one with a back-reference
 * (pq_ere_backref()).  Every ERE of ldmd.conf is matched against strings a
 * peer chooses: product identifiers (ALLOW's OK and NOT, ACCEPT; a
 * REQUEST's pattern checks what the upstream sends), host names from the
 * peer's DNS, names in its certificate; and an upstream ldmd refuses a
 * REQUEST pattern with one (docs/security.md, "Patterns from peers").
 * The ERE is text (what names it, shown is as written).
 */
int ldm__conf_ere_vet(conf_parser *p, const conf_src *s, unsigned line,
                      const char *what, const char *shown, const char *ere) {
  const char *ref = pq_ere_backref(ere);
  char b[SHOW_LEN];

  if (!pq_ere_tame(ere))
    return ldm__conf_fail(p, s, line,
                          "bad %s \"%s\": too complex (repetitions stacked "
                          "or nested too deeply)",
                          what, show(shown, b));
  if (ref != NULL)
    return ldm__conf_fail(p, s, line,
                          "bad %s \"%s\": back-reference \\%c (POSIX EREs "
                          "have none; matching one against a peer's string "
                          "can take exponential time)",
                          what, show(shown, b), ref[1]);
  return LDM_CONF_OK;
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
    rc = ldm__conf_warn(p, s->path, t->line,
                        "%s \"%s\" begins with \".*\": using \"%s\"", what,
                        show(t->text, b), ere);
    if (rc != LDM_CONF_OK)
      return rc;
  }
  rc = ldm__conf_ere_vet(p, s, t->line, what, t->text, ere);
  if (rc != LDM_CONF_OK)
    return rc;
  rc = regcomp(re, ere, flags);
  if (rc != 0) {
    char msg[ERE_ERRLEN];

    regerror(rc, re, msg, sizeof msg);
    return ldm__conf_fail(p, s, t->line, "bad %s \"%s\": %s%s", what,
                          show(t->text, b), msg, ldm__conf_cr_hint(t->text));
  }
  if (kept != NULL) {
    *kept = strdup(ere);
    if (*kept == NULL) {
      regfree(re);
      return ldm__conf_nomem(p);
    }
  }
  return LDM_CONF_OK;
}

/* A host ERE: not empty; REG_ICASE, since host names have no case. */
static int host_ere(conf_parser *p, const conf_src *s, const conf_tok *t,
                    regex_t *re, char **kept) {
  if (t->text[0] == '\0')
    return ldm__conf_fail(p, s, t->line, "empty host ERE");
  return compile_ere(p, s, t, "host ERE", REG_EXTENDED | REG_ICASE | REG_NOSUB,
                     re, kept);
}

/*
 * A host field of ALLOW or ACCEPT: [{ident}]hostERE.  After an identity
 * the ERE may be empty: any host.
 */
static int host_field(conf_parser *p, const conf_src *s, const conf_tok *t,
                      ldm_conf_ident *id, regex_t *re, char **kept) {
  char any[] = ".*";
  const char *rest;
  conf_tok h;
  int rc = ldm__conf_ident_parse(p, s, t, id, &rest);

  if (rc != LDM_CONF_OK)
    return rc;
  if (!id->given)
    return host_ere(p, s, t, re, kept);
  h = *t;
  h.text = rest[0] != '\0' ? t->text + (rest - t->text) : any;
  rc = host_ere(p, s, &h, re, kept);
  if (rc != LDM_CONF_OK)
    ldm__conf_ident_free(id);
  return rc;
}

/* A product ERE that travels in a product class: not empty, not longer
 * than a class holds, and it must compile (then it is not kept). */
static int product_ere(conf_parser *p, const conf_src *s, const conf_tok *t) {
  regex_t re;
  int rc;

  if (t->text[0] == '\0')
    return ldm__conf_fail(p, s, t->line, "empty product ERE");
  if (strlen(t->text) > PQ_PATTERN_MAX)
    return ldm__conf_fail(
        p, s, t->line, "product ERE longer than %d characters", PQ_PATTERN_MAX);
  rc = compile_ere(p, s, t, "product ERE", REG_EXTENDED | REG_NOSUB, &re, NULL);
  if (rc == LDM_CONF_OK)
    regfree(&re);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* ALLOW, ACCEPT, EXEC                                                    */
/* ---------------------------------------------------------------------- */

void ldm__conf_allow_free(ldm_conf_allow *a) {
  ldm__conf_ident_free(&a->id);
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
      return ldm__conf_nomem(p);
  } else {
    rc = compile_ere(p, s, &args[2], "OK ERE", REG_EXTENDED | REG_NOSUB,
                     &a->ok_re, &a->ok_ere);
  }
  if (rc == LDM_CONF_OK && nargs == 4)
    rc = compile_ere(p, s, &args[3], "NOT ERE", REG_EXTENDED | REG_NOSUB,
                     &a->not_re, &a->not_ere);
  return rc;
}

int ldm__conf_add_allow(conf_parser *p, const conf_src *s, unsigned line,
                        const conf_tok *args, size_t nargs) {
  ldm_conf *conf = p->conf;
  ldm_conf_allow a;
  int rc;

  memset(&a, 0, sizeof a);
  a.where = (ldm_conf_origin){s->path, line};
  rc = parse_feedset(p, s, &args[0], &a.feedtype);
  if (rc == LDM_CONF_OK)
    rc = host_field(p, s, &args[1], &a.id, &a.host_re, &a.host_ere);
  if (rc == LDM_CONF_OK)
    rc = allow_patterns(p, s, args, nargs, &a);
  if (rc == LDM_CONF_OK)
    rc = ldm__conf_append(p, (void **)&conf->allows, &p->cap_allows,
                          &conf->nallows, &a, sizeof a);
  if (rc != LDM_CONF_OK)
    ldm__conf_allow_free(&a);
  return rc;
}

void ldm__conf_accept_free(ldm_conf_accept *a) {
  ldm__conf_ident_free(&a->id);
  if (a->host_ere != NULL)
    regfree(&a->host_re);
  free(a->host_ere);
  free(a->pattern);
}

int ldm__conf_add_accept(conf_parser *p, const conf_src *s, unsigned line,
                         const conf_tok *args) {
  ldm_conf *conf = p->conf;
  ldm_conf_accept a;
  int rc;

  memset(&a, 0, sizeof a);
  a.where = (ldm_conf_origin){s->path, line};
  rc = parse_feedset(p, s, &args[0], &a.feedtype);
  if (rc == LDM_CONF_OK)
    rc = product_ere(p, s, &args[1]);
  if (rc == LDM_CONF_OK) {
    a.pattern = strdup(args[1].text);
    rc = a.pattern == NULL ? ldm__conf_nomem(p) : LDM_CONF_OK;
  }
  if (rc == LDM_CONF_OK)
    rc = host_field(p, s, &args[2], &a.id, &a.host_re, &a.host_ere);
  if (rc == LDM_CONF_OK)
    rc = ldm__conf_append(p, (void **)&conf->accepts, &p->cap_accepts,
                          &conf->naccepts, &a, sizeof a);
  if (rc != LDM_CONF_OK)
    ldm__conf_accept_free(&a);
  return rc;
}

void ldm__conf_exec_free(ldm_conf_exec *e) {
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

int ldm__conf_add_exec(conf_parser *p, const conf_src *s, unsigned line,
                       const conf_tok *cmd) {
  ldm_conf *conf = p->conf;
  ldm_conf_exec e;
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
    return ldm__conf_fail(p, s, cmd->line, "bad EXEC command \"%s\": %s",
                          show(cmd->text, b), wordexp_why(rc));
  }
  if (we.we_wordc == 0) {
    wordfree(&we);
    return ldm__conf_fail(p, s, cmd->line, "empty EXEC command");
  }
  e.command = strdup(cmd->text);
  rc = e.command == NULL || exec_words(&e, &we) != 0 ? ldm__conf_nomem(p)
                                                     : LDM_CONF_OK;
  wordfree(&we);
  if (rc == LDM_CONF_OK)
    rc = ldm__conf_append(p, (void **)&conf->execs, &p->cap_execs,
                          &conf->nexecs, &e, sizeof e);
  if (rc != LDM_CONF_OK)
    ldm__conf_exec_free(&e);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* REQUEST                                                                */
/* ---------------------------------------------------------------------- */

void ldm__conf_request_free(ldm_conf_request *r) {
  ldm__conf_ident_free(&r->id);
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

    return ldm__conf_fail(p, s, t->line,
                          "bad port \"%s\" in \"%s\": not 1-65535%s", text,
                          show(t->text, b), ldm__conf_cr_hint(text));
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
      return ldm__conf_fail(p, s, t->line,
                            "\"%s\": no \"]\" after the IPv6 address",
                            show(spec, b));
    if (close[1] != '\0' && close[1] != ':')
      return ldm__conf_fail(p, s, t->line,
                            "\"%s\": only \":port\" may follow \"]\"",
                            show(spec, b));
    host = spec + 1;
    hlen = (size_t)(close - host);
    if (!valid_ipv6(host, hlen))
      return ldm__conf_fail(p, s, t->line, "\"%s\": not an IPv6 address",
                            show(spec, b));
    r->ipv6 = true;
    port = close[1] == ':' ? close + 2 : NULL;
  } else {
    colon = strchr(spec, ':');
    if (colon != NULL && strchr(colon + 1, ':') != NULL)
      return ldm__conf_fail(
          p, s, t->line,
          "\"%s\": more than one \":\" (write an IPv6 address in "
          "brackets, as [::1]:388)",
          show(spec, b));
    hlen = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    port = colon != NULL ? colon + 1 : NULL;
  }
  if (hlen == 0)
    return ldm__conf_fail(p, s, t->line, "\"%s\": no host name", show(spec, b));
  r->host = strndup(host, hlen);
  if (r->host == NULL)
    return ldm__conf_nomem(p);
  r->port = p->conf->default_port;
  if (port == NULL || *port == '\0')
    return LDM_CONF_OK;
  r->port_given = true;
  return parse_port(p, s, t, port, &r->port);
}

/* [{ident}]host[:port]: the identity asks for TLS to the upstream. */
static int request_host(conf_parser *p, const conf_src *s, const conf_tok *t,
                        ldm_conf_request *r) {
  const char *rest;
  conf_tok h;
  int rc = ldm__conf_ident_parse(p, s, t, &r->id, &rest);

  if (rc != LDM_CONF_OK)
    return rc;
  h = *t;
  h.text = t->text + (rest - t->text);
  return parse_hostport(p, s, &h, r);
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
    return ldm__conf_warn(p, s->path, t->line, "REQUEST field \"%s\" ignored%s",
                          show(t->text, b), ldm__conf_cr_hint(t->text));
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
    return ldm__conf_warn(
        p, s->path, r->where.line,
        "REQUEST (%s, \"%s\") to %s ignored: earlier REQUESTs to "
        "that server cover it, or it asks for nothing",
        ft_text(r->written, f1), show(r->pattern, b), srv);
  if (r->feedtype != r->written) {
    char f2[FT_LEN];

    return ldm__conf_warn(p, s->path, r->where.line,
                          "REQUEST (%s, \"%s\") to %s reduced to %s by earlier "
                          "REQUESTs to that server with the same ERE",
                          ft_text(r->written, f1), show(r->pattern, b), srv,
                          ft_text(r->feedtype, f2));
  }
  return LDM_CONF_OK;
}

int ldm__conf_add_request(conf_parser *p, const conf_src *s, unsigned line,
                          const conf_tok *args, size_t nargs) {
  ldm_conf *conf = p->conf;
  ldm_conf_request r;
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
    rc = r.pattern == NULL ? ldm__conf_nomem(p) : LDM_CONF_OK;
  }
  if (rc == LDM_CONF_OK)
    rc = request_host(p, s, &args[2], &r);
  if (rc == LDM_CONF_OK && nargs == 4)
    rc = request_word(p, s, &args[3], &r);
  r.feedtype = r.written;
  if (rc == LDM_CONF_OK)
    rc = reduce_request(p, s, &r, &keep);
  if (rc == LDM_CONF_OK && keep)
    rc = ldm__conf_append(p, (void **)&conf->requests, &p->cap_requests,
                          &conf->nrequests, &r, sizeof r);
  if (rc != LDM_CONF_OK || !keep)
    ldm__conf_request_free(&r);
  return rc;
}

/*
 * LDM's initial modes (docs/protocol.md §10): REQUESTs with the same (feedtype,
 * ERE) form a group; the first in file order starts primary.  More than two in
 * a group is worth a warning: autoshift does not work well then.
 */
int ldm__conf_group_requests(conf_parser *p) {
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
    rc = ldm__conf_warn(
        p, r->where.file, r->where.line,
        "%u REQUESTs ask for (%s, \"%s\"): switching between primary "
        "and alternate mode won't work correctly with more than 2",
        r->group_size, ft_text(r->feedtype, f), show(r->pattern, b));
  }
  return rc;
}
