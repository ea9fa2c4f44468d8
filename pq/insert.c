/*
 * insert.c - putting products in: reserve, commit, discard, and the
 * whole-product insert built from them.  The control lock is taken twice per
 * product, each time for a bounded index change; the data is copied between
 * the two with no queue lock held, so a 20 MB image does not stall readers or
 * other writers.  The signature is claimed at reservation, so a duplicate is
 * refused while the first copy is still arriving.
 *
 * One exception, for speed where it is cheapest: pq_insert() of a product
 * of at most PQ__SMALL_COPY bytes reserves, copies and commits under one
 * hold of the lock.  Copying 4 KiB takes about 0.1 us; taking and dropping
 * the lock a second time takes about 2 us, so the single hold is shorter in
 * total and halves the system calls of small inserts (text bulletins, the
 * most numerous products of the IDD).  pq_insert_many() goes one step
 * further for a program that has many small products at hand (pqinsert of
 * many files): one hold of the lock for up to PQ__BATCH_BYTES of them.
 *
 * Every product gets the CRC32C of its bytes (record and data) at commit,
 * kept in its slot for pq_check() and for readers that verify.  It is
 * computed with no lock held: at pq_commit() over the region the caller
 * filled, in pq_insert() of a small product over the caller's buffers
 * before the lock is taken; only pq_insert_many() computes it under the
 * lock, for the second and later products of a run (a few KiB each).
 */
#include <string.h>

#include "pq/internal.h"

#define RND8(x) (((x) + PQ_ALIGN - 1) / PQ_ALIGN * PQ_ALIGN)
#define PQ__SMALL_COPY 4096u
#define PQ__BATCH_BYTES ((uint64_t)64 << 10) /* copied per lock hold */
/* Room for a record header and its strings, padded to PQ_ALIGN. */
#define REC_MAX RND8(sizeof(struct pq_rec) + PQ_ORIGIN_MAX + PQ_IDENT_MAX)

/* A product's record as it will be stored, and the CRC of record + data. */
struct prep {
  uint8_t rec[REC_MAX];
  size_t len; /* record header, strings and padding */
  uint32_t crc;
};

static void note_usage(struct pq_hdr *h) {
  uint64_t used = h->hd_nprods + h->hd_nresv;
  if (used > h->hd_maxprods)
    h->hd_maxprods = used;
  if (h->hd_nbytes > h->hd_maxbytes)
    h->hd_maxbytes = h->hd_nbytes;
  if (h->hd_nfree_slots < h->hd_minempty)
    h->hd_minempty = h->hd_nfree_slots;
  if (h->hd_head > h->hd_highwater)
    h->hd_highwater = h->hd_head;
}

/* Claim a slot and a region; called with the exclusive lock, in a mutation. */
static int claim(pq_t *pq, const pq_prod_info *info, uint64_t extent,
                 uint32_t *slotp) {
  struct pq_hdr *h = pq->hdr;
  /* The roots steer the eviction: a damaged one must evict nothing. */
  int rc = pq__roots_vet(pq);
  if (rc != PQ_OK)
    return rc;
  uint32_t dup = pq__sx_find(pq, info->signature);
  if (dup != PQ_NIL && pq__reclaim_if_dead(pq, dup) != 1)
    return PQ__FAIL(pq, PQ_DUP, 0, NULL);
  uint64_t off = 0;
  uint32_t prev = PQ_NIL;
  rc = pq__ring_make_room(pq, extent, &off, &prev);
  if (rc == PQ_LOCKED)
    return PQ__FAIL(pq, rc, 0,
                    "%s: no room for %llu bytes: what could make room is in "
                    "use",
                    pq->path, (unsigned long long)extent);
  if (rc == PQ_CORRUPT)
    return PQ__FAIL(pq, rc, 0, "%s: the region list is damaged", pq->path);
  if (rc != PQ_OK)
    return rc; /* PQ_SYSTEM, recorded with its errno where the call failed */
  uint32_t slot = pq__free_pop(pq);
  if (slot == PQ_NIL)
    return PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: free-slot stack empty", pq->path);
  h->hd_intent_op = PQ_OP_RESERVE;
  h->hd_intent_slot = slot;
  struct pq_slot *s = &pq->slots[slot];
  s->ps_key = ((uint64_t)pq->writer_gen << 32) ^ ++pq->resv_seq;
  s->ps_offset = off;
  s->ps_extent = extent;
  memcpy(s->ps_sig, info->signature, PQ_SIGLEN);
  s->ps_owner = (uint32_t)pq->writer;
  s->ps_owner_gen = pq->writer_gen;
  s->ps_feedtype = info->feedtype;
  s->ps_crc = 0; /* set at commit */
  pq__slot_publish(s, PQ_SLOT_RESERVED);
  pq__rl_insert_after(pq, prev, slot);
  (void)pq__sx_add(pq, slot); /* cannot fail: buckets >= 2 * slots */
  h->hd_head = off + extent;
  h->hd_head_prev = slot;
  h->hd_nresv++;
  h->hd_nbytes += extent;
  note_usage(h);
  *slotp = slot;
  return PQ_OK;
}

