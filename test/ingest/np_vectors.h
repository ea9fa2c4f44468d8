/*
 * np_vectors.h - what the namers' tests read from LDM's vectors
 * (test/ingest/vectors/, found through $NP_VECTORS): the first frame of
 * each product in a .sbn stream (a frame with a product-specific header),
 * the products LDM stored (.products.tsv) and the messages it logged
 * (.log).  The frame reader here is the tests' own, a plain reading of
 * docs/noaaport.md, section "Frames": it is not the ingester's, so that
 * the namers are checked on bytes the ingester's reader did not choose.
 * Files read are kept until npv_teardown(), the test group's teardown, so
 * that a failed assertion (a longjmp) leaks nothing.  Header-only: each
 * test program is one .c file.
 */
#ifndef TEST_INGEST_NP_VECTORS_H
#define TEST_INGEST_NP_VECTORS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPV_FILES 64
static uint8_t *npv_files[NPV_FILES];
static int npv_nfiles;

/* Free the files read (a cmocka group teardown). */
static inline int npv_teardown(void **state) {
  (void)state;
  while (npv_nfiles > 0)
    free(npv_files[--npv_nfiles]);
  return 0;
}

/* A whole file in memory (NUL-terminated; freed by npv_teardown()), or
 * NULL. */
static inline uint8_t *npv_read(const char *name, const char *ext,
                                size_t *len) {
  const char *dir = getenv("NP_VECTORS");
  char path[4096];
  *len = 0;
  snprintf(path, sizeof path, "%s/%s%s", dir != NULL ? dir : ".", name, ext);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap + 1);
  size_t k;
  while (buf != NULL && (k = fread(buf + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) {
      uint8_t *b = realloc(buf, 2 * cap + 1);
      if (b == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf != NULL) {
    buf[n] = '\0';
    if (npv_nfiles < NPV_FILES)
      npv_files[npv_nfiles++] = buf;
  }
  *len = n;
  return buf;
}

/* A product's first frame: the PSH fields the namers use and the block. */
struct npv_frame {
  int datastream, transfer, type, category;
  uint32_t seqno;
  const uint8_t *data;
  size_t len;
};

static inline unsigned npv_be16(const uint8_t *p) {
  return (unsigned)p[0] << 8 | p[1];
}

/* The next frame that starts a product (a PSH present), from *pos on.
 * @return 1 with *f set, 0 at the end of the stream */
static inline int npv_next(const uint8_t *b, size_t n, size_t *pos,
                           struct npv_frame *f) {
  while (*pos + 32 <= n) {
    const uint8_t *fh = b + *pos;
    unsigned sum = 0;
    for (int i = 0; i < 14; i++)
      sum += fh[i];
    if (fh[0] != 0xFF || sum != npv_be16(fh + 14) ||
        (fh[4] != 3 && fh[4] != 5 && fh[4] != 10)) {
      (*pos)++;
      continue;
    }
    const uint8_t *pdh = fh + 16;
    size_t pdh_len = (size_t)(pdh[0] & 0x0F) * 4, hdr = npv_be16(pdh + 2);
    size_t dlen = npv_be16(pdh + 8);
    if (hdr < pdh_len || *pos + 16 + hdr + dlen > n) {
      (*pos)++;
      continue;
    }
    *pos += 16 + hdr + dlen;
    if (fh[4] != 3 || hdr - pdh_len < 36)
      continue;
    const uint8_t *psh = pdh + pdh_len;
    f->datastream = fh[5];
    f->transfer = pdh[1];
    f->type = psh[10];
    f->category = psh[11];
    f->seqno = (uint32_t)pdh[12] << 24 | (uint32_t)pdh[13] << 16 |
               (uint32_t)pdh[14] << 8 | pdh[15];
    f->data = fh + 16 + hdr;
    f->len = dlen;
    return 1;
  }
  return 0;
}

/* Whether a product of this frame is on the GOES path (docs/noaaport.md,
 * section "Channels and input"). */
static inline int npv_goes(const struct npv_frame *f) {
  return f->datastream == 1 || f->datastream == 2 ||
         (f->datastream == 4 && f->category == 3);
}

/* A .products.tsv row: the identifier of the product of that seqno. */
static inline int npv_ident(char *tsv, uint32_t seqno, char *ident,
                            size_t size) {
  char *line = strchr(tsv, '\n'); /* the header */
  while (line != NULL && *++line != '\0') {
    char *eol = strchr(line, '\n');
    char *t1 = memchr(line, '\t', eol != NULL ? (size_t)(eol - line) : 0);
    char *t2 = t1 != NULL ? strchr(t1 + 1, '\t') : NULL;
    if (t2 != NULL && strtoul(t2 + 1, NULL, 10) == seqno) {
      snprintf(ident, size, "%.*s", (int)(t1 - line), line);
      return 1;
    }
    line = eol;
  }
  return 0;
}

#endif
