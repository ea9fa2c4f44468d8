/*
 * test_badfile.c - what the queue does with files it must not trust: a
 * truncated queue, zeros, random bytes, another format version, a damaged
 * header, an empty file, a directory; and with a queue whose indexes or
 * products were damaged or left mid-change by a crash: pq_check() names the
 * invariant (each numbered invariant is broken alone at least once), the
 * repair brings back every sound product, readers report damage instead of
 * stopping short (and a reader that mends it says so to the program's notice
 * function), and a read-only check changes nothing.
 */
#include "test/lib/testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "pq/internal.h"

TU_QUEUE_FIXTURE("test_badfile")

static uint8_t buf[1 << 16];

static void write_file(const void *data, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, n), (ssize_t)n);
  close(fd);
}

static int open_rc(pq_error *err) {
  pq_t *pq = NULL;
  int rc = pq_open(path, 0, &pq, err);
  assert_null(pq == NULL ? NULL : pq);
  return rc;
}

static void make_queue(unsigned nprods) {
  tu_small_queue(path, nprods, buf);
}

/* Map the queue file to damage it by hand. */
static uint8_t *map_file(size_t *len) {
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  *len = (size_t)st.st_size;
  uint8_t *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  assert_true(p != MAP_FAILED);
  close(fd);
  return p;
}

/* A queue of 20 products damaged by damage; its mapping (len bytes). */
static uint8_t *damaged_queue(void (*damage)(uint8_t *, struct pq_hdr *),
                              size_t *len) {
  uint8_t *p;

  make_queue(20);
  p = map_file(len);
  damage(p, (struct pq_hdr *)p);
  return p;
}

static void test_refuses_foreign_files(void **state) {
  (void)state;
  pq_error err;
  write_file("", 0);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  assert_non_null(strstr(err.pe_msg, "too small"));
  write_file("not a queue", 11);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  static uint8_t zeros[1 << 20];
  write_file(zeros, sizeof zeros);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  assert_non_null(strstr(err.pe_msg, "magic"));
  static uint8_t noise[1 << 20];
  tu_fill(noise, sizeof noise, 12345);
  write_file(noise, sizeof noise);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  assert_int_equal(pq_open("/", 0, &(pq_t *){NULL}, &err), PQ_SYSTEM);
}

static void test_refuses_damaged_queues(void **state) {
  (void)state;
  pq_error err;
  make_queue(5);
  size_t len;
  uint8_t *p = map_file(&len);
  struct pq_hdr *h = (struct pq_hdr *)p;
  /* Another version: a later one, and 1, from before the check mark
   * (whose committed slots' checksums cover the mark's bytes). */
  h->hd_version = PQ_VERSION_NUM + 1;
  assert_int_equal(open_rc(&err), PQ_VERSION);
  h->hd_version = 1;
  assert_int_equal(open_rc(&err), PQ_VERSION);
  assert_non_null(strstr(err.pe_msg, "format version 1,"));
  h->hd_version = PQ_VERSION_NUM;
  /* A flipped bit of the geometry: the checksum says so. */
  h->hd_nslots ^= 1;
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  assert_non_null(strstr(err.pe_msg, "checksum"));
  h->hd_nslots ^= 1;
  /* Geometry consistent with a checksum but not with the format. */
  h->hd_data_off += 4096;
  h->hd_csum = pq__hdr_checksum(h);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  h->hd_data_off -= 4096;
  h->hd_csum = pq__hdr_checksum(h);
  /* Another build's layout. */
  h->hd_layout ^= 1;
  h->hd_csum = pq__hdr_checksum(h);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  h->hd_layout ^= 1;
  h->hd_csum = pq__hdr_checksum(h);
  munmap(p, len);
  /* Truncated. */
  assert_int_equal(truncate(path, (off_t)len / 2), 0);
  assert_int_equal(open_rc(&err), PQ_FORMAT);
  assert_non_null(strstr(err.pe_msg, "truncated"));
}

struct count {
  unsigned n, bad;
};

