/*
 * read.c - getting products out: decoding a product's record, the per-handle
 * cursor, stepping through the queue in insertion order (forward or
 * backward, filtered by a product class), and finding a product by its
 * signature.  A product is handed to the caller's callback in place, in the
 * shared mapping, while a shared lock on its region keeps writers from
 * evicting it; the control lock is dropped before the callback runs.
 * pq_next_many() does the same for a bounded batch of products that lie
 * in one run of the data area: one hold of the control lock finds them
 * and one shared lock covers them all, so that a reader that takes many
 * small products pays four lock calls per batch instead of per product.
 *
 * Readers trust nothing they follow: the time-index walk is checked node by
 * node (pq/timeindex.c) and a slot found by signature must pass its
 * checksum, so damage makes a read fail with PQ_CORRUPT rather than end
 * early as if the queue were shorter.  A handle that may write repairs such
 * damage (the rebuild of pq/repair.c) and reads on; a read-only one cannot.
 * With pq_set_verify() a product's bytes are checked against the CRC32C of
 * its slot before the callback sees them (PQ_DAMAGED if they differ); a
 * product found sound is marked so in its slot, and a reader that verifies
 * ONCE trusts the mark instead of reading the bytes again, so that many
 * readers of the same products pay for one check of each.
 *
 * A class's patterns come from peers, and while the control lock is held
 * every writer waits: patterns that pq_ere_size() calls small are matched
 * under the lock for at most MATCH_BUDGET_NS of matching per hold; a class
 * with a bigger one (pq_spec.costly), which glibc's matcher can take
 * seconds over, is matched outside the lock, one product at a time
 * (docs/security.md, "Patterns from peers").
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pq/internal.h"

#define RND8(x) (((x) + PQ_ALIGN - 1) / PQ_ALIGN * PQ_ALIGN)
#define SKIP_BATCH 256 /* products examined per pq_next() under one lock */
#define MATCH_BUDGET_NS 1000000 /* matching per hold of the control lock */
#define COSTLY_CALL_NS 10000000 /* a call that matches outside the lock */
/* pq_next_many(): a batch of several products holds at most this many
 * bytes, and at most this share of the data area. */
#define PQ__BATCH_BYTES (256u * 1024u)
#define PQ__BATCH_SHARE 32u

int pq__rec_decode(const pq_t *pq, uint32_t slot, pq_prod_info *info,
                   const uint8_t **data) {
  const struct pq_slot *s = &pq->slots[slot];
  uint64_t off = s->ps_offset, extent = s->ps_extent;
  if (off > pq->data_size || extent > pq->data_size - off ||
      extent < sizeof(struct pq_rec))
    return PQ_CORRUPT;
  const uint8_t *p = pq->data + off;
  struct pq_rec rec;
  memcpy(&rec, p, sizeof rec);
  if (rec.rc_magic != PQ_REC_MAGIC || rec.rc_origin_len > PQ_ORIGIN_MAX ||
      rec.rc_ident_len > PQ_IDENT_MAX || rec.rc_arrival_usec < 0 ||
      rec.rc_arrival_usec > 999999)
    return PQ_CORRUPT;
  uint64_t hdr = RND8(sizeof rec + rec.rc_origin_len + rec.rc_ident_len);
  if (hdr > extent || rec.rc_size > extent - hdr)
    return PQ_CORRUPT;
  const char *origin = (const char *)p + sizeof rec;
  const char *ident = origin + rec.rc_origin_len;
  if (memchr(origin, '\0', rec.rc_origin_len) ||
      memchr(ident, '\0', rec.rc_ident_len))
    return PQ_CORRUPT;
  info->arrival.sec = rec.rc_arrival_sec;
  info->arrival.usec = rec.rc_arrival_usec;
  memcpy(info->signature, rec.rc_sig, PQ_SIGLEN);
  memcpy(info->origin, origin, rec.rc_origin_len);
  info->origin[rec.rc_origin_len] = '\0';
  info->feedtype = rec.rc_feedtype;
  info->seqno = rec.rc_seqno;
  memcpy(info->ident, ident, rec.rc_ident_len);
  info->ident[rec.rc_ident_len] = '\0';
  info->size = rec.rc_size;
  *data = p + hdr;
  return PQ_OK;
}

