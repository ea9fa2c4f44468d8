/*
 * frame_blend.h - the blender: SBN data frames from several receivers (two
 * dishes on two interfaces, later TCP feeds), or from one receiver whose
 * datagrams come reordered, put back in uplink order with the duplicates
 * dropped, each frame released after a bounded wait.  It is LDM's separate
 * `blender` program (docs/noaaport.md, section 8) brought inside the
 * ingester, in front of reassembly (section 3), so that a site with two
 * dishes loses nothing when one fades (LDM issues #74 and #71).
 *
 * A pure in-memory module: no threads, no clock of its own (the caller
 * passes `now`, monotonic seconds), no input or output.  Memory is bounded
 * by max_bytes and a fixed set of recently released keys; each call costs
 * O(log n) in the frames held.
 *
 * Ordering (docs/noaaport.md, section 8, adapted; frame_blend.c says how
 * LDM's rules are made into one total order):
 *   - the key is (uplink id, PDH product sequence, PDH block number, FH
 *     sequence); frames sort by uplink, then product sequence, then block,
 *     sequence numbers compared circularly (a is before b when
 *     (a - b) mod 2^32 > 2^31 - 1);
 *   - an uplink is a run of frames with one FH source byte: a new byte
 *     opens one (an NCF switch), and a byte keeps its uplink until a
 *     frame of a later uplink has been released, so two receivers
 *     delivering one stream interleaved, or one receiver's reordered
 *     datagrams, never count as a switch; a byte seen again after that
 *     opens a new uplink, as LDM counts it;
 *   - a product sequence that goes back while the FH sequence goes on
 *     (LDM's "data-server switch"), or a run of NP_BLEND_STUCK frames in
 *     a row that would all be late (the stream has moved back: a corrupt
 *     frame far ahead was released), starts a new uplink too, so that no
 *     one corrupt frame can make every later frame "late".
 * Duplicates are frames whose (FH source byte, product sequence, block)
 * is held, or is among the last NP_BLEND_RECENT released: the source byte
 * stands for the uplink id there, so that a second receiver's copy is
 * still found after its uplink was reopened.  With wait_s 0 the output
 * is the input less its duplicates, in arrival order.
 *
 * Not thread-safe: one blender per ingester, fed by one thread.
 */
#ifndef PQUTILS_INGEST_FRAME_BLEND_H
#define PQUTILS_INGEST_FRAME_BLEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_log.h"
#include "pqutils/ingest/sbn_frame.h"

/* Released keys remembered for dropping a second receiver's late copies. */
#define NP_BLEND_RECENT 4096
/* Late frames in a row (none queued between) that start a new uplink. */
#define NP_BLEND_STUCK 32
/* Bytes counted for each held frame besides its raw bytes. */
#define NP_BLEND_OVERHEAD 256

struct np_blend;

/* What np_blend_put() did with a frame. */
enum {
  NP_BLEND_QUEUED = 0,  /* held until its release time */
  NP_BLEND_DUP = 1,     /* dropped: its twin is held or was just released */
  NP_BLEND_LATE = 2,    /* dropped: it orders before the last frame out */
  NP_BLEND_IGNORED = 3, /* dropped: not a data frame (command 3) */
};

/**
 * A new blender.
 *
 * @param wait_s     how long a frame may wait for earlier ones (LDM's
 *                   blender -t).  0 releases every frame at once, in
 *                   arrival order: no reordering and nothing late,
 *                   duplicates still dropped.  Negative or NaN means 0.
 * @param max_bytes  bound on the bytes held (each frame counts its raw
 *                   bytes plus NP_BLEND_OVERHEAD): while the frames held
 *                   pass it, the earliest are due at once, ahead of their
 *                   time; never a loss.  Held bytes exceed it only between
 *                   a put and the caller's draining of the due frames.
 * @param lg         where messages go (may be NULL)
 * @return the blender, or NULL if out of memory
 */
struct np_blend *np_blend_new(double wait_s, size_t max_bytes,
                              const struct np_log *lg);

/**
 * Offer a frame.  Its raw bytes are copied and the copy's data and raw
 * pointers re-pointed; the caller keeps its own.
 *
 * @param f    a frame np_sbn_next() returned; f->data must lie within
 *             f->raw's raw_len bytes
 * @param src  a short name of the receiver, for the log (e.g.
 *             "224.0.1.1@192.0.2.10"; NULL logs as "?")
 * @param now  the time, monotonic seconds
 * @return NP_BLEND_QUEUED; NP_BLEND_DUP (DEBUG "Frame from <src> is a
 *         duplicate"); NP_BLEND_LATE (WARN "Frame from <src> arrived too
 *         late to be included. Increase time window?"); NP_BLEND_IGNORED
 *         (time-sync and test frames silently, others with NOTE "Ignoring
 *         frame with command=<n>"); or -1: not taken, out of memory or a
 *         frame whose lengths do not hold (logged at ERROR)
 */
int np_blend_put(struct np_blend *b, const struct np_frame *f, const char *src,
                 double now);

/**
 * The earliest-ordered held frame, if its release time (arrival + wait_s)
 * has come, or if the frames held pass max_bytes, or if flush; else NULL.
 * As LDM's blender, the earliest-ordered frame is waited for even when a
 * later one's time has come.  The frame returned stays valid until the
 * next np_blend_next() or np_blend_free().
 */
const struct np_frame *np_blend_next(struct np_blend *b, double now,
                                     bool flush);

/**
 * When np_blend_next() will next return a frame: the earliest-ordered
 * frame's release time; -INFINITY if the frames held pass max_bytes (due
 * now); INFINITY if none is held.
 */
double np_blend_due(const struct np_blend *b);

/** Counters since np_blend_new(). */
struct np_blend_counts {
  uint64_t put;           /* frames offered */
  uint64_t dups;          /* dropped as duplicates */
  uint64_t late;          /* dropped as late */
  uint64_t forced;        /* released before their time by max_bytes */
  uint64_t held;          /* frames held now */
  uint64_t hiwater_bytes; /* most bytes held at once */
};

void np_blend_counts(const struct np_blend *b, struct np_blend_counts *c);

/** Free the blender and every frame it holds (NULL is a no-op). */
void np_blend_free(struct np_blend *b);

#endif
