/*
 * ldmd_conf_ident.c - the certificate identity of an ldmd.conf entry, our
 * extension: the "{tls,cert,cn=ERE,dns=ERE,sha256=HEX}" that may open the
 * host field of ALLOW, ACCEPT and REQUEST (ldmd_conf.h says what each item
 * means, docs/security.md how to use them).  Parsing it, and freeing what
 * it holds; matching is in ldmd_access.c.  Part of the parser described in
 * ldmd_conf_parser.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldmd/site/ldmd_conf_parser.h"

void ldm__conf_ident_free(ldm_conf_ident *id) {
  if (id->cn_ere != NULL)
    regfree(&id->cn_re);
  if (id->dns_ere != NULL)
    regfree(&id->dns_re);
  free(id->cn_ere);
  free(id->dns_ere);
  memset(id, 0, sizeof *id);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 64 hex digits, a colon allowed between two bytes. */
static bool parse_sha256(const char *v, size_t len, uint8_t out[32]) {
  size_t i = 0, n = 0;

  while (i < len && n < 32) {
    int hi, lo;

    if (n > 0 && v[i] == ':')
      i++;
    if (i + 2 > len)
      return false;
    hi = hexval((unsigned char)v[i]);
    lo = hexval((unsigned char)v[i + 1]);
    if (hi < 0 || lo < 0)
      return false;
    out[n++] = (uint8_t)(hi << 4 | lo);
    i += 2;
  }
  return n == 32 && i == len;
}

/* A cn= or dns= ERE: case-insensitive, as host names are. */
static int ident_ere(conf_parser *p, const conf_src *s, unsigned line,
                     const char *what, const char *v, size_t len, char **kept,
                     regex_t *re) {
  char b[SHOW_LEN];
  int rc;

  if (*kept != NULL)
    return ldm__conf_fail(p, s, line, "%s= given twice", what);
  if (len == 0)
    return ldm__conf_fail(p, s, line, "empty %s= ERE", what);
  *kept = strndup(v, len);
  if (*kept == NULL)
    return ldm__conf_nomem(p);
  snprintf(b, sizeof b, "%s= ERE", what);
  rc = ldm__conf_ere_vet(p, s, line, b, *kept, *kept);
  if (rc != LDM_CONF_OK) {
    free(*kept);
    *kept = NULL;
    return rc;
  }
  rc = regcomp(re, *kept, REG_EXTENDED | REG_ICASE | REG_NOSUB);
  if (rc != 0) {
    char msg[ERE_ERRLEN];

    regerror(rc, re, msg, sizeof msg);
    rc = ldm__conf_fail(p, s, line, "bad %s= ERE \"%s\": %s", what,
                        show(*kept, b), msg);
    free(*kept);
    *kept = NULL;
    return rc;
  }
  return LDM_CONF_OK;
}

/* One item of the list: v[0..len). */
static int ident_item(conf_parser *p, const conf_src *s, unsigned line,
                      const char *v, size_t len, ldm_conf_ident *id) {
  char b[SHOW_LEN], item[SHOW_LEN];

  if (len == 3 && strncasecmp(v, "tls", 3) == 0)
    return LDM_CONF_OK;
  if (len == 4 && strncasecmp(v, "cert", 4) == 0) {
    id->cert = true;
    return LDM_CONF_OK;
  }
  if (len >= 3 && strncasecmp(v, "cn=", 3) == 0)
    return ident_ere(p, s, line, "cn", v + 3, len - 3, &id->cn_ere, &id->cn_re);
  if (len >= 4 && strncasecmp(v, "dns=", 4) == 0)
    return ident_ere(p, s, line, "dns", v + 4, len - 4, &id->dns_ere,
                     &id->dns_re);
  if (len >= 7 && strncasecmp(v, "sha256=", 7) == 0) {
    if (id->pin)
      return ldm__conf_fail(p, s, line, "sha256= given twice");
    if (!parse_sha256(v + 7, len - 7, id->sha256)) {
      snprintf(item, sizeof item, "%.*s", (int)len, v);
      return ldm__conf_fail(
          p, s, line, "bad \"%s\": sha256= wants 64 hex digits", show(item, b));
    }
    id->pin = true;
    return LDM_CONF_OK;
  }
  snprintf(item, sizeof item, "%.*s", (int)len, v);
  return ldm__conf_fail(p, s, line,
                        "unknown identity item \"%s\" (tls, cert, cn=, dns=, "
                        "sha256=)",
                        show(item, b));
}

int ldm__conf_ident_parse(conf_parser *p, const conf_src *s, const conf_tok *t,
                          ldm_conf_ident *id, const char **rest) {
  const char *v = t->text, *end;
  char b[SHOW_LEN];
  int rc = LDM_CONF_OK;

  memset(id, 0, sizeof *id);
  *rest = v;
  if (v[0] != '{')
    return LDM_CONF_OK;
  end = strchr(v, '}');
  if (end == NULL)
    return ldm__conf_fail(p, s, t->line, "\"%s\": no \"}\" after the identity",
                          show(v, b));
  id->given = true;
  for (v++; v < end && rc == LDM_CONF_OK;) {
    const char *comma = memchr(v, ',', (size_t)(end - v));
    size_t len = (size_t)((comma != NULL ? comma : end) - v);

    if (len == 0)
      rc = ldm__conf_fail(p, s, t->line, "\"%s\": an empty identity item",
                          show(t->text, b));
    else
      rc = ident_item(p, s, t->line, v, len, id);
    v += len + (comma != NULL);
    if (comma != NULL && v == end && rc == LDM_CONF_OK)
      rc = ldm__conf_fail(p, s, t->line, "\"%s\": an empty identity item",
                          show(t->text, b));
  }
  if (rc == LDM_CONF_OK && end == t->text + 1)
    rc = ldm__conf_fail(p, s, t->line, "\"%s\": an empty identity",
                        show(t->text, b));
  if (rc != LDM_CONF_OK) {
    ldm__conf_ident_free(id);
    return rc;
  }
  *rest = end + 1;
  return LDM_CONF_OK;
}
