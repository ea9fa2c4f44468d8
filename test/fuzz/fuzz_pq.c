/*
 * fuzz_pq.c - libFuzzer target for the queue file as a trust boundary.  A
 * queue is only as safe as what pq_open, pq_check, the automatic repair and
 * the readers do with a file whose header or indexes were damaged.  The
 * input's first byte chooses how its other bytes are laid over a small
 * valid queue:
 *   bit 0  set the dirty flag afterwards (forcing the crash repair);
 *   bit 1  start at offset 0, over the immutable header too (magic,
 *          version, layout signature, geometry, checksum): pq_open must
 *          refuse a damaged header cleanly, never crash;
 *   bit 2  then recompute the header checksum, so that damaged geometry,
 *          version or layout reach the checks behind the checksum;
 *   bit 3  read with verification on (pq_set_verify), bit 4 then in
 *          ONCE mode (trusting check marks) rather than EACH;
 * otherwise the input starts at the end of the immutable header (which
 * then passes its checksum) and reaches the slots, the indexes and the
 * records.  The queue is opened, checked (read-only, then read-write),
 * read, written to, repaired and checked again.
 * After the repair, every invariant must hold.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *pristine;
static size_t pristine_len;
static char path[64];

static void remove_queue(void) {
  unlink(path);
}

static void make_pristine(void) {
  snprintf(path, sizeof path, "/dev/shm/fuzz_pq.%ld", (long)getpid());
  atexit(remove_queue); /* libFuzzer ends a timed run with exit() */
  pq_create_opts o = {
      .pc_data_size = 4096, .pc_slots = 8, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  if (pq_create(path, &o, &pq, NULL) != PQ_OK)
    abort();
  for (unsigned i = 0; i < 6; i++) {
    pq_prod_info info;
    memset(&info, 0, sizeof info);
    info.size = 100 + 50 * i;
    info.signature[0] = (uint8_t)i;
    info.feedtype = 1u << i;
    snprintf(info.ident, sizeof info.ident, "fuzz/%u", i);
    static uint8_t buf[512];
    if (pq_insert(pq, &info, buf) != PQ_OK)
      abort();
  }
  pq_close(pq);
  FILE *f = fopen(path, "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0)
    abort();
  pristine_len = (size_t)ftell(f);
  pristine = malloc(pristine_len);
  rewind(f);
  if (pristine == NULL || fread(pristine, 1, pristine_len, f) != pristine_len)
    abort();
  fclose(f);
}

static int reader(const pq_prod_info *info, const void *d,
                  const pq_place *place, void *arg) {
  (void)place;
  uint8_t sum = 0;
  for (uint64_t i = 0; i < info->size; i++)
    sum += ((const uint8_t *)d)[i];
  *(uint8_t *)arg ^= sum; /* touch every byte the callback is given */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (pristine == NULL)
    make_pristine();
  uint8_t *img = malloc(pristine_len);
  if (img == NULL)
    return 0;
  memcpy(img, pristine, pristine_len);
  unsigned mode = size > 0 ? data[0] : 0;
  if (size > 0) {
    data++;
    size--;
  }
  const size_t skip = (mode & 2) ? 0 : offsetof(struct pq_hdr, hd_dirty);
  size_t n = size < pristine_len - skip ? size : pristine_len - skip;
  memcpy(img + skip, data, n);
  struct pq_hdr *h = (struct pq_hdr *)img;
  if (mode & 1)
    h->hd_dirty = 1;
  if (mode & 4)
    h->hd_csum = pq__hdr_checksum(h);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(img, 1, pristine_len, f) != pristine_len)
    abort();
  fclose(f);
  free(img);

  pq_t *pq;
  pq_error err;
  if (pq_open(path, PQ_READONLY, &pq, &err) == PQ_OK) {
    pq_check_report ro;
    (void)pq_check(pq, &ro); /* look only: a crash's traces are reported */
    pq_close(pq);
  } else if (err.pe_msg[0] == '\0') {
    fprintf(stderr, "pq_open refused the file without a reason\n");
    abort();
  }
  if (pq_open(path, 0, &pq, NULL) != PQ_OK)
    return 0;
  pq_check_report r;
  (void)pq_check(pq, &r);
  pq_set_verify(pq, (mode & 8) == 0    ? PQ_VERIFY_OFF
                    : (mode & 16) != 0 ? PQ_VERIFY_ONCE
                                       : PQ_VERIFY_EACH);
  uint8_t sum = 0;
  for (int i = 0;
       i < 20 && pq_next(pq, PQ_FORWARD, NULL, reader, &sum) == PQ_OK; i++)
    ;
  pq_cursor_set(pq, PQ_CURSOR_END);
  (void)pq_next(pq, PQ_BACKWARD, NULL, reader, &sum);
  uint8_t sig[PQ_SIGLEN] = {3};
  (void)pq_find(pq, sig, reader, &sum);
  (void)pq_repair(pq, NULL);
  if (pq_check(pq, &r) != PQ_OK) {
    fprintf(stderr, "after repair: invariant %d: %s\n", r.pr_invariant,
            r.pr_msg);
    abort();
  }
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  info.size = 300;
  info.signature[0] = 0xee;
  static uint8_t buf[300];
  (void)pq_insert(pq, &info, buf);
  (void)pq_delete(pq, sig);
  pq_stats st;
  (void)pq_stats_get(pq, &st);
  if (pq_check(pq, &r) != PQ_OK) {
    fprintf(stderr, "after writes: invariant %d: %s\n", r.pr_invariant,
            r.pr_msg);
    abort();
  }
  pq_close(pq);
  return 0;
}
