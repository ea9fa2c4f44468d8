/*
 * roots.c - the header's mutable roots, vetted before a change acts on
 * them.  The header checksum covers only the immutable geometry; the
 * fields an insert steers by (the write head and the region before it, the
 * top of the free-slot stack and the slot counters, the last insertion time
 * and the time-index tails) are plain words that one stray write can
 * change.  Acting on a bad one evicts products that had room, hands out a
 * slot in use, or fails after evicting (issue 21, item 4).  So an insert
 * checks each against the records it can see in O(levels) before it
 * evicts anything, and on a mismatch refuses with PQ_CORRUPT, naming the
 * field, and leaves the queue marked dirty: the next locker rebuilds the
 * roots from the slots (pq/repair.c), dropping nothing for it.  See
 * docs/queue-format.md §11 and §16.
 */
#include <stdio.h>

#include "pq/internal.h"

#define SENT(pq) ((pq)->nslots)

int pq__head_vet(const pq_t *pq, char *why, size_t len) {
  const struct pq_hdr *h = pq->hdr;
  uint32_t prev = h->hd_head_prev;
  if (prev > SENT(pq) ||
      (prev < SENT(pq) && !pq__slot_used(&pq->slots[prev]))) {
    snprintf(why, len, "region before the write head (slot %u) not in use",
             prev);
    return PQ_CORRUPT;
  }
  uint32_t next = pq->rl[prev].rl_next;
  if (next > SENT(pq) ||
      (next < SENT(pq) && !pq__slot_used(&pq->slots[next]))) {
    snprintf(why, len, "region list damaged after slot %u", prev);
    return PQ_CORRUPT;
  }
  uint64_t lo = pq__head_anchor(pq, prev);
  uint64_t hi = next < SENT(pq) ? pq->slots[next].ps_offset : pq->data_size;
  if (h->hd_head % PQ_ALIGN != 0 || h->hd_head < lo || h->hd_head > hi) {
    snprintf(why, len,
             "write head %llu is not in the free space after its region "
             "(slot %u: %llu to %llu)",
             (unsigned long long)h->hd_head, prev, (unsigned long long)lo,
             (unsigned long long)hi);
    return PQ_CORRUPT;
  }
  return PQ_OK;
}

/* The free-slot stack's top and the slot counters. */
static int free_vet(const pq_t *pq, char *why, size_t len) {
  const struct pq_hdr *h = pq->hdr;
  uint32_t top = h->hd_free_top;
  if (top != PQ_NIL &&
      (top >= SENT(pq) || pq__slot_state(&pq->slots[top]) != PQ_SLOT_FREE)) {
    snprintf(why, len, "top of the free-slot stack (slot %u) is not free", top);
    return PQ_CORRUPT;
  }
  if ((top == PQ_NIL) != (h->hd_nfree_slots == 0) ||
      h->hd_nfree_slots > SENT(pq) || h->hd_nprods > SENT(pq) ||
      h->hd_nresv > SENT(pq) ||
      h->hd_nfree_slots + h->hd_nprods + h->hd_nresv != SENT(pq)) {
    snprintf(why, len,
             "slot counters (%llu free, %llu products, %llu reservations) do "
             "not add up to %u slots",
             (unsigned long long)h->hd_nfree_slots,
             (unsigned long long)h->hd_nprods, (unsigned long long)h->hd_nresv,
             SENT(pq));
    return PQ_CORRUPT;
  }
  return PQ_OK;
}

/* The time-index tails and the last insertion time. */
static int time_vet(pq_t *pq, char *why, size_t len) {
  const struct pq_hdr *h = pq->hdr;
  for (unsigned l = 0; l < pq->levels; l++) {
    uint32_t t = h->hd_tails[l];
    if (t > SENT(pq) ||
        (t < SENT(pq) && (pq__slot_state(&pq->slots[t]) != PQ_SLOT_COMMITTED ||
                          *pq__ti_next_ptr(pq, t, l) != PQ_NIL))) {
      snprintf(why, len, "time index level %u: tail %u is not its last node", l,
               t);
      return PQ_CORRUPT;
    }
  }
  uint32_t newest = h->hd_tails[0];
  uint64_t key = newest < SENT(pq) ? pq->slots[newest].ps_key : 0;
  /* At PQ_KEY_MAX no later time is left: the commit would fail after
   * the eviction. */
  if (h->hd_last_key >= PQ_KEY_MAX || h->hd_last_key < key) {
    snprintf(why, len,
             "last insertion time %llu leaves no later one, or is older than "
             "the newest product's (%llu)",
             (unsigned long long)h->hd_last_key, (unsigned long long)key);
    return PQ_CORRUPT;
  }
  return PQ_OK;
}

int pq__roots_vet(pq_t *pq) {
  char why[200];
  if (pq__head_vet(pq, why, sizeof why) == PQ_OK &&
      free_vet(pq, why, sizeof why) == PQ_OK &&
      time_vet(pq, why, sizeof why) == PQ_OK)
    return PQ_OK;
  return PQ__FAIL(pq, PQ_CORRUPT, 0,
                  "%s: header damaged: %s; nothing evicted, the queue is "
                  "rebuilt from its slots at the next lock",
                  pq->path, why);
}
