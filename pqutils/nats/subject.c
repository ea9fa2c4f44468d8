/*
 * subject.c - the pure parts of the bridge's wire format (ldmnats.h):
 * subject tokens, the subjects of products and chunks, the names of the
 * chunk stream, chunk sizes, the Ldm-Created value, and pq2nats's subject
 * rules (-r).  No libnats here: test/nats/test_ldmnats.c drives it all.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/nats/ldmnats.h"

/* ---- tokens and subjects ---- */

static bool token_byte_ok(unsigned char ch) {
  return ch > ' ' && ch < 0x7f && ch != '.' && ch != '*' && ch != '>';
}

size_t ldmnats_token(const char *in, size_t n, char *out, size_t cap) {
  if (n == 0) {
    if (cap > 0)
      snprintf(out, cap, "_");
    return 1;
  }
  for (size_t i = 0; i < n && i + 1 < cap; i++)
    out[i] = token_byte_ok((unsigned char)in[i]) ? in[i] : '_';
  if (cap > 0)
    out[n < cap ? n : cap - 1] = '\0';
  return n;
}

size_t ldmnats_feed_token(uint32_t feedtype, char *buf) {
  char name[192];
  int n = pq_feedtype_format(feedtype, name, sizeof name);
  bool one_name = n > 0 && (size_t)n < sizeof name;
  for (int i = 0; one_name && i < n; i++) {
    char ch = name[i];
    one_name = (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
  }
  if (one_name && n < 32) {
    memcpy(buf, name, (size_t)n + 1);
    return (size_t)n;
  }
  return (size_t)snprintf(buf, 32, "x%08" PRIx32, feedtype);
}

/* Tokens separated by '.', none empty, none with a byte a token may not
 * hold, within max bytes. */
static bool tokens_ok(const char *s, size_t max) {
  size_t n = strlen(s);
  if (n == 0 || n > max || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '.') {
      if (s[i + 1] == '.')
        return false;
    } else if (!token_byte_ok((unsigned char)s[i])) {
      return false;
    }
  }
  return true;
}

bool ldmnats_prefix_ok(const char *s) {
  return tokens_ok(s, LDMNATS_NAME_MAX - 8);
}

bool ldmnats_stream_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > LDMNATS_NAME_MAX - 8)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!token_byte_ok((unsigned char)s[i]) || s[i] == '/' || s[i] == '\\')
      return false;
  return true;
}

int ldmnats_feed_subject(const char *prefix, uint32_t feedtype, char *buf,
                         size_t len) {
  char tok[32];
  ldmnats_feed_token(feedtype, tok);
  return snprintf(buf, len, "%s.%s", prefix, tok);
}

int ldmnats_chunk_subject(const char *prefix, const char *sighex, unsigned i,
                          char *buf, size_t len) {
  return snprintf(buf, len, "%s" LDMNATS_CHUNK_PREFIX_SUFFIX ".%s.%u", prefix,
                  sighex, i);
}

int ldmnats_chunk_msgid(const char *sighex, unsigned i, char *buf) {
  return snprintf(buf, 48, "%s.%u", sighex, i);
}

int ldmnats_chunk_stream(const char *stream, char *buf, size_t len) {
  return snprintf(buf, len, "%s" LDMNATS_CHUNK_STREAM_SUFFIX, stream);
}

int ldmnats_chunk_prefix(const char *prefix, char *buf, size_t len) {
  return snprintf(buf, len, "%s" LDMNATS_CHUNK_PREFIX_SUFFIX, prefix);
}

uint64_t ldmnats_chunks(uint64_t size, uint64_t max_body) {
  if (size <= max_body)
    return 0;
  return (size + max_body - 1) / max_body;
}

void ldmnats_chunk_span(uint64_t size, uint64_t max_body, uint64_t i,
                        uint64_t *offset, uint64_t *len) {
  *offset = i * max_body;
  *len = size - *offset < max_body ? size - *offset : max_body;
}

