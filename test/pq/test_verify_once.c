/*
 * test_verify_once.c - the check mark of pq_set_verify() (docs/queue-format.md
 * sections 5 and 13): a reader that verifies and finds a product sound marks
 * its slot; a reader in PQ_VERIFY_ONCE then trusts the mark and does not read
 * the bytes again (damage done after the first check goes through), one in
 * PQ_VERIFY_EACH checks again (and catches it), and so does pq_check().  A
 * damaged product is never marked; a reader that does not verify marks
 * nothing, nor does one whose mapping is read-only; the mark lies outside
 * the slot checksum; a product committed in a slot that held a marked one
 * starts unmarked, and a stale mark (another product's) is not trusted.
 */
#include "test/lib/testutil.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include "pq/internal.h"

TU_QUEUE_FIXTURE("test_verify_once")

static uint8_t buf[1 << 16];

/* A queue of n products test/0 .. test/(n-1) (1000 + i bytes each) in
 * nslots slots, open read-write. */
static pq_t *queue_of(unsigned n, unsigned nslots) {
  pq_t *pq = tu_create(path, 256 * 1024, nslots);
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info;
    tu_product(&info, buf, 1000 + i, i);
    assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  }
  return pq;
}

static pq_t *open_rw(void) {
  pq_t *pq;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  return pq;
}

/* The signature of test/i. */
static void sig_of(unsigned i, uint8_t sig[PQ_SIGLEN]) {
  pq_prod_info info;
  tu_product(&info, buf, 1000 + i, i);
  memcpy(sig, info.signature, PQ_SIGLEN);
}

/* The slot of test/i (white box: a single-threaded test, no lock). */
static uint32_t slot_of(pq_t *pq, unsigned i) {
  uint8_t sig[PQ_SIGLEN];
  sig_of(i, sig);
  uint32_t s = pq__sx_find(pq, sig);
  assert_int_not_equal(s, PQ_NIL);
  assert_int_equal(pq__slot_state(&pq->slots[s]), PQ_SLOT_COMMITTED);
  return s;
}

static bool marked(pq_t *pq, unsigned i) {
  const struct pq_slot *s = &pq->slots[slot_of(pq, i)];
  return s->ps_checked == PQ_CHECKED_MARK(s->ps_key);
}

/* Flip 8 bytes of test/i's data, as a failing disk or a stray write
 * would. */
static void damage(pq_t *pq, unsigned i) {
  const struct pq_slot *s = &pq->slots[slot_of(pq, i)];
  uint8_t *p = pq->data + s->ps_offset + s->ps_extent - 200;
  for (unsigned k = 0; k < 8; k++)
    p[k] ^= 0xff;
}

static int count(const pq_prod_info *info, const void *data,
                 const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  (void)place;
  (*(unsigned *)arg)++;
  return 0;
}

/* pq_find() of test/i on a handle verifying `how`: its status; *n counts
 * the products handed over. */
static int find(pq_t *pq, enum pq_verify how, unsigned i, unsigned *n) {
  uint8_t sig[PQ_SIGLEN];
  sig_of(i, sig);
  pq_set_verify(pq, how);
  return pq_find(pq, sig, count, n);
}

/* Every product read forward with pq_next() (many: pq_next_many()):
 * products handed over in *n, PQ_DAMAGED returns in *bad. */
static void read_all(pq_t *pq, enum pq_verify how, bool many, unsigned *n,
                     unsigned *bad) {
  int rc;
  *n = *bad = 0;
  pq_set_verify(pq, how);
  pq_cursor_oldest(pq);
  while ((rc = many ? pq_next_many(pq, PQ_FORWARD, NULL, 0, count, n)
                    : pq_next(pq, PQ_FORWARD, NULL, count, n)) != PQ_END) {
    if (rc == PQ_DAMAGED)
      ++*bad;
    else
      assert_int_equal(rc, PQ_OK);
  }
}

/* The first reader's check is the only one a ONCE reader pays for: bytes
 * changed after it go through a second ONCE reader (the promise is "damage
 * between the commit and the first check"), and are caught by EACH and by
 * pq_check() (invariant 15).  The mark keeps the slot checksum sound. */