uint32_t pq__prod_crc(const pq_t *pq, uint32_t slot, const pq_prod_info *info,
                      const uint8_t *data) {
  const uint8_t *start = pq->data + pq->slots[slot].ps_offset;
  return pq__crc32c(0, start, (uint64_t)(data - start) + info->size);
}

void pq_set_verify(pq_t *pq, enum pq_verify how) {
  pq->verify = how;
}

/* After the product lock is taken, before the callback: are the bytes of
 * the product in slot s (inserted at key, whose CRC want was read under
 * the control lock) sound, as the handle's verify mode asks?  *got is the
 * CRC computed (want if none was).  A product found sound gets its check
 * mark (docs/queue-format.md, section 5), stored while the product lock
 * keeps the slot from being reused: concurrent readers may both store
 * it, the same value.  ONCE trusts a mark and skips the pass. */
static bool product_sound(pq_t *pq, uint32_t s, uint64_t key,
                          const pq_prod_info *info, const uint8_t *data,
                          uint32_t want, uint32_t *got) {
  uint64_t *mark = &pq->slots[s].ps_checked;
  *got = want;
  if (pq->verify == PQ_VERIFY_OFF)
    return true;
  if (pq->verify == PQ_VERIFY_ONCE &&
      __atomic_load_n(mark, __ATOMIC_RELAXED) == PQ_CHECKED_MARK(key))
    return true;
  *got = pq__prod_crc(pq, s, info, data);
  if (*got != want)
    return false;
  if (pq->map_writable)
    __atomic_store_n(mark, PQ_CHECKED_MARK(key), __ATOMIC_RELAXED);
  return true;
}

void pq_cursor_oldest(pq_t *pq) {
  pq->cursor = 0;
  pq->cursor_slot = PQ_NIL;
}

void pq_cursor_set(pq_t *pq, uint64_t inserted_us) {
  pq->cursor = inserted_us;
  pq->cursor_slot = PQ_NIL;
}

uint64_t pq_cursor_get(const pq_t *pq) {
  return pq->cursor;
}

int pq_cursor_newest(pq_t *pq) {
  int rc = pq__check_owner(pq);
  if (rc == PQ_OK)
    rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  pq->cursor = pq->hdr->hd_last_key;
  pq->cursor_slot = PQ_NIL;
  pq->seen_seq = __atomic_load_n(&pq->hdr->hd_commit_seq, __ATOMIC_SEQ_CST);
  pq__ctl_unlock(pq);
  return PQ_OK;
}

/* Damage met by a reader: drop the control lock and say where. */
static int damaged_index(pq_t *pq, const char *what, uint32_t slot) {
  pq__ctl_unlock(pq);
  if (slot >= pq->nslots)
    return PQ__FAIL(pq, PQ_CORRUPT, 0,
                    "%s: %s damaged at its head (pqcheck -C names the "
                    "invariant)",
                    pq->path, what);
  return PQ__FAIL(pq, PQ_CORRUPT, 0,
                  "%s: %s damaged at slot %u (pqcheck -C names the "
                  "invariant)",
                  pq->path, what, slot);
}

/* A checked walk broke at node `at`: blame the slot table if that node or
 * one its links name fails its checksum, else the index.  Every level's
 * forward link is looked at: a search goes down from the top level, and
 * which levels a node has depends on its key, so the node that failed may
 * have been reached through any of them. */
static int damaged_walk(pq_t *pq, uint32_t at, int direction) {
  if (at < pq->nslots && !pq__slot_valid(&pq->slots[at]))
    return damaged_index(pq, "slot table", at);
  if (at <= pq->nslots) {
    if (direction > 0 || at == pq->nslots) {
      for (unsigned l = 0; l < pq->levels; l++) {
        uint32_t n = *pq__ti_next_ptr(pq, at, l);
        if (n < pq->nslots && !pq__slot_valid(&pq->slots[n]))
          return damaged_index(pq, "slot table", n);
      }
    } else {
      uint32_t n = *pq__ti_prev_ptr(pq, at);
      if (n < pq->nslots && !pq__slot_valid(&pq->slots[n]))
        return damaged_index(pq, "slot table", n);
    }
  }
  return damaged_index(pq, "time index", at);
}

