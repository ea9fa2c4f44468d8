/*
 * ring.c - space in the data area, used as a ring (after INN's cyclic
 * buffers).  New regions are placed at the write head, which moves forward
 * and wraps at the end of the area; what lies in front of the head is the
 * oldest data, and is evicted to make room.  A product a reader holds, or a
 * reservation a live writer is filling, is left in place and the head jumps
 * over it.  Writes stay sequential, fragmentation stays bounded (the only
 * gaps are at the end of the area and before held products), and eviction
 * never rescans: it looks only at the regions in front of the head, found
 * through the address-ordered region list.  When slots run out before bytes
 * do, the oldest product by insertion time that nobody holds is evicted.
 * A writer never waits for a reader: after one lap of the ring without
 * room, it fails with PQ_LOCKED.
 */
#include "pq/internal.h"

#define SENT(pq) ((pq)->nslots)
#define RND8(x) (((x) + PQ_ALIGN - 1) / PQ_ALIGN * PQ_ALIGN)

uint64_t pq__rec_extent(size_t origin_len, size_t ident_len, uint64_t size) {
  return RND8(sizeof(struct pq_rec) + origin_len + ident_len) + RND8(size);
}

static void note_eviction(pq_t *pq, uint32_t slot) {
  struct pq_hdr *h = pq->hdr;
  pq_prod_info info;
  const uint8_t *data;
  h->hd_is_full = 1;
  h->hd_evicted++;
  if (pq__rec_decode(pq, slot, &info, &data) != PQ_OK)
    return;
  uint64_t now = pq__now_us();
  uint64_t created = pq_ts_to_us(info.arrival);
  uint64_t inserted = pq->slots[slot].ps_key;
  uint64_t since = created < inserted ? created : inserted;
  if (created > now || since > now)
    return;
  int64_t vrt = (int64_t)(now - since);
  if (h->hd_mvrt_us < 0 || vrt < h->hd_mvrt_us) {
    h->hd_mvrt_us = vrt;
    h->hd_mvrt_bytes = h->hd_nbytes - pq->slots[slot].ps_extent;
    h->hd_mvrt_slots = h->hd_nprods + h->hd_nresv - 1;
  }
}

void pq__slot_release(pq_t *pq, uint32_t slot, bool evicted) {
  struct pq_hdr *h = pq->hdr;
  struct pq_slot *s = &pq->slots[slot];
  uint32_t st = pq__slot_state(s);
  if (evicted && st == PQ_SLOT_COMMITTED)
    note_eviction(pq, slot);
  pq__sx_remove(pq, slot);
  if (h->hd_head_prev == slot)
    h->hd_head_prev = pq->rl[slot].rl_prev;
  pq__rl_remove(pq, slot);
  if (st == PQ_SLOT_COMMITTED) {
    (void)pq__ti_remove(pq, slot); /* a damaged index is rebuilt later */
    h->hd_nprods--;
  } else {
    h->hd_nresv--;
  }
  h->hd_nbytes -= s->ps_extent;
  pq__slot_publish(s, PQ_SLOT_FREE);
  pq__free_push(pq, slot);
}

int pq__reclaim_if_dead(pq_t *pq, uint32_t slot) {
  struct pq_slot *s = &pq->slots[slot];
  if (pq__slot_state(s) != PQ_SLOT_RESERVED)
    return 0;
  if (pq->has_resv && pq->resv_slot == slot)
    return 0;
  if (pq__writer_alive(pq, s->ps_owner, s->ps_owner_gen))
    return 0;
  pq__slot_release(pq, slot, false);
  return 1;
}

/* 1: the slot was released to make room; 0: it must stay; <0: error. */
static int try_evict(pq_t *pq, uint32_t slot) {
  struct pq_slot *s = &pq->slots[slot];
  uint32_t st = pq__slot_state(s);
  if (st == PQ_SLOT_RESERVED)
    return pq__reclaim_if_dead(pq, slot);
  if (st != PQ_SLOT_COMMITTED)
    return PQ_CORRUPT;
  int held = pq__prod_held(pq, s->ps_offset, s->ps_extent);
  if (held != 0)
    return held < 0 ? held : 0;
  pq__slot_release(pq, slot, true);
  return 1;
}

/* The region just before pos, found by walking the list (only after a
 * repair moved things under a stale hd_head_prev). */
static uint32_t region_before(pq_t *pq, uint64_t pos) {
  uint32_t prev = SENT(pq);
  for (uint32_t r = pq->rl[SENT(pq)].rl_next, n = 0;
       r < SENT(pq) && n < pq->nslots && pq->slots[r].ps_offset < pos;
       r = pq->rl[r].rl_next, n++)
    prev = r;
  return prev;
}

int pq__ring_alloc(pq_t *pq, uint64_t extent, uint64_t *off, uint32_t *prevp) {
  struct pq_hdr *h = pq->hdr;
  uint64_t pos = h->hd_head;
  if (pos > pq->data_size || pos % PQ_ALIGN != 0)
    pos = 0; /* damaged: any sound place will do */
  uint32_t prev = h->hd_head_prev;
  if (prev > SENT(pq) ||
      (prev < SENT(pq) &&
       (!pq__slot_used(&pq->slots[prev]) || pq__slot_end(pq, prev) > pos ||
        (pq->rl[prev].rl_next < SENT(pq) &&
         pq->slots[pq->rl[prev].rl_next].ps_offset < pos))) ||
      (prev == SENT(pq) && pq->rl[prev].rl_next < SENT(pq) &&
       pq->slots[pq->rl[prev].rl_next].ps_offset < pos))
    prev = region_before(pq, pos);
  if (prev < SENT(pq) && pq__slot_end(pq, prev) > pos)
    pos = pq__slot_end(pq, prev);

  /* At most two passes: from the head to the end of the area, then from
   * the start of the area to its end (what remains in front of the head on
   * the second pass is held, or it would have been evicted on the first). */
  bool wrapped = false;
  for (;;) {
    uint32_t next = pq->rl[prev].rl_next;
    if (next > SENT(pq))
      return PQ_CORRUPT;
    uint64_t limit =
        next == SENT(pq) ? pq->data_size : pq->slots[next].ps_offset;
    if (limit >= pos && limit - pos >= extent) {
      *off = pos;
      *prevp = prev;
      return PQ_OK;
    }
    if (next == SENT(pq)) {
      if (wrapped)
        return PQ_LOCKED;
      wrapped = true;
      pos = 0;
      prev = SENT(pq);
      continue;
    }
    int rc = try_evict(pq, next);
    if (rc < 0)
      return rc;
    if (rc == 0) { /* held: jump over it */
      if (pq__slot_end(pq, next) <= pos)
        return PQ_CORRUPT; /* the list is not in address order */
      pos = pq__slot_end(pq, next);
      prev = next;
    }
  }
}

int pq__ring_need_slot(pq_t *pq) {
  if (pq->hdr->hd_nfree_slots > 0 && pq->hdr->hd_free_top < pq->nslots)
    return PQ_OK;
  uint64_t n = 0;
  for (uint32_t s = pq__ti_first(pq); s != PQ_NIL && n <= pq->nslots;
       s = pq__ti_next(pq, s), n++) {
    int rc = try_evict(pq, s);
    if (rc != 0)
      return rc < 0 ? rc : PQ_OK;
  }
  for (uint32_t s = 0; s < pq->nslots; s++)
    if (pq__reclaim_if_dead(pq, s) == 1)
      return PQ_OK;
  return PQ_LOCKED;
}
