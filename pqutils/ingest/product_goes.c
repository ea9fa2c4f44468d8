/*
 * product_goes.c - owns the bytes of a GOES-path product (GINI imagery):
 * the first block as sent (its PDB's compression byte set to 128), then
 * the image written as PNG by libpng into the product as it is made, rows
 * cut from the later blocks; or, for compressed ("satz") products, every
 * block as sent; -c inflating, and -f filling of missing blocks of satz
 * products (docs/noaaport.md, "Reassembly").
 *
 * libpng reports errors by longjmp: every call into it is made under a
 * setjmp of its own, so that a damaged image ends the PNG, never the
 * process.  -f is not offered for PNG products: LDM's fill overwrites the
 * start of those (its length counter stands still while the PNG is
 * written) and hashes bytes it does not store.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "pqutils/ingest/product_internal.h"

struct np_png {
  png_structp png;
  png_infop info;
  jmp_buf jb;
  struct np_build *b;
  bool failed;    /* libpng gave up: nothing more is written */
  bool have_idat; /* an IDAT chunk was written (LDM then ends the PNG) */
  uint8_t *row;   /* a row cut short by its block, padded */
  unsigned width;
};

static void png_fail(png_structp png, png_const_charp msg) {
  (void)msg;
  struct np_png *st = png_get_error_ptr(png);
  longjmp(st->jb, 1);
}

