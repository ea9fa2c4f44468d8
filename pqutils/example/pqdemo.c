/*
 * pqdemo - a short demonstration of the product queue for a newcomer:
 * create a queue, insert products of several sizes, read them back in
 * order and check their MD5 signatures, then print the statistics that
 * `pqmon -S` will print.  No script or test runs it: `pqdemo [queue]`
 * (default /dev/shm/pqdemo.pq).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/pq.h"

struct tally {
  unsigned read, bad;
};

static int show(const pq_prod_info *info, const void *data,
                const pq_place *place, void *arg) {
  struct tally *t = arg;
  uint8_t sig[PQ_SIGLEN];
  (void)place;
  if (pq_md5(data, info->size, sig) != 0 ||
      memcmp(sig, info->signature, PQ_SIGLEN) != 0)
    t->bad++;
  t->read++;
  if (t->read <= 5) {
    char line[600];
    pq_prod_info_format(info, false, line, sizeof line);
    printf("  read: %s\n", line);
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "/dev/shm/pqdemo.pq";
  pq_create_opts opts = {
      .pc_data_size = 64u << 20, .pc_slots = 1000, .pc_flags = PQ_CLOBBER};
  pq_error err;
  pq_t *pq;
  printf("creating %s: %llu bytes of data, %llu slots\n", path,
         (unsigned long long)opts.pc_data_size,
         (unsigned long long)opts.pc_slots);
  if (pq_create(path, &opts, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pqdemo: %s\n", err.pe_msg);
    return 1;
  }
  const unsigned n = 2000;
  size_t max = 256 * 1024;
  uint8_t *buf = malloc(max);
  if (buf == NULL)
    return 1;
  uint64_t x = 42;
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info = {
        .arrival = pq_ts_now(), .feedtype = PQ_FT_EXP, .seqno = i};
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    info.size = 100 + (size_t)(x >> 33) % (max - 100);
    for (size_t j = 0; j + 8 <= max; j += 8) { /* cheap random contents */
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      memcpy(buf + j, &x, 8);
    }
    snprintf(info.ident, sizeof info.ident, "demo/product.%04u", i);
    gethostname(info.origin, PQ_ORIGIN_MAX);
    pq_md5(buf, info.size, info.signature);
    int rc = pq_insert(pq, &info, buf);
    if (rc != PQ_OK) {
      fprintf(stderr, "pqdemo: insert: %s\n", pq_strerror(rc));
      return 1;
    }
  }
  printf("inserted %u products of 100 B to 256 KiB (the queue evicts the "
         "oldest when full)\n",
         n);
  struct tally t = {0, 0};
  int rc;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, show, &t)) == PQ_OK)
    ;
  printf("read back %u products in insertion order, %u with a bad MD5\n",
         t.read, t.bad);
  pq_stats st;
  if (pq_stats_get(pq, &st) == PQ_OK)
    printf("pqmon -S: %d %llu %llu %llu %llu %llu %llu %.0f %.0f %lld %llu "
           "%llu\n",
           st.ps_is_full, (unsigned long long)st.ps_data_size,
           (unsigned long long)st.ps_maxbytes, (unsigned long long)st.ps_nbytes,
           (unsigned long long)st.ps_slots, (unsigned long long)st.ps_maxprods,
           (unsigned long long)st.ps_nprods, st.ps_age_oldest,
           st.ps_age_youngest,
           (long long)(st.ps_mvrt_us < 0 ? -1 : st.ps_mvrt_us / 1000000),
           (unsigned long long)st.ps_mvrt_bytes,
           (unsigned long long)st.ps_mvrt_slots);
  pq_check_report rep;
  rc = pq_check(pq, &rep);
  printf("full check: %s (%llu products)\n",
         rc == PQ_OK ? "every invariant holds" : rep.pr_msg,
         (unsigned long long)rep.pr_products);
  pq_close(pq);
  free(buf);
  return rc == PQ_OK && t.bad == 0 ? 0 : 1;
}
