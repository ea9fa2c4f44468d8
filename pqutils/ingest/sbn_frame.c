/*
 * sbn_frame.c - owns the reading of SBN frames out of a byte stream: the
 * resynchronisation on 0xFF and a valid frame header, the checks of the
 * frame, product-definition and product-specific headers in LDM 6.15's
 * order with its log lines, the time-sync and test frames passed over, and
 * gap detection on the frame sequence numbers with its counters
 * (docs/noaaport.md, "Frames" and "Log lines").
 *
 * Each call first works out, without logging or changing any state, what
 * LDM would decide about the frame at hand and how many bytes that
 * decision reads; only when they are all present (or at the end of the
 * input) does it log and move on.  So a frame split across calls is
 * decided once.
 */
#include "pqutils/ingest/sbn_frame.h"

#include <string.h>

/* What LDM does with a frame whose frame header was accepted. */
enum verdict {
  V_BAD_CMD,     /* "Unknown sbn command/version" */
  V_BAD_CHANNEL, /* "Unknown NOAAport channel" */
  V_BAD_PDH,     /* "Error: PDH transfer type ..., PUNT" */
  V_TIMESYNC,    /* no PSH and transfer type 0: passed over */
  V_NO_PSH,      /* PSH length negative: "problem reading psh" */
  V_SYNC_PSH,    /* time sync with a PSH: the PSH is read, then dropped */
  V_FRAME,       /* a frame for reassembly */
};

void np_sbn_init(struct np_sbn *r, const struct np_log *lg) {
  memset(r, 0, sizeof *r);
  r->log = lg;
}

