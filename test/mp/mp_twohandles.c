/*
 * mp_twohandles.c - one process, two handles on one queue.  The locks are
 * open-file-description locks, so two handles of one process exclude each
 * other as two processes would: a product held by a callback on handle A is
 * not evicted by inserts on handle B, nor deleted through B, while the
 * queue turns over several times around it; once A lets go, B can evict it.
 * The same holds for a product held by a handle's own callback while that
 * handle inserts.  (The callback never reads through the handle that holds
 * the product: a nested read on the same handle ends the outer hold; see
 * repro_nested_read.c.)
 *
 * usage: mp_twohandles [seed]   (or PQ_TEST_SEED)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/mp/mp_util.h"

#define DATA_SIZE (1u << 20)
#define HELD_SIZE (100u << 10)
#define FILL_SIZE (20u << 10)

struct ctx {
  pq_t *writer; /* the handle that inserts while the product is held */
  pq_t *finder; /* a handle other than the holder's, to look it up */
  uint64_t rng;
  uint8_t held_sig[PQ_SIGLEN];
  uint8_t *buf;
  uint64_t seq;
  int failures;
  uint64_t inserted_during_hold;
};

#define CHECK(c, cond, ...)                                                    \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
      (c)->failures++;                                                         \
    }                                                                          \
  } while (0)

static int insert(struct ctx *c, pq_t *pq, uint64_t size, uint8_t *sig) {
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  info.arrival = pq_ts_now();
  info.feedtype = PQ_FT_EXP;
  info.seqno = (uint32_t)c->seq;
  info.size = size;
  snprintf(info.origin, sizeof info.origin, "twohandles");
  snprintf(info.ident, sizeof info.ident, "two/%06" PRIu64, c->seq);
  mp_fill(c->buf, size, mp_mix(c->rng, c->seq++));
  pq_md5(c->buf, size, info.signature);
  if (sig != NULL)
    memcpy(sig, info.signature, PQ_SIGLEN);
  return pq_insert(pq, &info, c->buf);
}

static int same_offset(const pq_prod_info *info, const void *data,
                       const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  *(uint64_t *)arg = place->pp_offset;
  return 0;
}

/* Runs while the product is held through another handle, or this one. */
static int hold_and_insert(const pq_prod_info *info, const void *data,
                           const pq_place *place, void *arg) {
  struct ctx *c = arg;
  uint8_t before[PQ_SIGLEN], after[PQ_SIGLEN];
  CHECK(c, memcmp(info->signature, c->held_sig, PQ_SIGLEN) == 0,
        "the callback got another product (%s)", info->ident);
  pq_md5(data, info->size, before);
  CHECK(c, memcmp(before, info->signature, PQ_SIGLEN) == 0,
        "held product damaged before the test");

  pq_stats st0, st1;
  CHECK(c, mp_ok(pq_stats_get(c->writer, &st0), c->writer, "stats"), "stats");
  /* Five times the queue's size through the other handle. */
  for (unsigned i = 0; i < 5 * DATA_SIZE / FILL_SIZE; i++) {
    int rc = insert(c, c->writer, FILL_SIZE, NULL);
    CHECK(c, rc == PQ_OK, "insert %u during the hold: %s", i, pq_strerror(rc));
    c->inserted_during_hold += rc == PQ_OK;
  }
  CHECK(c, mp_ok(pq_stats_get(c->writer, &st1), c->writer, "stats"), "stats");
  CHECK(c, st1.ps_evicted - st0.ps_evicted >= 4 * DATA_SIZE / FILL_SIZE,
        "only %" PRIu64 " evictions during the hold",
        st1.ps_evicted - st0.ps_evicted);

  uint64_t off = 0;
  int rc = pq_find(c->finder, c->held_sig, same_offset, &off);
  CHECK(c, rc == PQ_OK, "held product not found through the other handle: %s",
        pq_strerror(rc));
  CHECK(c, off == place->pp_offset, "held product moved");
  rc = pq_delete(c->writer, c->held_sig);
  CHECK(c, rc == PQ_LOCKED, "deleting a held product gave %s, not PQ_LOCKED",
        pq_strerror(rc));

  /* Needs the room the held product takes: no room while it is held. */
  rc = insert(c, c->writer, DATA_SIZE - HELD_SIZE / 2, NULL);
  CHECK(c, rc == PQ_LOCKED,
        "a product that needs the held one's room gave %s, not PQ_LOCKED",
        pq_strerror(rc));

  pq_md5(data, info->size, after);
  CHECK(c, memcmp(before, after, PQ_SIGLEN) == 0,
        "held product changed while held");
  return 0;
}