size_t ldmnats_format_created(pq_timestamp t, char *buf) {
  int n = snprintf(buf, 32, "%" PRId64 ".%06" PRId32, t.sec,
                   t.usec >= 0 && t.usec <= 999999 ? t.usec : 0);
  return n > 0 ? (size_t)n : 0;
}

/* ---- the rules ---- */

struct rule {
  uint32_t feedtype;
  regex_t re;
  char *tmpl;
};

struct ldmnats_rules {
  struct rule *v;
  size_t n;
};

void ldmnats_rules_free(struct ldmnats_rules *rules) {
  if (rules == NULL)
    return;
  for (size_t i = 0; i < rules->n; i++) {
    regfree(&rules->v[i].re);
    free(rules->v[i].tmpl);
  }
  free(rules->v);
  free(rules);
}

size_t ldmnats_rules_count(const struct ldmnats_rules *rules) {
  return rules != NULL ? rules->n : 0;
}

/* Is the template well formed: tokens separated by '.', each escape \0-\9
 * or \\, no wildcard?  An escape stands for a token's part. */
static bool template_ok(const char *t, unsigned nsub) {
  size_t n = strlen(t);
  if (n == 0 || t[0] == '.' || t[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)t[i];
    if (ch == '\\') {
      char e = t[i + 1];
      if (e == '\\') {
        i++;
        continue;
      }
      if (e < '0' || e > '9' || (unsigned)(e - '0') > nsub)
        return false;
      i++;
    } else if (ch == '.') {
      if (t[i + 1] == '.')
        return false;
    } else if (!token_byte_ok(ch)) {
      return false;
    }
  }
  return true;
}

/* One line, cut at its end (no newline): a rule into r, or an error. */
static int parse_rule(char *line, struct rule *r, char *why, size_t whylen) {
  char *tab1 = strchr(line, '\t');
  char *tab2 = tab1 != NULL ? strchr(tab1 + 1, '\t') : NULL;
  if (tab2 == NULL) {
    snprintf(why, whylen, "not \"feedtype<TAB>ERE<TAB>template\"");
    return -1;
  }
  *tab1 = '\0';
  *tab2 = '\0';
  const char *ere = tab1 + 1, *tmpl = tab2 + 1;
  int rc = pq_feedtype_parse(line, &r->feedtype);
  if (rc != 0) {
    snprintf(why, whylen, "feedtype \"%s\": %s", line,
             pq_feedtype_strerror(rc));
    return -1;
  }
  rc = regcomp(&r->re, ere, REG_EXTENDED);
  if (rc != 0) {
    char msg[256];
    regerror(rc, &r->re, msg, sizeof msg);
    snprintf(why, whylen, "pattern \"%s\": %s", ere, msg);
    return -1;
  }
  if (!template_ok(tmpl, (unsigned)r->re.re_nsub)) {
    regfree(&r->re);
    snprintf(why, whylen,
             "template \"%s\": not tokens separated by '.' with \\0 to "
             "\\%u (the pattern's groups)",
             tmpl, (unsigned)r->re.re_nsub);
    return -1;
  }
  r->tmpl = strdup(tmpl);
  if (r->tmpl == NULL) {
    regfree(&r->re);
    snprintf(why, whylen, "%s", strerror(ENOMEM));
    return -1;
  }
  return 0;
}

