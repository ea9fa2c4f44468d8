// clang-format off
/*
 * format.h - the queue file format, in one place.
 *
 * Everything in the file is a fixed-width little-endian field at a fixed
 * offset; no pointers, size_t, off_t or pthread objects.  Cross references are
 * slot numbers (uint32) or byte offsets (uint64).  The code reads fields
 * natively and refuses to build on a big-endian host (see the static_asserts
 * at the end), so the file is portable between little-endian machines.
 *
 * LAYOUT (every section starts on a 4 KiB boundary)
 *
 *   [0, 4096)            header (struct pq_hdr)
 *   [4096, 8192)         writer generations: uint32 per writer lock byte
 *   slot_off             slot table: nslots x struct pq_slot (64 B), the truth
 *   node_off             time-index nodes: (nslots + 1) x node_stride bytes
 *   rlist_off            region list: (nslots + 1) x struct pq_rlink
 *   hash_off             signature hash: hash_size x uint64
 *   data_off             data area: data_size bytes, to the end of the file
 *
 * Only the slot table (with the header's last_key, head and statistics) is
 * primary.  The time index, the region list, the free-slot stack and the
 * signature hash are derived: pq__rebuild() recomputes them from the slots.
 *
 * SLOT STATES
 *
 *     FREE --reserve--> RESERVED --commit--> COMMITTED
 *       ^                  |                     |
 *       +----discard/------+                     |
 *       |    reclaim (owner dead)                |
 *       +---------- evict / delete --------------+
 *
 * and a repair (pq/repair.c) frees any used slot it finds damaged.
 *
 * A slot's state and checksum are one 64-bit word (ps_word), written last
 * with one atomic store after the other fields: a process that dies while
 * changing a slot leaves it either in its old state or its new one, and the
 * header's intent record names the slot whose checksum may then be stale.
 *
 * A product's region in the data area holds a record header (struct
 * pq_rec), the origin and ident strings, padding to 8 bytes, then the data.
 *
 * NUMBERED INVARIANTS (verified by pq_check(), pq/check.c)
 *   1. The header's magic, version, layout signature, checksum and geometry
 *      are valid and match the file's size.
 *   2. Outside a control-lock critical section the dirty flag is clear.
 *   3. Every slot's checksum matches its contents and its state is valid.
 *   4. Every used (reserved or committed) slot's region lies inside the data
 *      area, is 8-byte aligned, and holds its record.
 *   5. The regions of used slots do not overlap.
 *   6. The region list links exactly the used slots, in increasing offset
 *      order, with consistent back links.
 *   7. Level 0 of the time index links exactly the committed slots in
 *      strictly increasing insertion time, with consistent back links; every
 *      higher level is the subsequence of the nodes tall enough for it; the
 *      level tails are the last nodes of each level.
 *   8. Every insertion time lies in [1, last_key], and last_key is at most
 *      PQ_KEY_MAX.
 *   9. The signature hash holds exactly the used slots, each reachable from
 *      its home bucket without crossing an empty bucket, no signature twice.
 *  10. The free-slot stack holds exactly the free slots, once each.
 *  11. The header's counters (products, reservations, bytes, free regions)
 *      equal the tallies of the slots; a free region is a gap before, between
 *      or after the used regions in address order.
 *  12. Every reservation belongs to a live writer (none leaked).
 *  13. Every committed product's record is well formed: magic, string
 *      lengths within LDM's bounds and NUL-free, data inside the region.
 *  14. The write head follows its region: hd_head_prev is the region
 *      list's sentinel or a used slot, and hd_head, 8-byte aligned, lies in
 *      the free space from the end of that region (0 for the sentinel) to
 *      the start of the region after it (the end of the data area for the
 *      sentinel).  The ring places the next region at the end of
 *      hd_head_prev, which is where this build keeps hd_head; an older one
 *      left it further on after freeing the region before it.
 *  15. Every committed product's bytes (record, strings, padding and data)
 *      match the CRC32C its slot keeps (ps_crc, set at commit).
 *
 * A committed slot's ps_checked is the one field readers write: a mark that
 * a reader found the product sound, which verifying readers in "once" mode
 * trust instead of computing the CRC again (pq_set_verify()).  It is no
 * invariant: any value other than the product's own mark means unchecked.
 *
 * (clang-format is off for this comment: its tables and diagram are laid
 * out by hand, and a reflow garbled them once.)
 */
// clang-format on
#ifndef PQ_FORMAT_H
#define PQ_FORMAT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h" /* PQ_MAX_WRITERS */

#define PQ_MAGIC 0x3151505f4d444cULL /* "LDM_PQ1\0" read little-endian */
/* 2: a committed slot's ps_owner bytes became the check mark ps_checked,
 * outside its slot checksum (docs/queue-format.md, section 18). */
