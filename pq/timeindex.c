/*
 * timeindex.c - the time index: a skip list of committed products ordered by
 * insertion time, stored in the file as slot numbers.  Node i belongs to
 * slot i; node nslots is the head.  Each node has `levels` forward links and
 * one back link at level 0 (for reading backwards).
 *
 * Insertion times only grow, so a commit appends at the tail: the header
 * keeps the last node of every level (hd_tails) and an append costs
 * O(height), with no search.  A node's height is a hash of its key (p = 1/4),
 * so a rebuild from the slots reproduces the same list.  Removal (eviction,
 * deletion) searches for the predecessors: O(log n), O(1) at the oldest end.
 * Every walk checks that keys strictly increase and links stay in range, so a
 * damaged index ends a walk with PQ_NIL instead of looping.
 *
 * Readers walk with the checked functions at the end of the file: every node
 * they follow must be a committed slot whose checksum holds, with a greater
 * key and, at level 0, a back link to where the walk came from, and a level
 * may end only at its tail.  A damaged index then makes a read fail with
 * PQ_CORRUPT instead of ending early as if the queue held fewer products.
 */
#include "pq/internal.h"

#define HEAD(pq) ((pq)->nslots)

uint32_t *pq__ti_next_ptr(pq_t *pq, uint32_t node, unsigned level) {
  return (uint32_t *)(pq->nodes + (uint64_t)node * pq->node_stride) + level;
}

uint32_t *pq__ti_prev_ptr(pq_t *pq, uint32_t node) {
  return (uint32_t *)(pq->nodes + (uint64_t)node * pq->node_stride) +
         pq->levels;
}

unsigned pq__ti_level(uint64_t key, unsigned maxlevels) {
  uint64_t h = key * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  unsigned lv = 1 + (unsigned)__builtin_ctzll(h | (1ULL << 62)) / 2;
  return lv < maxlevels ? lv : maxlevels;
}

static uint64_t key_of(pq_t *pq, uint32_t node) {
  return node == HEAD(pq) ? 0 : pq->slots[node].ps_key;
}

/* Next node at level l, or PQ_NIL; PQ_NIL too if the link is damaged. */
static uint32_t next_at(pq_t *pq, uint32_t node, unsigned l) {
  uint32_t n = *pq__ti_next_ptr(pq, node, l);
  if (n == PQ_NIL || n >= pq->nslots || key_of(pq, n) <= key_of(pq, node))
    return PQ_NIL;
  return n;
}

void pq__ti_clear(pq_t *pq) {
  for (unsigned l = 0; l < pq->levels; l++) {
    *pq__ti_next_ptr(pq, HEAD(pq), l) = PQ_NIL;
    pq->hdr->hd_tails[l] = HEAD(pq);
  }
  *pq__ti_prev_ptr(pq, HEAD(pq)) = PQ_NIL;
}

/* The last node (the head if none) whose key is below k; with update, the
 * last such node at each level too, where a node of key k is linked in or
 * out. */
static uint32_t last_before(pq_t *pq, uint64_t k, uint32_t *update) {
  uint32_t x = HEAD(pq);
  for (unsigned l = pq->levels; l-- > 0;) {
    for (uint32_t n; (n = next_at(pq, x, l)) != PQ_NIL && key_of(pq, n) < k;)
      x = n;
    if (update != NULL)
      update[l] = x;
  }
  return x;
}

int pq__ti_append(pq_t *pq, uint32_t slot) {
  unsigned lv = pq__ti_level(pq->slots[slot].ps_key, pq->levels);
  uint32_t *tails = pq->hdr->hd_tails;
  for (unsigned l = 0; l < pq->levels; l++)
    *pq__ti_next_ptr(pq, slot, l) = PQ_NIL;
  *pq__ti_prev_ptr(pq, slot) = tails[0];
  for (unsigned l = 0; l < lv; l++) {
    uint32_t t = tails[l];
    if (t > HEAD(pq))
      return PQ_CORRUPT;
    *pq__ti_next_ptr(pq, t, l) = slot;
    tails[l] = slot;
  }
  return PQ_OK;
}

int pq__ti_insert(pq_t *pq, uint32_t slot) {
  uint64_t k = pq->slots[slot].ps_key;
  uint32_t tail = pq->hdr->hd_tails[0];
  if (tail == HEAD(pq) || (tail < pq->nslots && key_of(pq, tail) < k))
    return pq__ti_append(pq, slot);
  unsigned lv = pq__ti_level(k, pq->levels);
  uint32_t update[PQ_MAX_LEVELS] = {0};
  (void)last_before(pq, k, update);
  uint32_t after = next_at(pq, update[0], 0);
  if (after != PQ_NIL && key_of(pq, after) == k)
    return PQ_DUP;
  for (unsigned l = 0; l < pq->levels; l++)
    *pq__ti_next_ptr(pq, slot, l) = PQ_NIL;
  for (unsigned l = 0; l < lv; l++) {
    *pq__ti_next_ptr(pq, slot, l) = *pq__ti_next_ptr(pq, update[l], l);
    *pq__ti_next_ptr(pq, update[l], l) = slot;
    if (pq->hdr->hd_tails[l] == update[l] &&
        *pq__ti_next_ptr(pq, slot, l) == PQ_NIL)
      pq->hdr->hd_tails[l] = slot;
  }
  *pq__ti_prev_ptr(pq, slot) = update[0];
  if (after != PQ_NIL)
    *pq__ti_prev_ptr(pq, after) = slot;
  return PQ_OK;
}

