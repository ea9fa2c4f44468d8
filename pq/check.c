/*
 * check.c - the full consistency check behind `pqcheck`: every numbered
 * invariant of pq/format.h, verified one by one, reporting the first that
 * fails and where.  The traces of a crash that the queue knows how to undo
 * (a change left half done, the reservation of a dead writer) are not
 * damage: a read-write handle undoes them first (the lock repairs, the
 * check reclaims), under the exclusive lock; a read-only handle changes
 * nothing, works under the shared lock, and reports them as what the next
 * writer will repair, checking what that repair keeps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>

#include "pq/internal.h"

struct ck {
  pq_t *pq;
  pq_check_report *r;
  bool look_only;        /* read-only: report crash traces, mend nothing */
  uint32_t intent;       /* slot a crashed change was rewriting, or NIL */
  uint32_t *used, nused; /* by offset */
  uint32_t *comm, ncomm; /* by key */
  uint8_t *mark;         /* per slot, for list walks */
};

__attribute__((format(printf, 3, 4))) static int fail(struct ck *c, int inv,
                                                      const char *fmt, ...) {
  c->r->pr_invariant = inv;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->r->pr_msg, sizeof c->r->pr_msg, fmt, ap);
  va_end(ap);
  return PQ_CORRUPT;
}

/* Invariants 3, 4, 12, 13: each slot on its own. */
static int check_slots(struct ck *c) {
  pq_t *pq = c->pq;
  for (uint32_t i = 0; i < pq->nslots; i++) {
    const struct pq_slot *s = &pq->slots[i];
    if (!pq__slot_valid(s) && i == c->intent)
      continue; /* half rewritten when its writer died: the repair frees it */
    if (!pq__slot_valid(s))
      return fail(c, 3, "slot %u: bad state or checksum", i);
    uint32_t st = pq__slot_state(s);
    if (st == PQ_SLOT_FREE)
      continue;
    if (s->ps_offset % PQ_ALIGN || s->ps_extent % PQ_ALIGN ||
        s->ps_extent < sizeof(struct pq_rec) || s->ps_offset > pq->data_size ||
        s->ps_extent > pq->data_size - s->ps_offset)
      return fail(c, 4, "slot %u: region %llu+%llu outside the data area", i,
                  (unsigned long long)s->ps_offset,
                  (unsigned long long)s->ps_extent);
    c->used[c->nused++] = i;
    if (st == PQ_SLOT_RESERVED) {
      if ((pq->has_resv && pq->resv_slot == i) ||
          pq__writer_alive(pq, s->ps_owner, s->ps_owner_gen))
        c->r->pr_reserved++;
      else if (c->look_only)
        c->r->pr_dead_resv++; /* the next writer reclaims it */
      else
        return fail(c, 12, "slot %u: reservation of dead writer %u", i,
                    s->ps_owner);
      continue;
    }
    pq_prod_info info;
    const uint8_t *data;
    if (pq__rec_decode(pq, i, &info, &data) != PQ_OK)
      return fail(c, 13, "slot %u: malformed product record", i);
    if (memcmp(info.signature, s->ps_sig, PQ_SIGLEN) != 0)
      return fail(c, 13, "slot %u: record and slot signatures differ", i);
    c->comm[c->ncomm++] = i;
  }
  c->r->pr_products = c->ncomm;
  return PQ_OK;
}

/* Invariant 5: regions without overlap (sorts c->used by offset). */
static int check_overlap(struct ck *c) {
  pq_t *pq = c->pq;
  pq__slots_by_offset(pq, c->used, c->nused);
  for (uint32_t j = 1; j < c->nused; j++)
    if (pq->slots[c->used[j]].ps_offset < pq__slot_end(pq, c->used[j - 1]))
      return fail(c, 5, "slots %u and %u overlap", c->used[j - 1], c->used[j]);
  return PQ_OK;
}

/* Invariant 6: the region list, in address order. */
static int check_rlist(struct ck *c) {
  pq_t *pq = c->pq;
  uint32_t sent = pq->nslots, prev = sent, r = pq->rl[sent].rl_next;
  for (uint32_t j = 0; j < c->nused; j++) {
    if (r != c->used[j])
      return fail(c, 6, "region list: position %u holds %u, expected %u", j, r,
                  c->used[j]);
    if (pq->rl[r].rl_prev != prev)
      return fail(c, 6, "region list: bad back link at slot %u", r);
    prev = r;
    r = pq->rl[r].rl_next;
    if (r > sent)
      return fail(c, 6, "region list: link out of range after %u", prev);
  }
  if (r != sent || pq->rl[sent].rl_prev != prev)
    return fail(c, 6, "region list does not close after %u regions", c->nused);
  return PQ_OK;
}