/* Take the shared control lock and find the committed slot with that
 * signature: in *out (PQ_NIL if none), PQ_OK, the lock held.  Otherwise
 * the lock is not held: the locking failed, or PQ_CORRUPT if the slot found
 * fails its checksum. */
static int find_committed(pq_t *pq, const uint8_t sig[PQ_SIGLEN],
                          uint32_t *out) {
  *out = PQ_NIL;
  int rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  uint32_t s = pq__sx_find(pq, sig);
  if (s == PQ_NIL)
    return PQ_OK;
  if (!pq__slot_valid(&pq->slots[s]))
    return damaged_index(pq, "slot table", s);
  if (pq__slot_state(&pq->slots[s]) == PQ_SLOT_COMMITTED)
    *out = s;
  return PQ_OK;
}

int pq_cursor_after_signature(pq_t *pq, const uint8_t sig[PQ_SIGLEN]) {
  uint32_t s;
  int rc = pq__check_owner(pq);
  if (rc == PQ_OK)
    rc = find_committed(pq, sig, &s);
  if (rc != PQ_OK)
    return rc;
  if (s != PQ_NIL) {
    pq->cursor = pq->slots[s].ps_key;
    pq->cursor_slot = s;
  }
  pq__ctl_unlock(pq);
  return s == PQ_NIL ? PQ_NOTFOUND : PQ_OK;
}

/* A product whose bytes do not match their CRC: say which (its identifier,
 * signature and insertion time, as stored: one of them may be what was
 * damaged), the identifier last: a long path may cut it short. */
static int damaged_product(pq_t *pq, const pq_prod_info *info,
                           uint64_t inserted, uint32_t got, uint32_t want) {
  char when[32], sig[33];
  pq_ts_format(pq_ts_from_us(inserted), when, sizeof when);
  pq_sig_format(info->signature, sig);
  return PQ__FAIL(pq, PQ_DAMAGED, 0,
                  "%s: damaged product inserted %s (crc32c %08x, its slot "
                  "says %08x), signature %s: %s",
                  pq->path, when, got, want, sig, info->ident);
}

/* Lock the product, drop the control lock, verify it if asked (*bad: it
 * failed), run the callback, unlock. */
static int deliver(pq_t *pq, uint32_t s, const pq_prod_info *info,
                   const uint8_t *data, pq_read_fn *fn, void *arg, bool *bad) {
  const struct pq_slot *slot = &pq->slots[s];
  pq_place place = {.pp_inserted = slot->ps_key,
                    .pp_offset = pq->data_off + slot->ps_offset,
                    .pp_oldest = pq__ti_first(pq) == s};
  uint32_t want = slot->ps_crc;
  int rc = pq__prod_lock(pq, slot->ps_offset, slot->ps_extent);
  pq__ctl_unlock(pq);
  if (rc != PQ_OK)
    return rc;
  pq->pin_ok = true; /* the lock is this product's alone */
  pq->pin_data = (uint64_t)(data - pq->base);
  /* Outside the control lock: the product lock keeps the bytes in place. */
  uint32_t got;
  *bad = !product_sound(pq, s, place.pp_inserted, info, data, want, &got);
  if (*bad)
    rc = damaged_product(pq, info, place.pp_inserted, got, want);
  else
    rc = fn(info, data, &place, arg);
  pq__prod_unlock(pq);
  return rc;
}

/* A handle that may write rebuilds the indexes after a reader found them
 * damaged, as pq_repair() does, and tells the program's notice function
 * what it found (the reader's PQ_CORRUPT message) and what it dropped. */
static bool can_rebuild(const pq_t *pq) {
  return !pq->readonly && pq->map_writable;
}