/* The bytes a product's region starts with: record header, origin, ident
 * and zero padding to PQ_ALIGN, into p->rec and p->len. */
static void encode_record(const pq_prod_info *info, size_t olen, size_t ilen,
                          struct prep *p) {
  struct pq_rec rec;
  memset(&rec, 0, sizeof rec);
  rec.rc_magic = PQ_REC_MAGIC;
  rec.rc_origin_len = (uint16_t)olen;
  rec.rc_ident_len = (uint16_t)ilen;
  rec.rc_arrival_sec = info->arrival.sec;
  rec.rc_arrival_usec = info->arrival.usec;
  rec.rc_feedtype = info->feedtype;
  rec.rc_seqno = info->seqno;
  rec.rc_size = info->size;
  memcpy(rec.rc_sig, info->signature, PQ_SIGLEN);
  p->len = RND8(sizeof rec + olen + ilen);
  memset(p->rec, 0, p->len);
  memcpy(p->rec, &rec, sizeof rec);
  memcpy(p->rec + sizeof rec, info->origin, olen);
  memcpy(p->rec + sizeof rec + olen, info->ident, ilen);
}

/* The record, and the CRC of the product it starts (data from the caller). */
static void prepare(const pq_prod_info *info, const void *data, size_t olen,
                    size_t ilen, struct prep *p) {
  encode_record(info, olen, ilen, p);
  p->crc = pq__crc32c(0, p->rec, p->len);
  if (info->size > 0)
    p->crc = pq__crc32c(p->crc, data, info->size);
}

/* Write the record at the start of a reserved region; returns where the
 * data goes. */
static uint8_t *write_record(pq_t *pq, uint32_t slot, const struct prep *p) {
  uint8_t *dst = pq->data + pq->slots[slot].ps_offset;
  memcpy(dst, p->rec, p->len);
  return dst + p->len;
}

/* Check a product's metadata and size; its region's extent into *extent. */
static int vet(pq_t *pq, const pq_prod_info *info, size_t *olen, size_t *ilen,
               uint64_t *extent) {
  int rc = pq__check_write_call(pq, info != NULL, "NULL product information");
  if (rc != PQ_OK)
    return rc;
  *olen = strnlen(info->origin, sizeof info->origin);
  *ilen = strnlen(info->ident, sizeof info->ident);
  if (*olen > PQ_ORIGIN_MAX || *ilen > PQ_IDENT_MAX)
    return PQ__FAIL(pq, PQ_INVAL, 0, "origin or ident not NUL-terminated");
  if (info->arrival.usec < 0 || info->arrival.usec > 999999)
    return PQ__FAIL(pq, PQ_INVAL, 0, "creation time microseconds %d",
                    info->arrival.usec);
  if (info->size > pq->data_size ||
      pq__rec_extent(*olen, *ilen, info->size) > pq->data_size)
    return PQ__FAIL(
        pq, PQ_BIG, 0, "product of %llu bytes, queue data area %llu bytes",
        (unsigned long long)info->size, (unsigned long long)pq->data_size);
  *extent = pq__rec_extent(*olen, *ilen, info->size);
  return PQ_OK;
}

