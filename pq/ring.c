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
 * room, it fails with PQ_LOCKED.  It looks before it evicts (a walk that
 * changes nothing, then the walk that evicts), so an insert that fails for
 * lack of room or of a slot has evicted nothing for it: it costs a lap of
 * lock probes instead.
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
  if (h->hd_head_prev == slot) { /* the head follows the region before */
    h->hd_head_prev = pq->rl[slot].rl_prev;
    h->hd_head = pq__head_anchor(pq, h->hd_head_prev);
  }
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

/* A reservation whose writer is dead (never this handle's own)? */
static bool dead_reservation(pq_t *pq, uint32_t slot) {
  const struct pq_slot *s = &pq->slots[slot];
  return pq__slot_state(s) == PQ_SLOT_RESERVED &&
         !(pq->has_resv && pq->resv_slot == slot) &&
         !pq__writer_alive(pq, s->ps_owner, s->ps_owner_gen);
}

int pq__reclaim_if_dead(pq_t *pq, uint32_t slot) {
  if (!dead_reservation(pq, slot))
    return 0;
  pq__slot_release(pq, slot, false);
  return 1;
}

/*
 * The regions the look-ahead walk of pq__ring_make_room() found free to
 * go, so that the evictions that follow need not ask the kernel again.
 * What could go still can: this handle holds the control lock exclusively,
 * and a reader takes a product lock only under the control lock.  A region
 * not in the plan (it was held, or the plan was full) is asked about
 * again.
 */
#define PLAN_MAX 32
struct plan {
  unsigned n;
  uint32_t slot[PLAN_MAX];
};

static bool in_plan(const struct plan *p, uint32_t slot) {
  for (unsigned i = 0; i < p->n; i++)
    if (p->slot[i] == slot)
      return true;
  return false;
}

/* 1: the region may go (a product no reader holds, a reservation of a dead
 * writer), 0: it must stay, <0: error.  Changes nothing; notes a region
 * that may go in the plan. */
static int may_go(pq_t *pq, uint32_t slot, struct plan *p) {
  if (in_plan(p, slot))
    return 1;
  const struct pq_slot *s = &pq->slots[slot];
  uint32_t st = pq__slot_state(s);
  int go;
  if (st == PQ_SLOT_RESERVED) {
    go = dead_reservation(pq, slot);
  } else if (st == PQ_SLOT_COMMITTED) {
    int held = pq__prod_held(pq, s->ps_offset, s->ps_extent);
    if (held < 0)
      return held;
    go = !held;
  } else {
    return PQ_CORRUPT;
  }
  if (go && p->n < PLAN_MAX)
    p->slot[p->n++] = slot;
  return go;
}

/* Release a region that may go: evict a product, reclaim a reservation. */
static void let_go(pq_t *pq, uint32_t slot) {
  pq__slot_release(pq, slot,
                   pq__slot_state(&pq->slots[slot]) == PQ_SLOT_COMMITTED);
}

uint64_t pq__head_anchor(const pq_t *pq, uint32_t prev) {
  return prev < SENT(pq) ? pq__slot_end(pq, prev) : 0;
}

/* Where the next region may start: the end of hd_head_prev (invariant 14),
 * whose neighbours the caller's pq__roots_vet() has checked. */
static void walk_start(pq_t *pq, uint64_t *posp, uint32_t *prevp) {
  *prevp = pq->hdr->hd_head_prev;
  *posp = pq__head_anchor(pq, *prevp);
}

/*
 * Walk the ring from the head for extent bytes: the regions in front of
 * the head that may go are passed (evict: released), those that must stay
 * are jumped over.  At most two passes: from the head to the end of the
 * area, then from the start of the area to its end.  Without evict the
 * walk changes nothing and says whether, and where, the evicting walk
 * would find room; an evicting walk after it finds room at the same place
 * or before (what could go still can), releasing only what lies before
 * that place.
 */
static int walk(pq_t *pq, uint64_t extent, bool evict, struct plan *plan,
                uint64_t *off, uint32_t *prevp) {
  uint64_t pos;
  uint32_t prev;
  walk_start(pq, &pos, &prev);
  bool wrapped = false;
  uint32_t next = pq->rl[prev].rl_next;
  /* Each pass visits every region at most once, plus the wrap. */
  for (uint64_t steps = 0; steps <= 2 * (uint64_t)pq->nslots + 2; steps++) {
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
      next = pq->rl[prev].rl_next;
      continue;
    }
    int go = may_go(pq, next, plan);
    if (go < 0)
      return go;
    uint32_t after = pq->rl[next].rl_next; /* release reuses the link */
    if (go) {
      if (evict)
        let_go(pq, next);
    } else {
      if (pq__slot_end(pq, next) <= pos)
        return PQ_CORRUPT; /* the list is not in address order */
      pos = pq__slot_end(pq, next);
      prev = next;
    }
    next = after;
  }
  return PQ_CORRUPT; /* a cycle in the list */
}

/* Make sure a slot is free, evicting the oldest product that may go (or
 * reclaiming a dead writer's reservation) if not.  Fails having released
 * nothing. */
static int need_slot(pq_t *pq, struct plan *plan) {
  if (pq->hdr->hd_nfree_slots > 0 && pq->hdr->hd_free_top < pq->nslots)
    return PQ_OK;
  uint64_t n = 0;
  for (uint32_t s = pq__ti_first(pq); s != PQ_NIL && n <= pq->nslots;
       s = pq__ti_next(pq, s), n++) {
    int go = may_go(pq, s, plan);
    if (go < 0)
      return go;
    if (go) {
      let_go(pq, s);
      return PQ_OK;
    }
  }
  for (uint32_t s = 0; s < pq->nslots; s++)
    if (pq__reclaim_if_dead(pq, s) == 1)
      return PQ_OK;
  return PQ_LOCKED;
}

int pq__ring_make_room(pq_t *pq, uint64_t extent, uint64_t *off,
                       uint32_t *prev) {
  /* Look first: an insert that fails for lack of room or of a slot must
   * not have evicted anything for it. */
  struct plan plan = {.n = 0};
  int rc = walk(pq, extent, false, &plan, off, prev);
  if (rc == PQ_OK)
    rc = need_slot(pq, &plan);
  if (rc == PQ_OK)
    rc = walk(pq, extent, true, &plan, off, prev);
  return rc;
}