int ldmnats_rules_parse(const char *text, const char *name,
                        struct ldmnats_rules **rules, char *err,
                        size_t errlen) {
  struct ldmnats_rules *rs = calloc(1, sizeof *rs);
  char *copy = strdup(text);
  size_t cap = 0;
  *rules = NULL;
  if (rs == NULL || copy == NULL) {
    snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
    goto fail;
  }
  unsigned lineno = 0;
  for (char *line = copy, *next; line != NULL; line = next) {
    lineno++;
    next = strchr(line, '\n');
    if (next != NULL)
      *next++ = '\0';
    size_t n = strlen(line);
    if (n > 0 && line[n - 1] == '\r')
      line[--n] = '\0';
    if (line[strspn(line, " \t")] == '\0' || line[0] == '#')
      continue;
    if (rs->n == cap) {
      size_t ncap = cap ? cap * 2 : 8;
      struct rule *v = realloc(rs->v, ncap * sizeof *v);
      if (v == NULL) {
        snprintf(err, errlen, "%s: %s", name, strerror(ENOMEM));
        goto fail;
      }
      rs->v = v;
      cap = ncap;
    }
    char why[512];
    if (parse_rule(line, &rs->v[rs->n], why, sizeof why) != 0) {
      snprintf(err, errlen, "%s:%u: %s", name, lineno, why);
      goto fail;
    }
    rs->n++;
  }
  free(copy);
  *rules = rs;
  return 0;
fail:
  free(copy);
  ldmnats_rules_free(rs);
  return -1;
}

int ldmnats_rules_read(const char *path, struct ldmnats_rules **rules,
                       char *err, size_t errlen) {
  *rules = NULL;
  FILE *f = fopen(path, "re");
  if (f == NULL) {
    snprintf(err, errlen, "cannot open the rules file \"%s\": %s", path,
             strerror(errno));
    return -1;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  char buf[8192];
  size_t n;
  bool bad = mem == NULL;
  while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0)
    bad = fwrite(buf, 1, n, mem) != n;
  bad |= ferror(f) != 0;
  int saved = errno;
  fclose(f);
  if (mem != NULL)
    bad |= fclose(mem) != 0;
  if (bad) {
    snprintf(err, errlen, "cannot read the rules file \"%s\": %s", path,
             strerror(saved != 0 ? saved : EIO));
    free(text);
    return -1;
  }
  int rc = ldmnats_rules_parse(text, path, rules, err, errlen);
  free(text);
  return rc;
}

/* Append s (n bytes) to buf at *at, within len (keeps room for the NUL);
 * false when it does not fit. */
static bool put(char *buf, size_t len, size_t *at, const char *s, size_t n) {
  if (*at + n + 1 > len)
    return false;
  memcpy(buf + *at, s, n);
  *at += n;
  buf[*at] = '\0';
  return true;
}

static int expand(const struct rule *r, const char *prefix, const char *ident,
                  const regmatch_t *m, char *buf, size_t len) {
  size_t at = 0;
  if (!put(buf, len, &at, prefix, strlen(prefix)) ||
      !put(buf, len, &at, ".", 1))
    return -1;
  for (const char *t = r->tmpl; *t != '\0'; t++) {
    if (t[0] == '\\' && t[1] == '\\') {
      if (!put(buf, len, &at, "\\", 1))
        return -1;
      t++;
    } else if (t[0] == '\\') { /* \0-\9: checked by template_ok() */
      const regmatch_t *g = &m[t[1] - '0'];
      t++;
      size_t n = g->rm_so >= 0 ? (size_t)(g->rm_eo - g->rm_so) : 0;
      if (at + (n ? n : 1) + 1 > len)
        return -1;
      at += ldmnats_token(g->rm_so >= 0 ? ident + g->rm_so : "", n, buf + at,
                          len - at);
    } else if (!put(buf, len, &at, t, 1)) {
      return -1;
    }
  }
  return (int)at;
}

int ldmnats_subject(const struct ldmnats_rules *rules, const char *prefix,
                    const pq_prod_info *info, char *buf, size_t len) {
  for (size_t i = 0; rules != NULL && i < rules->n; i++) {
    const struct rule *r = &rules->v[i];
    regmatch_t m[10];
    if ((r->feedtype & info->feedtype) == 0 ||
        regexec(&r->re, info->ident, 10, m, 0) != 0)
      continue;
    int n = expand(r, prefix, info->ident, m, buf, len);
    if (n >= 0)
      return n;
    (void)ldmnats_feed_subject(prefix, info->feedtype, buf, len);
    return -1; /* too long: buf holds the default */
  }
  int n = ldmnats_feed_subject(prefix, info->feedtype, buf, len);
  return n >= 0 && (size_t)n < len ? n : -1;
}