static int count_intact(const pq_prod_info *info, const void *data,
                        const pq_place *place, void *arg) {
  struct count *c = arg;
  uint8_t sig[PQ_SIGLEN];
  (void)place;
  pq_md5(data, info->size, sig);
  c->bad += memcmp(sig, info->signature, PQ_SIGLEN) != 0;
  c->n++;
  return 0;
}

static struct count count_all(pq_t *pq) {
  struct count c = {0, 0};
  pq_cursor_oldest(pq);
  while (pq_next(pq, PQ_FORWARD, NULL, count_intact, &c) == PQ_OK)
    ;
  return c;
}

/* Damage one part of a 20-product queue, check that pq_check names the
 * invariant, repair, and count what survived. */
static void damage_and_repair(void (*damage)(uint8_t *, struct pq_hdr *),
                              int invariant, unsigned survivors) {
  size_t len;
  uint8_t *p = damaged_queue(damage, &len);
  pq_t *pq;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  pq_check_report r;
  assert_int_equal(pq_check(pq, &r), PQ_CORRUPT);
  assert_int_equal(r.pr_invariant, invariant);
  assert_true(strlen(r.pr_msg) > 0);
  uint64_t dropped = 0;
  assert_int_equal(pq_repair(pq, &dropped), PQ_OK);
  assert_int_equal(dropped, 20 - survivors);
  tu_check(pq);
  struct count c = count_all(pq);
  assert_int_equal(c.n, survivors);
  assert_int_equal(c.bad, 0);
  pq_close(pq);
  munmap(p, len);
}

static struct pq_slot *slot0(uint8_t *p, struct pq_hdr *h) {
  return (struct pq_slot *)(p + h->hd_slot_off);
}

static void flip_slot(uint8_t *p, struct pq_hdr *h) {
  slot0(p, h)[3].ps_extent ^= 8;
}

static void break_time_link(uint8_t *p, struct pq_hdr *h) {
  uint32_t *n = (uint32_t *)(p + h->hd_node_off + 5 * h->hd_node_stride);
  n[0] = 2;
}

static void clear_hash(uint8_t *p, struct pq_hdr *h) {
  memset(p + h->hd_hash_off, 0, h->hd_hash_size * 8);
}

static void break_region_list(uint8_t *p, struct pq_hdr *h) {
  struct pq_rlink *rl = (struct pq_rlink *)(p + h->hd_rlist_off);
  rl[7].rl_next = 9;
}

static void bad_counter(uint8_t *p, struct pq_hdr *h) {
  (void)p;
  h->hd_nprods++;
}

static void bad_record(uint8_t *p, struct pq_hdr *h) {
  struct pq_slot *s = &slot0(p, h)[4];
  p[h->hd_data_off + s->ps_offset] ^= 0xff; /* its magic */
}

/* Slot 3's region moved off the 8-byte grid, its checksum made to match. */
static void misaligned_region(uint8_t *p, struct pq_hdr *h) {
  struct pq_slot *s = &slot0(p, h)[3];
  s->ps_offset += 4;
  pq__slot_publish(s, PQ_SLOT_COMMITTED);
}

/* Slot 5's region grown over slot 6's (the products lie end to end). */
static void overlapping_regions(uint8_t *p, struct pq_hdr *h) {
  struct pq_slot *s = slot0(p, h);
  assert_int_equal(s[5].ps_offset + s[5].ps_extent, s[6].ps_offset);
  s[5].ps_extent += 8;
  pq__slot_publish(&s[5], PQ_SLOT_COMMITTED);
}

/* The newest insertion time assigned, behind the last ten products. */
static void last_key_behind(uint8_t *p, struct pq_hdr *h) {
  h->hd_last_key = slot0(p, h)[9].ps_key;
}

/* The free-slot stack starts at a slot in use. */
static void free_stack_on_used(uint8_t *p, struct pq_hdr *h) {
  (void)p;
  h->hd_free_top = 0;
}

/* The write head off the 8-byte grid. */
static void misaligned_head(uint8_t *p, struct pq_hdr *h) {
  (void)p;
  h->hd_head += 4;
}

/* 64 bytes changed inside the data of product 7. */
static void changed_data(uint8_t *p, struct pq_hdr *h) {
  struct pq_slot *s = &slot0(p, h)[7];
  for (unsigned i = 0; i < 64; i++)
    p[h->hd_data_off + s->ps_offset + 200 + i] ^= 0x5a;
}