/* Invariants 7 and 8: the time index. */
static int check_time(struct ck *c) {
  pq_t *pq = c->pq;
  pq__slots_by_key(pq, c->comm, c->ncomm);
  uint32_t head = pq->nslots;
  if (pq->hdr->hd_last_key > PQ_KEY_MAX)
    return fail(c, 8, "last insertion time %llu out of range",
                (unsigned long long)pq->hdr->hd_last_key);
  for (uint32_t j = 0; j < c->ncomm; j++) {
    uint64_t k = pq->slots[c->comm[j]].ps_key;
    if (j > 0 && k == pq->slots[c->comm[j - 1]].ps_key)
      return fail(c, 7, "slots %u and %u share an insertion time",
                  c->comm[j - 1], c->comm[j]);
    if (k == 0 || k > pq->hdr->hd_last_key || k > PQ_KEY_MAX)
      return fail(c, 8, "slot %u: insertion time %llu out of range", c->comm[j],
                  (unsigned long long)k);
  }
  for (unsigned l = 0; l < pq->levels; l++) {
    uint32_t x = head;
    for (uint32_t j = 0; j < c->ncomm; j++) {
      uint32_t s = c->comm[j];
      if (pq__ti_level(pq->slots[s].ps_key, pq->levels) <= l)
        continue;
      if (*pq__ti_next_ptr(pq, x, l) != s)
        return fail(c, 7, "time index level %u: slot %u missing after %u", l, s,
                    x);
      if (l == 0 && *pq__ti_prev_ptr(pq, s) != x)
        return fail(c, 7, "time index: bad back link at slot %u", s);
      x = s;
    }
    if (*pq__ti_next_ptr(pq, x, l) != PQ_NIL)
      return fail(c, 7, "time index level %u does not end after %u", l, x);
    if (pq->hdr->hd_tails[l] != x)
      return fail(c, 7, "time index level %u: tail is %u, expected %u", l,
                  pq->hdr->hd_tails[l], x);
  }
  return PQ_OK;
}

/* Invariant 9: the signature hash. */
static int check_hash(struct ck *c) {
  pq_t *pq = c->pq;
  uint64_t count = 0;
  for (uint64_t b = 0; b <= pq->hash_mask; b++) {
    uint64_t e = pq->hash[b];
    if (e == 0)
      continue;
    count++;
    uint32_t s = (uint32_t)e - 1u;
    if (s >= pq->nslots || !pq__slot_used(&pq->slots[s]))
      return fail(c, 9, "hash bucket %llu names slot %u, not in use",
                  (unsigned long long)b, s);
    for (uint64_t i = pq__sx_home(pq, pq->slots[s].ps_sig); i != b;
         i = (i + 1) & pq->hash_mask)
      if (pq->hash[i] == 0)
        return fail(c, 9, "slot %u unreachable from its home bucket", s);
  }
  if (count != c->nused)
    return fail(c, 9, "hash holds %llu entries, %u slots in use",
                (unsigned long long)count, c->nused);
  for (uint32_t j = 0; j < c->nused; j++)
    if (pq__sx_find(pq, pq->slots[c->used[j]].ps_sig) != c->used[j])
      return fail(c, 9, "slot %u: signature not found or repeated", c->used[j]);
  return PQ_OK;
}

