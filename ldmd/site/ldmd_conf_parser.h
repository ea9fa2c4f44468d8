/*
 * ldmd_conf_parser.h - what the files of the ldmd.conf parser share and
 * nobody else sees: the parser's state (one conf_parser per parse, one
 * conf_src per open file, conf_tok for a token), the table of entries, and
 * the functions one file of the parser calls in another.  The parser is
 * ldmd_conf.c (the driver: files, INCLUDE, entries, the public calls),
 * ldmd_conf_lex.c (reading a file and LDM's lexical rules) and
 * ldmd_conf_entries.c (checking ALLOW, ACCEPT, EXEC and REQUEST entries
 * and grouping the requests) and ldmd_conf_ident.c (the certificate
 * identities of our extension).  Internal names carry the ldm__conf_ prefix.
 */
#ifndef LDMD_SITE_LDMD_CONF_PARSER_H
#define LDMD_SITE_LDMD_CONF_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ldmd/site/ldmd_conf_internal.h"

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
 * n arguments), and a usage line; indexed by enum keyword. */
struct ldm__conf_kw_info {
  const char *name;
  unsigned counts;
  unsigned max;
  const char *needs;
  const char *usage;
};
extern const struct ldm__conf_kw_info ldm__conf_kw_infos[KW_COUNT];

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

/* ldmd_conf.c: messages, errors and memory */
const char *ldm__conf_cr_hint(const char *s);
void ldm__conf_tok_free(conf_tok *t);
void *ldm__conf_grow(void *arr, size_t *cap, size_t n, size_t size);
int ldm__conf_nomem(conf_parser *p);
int ldm__conf_append(conf_parser *p, void **arr, size_t *cap, size_t *n,
                     const void *elem, size_t size);
int ldm__conf_fail(conf_parser *p, const conf_src *s, unsigned line,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ldm__conf_warn(conf_parser *p, const char *path, unsigned line,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ldmd_conf_lex.c: files and tokens */
int ldm__conf_read_file(const char *path, conf_src *s, char *why, size_t wlen);
char *ldm__conf_include_path(const char *including, const char *path);
int ldm__conf_remember_file(conf_parser *p, const char *path,
                            const char **kept);
bool ldm__conf_misplaced_keyword(const conf_tok *t);
int ldm__conf_next_tok(conf_parser *p, conf_src *s, conf_tok *t);

/* ldmd_conf_entries.c: entries, and freeing what they hold */
int ldm__conf_ere_vet(conf_parser *p, const conf_src *s, unsigned line,
                      const char *what, const char *shown, const char *ere);
void ldm__conf_allow_free(ldm_conf_allow *a);
int ldm__conf_add_allow(conf_parser *p, const conf_src *s, unsigned line,
                        const conf_tok *args, size_t nargs);
void ldm__conf_accept_free(ldm_conf_accept *a);
int ldm__conf_add_accept(conf_parser *p, const conf_src *s, unsigned line,
                         const conf_tok *args);
void ldm__conf_exec_free(ldm_conf_exec *e);
int ldm__conf_add_exec(conf_parser *p, const conf_src *s, unsigned line,
                       const conf_tok *cmd);
void ldm__conf_request_free(ldm_conf_request *r);
int ldm__conf_add_request(conf_parser *p, const conf_src *s, unsigned line,
                          const conf_tok *args, size_t nargs);
int ldm__conf_group_requests(conf_parser *p);

/* ldmd_conf_ident.c: the "{...}" of a host field.  Parses it when t's text
 * begins with '{' (id->given then), and points *rest at what follows it
 * (or at all of t's text).  On failure id holds nothing. */
int ldm__conf_ident_parse(conf_parser *p, const conf_src *s, const conf_tok *t,
                          ldm_conf_ident *id, const char **rest);
void ldm__conf_ident_free(ldm_conf_ident *id);

#endif /* LDMD_SITE_LDMD_CONF_PARSER_H */