int pq_reserve(pq_t *pq, const pq_prod_info *info, pq_resv *resv) {
  size_t olen = 0, ilen = 0;
  uint64_t extent = 0;
  int rc = vet(pq, info, &olen, &ilen, &extent);
  if (rc != PQ_OK)
    return rc;
  if (resv == NULL)
    return PQ__FAIL(pq, PQ_INVAL, 0, "pq_reserve: NULL reservation");
  if (pq->has_resv)
    return PQ__FAIL(pq, PQ_BADRESV, 0,
                    "%s: the handle already has a reservation", pq->path);
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
  uint32_t slot = PQ_NIL;
  rc = claim(pq, info, extent, &slot);
  if (rc != PQ_CORRUPT) /* else left dirty: the next locker rebuilds */
    pq__mutate_end(pq);
  pq__ctl_unlock(pq);
  if (rc != PQ_OK)
    return rc;

  /* Map the region for writing before the caller's copy faults on it. */
  pq__populate(pq, pq->slots[slot].ps_offset, extent);
  pq->has_resv = true;
  pq->resv_slot = slot;
  pq->resv_key = pq->slots[slot].ps_key;
  resv->pr_slot = slot;
  resv->pr_key = pq->resv_key;
  resv->pr_size = info->size;
  struct prep p;
  encode_record(info, olen, ilen, &p);
  resv->pr_data = write_record(pq, slot, &p);
  pq->resv_off = pq->slots[slot].ps_offset;
  pq->resv_len = p.len + info->size;
  return PQ_OK;
}

/* Is resv the reservation this handle gave out and has not yet ended? */
static bool resv_outstanding(const pq_t *pq, const pq_resv *resv) {
  return resv != NULL && pq->has_resv && resv->pr_slot == pq->resv_slot &&
         resv->pr_key == pq->resv_key;
}

/* The handle's and the reservation's checks of pq_commit() and
 * pq_discard(): PQ_OK, PQ_BADRESV, or pq__check_owner()'s failure. */
static int check_resv(pq_t *pq, const pq_resv *resv) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if (!resv_outstanding(pq, resv))
    return PQ__FAIL(pq, PQ_BADRESV, 0, NULL);
  return PQ_OK;
}

/* Is resv the handle's outstanding reservation, still intact in the file? */
static bool resv_ok(pq_t *pq, const pq_resv *resv) {
  if (!resv_outstanding(pq, resv))
    return false;
  const struct pq_slot *s = &pq->slots[pq->resv_slot];
  return pq__slot_state(s) == PQ_SLOT_RESERVED && s->ps_key == pq->resv_key &&
         s->ps_owner == (uint32_t)pq->writer &&
         s->ps_owner_gen == pq->writer_gen;
}

/*
 * Make reserved slot a committed product at insertion time `at` (0: now,
 * made strictly increasing), whose bytes have that CRC.  Exclusive lock
 * held, inside a mutation.
 * PQ_DUP (time taken) leaves the reservation as it was; PQ_CORRUPT means
 * the index or last_key is damaged: the caller leaves the queue dirty so
 * that the next locker rebuilds it.
 */
