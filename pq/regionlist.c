/*
 * regionlist.c - the regions of the data area in address order, and the
 * stack of free slots.  The region list is a circular doubly-linked list of
 * the used (reserved or committed) slots sorted by offset, with node nslots
 * as its sentinel; the ring allocator walks it forward from the write head
 * to find what lies in front of it, and inserts and removes in O(1).  A free
 * slot is not in the region list, so its next link serves the free stack.
 */
#include "pq/internal.h"

#define SENT(pq) ((pq)->nslots)

/* Is there free space between region a and region b (the sentinel standing
 * for the start of the data area as a, for its end as b)?  1 or 0. */
static int64_t gap(const pq_t *pq, uint32_t a, uint32_t b) {
  uint64_t end = a == SENT(pq) ? 0 : pq__slot_end(pq, a);
  uint64_t start = b == SENT(pq) ? pq->data_size : pq->slots[b].ps_offset;
  return end < start ? 1 : 0;
}

/* The free-region count moves by delta; LDM's maxfree is its high-water. */
static void count_free(pq_t *pq, int64_t delta) {
  struct pq_hdr *h = pq->hdr;
  h->hd_nfree_regions += (uint64_t)delta;
  if (h->hd_nfree_regions > h->hd_maxfree_regions)
    h->hd_maxfree_regions = h->hd_nfree_regions;
}

void pq__rl_clear(pq_t *pq) {
  pq->rl[SENT(pq)].rl_prev = SENT(pq);
  pq->rl[SENT(pq)].rl_next = SENT(pq);
  pq->hdr->hd_nfree_regions = 1;
}

void pq__rl_insert_after(pq_t *pq, uint32_t prev, uint32_t slot) {
  uint32_t next = pq->rl[prev].rl_next;
  count_free(pq,
             gap(pq, prev, slot) + gap(pq, slot, next) - gap(pq, prev, next));
  pq->rl[slot].rl_prev = prev;
  pq->rl[slot].rl_next = next;
  pq->rl[next].rl_prev = slot;
  pq->rl[prev].rl_next = slot;
}

void pq__rl_remove(pq_t *pq, uint32_t slot) {
  uint32_t p = pq->rl[slot].rl_prev, n = pq->rl[slot].rl_next;
  if (p > SENT(pq) || n > SENT(pq))
    return; /* damaged links: the caller's repair will rebuild */
  count_free(pq, gap(pq, p, n) - gap(pq, p, slot) - gap(pq, slot, n));
  pq->rl[p].rl_next = n;
  pq->rl[n].rl_prev = p;
}

void pq__rl_build(pq_t *pq, const uint32_t *sorted, uint32_t n) {
  /* Built from the left, the count can pass its final value by one on the
   * way (the last region may close the gap at the end): keep the mark. */
  uint64_t mark = pq->hdr->hd_maxfree_regions;
  pq__rl_clear(pq);
  for (uint32_t i = 0; i < n; i++)
    pq__rl_insert_after(pq, pq->rl[SENT(pq)].rl_prev, sorted[i]);
  pq->hdr->hd_maxfree_regions =
      mark > pq->hdr->hd_nfree_regions ? mark : pq->hdr->hd_nfree_regions;
}

uint32_t pq__free_pop(pq_t *pq) {
  uint32_t s = pq->hdr->hd_free_top;
  if (s >= pq->nslots)
    return PQ_NIL;
  pq->hdr->hd_free_top = pq->rl[s].rl_next;
  pq->hdr->hd_nfree_slots--;
  return s;
}

void pq__free_push(pq_t *pq, uint32_t slot) {
  pq->rl[slot].rl_next = pq->hdr->hd_free_top;
  pq->rl[slot].rl_prev = PQ_NIL;
  pq->hdr->hd_free_top = slot;
  pq->hdr->hd_nfree_slots++;
}
