/*
 * internal.h - what the files of the queue library share and nobody else
 * sees: the handle, and the pq__ functions each file exports to the others.
 * Public names are pq_, internal ones pq__, private ones static.
 */
#ifndef PQ_INTERNAL_H
#define PQ_INTERNAL_H

#include <errno.h> /* the sys.c wrappers report through errno */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pq/format.h"
#include "pq/pq.h"

/* Control-lock states of a handle. */
enum { PQ__UNLOCKED = 0, PQ__SHARED = 1, PQ__EXCL = 2 };

struct pq {
  int fd;
  bool readonly;     /* opened PQ_READONLY */
  bool map_writable; /* the mapping can be written (repair, waiters) */
  char *path;
  unsigned fork_gen; /* pq__fork_generation() at open */

  uint8_t *base; /* the whole file, mapped shared */
  uint64_t map_size;
  struct pq_hdr *hdr;
  uint32_t *wgen;
  struct pq_slot *slots;
  uint8_t *nodes;
  struct pq_rlink *rl;
  uint64_t *hash;
  uint8_t *data;

  /* geometry, copied from the validated header */
  uint32_t nslots;
  uint32_t levels;
  uint64_t node_stride;
  uint64_t hash_mask;
  uint64_t data_off;
  uint64_t data_size;

  int ctl;    /* control lock: PQ__UNLOCKED, SHARED, EXCL */
  int writer; /* writer lock byte, or -1 for a read-only handle */
  uint32_t writer_gen;

  /* reader state */
  uint64_t cursor;      /* insertion time of the last product visited */
  uint32_t cursor_slot; /* its slot if still valid, else PQ_NIL */
  uint32_t seen_seq;    /* hd_commit_seq when pq_next() last found END */
  int waiter;           /* waiter lock byte, -1 until the first sleep */
  unsigned spin_us;
  bool holding; /* a product lock is held (during a callback) */
  uint64_t held_off, held_len;
  bool pin_ok;       /* the lock held is one product's: pq_pin() may keep it */
  uint64_t pin_data; /* that product's data, as a file offset */
  uint64_t pins;     /* pq_pin()s not yet released by pq_unpin() */
  enum pq_verify verify; /* pq_set_verify(): check products' CRCs */

  /* writer state */
  bool has_resv;
  uint32_t resv_slot;
  uint64_t resv_key;
  uint64_t resv_seq; /* per-handle counter making reservation ids unique */
  uint64_t resv_off, resv_len; /* region offset; record + data bytes */

  /* populate.c: a bit per 2 MiB chunk of the data area this handle has
   * mapped for writing; the madvise() advice used; pop_off for a handle
   * that does not write or a kernel that refuses */
  uint64_t *pop_done;
  int pop_advice;
  bool pop_off;

  pq_error err;
};

