/*
 * test_queue.c - the public queue API, function by function: creating and
 * opening, inserting and reading back, duplicates, reservations, cursors,
 * classes, deletion, statistics, waiting, the clock stepping back, handles
 * across fork, the writer count, injected system-call failures, and every
 * error code's message.
 */
#include "test/lib/testutil.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "pq/internal.h"

TU_QUEUE_FIXTURE("test_queue")

static uint8_t buf[1 << 20];

static void test_strerror_all(void **state) {
  (void)state;
  int n = 0;
#define CHECK(name, value, msg)                                                \
  assert_string_equal(pq_errname(value), #name);                               \
  assert_int_equal(strncmp(pq_strerror(value), #name ": ", strlen(#name) + 2), \
                   0);                                                         \
  n++;
  PQ_ERROR_MAP(CHECK)
#undef CHECK
  assert_int_equal(n, 1 - PQ_ERROR_MIN);
  for (int c = PQ_ERROR_MIN; c <= 0; c++)
    assert_int_not_equal(strcmp(pq_errname(c), "PQ_UNKNOWN"), 0);
  assert_string_equal(pq_errname(PQ_ERROR_MIN - 1), "PQ_UNKNOWN");
  assert_non_null(strstr(pq_strerror(12345), "unknown"));
}

static void test_create_open_close(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1000000, 0);
  assert_int_equal(pq_slot_count(pq), PQ_MIN_SLOTS); /* 1e6/140000 < 8 */
  assert_true(pq_data_size(pq) >= 1000000);
  assert_string_equal(pq_path(pq), path);
  assert_int_equal(pq_close(pq), PQ_OK);
  assert_int_equal(pq_default_slots(500000000), 3571);
  assert_int_equal(pq_default_slots(1000000000), 7142);
  assert_true(pq_file_size(1000000, 100) > 1000000);
  assert_int_equal(pq_file_size(10, 100), 0);

  pq_error err;
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_OK);
  assert_int_equal(pq_close(pq), PQ_OK);
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, &err), PQ_OK);
  assert_int_equal(pq_close(pq), PQ_OK);
  assert_int_equal(pq_close(NULL), PQ_OK);
  assert_int_equal(pq_open(path, 0x100, &pq, &err), PQ_INVAL);
  assert_int_equal(pq_open(NULL, 0, &pq, &err), PQ_INVAL);
}

static void test_create_refuses(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 100000, 16);
  pq_close(pq);
  pq_error err;
  pq_create_opts o = {.pc_data_size = 100000, .pc_slots = 16};
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_EXISTS);
  assert_non_null(strstr(err.pe_msg, path));
  o.pc_flags = PQ_CLOBBER;
  o.pc_data_size = 100;
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_TOOSMALL);
  o.pc_data_size = 100000;
  o.pc_slots = 4;
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_TOOSMALL);
  assert_non_null(strstr(err.pe_msg, "too small"));
  o.pc_slots = (uint64_t)PQ_MAX_SLOTS + 1;
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_TOOBIG);
  o.pc_slots = 16;
  o.pc_data_size = UINT64_C(1) << 55; /* 32 PiB: no file system has room */
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_NOSPACE);
  o.pc_data_size = 100000;
  assert_int_equal(pq_create("/nonexistent-dir/x.pq", &o, &pq, &err),
                   PQ_SYSTEM);
  pq__sys_inject("statvfs", EIO);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_SYSTEM);
  assert_int_equal(err.pe_errno, EIO);
  pq__sys_inject("fallocate", ENOSPC);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_NOSPACE);
  pq__sys_inject("open", EMFILE);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_SYSTEM);
  assert_int_equal(err.pe_errno, EMFILE);
  /* The old queue survived every refused attempt. */
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_OK);
  tu_check(pq);
  pq_close(pq);
  pq__sys_inject("mmap", ENOMEM);
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_SYSTEM);
  assert_int_equal(pq_open("/nonexistent-dir/x.pq", 0, &pq, &err), PQ_SYSTEM);
  assert_int_equal(err.pe_errno, ENOENT);
}

struct seen {
  unsigned n;
  uint64_t last;
  uint32_t seqnos[4096];
  bool bad;
};

static int collect(const pq_prod_info *info, const void *data,
                   const pq_place *place, void *arg) {
  struct seen *s = arg;
  uint8_t sig[PQ_SIGLEN];
  pq_md5(data, info->size, sig);
  if (memcmp(sig, info->signature, PQ_SIGLEN) != 0 ||
      strcmp(info->origin, "unit.test") != 0)
    s->bad = true;
  if (s->n < 4096)
    s->seqnos[s->n] = info->seqno;
  s->n++;
  s->last = place->pp_inserted;
  return 0;
}

static void insert_n(pq_t *pq, unsigned n, unsigned first, size_t size) {
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info;
    tu_product(&info, buf, size ? size : 1 + (first + i) * 37 % 5000,
               first + i);
    assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  }
}

static void test_insert_read_back(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 200);
  insert_n(pq, 100, 0, 0);
  struct seen s = {0};
  uint64_t prev = 0;
  int rc;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, collect, &s)) == PQ_OK) {
    assert_true(s.last > prev);
    prev = s.last;
  }
  assert_int_equal(rc, PQ_END);
  assert_int_equal(s.n, 100);
  assert_false(s.bad);
  for (unsigned i = 0; i < 100; i++)
    assert_int_equal(s.seqnos[i], i);
  /* Backward from the newest. */
  struct seen b = {0};
  pq_cursor_set(pq, PQ_CURSOR_END);
  while (pq_next(pq, PQ_BACKWARD, NULL, collect, &b) == PQ_OK)
    ;
  assert_int_equal(b.n, 100);
  for (unsigned i = 0; i < 100; i++)
    assert_int_equal(b.seqnos[i], 99 - i);
  assert_int_equal(pq_next(pq, 0, NULL, collect, &b), PQ_INVAL);
  tu_check(pq);
  pq_close(pq);
}

static void test_duplicates(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  pq_prod_info info;
  tu_product(&info, buf, 1000, 7);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_DUP);
  /* From reservation on. */
  pq_prod_info other;
  tu_product(&other, buf, 2000, 8);
  pq_resv r;
  assert_int_equal(pq_reserve(pq, &other, &r), PQ_OK);
  pq_t *pq2;
  assert_int_equal(pq_open(path, 0, &pq2, NULL), PQ_OK);
  assert_int_equal(pq_insert(pq2, &other, buf), PQ_DUP);
  assert_int_equal(pq_discard(pq, &r), PQ_OK);
  assert_int_equal(pq_insert(pq2, &other, buf), PQ_OK);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 2);
  tu_check(pq);
  pq_close(pq2);
  pq_close(pq);
}

