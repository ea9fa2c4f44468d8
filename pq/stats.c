/*
 * stats.c - what monitoring reads: everything `pqmon -S` prints, the
 * high-water marks, the minimum virtual residence time (how long the
 * shortest-lived evicted product stayed, which bounds duplicate rejection),
 * and the live writer count.
 */
#include "pq/internal.h"

int pq_stats_get(pq_t *pq, pq_stats *st) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if (st == NULL)
    return PQ__FAIL(pq, PQ_INVAL, 0, "pq_stats_get: NULL argument");
  rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  const struct pq_hdr *h = pq->hdr;
  *st = (pq_stats){0};
  st->ps_data_size = pq->data_size;
  st->ps_slots = pq->nslots;
  st->ps_nprods = h->hd_nprods;
  st->ps_nreserved = h->hd_nresv;
  st->ps_nbytes = h->hd_nbytes;
  st->ps_nempty = h->hd_nfree_slots;
  st->ps_maxprods = h->hd_maxprods;
  st->ps_maxbytes = h->hd_maxbytes;
  st->ps_highwater = h->hd_highwater;
  st->ps_minempty = h->hd_minempty;
  st->ps_nfree = h->hd_nfree_regions;
  st->ps_maxnfree = h->hd_maxfree_regions;
  st->ps_is_full = h->hd_is_full != 0;
  st->ps_mvrt_us = h->hd_mvrt_us;
  st->ps_mvrt_bytes = h->hd_mvrt_us < 0 ? 0 : h->hd_mvrt_bytes;
  st->ps_mvrt_slots = h->hd_mvrt_us < 0 ? 0 : h->hd_mvrt_slots;
  st->ps_evicted = h->hd_evicted;
  st->ps_last_key = h->hd_last_key;
  st->ps_repairs = h->hd_repairs;

  uint64_t now = pq__now_us();
  uint32_t first = pq__ti_first(pq), last = pq__ti_last(pq);
  st->ps_age_oldest = st->ps_age_youngest = -1;
  if (first != PQ_NIL && last != PQ_NIL) {
    uint64_t a = pq->slots[first].ps_key, b = pq->slots[last].ps_key;
    st->ps_age_oldest = now > a ? (double)(now - a) / 1e6 : 0;
    st->ps_age_youngest = now > b ? (double)(now - b) / 1e6 : 0;
  }
  pq__ctl_unlock(pq);
  return pq_writer_count(pq, &st->ps_writers);
}

int pq_stats_largest_free(pq_t *pq, uint64_t *bytes) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if (bytes == NULL)
    return PQ__FAIL(pq, PQ_INVAL, 0, "pq_stats_largest_free: NULL argument");
  rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  /* The gaps between used regions in address order, and after the last. */
  uint64_t pos = 0, n = 0, best = 0;
  for (uint32_t r = pq->rl[pq->nslots].rl_next;
       r < pq->nslots && n <= pq->nslots; r = pq->rl[r].rl_next, n++) {
    uint64_t off = pq->slots[r].ps_offset;
    if (off > pos && off - pos > best)
      best = off - pos;
    pos = pq__slot_end(pq, r);
  }
  if (pos < pq->data_size && pq->data_size - pos > best)
    best = pq->data_size - pos;
  pq__ctl_unlock(pq);
  *bytes = best;
  return PQ_OK;
}

int pq_stats_clear_mvrt(pq_t *pq) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if (pq->readonly)
    return PQ__FAIL(pq, PQ_NOWRITE, 0, "%s is open read-only", pq->path);
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  pq->hdr->hd_mvrt_us = -1;
  pq->hdr->hd_mvrt_bytes = 0;
  pq->hdr->hd_mvrt_slots = 0;
  pq__ctl_unlock(pq);
  return PQ_OK;
}
