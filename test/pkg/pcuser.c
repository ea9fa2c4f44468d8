/*
 * pcuser - a program of a library user, built by test/pkg/deb.sh against
 * the installed header and library alone (pkg-config ldmpq, no source
 * tree): opens the queue named on its command line read-only and prints its
 * path, or says why it could not.
 */
#include <pq/pq.h>
#include <stdio.h>

int main(int argc, char **argv) {
  pq_t *pq;
  pq_error err;

  if (argc != 2) {
    fprintf(stderr, "usage: pcuser queue\n");
    return 2;
  }
  int rc = pq_open(argv[1], PQ_READONLY, &pq, &err);
  if (rc != 0) {
    fprintf(stderr, "pcuser: cannot open %s: %s\n", argv[1], err.pe_msg);
    return 1;
  }
  printf("opened %s\n", pq_path(pq));
  return pq_close(pq) == 0 ? 0 : 1;
}
