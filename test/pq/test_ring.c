/*
 * test_ring.c - space and slots: eviction of the oldest products when bytes
 * or slots run out, products held by readers left in place (the head jumps
 * over them), PQ_LOCKED when nothing can go, an insert that fails for
 * lack of room evicting nothing, a damaged region list met by an insert
 * rebuilt by the next, reservations of dead writers reclaimed, and a long
 * random run checked against every invariant.
 */
#include "test/lib/testutil.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>

#include "pq/internal.h"

TU_QUEUE_FIXTURE("test_ring")

static uint8_t buf[1 << 20];

struct seen {
  unsigned n;
  uint32_t first, last;
  bool bad, gap;
};

static int tally(const pq_prod_info *info, const void *data,
                 const pq_place *place, void *arg) {
  struct seen *s = arg;
  uint8_t sig[PQ_SIGLEN];
  (void)place;
  pq_md5(data, info->size, sig);
  if (memcmp(sig, info->signature, PQ_SIGLEN) != 0)
    s->bad = true;
  if (s->n == 0)
    s->first = info->seqno;
  else if (info->seqno != s->last + 1)
    s->gap = true;
  s->last = info->seqno;
  s->n++;
  return 0;
}

static struct seen read_all(pq_t *pq) {
  struct seen s = {0};
  pq_cursor_oldest(pq);
  while (pq_next(pq, PQ_FORWARD, NULL, tally, &s) == PQ_OK)
    ;
  return s;
}

static void insert(pq_t *pq, size_t size, uint64_t seed, int want) {
  pq_prod_info info;
  tu_product(&info, buf, size, seed);
  assert_int_equal(pq_insert(pq, &info, buf), want);
}

static void test_evicts_oldest_bytes(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 256);
  for (unsigned i = 0; i < 500; i++) {
    insert(pq, 1000, i, PQ_OK);
    if (i % 50 == 0)
      tu_check(pq);
  }
  struct seen s = read_all(pq);
  assert_false(s.bad);
  assert_false(s.gap); /* the survivors are the newest, in a row */
  assert_int_equal(s.last, 499);
  assert_true(s.n >= 55 && s.n <= 64);
  tu_check(pq);
  pq_close(pq);
}

static void test_evicts_oldest_slots(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 8);
  for (unsigned i = 0; i < 20; i++)
    insert(pq, 100, i, PQ_OK);
  struct seen s = read_all(pq);
  assert_int_equal(s.n, 8);
  assert_int_equal(s.first, 12);
  assert_int_equal(s.last, 19);
  assert_false(s.gap);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nempty, 0);
  assert_int_equal(st.ps_minempty, 0);
  assert_true(st.ps_is_full);
  tu_check(pq);
  pq_close(pq);
}

struct holder {
  pq_t *writer; /* inserts while the product is held */
  unsigned inserts;
  int insert_rc;
  bool intact;
};

static int hold_and_write(const pq_prod_info *info, const void *data,
                          const pq_place *place, void *arg) {
  struct holder *h = arg;
  uint8_t before[PQ_SIGLEN], after[PQ_SIGLEN];
  (void)place;
  pq_md5(data, info->size, before);
  for (unsigned i = 0; i < h->inserts; i++) {
    pq_prod_info pi;
    static uint8_t b[8192];
    tu_product(&pi, b, 3000, 100000 + i);
    h->insert_rc = pq_insert(h->writer, &pi, b);
    if (h->insert_rc != PQ_OK)
      break;
  }
  pq_md5(data, info->size, after);
  h->intact = memcmp(before, after, PQ_SIGLEN) == 0 &&
              memcmp(before, info->signature, PQ_SIGLEN) == 0;
  return 0;
}

static void test_held_product_survives(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 64);
  for (unsigned i = 0; i < 10; i++)
    insert(pq, 3000, i, PQ_OK);
  /* Another handle writes 5 laps of the ring while the oldest is held. */
  pq_t *w;
  assert_int_equal(pq_open(path, 0, &w, NULL), PQ_OK);
  struct holder h = {.writer = w, .inserts = 100};
  pq_cursor_oldest(pq);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, hold_and_write, &h), PQ_OK);
  assert_int_equal(h.insert_rc, PQ_OK);
  assert_true(h.intact);
  tu_check(pq);
  /* Released, it goes with the next lap. */
  for (unsigned i = 0; i < 100; i++)
    insert(pq, 3000, 200000 + i, PQ_OK);
  pq_prod_info info;
  tu_product(&info, buf, 3000, 0);
  assert_int_equal(pq_find(pq, info.signature, hold_and_write, &h),
                   PQ_NOTFOUND);
  /* The same handle inserting from inside its own callback. */
  h.writer = pq;
  h.inserts = 60;
  pq_cursor_oldest(pq);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, hold_and_write, &h), PQ_OK);
  assert_int_equal(h.insert_rc, PQ_OK);
  assert_true(h.intact);
  tu_check(pq);
  pq_close(w);
  pq_close(pq);
}