#define PQ_VERSION_NUM 2u
#define PQ_PAGE 4096u
#define PQ_ALIGN 8u
#define PQ_MAX_LEVELS 16u
#define PQ_NIL 0xffffffffu /* "no slot" in links */
/* Insertion times are microseconds in [1, PQ_KEY_MAX] (year 146,000). */
#define PQ_KEY_MAX (UINT64_C(1) << 62)

#define PQ_HDR_OFF 0u
#define PQ_WGEN_OFF 4096u /* writer generation table */

// clang-format off
/*
 * LOCK-BYTE MAP (fcntl open-file-description locks; see pq/lock.c)
 *   byte 0                      control lock: shared to read the indexes,
 *                               exclusive to change them
 *   byte 1                      intent lock: held exclusive by a writer
 *                               waiting for the control lock, so that
 *                               new readers queue behind it (writer
 *                               preference; bits in hd_wwait say when)
 *   bytes [LOCK_WRITER, +1024)  one byte per writer handle, held exclusive
 *                               for the handle's life (liveness + count)
 *   bytes [LOCK_WAITER, +1024)  one byte per handle that has slept in
 *                               pq_wait(), held exclusive for the handle's
 *                               life: tells a dead sleeper's bit in
 *                               hd_sleepers from a live one
 *   [data_off + off, +extent)   a product's region: readers hold it shared
 *                               while they use the product
 */
// clang-format on
#define PQ_LOCK_CONTROL 0u
#define PQ_LOCK_INTENT 1u    /* a writer waits for the control lock */
#define PQ_LOCK_WRITER 1024u /* inside the header page, past the fields */
#define PQ_LOCK_WAITER 2048u /* one byte per handle that has slept */
#define PQ_MAX_WAITERS 1024u

/* Values of ps_state (low half of ps_word). */
enum pq_slot_state {
  PQ_SLOT_FREE = 0x46524545u,      /* "FREE" */
  PQ_SLOT_RESERVED = 0x52535256u,  /* "RSRV" */
  PQ_SLOT_COMMITTED = 0x434f4d54u, /* "COMT" */
};

/* Intent record operations (hd_intent_op). */
enum pq_intent_op {
  PQ_OP_NONE = 0,
  PQ_OP_RESERVE = 1,
  PQ_OP_COMMIT = 2,
  PQ_OP_FREE = 3,
};

/* The header.  Immutable geometry first, covered by hd_csum; then mutable
 * state, each group on its own cache line.  No checksum covers the mutable
 * state: the roots an insert acts on (head, head_prev, free_top, the slot
 * counters, last_key, the tails) are checked against the slots they name
 * before anything is evicted (pq/roots.c). */
struct pq_hdr {
  /* --- immutable after creation --- */
  uint64_t hd_magic;
  uint32_t hd_version;
  uint32_t hd_hdr_size; /* sizeof(struct pq_hdr) */
  uint64_t hd_layout;   /* layout signature, pq__layout_signature() */
  uint64_t hd_file_size;
  uint64_t hd_nslots;
  uint64_t hd_levels;      /* time-index levels, 1..PQ_MAX_LEVELS */
  uint64_t hd_node_stride; /* bytes per time-index node */
  uint64_t hd_hash_size;   /* buckets, a power of two >= 2 * nslots */
  uint64_t hd_slot_off;
  uint64_t hd_node_off;
  uint64_t hd_rlist_off;
  uint64_t hd_hash_off;
  uint64_t hd_data_off;
  uint64_t hd_data_size;
  int64_t hd_created_us;
  uint64_t hd_csum; /* of the fields above */

  /* --- crash recovery (control lock) --- */
  uint32_t hd_dirty;     /* 1 while the control-lock holder changes things */
  uint32_t hd_intent_op; /* enum pq_intent_op */
  uint32_t hd_intent_slot;
  uint32_t hd_pad1;
  uint64_t hd_repairs; /* times a crashed change was repaired */
  uint8_t hd_pad2[64 - 24];

  /* --- index roots and counters (control lock) --- */
  uint64_t hd_last_key;  /* newest insertion time assigned, microseconds */
  uint64_t hd_head;      /* write head: offset in the data area, the end
                            of hd_head_prev's region (invariant 14) */
  uint32_t hd_head_prev; /* region (slot) just before the head; nslots (the
                            region list's sentinel) if none */
  uint32_t hd_free_top;  /* top of the free-slot stack; PQ_NIL if empty */
  uint64_t hd_nfree_slots;
  uint64_t hd_nprods;               /* committed */
  uint64_t hd_nresv;                /* reserved */
  uint64_t hd_nbytes;               /* extents of used slots */
  uint32_t hd_tails[PQ_MAX_LEVELS]; /* last node of each time-index level;
                                       nslots (the head node) if empty */
  uint8_t hd_pad25[128 - 120];

