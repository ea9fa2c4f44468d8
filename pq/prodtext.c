/*
 * prodtext.c - the text forms of product metadata: times, the one-line
 * product description of every LDM per-product log line (s_prod_info), and
 * signatures as hex.  Operators grep LDM's logs, so the layout is LDM's to
 * the space (docs/protocol.md §18).  Everything formats into the
 * caller's buffer and returns what snprintf would.
 */
#include "pq/product.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define US_PER_SEC 1000000

/* LDM prints its three special times as words. */
static const char *special_time_name(pq_timestamp t) {
  if (pq_ts_cmp(t, PQ_TS_NONE) == 0)
    return "TS_NONE";
  if (pq_ts_cmp(t, PQ_TS_ZERO) == 0)
    return "TS_ZERO";
  if (pq_ts_cmp(t, PQ_TS_ENDT) == 0)
    return "TS_ENDT";
  return NULL;
}

/* Fold an out-of-range usec into sec, so that usec prints as 6 digits. */
static pq_timestamp normalized(pq_timestamp t) {
  int64_t carry = t.usec / US_PER_SEC;
  int32_t usec = t.usec % US_PER_SEC;

  if (usec < 0) {
    usec += US_PER_SEC;
    carry--;
  }
  /* Past the ends of int64 no date prints anyway: keep sec as it is. */
  if ((carry > 0 && t.sec > INT64_MAX - carry) ||
      (carry < 0 && t.sec < INT64_MIN - carry))
    carry = 0;
  return (pq_timestamp){t.sec + carry, usec};
}

int pq_ts_format(pq_timestamp t, char *buf, size_t len) {
  const char *word = special_time_name(t);
  struct tm tm;
  time_t sec;

  if (word != NULL)
    return snprintf(buf, len, "%s", word);
  t = normalized(t);
  sec = (time_t)t.sec;
  if ((int64_t)sec != t.sec || gmtime_r(&sec, &tm) == NULL) {
    /* Beyond what struct tm holds: seconds since the epoch instead. */
    return snprintf(buf, len, "%lld.%06ld", (long long)t.sec, (long)t.usec);
  }
  return snprintf(buf, len, "%04lld%02d%02d%02d%02d%02d.%06ld",
                  (long long)tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, (long)t.usec);
}

int pq_prod_info_format(const pq_prod_info *info, bool with_sig, char *buf,
                        size_t len) {
  char sig[33] = "";
  char when[32];
  char feed[180]; /* the longest feedtype text is 179 characters */

  if (with_sig)
    pq_sig_format(info->signature, sig);
  pq_ts_format(info->arrival, when, sizeof when);
  pq_feedtype_format(info->feedtype, feed, sizeof feed);
  /* buf may be NULL when len is 0, as for snprintf. */
  /* cppcheck-suppress ctunullpointer */
  return snprintf(buf, len, "%s%s%10llu %s %s %03u  %.*s", sig,
                  with_sig ? " " : "", (unsigned long long)info->size, when,
                  feed, (unsigned)info->seqno, PQ_IDENT_MAX, info->ident);
}

void pq_sig_format(const uint8_t sig[PQ_SIGLEN], char buf[33]) {
  static const char digits[] = "0123456789abcdef";
  size_t i;

  for (i = 0; i < PQ_SIGLEN; i++) {
    buf[2 * i] = digits[sig[i] >> 4];
    buf[2 * i + 1] = digits[sig[i] & 0xf];
  }
  buf[2 * PQ_SIGLEN] = '\0';
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int pq_sig_parse(const char *hex, uint8_t sig[PQ_SIGLEN]) {
  uint8_t out[PQ_SIGLEN];
  size_t i;

  /* Stops at the first non-digit, so a short string is never overread. */
  for (i = 0; i < PQ_SIGLEN; i++) {
    int hi = hex_value(hex[2 * i]);
    int lo = hi < 0 ? -1 : hex_value(hex[2 * i + 1]);

    if (lo < 0)
      return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  if (hex[2 * PQ_SIGLEN] != '\0')
    return -1;
  memcpy(sig, out, PQ_SIGLEN);
  return 0;
}
