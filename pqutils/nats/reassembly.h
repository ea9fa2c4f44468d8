/*
 * reassembly.h - nats2pq's reading of the bridge's wire format
 * (pqutils/nats/nats2pq.1, "ON THE WIRE"): the product's metadata from the
 * Ldm-* headers of a product message, and the checks that a product's data,
 * whole in the message's body or reassembled from its chunks, is the
 * product the headers describe (its size, its chunk count and order, the
 * MD5 of the whole data).  The data goes straight to where the caller
 * wants it (a queue reservation): reassembly copies each chunk once.
 *
 * Knows nothing of libnats: the headers come through a getter, the chunks
 * as buffers, so that the unit tests (test/nats/test_nats_reassembly.c)
 * drive it without a server.  Every function is thread-safe on distinct
 * objects and safe across fork().
 */
#ifndef PQUTILS_NATS_REASSEMBLY_H
#define PQUTILS_NATS_REASSEMBLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/product.h"

/* The most chunks a product may claim: with chunks of at least 4 KiB that
 * is 4 GiB, past any queue a site runs. */
#define N2P_MAX_CHUNKS 1048576u

/* What one product message says of its product. */
struct n2p_product {
  pq_prod_info info;      /* Ldm-Ident, -Origin, -Created, -Seqno,
                             -Feedtype, -Signature, -Size */
  unsigned nchunks;       /* Ldm-Chunks; 0: the data is the body */
  bool has_md5;           /* Ldm-Data-Md5 was given */
  uint8_t md5[PQ_SIGLEN]; /* its value */
};

/* A header's value (NUL-terminated, valid until the message is freed), or
 * NULL when the message has no such header. */
typedef const char *n2p_header_fn(void *arg, const char *name);

/**
 * Parse the headers of a product message.  Every header the contract puts
 * on a product message must be there and well formed; Ldm-Chunks needs
 * Ldm-Data-Md5.  Ldm-Feedtype is a feedtype expression (the name the
 * publisher prints) or `x` and 8 hex digits.
 * @param why  on failure, what is wrong, naming the header and its value
 * @return 0, or -1 with why filled.
 */
int n2p_parse_headers(n2p_header_fn *get, void *arg, struct n2p_product *p,
                      char *why, size_t whylen);

/**
 * Check a body that carries the whole data (nchunks 0): its length is
 * Ldm-Size, and its MD5 is Ldm-Data-Md5 when that was given.
 * @return 0, or -1 with why filled.
 */
int n2p_check_body(const struct n2p_product *p, const void *body, size_t len,
                   char *why, size_t whylen);

/* The reassembly of one chunked product into a buffer of info.size bytes. */
struct n2p_assembly {
  const struct n2p_product *p;
  uint8_t *dst;    /* where the data goes */
  uint64_t filled; /* bytes written so far */
  unsigned next;   /* index of the chunk expected next */
  struct pq_md5_ctx *md5;
};

/**
 * Start reassembling p (p->nchunks > 0) into dst, which has room for
 * p->info.size bytes.  p must outlive the assembly.
 * @return 0, or -1 when libcrypto has no MD5 context for it (why filled).
 */
int n2p_asm_begin(struct n2p_assembly *a, const struct n2p_product *p,
                  void *dst, char *why, size_t whylen);

/**
 * Add chunk `index`, which must be the next one, of len bytes: at least one
 * and no more than what is left of the data (every chunk but the last
 * carries at least one byte, so a product of n chunks has at least n).
 * @return 0, or -1 with why filled (the assembly is then to be ended).
 */
int n2p_asm_chunk(struct n2p_assembly *a, unsigned index, const void *data,
                  size_t len, char *why, size_t whylen);

/**
 * Finish: every chunk came, they fill the data exactly, and the data's MD5
 * is Ldm-Data-Md5.  Frees the MD5 context whatever the outcome.
 * @return 0, or -1 with why filled.
 */
int n2p_asm_finish(struct n2p_assembly *a, char *why, size_t whylen);

/** End an assembly without finishing it (safe after n2p_asm_finish() and
 *  on a zeroed one). */
void n2p_asm_abort(struct n2p_assembly *a);

/**
 * Does a subject match a consumer's filter subject, as the server matches
 * them: token by token (separated by '.'), '*' matching any one token and
 * a last token '>' one or more.  For taking messages of the stream
 * directly with the consumer's filter (nats2pq's catch-up).
 */
bool n2p_subject_match(const char *filter, const char *subject);

#endif /* PQUTILS_NATS_REASSEMBLY_H */