static void run(struct ctx *c, const char *path, bool same_handle) {
  pq_create_opts o = {
      .pc_data_size = DATA_SIZE, .pc_slots = 256, .pc_flags = PQ_CLOBBER};
  pq_t *a, *b;
  pq_error err;
  if (pq_create(path, &o, &b, &err) != PQ_OK) {
    printf("FAIL create %s: %s\n", path, err.pe_msg);
    c->failures++;
    return;
  }
  if (pq_open(path, PQ_READONLY, &a, &err) != PQ_OK) {
    printf("FAIL open %s: %s\n", path, err.pe_msg);
    c->failures++;
    pq_close(b);
    return;
  }
  pq_t *holder = same_handle ? b : a;
  c->writer = b;
  c->finder = same_handle ? a : b;
  int rc = insert(c, b, HELD_SIZE, c->held_sig);
  CHECK(c, rc == PQ_OK, "first insert: %s", pq_strerror(rc));
  for (unsigned i = 0; i < 5; i++)
    CHECK(c, insert(c, b, 1000, NULL) == PQ_OK, "small insert");

  c->inserted_during_hold = 0;
  rc = pq_next(holder, PQ_FORWARD, NULL, hold_and_insert, c);
  CHECK(c, rc == PQ_OK, "pq_next: %s", pq_strerror(rc));

  /* Let go: now the big product fits, evicting the formerly held one. */
  rc = insert(c, b, DATA_SIZE - HELD_SIZE / 2, NULL);
  CHECK(c, rc == PQ_OK, "big insert after the hold: %s", pq_strerror(rc));
  uint64_t off;
  rc = pq_find(a, c->held_sig, same_offset, &off);
  CHECK(c, rc == PQ_NOTFOUND, "released product still there: %s",
        pq_strerror(rc));

  pq_check_report rep;
  rc = pq_check(b, &rep);
  CHECK(c, rc == PQ_OK, "pq_check: invariant %d: %s", rep.pr_invariant,
        rep.pr_msg);
  printf("%s: %" PRIu64 " inserts of %u KiB while a %u KiB product was held "
         "through %s\n",
         same_handle ? "same handle" : "two handles", c->inserted_during_hold,
         FILL_SIZE >> 10, HELD_SIZE >> 10,
         same_handle ? "the inserting handle itself" : "the other handle");
  pq_close(a);
  pq_close(b);
}

int main(int argc, char **argv) {
  struct ctx c;
  memset(&c, 0, sizeof c);
  if (argc > 1) {
    if (!mp_parse_u64(argv[1], &c.rng)) {
      fprintf(stderr, "usage: mp_twohandles [seed]\n");
      return 2;
    }
  } else {
    c.rng = mp_seed_from_env("PQ_TEST_SEED");
  }
  printf("mp_twohandles: seed %" PRIu64 "\n", c.rng);
  c.buf = malloc(DATA_SIZE);
  if (c.buf == NULL)
    return 2;
  char path[512];
  mp_queue_path(path, sizeof path, "mp_twohandles");
  run(&c, path, false);
  run(&c, path, true);
  unlink(path);
  free(c.buf);
  printf("%s\n", c.failures ? "FAILED" : "PASSED");
  return c.failures ? 1 : 0;
}
