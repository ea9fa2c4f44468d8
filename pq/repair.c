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
 *   - every committed product that passes these checks is kept unchanged;
 *   - the roots of the header follow from what is kept: the counters, the
 *     last insertion time (at least the newest product's), the write head
 *     (after the region the header names, or the likelier of two when the
 *     head and that region disagree: see place_head()).
 * pq_repair_ex() (pq/check.c) has each slot dropped as damage named to its
 * caller, product identifier included when the record can still be read.
 */
#include <stdlib.h>

#include "pq/internal.h"

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

static void free_slot(pq_t *pq, uint32_t i) {
  pq__slot_publish(&pq->slots[i], PQ_SLOT_FREE);
}

/* The work of one rebuild: the slots kept so far and the tallies. */
struct rebuild {
  pq_t *pq;
  uint32_t *used; /* used slots kept, nused of them */
  uint32_t *comm; /* the committed ones among them, ncomm */
  uint32_t nused, ncomm, nresv;
  uint64_t nbytes, maxkey;
  uint64_t dropped, reclaimed;
  pq_drop_fn *fn; /* told of each slot dropped as damage, if not NULL */
  void *arg;
};

void pq__drop_note(pq_t *pq, uint32_t i, const char *why, pq_drop_fn *fn,
                   void *arg) {
  if (fn == NULL)
    return;
  const struct pq_slot *s = &pq->slots[i];
  pq_dropped d = {.pd_slot = i, .pd_why = why};
  const uint8_t *data;
  d.pd_known = pq__rec_decode(pq, i, &d.pd_info, &data) == PQ_OK;
  if (pq__slot_state(s) == PQ_SLOT_COMMITTED)
    d.pd_inserted = s->ps_key;
  fn(&d, arg);
}

/* Free slot i as damage, telling the caller's function why. */
static void drop(struct rebuild *r, uint32_t i, const char *why) {
  pq__drop_note(r->pq, i, why, r->fn, r->arg);
  r->dropped++;
  free_slot(r->pq, i);
}

/* Keep in used[] the slots that are valid, sound and not a dead writer's
 * reservation; free the others.  intent: the slot the crashed change was
 * rewriting (its bad checksum is no damage), or PQ_NIL. */
static void keep_sound_slots(struct rebuild *r, uint32_t intent) {
  pq_t *pq = r->pq;
  for (uint32_t i = 0; i < pq->nslots; i++) {
    struct pq_slot *s = &pq->slots[i];
    if (!pq__slot_valid(s) && i == intent) {
      free_slot(pq, i); /* being rewritten when its writer died */
      continue;
    }
    if (!pq__slot_valid(s)) {
      drop(r, i, "bad slot state or checksum");
      continue;
    }
    uint32_t st = pq__slot_state(s);
    if (st == PQ_SLOT_FREE)
      continue;
    if (!slot_sound(pq, i)) {
      drop(r, i, "region, insertion time or record malformed");
    } else if (st == PQ_SLOT_RESERVED &&
               !pq__writer_alive(pq, s->ps_owner, s->ps_owner_gen) &&
               !(pq->has_resv && pq->resv_slot == i)) {
      r->reclaimed++;
      free_slot(pq, i);
    } else {
      r->used[r->nused++] = i;
    }
  }
}

/* Regions must not overlap: keep the first of two that do.  Leaves used[]
 * in offset order. */
static void drop_overlaps(struct rebuild *r) {
  pq_t *pq = r->pq;
  pq__slots_by_offset(pq, r->used, r->nused);
  uint32_t kept = 0;
  for (uint32_t j = 0; j < r->nused; j++) {
    uint32_t i = r->used[j];
    if (kept > 0 &&
        pq->slots[i].ps_offset < pq__slot_end(pq, r->used[kept - 1])) {
      drop(r, i, "region overlaps another");
      continue;
    }
    r->used[kept++] = i;
  }
  r->nused = kept;
}

/* Signatures must be unique: keep the first seen.  Rebuilds the
 * signature hash. */
static void drop_repeated_signatures(struct rebuild *r) {
  pq_t *pq = r->pq;
  pq__sx_clear(pq);
  uint32_t kept = 0;
  for (uint32_t j = 0; j < r->nused; j++) {
    uint32_t i = r->used[j];
    if (pq__sx_find(pq, pq->slots[i].ps_sig) != PQ_NIL) {
      drop(r, i, "signature repeated");
      continue;
    }
    (void)pq__sx_add(pq, i);
    r->used[kept++] = i;
  }
  r->nused = kept;
}

/* Tally the bytes and reservations of used[]; the committed slots into
 * comm[]. */
static void split_committed(struct rebuild *r) {
  for (uint32_t j = 0; j < r->nused; j++) {
    const struct pq_slot *s = &r->pq->slots[r->used[j]];
    r->nbytes += s->ps_extent;
    if (pq__slot_state(s) == PQ_SLOT_COMMITTED)
      r->comm[r->ncomm++] = r->used[j];
    else
      r->nresv++;
  }
}

/* Insertion times must be unique (they only grow; a repeat is damage):
 * keep the first of a repeat, leave comm[] in key order and find the
 * newest key.  Leaves used[] in offset order again. */
static void drop_repeated_keys(struct rebuild *r) {
  pq_t *pq = r->pq;
  pq__slots_by_key(pq, r->comm, r->ncomm);
  uint32_t kept = 0;
  for (uint32_t j = 0; j < r->ncomm; j++) {
    uint32_t i = r->comm[j];
    if (kept > 0 &&
        pq->slots[i].ps_key == pq->slots[r->comm[kept - 1]].ps_key) {
      pq__sx_remove(pq, i);
      r->nbytes -= pq->slots[i].ps_extent;
      drop(r, i, "insertion time repeated");
      for (uint32_t u = 0; u < r->nused; u++)
        if (r->used[u] == i)
          r->used[u] = r->used[--r->nused];
      continue;
    }
    r->comm[kept++] = i;
    if (pq->slots[i].ps_key > r->maxkey)
      r->maxkey = pq->slots[i].ps_key;
  }
  r->ncomm = kept;
  pq__slots_by_offset(pq, r->used, r->nused);
}

/* The time index, the region list, the free-slot stack and the counters,
 * from the slots kept. */
static void relink(struct rebuild *r) {
  pq_t *pq = r->pq;
  struct pq_hdr *h = pq->hdr;
  pq__ti_build(pq, r->comm, r->ncomm);
  pq__rl_build(pq, r->used, r->nused);
  h->hd_free_top = PQ_NIL;
  h->hd_nfree_slots = 0;
  for (uint32_t i = pq->nslots; i-- > 0;)
    if (pq__slot_state(&pq->slots[i]) == PQ_SLOT_FREE)
      pq__free_push(pq, i);
  h->hd_nprods = r->ncomm;
  h->hd_nresv = r->nresv;
  h->hd_nbytes = r->nbytes;
  h->hd_last_key = r->maxkey;
}

/* How recently region s was placed, as far as the slots tell: a
 * reservation is being filled (newest), a product by its insertion time;
 * 0 for the sentinel. */
static uint64_t recency(const pq_t *pq, uint32_t s) {
  if (s >= pq->nslots)
    return 0;
  return pq__slot_state(&pq->slots[s]) == PQ_SLOT_RESERVED
             ? UINT64_MAX
             : pq->slots[s].ps_key;
}

/* The write head after the region the header names, if the pair agrees
 * (invariant 14); else after whichever of that region and the one before
 * hd_head was placed last (one of the two words is damaged, and the ring
 * places each region after the newest).  The head then sits at the end of
 * its region: the ring places the next region there. */
static void place_head(struct rebuild *r) {
  pq_t *pq = r->pq;
  struct pq_hdr *h = pq->hdr;
  char why[160];
  if (pq__head_vet(pq, why, sizeof why) != PQ_OK) {
    uint32_t a = h->hd_head_prev;
    if (a > pq->nslots || (a < pq->nslots && !pq__slot_used(&pq->slots[a])))
      a = pq->nslots;
    uint32_t b = pq->nslots;
    for (uint32_t j = 0;
         j < r->nused && pq->slots[r->used[j]].ps_offset < h->hd_head; j++)
      b = r->used[j];
    h->hd_head_prev = recency(pq, a) >= recency(pq, b) ? a : b;
  }
  h->hd_head = pq__head_anchor(pq, h->hd_head_prev);
}

int pq__rebuild(pq_t *pq, uint64_t *droppedp, uint64_t *reclaimedp) {
  return pq__rebuild_noting(pq, droppedp, reclaimedp, NULL, NULL);
}

int pq__rebuild_noting(pq_t *pq, uint64_t *droppedp, uint64_t *reclaimedp,
                       pq_drop_fn *fn, void *arg) {
  struct pq_hdr *h = pq->hdr;
  struct rebuild r = {.pq = pq, .fn = fn, .arg = arg};
  r.used = malloc((size_t)pq->nslots * sizeof *r.used);
  r.comm = malloc((size_t)pq->nslots * sizeof *r.comm);
  if (r.used == NULL || r.comm == NULL) {
    free(r.used);
    free(r.comm);
    return PQ__FAIL(pq, PQ_NOMEM, 0, "repairing %s", pq->path);
  }
  uint32_t intent =
      (h->hd_intent_op == PQ_OP_RESERVE || h->hd_intent_op == PQ_OP_COMMIT)
          ? h->hd_intent_slot
          : PQ_NIL;
  __atomic_store_n(&h->hd_dirty, 1, __ATOMIC_SEQ_CST);
  /* PQ_KEY_MAX leaves no time for the next commit (pq/roots.c): only a
   * product of that time keeps it. */
  r.maxkey = h->hd_last_key >= PQ_KEY_MAX ? 0 : h->hd_last_key;

  keep_sound_slots(&r, intent);
  drop_overlaps(&r);
  drop_repeated_signatures(&r);
  split_committed(&r);
  drop_repeated_keys(&r);
  relink(&r);
  place_head(&r);

  free(r.used);
  free(r.comm);
  pq__mutate_end(pq);
  if (droppedp)
    *droppedp = r.dropped;
  if (reclaimedp)
    *reclaimedp = r.reclaimed;
  return PQ_OK;
}
