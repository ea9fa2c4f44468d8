/*
 * reassembly.c - a product message's headers into the product's metadata,
 * and the checks of its data, whole or in chunks (see reassembly.h).  The
 * parsers are strict: a value the publisher cannot have written (a sign, a
 * space, a number past its type) is refused, naming the header, so that a
 * foreign or damaged message is terminated with a clear log line instead of
 * putting a wrong product in the queue.
 */
#include "pqutils/nats/reassembly.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pqutils/nats/ldmnats.h"

/* "NAME: bad value 'V'", with V cut to what fits. */
static int bad(char *why, size_t whylen, const char *name, const char *value) {
  if (value == NULL)
    snprintf(why, whylen, "missing header %s", name);
  else
    snprintf(why, whylen, "bad header %s: '%.80s'", name, value);
  return -1;
}

/* A decimal unsigned integer, digits only, no larger than max. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  if (s == NULL || *s < '0' || *s > '9')
    return -1;
  uint64_t v = 0;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9')
      return -1;
    unsigned d = (unsigned)(*s - '0');
    if (v > (max - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* "<seconds>.<6 digits>". */
static int parse_created(const char *s, pq_timestamp *t) {
  const char *dot = s == NULL ? NULL : strchr(s, '.');
  if (dot == NULL || strlen(dot + 1) != 6 || dot == s)
    return -1;
  char secs[24];
  size_t n = (size_t)(dot - s);
  if (n >= sizeof secs)
    return -1;
  memcpy(secs, s, n);
  secs[n] = '\0';
  uint64_t sec, usec;
  if (parse_u64(secs, INT64_MAX, &sec) != 0 ||
      parse_u64(dot + 1, 999999, &usec) != 0)
    return -1;
  t->sec = (int64_t)sec;
  t->usec = (int32_t)usec;
  return 0;
}

/* A feedtype name or expression as pq_feedtype_format() prints it, or `x`
 * and 8 hex digits (the subject token of a feedtype that is not one name). */
static int parse_feedtype(const char *s, uint32_t *ft) {
  if (s == NULL || *s == '\0')
    return -1;
  if (s[0] == 'x' && strlen(s) == 9) {
    uint32_t v = 0;
    for (const char *q = s + 1; *q != '\0'; q++) {
      int d;
      if (*q >= '0' && *q <= '9')
        d = *q - '0';
      else if (*q >= 'a' && *q <= 'f')
        d = *q - 'a' + 10;
      else if (*q >= 'A' && *q <= 'F')
        d = *q - 'A' + 10;
      else
        return -1;
      v = v << 4 | (uint32_t)d;
    }
    *ft = v;
    return 0;
  }
  return pq_feedtype_parse(s, ft) == PQ_FT_OK ? 0 : -1;
}

/* A string header that must fit max characters. */
static int copy_string(const char *s, char *dst, size_t max) {
  if (s == NULL)
    return -1;
  size_t n = strlen(s);
  if (n > max)
    return -1;
  memcpy(dst, s, n + 1);
  return 0;
}

int n2p_parse_headers(n2p_header_fn *get, void *arg, struct n2p_product *p,
                      char *why, size_t whylen) {
  memset(p, 0, sizeof *p);
  const char *v;
  uint64_t u;

  v = get(arg, LDMNATS_H_IDENT);
  if (copy_string(v, p->info.ident, PQ_IDENT_MAX) != 0)
    return bad(why, whylen, LDMNATS_H_IDENT, v);
  v = get(arg, LDMNATS_H_ORIGIN);
  if (copy_string(v, p->info.origin, PQ_ORIGIN_MAX) != 0)
    return bad(why, whylen, LDMNATS_H_ORIGIN, v);
  v = get(arg, LDMNATS_H_CREATED);
  if (parse_created(v, &p->info.arrival) != 0)
    return bad(why, whylen, LDMNATS_H_CREATED, v);
  v = get(arg, LDMNATS_H_SEQNO);
  if (parse_u64(v, UINT32_MAX, &u) != 0)
    return bad(why, whylen, LDMNATS_H_SEQNO, v);
  p->info.seqno = (uint32_t)u;
  v = get(arg, LDMNATS_H_FEEDTYPE);
  if (parse_feedtype(v, &p->info.feedtype) != 0)
    return bad(why, whylen, LDMNATS_H_FEEDTYPE, v);
  v = get(arg, LDMNATS_H_SIGNATURE);
  if (v == NULL || strlen(v) != 32 || pq_sig_parse(v, p->info.signature) != 0)
    return bad(why, whylen, LDMNATS_H_SIGNATURE, v);
  v = get(arg, LDMNATS_H_SIZE);
  if (parse_u64(v, UINT64_MAX, &p->info.size) != 0)
    return bad(why, whylen, LDMNATS_H_SIZE, v);

  v = get(arg, LDMNATS_H_MD5);
  if (v != NULL) {
    if (strlen(v) != 32 || pq_sig_parse(v, p->md5) != 0)
      return bad(why, whylen, LDMNATS_H_MD5, v);
    p->has_md5 = true;
  }
  v = get(arg, LDMNATS_H_CHUNKS);
  if (v != NULL) {
    if (parse_u64(v, N2P_MAX_CHUNKS, &u) != 0 || u == 0)
      return bad(why, whylen, LDMNATS_H_CHUNKS, v);
    if (u > p->info.size) {
      snprintf(why, whylen,
               "header %s: %" PRIu64 " chunks for %" PRIu64 " bytes",
               LDMNATS_H_CHUNKS, u, p->info.size);
      return -1;
    }
    if (!p->has_md5)
      return bad(why, whylen, LDMNATS_H_MD5, NULL);
    p->nchunks = (unsigned)u;
  }
  return 0;
}

