/*
 * slot.c - the slot table, the one primary index of the queue.  A slot's
 * state and the checksum of its fields share one 64-bit word that is
 * written last, with one atomic store (pq__slot_publish): whoever reads a
 * slot after its writer died sees either the old state or the new one,
 * never half of each, and a checksum that does not match says the fields
 * were being rewritten (the intent record names that slot) or were damaged.
 * The one field a reader writes, a committed slot's check mark, lies outside
 * the checksum (docs/queue-format.md, section 5).
 * The check and the rebuild sort slot numbers by region offset and by
 * insertion time with the two sorts at the end.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pq/internal.h"

/* Bytes 8..63 of a slot, hashed with its state for seed; a committed
 * slot's check mark (ps_checked, which readers set) counts as zeros, and is
 * not even read: a reader may be storing it. */
uint32_t pq__slot_checksum(const struct pq_slot *s, uint32_t state) {
  enum {
    FROM = offsetof(struct pq_slot, ps_key),
    MARK = offsetof(struct pq_slot, ps_checked),
    AFTER = MARK + sizeof s->ps_checked,
  };
  uint8_t b[sizeof *s - FROM];
  if (state == PQ_SLOT_FREE)
    return 0x46726565u; /* a free slot's fields mean nothing */
  memcpy(b, (const uint8_t *)s + FROM, MARK - FROM);
  if (state == PQ_SLOT_COMMITTED)
    memset(b + (MARK - FROM), 0, AFTER - MARK);
  else
    memcpy(b + (MARK - FROM), (const uint8_t *)s + MARK, AFTER - MARK);
  memcpy(b + (AFTER - FROM), (const uint8_t *)s + AFTER, sizeof *s - AFTER);
  uint64_t h = pq__hash64(b, sizeof b, state);
  return (uint32_t)(h ^ (h >> 32));
}

bool pq__slot_valid(const struct pq_slot *s) {
  uint64_t w = __atomic_load_n(&s->ps_word, __ATOMIC_ACQUIRE);
  uint32_t state = (uint32_t)w;
  if (state != PQ_SLOT_FREE && state != PQ_SLOT_RESERVED &&
      state != PQ_SLOT_COMMITTED)
    return false;
  return (uint32_t)(w >> 32) == pq__slot_checksum(s, state);
}

void pq__slot_publish(struct pq_slot *s, uint32_t state) {
  uint64_t w = (uint64_t)pq__slot_checksum(s, state) << 32 | state;
  __atomic_store_n(&s->ps_word, w, __ATOMIC_RELEASE);
}

/* qsort_r() comparators of slot numbers; arg is the slot table. */
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

void pq__slots_by_offset(const pq_t *pq, uint32_t *v, uint32_t n) {
  qsort_r(v, n, sizeof *v, by_offset, pq->slots);
}

void pq__slots_by_key(const pq_t *pq, uint32_t *v, uint32_t n) {
  qsort_r(v, n, sizeof *v, by_key, pq->slots);
}