static int link_committed(pq_t *pq, uint32_t slot, uint64_t at, uint32_t crc) {
  struct pq_hdr *h = pq->hdr;
  struct pq_slot *s = &pq->slots[slot];
  h->hd_intent_op = PQ_OP_COMMIT;
  h->hd_intent_slot = slot;
  uint64_t key = at;
  if (key == 0) {
    uint64_t now = pq__now_us();
    key = now > h->hd_last_key ? now : h->hd_last_key + 1;
  }
  if (key > PQ_KEY_MAX)
    return PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: last insertion time damaged",
                    pq->path);
  uint64_t resv_id = s->ps_key;
  s->ps_key = key;
  int rc = pq__ti_insert(pq, slot);
  if (rc == PQ_DUP) { /* nothing linked: still a reservation */
    s->ps_key = resv_id;
    return PQ__FAIL(pq, PQ_DUP, 0, "%s: insertion time %llu is taken", pq->path,
                    (unsigned long long)key);
  }
  s->ps_crc = crc;
  s->ps_checked = 0; /* a new product: nobody has checked it (nor its mark,
                        where the reservation kept its owner) */
  pq__slot_publish(s, PQ_SLOT_COMMITTED);
  if (key > h->hd_last_key)
    h->hd_last_key = key;
  h->hd_most_recent = h->hd_last_key;
  h->hd_nresv--;
  h->hd_nprods++;
  return rc == PQ_OK
             ? PQ_OK
             : PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: time index damaged", pq->path);
}

static int commit(pq_t *pq, pq_resv *resv, uint64_t at) {
  int rc = check_resv(pq, resv);
  if (rc != PQ_OK)
    return rc;
  /* The caller has filled the region: its CRC, before the lock. */
  uint32_t crc = pq__crc32c(0, pq->data + pq->resv_off, pq->resv_len);
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  uint32_t slot = pq->resv_slot;
  if (!resv_ok(pq, resv)) {
    pq__ctl_unlock(pq);
    pq->has_resv = false;
    return PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: reservation vanished from slot %u",
                    pq->path, slot);
  }
  pq__mutate_begin(pq, PQ_OP_COMMIT, slot);
  rc = link_committed(pq, slot, at, crc);
  if (rc != PQ_CORRUPT)
    pq__mutate_end(pq);
  pq__ctl_unlock(pq);
  if (rc == PQ_DUP)
    return rc; /* still reserved: the caller discards or retries */
  pq->has_resv = false;
  if (rc == PQ_OK)
    pq__notify_commit(pq);
  return rc;
}

int pq_commit(pq_t *pq, pq_resv *resv) {
  return commit(pq, resv, 0);
}

int pq_commit_at(pq_t *pq, pq_resv *resv, uint64_t inserted_us) {
  if (inserted_us == 0 || inserted_us > PQ_KEY_MAX)
    return pq == NULL ? PQ_INVAL
                      : PQ__FAIL(pq, PQ_INVAL, 0, "insertion time %llu",
                                 (unsigned long long)inserted_us);
  return commit(pq, resv, inserted_us);
}

int pq_discard(pq_t *pq, pq_resv *resv) {
  int rc = check_resv(pq, resv);
  if (rc != PQ_OK)
    return rc;
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  if (resv_ok(pq, resv)) {
    pq__mutate_begin(pq, PQ_OP_FREE, pq->resv_slot);
    pq__slot_release(pq, pq->resv_slot, false);
    pq__mutate_end(pq);
  }
  pq__ctl_unlock(pq);
  pq->has_resv = false;
  return PQ_OK;
}

/* Reserve, copy and commit a small product whose record p prepared;
 * exclusive lock held.  After PQ_CORRUPT the queue is left dirty for the
 * next locker to rebuild. */
static int insert_locked(pq_t *pq, const pq_prod_info *info, const void *data,
                         uint64_t extent, const struct prep *p) {
  pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
  uint32_t slot = PQ_NIL;
  int rc = claim(pq, info, extent, &slot);
  if (rc == PQ_OK) {
    uint8_t *dst = write_record(pq, slot, p);
    if (info->size > 0)
      memcpy(dst, data, info->size);
    rc = link_committed(pq, slot, 0, p->crc);
  }
  if (rc != PQ_CORRUPT)
    pq__mutate_end(pq);
  return rc;
}

/* The copy happens under the lock: map where it will most likely go (at the
 * write head, read without the lock as a hint) before taking it. */
static void populate_at_head(pq_t *pq, uint64_t extent) {
  uint64_t head = __atomic_load_n(&pq->hdr->hd_head, __ATOMIC_RELAXED);
  if (extent > pq->data_size)
    extent = pq->data_size;
  pq__populate(pq, head < pq->data_size - extent ? head : 0, extent);
}