static void test_damage_detected_and_repaired(void **state) {
  (void)state;
  damage_and_repair(flip_slot, 3, 19);
  damage_and_repair(misaligned_region, 4, 19);
  damage_and_repair(overlapping_regions, 5, 19);
  damage_and_repair(break_region_list, 6, 20);
  damage_and_repair(break_time_link, 7, 20);
  damage_and_repair(last_key_behind, 8, 20);
  damage_and_repair(clear_hash, 9, 20);
  damage_and_repair(free_stack_on_used, 10, 20);
  damage_and_repair(bad_counter, 11, 20);
  damage_and_repair(bad_record, 13, 19);
  damage_and_repair(misaligned_head, 14, 20);
  damage_and_repair(changed_data, 15, 19);
}

static void test_crc32c(void **state) {
  (void)state;
  /* The check value of CRC32C (Castagnoli), and chaining. */
  assert_int_equal(pq__crc32c(0, "123456789", 9), 0xe3069283u);
  assert_int_equal(pq__crc32c(pq__crc32c(0, "1234", 4), "56789", 5),
                   0xe3069283u);
  assert_int_equal(pq__crc32c(0, "", 0), 0);
}

struct seen {
  unsigned n;
  char last[PQ_IDENT_MAX + 1];
};

static int note_ident(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct seen *s = arg;
  (void)data;
  (void)place;
  snprintf(s->last, sizeof s->last, "%s", info->ident);
  s->n++;
  return 0;
}

/* Readers that verify are told of a damaged product (by identifier and
 * insertion time) and go on past it; readers that do not are not. */
static void test_verify_reads(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = damaged_queue(changed_data, &len);
  struct pq_hdr *h = (struct pq_hdr *)p;
  char when[32];
  pq_ts_format(pq_ts_from_us(slot0(p, h)[7].ps_key), when, sizeof when);
  pq_t *pq;
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  struct seen s = {0, ""};
  while (pq_next(pq, PQ_FORWARD, NULL, note_ident, &s) == PQ_OK)
    ;
  assert_int_equal(s.n, 20); /* not asked to verify */
  pq_set_verify(pq, PQ_VERIFY_EACH);
  pq_cursor_oldest(pq);
  s.n = 0;
  int rc, ndamaged = 0;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, note_ident, &s)) != PQ_END) {
    if (rc == PQ_DAMAGED) {
      ndamaged++;
      assert_string_equal(s.last, "test/6"); /* not handed over */
      const char *msg = pq_last_error(pq)->pe_msg;
      assert_non_null(strstr(msg, "test/7"));
      assert_non_null(strstr(msg, when));
      continue;
    }
    assert_int_equal(rc, PQ_OK);
  }
  assert_int_equal(ndamaged, 1);
  assert_int_equal(s.n, 19);
  /* Backwards too, and by signature. */
  pq_cursor_set(pq, PQ_CURSOR_END);
  s.n = 0;
  ndamaged = 0;
  while ((rc = pq_next(pq, PQ_BACKWARD, NULL, note_ident, &s)) != PQ_END)
    ndamaged += rc == PQ_DAMAGED;
  assert_int_equal(ndamaged, 1);
  assert_int_equal(s.n, 19);
  pq_prod_info info;
  tu_product(&info, buf, 1000 + 7, 7);
  s.n = 0;
  assert_int_equal(pq_find(pq, info.signature, note_ident, &s), PQ_DAMAGED);
  assert_int_equal(s.n, 0);
  tu_product(&info, buf, 1000 + 8, 8);
  assert_int_equal(pq_find(pq, info.signature, note_ident, &s), PQ_OK);
  assert_int_equal(s.n, 1);
  pq_close(pq);
  munmap(p, len);
}

/* The notices the library gave (pq_set_notice()). */
static struct {
  int n;
  char last[640];
} notices;

static void note_notice(void *arg, const char *msg) {
  assert_ptr_equal(arg, &notices);
  notices.n++;
  snprintf(notices.last, sizeof notices.last, "%s", msg);
}

