/*
 * delete.c - taking products out before eviction would: one product by
 * signature, or every product older than a creation time (pqexpire).  A
 * product a reader holds is never deleted.  Expiry works in batches and
 * gives the control lock up between them, so that a large expiry does not
 * stall writers and readers.
 */
#include "pq/internal.h"

#define EXPIRE_BATCH 256

int pq_delete(pq_t *pq, const uint8_t sig[PQ_SIGLEN]) {
  int rc = pq__check_write_call(pq, sig != NULL, "pq_delete: NULL signature");
  if (rc != PQ_OK)
    return rc;
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  uint32_t s = pq__sx_find(pq, sig);
  if (s == PQ_NIL || pq__slot_state(&pq->slots[s]) != PQ_SLOT_COMMITTED) {
    rc = PQ_NOTFOUND;
  } else {
    int held =
        pq__prod_held(pq, pq->slots[s].ps_offset, pq->slots[s].ps_extent);
    if (held < 0) {
      rc = held;
    } else if (held) {
      rc = PQ_LOCKED;
    } else {
      pq__mutate_begin(pq, PQ_OP_FREE, s);
      pq__slot_release(pq, s, false);
      pq__mutate_end(pq);
    }
  }
  pq__ctl_unlock(pq);
  return rc;
}

int pq_expire(pq_t *pq, pq_timestamp before, const pq_class *cls,
              uint64_t *ndeleted, uint64_t *nbytes, uint64_t *nheld) {
  int rc = pq__check_write_call(pq, true, NULL);
  if (rc != PQ_OK)
    return rc;
  uint64_t deleted = 0, bytes = 0, held = 0, after = 0;
  bool more = true;
  while (more && rc == PQ_OK) {
    rc = pq__ctl_lock(pq, true);
    if (rc != PQ_OK)
      break;
    pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
    uint32_t s = pq__ti_after(pq, after);
    for (unsigned n = 0; n < EXPIRE_BATCH && s != PQ_NIL; n++) {
      uint32_t next = pq__ti_next(pq, s);
      struct pq_slot *slot = &pq->slots[s];
      after = slot->ps_key;
      pq_prod_info info;
      const uint8_t *data;
      if (pq__rec_decode(pq, s, &info, &data) != PQ_OK) {
        rc = PQ__FAIL(pq, PQ_CORRUPT, 0, "%s: bad record in slot %u", pq->path,
                      s);
        break;
      }
      if (pq_ts_cmp(info.arrival, before) < 0 &&
          (cls == NULL || pq_class_match(cls, &info))) {
        int h = pq__prod_held(pq, slot->ps_offset, slot->ps_extent);
        if (h < 0) {
          rc = h;
          break;
        }
        if (h) {
          held++;
        } else {
          deleted++;
          bytes += slot->ps_extent;
          pq__slot_release(pq, s, false);
        }
      }
      s = next;
    }
    more = s != PQ_NIL;
    pq__mutate_end(pq);
    pq__ctl_unlock(pq);
  }
  if (ndeleted)
    *ndeleted = deleted;
  if (nbytes)
    *nbytes = bytes;
  if (nheld)
    *nheld = held;
  return rc;
}