static int rebuild(pq_t *pq) {
  char found[sizeof pq->err.pe_msg];
  uint64_t dropped = 0, reclaimed = 0;
  int rc;

  snprintf(found, sizeof found, "%s", pq->err.pe_msg);
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
  rc = pq__rebuild(pq, &dropped, &reclaimed);
  pq__ctl_unlock(pq);
  pq->cursor_slot = PQ_NIL;
  if (rc == PQ_OK)
    pq__notice("%s; rebuilt the indexes from the slot table: %llu damaged "
               "slots dropped, %llu dead reservations reclaimed, every other "
               "product kept",
               found, (unsigned long long)dropped,
               (unsigned long long)reclaimed);
  else
    pq__notice("%s; rebuilding the indexes failed: %s", found, pq->err.pe_msg);
  return rc;
}

static uint32_t class_feedtypes(const pq_class *cls) {
  uint32_t ft = 0;
  for (unsigned i = 0; i < cls->nspecs; i++)
    ft |= cls->specs[i].feedtype;
  return ft;
}

/* Has the class a pattern too big to match under the control lock? */
static bool class_costly(const pq_class *cls) {
  for (unsigned i = 0; cls != NULL && i < cls->nspecs; i++)
    if (cls->specs[i].costly)
      return true;
  return false;
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A product of a batch: where it is, and what the callback gets. */
struct batch_item {
  uint32_t slot;
  uint32_t crc; /* its slot's, read under the control lock */
  pq_place place;
  pq_prod_info info;
  const uint8_t *data;
};

/* The products one call hands out under one hold of the control lock and
 * one product lock over the byte range [lo, hi) that holds them all. */
struct batch {
  unsigned n;
  uint64_t lo, hi;
  struct batch_item *items; /* the caller's, room for max */
};

/* The most bytes a batch of several products may hold at once: writers
 * jump over held bytes, so a reader holds little of the queue. */
static uint64_t batch_bytes(const pq_t *pq) {
  uint64_t b = pq->data_size / PQ__BATCH_SHARE;
  return b < PQ__BATCH_BYTES ? b : PQ__BATCH_BYTES;
}

/* Can the region [off, off + extent) join the batch: on the side the walk
 * goes to, and the range then within batch_bytes()?  (The first product
 * always can.) */
static bool batch_fits(const pq_t *pq, const struct batch *b, int direction,
                       uint64_t off, uint64_t extent) {
  if (b->n == 0)
    return true;
  uint64_t lo = b->lo, hi = b->hi;
  if (direction == PQ_FORWARD ? off < hi : off + extent > lo)
    return false; /* the ring wrapped, or the head jumped back */
  /* The batch is locked, and unlocked, as one range.  Locks of one handle
   * merge: unlocking a range that spans a gap would also drop this
   * handle's pin (pq_pin()) on a product lying in the gap, and a writer
   * could then overwrite bytes still being sent.  With pins held, a batch
   * takes only products that abut, so that no gap is spanned. */
  if (pq->pins > 0 &&
      (direction == PQ_FORWARD ? off != hi : off + extent != lo))
    return false;
  if (direction == PQ_FORWARD)
    hi = off + extent;
  else
    lo = off;
  return hi - lo <= batch_bytes(pq);
}

/* Lock the batch's range, drop the control lock, hand each product to fn
 * (verified first if asked), unlock.  The cursor moves past each product
 * delivered, and past the ones examined after the last (to `last` and its
 * slot) when all were; a callback that fails leaves it before its
 * product, a damaged product past it, and the batch ends there. */
static int deliver_batch(pq_t *pq, struct batch *b, int direction,
                         uint64_t last, uint32_t last_slot, pq_read_fn *fn,
                         void *arg) {
  int rc = pq__prod_lock(pq, b->lo, b->hi - b->lo);
  pq__ctl_unlock(pq);
  if (rc != PQ_OK)
    return rc; /* the cursor was not moved: all offered again */
  for (unsigned i = 0; i < b->n; i++) {
    struct batch_item *it = &b->items[i];
    uint64_t key = it->place.pp_inserted;
    pq->cursor = key;
    pq->cursor_slot = it->slot;
    /* Outside the control lock: the product lock keeps the bytes in
     * place. */
    uint32_t got;
    if (!product_sound(pq, it->slot, key, &it->info, it->data, it->crc, &got)) {
      rc = damaged_product(pq, &it->info, key, got, it->crc);
      break;
    }
    /* A batch of one is locked over that product's region alone: the
     * callback may keep the lock (pq_pin()). */
    pq->pin_ok = b->n == 1;
    pq->pin_data = (uint64_t)(it->data - pq->base);
    it->place.pp_more = i + 1 < b->n;
    rc = fn(&it->info, it->data, &it->place, arg);
    if (rc != PQ_OK) { /* offer it again next time */
      pq->cursor = direction == PQ_FORWARD ? key - 1 : key + 1;
      pq->cursor_slot = PQ_NIL;
      break;
    }
  }
  if (rc == PQ_OK) {
    pq->cursor = last;
    pq->cursor_slot = last_slot;
  }
  pq__prod_unlock(pq);
  return rc;
}

/* Under the control lock: the first product past the cursor in *s
 * (PQ_NIL: none).  On damage the lock is dropped, *damage set, and the
 * error returned. */
static int walk_from_cursor(pq_t *pq, int direction, uint32_t *s,
                            bool *damage) {
  uint32_t cs = pq->cursor_slot;
  bool cached = cs < pq->nslots &&
                pq__slot_state(&pq->slots[cs]) == PQ_SLOT_COMMITTED &&
                pq->slots[cs].ps_key == pq->cursor;
  int rc = cached ? pq__ti_step_checked(pq, cs, direction, s)
                  : pq__ti_seek_checked(pq, pq->cursor, direction, s);
  if (rc != PQ_OK) {
    *damage = true;
    return damaged_walk(pq, *s, direction);
  }
  return PQ_OK;
}

/* One try of pq_next() or pq_next_many() (max products at most); *damage
 * says that a PQ_CORRUPT came from the index or a record (what a rebuild
 * mends), not from the callback. */
static int next_once(pq_t *pq, int direction, const pq_class *cls, unsigned max,
                     struct batch *b, pq_read_fn *fn, void *arg, bool *damage) {
  int rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK)
    return rc;
  uint32_t seq = __atomic_load_n(&pq->hdr->hd_commit_seq, __ATOMIC_SEQ_CST);
  uint32_t s;
  rc = walk_from_cursor(pq, direction, &s, damage);
  if (rc != PQ_OK)
    return rc;
  /* A class can only match products that share a feedtype bit with it: the
   * slot's copy of the feedtype skips the others without reading them. */
  uint32_t want = cls ? class_feedtypes(cls) : PQ_FT_ANY;
  uint64_t last = pq->cursor; /* the last product examined, and its slot */
  uint32_t last_slot = pq->cursor_slot;
  b->n = 0;
  uint64_t until = cls != NULL ? mono_ns() + MATCH_BUDGET_NS : 0;
  for (unsigned n = 0; s != PQ_NIL && n < SKIP_BATCH && b->n < max; n++) {
    const struct pq_slot *slot = &pq->slots[s];
    if (cls == NULL || (slot->ps_feedtype & want) != 0) {
      struct batch_item *it = &b->items[b->n];
      if (pq__rec_decode(pq, s, &it->info, &it->data) != PQ_OK) {
        *damage = true;
        return damaged_index(pq, "product record", s);
      }
      if (cls == NULL || pq_class_match(cls, &it->info)) {
        if (!batch_fits(pq, b, direction, slot->ps_offset, slot->ps_extent))
          break; /* the next call starts with it */
        it->slot = s;
        it->crc = slot->ps_crc;
        it->place = (pq_place){.pp_inserted = slot->ps_key,
                               .pp_offset = pq->data_off + slot->ps_offset,
                               .pp_oldest = pq__ti_first(pq) == s};
        if (b->n == 0 || slot->ps_offset < b->lo)
          b->lo = slot->ps_offset;
        if (b->n == 0 || slot->ps_offset + slot->ps_extent > b->hi)
          b->hi = slot->ps_offset + slot->ps_extent;
        b->n++;
      }
    }
    last = slot->ps_key;
    last_slot = s;
    if (b->n == max || (cls != NULL && mono_ns() > until))
      break; /* no need to look further, or writers waited long enough */
    if (pq__ti_step_checked(pq, s, direction, &s) != PQ_OK) {
      *damage = true;
      return damaged_walk(pq, s, direction);
    }
  }
  if (b->n > 0)
    return deliver_batch(pq, b, direction, last, last_slot, fn, arg);
  pq->cursor = last;
  pq->cursor_slot = last_slot;
  if (s != PQ_NIL) {
    pq__ctl_unlock(pq);
    return PQ_OK; /* the caller calls again; the lock was held long enough */
  }
  pq->seen_seq = seq;
  pq__ctl_unlock(pq);
  return PQ_END;
}

