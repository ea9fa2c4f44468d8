/*
 * layout.c - where each section of a queue file lies, and how a header is
 * told apart from anything else: the geometry computed from a size and a
 * slot count (and the largest product it leaves room for), the layout
 * signature that changes whenever a structure of format.h changes, the
 * header checksum, and the validation pq_open() runs before it trusts a
 * single offset of a file.
 */
#include <stddef.h>
#include <string.h>

#include "pq/internal.h"

#define RND(x, a) (((x) + (a)-1) / (a) * (a))

uint64_t pq__hash64(const void *p, size_t n, uint64_t seed) {
  const uint8_t *b = p;
  uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, b, 8);
    h = (h ^ (w * 0xff51afd7ed558ccdULL)) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    b += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, b, n);
  h = (h ^ (w * 0xff51afd7ed558ccdULL)) * 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 32;
  return h;
}

static unsigned levels_for(uint64_t nslots) {
  unsigned lv = 1;
  uint64_t reach = 1;
  while (reach < nslots && lv < PQ_MAX_LEVELS) {
    reach *= 4;
    lv++;
  }
  return lv;
}

int pq__geometry(uint64_t data_size, uint64_t nslots, struct pq__geometry *g) {
  if (data_size < PQ_MIN_DATA_SIZE || nslots < PQ_MIN_SLOTS)
    return PQ_TOOSMALL;
  if (nslots > PQ_MAX_SLOTS || data_size > (UINT64_C(1) << 60))
    return PQ_TOOBIG;
  memset(g, 0, sizeof *g);
  g->nslots = nslots;
  g->levels = levels_for(nslots);
  g->node_stride = (g->levels + 1) * sizeof(uint32_t);
  g->hash_size = 16;
  while (g->hash_size < 2 * nslots)
    g->hash_size *= 2;
  g->slot_off = PQ_WGEN_OFF + PQ_PAGE;
  g->node_off = RND(g->slot_off + nslots * sizeof(struct pq_slot), PQ_PAGE);
  g->rlist_off = RND(g->node_off + (nslots + 1) * g->node_stride, PQ_PAGE);
  g->hash_off =
      RND(g->rlist_off + (nslots + 1) * sizeof(struct pq_rlink), PQ_PAGE);
  g->data_off = RND(g->hash_off + g->hash_size * sizeof(uint64_t), PQ_PAGE);
  g->data_size = RND(data_size, PQ_PAGE);
  g->file_size = g->data_off + g->data_size;
  return PQ_OK;
}

uint64_t pq_default_slots(uint64_t data_size) {
  uint64_t n = data_size / PQ_AVG_PRODUCT_SIZE;
  if (n < PQ_MIN_SLOTS)
    n = PQ_MIN_SLOTS;
  if (n > PQ_MAX_SLOTS)
    n = PQ_MAX_SLOTS;
  return n;
}

uint64_t pq_file_size(uint64_t data_size, uint64_t slots) {
  struct pq__geometry g;
  if (pq__geometry(data_size, slots ? slots : pq_default_slots(data_size),
                   &g) != PQ_OK)
    return 0;
  return g.file_size;
}

uint64_t pq_max_product_size(const pq_t *pq, size_t origin_len,
                             size_t ident_len) {
  /* The inverse of the PQ_BIG test of pq_reserve(): the record header takes
   * its rounded extent and the data the rest (data_size is a multiple of
   * PQ_PAGE, so the rest needs no rounding). */
  uint64_t head =
      pq__rec_extent(origin_len < PQ_ORIGIN_MAX ? origin_len : PQ_ORIGIN_MAX,
                     ident_len < PQ_IDENT_MAX ? ident_len : PQ_IDENT_MAX, 0);
  return pq->data_size > head ? pq->data_size - head : 0;
}

uint64_t pq__layout_signature(void) {
  /* Sizes and offsets of every structure in the file, and the constants
   * that shape it: a binary built with another layout refuses the file. */
  const uint64_t shape[] = {
      sizeof(struct pq_hdr),
      offsetof(struct pq_hdr, hd_dirty),
      offsetof(struct pq_hdr, hd_last_key),
      offsetof(struct pq_hdr, hd_maxprods),
      offsetof(struct pq_hdr, hd_nfree_regions),
      offsetof(struct pq_hdr, hd_commit_seq),
      offsetof(struct pq_hdr, hd_sleepers),
      offsetof(struct pq_hdr, hd_wwait),
      PQ_LOCK_INTENT,
      PQ_LOCK_WAITER,
      PQ_MAX_WAITERS,
      sizeof(struct pq_slot),
      offsetof(struct pq_slot, ps_sig),
      offsetof(struct pq_slot, ps_owner),
      offsetof(struct pq_slot, ps_crc),
      sizeof(struct pq_rlink),
      sizeof(struct pq_rec),
      offsetof(struct pq_rec, rc_size),
      PQ_ALIGN,
      PQ_PAGE,
      PQ_MAX_LEVELS,
      PQ_MAX_WRITERS,
      PQ_LOCK_WRITER,
      PQ_WGEN_OFF,
      PQ_SLOT_FREE,
      PQ_SLOT_RESERVED,
      PQ_SLOT_COMMITTED,
      PQ_REC_MAGIC,
  };
  return pq__hash64(shape, sizeof shape, 0x4c444d5051ULL);
}

uint64_t pq__hdr_checksum(const struct pq_hdr *h) {
  return pq__hash64(h, offsetof(struct pq_hdr, hd_csum), 0x68647263ULL);
}

int pq__hdr_validate(const struct pq_hdr *h, uint64_t file_size, pq_error *e) {
  if (h->hd_magic != PQ_MAGIC)
    return pq__fail(e, PQ_FORMAT, 0, "bad magic number: not a product queue");
  if (h->hd_version != PQ_VERSION_NUM)
    return pq__fail(e, PQ_VERSION, 0,
                    "format version %u, this program reads version %u",
                    h->hd_version, PQ_VERSION_NUM);
  if (h->hd_hdr_size != sizeof(struct pq_hdr) ||
      h->hd_layout != pq__layout_signature())
    return pq__fail(e, PQ_FORMAT, 0,
                    "layout signature differs: queue made by an "
                    "incompatible build");
  if (h->hd_csum != pq__hdr_checksum(h))
    return pq__fail(e, PQ_FORMAT, 0, "header checksum mismatch: damaged");
  struct pq__geometry g;
  if (pq__geometry(h->hd_data_size, h->hd_nslots, &g) != PQ_OK ||
      g.levels != h->hd_levels || g.node_stride != h->hd_node_stride ||
      g.hash_size != h->hd_hash_size || g.slot_off != h->hd_slot_off ||
      g.node_off != h->hd_node_off || g.rlist_off != h->hd_rlist_off ||
      g.hash_off != h->hd_hash_off || g.data_off != h->hd_data_off ||
      g.data_size != h->hd_data_size || g.file_size != h->hd_file_size)
    return pq__fail(e, PQ_FORMAT, 0, "inconsistent geometry in header");
  if (file_size != h->hd_file_size)
    return pq__fail(
        e, PQ_FORMAT, 0, "file is %llu bytes, header says %llu: truncated?",
        (unsigned long long)file_size, (unsigned long long)h->hd_file_size);
  return PQ_OK;
}