static void png_warn(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

/* libpng's output goes onto the product, hashed. */
static void png_out(png_structp png, png_bytep data, size_t n) {
  struct np_png *st = png_get_io_ptr(png);
  if (n == 8 && memcmp(data + 4, "IDAT", 4) == 0)
    st->have_idat = true;
  if (!np_bytes_add(&st->b->bytes, data, n, true))
    png_fail(png, "out of memory");
}

static void png_flush(png_structp png) {
  (void)png;
}

void np_goes_drop(struct np_build *b) {
  struct np_png *st = b->png;
  if (st == NULL)
    return;
  png_destroy_write_struct(&st->png, &st->info);
  free(st->row);
  free(st);
  b->png = NULL;
}

/* The PNG encoder: width nx, height ny + 1 (the GINI filler line), 8-bit
 * grey, no interlace, libpng's default compression and filters. */
static void png_begin(struct np_build *b) {
  np_goes_drop(b);
  struct np_png *st = calloc(1, sizeof *st);
  if (st == NULL)
    return;
  b->png = st;
  st->b = b;
  st->width = b->pdb.nx;
  st->row = calloc(st->width ? st->width : 1, 1);
  st->png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, st, png_fail, png_warn);
  if (st->row == NULL || st->png == NULL ||
      (st->info = png_create_info_struct(st->png)) == NULL) {
    st->failed = true;
    return;
  }
  if (setjmp(st->jb)) {
    st->failed = true;
    return;
  }
  png_set_write_fn(st->png, st, png_out, png_flush);
  png_set_IHDR(st->png, st->info, st->width, (png_uint_32)b->pdb.ny + 1, 8,
               PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(st->png, st->info);
}

static void png_row(struct np_png *st, const uint8_t *p) {
  if (st->failed)
    return;
  if (setjmp(st->jb)) {
    st->failed = true;
    return;
  }
  png_write_row(st->png, (png_const_bytep)p);
}

void np_goes_finish(struct np_build *b) {
  struct np_png *st = b->png;
  if (st == NULL)
    return;
  if (!st->failed && st->have_idat) {
    if (setjmp(st->jb) == 0)
      png_write_end(st->png, NULL);
  }
  np_goes_drop(b);
}

/* The name (np_gini_name() logs LDM's INFO line "<heading> <size>"). */
bool np_goes_start(struct np_build *b, const struct np_frame *f) {
  char name[sizeof b->prod_name];
  bool z = (f->tt & NP_TT_COMPRESSED) != 0;
  if (np_gini_name(f->data, f->data_len, f->psh.type, z, name, sizeof name,
                   &b->pdb, b->nm) != 0)
    return false;
  memcpy(b->prod_name, name, sizeof name);
  b->capacity = (size_t)(b->nfrag ? b->nfrag : 1) * NP_GOES_BLOCK_ALLOC + 32u;
  return true;
}

/* Block 0 of a PNG product: the product restarts with the block as sent,
 * whose PDB compression byte LDM set to 128 while naming, then the PNG. */
static void png_block0(struct np_build *b, const struct np_frame *f,
                       bool first) {
  struct np_bytes *by = &b->bytes;
  by->len = 0; /* LDM's PNG writer starts at the product's start */
  size_t at = by->len;
  if (!np_bytes_add(by, f->data, f->data_len, false))
    return;
  size_t b42 = b->pdb.heading_len + 42;
  if (first && b42 < f->data_len)
    by->p[at + b42] = 128;
  if (by->md5_ok)
    EVP_DigestUpdate(by->md5, by->p + at, f->data_len);
  png_begin(b);
}

static void log_pdb(struct np_build *b, const struct np_frame *f, int lvl) {
  const struct np_gini_pdb *d = &b->pdb;
  np_log(b->log, lvl, "records_per_block %d blocks_per_record %d nx %d ny %d",
         f->recs_per_block, f->blocks_per_rec, d->nx, d->ny);
  np_log(b->log, lvl, "source %d sector %d channel %d", d->source, d->sector,
         d->channel);
  np_log(b->log, lvl, "nrec %d recsize %d date %02d%02d%02d %02d%02d %02d.%02d",
         d->nrecords, d->record_size, d->year, d->month, d->day, d->hour,
         d->minute, d->second, d->hundredths);
  np_log(b->log, lvl, "pshname %s", b->prod_name);
}

/* Rows of nx bytes cut from a later block of a PNG product. */
static void png_rows(struct np_build *b, const struct np_frame *f) {
  struct np_png *st = b->png;
  unsigned nx = b->pdb.nx;
  for (unsigned k = 0; nx != 0 && (size_t)k * nx < f->data_len; k++) {
    if (k >= f->recs_per_block) {
      np_log(b->log, NP_ERROR,
             "nscan exceeding records per block %d [%d %d %d]",
             f->recs_per_block, k, nx, f->data_len);
      continue;
    }
    size_t at = (size_t)k * nx;
    if (at + nx <= f->data_len) {
      png_row(st, f->data + at);
    } else { /* LDM reads past the block: pad with zeros instead */
      memset(st->row, 0, nx);
      memcpy(st->row, f->data + at, f->data_len - at);
      png_row(st, st->row);
    }
  }
}

/* A compressed block: as sent, or inflated with -c (block 0 from byte 21,
 * after the 21-byte heading LDM assumes). */
static void satz_block(struct np_build *b, const struct np_frame *f) {
  if (!b->opts.inflate) {
    np_bytes_add(&b->bytes, f->data, f->data_len, true);
    return;
  }
  if (f->block != 0) {
    np_inflate_block(b, f->data, f->data_len);
    return;
  }
  np_inflate_begin(b);
  if (f->data_len > 21)
    np_inflate_block(b, f->data + 21, f->data_len - 21u);
}

/* -f: n blank blocks of (records per block x record size) bytes: zeros
 * with -c; without it LDM's deflater, never set up, fails (once a call
 * with bytes to compress: errors) and adds nothing.  Each block is cut to
 * LDM's 5700-byte blank buffer and the product to LDM's capacity (LDM
 * reads and writes past them), and one gap gets at most NP_FILL_MAX
 * blocks: a damaged block number cannot make one frame cost hundreds of
 * megabytes. */
#define NP_FILL_MAX 1024
static void add_blanks(struct np_build *b, long n, unsigned rpb, int errors) {
  size_t blank = (size_t)rpb * b->pdb.record_size;
  if (!b->opts.inflate) {
    for (int i = 0; blank != 0 && i < errors; i++)
      np_log(b->log, NP_ERROR, "FAIL %d delate (%s)", Z_STREAM_ERROR,
             "STREAM_ERROR");
    return;
  }
  if (blank > NP_INFLATE_CHUNK)
    blank = NP_INFLATE_CHUNK;
  struct np_bytes *by = &b->bytes;
  size_t room = b->capacity > by->len ? b->capacity - by->len : 0;
  size_t k = n > 0 ? (size_t)n : 0;
  if (blank == 0 || k == 0)
    return;
  if (k > room / blank)
    k = room / blank;
  if (k > NP_FILL_MAX)
    k = NP_FILL_MAX;
  if (!np_bytes_room(by, k * blank))
    return;
  memset(by->p + by->len, 0, k * blank);
  if (by->md5_ok)
    EVP_DigestUpdate(by->md5, by->p + by->len, k * blank);
  by->len += k * blank;
}

/* -f, a block of another product before this one's last: the tail filled
 * and the product handed on; the frame is dropped. */
static void fill_other(struct np_build *b) {
  long left = (long)b->nfrag - (long)b->last_block - 1;
  np_log(b->log, NP_NOTE, "Total frames expected: %u balance left %ld ",
         b->nfrag, left);
  add_blanks(b, left, b->saved_rpb, 2);
  np_log(b->log, NP_NOTE, "%u scanlines filled into block %ld prod seq %u ",
         b->saved_rpb, left, b->seq);
  np_build_deliver(b, b->saved_ds);
  np_build_discard(b);
}

/* -f, a gap inside the product: blank blocks before this one. */
static void fill_gap(struct np_build *b, const struct np_frame *f) {
  long left = (long)f->block - (long)b->last_block - 1;
  unsigned rpb = f->recs_per_block;
  np_log(b->log, NP_NOTE, "Balance frames left %ld scanlines per frame %u",
         left, rpb);
  add_blanks(b, left, rpb, 1);
  np_log(b->log, NP_NOTE,
         "Total %ld scanlines filled for block %ld into prod "
         "seq %u ",
         (long)rpb * left, left, b->seq);
}

bool np_goes_fill_tail(struct np_build *b, uint32_t next_seq) {
  if (!b->opts.fill || b->png != NULL || next_seq == b->seq ||
      b->nfrag == b->last_block + 1)
    return false;
  long left = (long)b->nfrag - (long)b->last_block - 1;
  size_t blank = (size_t)b->saved_rpb * b->pdb.record_size;
  np_log(b->log, NP_NOTE,
         "Fragments filled %ld scanlines [%u] size (%u each) prod seq %u ",
         left, b->saved_rpb, (unsigned)b->pdb.record_size, b->seq);
  if (!b->opts.inflate)
    np_log(b->log, NP_NOTE,
           "Generating compressed blank scan lines of size [%ld x %u x %u]"
           "[%ld] for prod seq %u ",
           left, b->saved_rpb, (unsigned)b->pdb.record_size, left * (long)blank,
           b->seq);
  add_blanks(b, left, b->saved_rpb, 2);
  np_build_deliver(b, b->saved_ds);
  return true;
}

/* The sequence check of later blocks.  @return whether the block goes on */
static bool goes_in_sequence(struct np_build *b, const struct np_frame *f) {
  if (!b->active || (f->block == b->last_block + 1 && f->prod_seq == b->seq))
    return true;
  np_log(b->log, NP_ERROR,
         "Missing GOES fragment in sequence, last %d/%d this "
         "%d/%d",
         (int)b->last_block, (int)(int32_t)b->seq, f->block,
         (int)(int32_t)f->prod_seq);
  if (!b->opts.fill || b->png != NULL) {
    np_build_discard(b);
    return false;
  }
  if (f->prod_seq != b->seq) {
    fill_other(b);
    return false;
  }
  fill_gap(b, f);
  return true;
}

/* LDM's heap for a GOES-path product is its capacity; it writes past it
 * when a product outgrows it.  Growth stops instead at twice that (PNG
 * rows may come out a little larger than they went in), with LDM's line.
 * @return whether n more bytes may come */
static bool goes_fits(struct np_build *b, size_t n) {
  size_t have = b->bytes.len;
  if (have + n <= 2 * b->capacity)
    return true;
  np_log(b->log, NP_ERROR,
         "Error in heapsize %d product size %d [%d %d], Punt!",
         (int)(2 * b->capacity), (int)(have + n), (int)have, (int)n);
  return false;
}

static bool goes_later(struct np_build *b, const struct np_frame *f) {
  bool z = (f->tt & NP_TT_COMPRESSED) != 0;
  if (!goes_in_sequence(b, f))
    return false;
  if (b->png == NULL && !z) {
    np_log(b->log, NP_ERROR, "failed pnginit %d %d %s", f->datastream,
           b->psh.category, b->prod_name);
    return false;
  }
  if (f->recs_per_block < 1)
    log_pdb(b, f, NP_ERROR);
  if (!goes_fits(b, f->data_len))
    return false;
  if (z)
    satz_block(b, f);
  else
    png_rows(b, f);
  return true;
}

bool np_goes_block(struct np_build *b, const struct np_frame *f, bool first) {
  if (f->block > 0)
    return goes_later(b, f);
  if (!goes_fits(b, (f->tt & NP_TT_COMPRESSED) ? f->data_len : 0))
    return false;
  if (f->tt & NP_TT_COMPRESSED)
    satz_block(b, f);
  else
    png_block0(b, f, first);
  if (np_log_on(b->log, NP_INFO))
    log_pdb(b, f, NP_INFO);
  return true;
}