/* pq_next_many() with verification: each product of the queue (test/0 ..
 * test/19) handed over once, in order, but the damaged one, which ends its
 * batch with PQ_DAMAGED once and is never offered again; the products
 * after it in that batch come with the next call.  Whatever batch the
 * damage falls in, and wherever in it: every product is damaged in turn. */
static unsigned damaged_index_no;

static void changed_data_at(uint8_t *p, struct pq_hdr *h) {
  struct pq_slot *s = &slot0(p, h)[damaged_index_no];
  for (unsigned i = 0; i < 8; i++)
    p[h->hd_data_off + s->ps_offset + 100 + i] ^= 0xff;
}

struct order {
  unsigned n;
  int ids[40]; /* the products handed over, in order */
};

static int note_order(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct order *o = arg;
  (void)data;
  (void)place;
  assert_true(o->n < 40);
  o->ids[o->n++] = atoi(strchr(info->ident, '/') + 1);
  return 0;
}

static void read_batches(pq_t *pq, int direction, unsigned bad) {
  struct order o = {0};
  int rc, ndamaged = 0;
  while ((rc = pq_next_many(pq, direction, NULL, 0, note_order, &o)) !=
         PQ_END) {
    if (rc == PQ_DAMAGED) {
      char want[32];
      snprintf(want, sizeof want, ": test/%u", bad);
      assert_non_null(strstr(pq_last_error(pq)->pe_msg, want));
      ndamaged++;
    } else {
      assert_int_equal(rc, PQ_OK);
    }
    assert_true(ndamaged <= 1);
  }
  assert_int_equal(ndamaged, 1);
  assert_int_equal(o.n, 19);
  unsigned i = 0;
  for (unsigned k = 0; k < 20; k++) {
    int id = direction == PQ_FORWARD ? (int)k : 19 - (int)k;
    if (id != (int)bad)
      assert_int_equal(o.ids[i++], id);
  }
}

static void test_verify_batches(void **state) {
  (void)state;
  for (damaged_index_no = 0; damaged_index_no < 20; damaged_index_no++) {
    size_t len;
    uint8_t *p = damaged_queue(changed_data_at, &len);
    pq_t *pq;
    assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
    pq_set_verify(pq, PQ_VERIFY_EACH);
    read_batches(pq, PQ_FORWARD, damaged_index_no);
    pq_cursor_set(pq, PQ_CURSOR_END);
    read_batches(pq, PQ_BACKWARD, damaged_index_no);
    pq_close(pq);
    munmap(p, len);
  }
}

/* Index damage makes a read fail, never end early: a read-only handle
 * reports it, a read-write one rebuilds, says so once in a notice (what it
 * found, what it did), and reads every product. */
static void damaged_walk(void (*damage)(uint8_t *, struct pq_hdr *),
                         const char *what, unsigned readable) {
  size_t len;
  uint8_t *p = damaged_queue(damage, &len);
  pq_t *pq;
  memset(&notices, 0, sizeof notices);
  pq_set_notice(note_notice, &notices);
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  struct seen s = {0, ""};
  int rc;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, note_ident, &s)) == PQ_OK)
    ;
  assert_int_equal(rc, PQ_CORRUPT);
  assert_true(s.n < readable);
  assert_non_null(strstr(pq_last_error(pq)->pe_msg, what));
  pq_cursor_set(pq, PQ_CURSOR_END);
  while ((rc = pq_next(pq, PQ_BACKWARD, NULL, note_ident, &s)) == PQ_OK)
    ;
  assert_int_equal(rc, PQ_CORRUPT);
  pq_close(pq);
  assert_int_equal(notices.n, 0); /* nothing mended: the failure says it */
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  s.n = 0;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, note_ident, &s)) == PQ_OK)
    ;
  assert_int_equal(rc, PQ_END);
  assert_int_equal(s.n, readable);
  assert_int_equal(notices.n, 1);
  if (strstr(notices.last, path) == NULL ||
      strstr(notices.last, what) == NULL ||
      strstr(notices.last, "rebuilt the indexes") == NULL)
    fail_msg("notice \"%s\" does not say %s and the rebuild", notices.last,
             what);
  tu_check(pq);
  pq_close(pq);
  pq_set_notice(NULL, NULL);
  munmap(p, len);
}