static int hold_and_fill(const pq_prod_info *info, const void *data,
                         const pq_place *place, void *arg) {
  struct holder *h = arg;
  (void)info;
  (void)data;
  (void)place;
  pq_prod_info pi;
  static uint8_t b[40 * 1024];
  tu_product(&pi, b, sizeof b, 777);
  h->insert_rc = pq_insert(h->writer, &pi, b);
  return 0;
}

static void test_locked_when_nothing_can_go(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 16);
  insert(pq, 40 * 1024, 1, PQ_OK);
  pq_t *w;
  assert_int_equal(pq_open(path, 0, &w, NULL), PQ_OK);
  struct holder h = {.writer = w};
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, hold_and_fill, &h), PQ_OK);
  assert_int_equal(h.insert_rc, PQ_LOCKED);
  /* A live reservation blocks as well. */
  pq_prod_info info;
  tu_product(&info, buf, 40 * 1024, 2);
  pq_resv r;
  assert_int_equal(pq_reserve(w, &info, &r), PQ_OK);
  insert(pq, 40 * 1024, 3, PQ_LOCKED);
  assert_int_equal(pq_discard(w, &r), PQ_OK);
  insert(pq, 40 * 1024, 3, PQ_OK);
  tu_check(pq);
  pq_close(w);
  pq_close(pq);
}

/* Inside a read of the held product: another handle's insert of a
 * product that cannot fit beside it, and the queue as it saw it after. */
struct blocked {
  pq_t *writer;
  size_t size;
  int insert_rc;
  pq_stats after;
};

static int insert_while_held(const pq_prod_info *info, const void *data,
                             const pq_place *place, void *arg) {
  struct blocked *b = arg;
  (void)info;
  (void)data;
  (void)place;
  static uint8_t big[48 * 1024];
  pq_prod_info pi;
  tu_product(&pi, big, b->size, 999);
  b->insert_rc = pq_insert(b->writer, &pi, big);
  (void)pq_stats_get(b->writer, &b->after);
  return 0;
}

static void test_failed_insert_evicts_nothing(void **state) {
  (void)state;
  /* 8 products of 7000 bytes in 64 KiB and 8 slots: every slot used, the
   * head near the end.  While the 4th is held, the largest gap is what
   * lies after it (about 36 KiB): a 40,000-byte product fits nowhere. */
  pq_t *pq = tu_create(path, 64 * 1024, 8);
  for (unsigned i = 0; i < 8; i++)
    insert(pq, 7000, i, PQ_OK);
  pq_stats before;
  assert_int_equal(pq_stats_get(pq, &before), PQ_OK);
  assert_int_equal(before.ps_nempty, 0);
  pq_t *w;
  assert_int_equal(pq_open(path, 0, &w, NULL), PQ_OK);
  struct blocked b = {.writer = w, .size = 40000};
  pq_prod_info held;
  tu_product(&held, buf, 7000, 3);
  assert_int_equal(pq_find(pq, held.signature, insert_while_held, &b), PQ_OK);
  assert_int_equal(b.insert_rc, PQ_LOCKED);
  /* Nothing was evicted for it: not for a slot, not for bytes. */
  assert_int_equal(b.after.ps_nprods, 8);
  assert_int_equal(b.after.ps_evicted, before.ps_evicted);
  assert_int_equal(b.after.ps_nbytes, before.ps_nbytes);
  struct seen s = read_all(pq);
  assert_int_equal(s.n, 8);
  assert_int_equal(s.first, 0);
  assert_false(s.gap);
  tu_check(pq);

  pq_close(w);
  pq_close(pq);

  /* Held by a live reservation in the middle of the area instead: the
   * same.  4 products, the reservation, 3 products: every slot used. */
  pq = tu_create(path, 64 * 1024, 8);
  assert_int_equal(pq_open(path, 0, &w, NULL), PQ_OK);
  for (unsigned i = 0; i < 4; i++)
    insert(pq, 7000, i, PQ_OK);
  pq_prod_info info;
  tu_product(&info, buf, 7000, 50);
  pq_resv r;
  assert_int_equal(pq_reserve(w, &info, &r), PQ_OK);
  for (unsigned i = 4; i < 7; i++)
    insert(pq, 7000, i, PQ_OK);
  assert_int_equal(pq_stats_get(pq, &before), PQ_OK);
  assert_int_equal(before.ps_nempty, 0);
  insert(pq, 40000, 51, PQ_LOCKED);
  pq_stats after;
  assert_int_equal(pq_stats_get(pq, &after), PQ_OK);
  assert_int_equal(after.ps_nprods, 7);
  assert_int_equal(after.ps_evicted, before.ps_evicted);
  s = read_all(pq);
  assert_int_equal(s.n, 7);
  assert_int_equal(s.first, 0);
  tu_check(pq);

  /* Once nothing is held, the product goes in, evicting what it needs. */
  assert_int_equal(pq_discard(w, &r), PQ_OK);
  insert(pq, 40000, 51, PQ_OK);
  assert_int_equal(pq_stats_get(pq, &after), PQ_OK);
  assert_true(after.ps_evicted > before.ps_evicted);
  tu_check(pq);
  pq_close(w);
  pq_close(pq);
}