/* Under the control lock, from the cursor: the next product sharing a
 * feedtype bit with want, in *s, its record in *it (examined at most
 * SKIP_BATCH: then *s is the last examined and *it unset).  The cursor
 * moves past the others.  Damage as walk_from_cursor(). */
static int next_candidate(pq_t *pq, int direction, uint32_t want, uint32_t *s,
                          struct batch_item *it, bool *found, bool *damage) {
  int rc = walk_from_cursor(pq, direction, s, damage);
  *found = false;
  for (unsigned n = 0; rc == PQ_OK && *s != PQ_NIL && n < SKIP_BATCH; n++) {
    const struct pq_slot *slot = &pq->slots[*s];
    if ((slot->ps_feedtype & want) != 0) {
      if (pq__rec_decode(pq, *s, &it->info, &it->data) != PQ_OK) {
        *damage = true;
        return damaged_index(pq, "product record", *s);
      }
      it->slot = *s;
      it->crc = slot->ps_crc;
      it->place = (pq_place){.pp_inserted = slot->ps_key,
                             .pp_offset = pq->data_off + slot->ps_offset,
                             .pp_oldest = pq__ti_first(pq) == *s};
      *found = true;
      return PQ_OK;
    }
    pq->cursor = slot->ps_key;
    pq->cursor_slot = *s;
    if (pq__ti_step_checked(pq, *s, direction, s) != PQ_OK) {
      *damage = true;
      return damaged_walk(pq, *s, direction);
    }
  }
  return rc;
}

