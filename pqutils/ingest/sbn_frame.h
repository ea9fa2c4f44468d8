/*
 * sbn_frame.h - SBN frames out of a byte stream: synchronisation and
 * resynchronisation, the frame, product-definition and product-specific
 * headers and their checks, time-sync and test frames passed over, and
 * gap detection on the frame sequence numbers, all as LDM 6.15's
 * noaaportIngester does them (docs/noaaport.md, "Frames"; the rules'
 * source is LDM's public documentation and our own observations of it).
 *
 * The reader never relies on datagram boundaries: it is given a buffer of
 * bytes (a file, standard input, datagrams laid end to end) and finds the
 * frames in it.  It keeps no pointer into the buffer between calls; a
 * frame it returns points into the caller's buffer until the caller moves
 * those bytes.  Every length is checked against the bytes present; the
 * cost of a call is bounded by the bytes it consumes.
 *
 * It reads the stream as LDM does, sequentially: the bytes of a frame
 * rejected after its frame header was accepted are not skipped but
 * scanned again by the resynchronisation (so the position after such a
 * frame is just past the headers LDM had read).  A decision is taken, and
 * logged, only once every byte it depends on is present: a call that needs
 * more bytes logs nothing and changes nothing, so the same frame is never
 * logged twice across calls.
 *
 * Not thread-safe: one reader per input stream.
 */
#ifndef PQUTILS_INGEST_SBN_FRAME_H
#define PQUTILS_INGEST_SBN_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/ingest/np_log.h"

#define NP_FH_LEN 16  /* frame header */
#define NP_PDH_LEN 16 /* product-definition header (at least) */
#define NP_PSH_LEN 36 /* product-specific header */
/* The most bytes one frame can span: FH, a PDH of 15 words, a PSH of up to
 * 65535 bytes, 65535 bytes of data. */
#define NP_FRAME_MAX (NP_FH_LEN + 60 + 65535 + 65535)

/* Frame-header commands. */
enum { NP_CMD_DATA = 3, NP_CMD_TIMESYNC = 5, NP_CMD_TEST = 10 };

/* PDH transfer-type bits. */
enum {
  NP_TT_START = 1,
  NP_TT_PROGRESS = 2,
  NP_TT_END = 4,
  NP_TT_ERROR = 8,
  NP_TT_COMPRESSED = 16,
  NP_TT_ABORT = 32,
  NP_TT_PSH = 64,
};

/** The product-specific header (only on a product's first frame). */
struct np_psh {
  uint8_t opt_field_num, opt_field_type;
  uint16_t len; /* PSH length, bytes 2-3 */
  uint8_t version, flag;
  uint16_t awips_len;
  uint16_t bytes_per_record;
  uint8_t type;     /* product type: 1 GOES-E ... 5 NEXRAD ... */
  uint8_t category; /* 1 text, 2 graphic, 3 image, 4 grid ... */
  uint16_t code;
  uint16_t nfrag; /* 0: complete in this frame; else the block count */
  uint16_t next_off;
  uint8_t reserved, source;
  uint32_t orig_seq, ncf_recv, ncf_send;
  uint16_t run_id, orig_run_id;
};

/** One frame, as the reader hands it on: every header field parsed. */
struct np_frame {
  /* frame header */
  uint8_t command, datastream, source, destination;
  uint32_t fh_seq;
  uint16_t run;
  /* product-definition header */
  uint8_t pdh_version, pdh_len; /* pdh_len in bytes */
  uint8_t tt;                   /* transfer type */
  uint16_t hdr_len;             /* PDH + PSH */
  uint16_t block;               /* block number */
  uint16_t data_off;            /* ignored, as LDM */
  uint16_t data_len;            /* bytes of data in this frame */
  uint8_t recs_per_block, blocks_per_rec;
  uint32_t prod_seq; /* product sequence number */
  int psh_len;       /* header length minus PDH length (negative if corrupt) */
  bool has_psh;      /* a PSH came with the frame (psh_len != 0) */
  struct np_psh psh; /* valid if has_psh */
  /* The PSH's own length differs from psh_len: LDM logs "ERROR in
   * calculation of psh len" and drops the frame, but only after the PSH
   * has replaced the one of the product in progress (np_build_frame()
   * does that and nothing else with such a frame). */
  bool psh_bad;
  /* End of input came before the data block: LDM logs "problem reading
   * datablock" after the start-of-product steps (np_build_frame()). */
  bool truncated;
  const uint8_t *data; /* data_len bytes, in the caller's buffer (NULL if
                          truncated or psh_bad) */
  const uint8_t *raw;  /* the frame's bytes read, FH first */
  size_t raw_len;
};

/** Frame counters, as LDM's statistics count them. */
struct np_sbn_counts {
  uint64_t frames; /* frames counted by gap detection */
  uint64_t missed; /* frames missed (gaps, not explained) */
};

/** A reader's state. */
struct np_sbn {
  const struct np_log *log;
  bool resyncing; /* in a run of discarded bytes */
  /* The header candidate at the position is one LDM shifted to within a
   * rejected one whose last bytes are this many bytes on: if the input
   * ends before it is whole, those bytes go too.  0: not a shift. */
  unsigned shift_left;
  /* Gap detection off: the frames of several receivers are blended first
   * (frame_blend.h) and the blended stream goes to np_sbn_gap(). */
  bool no_gaps;
  bool have_prev; /* gap detection has seen a frame */
  uint32_t prev_fh_seq, prev_prod_seq;
  uint16_t prev_block;
  struct np_sbn_counts counts;
};

void np_sbn_init(struct np_sbn *r, const struct np_log *lg);

/**
 * Gap detection (and its counters and lines) for one frame of a stream
 * whose frames were found by other readers and blended: the same as
 * np_sbn_next() does for its own frames unless no_gaps is set.
 */
void np_sbn_gap(struct np_sbn *r, const struct np_frame *f);

/* What np_sbn_next() found. */
enum {
  NP_SBN_MORE = 0,  /* need more bytes: call again with the buffer grown */
  NP_SBN_FRAME = 1, /* *f is a frame for reassembly */
};

/**
 * Find the next frame for reassembly in buf[*pos, len).  Bytes that cannot
 * start a frame, and frames that are passed over (test and time-sync
 * frames, unknown commands or datastreams, a PDH of another version), are
 * consumed and logged as LDM does; *pos moves past what LDM consumes of
 * them.  A frame that is not yet whole leaves *pos at its start, with
 * nothing logged.  Every frame returned goes to np_build_frame(), those
 * marked psh_bad or truncated included.
 *
 * @param eof  no more bytes will come: what is left is read as LDM reads
 *             the end of its input (a read that cannot be satisfied
 *             consumes nothing, and the scan goes on after what was
 *             consumed) until *pos reaches len
 * @return NP_SBN_FRAME (*f filled, *pos past what was read of the frame)
 *         or NP_SBN_MORE
 */
int np_sbn_next(struct np_sbn *r, const uint8_t *buf, size_t len, size_t *pos,
                struct np_frame *f, bool eof);

#endif
