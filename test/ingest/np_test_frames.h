/*
 * np_test_frames.h - what the tests of libnoaaport's frame reader and
 * product builder share: SBN frames made by the test itself from the
 * format of docs/noaaport.md, "Frames" (frame header with its checksum,
 * PDH, PSH, data), a growing byte buffer to lay them end to end, and a log
 * sink that keeps every message as "LEVEL<TAB>text" lines, as LDM's
 * vectors list them.  Header-only: each test program includes it once.
 */
#ifndef TEST_INGEST_NP_TEST_FRAMES_H
#define TEST_INGEST_NP_TEST_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/np_log.h"

/** A growing byte buffer. */
struct tbuf {
  uint8_t *p;
  size_t len, cap;
};

static inline void tb_add(struct tbuf *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
      cap *= 2;
    b->p = realloc(b->p, cap);
    if (b->p == NULL)
      abort();
    b->cap = cap;
  }
  if (n != 0)
    memcpy(b->p + b->len, p, n);
  b->len += n;
}

static inline void tb_byte(struct tbuf *b, unsigned v) {
  uint8_t c = (uint8_t)v;
  tb_add(b, &c, 1);
}

static inline void tb_be16(struct tbuf *b, unsigned v) {
  tb_byte(b, v >> 8);
  tb_byte(b, v);
}

static inline void tb_be32(struct tbuf *b, uint32_t v) {
  tb_be16(b, v >> 16);
  tb_be16(b, v & 0xFFFF);
}

static inline void tb_free(struct tbuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/** One frame to make; zero fields take the usual values. */
struct tframe {
  unsigned command;    /* 0: 3 (data) */
  unsigned datastream; /* 0: 5 (NMC) */
  uint32_t fh_seq;
  unsigned fh_vl;     /* FH byte 2; 0: 0x14 (version 1, 4 words) */
  int bad_sum;        /* added to the checksum */
  unsigned pdh_vl;    /* PDH byte 0; 0: 0x14 */
  unsigned pdh_extra; /* PDH bytes beyond 16 (pdh_vl says how many) */
  unsigned tt;        /* transfer type */
  unsigned block;     /* PDH block number */
  unsigned rpb;       /* records per block */
  uint32_t prod_seq;
  bool psh;         /* a PSH follows */
  unsigned type;    /* PSH product type; 0: 4 */
  unsigned cat;     /* PSH category; 0: 1 */
  unsigned nfrag;   /* PSH fragment count */
  int psh_len_diff; /* added to the PSH's own length field */
  unsigned orig_run_id;
  const void *data;
  size_t data_len;
};

/** Append the frame described by t to b. */
static inline void tb_frame(struct tbuf *b, const struct tframe *t) {
  size_t at = b->len;
  tb_byte(b, 0xFF);
  tb_byte(b, 0);
  tb_byte(b, t->fh_vl ? t->fh_vl : 0x14);
  tb_byte(b, 0);
  tb_byte(b, t->command ? t->command : 3);
  tb_byte(b, t->datastream ? t->datastream : 5);
  tb_byte(b, 1);
  tb_byte(b, 0);
  tb_be32(b, t->fh_seq);
  tb_be16(b, 0);
  unsigned sum = 0;
  for (int i = 0; i < 14; i++)
    sum += b->p[at + (size_t)i];
  tb_be16(b, (unsigned)((int)sum + t->bad_sum));
  unsigned psh_len = t->psh ? 36 : 0;
  tb_byte(b, t->pdh_vl ? t->pdh_vl : 0x14);
  tb_byte(b, t->tt);
  tb_be16(b, 16 + t->pdh_extra + psh_len);
  tb_be16(b, t->block);
  tb_be16(b, 0);
  tb_be16(b, (unsigned)t->data_len);
  tb_byte(b, t->rpb);
  tb_byte(b, 0);
  tb_be32(b, t->prod_seq);
  for (unsigned i = 0; i < t->pdh_extra; i++)
    tb_byte(b, 0xEE);
  if (t->psh) {
    uint8_t h[36] = {0};
    unsigned len = (unsigned)(36 + t->psh_len_diff);
    h[2] = (uint8_t)(len >> 8);
    h[3] = (uint8_t)len;
    h[10] = (uint8_t)(t->type ? t->type : 4);
    h[11] = (uint8_t)(t->cat ? t->cat : 1);
    h[14] = (uint8_t)(t->nfrag >> 8);
    h[15] = (uint8_t)t->nfrag;
    h[34] = (uint8_t)(t->orig_run_id >> 8);
    h[35] = (uint8_t)t->orig_run_id;
    tb_add(b, h, sizeof h);
  }
  tb_add(b, t->data, t->data_len);
}

/** A 24-byte CCB of the given mode and submode. */
static inline void tb_ccb(struct tbuf *b, unsigned mode, unsigned submode) {
  uint8_t c[24] = {0x40, 0x0C};
  c[10] = (uint8_t)mode;
  c[11] = (uint8_t)submode;
  tb_add(b, c, sizeof c);
}

static inline void tb_str(struct tbuf *b, const char *s) {
  tb_add(b, s, strlen(s));
}

/** The log lines a test collected, "LEVEL<TAB>text" each. */
struct tlog {
  struct tbuf text; /* the lines, each ending in '\n', NUL after */
  int n;
};

static inline const char *tlog_level(int level) {
  static const char *const names[] = {"DEBUG", "INFO", "NOTE", "WARN", "ERROR"};
  return level >= 0 && level <= 4 ? names[level] : "?";
}

static inline void tlog_add(void *arg, int level, const char *msg) {
  struct tlog *lg = arg;
  tb_str(&lg->text, tlog_level(level));
  tb_byte(&lg->text, '\t');
  tb_str(&lg->text, msg);
  tb_byte(&lg->text, '\n');
  tb_byte(&lg->text, 0);
  lg->text.len--;
  lg->n++;
}

/** The collected lines as one string. */
static inline const char *tlog_str(struct tlog *lg) {
  if (lg->text.p == NULL)
    return "";
  return (const char *)lg->text.p;
}

/** How many collected lines contain s. */
static inline int tlog_count(struct tlog *lg, const char *s) {
  int n = 0;
  const char *p = tlog_str(lg);
  while ((p = strstr(p, s)) != NULL) {
    n++;
    p += strlen(s);
  }
  return n;
}

static inline void tlog_clear(struct tlog *lg) {
  lg->text.len = 0;
  if (lg->text.p != NULL)
    lg->text.p[0] = 0;
  lg->n = 0;
}

/** Read a whole file (the vectors).  @return false if it cannot be read */
static inline bool tb_file(struct tbuf *b, const char *path) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return false;
  uint8_t chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
    tb_add(b, chunk, n);
  fclose(fp);
  return true;
}

#endif
