/*
 * ldm6_text.c - the text forms of wire values that the server and the
 * clients log: LDM's text of a product class (its s_prod_class), the one
 * implementation behind the requester's, the upstream's and the clients'
 * messages, so that they all print a class as LDM does.  Apart from the
 * coders (ldm6_xdr.c) because it needs the product model's text forms.
 */
#include "ldmd/proto/ldm6_text.h"

#include <stdio.h>

int ldm6_class_format(const ldm6_prod_class *cls, char *buf, size_t len) {
  char from[32], to[32];
  size_t n;
  uint32_t i;
  int w;

  pq_ts_format(ldm6_ts_to_pq(cls->from), from, sizeof from);
  pq_ts_format(ldm6_ts_to_pq(cls->to), to, sizeof to);
  w = snprintf(buf, len, "%s %s {", from, to);
  if (w < 0)
    return w;
  n = (size_t)w;
  for (i = 0; i < cls->psa_len && i < LDM6_PSA_MAX; i++) {
    char feed[180];

    pq_feedtype_format(cls->psa[i].feedtype, feed, sizeof feed);
    w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
                 "%s{%s, \"%.*s\"}", i > 0 ? "," : "", feed, LDM6_MAXPATTERN,
                 cls->psa[i].pattern);
    if (w < 0)
      return w;
    n += (size_t)w;
  }
  w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "}");
  if (w < 0)
    return w;
  return (int)(n + (size_t)w);
}