/* Reserve, copy and commit a small product under one hold of the lock. */
static int insert_small(pq_t *pq, const pq_prod_info *info, const void *data,
                        size_t olen, size_t ilen, uint64_t extent) {
  populate_at_head(pq, extent);
  struct prep p;
  prepare(info, data, olen, ilen, &p);
  int rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  rc = insert_locked(pq, info, data, extent, &p);
  pq__ctl_unlock(pq);
  if (rc == PQ_OK)
    pq__notify_commit(pq);
  return rc;
}

int pq_insert(pq_t *pq, const pq_prod_info *info, const void *data) {
  size_t olen = 0, ilen = 0;
  uint64_t extent = 0;
  int rc = vet(pq, info, &olen, &ilen, &extent);
  if (rc != PQ_OK)
    return rc;
  if (info->size > 0 && data == NULL)
    return PQ__FAIL(pq, PQ_INVAL, 0, "pq_insert: NULL data");
  if (info->size <= PQ__SMALL_COPY)
    return insert_small(pq, info, data, olen, ilen, extent);
  pq_resv r;
  rc = pq_reserve(pq, info, &r);
  if (rc != PQ_OK)
    return rc;
  memcpy(r.pr_data, data, r.pr_size);
  return pq_commit(pq, &r);
}

/* Failures after which a batch cannot go on. */
static bool fatal(int rc) {
  return rc == PQ_SYSTEM || rc == PQ_FORKED || rc == PQ_CORRUPT ||
         rc == PQ_NOMEM;
}

int pq_insert_many(pq_t *pq, size_t n, const pq_prod_info *const infos[],
                   const void *const data[], int rcs[]) {
  int rc = pq__check_call(
      pq, n == 0 || (infos != NULL && data != NULL && rcs != NULL),
      "pq_insert_many: NULL argument");
  if (rc != PQ_OK)
    return rc;
  size_t i = 0;
  while (i < n) {
    size_t olen = 0, ilen = 0;
    uint64_t extent = 0;
    rc = vet(pq, infos[i], &olen, &ilen, &extent);
    if (rc == PQ_OK && infos[i]->size > 0 && data[i] == NULL)
      rc = PQ__FAIL(pq, PQ_INVAL, 0, "pq_insert_many: NULL data");
    if (rc != PQ_OK || infos[i]->size > PQ__SMALL_COPY) {
      rcs[i] = rc == PQ_OK ? pq_insert(pq, infos[i], data[i]) : rc;
      if (fatal(rcs[i]))
        break;
      i++;
      continue;
    }
    /* A run of small products under one hold, bounded in bytes so that
     * readers and other writers wait no longer than for a few copies. */
    populate_at_head(pq, PQ__BATCH_BYTES);
    struct prep p;
    prepare(infos[i], data[i], olen, ilen, &p);
    rc = pq__ctl_lock(pq, true);
    if (rc != PQ_OK) {
      rcs[i] = rc;
      break;
    }
    uint64_t bytes = 0;
    bool committed = false;
    for (;;) {
      rcs[i] = insert_locked(pq, infos[i], data[i], extent, &p);
      committed |= rcs[i] == PQ_OK;
      bytes += extent;
      i++;
      if (fatal(rcs[i - 1]) || i == n || bytes >= PQ__BATCH_BYTES)
        break;
      if (vet(pq, infos[i], &olen, &ilen, &extent) != PQ_OK ||
          infos[i]->size > PQ__SMALL_COPY ||
          (infos[i]->size > 0 && data[i] == NULL))
        break; /* dealt with outside the lock */
      prepare(infos[i], data[i], olen, ilen, &p);
    }
    pq__ctl_unlock(pq);
    if (committed)
      pq__notify_commit(pq);
    if (fatal(rcs[i - 1])) {
      i--;
      break;
    }
  }
  if (i == n)
    return PQ_OK;
  rc = rcs[i];
  for (size_t k = i + 1; k < n; k++)
    rcs[k] = rc;
  return rc;
}
