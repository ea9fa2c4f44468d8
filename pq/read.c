/*
 * read.c - getting products out: decoding a product's record, the per-handle
 * cursor, stepping through the queue in insertion order (forward or
 * backward, filtered by a product class), and finding a product by its
 * signature.  A product is handed to the caller's callback in place, in the
 * shared mapping, while a shared lock on its region keeps writers from
 * evicting it; the control lock is dropped before the callback runs.
 */
#include <string.h>

#include "pq/internal.h"

#define RND8(x) (((x) + PQ_ALIGN - 1) / PQ_ALIGN * PQ_ALIGN)
#define SKIP_BATCH 256 /* products examined per pq_next() under one lock */

int pq__rec_decode(const pq_t *pq, uint32_t slot, pq_prod_info *info,
                   const uint8_t **data) {
  const struct pq_slot *s = &pq->slots[slot];
  uint64_t off = s->ps_offset, extent = s->ps_extent;
  if (off > pq->data_size || extent > pq->data_size - off ||
      extent < sizeof(struct pq_rec))
    return PQ_CORRUPT;
  const uint8_t *p = pq->data + off;
  struct pq_rec rec;
  memcpy(&rec, p, sizeof rec);
  if (rec.rc_magic != PQ_REC_MAGIC || rec.rc_origin_len > PQ_ORIGIN_MAX ||
      rec.rc_ident_len > PQ_IDENT_MAX || rec.rc_arrival_usec < 0 ||
      rec.rc_arrival_usec > 999999)
    return PQ_CORRUPT;
  uint64_t hdr = RND8(sizeof rec + rec.rc_origin_len + rec.rc_ident_len);
  if (hdr > extent || rec.rc_size > extent - hdr)
    return PQ_CORRUPT;
  const char *origin = (const char *)p + sizeof rec;
  const char *ident = origin + rec.rc_origin_len;
  if (memchr(origin, '\0', rec.rc_origin_len) ||
      memchr(ident, '\0', rec.rc_ident_len))
    return PQ_CORRUPT;
  info->arrival.sec = rec.rc_arrival_sec;
  info->arrival.usec = rec.rc_arrival_usec;
  memcpy(info->signature, rec.rc_sig, PQ_SIGLEN);
  memcpy(info->origin, origin, rec.rc_origin_len);
  info->origin[rec.rc_origin_len] = '\0';
  info->feedtype = rec.rc_feedtype;
  info->seqno = rec.rc_seqno;
  memcpy(info->ident, ident, rec.rc_ident_len);
  info->ident[rec.rc_ident_len] = '\0';
  info->size = rec.rc_size;
  *data = p + hdr;
  return PQ_OK;
}

void pq_cursor_oldest(pq_t *pq) {
  pq->cursor = 0;
  pq->cursor_slot = PQ_NIL;
}

void pq_cursor_set(pq_t *pq, uint64_t inserted_us) {
  pq->cursor = inserted_us;
  pq->cursor_slot = PQ_NIL;
}

uint64_t pq_cursor_get(const pq_t *pq) {
  return pq->cursor;
}

int pq_cursor_newest(pq_t *pq) {
  int rc = pq__check_owner(pq);
  if (rc == PQ_OK)
    rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  pq->cursor = pq->hdr->hd_last_key;
  pq->cursor_slot = PQ_NIL;
  pq->seen_seq = __atomic_load_n(&pq->hdr->hd_commit_seq, __ATOMIC_SEQ_CST);
  pq__ctl_unlock(pq);
  return PQ_OK;
}

/* The committed slot with that signature, or PQ_NIL.  Shared lock held. */
static uint32_t find_committed(pq_t *pq, const uint8_t sig[PQ_SIGLEN]) {
  uint32_t s = pq__sx_find(pq, sig);
  if (s == PQ_NIL || pq__slot_state(&pq->slots[s]) != PQ_SLOT_COMMITTED)
    return PQ_NIL;
  return s;
}

int pq_cursor_after_signature(pq_t *pq, const uint8_t sig[PQ_SIGLEN]) {
  int rc = pq__check_owner(pq);
  if (rc == PQ_OK)
    rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  uint32_t s = find_committed(pq, sig);
  if (s != PQ_NIL) {
    pq->cursor = pq->slots[s].ps_key;
    pq->cursor_slot = s;
  }
  pq__ctl_unlock(pq);
  return s == PQ_NIL ? PQ_NOTFOUND : PQ_OK;
}

