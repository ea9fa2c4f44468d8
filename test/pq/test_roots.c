/*
 * test_roots.c - a queue whose header roots were damaged by one stray
 * 64-bit write (issue 21, item 4): the write head, the word of the region
 * before it and the free-slot stack's top, the free-slot count, the last
 * insertion time (out of range, behind the newest product, or at the last
 * time there is).  The header checksum covers none of them.  For each:
 * pq_check() (read-only, as pqcheck -C) names the invariant; the next
 * insert into a queue that had room evicts nothing (it succeeds, or is
 * refused with PQ_CORRUPT and a message saying so, and the one after it
 * succeeds, the automatic repair having rebuilt the roots from the slots);
 * and pq_repair_ex() (pqcheck -F) reports what it changed and names what
 * it dropped.
 */
#include "test/lib/testutil.h"

#include <fcntl.h>
#include <stddef.h>

#include "pq/internal.h"

TU_QUEUE_FIXTURE("test_roots")

#define NPRODS 20

static uint8_t buf[1 << 16];

/* A queue of 64 slots and 256 KiB holding NPRODS products of about 1 KB:
 * room for many more. */
static void make_queue(void) {
  tu_small_queue(path, NPRODS, buf);
}

/* Write the 64-bit value v over the header field at offset field (the
 * file's own bytes, as a stray write would). */
static void poke(size_t field, uint64_t v) {
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, &v, sizeof v, PQ_HDR_OFF + field), sizeof v);
  close(fd);
}

static uint64_t peek(size_t field) {
  uint64_t v = 0;
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(pread(fd, &v, sizeof v, PQ_HDR_OFF + field), sizeof v);
  close(fd);
  return v;
}

struct seen {
  unsigned n;
  bool orig[NPRODS]; /* test/<i> for i < NPRODS seen */
};

static int note(const pq_prod_info *info, const void *data,
                const pq_place *place, void *arg) {
  struct seen *s = arg;
  unsigned i;
  (void)data;
  (void)place;
  if (sscanf(info->ident, "test/%u", &i) == 1 && i < NPRODS)
    s->orig[i] = true;
  s->n++;
  return 0;
}

/* Every one of the NPRODS products is still in the queue; how many there
 * are in all. */
static unsigned all_originals(pq_t *pq) {
  struct seen s;
  memset(&s, 0, sizeof s);
  pq_cursor_oldest(pq);
  while (pq_next(pq, PQ_FORWARD, NULL, note, &s) == PQ_OK)
    ;
  for (unsigned i = 0; i < NPRODS; i++)
    if (!s.orig[i])
      fail_msg("product test/%u was lost", i);
  return s.n;
}

/* A read-only check (pqcheck -C) fails invariant inv; 0: passes. */
static void check_says(int inv) {
  pq_t *pq;
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  pq_check_report r;
  int rc = pq_check(pq, &r);
  if (inv == 0 && rc != PQ_OK)
    fail_msg("pq_check: invariant %d: %s", r.pr_invariant, r.pr_msg);
  if (inv != 0) {
    assert_int_equal(rc, PQ_CORRUPT);
    assert_int_equal(r.pr_invariant, inv);
  }
  pq_close(pq);
}

/* Insert product seed: PQ_OK, or PQ_CORRUPT naming the damaged header
 * (nothing evicted), after which the next try succeeds.  Evicts nothing:
 * every original product is still there. */
static void insert_evicts_nothing(pq_t *pq, uint64_t seed, size_t size) {
  pq_prod_info info;
  tu_product(&info, buf, size, seed);
  pq_stats before, after;
  assert_int_equal(pq_stats_get(pq, &before), PQ_OK);
  int rc = pq_insert(pq, &info, buf);
  if (rc == PQ_CORRUPT) {
    assert_non_null(strstr(pq_last_error(pq)->pe_msg, "header damaged"));
    assert_non_null(strstr(pq_last_error(pq)->pe_msg, "nothing evicted"));
    rc = pq_insert(pq, &info, buf);
  }
  assert_int_equal(rc, PQ_OK);
  assert_int_equal(pq_stats_get(pq, &after), PQ_OK);
  assert_int_equal(after.ps_evicted, before.ps_evicted);
  all_originals(pq);
  tu_check(pq);
}

/* One bad value over the write head: the check names invariant 14 (a
 * value inside the free space after the head's region, which the ring no
 * longer reads, passes), and two inserts of a small and a large product
 * evict nothing. */
static void bad_head(uint64_t v, int inv) {
  make_queue();
  poke(offsetof(struct pq_hdr, hd_head), v);
  check_says(inv);
  pq_t *pq;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  insert_evicts_nothing(pq, 100, 500);
  insert_evicts_nothing(pq, 101, 20000);
  assert_int_equal(all_originals(pq), NPRODS + 2);
  pq_close(pq);
}

static void test_damaged_head(void **state) {
  (void)state;
  bad_head(0, 14);                  /* the start of the area: the oldest */
  bad_head(3000, 14);               /* inside the third product */
  bad_head(0xdeadbeef0badf00d, 14); /* out of the area */
  bad_head(256 * 1024 - 8, 0);      /* free space, near the end: wraps */
  bad_head(256 * 1024, 0);          /* the end of the area */
}

