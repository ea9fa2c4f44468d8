/*
 * wmo_heading.c - the WMO abbreviated heading of a NOAAPORT product as LDM
 * 6.15 rebuilds it (its canonical form "TTAAii CCCC DDHHMM [BBB]"), the
 * AWIPS PIL of the line after it, and the printable prefix that names a
 * product without a heading (docs/noaaport.md, section "Identifiers").
 * Every function reads only the bytes it is given: where LDM reads a C
 * string, a NUL byte ends the text as well.
 */
#include "pqutils/ingest/wmo_heading.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* LDM tests characters in the C locale, on signed chars: nothing at or
 * above 0x80 is a letter, a digit or a space. */
static bool is_alnum(uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
         (c >= 'a' && c <= 'z');
}

static bool is_digit(uint8_t c) {
  return c >= '0' && c <= '9';
}

static bool is_space(uint8_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/*
 * The W(max) primitive: skip blanks (0x20 only), then take up to max
 * letters and digits into out.  It fails only when nothing but blanks is
 * left before the end of the text (end: the first NUL or the last byte);
 * the word may be empty.
 */
static bool take_word(const uint8_t *p, size_t end, size_t *pos, size_t max,
                      char *out) {
  size_t i = *pos;
  while (i < end && p[i] == ' ')
    i++;
  if (i >= end)
    return false;
  size_t k = 0;
  while (k < max && i + k < end && is_alnum(p[i + k])) {
    out[k] = (char)p[i + k];
    k++;
  }
  out[k] = '\0';
  *pos = i + k;
  return true;
}

/* The value of the run of digits at p[*pos] as LDM's "%d" conversion
 * stores it: read as a long (saturated), then kept in an int. */
static int take_number(const uint8_t *p, size_t end, size_t *pos) {
  unsigned long long v = 0;
  size_t i = *pos;
  while (i < end && is_digit(p[i])) {
    if (v <= (unsigned long long)LONG_MAX)
      v = v * 10 + (unsigned)(p[i] - '0');
    i++;
  }
  *pos = i;
  if (v > (unsigned long long)LONG_MAX)
    v = (unsigned long long)LONG_MAX;
  return (int)(unsigned)(v & 0xFFFFFFFFu);
}

/* The heading's fields (docs/noaaport.md, section "Identifiers"). */
struct heading {
  char tt[3], aa[3], cccc[5], ddhhmm[7], bbb[10];
  int ii;
};

/* Parse the fields; *pos ends after BBB (or after DDHHMM if there is
 * none).  @return false if W failed where LDM gives up */
static bool parse_fields(const uint8_t *p, size_t end, size_t *pos,
                         struct heading *h) {
  if (!take_word(p, end, pos, 2, h->tt) || !take_word(p, end, pos, 2, h->aa))
    return false;
  h->ii = 0;
  if (*pos < end && is_digit(p[*pos]))
    h->ii = take_number(p, end, pos);
  if (!take_word(p, end, pos, 4, h->cccc) ||
      !take_word(p, end, pos, 6, h->ddhhmm))
    return false;
  if (!take_word(p, end, pos, 9, h->bbb))
    h->bbb[0] = '\0';
  return true;
}

int np_wmo_heading(const uint8_t *p, size_t n, char out[NP_WMO_MAX + 1],
                   size_t *after, const struct np_log *lg) {
  const uint8_t *nul = memchr(p, '\0', n);
  size_t end = nul != NULL ? (size_t)(nul - p) : n;
  size_t pos = 0;
  struct heading h;
  if (!parse_fields(p, end, &pos, &h))
    return -1;
  /* A LF within the 31 bytes after BBB: raw bytes, as LDM scans them. */
  size_t i = 0;
  while (i <= 30 && pos + i < n && p[pos + i] != '\n')
    i++;
  if (i > 30 || pos + i >= n)
    return -1;
  char buf[64];
  int len = snprintf(buf, sizeof buf, "%s%s%02d %s %s%s%s", h.tt, h.aa, h.ii,
                     h.cccc, h.ddhhmm, h.bbb[0] != '\0' ? " " : "", h.bbb);
  if (len > NP_WMO_MAX) {
    np_log(lg, NP_ERROR, "wmoid is bizzare %d", len);
    return -1;
  }
  memcpy(out, buf, (size_t)len + 1);
  *after = pos + i + 1;
  return 0;
}

/* The length of the line l[0, n) (n > 0, l[0] printable) without its
 * trailing bytes below 0x20 or at or above 0x80. */
static size_t line_length(const uint8_t *l, size_t n) {
  size_t len = n;
  while (len > 1 && (l[len - 1] < 0x20 || l[len - 1] >= 0x80))
    len--;
  return len;
}

bool np_wmo_pil(const uint8_t *p, size_t n, char pil[8]) {
  if (n >= 4 && memcmp(p, "GRIB", 4) == 0)
    return false;
  size_t s = n >= 4 && memcmp(p, "^NMC", 4) == 0 ? 4 : 0;
  if (s >= n || !is_alnum(p[s]))
    return false;
  const uint8_t *lf = memchr(p + s, '\n', n - s);
  if (lf == NULL)
    return false;
  /* The line's length without its trailing control bytes (and bytes at or
   * above 0x80, below 0x20 as signed chars): exactly 6. */
  if (line_length(p + s, (size_t)(lf - p) - s) != 6)
    return false;
  size_t cnt = 6;
  while (cnt > 3 && is_space(p[s + cnt - 1]))
    cnt--;
  size_t k = 0;
  bool all_digits = true;
  while (k < cnt && p[s + k] != '\0') {
    if (!is_alnum(p[s + k]))
      return false;
    all_digits = all_digits && is_digit(p[s + k]);
    pil[k] = (char)p[s + k];
    k++;
  }
  pil[k] = '\0';
  return !all_digits;
}

size_t np_printable_prefix(const uint8_t *p, size_t n,
                           char out[NP_PREFIX_MAX + 1]) {
  size_t k = 0;
  while (k < n && k < NP_PREFIX_MAX && p[k] >= 0x20 && p[k] < 0x80) {
    out[k] = (char)p[k];
    k++;
  }
  out[k] = '\0';
  return k;
}
