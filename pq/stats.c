/*
 * stats.c - what monitoring reads: everything `pqmon -S` prints, the
 * high-water marks, the minimum virtual residence time (how long the
 * shortest-lived evicted product stayed, which bounds duplicate rejection),
 * the live writer count, and how many products readers hold now.
 */
#include <stdlib.h>

#include "pq/internal.h"

int pq_stats_get(pq_t *pq, pq_stats *st) {
  int rc = pq__check_call(pq, st != NULL, "pq_stats_get: NULL argument");
  if (rc != PQ_OK)
    return rc;
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
  int rc =
      pq__check_call(pq, bytes != NULL, "pq_stats_largest_free: NULL argument");
  if (rc != PQ_OK)
    return rc;
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
  int rc = pq__check_write_call(pq, true, NULL);
  if (rc != PQ_OK)
    return rc;
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  pq->hdr->hd_mvrt_us = -1;
  pq->hdr->hd_mvrt_bytes = 0;
  pq->hdr->hd_mvrt_slots = 0;
  pq__ctl_unlock(pq);
  return PQ_OK;
}

/* Held products among the regions r[0..n) (in address order): one lock probe
 * over the span of all of them, then halves of a span that is held, so that
 * the probes number about 2 h log(n / h) for h held products. */
static int count_held(pq_t *pq, const uint32_t *r, uint32_t n,
                      uint64_t *count) {
  if (n == 0)
    return PQ_OK;
  uint64_t off = pq->slots[r[0]].ps_offset;
  int held = pq__prod_held(pq, off, pq__slot_end(pq, r[n - 1]) - off);
  if (held <= 0)
    return held;
  if (n == 1) {
    *count += pq__slot_state(&pq->slots[r[0]]) == PQ_SLOT_COMMITTED;
    return PQ_OK;
  }
  int rc = count_held(pq, r, n / 2, count);
  return rc != PQ_OK ? rc : count_held(pq, r + n / 2, n - n / 2, count);
}

int pq_stats_held(pq_t *pq, uint64_t *nheld) {
  int rc = pq__check_call(pq, nheld != NULL, "pq_stats_held: NULL argument");
  if (rc != PQ_OK)
    return rc;
  uint32_t *r = malloc((size_t)pq->nslots * sizeof *r);
  if (r == NULL)
    return PQ__FAIL(pq, PQ_NOMEM, 0, "counting held products of %s", pq->path);
  rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK) {
    free(r);
    return rc;
  }
  /* Readers lock products only under the control lock, so the regions stay
   * put meanwhile; which of them are held is a snapshot. */
  uint32_t n = 0;
  for (uint32_t s = pq->rl[pq->nslots].rl_next;
       s < pq->nslots && n < pq->nslots; s = pq->rl[s].rl_next)
    if (pq__slot_used(&pq->slots[s]) && pq->slots[s].ps_extent > 0 &&
        pq__slot_end(pq, s) <= pq->data_size &&
        (n == 0 || pq->slots[s].ps_offset >= pq__slot_end(pq, r[n - 1])))
      r[n++] = s;
  uint64_t count = 0;
  rc = count_held(pq, r, n, &count);
  pq__ctl_unlock(pq);
  free(r);
  if (rc == PQ_OK)
    *nheld = count;
  return rc;
}
