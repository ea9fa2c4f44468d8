/*
 * ldmd_conf_internal.h - what the two halves of the ldmd.conf module share
 * and nobody else sees: the bounded message builder, error setting, and
 * the quoting of strings and feedtypes in messages.  The parser
 * (ldmd_conf.c) and the access rules (ldmd_access.c) word their messages
 * the same way, so the helpers live here once, as static inline functions.
 */
#ifndef LDMD_SITE_LDMD_CONF_INTERNAL_H
#define LDMD_SITE_LDMD_CONF_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ldmd/site/ldmd_conf.h"

#define SHOW_MAX 80 /* characters of a string quoted in a message */
#define SHOW_LEN (4 * SHOW_MAX + 8)
#define FT_LEN 192 /* pq_feedtype_format() needs 180 */
#define ERE_ERRLEN 160

/* A bounded string builder that also counts what did not fit. */
typedef struct sbuf {
  char *buf;
  size_t len;
  size_t want; /* length of the full text */
} sbuf;

static inline void sb_vprintf(sbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static inline void sb_vprintf(sbuf *sb, const char *fmt, va_list ap) {
  size_t at = sb->want < sb->len ? sb->want : sb->len;
  int n = vsnprintf(sb->buf == NULL ? NULL : sb->buf + at,
                    sb->buf == NULL ? 0 : sb->len - at, fmt, ap);

  if (n > 0)
    sb->want += (size_t)n;
}

static inline void sb_printf(sbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void sb_printf(sbuf *sb, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

/* An sbuf over a caller's buffer, which may be NULL or empty. */
static inline sbuf sb_over(char *buf, size_t len) {
  sbuf sb = {buf, len, 0};

  if (buf == NULL || len == 0) {
    sb.buf = NULL;
    sb.len = 0;
  } else {
    buf[0] = '\0';
  }
  return sb;
}

static inline void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void set_err(char *err, size_t errlen, const char *fmt, ...) {
  sbuf sb = sb_over(err, errlen);
  va_list ap;

  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
}

/* A string as a message quotes it: control characters escaped, cut. */
static inline const char *show(const char *s, char buf[SHOW_LEN]) {
  size_t i, n = 0;

  for (i = 0; i < SHOW_MAX && s[i] != '\0'; i++) {
    unsigned char c = (unsigned char)s[i];

    if (c == '\r') {
      memcpy(buf + n, "\\r", 2);
      n += 2;
    } else if (c < 0x20 || c == 0x7f) {
      n += (size_t)snprintf(buf + n, 5, "\\x%02x", c);
    } else {
      buf[n++] = (char)c;
    }
  }
  if (s[i] != '\0') {
    memcpy(buf + n, "...", 3);
    n += 3;
  }
  buf[n] = '\0';
  return buf;
}

static inline const char *ft_text(uint32_t ft, char buf[FT_LEN]) {
  pq_feedtype_format(ft, buf, FT_LEN);
  return buf;
}

#endif /* LDMD_SITE_LDMD_CONF_INTERNAL_H */