static int get_seqno_fwd(const pq_prod_info *info, const void *data,
                         const pq_place *place, void *arg) {
  (void)data;
  (void)place;
  *(uint32_t *)arg = info->seqno;
  return 0;
}

static void test_big_and_invalid(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 16);
  pq_prod_info info;
  tu_product(&info, buf, 64 * 1024, 1);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_BIG);
  info.size = UINT64_MAX;
  assert_int_equal(pq_insert(pq, &info, buf), PQ_BIG);
  tu_product(&info, buf, 100, 2);
  memset(info.ident, 'x', sizeof info.ident); /* no NUL */
  assert_int_equal(pq_insert(pq, &info, buf), PQ_INVAL);
  tu_product(&info, buf, 100, 3);
  info.arrival.usec = 1000000;
  assert_int_equal(pq_insert(pq, &info, buf), PQ_INVAL);
  tu_product(&info, buf, 100, 4);
  assert_int_equal(pq_insert(pq, &info, NULL), PQ_INVAL);
  tu_product(&info, buf, 0, 5); /* empty products are allowed */
  assert_int_equal(pq_insert(pq, &info, NULL), PQ_OK);
  tu_product(&info, buf, 10, 6);
  info.feedtype = PQ_FT_NONE; /* read by a reader that takes everything */
  assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  uint32_t seqs[2], n = 0;
  for (uint32_t seq;
       pq_next(pq, PQ_FORWARD, NULL, get_seqno_fwd, &seq) == PQ_OK;)
    seqs[n++ % 2] = seq;
  assert_int_equal(n, 2);
  assert_int_equal(seqs[0], 5);
  assert_int_equal(seqs[1], 6);
  tu_check(pq);
  pq_close(pq);
}

/* pq_insert_many: runs of small products under one lock, larger ones and
 * bad ones one by one, all in order, each outcome reported. */
static void test_insert_many(void **state) {
  (void)state;
  enum { N = 200 };
  pq_t *pq = tu_create(path, 8 << 20, 400);
  static pq_prod_info infos[N];
  static uint8_t data[N][6000];
  const pq_prod_info *ip[N];
  const void *dp[N];
  int rcs[N];
  for (unsigned i = 0; i < N; i++) {
    /* Mostly small (several runs of 64 KiB), some above the 4 KiB copy
     * limit, and an empty one. */
    size_t size = i == 7 ? 0 : i % 10 == 3 ? 5000 + i : 100 + i * 13 % 3000;
    tu_product(&infos[i], data[i], size, i);
    ip[i] = &infos[i];
    dp[i] = data[i];
  }
  /* A product already queued, a duplicate inside the batch, an invalid
   * one, and one with no data. */
  assert_int_equal(pq_insert(pq, &infos[20], data[20]), PQ_OK);
  static pq_prod_info dup;
  dup = infos[50];
  dup.seqno = 1000;
  ip[60] = &dup;
  infos[90].arrival.usec = 1000000;
  dp[120] = NULL;
  assert_int_equal(pq_insert_many(pq, N, ip, dp, rcs), PQ_OK);
  struct seen s = {0};
  uint64_t prev = 0;
  while (pq_next(pq, PQ_FORWARD, NULL, collect, &s) == PQ_OK) {
    assert_true(s.last > prev);
    prev = s.last;
  }
  assert_false(s.bad);
  unsigned k = 0;
  assert_int_equal(s.seqnos[k++], 20); /* inserted before the batch */
  for (unsigned i = 0; i < N; i++) {
    int want = i == 20 || i == 60    ? PQ_DUP
               : i == 90 || i == 120 ? PQ_INVAL
                                     : PQ_OK;
    assert_int_equal(rcs[i], want);
    if (want == PQ_OK)
      assert_int_equal(s.seqnos[k++], i); /* in order */
  }
  assert_int_equal(s.n, k);
  /* Nothing to do; NULL arrays. */
  assert_int_equal(pq_insert_many(pq, 0, NULL, NULL, NULL), PQ_OK);
  assert_int_equal(pq_insert_many(pq, 1, NULL, dp, rcs), PQ_INVAL);
  tu_check(pq);
  pq_close(pq);

  /* A read-only handle: every product refused, the batch still tried. */
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  for (unsigned i = 0; i < 3; i++)
    tu_product(&infos[i], data[i], 10, 500 + i);
  assert_int_equal(pq_insert_many(pq, 3, ip, dp, rcs), PQ_OK);
  for (unsigned i = 0; i < 3; i++)
    assert_int_equal(rcs[i], PQ_NOWRITE);
  pq_close(pq);
}

static void test_readonly(void **state) {
  (void)state;
  pq_t *w = tu_create(path, 1 << 20, 64);
  insert_n(w, 3, 0, 100);
  pq_t *r;
  assert_int_equal(pq_open(path, PQ_READONLY, &r, NULL), PQ_OK);
  pq_prod_info info;
  tu_product(&info, buf, 100, 99);
  assert_int_equal(pq_insert(r, &info, buf), PQ_NOWRITE);
  pq_resv rv;
  assert_int_equal(pq_reserve(r, &info, &rv), PQ_NOWRITE);
  uint8_t sig[PQ_SIGLEN] = {0};
  assert_int_equal(pq_delete(r, sig), PQ_NOWRITE);
  assert_int_equal(pq_expire(r, pq_ts_now(), NULL, NULL, NULL, NULL),
                   PQ_NOWRITE);
  assert_int_equal(pq_repair(r, NULL), PQ_NOWRITE);
  assert_int_equal(pq_stats_clear_mvrt(r), PQ_NOWRITE);
  struct seen s = {0};
  while (pq_next(r, PQ_FORWARD, NULL, collect, &s) == PQ_OK)
    ;
  assert_int_equal(s.n, 3);
  tu_check(r);
  pq_close(r);
  pq_close(w);
}