/* ---- errors.c ---- */
/* Record a failure on e and return code.  fmt may be NULL. */
int pq__fail(pq_error *e, int code, int sys_errno, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Tell the program's notice function (pq_set_notice()), if any. */
void pq__notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* pq__fail on the handle's own pq_error. */
#define PQ__FAIL(pq, code, errnum, ...)                                        \
  pq__fail(&(pq)->err, (code), (errnum), __VA_ARGS__)

/* ---- sys.c: thin syscall layer with EINTR retry and fault injection ---- */
struct stat;
struct statfs;
struct statvfs;
int pq__sys_open(const char *path, int flags, unsigned mode);
int pq__sys_close(int fd);
int pq__sys_fstat(int fd, struct stat *st);
int pq__sys_fstatfs(int fd, struct statfs *st);
int pq__sys_statvfs(const char *path, struct statvfs *st);
int pq__sys_access(const char *path, int mode);
/* Read exactly len bytes at off: 0, or -1 with errno (EIO for a file that
 * ends before). */
int pq__sys_pread(int fd, void *buf, size_t len, uint64_t off);
/* Allocate the blocks of [off, off + len), extending the file if needed:
 * 0, or -1 with errno (ENOSPC when the file system has not the room,
 * EOPNOTSUPP when it cannot allocate ahead).  emulate: where it cannot,
 * write into each block instead (only for a file nobody else has open). */
int pq__sys_fallocate(int fd, uint64_t off, uint64_t len, bool emulate);
/* A shared mapping of the first len bytes of fd, or MAP_FAILED. */
void *pq__sys_mmap(size_t len, int prot, int fd);
void pq__sys_munmap(void *addr, size_t len);
int pq__sys_madvise(void *addr, size_t len, int advice);
int pq__sys_rename(const char *from, const char *to);
int pq__sys_link(const char *from, const char *to);
int pq__sys_unlink(const char *path);
int pq__sys_lock(int fd, int cmd, short type, uint64_t start, uint64_t len);
/* F_OFD_GETLK probe: 1 if another description holds a conflicting lock of
 * that type, 0 if not, -1 on error (errno set). */
int pq__sys_lock_held(int fd, short type, uint64_t start, uint64_t len);
/* Make the next call of the wrapper pq__sys_<call> in this thread fail with
 * errnum ("open", "fstat", "fstatfs", "statvfs", "access", "pread",
 * "fallocate", "mmap", "rename", "link", "lock", "lock_held").  For
 * tests. */
void pq__sys_inject(const char *call, int errnum);
/* The injection hook each wrapper calls first: -1 with errno set if the
 * next call of `call` was made to fail (the injection is then used up). */
int pq__sys_injected(const char *call);
int pq__futex_wait(uint32_t *word, uint32_t expected, int timeout_ms);
/* Wake every sleeper on word: how many were woken, or -1. */
int pq__futex_wake(uint32_t *word);

/* ---- open.c ---- */
/* PQ_FORKED if the handle was inherited across fork(), else PQ_OK. */
int pq__check_owner(pq_t *pq);
/* What an entry point checks first: pq__check_owner(), then its arguments:
 * PQ_INVAL with the message bad_args unless args_ok. */
int pq__check_call(pq_t *pq, bool args_ok, const char *bad_args);
/* pq__check_call(), then PQ_NOWRITE ("<path> is open read-only") for a
 * read-only handle: the start of an entry point that changes the queue. */
int pq__check_write_call(pq_t *pq, bool args_ok, const char *bad_args);

/* ---- populate.c ---- */
void pq__populate_init(pq_t *pq);
void pq__populate_free(pq_t *pq);
/* Map for writing the chunks of data-area bytes [off, off + len) that this
 * handle has not mapped yet.  Best effort. */
void pq__populate(pq_t *pq, uint64_t off, uint64_t len);

/* ---- layout.c ---- */
struct pq__geometry {
  uint64_t nslots, levels, node_stride, hash_size;
  uint64_t slot_off, node_off, rlist_off, hash_off, data_off, data_size;
  uint64_t file_size;
};
int pq__geometry(uint64_t data_size, uint64_t nslots, struct pq__geometry *g);
uint64_t pq__layout_signature(void);
uint64_t pq__hdr_checksum(const struct pq_hdr *h);
/* Validate a header read from a file of file_size bytes.  PQ_OK,
 * PQ_FORMAT or PQ_VERSION, with the reason in e. */
int pq__hdr_validate(const struct pq_hdr *h, uint64_t file_size, pq_error *e);
uint64_t pq__hash64(const void *p, size_t n, uint64_t seed);

/* ---- lock.c ---- */
/* Take the control byte, shared behind any waiting writer, or exclusive
 * with writer preference; no dirty check, no state kept.  0, or -1 with
 * errno set. */
int pq__ctl_take(pq_t *pq, bool exclusive);
int pq__ctl_lock(pq_t *pq, bool exclusive);
void pq__ctl_unlock(pq_t *pq);
void pq__mutate_begin(pq_t *pq, enum pq_intent_op op, uint32_t slot);
void pq__mutate_end(pq_t *pq);
int pq__writer_acquire(pq_t *pq);
/* Take, for the handle's life, the first of the n lock bytes from base
 * that no handle holds: its index, or -1 with errno (EAGAIN: all held). */
int pq__lock_free_byte(pq_t *pq, uint64_t base, unsigned n);
bool pq__writer_alive(pq_t *pq, uint32_t idx, uint32_t gen);
int pq__prod_lock(pq_t *pq, uint64_t off, uint64_t len);
void pq__prod_unlock(pq_t *pq);
/* Is the region held by a reader (any handle, this one included)?
 * 1 yes, 0 no, negative pq status on failure. */
int pq__prod_held(pq_t *pq, uint64_t off, uint64_t len);

/* ---- slot.c ---- */
static inline uint32_t pq__slot_state(const struct pq_slot *s) {
  return (uint32_t)__atomic_load_n(&s->ps_word, __ATOMIC_ACQUIRE);
}
uint32_t pq__slot_checksum(const struct pq_slot *s, uint32_t state);
bool pq__slot_valid(const struct pq_slot *s);
void pq__slot_publish(struct pq_slot *s, uint32_t state);
static inline bool pq__slot_used(const struct pq_slot *s) {
  uint32_t st = pq__slot_state(s);
  return st == PQ_SLOT_RESERVED || st == PQ_SLOT_COMMITTED;
}
/* Sort n slot numbers by their regions' offsets / by their insertion times
 * (the check and the rebuild walk the slots in both orders). */
void pq__slots_by_offset(const pq_t *pq, uint32_t *v, uint32_t n);
void pq__slots_by_key(const pq_t *pq, uint32_t *v, uint32_t n);

/* ---- timeindex.c: skip list ordered by insertion time ---- */
unsigned pq__ti_level(uint64_t key, unsigned maxlevels);
void pq__ti_clear(pq_t *pq);
int pq__ti_append(pq_t *pq, uint32_t slot);
int pq__ti_remove(pq_t *pq, uint32_t slot);
/* Link a slot at its key's place (not only at the tail); PQ_DUP if a
 * product already has that insertion time. */
int pq__ti_insert(pq_t *pq, uint32_t slot);
uint32_t pq__ti_first(pq_t *pq);
uint32_t pq__ti_last(pq_t *pq);
uint32_t pq__ti_next(pq_t *pq, uint32_t slot);
uint32_t pq__ti_prev(pq_t *pq, uint32_t slot);
/* First committed slot with key > k / last with key < k, or PQ_NIL. */
uint32_t pq__ti_after(pq_t *pq, uint64_t k);
uint32_t pq__ti_before(pq_t *pq, uint64_t k);
/* Link the given committed slots (sorted by key) as a fresh index. */
void pq__ti_build(pq_t *pq, const uint32_t *sorted, uint32_t n);
uint32_t *pq__ti_next_ptr(pq_t *pq, uint32_t node, unsigned level);
uint32_t *pq__ti_prev_ptr(pq_t *pq, uint32_t node);
/* Checked walks of readers: every node followed must be a sound committed
 * slot in key order with consistent links.  *out gets the next (or
 * previous: direction < 0) committed slot after node `from` (the head,
 * nslots, for the first), or the first after / last before insertion time
 * k, or PQ_NIL at the end; PQ_OK.  PQ_CORRUPT on damage, with *out the
 * node where the walk broke. */
int pq__ti_step_checked(pq_t *pq, uint32_t from, int direction, uint32_t *out);
int pq__ti_seek_checked(pq_t *pq, uint64_t k, int direction, uint32_t *out);

/* ---- sigindex.c: signature hash, linear probing ---- */
uint32_t pq__sx_find(pq_t *pq, const uint8_t sig[16]);
int pq__sx_add(pq_t *pq, uint32_t slot);
void pq__sx_remove(pq_t *pq, uint32_t slot);
void pq__sx_clear(pq_t *pq);
uint64_t pq__sx_home(const pq_t *pq, const uint8_t sig[16]);

/* ---- regionlist.c: regions in address order; free-slot stack ---- */
void pq__rl_clear(pq_t *pq);
void pq__rl_insert_after(pq_t *pq, uint32_t prev, uint32_t slot);
void pq__rl_remove(pq_t *pq, uint32_t slot);
void pq__rl_build(pq_t *pq, const uint32_t *sorted, uint32_t n);
uint32_t pq__free_pop(pq_t *pq);
void pq__free_push(pq_t *pq, uint32_t slot);
static inline uint64_t pq__slot_end(const pq_t *pq, uint32_t s) {
  return pq->slots[s].ps_offset + pq->slots[s].ps_extent;
}

/* ---- ring.c: space allocation and eviction ---- */
/* Find room for extent bytes at the write head and make sure a slot is
 * free, evicting as needed; on success *off is the region's offset and
 * *prev the region before it.  PQ_LOCKED (no room, or no slot, whatever
 * is evicted) is returned having evicted nothing. */
int pq__ring_make_room(pq_t *pq, uint64_t extent, uint64_t *off,
                       uint32_t *prev);
/* Remove a used slot from every index and free it.  evicted: count it as an
 * eviction for room (MVRT, is_full).  Caller holds the exclusive lock inside
 * a mutation. */
void pq__slot_release(pq_t *pq, uint32_t slot, bool evicted);
/* A reserved slot whose owner is dead: release it, 1; alive: 0. */
int pq__reclaim_if_dead(pq_t *pq, uint32_t slot);
/* Where the region after prev may start: its end, 0 for the sentinel.
 * The write head (invariant 14). */
uint64_t pq__head_anchor(const pq_t *pq, uint32_t prev);
/* Region bytes of a product record + data, rounded up to PQ_ALIGN. */
uint64_t pq__rec_extent(size_t origin_len, size_t ident_len, uint64_t size);

/* ---- roots.c: the header's mutable roots, vetted before a change ---- */
/* Invariant 14: hd_head_prev is the sentinel or a used slot whose region
 * list successor is sound, and hd_head lies in the free space between
 * them.  PQ_OK, or PQ_CORRUPT with what is wrong in why. */
int pq__head_vet(const pq_t *pq, char *why, size_t len);
/* The write head, the free-slot stack's top and the slot counters, the
 * time-index tails and the last insertion time, against the slots they
 * name: PQ_OK, or PQ_CORRUPT recorded on the handle (nothing changed). */
int pq__roots_vet(pq_t *pq);

/* ---- repair.c ---- */
/* Rebuild every derived structure from the slots.  *dropped counts slots
 * freed as damage (their checksum failed outside the intent record, their
 * region or record is malformed, they overlap or repeat another); fn, if
 * not NULL, is told of each, before it is freed. */
int pq__rebuild_noting(pq_t *pq, uint64_t *dropped, uint64_t *reclaimed,
                       pq_drop_fn *fn, void *arg);
/* pq__rebuild_noting() telling no one. */
int pq__rebuild(pq_t *pq, uint64_t *dropped, uint64_t *reclaimed);
/* Tell fn (if not NULL) that used slot i is dropped, and why. */
void pq__drop_note(pq_t *pq, uint32_t i, const char *why, pq_drop_fn *fn,
                   void *arg);

/* ---- crc32c.c ---- */
/* CRC32C of n bytes, chained: start with 0, pass the last result on. */
uint32_t pq__crc32c(uint32_t crc, const void *p, uint64_t n);

/* ---- read.c ---- */
/* Decode the record of a used slot into info; data gets the data pointer.
 * PQ_CORRUPT if the record is malformed. */
int pq__rec_decode(const pq_t *pq, uint32_t slot, pq_prod_info *info,
                   const uint8_t **data);
/* CRC32C of a decoded product's bytes: record, strings, padding, data. */
uint32_t pq__prod_crc(const pq_t *pq, uint32_t slot, const pq_prod_info *info,
                      const uint8_t *data);

/* ---- wait.c ---- */
void pq__notify_commit(pq_t *pq);

/* ---- misc ---- */
uint64_t pq__now_us(void);
unsigned pq__fork_generation(void);

#endif /* PQ_INTERNAL_H */
