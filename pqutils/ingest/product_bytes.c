/*
 * product_bytes.c - owns the bytes of the product being built: a buffer
 * grown geometrically (one copy per block, no per-byte work) and the MD5
 * of the bytes LDM hashes, kept incrementally with OpenSSL's EVP interface
 * (docs/noaaport.md, "The product built").
 */
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/product_internal.h"

#define NP_BYTES_MIN (64u * 1024u)

bool np_bytes_init(struct np_bytes *b) {
  memset(b, 0, sizeof *b);
  b->md5 = EVP_MD_CTX_new();
  if (b->md5 == NULL)
    return false;
  np_bytes_reset(b);
  return true;
}

void np_bytes_free(struct np_bytes *b) {
  EVP_MD_CTX_free(b->md5);
  free(b->p);
  memset(b, 0, sizeof *b);
}

bool np_bytes_room(struct np_bytes *b, size_t n) {
  if (n <= b->cap - b->len)
    return true;
  if (n > SIZE_MAX / 2 - b->len)
    return false;
  size_t cap = b->cap < NP_BYTES_MIN ? NP_BYTES_MIN : b->cap;
  while (cap - b->len < n)
    cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (p == NULL)
    return false;
  b->p = p;
  b->cap = cap;
  return true;
}

bool np_bytes_add(struct np_bytes *b, const void *p, size_t n, bool md5) {
  if (n == 0)
    return true;
  if (!np_bytes_room(b, n))
    return false;
  memcpy(b->p + b->len, p, n);
  if (md5 && b->md5_ok)
    EVP_DigestUpdate(b->md5, b->p + b->len, n);
  b->len += n;
  return true;
}

void np_bytes_reset(struct np_bytes *b) {
  b->len = 0;
  b->md5_ok = EVP_DigestInit_ex(b->md5, EVP_md5(), NULL) == 1;
}

void np_bytes_md5_final(struct np_bytes *b, uint8_t sig[16]) {
  unsigned n = 0;
  memset(sig, 0, 16);
  if (b->md5_ok)
    EVP_DigestFinal_ex(b->md5, sig, &n);
  b->md5_ok = false;
}