static void test_reservations(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  pq_prod_info info;
  tu_product(&info, buf, 5000, 1);
  pq_resv r;
  assert_int_equal(pq_reserve(pq, &info, &r), PQ_OK);
  assert_int_equal(r.pr_size, 5000);
  pq_resv r2;
  assert_int_equal(pq_reserve(pq, &info, &r2), PQ_BADRESV);
  memcpy(r.pr_data, buf, 5000);
  /* Not visible before the commit. */
  struct seen s = {0};
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, collect, &s), PQ_END);
  pq_resv bogus = r;
  bogus.pr_key ^= 1;
  assert_int_equal(pq_commit(pq, &bogus), PQ_BADRESV);
  assert_int_equal(pq_commit(pq, &r), PQ_OK);
  assert_int_equal(pq_commit(pq, &r), PQ_BADRESV);
  assert_int_equal(pq_discard(pq, &r), PQ_BADRESV);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, collect, &s), PQ_OK);
  assert_int_equal(s.n, 1);
  assert_false(s.bad);
  /* A reservation still open at close is discarded. */
  tu_product(&info, buf, 100, 2);
  assert_int_equal(pq_reserve(pq, &info, &r), PQ_OK);
  pq_close(pq);
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nreserved, 0);
  assert_int_equal(st.ps_nprods, 1);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  tu_check(pq);
  pq_close(pq);
}

static void test_commit_at(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  const uint64_t t[] = {5000000, 1000000, 3000000, 9000000, 2000000};
  for (unsigned i = 0; i < 5; i++) {
    pq_prod_info info;
    tu_product(&info, buf, 100, i);
    pq_resv r;
    assert_int_equal(pq_reserve(pq, &info, &r), PQ_OK);
    memcpy(r.pr_data, buf, 100);
    assert_int_equal(pq_commit_at(pq, &r, t[i]), PQ_OK);
    tu_check(pq);
  }
  pq_prod_info info;
  tu_product(&info, buf, 100, 9);
  pq_resv r;
  assert_int_equal(pq_reserve(pq, &info, &r), PQ_OK);
  assert_int_equal(pq_commit_at(pq, &r, 0), PQ_INVAL);
  assert_int_equal(pq_commit_at(pq, &r, 3000000), PQ_DUP); /* taken */
  tu_check(pq);
  assert_int_equal(pq_commit_at(pq, &r, 4000000), PQ_OK);
  struct seen s = {0};
  uint64_t prev = 0;
  while (pq_next(pq, PQ_FORWARD, NULL, collect, &s) == PQ_OK) {
    assert_true(s.last > prev);
    prev = s.last;
  }
  assert_int_equal(s.n, 6);
  const uint32_t order[] = {1, 4, 2, 9, 0, 3};
  for (unsigned i = 0; i < 6; i++)
    assert_int_equal(s.seqnos[i], order[i]);
  /* A later plain commit still gets a time after every one of them. */
  insert_n(pq, 1, 10, 100);
  pq_cursor_set(pq, 9000000);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, collect, &s), PQ_OK);
  assert_int_equal(s.seqnos[6], 10);
  tu_check(pq);
  pq_close(pq);
}

static int stop_at_7(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  (void)data;
  (void)place;
  *(uint32_t *)arg = info->seqno;
  return info->seqno == 7 ? 42 : 0;
}

static int get_seqno(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  (void)data;
  (void)place;
  *(uint32_t *)arg = info->seqno;
  return 0;
}

static int get_place(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  *(pq_place *)arg = *place;
  return 0;
}

static void test_cursors_and_find(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 100);
  insert_n(pq, 20, 0, 300);
  uint32_t seq = 0;
  /* A non-zero callback result is returned and the product offered again. */
  int rc;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, stop_at_7, &seq)) == PQ_OK)
    ;
  assert_int_equal(rc, 42);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 7);
  /* Resume after a signature. */
  pq_prod_info info;
  tu_product(&info, buf, 300, 12);
  assert_int_equal(pq_cursor_after_signature(pq, info.signature), PQ_OK);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 13);
  uint8_t unknown[PQ_SIGLEN] = {1, 2, 3};
  assert_int_equal(pq_cursor_after_signature(pq, unknown), PQ_NOTFOUND);
  /* Find by signature. */
  assert_int_equal(pq_find(pq, info.signature, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 12);
  assert_int_equal(pq_find(pq, unknown, get_seqno, &seq), PQ_NOTFOUND);
  /* Cursor by time: the insertion time of #12 gives #13 forward and #11
   * backward. */
  pq_place pl;
  assert_int_equal(pq_find(pq, info.signature, get_place, &pl), PQ_OK);
  pq_cursor_set(pq, pl.pp_inserted);
  assert_int_equal(pq_cursor_get(pq), pl.pp_inserted);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 13);
  pq_cursor_set(pq, pl.pp_inserted);
  assert_int_equal(pq_next(pq, PQ_BACKWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 11);
  /* Oldest and newest. */
  pq_cursor_oldest(pq);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_place, &pl), PQ_OK);
  assert_true(pl.pp_oldest);
  assert_int_equal(pq_cursor_newest(pq), PQ_OK);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_END);
  insert_n(pq, 1, 100, 300);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 100);
  pq_close(pq);
}

/* pq_pin(): a product kept held past its callback, for a reader that
 * hands its bytes to the kernel by reference (ldmd's zero-copy sending). */
struct pinned {
  pq_t *pq;
  pq_pin_t pin;
  int rc;
  uint32_t seqno;
};

static int pin_it(const pq_prod_info *info, const void *data,
                  const pq_place *place, void *arg) {
  struct pinned *p = arg;
  (void)data;
  (void)place;
  p->seqno = info->seqno;
  p->rc = pq_pin(p->pq, &p->pin);
  return 0;
}

static void test_pin(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 50);
  pq_t *w = NULL;
  pq_error err;
  struct pinned p = {.pq = pq};
  pq_prod_info info;
  uint64_t held = 0;
  static uint8_t back[100000];

  insert_n(pq, 1, 0, 100000);
  tu_product(&info, buf, 100000, 0); /* buf: product 0's bytes again */
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, pin_it, &p), PQ_OK);
  assert_int_equal(p.rc, PQ_OK);
  assert_int_equal(p.seqno, 0);
  assert_true(p.pin.pn_len >= 100000);
  /* Outside a read callback there is nothing to pin. */
  pq_pin_t none;
  assert_int_equal(pq_pin(pq, &none), PQ_INVAL);
  /* Another handle writes three times the queue: the pinned product is
   * jumped over, never evicted, and its bytes stay where the pin says. */
  assert_int_equal(pq_open(path, 0, &w, &err), PQ_OK);
  insert_n(w, 30, 1, 100000);
  assert_int_equal(pq_stats_held(w, &held), PQ_OK);
  assert_int_equal(held, 1);
  assert_int_equal(pq_find(w, info.signature, get_seqno, &p.seqno), PQ_OK);
  assert_int_equal(p.seqno, 0);
  tu_product(&info, buf, 100000, 0);
  assert_int_equal(pread(pq_fd(pq), back, sizeof back, (off_t)p.pin.pn_data),
                   (ssize_t)sizeof back);
  assert_memory_equal(back, buf, sizeof back);
  /* Released, it is the oldest and goes with the next lap. */
  pq_unpin(pq, &p.pin);
  assert_int_equal(pq_stats_held(w, &held), PQ_OK);
  assert_int_equal(held, 0);
  insert_n(w, 12, 31, 100000);
  assert_int_equal(pq_find(w, info.signature, get_seqno, &p.seqno),
                   PQ_NOTFOUND);
  pq_close(w);
  pq_close(pq);
}