static void test_once_trusts_the_mark(void **state) {
  (void)state;
  pq_t *w = queue_of(10, 16);
  pq_t *first = open_rw(), *second = open_rw();
  unsigned n, bad;

  for (unsigned i = 0; i < 10; i++)
    assert_false(marked(w, i)); /* committed unmarked */
  read_all(first, PQ_VERIFY_ONCE, false, &n, &bad);
  assert_int_equal(n, 10);
  assert_int_equal(bad, 0);
  for (unsigned i = 0; i < 10; i++)
    assert_true(marked(w, i));
  tu_check(w); /* every invariant, slot checksums included, still holds */

  damage(w, 3);
  damage(w, 7);
  read_all(second, PQ_VERIFY_ONCE, false, &n, &bad);
  assert_int_equal(n, 10); /* the marks were trusted: no pass, no catch */
  assert_int_equal(bad, 0);
  read_all(second, PQ_VERIFY_ONCE, true, &n, &bad);
  assert_int_equal(n, 10);
  assert_int_equal(bad, 0);
  n = 0;
  assert_int_equal(find(second, PQ_VERIFY_ONCE, 3, &n), PQ_OK);
  assert_int_equal(n, 1);

  /* EACH reads the bytes again, whatever the mark says. */
  read_all(second, PQ_VERIFY_EACH, false, &n, &bad);
  assert_int_equal(n, 8);
  assert_int_equal(bad, 2);
  read_all(second, PQ_VERIFY_EACH, true, &n, &bad);
  assert_int_equal(n, 8);
  assert_int_equal(bad, 2);
  n = 0;
  assert_int_equal(find(second, PQ_VERIFY_EACH, 7, &n), PQ_DAMAGED);
  assert_int_equal(n, 0);
  assert_non_null(strstr(pq_last_error(second)->pe_msg, "test/7"));

  /* So does the check (pqcheck). */
  pq_check_report rep;
  assert_int_equal(pq_check(w, &rep), PQ_CORRUPT);
  assert_int_equal(rep.pr_invariant, 15);
  pq_close(first);
  pq_close(second);
  pq_close(w);
}

/* Damage before the first check is caught by every ONCE reader: a product
 * that fails is never marked.  A reader that does not verify marks
 * nothing. */
static void test_damage_before_first_check(void **state) {
  (void)state;
  pq_t *w = queue_of(10, 16);
  pq_t *r1 = open_rw(), *r2 = open_rw();
  unsigned n, bad;

  read_all(r1, PQ_VERIFY_OFF, false, &n, &bad);
  assert_int_equal(n, 10);
  for (unsigned i = 0; i < 10; i++)
    assert_false(marked(w, i));
  damage(w, 4);
  read_all(r1, PQ_VERIFY_ONCE, false, &n, &bad);
  assert_int_equal(n, 9);
  assert_int_equal(bad, 1);
  assert_false(marked(w, 4));
  assert_true(marked(w, 5));
  read_all(r2, PQ_VERIFY_ONCE, true, &n, &bad);
  assert_int_equal(n, 9);
  assert_int_equal(bad, 1);
  n = 0;
  assert_int_equal(find(r2, PQ_VERIFY_ONCE, 4, &n), PQ_DAMAGED);
  assert_int_equal(n, 0);
  assert_false(marked(w, 4));
  pq_close(r1);
  pq_close(r2);
  pq_close(w);
}

/* A slot whose marked product was evicted holds the next product
 * unmarked: damage to that product is caught by a ONCE reader.  And a
 * mark left from the slot's former product is not the new one's. */
static void test_reused_slot_is_unmarked(void **state) {
  (void)state;
  pq_t *w = queue_of(8, 8); /* every slot in use */
  pq_t *r = open_rw();
  unsigned n, bad;

  read_all(r, PQ_VERIFY_ONCE, false, &n, &bad);
  assert_int_equal(n, 8);
  uint32_t s0 = slot_of(w, 0);
  uint64_t old_mark = w->slots[s0].ps_checked;
  assert_int_equal(old_mark, PQ_CHECKED_MARK(w->slots[s0].ps_key));

  /* A ninth product evicts test/0, the oldest, and takes its slot. */
  pq_prod_info info;
  tu_product(&info, buf, 1000 + 8, 8);
  assert_int_equal(pq_insert(w, &info, buf), PQ_OK);
  assert_int_equal(slot_of(w, 8), s0);
  assert_false(marked(w, 8));
  assert_int_equal(w->slots[s0].ps_checked, 0);
  damage(w, 8);
  n = 0;
  assert_int_equal(find(r, PQ_VERIFY_ONCE, 8, &n), PQ_DAMAGED);
  assert_int_equal(n, 0);

  /* Even with the former product's mark put back in the slot. */
  w->slots[s0].ps_checked = old_mark;
  assert_true(pq__slot_valid(&w->slots[s0]));
  assert_int_equal(find(r, PQ_VERIFY_ONCE, 8, &n), PQ_DAMAGED);
  assert_int_equal(n, 0);
  pq_check_report rep;
  assert_int_equal(pq_check(w, &rep), PQ_CORRUPT);
  assert_int_equal(rep.pr_invariant, 15);
  pq_close(r);
  pq_close(w);
}