  /* --- statistics (control lock) --- */
  uint64_t hd_maxprods;
  uint64_t hd_maxbytes;
  uint64_t hd_highwater;
  uint64_t hd_minempty;
  uint64_t hd_is_full;
  int64_t hd_mvrt_us;
  uint64_t hd_mvrt_bytes;
  uint64_t hd_mvrt_slots;
  uint64_t hd_evicted;
  uint64_t hd_most_recent;   /* LDM's most_recent: hd_last_key after a commit */
  uint64_t hd_nfree_regions; /* free regions: gaps of the data area */
  uint64_t hd_maxfree_regions; /* most there have ever been (LDM's maxfree) */
  uint8_t hd_pad3[128 - 96];

  /* --- wake-ups: futex words, atomics, no lock --- */
  uint32_t hd_commit_seq; /* bumped after every commit */
  uint8_t hd_pad4[64 - 4];
  /* Readers asleep on hd_commit_seq: bit i is waiter lock byte i. */
  uint64_t hd_sleepers[PQ_MAX_WAITERS / 64];

  /* --- writer preference: atomics, no lock (pq/lock.c) --- */
  /* Writers waiting for the exclusive control lock: bit i is writer lock
   * byte i, set from before it takes the intent byte until it holds the
   * control byte.  Readers that see a bit queue behind the intent byte. */
  uint64_t hd_wwait[PQ_MAX_WRITERS / 64];
};

/* One product slot: 64 bytes. */
struct pq_slot {
  uint64_t ps_word;   /* state (low 32) | checksum (high 32): atomic */
  uint64_t ps_key;    /* insertion time (committed); reservation id */
  uint64_t ps_offset; /* region offset in the data area */
  uint64_t ps_extent; /* region bytes, multiple of PQ_ALIGN */
  uint8_t ps_sig[16];
  union {
    struct {             /* reserved: */
      uint32_t ps_owner; /* writer lock byte index */
      uint32_t ps_owner_gen;
    };
    /* committed: the check mark, PQ_CHECKED_MARK(ps_key) once a reader
     * has found the product's bytes match ps_crc, else 0 (cleared at
     * commit).  Readers store it under a product lock, so the slot
     * checksum of a committed slot leaves these bytes out. */
    uint64_t ps_checked;
  };
  uint32_t ps_feedtype;
  uint32_t ps_crc; /* CRC32C of the record and data (committed) */
};

/* The check mark of the committed product inserted at `key`: its
 * insertion time (at most PQ_KEY_MAX) with the top bit set, so that 0 and
 * every other product's mark differ from it. */
#define PQ_CHECKED_MARK(key) ((uint64_t)(key) | (UINT64_C(1) << 63))

/* Region-list links of a slot (node nslots is the sentinel). */
struct pq_rlink {
  uint32_t rl_prev;
  uint32_t rl_next; /* also the free-slot stack link of a free slot */
};

/* Record at the start of a product's region. */
#define PQ_REC_MAGIC 0x50524f44u /* "PROD" */
struct pq_rec {
  uint32_t rc_magic;
  uint16_t rc_origin_len;
  uint16_t rc_ident_len;
  int64_t rc_arrival_sec;
  int32_t rc_arrival_usec;
  uint32_t rc_feedtype;
  uint32_t rc_seqno;
  uint32_t rc_pad;
  uint64_t rc_size; /* data bytes */
  uint8_t rc_sig[16];
  /* then origin, ident (no NULs), zero padding to PQ_ALIGN, data */
};

static_assert(sizeof(struct pq_hdr) == 768, "header size");
static_assert(sizeof(struct pq_hdr) <= PQ_LOCK_WRITER,
              "the lock bytes past the control and intent bytes lie past the "
              "header's fields");
static_assert(PQ_LOCK_INTENT == PQ_LOCK_CONTROL + 1 &&
                  PQ_LOCK_INTENT < PQ_LOCK_WRITER,
              "the intent byte follows the control byte");
static_assert(sizeof(struct pq_slot) == 64, "slot size");
static_assert(offsetof(struct pq_slot, ps_checked) == 48 &&
                  offsetof(struct pq_slot, ps_owner) == 48,
              "the check mark shares the owner's bytes");
static_assert(sizeof(struct pq_rlink) == 8, "rlink size");
static_assert(sizeof(struct pq_rec) == 56, "record size");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the queue format is little-endian");

#endif /* PQ_FORMAT_H */
