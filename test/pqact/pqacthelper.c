/*
 * pqacthelper - inserts the products pqact's shell tests need, with the
 * metadata they choose (pqinsert sets the creation time to now):
 *
 *   pqacthelper insert QUEUE FEEDTYPE SEQNO CREATION_SEC CREATION_USEC \
 *               ORIGIN IDENT FILE
 *
 * inserts the bytes of FILE as one product whose signature is the MD5 of
 * IDENT and of the data (so the same data may go in under several idents).
 * Exit status 0 on success, 1 with a message on stderr otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq/pq.h"

static int insert(char **argv) {
  pq_prod_info info = {0};
  uint32_t ft;
  if (pq_feedtype_parse(argv[2], &ft) != PQ_FT_OK) {
    fprintf(stderr, "pqacthelper: bad feedtype %s\n", argv[2]);
    return 1;
  }
  info.feedtype = ft;
  info.seqno = (uint32_t)strtoul(argv[3], NULL, 10);
  info.arrival.sec = strtoll(argv[4], NULL, 10);
  info.arrival.usec = (int32_t)strtol(argv[5], NULL, 10);
  snprintf(info.origin, sizeof info.origin, "%s", argv[6]);
  snprintf(info.ident, sizeof info.ident, "%s", argv[7]);
  FILE *f = fopen(argv[8], "rb");
  if (f == NULL) {
    perror(argv[8]);
    return 1;
  }
  static unsigned char data[1 << 20];
  size_t n = fread(data, 1, sizeof data, f);
  fclose(f);
  info.size = n;
  size_t ilen = strlen(info.ident);
  unsigned char *both = malloc(ilen + n + 1);
  if (both == NULL)
    return 1;
  memcpy(both, info.ident, ilen);
  memcpy(both + ilen, data, n);
  int rc = pq_md5(both, ilen + n, info.signature);
  free(both);
  if (rc != 0)
    return 1;
  pq_t *pq = NULL;
  pq_error err = {0};
  if (pq_open(argv[1], 0, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pqacthelper: %s\n", err.pe_msg);
    return 1;
  }
  rc = pq_insert(pq, &info, data);
  pq_close(pq);
  if (rc != PQ_OK) {
    fprintf(stderr, "pqacthelper: insert %s: %s\n", info.ident,
            pq_strerror(rc));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 10 && strcmp(argv[1], "insert") == 0)
    return insert(argv + 1);
  fprintf(stderr, "usage: pqacthelper insert QUEUE FEEDTYPE SEQNO SEC USEC "
                  "ORIGIN IDENT FILE\n");
  return 1;
}