static uint16_t be16(const uint8_t *p) {
  return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* The frame-header checks of docs/noaaport.md, "Frames": checksum (the
 * plain sum of bytes 0-13), then the command.  Logs a failure. */
static bool fh_valid(const struct np_sbn *r, const uint8_t *fh) {
  unsigned sum = 0;
  for (int i = 0; i < 14; i++)
    sum += fh[i];
  unsigned stored = be16(fh + 14);
  if (sum != stored) {
    np_log(r->log, NP_ERROR, "SBN checksum invalid %u %u", sum, stored);
    return false;
  }
  if (fh[0] != 0xFF)
    return false;
  if (fh[4] != NP_CMD_DATA && fh[4] != NP_CMD_TIMESYNC &&
      fh[4] != NP_CMD_TEST) {
    np_log(r->log, NP_ERROR, "Invalid SBN command %d", fh[4]);
    return false;
  }
  return true;
}

/*
 * The frame and product-definition headers.  LDM reads 16 bytes of FH and
 * 16 of PDH, then parses the PDH at the FH's stated length; a length above
 * 16 bytes would have it parse bytes it has not read (stale memory), so
 * the PDH is then taken right after the 16 bytes of FH.
 */
static void parse_headers(const uint8_t *p, struct np_frame *f) {
  memset(f, 0, sizeof *f);
  f->command = p[4];
  f->datastream = p[5];
  f->source = p[6];
  f->destination = p[7];
  f->fh_seq = be32(p + 8);
  f->run = be16(p + 12);
  unsigned fh_len = (p[2] & 15u) * 4u;
  const uint8_t *d = p + (fh_len < NP_FH_LEN ? fh_len : NP_FH_LEN);
  f->pdh_version = d[0] >> 4;
  f->pdh_len = (uint8_t)((d[0] & 15u) * 4u);
  f->tt = d[1];
  f->hdr_len = be16(d + 2);
  f->block = be16(d + 4);
  f->data_off = be16(d + 6);
  f->data_len = be16(d + 8);
  f->recs_per_block = d[10];
  f->blocks_per_rec = d[11];
  f->prod_seq = be32(d + 12);
  f->psh_len = (int)f->hdr_len - (int)f->pdh_len;
  f->has_psh = f->psh_len != 0;
}

static size_t pdh_excess(const struct np_frame *f) {
  return f->pdh_len > NP_PDH_LEN ? (size_t)f->pdh_len - NP_PDH_LEN : 0;
}

/* Where the PSH starts: after the FH, 16 bytes of PDH and its excess. */
static size_t psh_at(const struct np_frame *f) {
  return NP_FH_LEN + NP_PDH_LEN + pdh_excess(f);
}

/* LDM's decision on a frame (FH version from FH byte 2), and the bytes
 * from the frame's start that the decision reads. */
static enum verdict judge(const struct np_frame *f, unsigned fh_version,
                          size_t *need) {
  *need = NP_FH_LEN + NP_PDH_LEN;
  if ((f->command != NP_CMD_DATA && f->command != NP_CMD_TIMESYNC) ||
      fh_version != 1)
    return V_BAD_CMD;
  if (f->datastream < 1 || f->datastream > 13)
    return V_BAD_CHANNEL;
  *need = psh_at(f);
  if (f->pdh_version != 1)
    return V_BAD_PDH;
  if (f->psh_len == 0 && f->tt == 0)
    return V_TIMESYNC;
  if (f->psh_len < 0)
    return V_NO_PSH;
  *need += (size_t)f->psh_len;
  if (f->psh_len > 0 && f->command == NP_CMD_TIMESYNC)
    return V_SYNC_PSH;
  *need += f->data_len;
  return V_FRAME;
}

static void parse_psh(const uint8_t *p, struct np_psh *h) {
  h->opt_field_num = p[0];
  h->opt_field_type = p[1];
  h->len = be16(p + 2);
  h->version = p[4];
  h->flag = p[5];
  h->awips_len = be16(p + 6);
  h->bytes_per_record = be16(p + 8);
  h->type = p[10];
  h->category = p[11];
  h->code = be16(p + 12);
  h->nfrag = be16(p + 14);
  h->next_off = be16(p + 16);
  h->reserved = p[18];
  h->source = p[19];
  h->orig_seq = be32(p + 20);
  h->ncf_recv = be32(p + 24);
  h->ncf_send = be32(p + 28);
  h->run_id = be16(p + 32);
  h->orig_run_id = be16(p + 34);
}

/* Gap detection (docs/noaaport.md, "Log lines"): the frames that get past
 * the time-sync skip. */
static void gap_check(struct np_sbn *r, const struct np_frame *f) {
  if (r->have_prev) {
    uint32_t delta = f->fh_seq - r->prev_fh_seq;
    if (delta == 0 || delta > 0x7FFFFFFFu) {
      np_log(r->log, NP_WARN,
             "Retrograde packet number: previous=%u, latest=%u, "
             "difference=%u",
             r->prev_fh_seq, f->fh_seq, delta);
    } else {
      uint32_t missed = delta - 1;
      bool next = (f->prod_seq == r->prev_prod_seq &&
                   f->block == (uint32_t)r->prev_block + 1) ||
                  (f->prod_seq == r->prev_prod_seq + 1 && f->block == 0);
      if (missed != 0 && next) {
        np_log(r->log, NP_DEBUG, "%u non-data frame(s) missed", missed);
      } else if (missed != 0) {
        np_log(r->log, NP_WARN, "Gap in packet sequence: %u to %u [skipped %u]",
               r->prev_fh_seq, f->fh_seq, missed);
        np_log(r->log, NP_WARN,
               "prevProdSeqNum=%u, pdh->seqno=%u, prevBlockNum=%u, "
               "pdh->dbno=%u",
               r->prev_prod_seq, f->prod_seq, r->prev_block, f->block);
        r->counts.missed += missed;
      }
      r->counts.frames++;
    }
  }
  r->have_prev = true;
  r->prev_fh_seq = f->fh_seq;
  r->prev_prod_seq = f->prod_seq;
  r->prev_block = f->block;
}

void np_sbn_gap(struct np_sbn *r, const struct np_frame *f) {
  gap_check(r, f);
}

/* The logged checks up to the PSH, in LDM's order.  @return whether the
 * frame goes on to gap detection (else *pos is set past it) */
static bool early_checks(struct np_sbn *r, const struct np_frame *f,
                         enum verdict v, size_t avail, size_t at, size_t *pos) {
  if (np_log_on(r->log, NP_INFO)) {
    np_log(r->log, NP_INFO, "SBN seqnumber %u", f->fh_seq);
    np_log(r->log, NP_INFO, "SBN datastream %d command %d", f->datastream,
           f->command);
  }
  *pos = at + NP_FH_LEN + NP_PDH_LEN;
  if (v == V_BAD_CMD) {
    np_log(r->log, NP_ERROR, "Unknown sbn command/version %d PUNT", f->command);
    return false;
  }
  if (v == V_BAD_CHANNEL) {
    np_log(r->log, NP_ERROR, "Unknown NOAAport channel %d PUNT", f->datastream);
    return false;
  }
  if (avail < psh_at(f))
    return false; /* end of input within the PDH's excess */
  *pos = at + psh_at(f);
  if (v == V_BAD_PDH) {
    np_log(r->log, NP_ERROR, "Error: PDH transfer type %u, PUNT", f->tt);
    return false;
  }
  if (f->tt & NP_TT_ERROR)
    np_log(r->log, NP_ERROR, "Product transfer flag error %u", f->tt);
  if (f->tt & NP_TT_ABORT)
    np_log(r->log, NP_ERROR, "Product transfer flag error %u", f->tt);
  return v != V_TIMESYNC;
}

/* The PSH and the data block of a frame past gap detection.  @return
 * whether the frame goes to reassembly */
static bool read_rest(struct np_sbn *r, struct np_frame *f, enum verdict v,
                      const uint8_t *p, size_t avail, size_t *pos) {
  size_t off = psh_at(f);
  if (f->psh_len != 0) {
    if (v == V_NO_PSH || avail - off < (size_t)f->psh_len) {
      np_log(r->log, NP_ERROR, "problem reading psh");
      return false;
    }
    *pos += (size_t)f->psh_len;
    if (v == V_SYNC_PSH)
      return false;
    /* LDM parses 36 bytes whatever it read: a shorter PSH would have it
     * read stale memory; its missing bytes are taken as 0 instead. */
    uint8_t h[NP_PSH_LEN] = {0};
    memcpy(h, p + off,
           f->psh_len < NP_PSH_LEN ? (size_t)f->psh_len : NP_PSH_LEN);
    parse_psh(h, &f->psh);
    off += (size_t)f->psh_len;
    if (f->psh.len != f->psh_len) {
      np_log(r->log, NP_ERROR, "ERROR in calculation of psh len %d %d",
             f->psh.len, f->pdh_len);
      f->psh_bad = true;
      f->raw_len = off;
      return true;
    }
    if (f->psh.orig_run_id != 0)
      np_log(r->log, NP_ERROR, "original runid %d", f->psh.orig_run_id);
  }
  if (avail - off < f->data_len) {
    f->truncated = true;
    f->raw_len = off;
    return true;
  }
  f->data = p + off;
  f->raw_len = off + f->data_len;
  *pos += f->data_len;
  return true;
}

/*
 * The frame whose valid FH starts at buf[at].  @return NP_SBN_FRAME,
 * NP_SBN_MORE (nothing done: *pos left at the frame), or -1 (the frame was
 * passed over: *pos set after what LDM consumed of it).
 */
static int take_frame(struct np_sbn *r, const uint8_t *buf, size_t len,
                      size_t at, size_t *pos, struct np_frame *f, bool eof) {
  size_t avail = len - at;
  if (avail < NP_FH_LEN + NP_PDH_LEN) {
    if (!eof)
      return NP_SBN_MORE;
    *pos = at + NP_FH_LEN; /* the PDH cannot be read */
    return -1;
  }
  const uint8_t *p = buf + at;
  parse_headers(p, f);
  size_t need;
  enum verdict v = judge(f, p[2] >> 4, &need);
  if (avail < need && !eof)
    return NP_SBN_MORE;
  if (!early_checks(r, f, v, avail, at, pos))
    return -1;
  if (!r->no_gaps)
    gap_check(r, f);
  if (!read_rest(r, f, v, p, avail, pos))
    return -1;
  f->raw = p;
  return NP_SBN_FRAME;
}

/* Step 1 of the resync rule: skip to the next 0xFF, logging the first byte
 * of a run.  @return whether a 0xFF is at *pos */
static bool skip_junk(struct np_sbn *r, const uint8_t *buf, size_t len,
                      size_t *pos) {
  size_t p = *pos;
  if (buf[p] == 0xFF)
    return true;
  if (!r->resyncing) {
    np_log(r->log, NP_INFO, "Trying to resync %u", buf[p]);
    r->resyncing = true;
  }
  const uint8_t *ff = memchr(buf + p, 0xFF, len - p);
  *pos = ff != NULL ? (size_t)(ff - buf) : len;
  return ff != NULL;
}

/*
 * Steps 2 to 4 of the resync rule from the 0xFF at *pos.  @return the
 * offset of a valid frame header, or SIZE_MAX with *pos moved past what
 * was discarded, or SIZE_MAX - 1 if more bytes are needed (*pos at the
 * candidate to look at again).
 */
static size_t find_header(struct np_sbn *r, const uint8_t *buf, size_t len,
                          size_t *pos, bool eof) {
  size_t c = *pos;
  if (len - c < NP_FH_LEN && !eof)
    return SIZE_MAX - 1;
  r->resyncing = false; /* LDM has read the 0xFF */
  if (len - c < NP_FH_LEN) {
    /* The 15 bytes after it cannot be read; after a shift, LDM's read of
     * the shifted bytes fails and the whole candidate it had is gone. */
    *pos = c + (r->shift_left ? r->shift_left : 1);
    r->shift_left = 0;
    return SIZE_MAX;
  }
  r->shift_left = 0;
  while (!fh_valid(r, buf + c)) {
    const uint8_t *ff = memchr(buf + c + 1, 0xFF, NP_FH_LEN - 1);
    if (ff == NULL) {
      *pos = c + NP_FH_LEN;
      return SIZE_MAX;
    }
    size_t k = (size_t)(ff - buf);
    if (len - k < NP_FH_LEN && eof) {
      *pos = c + NP_FH_LEN;
      return SIZE_MAX;
    }
    if (len - k < NP_FH_LEN) {
      *pos = k;
      r->shift_left = (unsigned)(c + NP_FH_LEN - k);
      return SIZE_MAX - 1;
    }
    c = k;
  }
  return c;
}

int np_sbn_next(struct np_sbn *r, const uint8_t *buf, size_t len, size_t *pos,
                struct np_frame *f, bool eof) {
  while (*pos < len) {
    if (!skip_junk(r, buf, len, pos))
      break;
    size_t at = find_header(r, buf, len, pos, eof);
    if (at == SIZE_MAX - 1)
      return NP_SBN_MORE;
    if (at == SIZE_MAX)
      continue;
    int rc = take_frame(r, buf, len, at, pos, f, eof);
    if (rc == NP_SBN_MORE) {
      *pos = at;
      return NP_SBN_MORE;
    }
    if (rc == NP_SBN_FRAME)
      return NP_SBN_FRAME;
  }
  return NP_SBN_MORE;
}