/* next_once() for a class with a costly pattern: each candidate's record is
 * copied under the control lock and matched without it; a match is then
 * delivered if it is still there (the same key in the same slot: keys are
 * never reused), as a batch of one.  At most SKIP_BATCH candidates a call;
 * a writer waits for none of the matching, and a call returns after
 * COSTLY_CALL_NS (the caller calls again). */
static int next_costly(pq_t *pq, int direction, const pq_class *cls,
                       struct batch *b, pq_read_fn *fn, void *arg,
                       bool *damage) {
  uint32_t want = class_feedtypes(cls), s;
  struct batch_item *it = &b->items[0];
  uint64_t until = mono_ns() + COSTLY_CALL_NS;
  for (unsigned n = 0; n < SKIP_BATCH && (n == 0 || mono_ns() < until); n++) {
    bool found;
    int rc = pq__ctl_lock(pq, false);
    if (rc != PQ_OK)
      return rc;
    uint32_t seq = __atomic_load_n(&pq->hdr->hd_commit_seq, __ATOMIC_SEQ_CST);
    rc = next_candidate(pq, direction, want, &s, it, &found, damage);
    if (rc != PQ_OK)
      return rc; /* the lock was dropped */
    if (!found) {
      if (s == PQ_NIL)
        pq->seen_seq = seq;
      pq__ctl_unlock(pq);
      return s == PQ_NIL ? PQ_END : PQ_OK;
    }
    pq__ctl_unlock(pq);
    bool match = pq_class_match(cls, &it->info);
    if ((rc = pq__ctl_lock(pq, false)) != PQ_OK)
      return rc;
    const struct pq_slot *slot = &pq->slots[s];
    uint64_t key = it->place.pp_inserted;
    bool there = pq__slot_state(slot) == PQ_SLOT_COMMITTED &&
                 slot->ps_key == key && pq__slot_valid(slot);
    if (match && there) {
      b->n = 1;
      b->lo = slot->ps_offset;
      b->hi = slot->ps_offset + slot->ps_extent;
      return deliver_batch(pq, b, direction, key, s, fn, arg);
    }
    pq->cursor = key; /* not wanted, or gone while it was matched */
    pq->cursor_slot = there ? s : PQ_NIL;
    pq__ctl_unlock(pq);
  }
  return PQ_OK; /* the caller calls again */
}