int pq__ti_remove(pq_t *pq, uint32_t slot) {
  uint64_t k = pq->slots[slot].ps_key;
  unsigned lv = pq__ti_level(k, pq->levels);
  uint32_t update[PQ_MAX_LEVELS] = {0};
  (void)last_before(pq, k, update);
  if (*pq__ti_next_ptr(pq, update[0], 0) != slot)
    return PQ_CORRUPT;
  uint32_t after = *pq__ti_next_ptr(pq, slot, 0);
  for (unsigned l = 0; l < lv; l++) {
    if (*pq__ti_next_ptr(pq, update[l], l) == slot)
      *pq__ti_next_ptr(pq, update[l], l) = *pq__ti_next_ptr(pq, slot, l);
    if (pq->hdr->hd_tails[l] == slot)
      pq->hdr->hd_tails[l] = update[l];
  }
  if (after != PQ_NIL && after < pq->nslots)
    *pq__ti_prev_ptr(pq, after) = update[0];
  return PQ_OK;
}

uint32_t pq__ti_first(pq_t *pq) {
  return next_at(pq, HEAD(pq), 0);
}

uint32_t pq__ti_last(pq_t *pq) {
  uint32_t t = pq->hdr->hd_tails[0];
  return t >= pq->nslots ? PQ_NIL : t;
}

uint32_t pq__ti_next(pq_t *pq, uint32_t slot) {
  return next_at(pq, slot, 0);
}

uint32_t pq__ti_prev(pq_t *pq, uint32_t slot) {
  uint32_t p = *pq__ti_prev_ptr(pq, slot);
  if (p >= pq->nslots || pq->slots[p].ps_key >= pq->slots[slot].ps_key)
    return PQ_NIL;
  return p;
}

uint32_t pq__ti_after(pq_t *pq, uint64_t k) {
  uint32_t x = HEAD(pq);
  for (unsigned l = pq->levels; l-- > 0;)
    for (uint32_t n; (n = next_at(pq, x, l)) != PQ_NIL && key_of(pq, n) <= k;)
      x = n;
  return next_at(pq, x, 0);
}

uint32_t pq__ti_before(pq_t *pq, uint64_t k) {
  uint32_t x = last_before(pq, k, NULL);
  return x == HEAD(pq) ? PQ_NIL : x;
}

void pq__ti_build(pq_t *pq, const uint32_t *sorted, uint32_t n) {
  pq__ti_clear(pq);
  for (uint32_t i = 0; i < n; i++)
    (void)pq__ti_append(pq, sorted[i]); /* tails are fresh: cannot fail */
}

/* ---- checked walks (readers) ---- */

static bool node_sound(pq_t *pq, uint32_t n) {
  return n < pq->nslots && pq__slot_valid(&pq->slots[n]) &&
         pq__slot_state(&pq->slots[n]) == PQ_SLOT_COMMITTED;
}

/* Level-0 successor of node x (the head or a committed slot), checked. */
static int succ_checked(pq_t *pq, uint32_t x, uint32_t *out) {
  uint32_t n = *pq__ti_next_ptr(pq, x, 0);
  *out = x;
  if (n == PQ_NIL) {
    if (pq->hdr->hd_tails[0] != x)
      return PQ_CORRUPT; /* the list ends before its tail */
    *out = PQ_NIL;
    return PQ_OK;
  }
  if (!node_sound(pq, n) || key_of(pq, n) <= key_of(pq, x) ||
      *pq__ti_prev_ptr(pq, n) != x)
    return PQ_CORRUPT;
  *out = n;
  return PQ_OK;
}

/* Level-0 predecessor of committed slot x, checked; PQ_NIL at the head. */
static int pred_checked(pq_t *pq, uint32_t x, uint32_t *out) {
  uint32_t p = *pq__ti_prev_ptr(pq, x);
  *out = x;
  if (p == HEAD(pq)) {
    if (*pq__ti_next_ptr(pq, HEAD(pq), 0) != x)
      return PQ_CORRUPT;
    *out = PQ_NIL;
    return PQ_OK;
  }
  if (!node_sound(pq, p) || key_of(pq, p) >= key_of(pq, x) ||
      *pq__ti_next_ptr(pq, p, 0) != x)
    return PQ_CORRUPT;
  *out = p;
  return PQ_OK;
}

int pq__ti_step_checked(pq_t *pq, uint32_t from, int direction, uint32_t *out) {
  if (from != HEAD(pq) && !node_sound(pq, from)) {
    *out = from;
    return PQ_CORRUPT;
  }
  if (direction > 0)
    return succ_checked(pq, from, out);
  if (from == HEAD(pq)) {
    *out = PQ_NIL;
    return PQ_OK;
  }
  return pred_checked(pq, from, out);
}

int pq__ti_seek_checked(pq_t *pq, uint64_t k, int direction, uint32_t *out) {
  /* Forward: the last node with key <= k, then its successor.  Backward:
   * the last node with key < k. */
  uint64_t bound = direction > 0 ? k : k - 1;
  uint32_t x = HEAD(pq);
  if (direction < 0 && k == 0) {
    *out = PQ_NIL;
    return PQ_OK;
  }
  for (unsigned l = pq->levels; l-- > 0;) {
    for (;;) {
      uint32_t n = *pq__ti_next_ptr(pq, x, l);
      if (n == PQ_NIL)
        break;
      if (!node_sound(pq, n) || key_of(pq, n) <= key_of(pq, x)) {
        *out = x;
        return PQ_CORRUPT;
      }
      if (key_of(pq, n) > bound)
        break;
      x = n;
    }
  }
  uint32_t n;
  int rc = succ_checked(pq, x, &n); /* the link that ends the search */
  if (rc != PQ_OK || direction > 0) {
    *out = n;
    return rc;
  }
  *out = x == HEAD(pq) ? PQ_NIL : x;
  return PQ_OK;
}