/* pq_next_many(): what each call handed over, and what the callback
 * does meanwhile. */
struct many {
  struct seen seen;
  unsigned in_call, most; /* products in this call; the most in one */
  int stop_seqno;         /* return 42 at this seqno (-1: never) */
  pq_t *pq, *other;       /* the reading handle; another, or NULL */
  uint64_t held;          /* pq_stats_held() at the first product */
  int nested;             /* a read through pq from the callback */
  unsigned inserts;       /* inserted through other at the first product */
  unsigned more;          /* callbacks of this call told pp_more */
  bool last_more;         /* the last callback's pp_more */
};

static int many_cb(const pq_prod_info *info, const void *data,
                   const pq_place *place, void *arg) {
  struct many *m = arg;
  if ((int)info->seqno == m->stop_seqno)
    return 42;
  if (m->seen.n == 0 && m->other != NULL) {
    assert_int_equal(pq_stats_held(m->other, &m->held), PQ_OK);
    m->nested = pq_next_many(m->pq, PQ_FORWARD, NULL, 0, many_cb, m);
    for (unsigned i = 0; i < m->inserts; i++) {
      static uint8_t b2[1000];
      pq_prod_info in;
      tu_product(&in, b2, sizeof b2, 100000 + i);
      assert_int_equal(pq_insert(m->other, &in, b2), PQ_OK);
    }
  }
  m->in_call++;
  m->more += place->pp_more;
  m->last_more = place->pp_more;
  return collect(info, data, place, &m->seen);
}

/* A pin survives a batch read by the same handle that spans its region:
 * products 0, 1 and 2 lie side by side; 1 is pinned; a batch of 0 and 2
 * locked and unlocked as one range would drop the pin with it (locks of
 * one handle merge), so with pins held a batch takes only products that
 * abut. */
static void test_pin_batch(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 50);
  pq_t *w = NULL;
  pq_error err;
  struct pinned p = {.pq = pq};
  uint32_t seqno = 99;
  uint64_t held = 0;
  insert_n(pq, 3, 0, 1000);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seqno), PQ_OK);
  assert_int_equal(seqno, 0);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, pin_it, &p), PQ_OK);
  assert_int_equal(p.rc, PQ_OK);
  assert_int_equal(p.seqno, 1);
  assert_int_equal(pq_open(path, 0, &w, &err), PQ_OK);
  assert_int_equal(pq_stats_held(w, &held), PQ_OK);
  assert_int_equal(held, 1);
  pq_class cls;
  assert_int_equal(pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_ANY,
                                   "^test/(0|2)$", NULL, 0),
                   PQ_OK);
  pq_cursor_oldest(pq);
  struct many m = {.stop_seqno = -1, .pq = pq};
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, &cls, 0, many_cb, &m), PQ_OK);
  if (m.seen.n < 2)
    assert_int_equal(pq_next_many(pq, PQ_FORWARD, &cls, 0, many_cb, &m), PQ_OK);
  assert_int_equal(m.seen.n, 2);
  /* Still held after both reads' locks were dropped. */
  assert_int_equal(pq_stats_held(w, &held), PQ_OK);
  assert_int_equal(held, 1);
  pq_unpin(pq, &p.pin);
  assert_int_equal(pq_stats_held(w, &held), PQ_OK);
  assert_int_equal(held, 0);
  /* Without pins, the same two come in one batch again. */
  pq_cursor_oldest(pq);
  m = (struct many){.stop_seqno = -1, .pq = pq};
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, &cls, 0, many_cb, &m), PQ_OK);
  assert_int_equal(m.seen.n, 2);
  pq_class_free(&cls);
  pq_close(w);
  pq_close(pq);
}

/* Read everything with pq_next_many(dir, max); the last result. */
static int read_many(pq_t *pq, int dir, unsigned max, struct many *m) {
  int rc;
  do {
    m->in_call = m->more = 0;
    rc = pq_next_many(pq, dir, NULL, max, many_cb, m);
    if (m->in_call > m->most)
      m->most = m->in_call;
    /* pp_more: every product of the batch but the last says one follows. */
    if (m->in_call > 0) {
      assert_int_equal(m->more, m->in_call - 1);
      assert_false(m->last_more);
    }
  } while (rc == PQ_OK);
  return rc;
}

static void test_next_many(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 200);
  insert_n(pq, 100, 0, 300);
  /* Forward, ten at most a call: all, in order, never more than asked. */
  struct many m = {.stop_seqno = -1, .pq = pq};
  assert_int_equal(read_many(pq, PQ_FORWARD, 10, &m), PQ_END);
  assert_int_equal(m.seen.n, 100);
  assert_false(m.seen.bad);
  assert_int_equal(m.most, 10);
  for (unsigned i = 0; i < 100; i++)
    assert_int_equal(m.seen.seqnos[i], i);
  /* Backward, the most a call (0 means PQ_NEXT_MANY_MAX). */
  pq_cursor_set(pq, PQ_CURSOR_END);
  m = (struct many){.stop_seqno = -1, .pq = pq};
  assert_int_equal(read_many(pq, PQ_BACKWARD, 0, &m), PQ_END);
  assert_int_equal(m.seen.n, 100);
  assert_int_equal(m.most, PQ_NEXT_MANY_MAX);
  for (unsigned i = 0; i < 100; i++)
    assert_int_equal(m.seen.seqnos[i], 99 - i);
  /* A callback's value ends the batch; that product comes again. */
  pq_cursor_oldest(pq);
  m = (struct many){.stop_seqno = 7, .pq = pq};
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, NULL, 32, many_cb, &m), 42);
  assert_int_equal(m.seen.n, 7);
  uint32_t seq = 0;
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 7);
  /* During a callback the whole batch is held, and the handle refuses to
   * read from inside it. */
  pq_t *other;
  pq_error err;
  assert_int_equal(pq_open(path, 0, &other, &err), PQ_OK);
  pq_cursor_oldest(pq);
  m = (struct many){.stop_seqno = -1, .pq = pq, .other = other, .nested = 1};
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, NULL, 5, many_cb, &m), PQ_OK);
  assert_int_equal(m.seen.n, 5);
  assert_int_equal(m.held, 5);
  assert_int_equal(m.nested, PQ_INVAL);
  uint64_t held = 1;
  assert_int_equal(pq_stats_held(other, &held), PQ_OK);
  assert_int_equal(held, 0);
  assert_int_equal(pq_next_many(pq, 0, NULL, 5, many_cb, &m), PQ_INVAL);
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, NULL, 5, NULL, &m), PQ_INVAL);
  pq_close(other);
  tu_check(pq);
  pq_close(pq);
}