static void break_back_link(uint8_t *p, struct pq_hdr *h) {
  uint32_t *n = (uint32_t *)(p + h->hd_node_off + 9 * h->hd_node_stride);
  n[h->hd_levels] = 3; /* level-0 back link of slot 9 */
}

static void cut_time_index(uint8_t *p, struct pq_hdr *h) {
  uint32_t *n = (uint32_t *)(p + h->hd_node_off + 12 * h->hd_node_stride);
  n[0] = PQ_NIL; /* the list ends at slot 12, not at its tail */
}

static void test_readers_find_damage(void **state) {
  (void)state;
  damaged_walk(break_time_link, "time index damaged", 20);
  damaged_walk(break_back_link, "time index damaged", 20);
  damaged_walk(cut_time_index, "time index damaged", 20);
  damaged_walk(flip_slot, "slot table damaged at slot 3", 19);
  /* A slot found by signature must pass its checksum too. */
  size_t len;
  uint8_t *p = damaged_queue(flip_slot, &len);
  pq_t *pq;
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  pq_prod_info info;
  tu_product(&info, buf, 1000 + 3, 3);
  struct seen s = {0, ""};
  assert_int_equal(pq_find(pq, info.signature, note_ident, &s), PQ_CORRUPT);
  assert_int_equal(s.n, 0);
  pq_close(pq);
  munmap(p, len);
}

/* The whole file, to tell whether anything wrote it. */
static uint8_t *file_copy(size_t *len) {
  uint8_t *p = map_file(len);
  uint8_t *copy = malloc(*len);
  assert_non_null(copy);
  memcpy(copy, p, *len);
  munmap(p, *len);
  return copy;
}

static void assert_file_is(const uint8_t *copy, size_t len) {
  size_t now;
  uint8_t *p = map_file(&now);
  assert_int_equal(now, len);
  assert_memory_equal(p, copy, len);
  munmap(p, now);
}

/* A read-only pq_check() writes nothing: what a crash left is reported as
 * what the next writer repairs, and real damage still fails. */