static int check_md5(const struct n2p_product *p, const uint8_t got[PQ_SIGLEN],
                     char *why, size_t whylen) {
  if (memcmp(got, p->md5, PQ_SIGLEN) == 0)
    return 0;
  char want[33], have[33];
  pq_sig_format(p->md5, want);
  pq_sig_format(got, have);
  snprintf(why, whylen, "md5 mismatch: the data's is %s, header %s says %s",
           have, LDMNATS_H_MD5, want);
  return -1;
}

int n2p_check_body(const struct n2p_product *p, const void *body, size_t len,
                   char *why, size_t whylen) {
  if (p->nchunks != 0) {
    snprintf(why, whylen, "a chunked product's message has a body");
    return -1;
  }
  if ((uint64_t)len != p->info.size) {
    snprintf(why, whylen, "body of %zu bytes where header %s says %" PRIu64,
             len, LDMNATS_H_SIZE, p->info.size);
    return -1;
  }
  if (!p->has_md5)
    return 0;
  uint8_t got[PQ_SIGLEN];
  if (pq_md5(body, len, got) != 0) {
    snprintf(why, whylen, "md5 of the body failed (libcrypto)");
    return -1;
  }
  return check_md5(p, got, why, whylen);
}

int n2p_asm_begin(struct n2p_assembly *a, const struct n2p_product *p,
                  void *dst, char *why, size_t whylen) {
  memset(a, 0, sizeof *a);
  a->p = p;
  a->dst = dst;
  a->md5 = pq_md5_new();
  if (a->md5 == NULL) {
    snprintf(why, whylen, "no md5 context (libcrypto)");
    return -1;
  }
  return 0;
}

int n2p_asm_chunk(struct n2p_assembly *a, unsigned index, const void *data,
                  size_t len, char *why, size_t whylen) {
  const struct n2p_product *p = a->p;
  if (index != a->next || index >= p->nchunks) {
    snprintf(why, whylen, "chunk %u where chunk %u of %u was expected", index,
             a->next, p->nchunks);
    return -1;
  }
  uint64_t left = p->info.size - a->filled;
  /* Every chunk after this one needs a byte of its own. */
  uint64_t room = left - (uint64_t)(p->nchunks - 1 - index);
  if (len == 0 || (uint64_t)len > room ||
      (index == p->nchunks - 1 && (uint64_t)len != left)) {
    snprintf(why, whylen,
             "chunk %u of %u has %zu bytes where %" PRIu64 " of the %" PRIu64
             " are left",
             index, p->nchunks, len, left, p->info.size);
    return -1;
  }
  memcpy(a->dst + a->filled, data, len);
  if (pq_md5_update(a->md5, data, len) != 0) {
    snprintf(why, whylen, "md5 of chunk %u failed (libcrypto)", index);
    return -1;
  }
  a->filled += len;
  a->next++;
  return 0;
}

int n2p_asm_finish(struct n2p_assembly *a, char *why, size_t whylen) {
  const struct n2p_product *p = a->p;
  if (a->next != p->nchunks || a->filled != p->info.size) {
    snprintf(why, whylen,
             "%u of %u chunks, %" PRIu64 " of %" PRIu64 " bytes reassembled",
             a->next, p->nchunks, a->filled, p->info.size);
    n2p_asm_abort(a);
    return -1;
  }
  uint8_t got[PQ_SIGLEN];
  int rc = pq_md5_final(a->md5, got);
  a->md5 = NULL;
  if (rc != 0) {
    snprintf(why, whylen, "md5 of the data failed (libcrypto)");
    return -1;
  }
  return check_md5(p, got, why, whylen);
}

void n2p_asm_abort(struct n2p_assembly *a) {
  pq_md5_free(a->md5);
  a->md5 = NULL;
}

/* The length of the token at s (up to '.' or the end). */
static size_t token_len(const char *s) {
  const char *dot = strchr(s, '.');
  return dot == NULL ? strlen(s) : (size_t)(dot - s);
}

bool n2p_subject_match(const char *filter, const char *subject) {
  const char *f = filter, *s = subject;
  for (;;) {
    size_t fl = token_len(f), sl = token_len(s);
    if (fl == 1 && f[0] == '>' && f[1] == '\0')
      return sl > 0;
    if (sl == 0)
      return false;
    if (!(fl == 1 && f[0] == '*') && (fl != sl || memcmp(f, s, fl) != 0))
      return false;
    f += fl;
    s += sl;
    if (*f == '\0' || *s == '\0')
      return *f == '\0' && *s == '\0';
    f++;
    s++;
  }
}