/* With a class: the products of the class only, and the cursor past those
 * examined after the last one handed over. */
static void test_next_many_class(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 200);
  for (unsigned i = 0; i < 10; i++) {
    pq_prod_info in;
    tu_product(&in, buf, 300, i);
    in.feedtype = i < 5 ? PQ_FT_IDS : PQ_FT_HDS;
    assert_int_equal(pq_insert(pq, &in, buf), PQ_OK);
  }
  pq_class cls;
  assert_int_equal(
      pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_IDS, ".*", NULL, 0),
      PQ_OK);
  struct many m = {.stop_seqno = -1, .pq = pq};
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, &cls, 0, many_cb, &m), PQ_OK);
  assert_int_equal(m.seen.n, 5);
  pq_place newest;
  pq_cursor_set(pq, PQ_CURSOR_END);
  assert_int_equal(pq_next(pq, PQ_BACKWARD, NULL, get_place, &newest), PQ_OK);
  pq_cursor_oldest(pq);
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, &cls, 0, many_cb, &m), PQ_OK);
  assert_int_equal(pq_cursor_get(pq), newest.pp_inserted);
  assert_int_equal(pq_next_many(pq, PQ_FORWARD, &cls, 0, many_cb, &m), PQ_END);
  pq_class_free(&cls);
  pq_close(pq);
}

/* Big products: a batch spans at most 256 KiB (here 2 of 100 KiB). */
static void test_next_many_big(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 16 << 20, 200);
  insert_n(pq, 20, 0, 100 * 1024);
  struct many m = {.stop_seqno = -1, .pq = pq};
  assert_int_equal(read_many(pq, PQ_FORWARD, 32, &m), PQ_END);
  assert_int_equal(m.seen.n, 20);
  assert_int_equal(m.most, 2);
  pq_close(pq);
}

/* A small queue that wraps: every product once, in order, and a writer that
 * fills the queue twice over during a callback is never refused (a batch
 * holds at most 1/32 of the data area). */
static void test_next_many_wrap(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 4000);
  pq_t *other;
  pq_error err;
  insert_n(pq, 3000, 0, 1000);
  assert_int_equal(pq_open(path, 0, &other, &err), PQ_OK);
  struct many m = {.stop_seqno = -1, .pq = pq, .other = other, .inserts = 2000};
  assert_int_equal(read_many(pq, PQ_FORWARD, 0, &m), PQ_END);
  assert_false(m.seen.bad);
  assert_true(m.seen.n > 500);
  for (unsigned i = 1; i < m.seen.n && i < 4096; i++)
    assert_true(m.seen.seqnos[i] > m.seen.seqnos[i - 1]);
  assert_true(m.most > 1 && m.most <= PQ_NEXT_MANY_MAX);
  pq_close(other);
  tu_check(pq);
  pq_close(pq);
}

/* Read all of cls with pq_next() (max 1) or pq_next_many() (max 0) in a
 * direction, from that end of the queue; the last result. */
static int read_class(pq_t *pq, const pq_class *cls, int dir, unsigned max,
                      struct seen *s) {
  int rc;
  pq_cursor_set(pq, dir == PQ_FORWARD ? 0 : PQ_CURSOR_END);
  do {
    rc = max == 1 ? pq_next(pq, dir, cls, collect, s)
                  : pq_next_many(pq, dir, cls, max, collect, s);
  } while (rc == PQ_OK);
  return rc;
}

/* A class's products, whether its pattern is matched under the queue's
 * lock or, too big for that (pq_spec.costly), outside it: the same ones,
 * in order, either way, by pq_next() and pq_next_many(). */
static void test_class_filter(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 200);
  for (unsigned i = 0; i < 60; i++) {
    pq_prod_info info;
    tu_product(&info, buf, 200, i);
    info.feedtype = i % 3 == 0   ? PQ_FT_IDS
                    : i % 3 == 1 ? PQ_FT_NEXRAD3
                                 : PQ_FT_NGRID;
    snprintf(info.ident, sizeof info.ident, "%s %u",
             i % 2 ? "SAUS44 KWBC" : "SDUS54 KLZK", i);
    assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  }
  static const char *const sa[] = {"^SA", "^(SA|Z{300})"};
  for (unsigned p = 0; p < 2; p++) {
    pq_class cls;
    assert_int_equal(pq_class_simple(&cls, PQ_TS_ZERO, PQ_TS_ENDT, PQ_FT_WMO,
                                     sa[p], NULL, 0),
                     0);
    assert_int_equal(cls.specs[0].costly, p == 1);
    static const struct {
      int dir;
      unsigned max;
    } reads[] = {{PQ_FORWARD, 1}, {PQ_BACKWARD, 1}, {PQ_FORWARD, 0}};
    for (unsigned r = 0; r < 3; r++) {
      struct seen s = {0};
      assert_int_equal(read_class(pq, &cls, reads[r].dir, reads[r].max, &s),
                       PQ_END);
      /* IDS is i % 3 == 0, "^SA" is odd i: i = 3, 9, 15 ... 57. */
      assert_int_equal(s.n, 10);
      for (unsigned k = 0; k < s.n; k++)
        assert_int_equal(s.seqnos[k],
                         reads[r].dir == PQ_FORWARD ? 3 + 6 * k : 57 - 6 * k);
    }
    pq_class_free(&cls);
  }
  /* A time window that excludes everything. */
  pq_class cls;
  assert_int_equal(pq_class_simple(&cls, PQ_TS_ZERO, (pq_timestamp){1, 0},
                                   PQ_FT_ANY, ".*", NULL, 0),
                   0);
  struct seen none = {0};
  assert_int_equal(read_class(pq, &cls, PQ_FORWARD, 1, &none), PQ_END);
  assert_int_equal(none.n, 0);
  pq_class_free(&cls);
  pq_close(pq);
}