/* Invariants 10, 11, 14: free stack, counters, head. */
static int check_rest(struct ck *c) {
  pq_t *pq = c->pq;
  const struct pq_hdr *h = pq->hdr;
  memset(c->mark, 0, pq->nslots);
  uint64_t nfree = 0;
  for (uint32_t s = h->hd_free_top; s != PQ_NIL; s = pq->rl[s].rl_next) {
    if (s >= pq->nslots || c->mark[s] ||
        pq__slot_state(&pq->slots[s]) != PQ_SLOT_FREE)
      return fail(c, 10,
                  "free-slot stack: slot %u in use, repeated or out "
                  "of range",
                  s);
    c->mark[s] = 1;
    nfree++;
  }
  if (nfree != pq->nslots - c->nused || nfree != h->hd_nfree_slots)
    return fail(c, 10, "free-slot stack holds %llu, %llu slots are free",
                (unsigned long long)nfree,
                (unsigned long long)(pq->nslots - c->nused));
  uint64_t bytes = 0, gaps = 0, pos = 0;
  for (uint32_t j = 0; j < c->nused; j++) { /* sorted by check_overlap() */
    bytes += pq->slots[c->used[j]].ps_extent;
    gaps += pq->slots[c->used[j]].ps_offset > pos;
    pos = pq__slot_end(pq, c->used[j]);
  }
  gaps += pos < pq->data_size;
  if (h->hd_nfree_regions != gaps || h->hd_maxfree_regions < gaps)
    return fail(c, 11, "counters say %llu free regions (most %llu), %llu seen",
                (unsigned long long)h->hd_nfree_regions,
                (unsigned long long)h->hd_maxfree_regions,
                (unsigned long long)gaps);
  if (h->hd_nprods != c->ncomm || h->hd_nresv != c->nused - c->ncomm ||
      h->hd_nbytes != bytes)
    return fail(c, 11,
                "counters say %llu products, %llu reservations, %llu bytes; "
                "slots say %u, %u, %llu",
                (unsigned long long)h->hd_nprods,
                (unsigned long long)h->hd_nresv,
                (unsigned long long)h->hd_nbytes, c->ncomm, c->nused - c->ncomm,
                (unsigned long long)bytes);
  if (h->hd_head > pq->data_size || h->hd_head % PQ_ALIGN != 0)
    return fail(c, 14, "write head %llu misaligned or past the data area",
                (unsigned long long)h->hd_head);
  char why[200];
  if (pq__head_vet(pq, why, sizeof why) != PQ_OK)
    return fail(c, 14, "%s", why);
  return PQ_OK;
}

/* Invariant 15: every committed product's bytes match their CRC32C. */
static int check_sums(struct ck *c) {
  pq_t *pq = c->pq;
  for (uint32_t j = 0; j < c->ncomm; j++) {
    uint32_t i = c->comm[j];
    const struct pq_slot *s = &pq->slots[i];
    pq_prod_info info;
    const uint8_t *data;
    if (pq__rec_decode(pq, i, &info, &data) != PQ_OK) /* checked before */
      return fail(c, 13, "slot %u: malformed product record", i);
    uint32_t crc = pq__prod_crc(pq, i, &info, data);
    if (crc != s->ps_crc) {
      char when[32];
      pq_ts_format(pq_ts_from_us(s->ps_key), when, sizeof when);
      return fail(c, 15,
                  "slot %u: product inserted %s is damaged (crc32c %08x, "
                  "its slot says %08x): %s",
                  i, when, crc, s->ps_crc, info.ident);
    }
  }
  return PQ_OK;
}

static uint64_t reclaim_dead(pq_t *pq) {
  uint64_t n = 0;
  pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
  for (uint32_t i = 0; i < pq->nslots; i++)
    n += (uint64_t)pq__reclaim_if_dead(pq, i);
  pq__mutate_end(pq);
  return n;
}

