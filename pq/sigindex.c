/*
 * sigindex.c - the signature index: an open-addressing hash table in the
 * file that finds a product by its MD5 signature in O(1), so that duplicates
 * are refused from the moment of reservation and a downstream can resume
 * after a given product.  Linear probing; a bucket holds slot+1 (0 = empty)
 * and 32 bits of the signature as a tag, so most misses never touch a slot.
 * Deletion shifts later entries back (no tombstones), so the table never
 * degrades.  The table has at least twice as many buckets as slots.
 */
#include <string.h>

#include "pq/internal.h"

static uint32_t tag_of(const uint8_t sig[16]) {
  uint32_t t;
  memcpy(&t, sig + 8, 4);
  return t;
}

uint64_t pq__sx_home(const pq_t *pq, const uint8_t sig[16]) {
  uint64_t h;
  memcpy(&h, sig, 8);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h & pq->hash_mask;
}

static uint64_t entry_of(const pq_t *pq, uint32_t slot) {
  return (uint64_t)tag_of(pq->slots[slot].ps_sig) << 32 | (slot + 1u);
}

uint32_t pq__sx_find(pq_t *pq, const uint8_t sig[16]) {
  uint32_t tag = tag_of(sig);
  uint64_t i = pq__sx_home(pq, sig);
  for (uint64_t n = 0; n <= pq->hash_mask; n++, i = (i + 1) & pq->hash_mask) {
    uint64_t e = pq->hash[i];
    if (e == 0)
      return PQ_NIL;
    uint32_t s = (uint32_t)e - 1u;
    if ((uint32_t)(e >> 32) == tag && s < pq->nslots &&
        memcmp(pq->slots[s].ps_sig, sig, 16) == 0 &&
        pq__slot_used(&pq->slots[s]))
      return s;
  }
  return PQ_NIL;
}

int pq__sx_add(pq_t *pq, uint32_t slot) {
  uint64_t i = pq__sx_home(pq, pq->slots[slot].ps_sig);
  for (uint64_t n = 0; n <= pq->hash_mask; n++, i = (i + 1) & pq->hash_mask) {
    if (pq->hash[i] == 0) {
      pq->hash[i] = entry_of(pq, slot);
      return PQ_OK;
    }
  }
  return PQ_CORRUPT; /* cannot happen: buckets >= 2 * slots */
}

void pq__sx_remove(pq_t *pq, uint32_t slot) {
  uint64_t mask = pq->hash_mask;
  uint64_t p = pq__sx_home(pq, pq->slots[slot].ps_sig);
  uint64_t n = 0;
  while (pq->hash[p] != 0 && (uint32_t)pq->hash[p] != slot + 1u) {
    p = (p + 1) & mask;
    if (++n > mask)
      return;
  }
  if (pq->hash[p] == 0)
    return;
  pq->hash[p] = 0;
  for (uint64_t j = (p + 1) & mask; pq->hash[j] != 0; j = (j + 1) & mask) {
    uint32_t s = (uint32_t)pq->hash[j] - 1u;
    if (s >= pq->nslots)
      return;
    uint64_t k = pq__sx_home(pq, pq->slots[s].ps_sig);
    /* The entry at j may move to the hole at p unless its home lies
     * cyclically in (p, j]. */
    bool stays = p <= j ? (k > p && k <= j) : (k > p || k <= j);
    if (!stays) {
      pq->hash[p] = pq->hash[j];
      pq->hash[j] = 0;
      p = j;
    }
  }
}

void pq__sx_clear(pq_t *pq) {
  memset(pq->hash, 0, (pq->hash_mask + 1) * sizeof *pq->hash);
}