static void test_delete_expire(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 200);
  pq_prod_info info;
  for (unsigned i = 0; i < 10; i++) {
    tu_product(&info, buf, 500, i);
    info.arrival = (pq_timestamp){1000 + i, 0};
    assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  }
  tu_product(&info, buf, 500, 3);
  uint32_t seq;
  assert_int_equal(pq_delete(pq, info.signature), PQ_OK);
  assert_int_equal(pq_delete(pq, info.signature), PQ_NOTFOUND);
  assert_int_equal(pq_find(pq, info.signature, get_seqno, &seq), PQ_NOTFOUND);
  uint64_t n, bytes, held;
  assert_int_equal(
      pq_expire(pq, (pq_timestamp){1006, 0}, NULL, &n, &bytes, &held), PQ_OK);
  assert_int_equal(n, 5); /* 0, 1, 2, 4, 5 */
  assert_true(bytes >= 5 * 500);
  assert_int_equal(held, 0);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 4);
  assert_false(st.ps_is_full); /* deletion is not eviction */
  tu_check(pq);
  pq_close(pq);
}

static void test_stats(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 64 * 1024, 32);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 0);
  assert_true(st.ps_age_oldest < 0);
  assert_int_equal(st.ps_mvrt_us, -1);
  assert_int_equal(st.ps_nfree, 1);
  uint64_t largest = 0;
  assert_int_equal(pq_stats_largest_free(pq, &largest), PQ_OK);
  assert_int_equal(largest, st.ps_data_size);
  assert_int_equal(st.ps_writers, 1);
  assert_int_equal(st.ps_minempty, 32);
  insert_n(pq, 10, 0, 1000);
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 10);
  assert_int_equal(st.ps_maxprods, 10);
  assert_int_equal(st.ps_nempty, 22);
  assert_int_equal(st.ps_minempty, 22);
  assert_true(st.ps_nbytes >= 10000 && st.ps_nbytes == st.ps_maxbytes);
  assert_false(st.ps_is_full);
  assert_true(st.ps_age_oldest >= st.ps_age_youngest);
  insert_n(pq, 100, 10, 1000); /* 64 KiB holds ~60: evicts */
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_true(st.ps_is_full);
  assert_true(st.ps_evicted > 0);
  assert_true(st.ps_mvrt_us >= 0);
  assert_true(st.ps_mvrt_slots > 0 && st.ps_mvrt_bytes > 0);
  assert_true(st.ps_nprods + st.ps_evicted == 110);
  assert_int_equal(pq_stats_clear_mvrt(pq), PQ_OK);
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_mvrt_us, -1);
  pq_close(pq);
}

/* Free regions, and their high-water mark (LDM's maxfree), follow deletes
 * that leave holes and inserts that fill the data area. */
/* Products held by readers: a callback of handle a holds one, and inside
 * it a callback of handle b holds another (or the same one). */
struct held_probe {
  pq_t *b, *c;
  uint64_t b_at; /* cursor for b */
  uint64_t inner, outer;
};

static int count_in_b(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct held_probe *h = arg;
  (void)info, (void)data, (void)place;
  assert_int_equal(pq_stats_held(h->c, &h->inner), PQ_OK);
  return 0;
}

static int hold_in_a(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  struct held_probe *h = arg;
  (void)info, (void)data, (void)place;
  assert_int_equal(pq_stats_held(h->c, &h->outer), PQ_OK);
  pq_cursor_set(h->b, h->b_at);
  assert_int_equal(pq_next(h->b, PQ_FORWARD, NULL, count_in_b, h), PQ_OK);
  return 0;
}

static void test_stats_held(void **state) {
  (void)state;
  pq_t *a = tu_create(path, 256 * 1024, 64);
  insert_n(a, 40, 0, 1000);
  pq_t *b, *c;
  assert_int_equal(pq_open(path, PQ_READONLY, &b, NULL), PQ_OK);
  assert_int_equal(pq_open(path, PQ_READONLY, &c, NULL), PQ_OK);
  struct held_probe h = {.b = b, .c = c, .inner = 99, .outer = 99};
  assert_int_equal(pq_stats_held(c, &h.outer), PQ_OK);
  assert_int_equal(h.outer, 0);
  /* b holds the 31st product while a holds the oldest. */
  pq_stats st;
  assert_int_equal(pq_stats_get(c, &st), PQ_OK);
  pq_cursor_set(b, PQ_CURSOR_END);
  for (int i = 0; i < 10; i++)
    assert_int_equal(pq_next(b, PQ_BACKWARD, NULL, count_in_b, &h), PQ_OK);
  h.b_at = pq_cursor_get(b) - 1; /* forward from here: that product */
  assert_int_equal(pq_next(a, PQ_FORWARD, NULL, hold_in_a, &h), PQ_OK);
  assert_int_equal(h.outer, 1);
  assert_int_equal(h.inner, 2);
  /* Both on the oldest: one product held. */
  pq_cursor_oldest(a);
  h.b_at = 0;
  assert_int_equal(pq_next(a, PQ_FORWARD, NULL, hold_in_a, &h), PQ_OK);
  assert_int_equal(h.inner, 1);
  /* The newest, held by a, counts from a's own handle too. */
  pq_cursor_set(a, PQ_CURSOR_END);
  assert_int_equal(pq_next(a, PQ_BACKWARD, NULL, hold_in_a, &h), PQ_OK);
  assert_int_equal(h.outer, 1);
  assert_int_equal(pq_stats_held(c, &h.outer), PQ_OK);
  assert_int_equal(h.outer, 0);
  assert_int_equal(pq_stats_held(a, &h.outer), PQ_OK);
  assert_int_equal(h.outer, 0);
  pq_close(c);
  pq_close(b);
  pq_close(a);
}

