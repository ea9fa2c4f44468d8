/*
 * md5.c - MD5 signatures, LDM's product identity for duplicate rejection
 * and resumption.  A thin layer over OpenSSL's EVP interface: one call for
 * a whole buffer, and a context for data that arrives in pieces (BLKDATA).
 * Never a home-grown MD5.
 */
#include "pq/product.h"

#include <openssl/evp.h>
#include <stdlib.h>

struct pq_md5_ctx {
  EVP_MD_CTX *evp;
};

int pq_md5(const void *data, size_t len, uint8_t sig[PQ_SIGLEN]) {
  unsigned int n = 0;

  if (EVP_Digest(data, len, sig, &n, EVP_md5(), NULL) != 1 || n != PQ_SIGLEN)
    return -1;
  return 0;
}

pq_md5_ctx *pq_md5_new(void) {
  pq_md5_ctx *ctx = malloc(sizeof *ctx);

  if (ctx == NULL)
    return NULL;
  ctx->evp = EVP_MD_CTX_new();
  if (ctx->evp == NULL || EVP_DigestInit_ex(ctx->evp, EVP_md5(), NULL) != 1) {
    pq_md5_free(ctx);
    return NULL;
  }
  return ctx;
}

int pq_md5_update(pq_md5_ctx *ctx, const void *data, size_t len) {
  return EVP_DigestUpdate(ctx->evp, data, len) == 1 ? 0 : -1;
}

int pq_md5_final(pq_md5_ctx *ctx, uint8_t sig[PQ_SIGLEN]) {
  unsigned int n = 0;
  int ok = EVP_DigestFinal_ex(ctx->evp, sig, &n) == 1 && n == PQ_SIGLEN;

  pq_md5_free(ctx);
  return ok ? 0 : -1;
}

void pq_md5_free(pq_md5_ctx *ctx) {
  if (ctx == NULL)
    return;
  EVP_MD_CTX_free(ctx->evp);
  free(ctx);
}
