/*
 * wmo_build.h - the tests' own messages for pqing: WMO, AFOS and FAA604
 * messages built byte by byte from their parts, the binary framing's
 * stuffing and the HDS check bytes, written independently of the parsers
 * under test (pqutils/wmo/) but for the CRC table, which is checked
 * against the standard's check value (test_wmo_frame.c).  Header-only, for
 * the unit tests and the wmogen tool.
 */
#ifndef TEST_WMO_WMO_BUILD_H
#define TEST_WMO_WMO_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wb {
  uint8_t *p;
  size_t n, cap;
};

static inline void wb_put(struct wb *b, const void *p, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n)
      cap *= 2;
    uint8_t *q = realloc(b->p, cap);
    if (q == NULL)
      abort();
    b->p = q;
    b->cap = cap;
  }
  if (n > 0)
    memcpy(b->p + b->n, p, n);
  b->n += n;
}

static inline void wb_str(struct wb *b, const char *s) {
  wb_put(b, s, strlen(s));
}

static inline void wb_byte(struct wb *b, uint8_t c) {
  wb_put(b, &c, 1);
}

static inline void wb_free(struct wb *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/*
 * A WMO message as a product holds it: SOH CR CR LF, the sequence number
 * (three digits), CR CR LF, the heading line, CR CR LF, the PIL line if
 * pil is not NULL, the body, CR CR LF ETX.
 */
static inline void wb_wmo(struct wb *b, unsigned seq, const char *heading,
                          const char *pil, const void *body, size_t n) {
  char s[16];
  snprintf(s, sizeof s, "%03u", seq % 1000);
  wb_str(b, "\001\r\r\n");
  wb_str(b, s);
  wb_str(b, "\r\r\n");
  wb_str(b, heading);
  wb_str(b, "\r\r\n");
  if (pil != NULL) {
    wb_str(b, pil);
    wb_str(b, "\r\r\n");
  }
  wb_put(b, body, n);
  wb_str(b, "\r\r\n\003");
}

/* How many bytes of a WMO message the signature leaves out (SOH CR CR LF
 * nnn CR CR LF). */
#define WB_SIG_SKIP 10

/*
 * The message m (as wb_wmo() makes it) as the binary framing sends it:
 * an ESC after every CR CR LF that an ETX or an ESC follows, but for the
 * last ETX.
 */
static inline void wb_stuff(struct wb *out, const uint8_t *m, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i >= 3 && i + 1 < n && m[i - 3] == '\r' && m[i - 2] == '\r' &&
        m[i - 1] == '\n' && (m[i] == 0x03 || m[i] == 0x1B))
      wb_byte(out, 0x1B);
    wb_byte(out, m[i]);
  }
}

/* The CRC-16 of HDS (reflected 0x8005, initial 0), bit by bit: the tests'
 * own, not the table of wmo_crc.c. */
static inline uint16_t wb_crc(const uint8_t *p, size_t n) {
  uint16_t crc = 0;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++)
      crc = (uint16_t)(crc & 1 ? (crc >> 1) ^ 0xA001 : crc >> 1);
  }
  return crc;
}

/* Stuffed message m and its two check bytes (over the unstuffed bytes). */
static inline void wb_stuff_crc(struct wb *out, const uint8_t *m, size_t n,
                                int corrupt) {
  uint16_t crc = wb_crc(m, n);
  wb_stuff(out, m, n);
  wb_byte(out, (uint8_t)(crc & 0xFF) ^ (corrupt ? 0x5A : 0));
  wb_byte(out, (uint8_t)(crc >> 8));
}

/* An AFOS message: ZCZC, the identifier line, then the text, NNNN. */
static inline void wb_afos(struct wb *b, const char *id, const char *text) {
  wb_str(b, "ZCZC");
  wb_str(b, id);
  wb_str(b, "\r\r\n");
  wb_str(b, text);
  wb_str(b, "NNNN");
}

/* An FAA604 message: SOH, sequence number, catalogue number, STX, date,
 * the text, ETX. */
static inline void wb_faa604(struct wb *b, unsigned seq, const char *catalogue,
                             const char *ddhhmm, const char *text) {
  char s[8];
  snprintf(s, sizeof s, "%03u", seq % 1000);
  wb_str(b, "\001");
  wb_str(b, s);
  wb_str(b, catalogue);
  wb_str(b, "\002");
  wb_str(b, ddhhmm);
  wb_str(b, text);
  wb_str(b, "\003");
}

/* A GRIB edition 1 message of n bytes (at least 40) of the given centre
 * and process: "GRIB", its length, edition 1, a 28-byte PDS, filler,
 * "7777". */
static inline void wb_grib1(struct wb *b, size_t n, uint8_t centre,
                            uint8_t process) {
  uint8_t m[4096];
  if (n > sizeof m || n < 40)
    abort();
  memset(m, 0x55, n);
  memcpy(m, "GRIB", 4);
  m[4] = (uint8_t)(n >> 16);
  m[5] = (uint8_t)(n >> 8);
  m[6] = (uint8_t)n;
  m[7] = 1;
  memset(m + 8, 0, 28);
  m[8 + 2] = 28; /* PDS length */
  m[8 + 4] = centre;
  m[8 + 5] = process;
  memcpy(m + n - 4, "7777", 4);
  wb_put(b, m, n);
}

#endif
