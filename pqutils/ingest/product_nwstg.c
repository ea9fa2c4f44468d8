/*
 * product_nwstg.c - owns the bytes of an NWSTG-path product (every channel
 * but GOES imagery): the FOS header and trailer LDM 6.15 frames it with,
 * the stripping of the trailer the last block already carries, LDM's
 * capacity rule, -c inflating, and the HDS test of NMC-channel text at
 * completion (docs/noaaport.md, "The product built" and "Feedtypes").
 */
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/feedtype_rules.h"
#include "pqutils/ingest/product_internal.h"

static const uint8_t fos_trailer[4] = {0x0D, 0x0D, 0x0A, 0x03};

void np_fos_header(uint32_t seq, uint8_t hdr[12]) {
  /* Quirk kept (docs/noaaport.md, "The product built"): LDM takes the
   * remainder of the sequence number as a signed int, so numbers of 2^31
   * and above give a negative one.  "-123" is 4 characters: the header it
   * writes is then 12 bytes long, of which only 11 are kept, so the data
   * overwrites the final LF. */
  int r = (int)(int32_t)seq % 1000;
  char digits[8];
  snprintf(digits, sizeof digits, "%03d", r);
  size_t nd = strlen(digits);
  hdr[0] = 0x01;
  hdr[1] = 0x0D;
  hdr[2] = 0x0D;
  hdr[3] = 0x0A;
  memcpy(hdr + 4, digits, nd);
  memcpy(hdr + 4 + nd, "\x20\x0D\x0D\x0A", 12 - 4 - nd);
}

/* Whether the last block's data ends with a FOS trailer to strip: only
 * while more than 4 bytes remain. */
static size_t strip_trailers(struct np_build *b, const uint8_t *data,
                             size_t n) {
  while (n > 4 && memcmp(data + n - 4, fos_trailer, 4) == 0) {
    n -= 4;
    if (np_log_on(b->log, NP_DEBUG))
      np_log(b->log, NP_DEBUG, "removing FOS trailer from %s", b->prod_name);
  }
  return n;
}

/* -c: the block inflated onto the product; on block 0, from after its
 * clear heading (nothing if there is none). */
static void add_inflated(struct np_build *b, const struct np_frame *f,
                         const uint8_t *data, size_t n) {
  if (f->block == 0) {
    size_t skip;
    if (!np_inflate_skip_heading(data, n, &skip))
      return;
    data += skip;
    n -= skip;
  }
  np_inflate_block(b, data, n);
}

bool np_nwstg_block(struct np_build *b, const struct np_frame *f,
                    const uint8_t *data, size_t n, bool last) {
  if (last)
    n = strip_trailers(b, data, n);
  size_t have = b->bytes.len;
  if (have + n > b->capacity) {
    np_log(b->log, NP_ERROR,
           "Error in heapsize %d product size %d [%d %d], Punt!",
           (int)b->capacity, (int)(have + n), (int)have, (int)n);
    return false;
  }
  if (b->opts.inflate && f->block == 0)
    np_inflate_begin(b);
  if (b->opts.inflate && (f->tt & NP_TT_COMPRESSED)) {
    add_inflated(b, f, data, n);
    return true;
  }
  return np_bytes_add(&b->bytes, data, n, true);
}

void np_nwstg_finish(struct np_build *b, int datastream) {
  if (b->bytes.len <= 4)
    return;
  int cat = b->psh.category;
  if (datastream == 5 && (cat == 1 || cat == 7) &&
      !np_ascii_text(b->bytes.p, b->bytes.len))
    b->psh.category = cat + 100; /* HDS */
}

/* The trailer, always appended (docs/noaaport.md, "The product built"). */
bool np_nwstg_trailer(struct np_build *b) {
  if (b->bytes.len <= 4)
    return true;
  return np_bytes_add(&b->bytes, fos_trailer, sizeof fos_trailer, true);
}