int pq_check(pq_t *pq, pq_check_report *report) {
  int rc = pq__check_call(pq, report != NULL, "pq_check: NULL report");
  if (rc != PQ_OK)
    return rc;
  memset(report, 0, sizeof *report);
  struct ck c = {.pq = pq,
                 .r = report,
                 .look_only = pq->readonly || !pq->map_writable,
                 .intent = PQ_NIL};
  uint64_t repairs = pq->hdr->hd_repairs;
  if (!c.look_only) {
    rc = pq__ctl_lock(pq, true);
  } else {
    /* Look without taking part: no repair, no upgrade attempt. */
    rc = pq__ctl_take(pq, false) < 0
             ? PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_SETLKW) on %s",
                        pq->path)
             : PQ_OK;
    if (rc == PQ_OK)
      pq->ctl = PQ__SHARED;
  }
  if (rc != PQ_OK)
    return rc;
  const struct pq_hdr *h = pq->hdr;
  report->pr_repaired = h->hd_repairs != repairs;
  pq_error e;
  if (pq__hdr_validate(pq->hdr, pq->map_size, &e) != PQ_OK) {
    rc = fail(&c, 1, "%s", e.pe_msg);
    goto out;
  }
  /* Outside a critical section, a dirty flag is a crash's trace (invariant
   * 2 holds for whoever holds the lock): only a look-only check sees it,
   * since the lock repairs it for the others. */
  report->pr_interrupted = h->hd_dirty != 0;
  if (report->pr_interrupted && !c.look_only) {
    rc = fail(&c, 2, "still dirty after the lock's repair");
    goto out;
  }
  if (report->pr_interrupted &&
      (h->hd_intent_op == PQ_OP_RESERVE || h->hd_intent_op == PQ_OP_COMMIT))
    c.intent = h->hd_intent_slot;
  if (!c.look_only)
    report->pr_reclaimed = reclaim_dead(pq);
  c.used = malloc((size_t)pq->nslots * sizeof *c.used);
  c.comm = malloc((size_t)pq->nslots * sizeof *c.comm);
  c.mark = malloc(pq->nslots);
  if (c.used == NULL || c.comm == NULL || c.mark == NULL) {
    rc = PQ__FAIL(pq, PQ_NOMEM, 0, "checking %s", pq->path);
    goto out;
  }
  rc = check_slots(&c);
  if (rc == PQ_OK)
    rc = check_overlap(&c);
  /* After a crash, the repair rebuilds the derived indexes: only what it
   * keeps (the slots, their regions, the products) is worth checking. */
  if (rc == PQ_OK && !report->pr_interrupted)
    rc = check_rlist(&c);
  if (rc == PQ_OK && !report->pr_interrupted)
    rc = check_time(&c);
  if (rc == PQ_OK && !report->pr_interrupted)
    rc = check_hash(&c);
  if (rc == PQ_OK && !report->pr_interrupted)
    rc = check_rest(&c);
  if (rc == PQ_OK)
    rc = check_sums(&c);
out:
  pq__ctl_unlock(pq);
  free(c.used);
  free(c.comm);
  free(c.mark);
  return rc;
}

/* The header's roots, into slot i (0: before, 1: after) of r. */
static void note_roots(const pq_t *pq, pq_repair_report *r, int i) {
  const struct pq_hdr *h = pq->hdr;
  r->rr_products[i] = h->hd_nprods;
  r->rr_head[i] = h->hd_head;
  r->rr_head_prev[i] = h->hd_head_prev;
  r->rr_last_key[i] = h->hd_last_key;
  r->rr_free_slots[i] = h->hd_nfree_slots;
}

/* After the rebuild: drop the products whose bytes fail their CRC. */
static uint64_t drop_damaged_bytes(pq_t *pq, pq_drop_fn *fn, void *arg) {
  uint64_t dropped = 0;
  pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
  for (uint32_t i = 0; i < pq->nslots; i++) {
    pq_prod_info info;
    const uint8_t *data;
    if (pq__slot_state(&pq->slots[i]) == PQ_SLOT_COMMITTED &&
        pq__rec_decode(pq, i, &info, &data) == PQ_OK &&
        pq__prod_crc(pq, i, &info, data) != pq->slots[i].ps_crc) {
      pq__drop_note(pq, i, "bytes fail their CRC32C", fn, arg);
      pq__slot_release(pq, i, false);
      dropped++;
    }
  }
  pq__mutate_end(pq);
  return dropped;
}

int pq_repair_ex(pq_t *pq, pq_repair_report *report, pq_drop_fn *fn,
                 void *arg) {
  int rc = pq__check_owner(pq);
  if (rc != PQ_OK)
    return rc;
  if (pq->readonly || !pq->map_writable)
    return PQ__FAIL(pq, PQ_NOWRITE, 0, "%s is open read-only", pq->path);
  pq_repair_report local = {.rr_dropped = 0};
  pq_repair_report *r = report != NULL ? report : &local;
  memset(r, 0, sizeof *r);
  rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK)
    return rc;
  note_roots(pq, r, 0);
  pq__mutate_begin(pq, PQ_OP_NONE, PQ_NIL);
  rc = pq__rebuild_noting(pq, &r->rr_dropped, NULL, fn, arg);
  /* The rebuild keeps every product whose record is sound; those whose
   * bytes fail their CRC (invariant 15) cannot be read either. */
  if (rc == PQ_OK)
    r->rr_dropped += drop_damaged_bytes(pq, fn, arg);
  note_roots(pq, r, 1);
  pq__ctl_unlock(pq);
  return rc;
}

int pq_repair(pq_t *pq, uint64_t *ndropped) {
  pq_repair_report r;
  int rc = pq_repair_ex(pq, &r, NULL, NULL);
  if (ndropped != NULL)
    *ndropped = rc == PQ_OK ? r.rr_dropped : 0;
  return rc;
}