/* The word after the head: hd_head_prev and the free-slot stack's top;
 * and the free-slot count. */
static void test_damaged_head_prev_and_free_slots(void **state) {
  (void)state;
  static const struct {
    size_t field;
    uint64_t v;
    int inv;
  } cases[] = {
      {offsetof(struct pq_hdr, hd_head_prev), 0, 10}, /* slots 0, 0 */
      {offsetof(struct pq_hdr, hd_head_prev), 3 | (uint64_t)20 << 32, 14},
      {offsetof(struct pq_hdr, hd_nfree_slots), 0, 10},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    make_queue();
    poke(cases[i].field, cases[i].v);
    check_says(cases[i].inv);
    pq_t *pq;
    assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
    insert_evicts_nothing(pq, 100 + i, 500);
    assert_int_equal(all_originals(pq), NPRODS + 1);
    pq_close(pq);
  }
}

/* The probe of issue 21: the head and the last insertion time both
 * damaged.  The insert that meets them evicts nothing and the repair
 * keeps every product; none is lost. */
static void test_damaged_head_and_last_key(void **state) {
  (void)state;
  static const uint64_t keys[] = {UINT64_MAX, 5};
  for (unsigned i = 0; i < 2; i++) {
    make_queue();
    uint64_t last = peek(offsetof(struct pq_hdr, hd_last_key));
    poke(offsetof(struct pq_hdr, hd_head), 0);
    poke(offsetof(struct pq_hdr, hd_last_key), keys[i]);
    check_says(8);
    pq_t *pq;
    assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
    insert_evicts_nothing(pq, 100, 500);
    assert_int_equal(all_originals(pq), NPRODS + 1);
    pq_stats st;
    assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
    assert_true(st.ps_last_key > last);
    assert_true(st.ps_last_key <= PQ_KEY_MAX);
    pq_close(pq);
  }
}

/* The last insertion time at PQ_KEY_MAX, which invariant 8 allows but
 * which leaves no time for the next product: the insert is refused before
 * it evicts, and the repair puts the time back to the newest product's. */
static void test_last_key_at_the_end(void **state) {
  (void)state;
  make_queue();
  uint64_t last = peek(offsetof(struct pq_hdr, hd_last_key));
  poke(offsetof(struct pq_hdr, hd_last_key), PQ_KEY_MAX);
  check_says(0);
  pq_t *pq;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  insert_evicts_nothing(pq, 100, 500);
  insert_evicts_nothing(pq, 101, 20000);
  assert_int_equal(all_originals(pq), NPRODS + 2);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_true(st.ps_last_key > last);
  assert_true(st.ps_last_key < PQ_KEY_MAX);
  pq_close(pq);
}

struct drops {
  unsigned n;
  char ident[PQ_IDENT_MAX + 1];
  uint64_t inserted;
};

static void on_drop(const pq_dropped *d, void *arg) {
  struct drops *s = arg;
  s->n++;
  if (d->pd_known)
    snprintf(s->ident, sizeof s->ident, "%s", d->pd_info.ident);
  s->inserted = d->pd_inserted;
  assert_non_null(d->pd_why);
}

/* pq_repair_ex() (pqcheck -F) says what it changed in the header and names
 * the product it dropped. */
static void test_repair_reports(void **state) {
  (void)state;
  make_queue();
  uint64_t head = peek(offsetof(struct pq_hdr, hd_head));
  uint64_t last = peek(offsetof(struct pq_hdr, hd_last_key));
  poke(offsetof(struct pq_hdr, hd_head), 0);
  poke(offsetof(struct pq_hdr, hd_last_key), UINT64_MAX);
  pq_t *pq;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  /* Product test/7's data damaged too: the repair drops it, by name. */
  struct pq_slot *s = &pq->slots[7];
  pq->data[s->ps_offset + s->ps_extent - 8] ^= 0x5a;
  uint64_t key7 = s->ps_key;
  pq_repair_report r;
  struct drops d = {0, "", 0};
  assert_int_equal(pq_repair_ex(pq, &r, on_drop, &d), PQ_OK);
  assert_int_equal(r.rr_head[0], 0);
  assert_int_equal(r.rr_head[1], head);
  assert_int_equal(r.rr_last_key[0], UINT64_MAX);
  assert_int_equal(r.rr_last_key[1], last);
  assert_int_equal(r.rr_products[0], NPRODS);
  assert_int_equal(r.rr_products[1], NPRODS - 1);
  assert_int_equal(r.rr_dropped, 1);
  assert_int_equal(d.n, 1);
  assert_string_equal(d.ident, "test/7");
  assert_int_equal(d.inserted, key7);
  tu_check(pq);
  pq_close(pq);
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_damaged_head, setup, teardown),
      cmocka_unit_test_setup_teardown(test_damaged_head_prev_and_free_slots,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_damaged_head_and_last_key, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_last_key_at_the_end, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_repair_reports, setup, teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
