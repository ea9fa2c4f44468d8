/*
 * repair.c - rebuilding a queue from its slot table after a crash.
 *
 * The slots are the truth; the time index, the region list, the signature
 * hash, the free-slot stack and the counters are derived from them, so a
 * process that finds the dirty flag set (its predecessor died inside a change)
 * throws the derived structures away and rebuilds them in O(n log n):
 *   - a slot whose checksum fails is freed: silently if the intent record
 *     names it (it was being rewritten: a reservation or a commit that never
 *     returned), as damage otherwise (counted in *dropped);
 *   - a used slot whose region or record is malformed, that overlaps another,
 *     or repeats a signature or an insertion time is freed as damage;
 *   - a reservation whose writer is dead is reclaimed (*reclaimed);
 *   - every committed product that passes these checks is kept unchanged.
 */
#include <stdlib.h>

#include "pq/internal.h"

static int by_offset(const void *a, const void *b, void *arg) {
  const struct pq_slot *s = arg;
  uint64_t x = s[*(const uint32_t *)a].ps_offset;
  uint64_t y = s[*(const uint32_t *)b].ps_offset;
  return x < y ? -1 : x > y;
}

static int by_key(const void *a, const void *b, void *arg) {
  const struct pq_slot *s = arg;
  uint64_t x = s[*(const uint32_t *)a].ps_key;
  uint64_t y = s[*(const uint32_t *)b].ps_key;
  return x < y ? -1 : x > y;
}

/* Is a used slot's region and record sound? */
static bool slot_sound(pq_t *pq, uint32_t i) {
  const struct pq_slot *s = &pq->slots[i];
  if (s->ps_offset % PQ_ALIGN || s->ps_extent == 0 || s->ps_extent % PQ_ALIGN ||
      s->ps_offset > pq->data_size ||
      s->ps_extent > pq->data_size - s->ps_offset)
    return false;
  if (pq__slot_state(s) != PQ_SLOT_COMMITTED)
    return true; /* a reservation's data is still being written */
  if (s->ps_key == 0 || s->ps_key > PQ_KEY_MAX)
    return false;
  pq_prod_info info;
  const uint8_t *data;
  return pq__rec_decode(pq, i, &info, &data) == PQ_OK;
}

static void drop(pq_t *pq, uint32_t i) {
  pq__slot_publish(&pq->slots[i], PQ_SLOT_FREE);
}

int pq__rebuild(pq_t *pq, uint64_t *droppedp, uint64_t *reclaimedp) {
  struct pq_hdr *h = pq->hdr;
  uint32_t n = pq->nslots;
  uint32_t *used = malloc((size_t)n * sizeof *used);
  uint32_t *comm = malloc((size_t)n * sizeof *comm);
  if (used == NULL || comm == NULL) {
    free(used);
    free(comm);
    return PQ__FAIL(pq, PQ_NOMEM, 0, "repairing %s", pq->path);
  }
  uint32_t intent =
      (h->hd_intent_op == PQ_OP_RESERVE || h->hd_intent_op == PQ_OP_COMMIT)
          ? h->hd_intent_slot
          : PQ_NIL;
  __atomic_store_n(&h->hd_dirty, 1, __ATOMIC_SEQ_CST);
  uint64_t dropped = 0, reclaimed = 0;
  uint32_t nused = 0, ncomm = 0;

  for (uint32_t i = 0; i < n; i++) {
    struct pq_slot *s = &pq->slots[i];
    if (!pq__slot_valid(s)) {
      dropped += i != intent;
      drop(pq, i);
      continue;
    }
    uint32_t st = pq__slot_state(s);
    if (st == PQ_SLOT_FREE)
      continue;
    if (!slot_sound(pq, i)) {
      dropped++;
      drop(pq, i);
    } else if (st == PQ_SLOT_RESERVED &&
               !pq__writer_alive(pq, s->ps_owner, s->ps_owner_gen) &&
               !(pq->has_resv && pq->resv_slot == i)) {
      reclaimed++;
      drop(pq, i);
    } else {
      used[nused++] = i;
    }
  }

  /* Regions must not overlap: keep the first of two that do. */
  qsort_r(used, nused, sizeof *used, by_offset, pq->slots);
  uint32_t kept = 0;
  for (uint32_t j = 0; j < nused; j++) {
    uint32_t i = used[j];
    if (kept > 0 && pq->slots[i].ps_offset < pq__slot_end(pq, used[kept - 1])) {
      dropped++;
      drop(pq, i);
      continue;
    }
    used[kept++] = i;
  }
  nused = kept;

  /* Signatures must be unique: keep the first seen. */
  pq__sx_clear(pq);
  kept = 0;
  for (uint32_t j = 0; j < nused; j++) {
    uint32_t i = used[j];
    if (pq__sx_find(pq, pq->slots[i].ps_sig) != PQ_NIL) {
      dropped++;
      drop(pq, i);
      continue;
    }
    (void)pq__sx_add(pq, i);
    used[kept++] = i;
  }
  nused = kept;

  uint64_t nbytes = 0,
           maxkey = h->hd_last_key > PQ_KEY_MAX ? 0 : h->hd_last_key;
  uint32_t nresv = 0;
  for (uint32_t j = 0; j < nused; j++) {
    const struct pq_slot *s = &pq->slots[used[j]];
    nbytes += s->ps_extent;
    if (pq__slot_state(s) == PQ_SLOT_COMMITTED)
      comm[ncomm++] = used[j];
    else
      nresv++;
  }
  /* Insertion times must be unique (they only grow; a repeat is damage). */
  qsort_r(comm, ncomm, sizeof *comm, by_key, pq->slots);
  kept = 0;
  for (uint32_t j = 0; j < ncomm; j++) {
    uint32_t i = comm[j];
    if (kept > 0 && pq->slots[i].ps_key == pq->slots[comm[kept - 1]].ps_key) {
      dropped++;
      pq__sx_remove(pq, i);
      nbytes -= pq->slots[i].ps_extent;
      drop(pq, i);
      for (uint32_t u = 0; u < nused; u++)
        if (used[u] == i)
          used[u] = used[--nused];
      continue;
    }
    comm[kept++] = i;
    if (pq->slots[i].ps_key > maxkey)
      maxkey = pq->slots[i].ps_key;
  }
  ncomm = kept;
  qsort_r(used, nused, sizeof *used, by_offset, pq->slots);

  pq__ti_build(pq, comm, ncomm);
  pq__rl_build(pq, used, nused);
  h->hd_free_top = PQ_NIL;
  h->hd_nfree_slots = 0;
  for (uint32_t i = n; i-- > 0;)
    if (pq__slot_state(&pq->slots[i]) == PQ_SLOT_FREE)
      pq__free_push(pq, i);
  h->hd_nprods = ncomm;
  h->hd_nresv = nresv;
  h->hd_nbytes = nbytes;
  h->hd_last_key = maxkey;

  /* The head stays where it was, after the region that precedes it. */
  if (h->hd_head > pq->data_size || h->hd_head % PQ_ALIGN != 0)
    h->hd_head = 0;
  uint32_t prev = n;
  for (uint32_t j = 0; j < nused && pq->slots[used[j]].ps_offset < h->hd_head;
       j++)
    prev = used[j];
  if (prev < n && pq__slot_end(pq, prev) > h->hd_head)
    h->hd_head = pq__slot_end(pq, prev);
  h->hd_head_prev = prev;

  free(used);
  free(comm);
  pq__mutate_end(pq);
  if (droppedp)
    *droppedp = dropped;
  if (reclaimedp)
    *reclaimedp = reclaimed;
  return PQ_OK;
}