/* Lock the product, drop the control lock, run the callback, unlock. */
static int deliver(pq_t *pq, uint32_t s, const pq_prod_info *info,
                   const uint8_t *data, pq_read_fn *fn, void *arg) {
  const struct pq_slot *slot = &pq->slots[s];
  pq_place place = {.pp_inserted = slot->ps_key,
                    .pp_offset = pq->data_off + slot->ps_offset,
                    .pp_oldest = pq__ti_first(pq) == s};
  int rc = pq__prod_lock(pq, slot->ps_offset, slot->ps_extent);
  pq__ctl_unlock(pq);
  if (rc != PQ_OK)
    return rc;
  rc = fn(info, data, &place, arg);
  pq__prod_unlock(pq);
  return rc;
}

static uint32_t class_feedtypes(const pq_class *cls) {
  uint32_t ft = 0;
  for (unsigned i = 0; i < cls->nspecs; i++)
    ft |= cls->specs[i].feedtype;
  return ft;
}

int pq_next(pq_t *pq, int direction, const pq_class *cls, pq_read_fn *fn,
            void *arg) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if ((direction != PQ_FORWARD && direction != PQ_BACKWARD) || fn == NULL)
    return PQ__FAIL(pq, PQ_INVAL, 0, "pq_next: bad direction or callback");
  if (pq->holding)
    return PQ__FAIL(pq, PQ_INVAL, 0,
                    "pq_next inside a read callback of the "
                    "same handle");
  rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  uint32_t seq = __atomic_load_n(&pq->hdr->hd_commit_seq, __ATOMIC_SEQ_CST);
  uint32_t s;
  uint32_t cs = pq->cursor_slot;
  bool cached = cs < pq->nslots &&
                pq__slot_state(&pq->slots[cs]) == PQ_SLOT_COMMITTED &&
                pq->slots[cs].ps_key == pq->cursor;
  if (direction == PQ_FORWARD)
    s = cached ? pq__ti_next(pq, cs) : pq__ti_after(pq, pq->cursor);
  else
    s = cached ? pq__ti_prev(pq, cs) : pq__ti_before(pq, pq->cursor);
  /* A class can only match products that share a feedtype bit with it: the
   * slot's copy of the feedtype skips the others without reading them. */
  uint32_t want = cls ? class_feedtypes(cls) : PQ_FT_ANY;

  for (unsigned n = 0; s != PQ_NIL; n++) {
    if (n == SKIP_BATCH) {
      pq__ctl_unlock(pq);
      return PQ_OK; /* the caller calls again; the lock was held long enough */
    }
    const struct pq_slot *slot = &pq->slots[s];
    uint64_t key = slot->ps_key;
    if (cls == NULL || (slot->ps_feedtype & want) != 0) {
      pq_prod_info info;
      const uint8_t *data;
      if (pq__rec_decode(pq, s, &info, &data) != PQ_OK) {
        pq__ctl_unlock(pq);
        return PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: bad record in slot %u",
                        pq->path, s);
      }
      if (cls == NULL || pq_class_match(cls, &info)) {
        pq->cursor = key;
        pq->cursor_slot = s;
        rc = deliver(pq, s, &info, data, fn, arg);
        if (rc != PQ_OK) { /* offer it again next time */
          pq->cursor = direction == PQ_FORWARD ? key - 1 : key + 1;
          pq->cursor_slot = PQ_NIL;
        }
        return rc;
      }
    }
    pq->cursor = key;
    pq->cursor_slot = s;
    s = direction == PQ_FORWARD ? pq__ti_next(pq, s) : pq__ti_prev(pq, s);
  }
  pq->seen_seq = seq;
  pq__ctl_unlock(pq);
  return PQ_END;
}

int pq_find(pq_t *pq, const uint8_t sig[PQ_SIGLEN], pq_read_fn *fn, void *arg) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if (sig == NULL || fn == NULL)
    return PQ__FAIL(pq, PQ_INVAL, 0, "pq_find: NULL argument");
  if (pq->holding)
    return PQ__FAIL(pq, PQ_INVAL, 0,
                    "pq_find inside a read callback of the "
                    "same handle");
  rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  uint32_t s = find_committed(pq, sig);
  if (s == PQ_NIL) {
    pq__ctl_unlock(pq);
    return PQ_NOTFOUND;
  }
  pq_prod_info info;
  const uint8_t *data;
  if (pq__rec_decode(pq, s, &info, &data) != PQ_OK) {
    pq__ctl_unlock(pq);
    return PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: bad record in slot %u", pq->path,
                    s);
  }
  return deliver(pq, s, &info, data, fn, arg);
}