/* A read callback read through its own handle, with fn: PQ_INVAL. */
static int nested_read(pq_t *pq, const char *fn) {
  return PQ__FAIL(pq, PQ_INVAL, 0,
                  "%s inside a read callback of the same handle", fn);
}

/* One try, by the walk the class calls for. */
static int try_read(pq_t *pq, int direction, const pq_class *cls, unsigned max,
                    struct batch *b, pq_read_fn *fn, void *arg, bool *damage) {
  if (class_costly(cls))
    return next_costly(pq, direction, cls, b, fn, arg, damage);
  return next_once(pq, direction, cls, max, b, fn, arg, damage);
}

/* pq_next() and pq_next_many(): one try, and a second after a rebuild
 * when the first met damage a handle that may write can mend. */
static int next_read(pq_t *pq, int direction, const pq_class *cls, unsigned max,
                     struct batch *b, pq_read_fn *fn, void *arg) {
  bool damage = false;
  int rc = try_read(pq, direction, cls, max, b, fn, arg, &damage);
  if (damage && can_rebuild(pq)) {
    int r = rebuild(pq);
    damage = false;
    rc =
        r != PQ_OK ? r : try_read(pq, direction, cls, max, b, fn, arg, &damage);
  }
  return rc;
}

int pq_next(pq_t *pq, int direction, const pq_class *cls, pq_read_fn *fn,
            void *arg) {
  int rc = pq__check_call(
      pq, (direction == PQ_FORWARD || direction == PQ_BACKWARD) && fn != NULL,
      "pq_next: bad direction or callback");
  if (rc != PQ_OK)
    return rc;
  if (pq->holding)
    return nested_read(pq, "pq_next");
  struct batch_item item;
  struct batch b = {.items = &item};
  return next_read(pq, direction, cls, 1, &b, fn, arg);
}

int pq_next_many(pq_t *pq, int direction, const pq_class *cls, unsigned max,
                 pq_read_fn *fn, void *arg) {
  int rc = pq__check_call(
      pq, (direction == PQ_FORWARD || direction == PQ_BACKWARD) && fn != NULL,
      "pq_next_many: bad direction or callback");
  if (rc != PQ_OK)
    return rc;
  if (pq->holding)
    return nested_read(pq, "pq_next_many");
  if (max == 0 || max > PQ_NEXT_MANY_MAX)
    max = PQ_NEXT_MANY_MAX;
  struct batch_item items[PQ_NEXT_MANY_MAX];
  struct batch b = {.items = items};
  return next_read(pq, direction, cls, max, &b, fn, arg);
}

int pq_find(pq_t *pq, const uint8_t sig[PQ_SIGLEN], pq_read_fn *fn, void *arg) {
  int rc =
      pq__check_call(pq, sig != NULL && fn != NULL, "pq_find: NULL argument");
  if (rc != PQ_OK)
    return rc;
  if (pq->holding)
    return nested_read(pq, "pq_find");
  uint32_t s;
  rc = find_committed(pq, sig, &s);
  if (rc != PQ_OK)
    return rc;
  if (s == PQ_NIL) {
    pq__ctl_unlock(pq);
    return PQ_NOTFOUND;
  }
  pq_prod_info info;
  const uint8_t *data;
  if (pq__rec_decode(pq, s, &info, &data) != PQ_OK)
    return damaged_index(pq, "product record", s);
  bool bad = false;
  return deliver(pq, s, &info, data, fn, arg, &bad);
}