/* The region list damaged in front of the head: the insert that meets it
 * fails with PQ_CORRUPT and leaves the queue marked dirty, so the next
 * locker rebuilds the list and the next insert succeeds.  For a small
 * product (reserved and committed under one lock) and a large one
 * (pq_reserve(), then the copy). */
static void test_damaged_list_rebuilt(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 16);
  insert(pq, 1000, 1, PQ_OK);
  insert(pq, 1000, 2, PQ_OK);
  const size_t sizes[] = {100, 10000};
  for (unsigned i = 0; i < 2; i++) {
    pq->rl[pq->hdr->hd_head_prev].rl_next = 0xfffffff0u;
    insert(pq, sizes[i], 10 + i, PQ_CORRUPT);
    insert(pq, sizes[i], 10 + i, PQ_OK);
    tu_check(pq);
  }
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_repairs, 2);
  assert_int_equal(st.ps_nprods, 4);
  pq_close(pq);
}

/* A failed probe of a product's lock while making room: PQ_SYSTEM with
 * the errno and the path, nothing evicted; the next insert evicts. */
static void test_probe_failure_reported(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 16);
  for (unsigned i = 0; i < 8; i++)
    insert(pq, 7000, i, PQ_OK);
  pq__sys_inject("lock_held", EIO);
  insert(pq, 20000, 100, PQ_SYSTEM);
  const pq_error *e = pq_last_error(pq);
  assert_int_equal(e->pe_errno, EIO);
  assert_non_null(strstr(e->pe_msg, path));
  assert_non_null(strstr(e->pe_msg, strerror(EIO)));
  struct seen s = read_all(pq);
  assert_int_equal(s.n, 8);
  insert(pq, 20000, 100, PQ_OK);
  tu_check(pq);
  pq_close(pq);
}

static void test_dead_reservation_reclaimed(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 16);
  pq_prod_info info;
  tu_product(&info, buf, 20000, 5);
  pid_t pid = tu_writer_child(path, &info);
  insert(pq, 20000, 5, PQ_DUP); /* its writer is alive: a duplicate */
  pq_check_report rep;
  assert_int_equal(pq_check(pq, &rep), PQ_OK);
  assert_int_equal(rep.pr_reserved, 1);
  tu_kill(pid);
  insert(pq, 20000, 5, PQ_OK); /* dead: reclaimed, no longer a duplicate */
  assert_int_equal(pq_check(pq, &rep), PQ_OK);
  assert_int_equal(rep.pr_reserved, 0);
  pq_close(pq);
}

static void test_random_sizes(void **state) {
  (void)state;
  unsigned seed = (unsigned)time(NULL);
  const char *env = getenv("PQ_TEST_SEED");
  if (env)
    seed = (unsigned)strtoul(env, NULL, 0);
  print_message("test_random_sizes seed %u (PQ_TEST_SEED)\n", seed);
  srand(seed);
  pq_t *pq = tu_create(path, 256 * 1024, 32);
  for (unsigned i = 0; i < 5000; i++) {
    insert(pq, 1 + (size_t)rand() % (20 * 1024), i, PQ_OK);
    if (i % 250 == 0)
      tu_check(pq);
  }
  struct seen s = read_all(pq);
  assert_false(s.bad);
  assert_false(s.gap);
  assert_int_equal(s.last, 4999);
  tu_check(pq);
  pq_close(pq);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_evicts_oldest_bytes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_evicts_oldest_slots, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_held_product_survives, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_locked_when_nothing_can_go, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_failed_insert_evicts_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_damaged_list_rebuilt, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_probe_failure_reported, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_dead_reservation_reclaimed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_random_sizes, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