/* As a user who may not write the file (its mapping read-only): read
 * test/0 .. test/9 verifying ONCE; 0 if 9 came and one failed (test/7),
 * 10 if the queue cannot be opened, 11 otherwise. */
static int read_without_marking(void) {
  pq_t *pq;
  unsigned n, bad;
  if (pq_open(path, PQ_READONLY, &pq, NULL) != PQ_OK)
    return 10;
  if (pq->map_writable) { /* this user may write it after all */
    pq_close(pq);
    return 11;
  }
  read_all(pq, PQ_VERIFY_ONCE, false, &n, &bad);
  pq_close(pq);
  return n == 9 && bad == 1 ? 0 : 11;
}

/* A reader whose mapping is read-only trusts marks (test/2, damaged after
 * it was marked, comes; test/7, damaged unmarked, does not) and stores
 * none (storing one would fault). */
static void test_readonly_mapping_marks_nothing(void **state) {
  (void)state;
  /* Root reads as nobody below, who may not enter PQ_TEST_DIR (a build in
   * a clone under /root, mode 0700): the queue goes to /dev/shm, which
   * every user may search (teardown removes it there). */
  if (geteuid() == 0)
    snprintf(path, sizeof path, "/dev/shm/test_verify_once_ro.%ld.pq",
             (long)getpid());
  pq_t *w = queue_of(10, 16);
  unsigned n = 0;
  for (unsigned i = 0; i < 5; i++)
    assert_int_equal(find(w, PQ_VERIFY_ONCE, i, &n), PQ_OK);
  damage(w, 2);
  damage(w, 7);
  assert_int_equal(chmod(path, 0444), 0);
  int st;
  if (geteuid() != 0) {
    st = read_without_marking();
  } else { /* root writes any file: read as nobody instead */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0)
        _exit(12);
      _exit(read_without_marking());
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    st = WEXITSTATUS(status);
  }
  if (st == 10) {
    pq_close(w);
    tu_skip("user nobody cannot open %s", path);
  }
  assert_int_equal(st, 0);
  for (unsigned i = 5; i < 10; i++)
    assert_false(marked(w, i));
  pq_close(w);
}

/* The slot checksum leaves out a committed slot's mark, and only a
 * committed slot's: a reservation's owner is covered. */
static void test_mark_outside_the_slot_checksum(void **state) {
  (void)state;
  struct pq_slot s;
  memset(&s, 0, sizeof s);
  s.ps_key = 12345;
  s.ps_extent = 4096;
  s.ps_owner = 3;
  s.ps_owner_gen = 7;
  pq__slot_publish(&s, PQ_SLOT_RESERVED);
  assert_true(pq__slot_valid(&s));
  s.ps_owner_gen ^= 1;
  assert_false(pq__slot_valid(&s));
  s.ps_checked = 0;
  pq__slot_publish(&s, PQ_SLOT_COMMITTED);
  assert_true(pq__slot_valid(&s));
  s.ps_checked = PQ_CHECKED_MARK(s.ps_key);
  assert_true(pq__slot_valid(&s));
  s.ps_checked = ~UINT64_C(0);
  assert_true(pq__slot_valid(&s));
  s.ps_crc ^= 1; /* every other field is covered */
  assert_false(pq__slot_valid(&s));
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_once_trusts_the_mark, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_damage_before_first_check, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_reused_slot_is_unmarked, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_mark_outside_the_slot_checksum,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_readonly_mapping_marks_nothing,
                                      setup, teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