static void test_free_regions(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 256 * 1024, 64);
  pq_prod_info info[10];
  pq_stats st;
  for (unsigned i = 0; i < 10; i++) {
    tu_product(&info[i], buf, 1000, 100 + i);
    assert_int_equal(pq_insert(pq, &info[i], buf), PQ_OK);
  }
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nfree, 1); /* after the tenth */
  assert_int_equal(st.ps_maxnfree, 1);
  /* Holes at 1, 3 and 5; deleting 4 then joins two of them. */
  for (unsigned i = 1; i <= 5; i += 2)
    assert_int_equal(pq_delete(pq, info[i].signature), PQ_OK);
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nfree, 4);
  assert_int_equal(st.ps_maxnfree, 4);
  tu_check(pq);
  assert_int_equal(pq_delete(pq, info[4].signature), PQ_OK);
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nfree, 3);
  assert_int_equal(st.ps_maxnfree, 4);
  /* The first one: the hole at 1 now starts the data area. */
  assert_int_equal(pq_delete(pq, info[0].signature), PQ_OK);
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nfree, 3);
  tu_check(pq);
  /* Everything gone: one region, the whole area; the mark stays. */
  static const unsigned rest[] = {2, 6, 7, 8, 9};
  for (unsigned k = 0; k < sizeof rest / sizeof rest[0]; k++)
    assert_int_equal(pq_delete(pq, info[rest[k]].signature), PQ_OK);
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nfree, 1);
  uint64_t largest = 0;
  assert_int_equal(pq_stats_largest_free(pq, &largest), PQ_OK);
  assert_int_equal(largest, st.ps_data_size);
  assert_int_equal(st.ps_maxnfree, 4);
  tu_check(pq);
  pq_close(pq);
}

static void test_wait(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  uint32_t seq;
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_END);
  int64_t t0 = tu_now_ms();
  assert_int_equal(pq_wait(pq, 50), PQ_TIMEDOUT);
  int64_t dt = tu_now_ms() - t0;
  assert_true(dt >= 45 && dt < 2000);
  pq_set_spin(pq, 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Insert once the parent sleeps in pq_wait(): its bit is set. */
    uint64_t bits[PQ_MAX_WAITERS / 64];
    int fd = open(path, O_RDONLY);
    bool asleep = false;
    pq_t *w;
    for (int t = 0; fd >= 0 && !asleep && t < 10000; t++) {
      if (pread(fd, bits, sizeof bits, offsetof(struct pq_hdr, hd_sleepers)) !=
          (ssize_t)sizeof bits)
        break;
      for (unsigned i = 0; i < PQ_MAX_WAITERS / 64; i++)
        asleep |= bits[i] != 0;
      if (!asleep)
        usleep(1000); /* 10 s at most */
    }
    if (!asleep)
      _exit(3);
    if (pq_open(path, 0, &w, NULL) != PQ_OK)
      _exit(1);
    pq_prod_info info;
    tu_product(&info, buf, 10, 77);
    _exit(pq_insert(w, &info, buf) == PQ_OK ? 0 : 2);
  }
  t0 = tu_now_ms();
  assert_int_equal(pq_wait(pq, 10000), PQ_OK);
  assert_true(tu_now_ms() - t0 < 5000);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 77);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  pq_close(pq);
}

static void on_alarm(int sig) {
  (void)sig;
}

static void test_wait_interrupted(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  uint32_t seq;
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_END);
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART */
  assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
  struct itimerval it = {.it_value = {0, 100000}};
  assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
  int64_t t0 = tu_now_ms();
  assert_int_equal(pq_wait(pq, 10000), PQ_OK); /* woken by the signal */
  assert_true(tu_now_ms() - t0 < 5000);
  sigaction(SIGALRM, &old, NULL);
  pq_close(pq);
}

static void test_clock_steps_back(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  insert_n(pq, 2, 0, 100);
  pq_close(pq);
  /* As if the clock had been an hour ahead at the last commit. */
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  struct pq_hdr *h =
      mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  assert_true(h != MAP_FAILED);
  uint64_t ahead = pq__now_us() + 3600ull * 1000000;
  h->hd_last_key = ahead;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  insert_n(pq, 3, 2, 100);
  assert_int_equal(h->hd_last_key, ahead + 3);
  munmap(h, 4096);
  close(fd);
  struct seen s = {0};
  uint64_t prev = 0;
  while (pq_next(pq, PQ_FORWARD, NULL, collect, &s) == PQ_OK) {
    assert_true(s.last > prev);
    prev = s.last;
  }
  assert_int_equal(s.n, 5);
  for (unsigned i = 0; i < 5; i++)
    assert_int_equal(s.seqnos[i], i);
  tu_check(pq);
  pq_close(pq);
}

static void test_fork_handle(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    pq_prod_info info;
    tu_product(&info, buf, 10, 1);
    int rc = pq_insert(pq, &info, buf);
    int rc2 = pq_close(pq);
    _exit(rc == PQ_FORKED && rc2 == PQ_FORKED ? 0 : 1);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* The parent's handle and its writer lock survived the child's close. */
  unsigned n;
  assert_int_equal(pq_writer_count(pq, &n), PQ_OK);
  assert_int_equal(n, 1);
  insert_n(pq, 1, 5, 10);
  tu_check(pq);
  pq_close(pq);
}

static void test_writer_count(void **state) {
  (void)state;
  pq_t *a = tu_create(path, 1 << 20, 64);
  pq_t *b, *c, *r;
  assert_int_equal(pq_open(path, 0, &b, NULL), PQ_OK);
  assert_int_equal(pq_open(path, 0, &c, NULL), PQ_OK);
  assert_int_equal(pq_open(path, PQ_READONLY, &r, NULL), PQ_OK);
  unsigned n;
  assert_int_equal(pq_writer_count(r, &n), PQ_OK);
  assert_int_equal(n, 3);
  assert_int_equal(pq_writer_count(r, NULL), PQ_INVAL);
  pq_close(b);
  assert_int_equal(pq_writer_count(r, &n), PQ_OK);
  assert_int_equal(n, 2);
  pid_t pid = tu_writer_child(path, NULL);
  assert_int_equal(pq_writer_count(a, &n), PQ_OK);
  assert_int_equal(n, 3);
  tu_kill(pid);
  /* A crashed writer does not count: its lock died with it. */
  assert_int_equal(pq_writer_count(a, &n), PQ_OK);
  assert_int_equal(n, 2);
  pq_close(c);
  pq_close(r);
  pq_close(a);
}

