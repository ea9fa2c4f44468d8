/*
 * wmo_message.c - identifiers of WMO, AFOS and FAA604 messages
 * (wmo_message.h).  The WMO heading, its canonical form and the PIL come
 * from the NOAAPORT ingester's parser (pqutils/ingest/wmo_heading.c), the
 * GRIB model names from its tables (grib_names.c, grib2_name.c): one
 * parser, one set of names, for both ingesters.  What is pqing's own: the
 * starting line, the checks LDM makes before it accepts a heading, the GRIB
 * completeness checks, and the AFOS and FAA604 identifiers.
 */
/* memmem(): _GNU_SOURCE, which the build defines */
#include "pqutils/wmo/wmo_message.h"

#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib2_name.h"
#include "pqutils/ingest/grib_names.h"
#include "pqutils/ingest/wmo_heading.h"
#include "pqutils/wmo/wmo_frame.h"

static bool is_digit(uint8_t c) {
  return c >= '0' && c <= '9';
}
static bool is_upper(uint8_t c) {
  return c >= 'A' && c <= 'Z';
}
static bool is_alpha(uint8_t c) {
  return is_upper(c) || (c >= 'a' && c <= 'z');
}
static bool is_alnum(uint8_t c) {
  return is_alpha(c) || is_digit(c);
}
/* White space as LDM's token reader skips it. */
static bool is_space(uint8_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
/* Not graphic: what LDM skips before a word (control bytes, space, DEL). */
static bool not_graph(uint8_t c) {
  return c <= ' ' || c == 0x7F;
}

/* Up to max digits at *pos (no blanks skipped): their value, or -1. */
static int take_digits(const uint8_t *p, size_t n, size_t *pos, int max) {
  int v = 0, k = 0;
  while (k < max && *pos < n && is_digit(p[*pos])) {
    v = v * 10 + (p[*pos] - '0');
    (*pos)++;
    k++;
  }
  return k > 0 ? v : -1;
}

static void skip_space(const uint8_t *p, size_t n, size_t *pos) {
  while (*pos < n && is_space(p[*pos]))
    (*pos)++;
}

/* The starting line: after SOH CR CR LF (LDM skips at most four bytes, up
 * to a LF), the sequence number of up to three digits, and optionally
 * the classification digits.  *pos is left at the heading.
 * @return the sequence number, or -1 */
static int starting_line(const uint8_t *p, size_t n, size_t *pos) {
  size_t i = 0;
  for (int k = 0; k < 4 && i < n;) {
    uint8_t c = p[i++];
    k++;
    if (c == WMO_LF)
      break;
  }
  skip_space(p, n, &i);
  int seq = take_digits(p, n, &i, 3);
  skip_space(p, n, &i);
  if (i < n && is_digit(p[i])) { /* class, origin, L3, L4 */
    (void)take_digits(p, n, &i, 1);
    (void)take_digits(p, n, &i, 2);
    (void)take_digits(p, n, &i, 1);
    (void)take_digits(p, n, &i, 1);
  }
  while (i < n && not_graph(p[i]))
    i++;
  *pos = i;
  return seq;
}

/* LDM's test of the heading as written: TT two letters, AA a letter and
 * a letter or digit (blanks may come between them). */
static bool heading_letters(const uint8_t *p, size_t n) {
  if (n < 2 || !is_alpha(p[0]) || !is_alpha(p[1]))
    return false;
  size_t i = 2;
  while (i < n && not_graph(p[i]) && p[i] != WMO_LF)
    i++;
  return i + 1 < n && is_alpha(p[i]) && is_alnum(p[i + 1]);
}

/* The big-endian unsigned number of k bytes at p. */
static uint64_t be(const uint8_t *p, int k) {
  uint64_t v = 0;
  for (int i = 0; i < k; i++)
    v = v << 8 | p[i];
  return v;
}

/* The model of a GRIB2 message, from the ingester's name of it
 * ("grib2/<centre>/<model>/..."); false if it cannot be decoded. */
static bool grib2_model(const uint8_t *g, size_t n, const char *name,
                        char *model, size_t size) {
  char tag[512];
  struct np_namer nm = {.log = NULL};
  if (np_grib2_name(g, n, name, tag, sizeof tag, &nm) != 0)
    return false;
  const char *a = strchr(tag, '/');
  const char *b = a != NULL ? strchr(a + 1, '/') : NULL;
  const char *c = b != NULL ? strchr(b + 1, '/') : NULL;
  if (c == NULL || c == b + 1)
    return false;
  snprintf(model, size, "%.*s", (int)(c - b - 1), b + 1);
  return true;
}

/*
 * The " /m<model>" of a heading beginning H, Y or Z: the message must hold
 * "GRIB", at least 40 bytes from there, the length the GRIB message states
 * and its "7777" within its last eight bytes.
 * @return 1 with model set, 0 without GRIB (no model, still a product), -1
 *         if the GRIB message is incomplete (said in lg)
 */
static int grib_model(const uint8_t *msg, size_t len, const char *ident,
                      char *model, size_t size, const struct np_log *lg) {
  const uint8_t *g = memmem(msg, len, "GRIB", 4);
  if (g == NULL) {
    np_log(lg, NP_NOTE, "%s: Can't find `GRIB'", ident);
    return 0;
  }
  size_t left = len - (size_t)(g - msg);
  if (left < 8 + 28 + 4) {
    np_log(lg, NP_NOTE, "%s: way too short", ident);
    return -1;
  }
  int edition = g[7];
  uint64_t glen = edition == 1 ? be(g + 4, 3) : be(g + 8, 8);
  if (glen > left) {
    np_log(lg, NP_NOTE, "%s: %llu bytes too short", ident,
           (unsigned long long)(glen - left));
    return -1;
  }
  if (glen < 8 || memmem(g + glen - 8, 8, "7777", 4) == NULL) {
    np_log(lg, NP_NOTE, "%s: no end of product", ident);
    return -1;
  }
  if (edition == 2 && grib2_model(g, (size_t)glen, ident, model, size))
    return 1;
  /* Edition 0 or 1 (and a GRIB2 message the decoder refuses): the centre
   * and process bytes of an edition 1 PDS, as LDM reads them. */
  struct np_grib_names nb;
  snprintf(model, size, "%s", np_grib_model_name(g[12], g[13], &nb));
  return 1;
}

void wmo_err_ident(const uint8_t *msg, size_t len, char *out, size_t outlen) {
  size_t pos;
  int k = snprintf(out, outlen, "%8u", (unsigned)len);
  int seq = starting_line(msg, len, &pos);
  if (seq < 0 || k < 0 || (size_t)k >= outlen)
    return;
  int k2 = snprintf(out + k, outlen - (size_t)k, "         %03d", seq);
  if (k2 < 0 || (size_t)(k + k2) >= outlen)
    return;
  char hdr[NP_WMO_MAX + 1];
  size_t after;
  if (np_wmo_heading(msg + pos, len - pos, hdr, &after, NULL) == 0)
    snprintf(out + k + k2, outlen - (size_t)(k + k2), "  %s", hdr);
}

int wmo_parse(const uint8_t *msg, size_t len, bool pil, struct wmo_product *out,
              const struct np_log *lg) {
  size_t pos, after = 0;
  char hdr[NP_WMO_MAX + 1], why[200];
  int seq = starting_line(msg, len, &pos);
  if (seq < 0 || seq > 999 || !heading_letters(msg + pos, len - pos) ||
      np_wmo_heading(msg + pos, len - pos, hdr, &after, lg) != 0) {
    wmo_err_ident(msg, len, why, sizeof why);
    np_log(lg, NP_ERROR, "Not a WMO format message.        %s", why);
    return -1;
  }
  char p[8] = "";
  bool has_pil = pil && np_wmo_pil(msg + pos + after, len - pos - after, p);
  char model[64] = "";
  if (hdr[0] == 'H' || hdr[0] == 'Y' || hdr[0] == 'Z') {
    char named[NP_WMO_MAX + 16];
    snprintf(named, sizeof named, "%s%s%s", hdr, has_pil ? " /p" : "",
             has_pil ? p : "");
    if (grib_model(msg, len, named, model, sizeof model, lg) < 0) {
      wmo_err_ident(msg, len, why, sizeof why);
      np_log(lg, NP_ERROR, "Not a WMO GRIB format message.   %s", why);
      return -1;
    }
  }
  snprintf(out->ident, sizeof out->ident, "%s%s%s%s%s", hdr,
           has_pil ? " /p" : "", has_pil ? p : "", model[0] ? " /m" : "",
           model);
  out->seqno = (unsigned)seq;
  return 0;
}

int wmo_parse_afos(const uint8_t *msg, size_t len, unsigned seqno,
                   struct wmo_product *out, const struct np_log *lg) {
  out->seqno = seqno;
  out->ident[0] = '\0';
  bool zczc = len >= 4 && memcmp(msg, "ZCZC", 4) == 0;
  size_t pos = zczc ? 4 : 0;
  while (pos < len && !is_upper(msg[pos]))
    pos++;
  /* The line: up to 12 letters and digits (a CR is passed over). */
  size_t k = 0;
  bool line_end = false;
  while (k < 12) {
    if (pos >= len) {
      np_log(lg, NP_ERROR, "Unrecognizable: %5s %03u %8u", "AFOS", seqno,
             (unsigned)len);
      return -1;
    }
    uint8_t c = msg[pos++];
    if (c == WMO_CR)
      continue;
    if (!is_alnum(c)) {
      line_end = true;
      break;
    }
    out->ident[k++] = (char)c;
  }
  out->ident[k] = '\0';
  if (line_end)
    pos--; /* the byte that ended the line is read again below */
  while (pos < len && not_graph(msg[pos]))
    pos++;
  if (pos < len && msg[pos] >= 0x80)
    pos += 2; /* LDM passes over a byte above ASCII and the next */
  char hdr[NP_WMO_MAX + 1];
  size_t after;
  if (pos < len &&
      np_wmo_heading(msg + pos, len - pos, hdr, &after, NULL) == 0 &&
      is_upper((uint8_t)hdr[0]) && is_upper((uint8_t)hdr[1]) &&
      is_upper((uint8_t)hdr[2]) && is_upper((uint8_t)hdr[7])) {
    size_t n = strlen(out->ident);
    snprintf(out->ident + n, sizeof out->ident - n, "   (%s)", hdr);
  }
  if (!zczc)
    np_log(lg, NP_ERROR, " Missing ZCZC: %6s %03u %8u  %s", "AFOS", seqno,
           (unsigned)len, out->ident);
  if (len < 4 || memcmp(msg + len - 4, "NNNN", 4) != 0) {
    np_log(lg, NP_ERROR, " Missing NNNN: %6s %03u %8u  %s", "AFOS", seqno,
           (unsigned)len, out->ident);
    return -1;
  }
  return 0;
}

/* Up to n bytes of p at *pos into out, each one not printable as a space.
 * @return false at the end of the message */
static bool show(const uint8_t *p, size_t len, size_t *pos, int n, char **o,
                 const char *end) {
  for (int i = 0; i < n; i++) {
    if (*pos >= len)
      return false;
    uint8_t c = p[(*pos)++];
    if (*o < end)
      *(*o)++ = c > ' ' && c < 0x7F ? (char)c : ' ';
  }
  return true;
}

void wmo_faa604_err_ident(const uint8_t *msg, size_t len, char *out,
                          size_t outlen) {
  if (outlen == 0)
    return;
  int k = snprintf(out, outlen, "%8u", (unsigned)len);
  if (k < 0 || (size_t)k + 1 >= outlen)
    return;
  char *o = out + k, *end = out + outlen - 1;
  size_t pos = 0;
  while (pos < len && not_graph(msg[pos]))
    pos++;
  if (pos < len && o + 1 < end) {
    *o++ = ' ';
    if (show(msg, len, &pos, 3, &o, end) && o + 2 < end) {
      *o++ = ' ';
      *o++ = ' ';
      if (show(msg, len, &pos, 5, &o, end)) {
        pos++; /* STX */
        while (pos < len && is_space(msg[pos]))
          pos++;
        if (pos < len && o < end) {
          *o++ = ' ';
          (void)show(msg, len, &pos, 6, &o, end);
        }
      }
    }
  }
  *o = '\0';
}

int wmo_parse_faa604(const uint8_t *msg, size_t len, struct wmo_product *out,
                     const struct np_log *lg) {
  const char *err = NULL;
  size_t pos = 0;
  while (pos < len && not_graph(msg[pos]))
    pos++;
  int seq = take_digits(msg, len, &pos, 3);
  char *id = out->ident;
  if (seq < 1)
    err = "Invalid sequence number";
  for (int i = 0; err == NULL && i < 5; i++) {
    if (pos >= len || !is_digit(msg[pos]))
      err = "Invalid catalogue number";
    else
      *id++ = (char)msg[pos++];
  }
  if (err == NULL && (pos >= len || msg[pos++] != WMO_STX))
    err = "Missing header STX";
  if (err == NULL) {
    while (pos < len && is_space(msg[pos]))
      pos++;
    if (pos >= len || !is_digit(msg[pos]))
      err = "Invalid date";
    *id++ = ' ';
  }
  for (int i = 0; err == NULL && i < 6; i++) {
    if (pos >= len || !is_digit(msg[pos]))
      err = "Invalid date/time";
    else
      *id++ = (char)msg[pos++];
  }
  if (err != NULL) {
    char why[128];
    wmo_faa604_err_ident(msg, len, why, sizeof why);
    np_log(lg, NP_ERROR, "%-24s - %s", err, why); /* LDM's columns */
    return -1;
  }
  *id = '\0';
  while (pos < len && not_graph(msg[pos]))
    pos++;
  char hdr[NP_WMO_MAX + 1];
  size_t after;
  if (pos < len &&
      np_wmo_heading(msg + pos, len - pos, hdr, &after, NULL) == 0 &&
      memcmp(hdr + 4, "00", 2) != 0 && is_upper((uint8_t)hdr[0]) &&
      is_upper((uint8_t)hdr[1]) && is_upper((uint8_t)hdr[2]) &&
      is_upper((uint8_t)hdr[3]) && is_upper((uint8_t)hdr[7])) {
    size_t n = strlen(out->ident);
    snprintf(out->ident + n, sizeof out->ident - n, " (%s)", hdr);
  }
  out->seqno = (unsigned)seq;
  return 0;
}