static void test_readonly_check_changes_nothing(void **state) {
  (void)state;
  make_queue(5);
  pid_t pid = fork(); /* a writer that dies holding a reservation */
  assert_true(pid >= 0);
  if (pid == 0) {
    pq_t *w;
    pq_prod_info info;
    pq_resv r;
    tu_product(&info, buf, 500, 99);
    if (pq_open(path, 0, &w, NULL) != PQ_OK || pq_reserve(w, &info, &r) != 0)
      _exit(1);
    _exit(0); /* no pq_close: the reservation stays, its writer is gone */
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  size_t len;
  uint8_t *before = file_copy(&len);
  pq_t *pq;
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  pq_check_report r;
  assert_int_equal(pq_check(pq, &r), PQ_OK);
  assert_int_equal(r.pr_dead_resv, 1);
  assert_int_equal(r.pr_reserved, 0);
  assert_int_equal(r.pr_reclaimed, 0);
  assert_false(r.pr_interrupted);
  assert_int_equal(r.pr_products, 5);
  pq_close(pq);
  assert_file_is(before, len);

  /* Left mid-change as well, with the slot being rewritten stale. */
  uint8_t *p = map_file(&len);
  struct pq_hdr *h = (struct pq_hdr *)p;
  h->hd_dirty = 1;
  h->hd_intent_op = PQ_OP_COMMIT;
  h->hd_intent_slot = 4;
  slot0(p, h)[4].ps_key += 1;
  clear_hash(p, h);
  free(before);
  before = file_copy(&len);
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  assert_int_equal(pq_check(pq, &r), PQ_OK);
  assert_true(r.pr_interrupted);
  assert_false(r.pr_repaired);
  assert_int_equal(r.pr_dead_resv, 1);
  assert_int_equal(r.pr_products, 4);
  assert_file_is(before, len);
  /* Damage to what the repair keeps is still damage. */
  uint8_t *byte = p + h->hd_data_off + slot0(p, h)[2].ps_offset + 300;
  *byte ^= 1;
  assert_int_equal(pq_check(pq, &r), PQ_CORRUPT);
  assert_int_equal(r.pr_invariant, 15);
  pq_close(pq);
  free(before);

  /* The next writer repairs (its open takes the lock) and reclaims. */
  *byte ^= 1;
  uint64_t repairs = h->hd_repairs;
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  assert_int_equal(h->hd_dirty, 0);
  assert_int_equal(h->hd_repairs, repairs + 1);
  assert_int_equal(pq_check(pq, &r), PQ_OK);
  assert_false(r.pr_interrupted);
  assert_int_equal(r.pr_dead_resv, 0);
  assert_int_equal(r.pr_reserved, 0);
  assert_int_equal(r.pr_products, 4);
  pq_close(pq);
  munmap(p, len);
}

static void test_crash_mid_change_repaired(void **state) {
  (void)state;
  make_queue(20);
  size_t len;
  uint8_t *p = map_file(&len);
  struct pq_hdr *h = (struct pq_hdr *)p;
  /* As if a writer died inside a commit: dirty, with damaged derived
   * indexes, and the slot it was committing half rewritten. */
  h->hd_dirty = 1;
  h->hd_intent_op = PQ_OP_COMMIT;
  h->hd_intent_slot = 19;
  clear_hash(p, h);
  slot0(p, h)[19].ps_key += 1; /* checksum now stale */
  pq_t *pq;
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  struct count c = count_all(pq); /* a reader repairs, too */
  assert_int_equal(c.n, 19);
  assert_int_equal(c.bad, 0);
  assert_int_equal(h->hd_dirty, 0);
  assert_int_equal(h->hd_repairs, 1);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_repairs, 1);
  tu_check(pq);
  pq_close(pq);
  /* The product that was being committed can be inserted again. */
  assert_int_equal(pq_open(path, 0, &pq, NULL), PQ_OK);
  pq_prod_info info;
  tu_product(&info, buf, 1000 + 19, 19);
  assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
  tu_check(pq);
  pq_close(pq);
  munmap(p, len);
}

/* Open read-only as a user who may not write the file: the dirty queue
 * cannot be repaired, so reading fails with PQ_CORRUPT (and a message). */
static int read_unrepairable(void) {
  pq_t *pq;
  if (pq_open(path, PQ_READONLY, &pq, NULL) != PQ_OK)
    return 10;
  struct count c = {0, 0};
  int rc = pq_next(pq, PQ_FORWARD, NULL, count_intact, &c);
  int ok = rc == PQ_CORRUPT && strstr(pq_last_error(pq)->pe_msg, "writer");
  pq_close(pq);
  return ok ? 0 : 11;
}

static void test_readonly_file_cannot_repair(void **state) {
  (void)state;
  /* Root reads as nobody below, who may not enter PQ_TEST_DIR (a build in
   * a clone under /root, mode 0700): the queue goes to /dev/shm, which
   * every user may search (teardown removes it there). */
  if (geteuid() == 0)
    snprintf(path, sizeof path, "/dev/shm/test_badfile_readonly.%ld.pq",
             (long)getpid());
  make_queue(3);
  size_t len;
  uint8_t *p = map_file(&len);
  ((struct pq_hdr *)p)->hd_dirty = 1;
  munmap(p, len);
  assert_int_equal(chmod(path, 0444), 0);
  if (geteuid() != 0) {
    assert_int_equal(read_unrepairable(), 0);
    return;
  }
  /* Root writes any file: read as nobody instead. */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0)
      _exit(12);
    _exit(read_unrepairable());
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 10)
    tu_skip("user nobody cannot reach /dev/shm");
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_refuses_foreign_files, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_refuses_damaged_queues, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_damage_detected_and_repaired, setup,
                                      teardown),
      cmocka_unit_test(test_crc32c),
      cmocka_unit_test_setup_teardown(test_verify_reads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verify_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(test_readers_find_damage, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_readonly_check_changes_nothing,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_crash_mid_change_repaired, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_readonly_file_cannot_repair, setup,
                                      teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