static void test_injected_failures(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 1 << 20, 64);
  insert_n(pq, 2, 0, 100);
  pq_prod_info info;
  tu_product(&info, buf, 100, 50);
  pq__sys_inject("lock", ENOLCK);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_SYSTEM);
  assert_int_equal(pq_last_error(pq)->pe_errno, ENOLCK);
  assert_non_null(strstr(pq_last_error(pq)->pe_msg, path));
  /* Nothing was lost or leaked; the same product goes in afterwards. */
  assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  uint32_t seq;
  pq__sys_inject("lock", ENOLCK);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_SYSTEM);
  assert_int_equal(pq_next(pq, PQ_FORWARD, NULL, get_seqno, &seq), PQ_OK);
  assert_int_equal(seq, 0);
  tu_check(pq);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 3);
  /* pq_check() through a mapping it cannot write (the read-write open
   * refused, as for a file the process may not write) keeps the errno. */
  pq_t *ro;
  pq__sys_inject("open", EACCES);
  assert_int_equal(pq_open(path, PQ_READONLY, &ro, NULL), PQ_OK);
  pq_check_report rep;
  pq__sys_inject("lock", ENOLCK);
  assert_int_equal(pq_check(ro, &rep), PQ_SYSTEM);
  assert_int_equal(pq_last_error(ro)->pe_errno, ENOLCK);
  assert_non_null(strstr(pq_last_error(ro)->pe_msg, strerror(ENOLCK)));
  assert_int_equal(pq_check(ro, &rep), PQ_OK);
  pq_close(ro);
  pq_close(pq);
}

static void test_too_many_writers(void **state) {
  (void)state;
  struct rlimit rl;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_max < PQ_MAX_WRITERS + 64)
    tu_skip("the open-file hard limit is %llu; this test needs %u",
            (unsigned long long)rl.rlim_max, PQ_MAX_WRITERS + 64);
  struct rlimit more = {PQ_MAX_WRITERS + 64, rl.rlim_max};
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &more), 0);
  static pq_t *w[PQ_MAX_WRITERS];
  w[0] = tu_create(path, 64 * 1024, 16);
  for (unsigned i = 1; i < PQ_MAX_WRITERS; i++)
    assert_int_equal(pq_open(path, 0, &w[i], NULL), PQ_OK);
  pq_t *extra;
  pq_error err;
  assert_int_equal(pq_open(path, 0, &extra, &err), PQ_WRITERS);
  assert_int_equal(pq_open(path, PQ_READONLY, &extra, &err), PQ_OK);
  pq_close(extra);
  pq_close(w[7]);
  assert_int_equal(pq_open(path, 0, &w[7], &err), PQ_OK); /* byte 7 again */
  insert_n(w[7], 3, 0, 100);
  tu_check(w[7]);
  for (unsigned i = 0; i < PQ_MAX_WRITERS; i++)
    pq_close(w[i]);
  setrlimit(RLIMIT_NOFILE, &rl);
}

/* Threads, each with its own handle: 4 writers and 4 readers at once. */
enum { THREAD_PRODUCTS = 2000 };

struct thread_arg {
  unsigned id;
  int rc;
  unsigned seen;
};

static void *writer_thread(void *p) {
  struct thread_arg *a = p;
  pq_t *pq;
  static _Thread_local uint8_t b[4096];
  a->rc = pq_open(path, 0, &pq, NULL);
  for (unsigned i = 0; i < THREAD_PRODUCTS && a->rc == PQ_OK; i++) {
    pq_prod_info info;
    tu_product(&info, b, 1 + (i * 131 + a->id) % sizeof b, a->id * 100000u + i);
    a->rc = pq_insert(pq, &info, b);
  }
  pq_close(pq);
  return NULL;
}

static int check_thread_product(const pq_prod_info *info, const void *data,
                                const pq_place *place, void *arg) {
  struct thread_arg *a = arg;
  uint8_t sig[PQ_SIGLEN];
  (void)place;
  pq_md5(data, info->size, sig);
  if (memcmp(sig, info->signature, PQ_SIGLEN) != 0)
    a->rc = PQ_CORRUPT;
  a->seen++;
  return 0;
}

static void *reader_thread(void *p) {
  struct thread_arg *a = p;
  pq_t *pq;
  a->rc = pq_open(path, PQ_READONLY, &pq, NULL);
  int64_t deadline = tu_now_ms() + 60000;
  while (a->rc == PQ_OK && a->seen < 4 * THREAD_PRODUCTS &&
         tu_now_ms() < deadline) {
    int rc = pq_next(pq, PQ_FORWARD, NULL, check_thread_product, a);
    if (rc == PQ_END)
      rc = pq_wait(pq, 1000) == PQ_FORKED ? PQ_FORKED : PQ_OK;
    if (rc != PQ_OK)
      a->rc = rc;
  }
  pq_close(pq);
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  pq_close(tu_create(path, 64 << 20, 10000));
  pthread_t t[8];
  struct thread_arg a[8];
  for (unsigned i = 0; i < 8; i++) {
    a[i] = (struct thread_arg){.id = i};
    assert_int_equal(pthread_create(&t[i], NULL,
                                    i < 4 ? writer_thread : reader_thread,
                                    &a[i]),
                     0);
  }
  for (unsigned i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(a[i].rc, PQ_OK);
    if (i >= 4)
      assert_int_equal(a[i].seen, 4 * THREAD_PRODUCTS);
  }
  pq_t *pq;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  tu_check(pq);
  pq_close(pq);
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strerror_all),
      cmocka_unit_test_setup_teardown(test_create_open_close, setup, teardown),
      cmocka_unit_test_setup_teardown(test_create_refuses, setup, teardown),
      cmocka_unit_test_setup_teardown(test_insert_read_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
      cmocka_unit_test_setup_teardown(test_big_and_invalid, setup, teardown),
      cmocka_unit_test_setup_teardown(test_insert_many, setup, teardown),
      cmocka_unit_test_setup_teardown(test_readonly, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reservations, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cursors_and_find, setup, teardown),
      cmocka_unit_test_setup_teardown(test_commit_at, setup, teardown),
      cmocka_unit_test_setup_teardown(test_class_filter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_delete_expire, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stats_held, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_regions, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wait, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wait_interrupted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_clock_steps_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fork_handle, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writer_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_injected_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_too_many_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pin, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pin_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_next_many, setup, teardown),
      cmocka_unit_test_setup_teardown(test_next_many_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_next_many_big, setup, teardown),
      cmocka_unit_test_setup_teardown(test_next_many_wrap, setup, teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
