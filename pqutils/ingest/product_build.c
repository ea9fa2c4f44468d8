/*
 * product_build.c - owns reassembly: the one product in progress, started
 * by a frame with a PSH (a product left unfinished is discarded with LDM's
 * "OOPS" burst), continued block by block in sequence (a missing block
 * loses the product), completed by its block count; the path of each
 * frame (NWSTG or GOES, by datastream and category); the naming calls at
 * the start and at completion; and the finished product handed to the
 * caller with its feedtype and signature (docs/noaaport.md, "Reassembly"
 * and "The product built").  The bytes themselves are product_nwstg.c's
 * and product_goes.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/feedtype_rules.h"
#include "pqutils/ingest/product_internal.h"

/* The fragment table LDM starts with (its "increasing fragheap" lines). */
#define NP_MAX_FRAGS 1000u

struct np_build *np_build_new(const struct np_build_opts *opts,
                              struct np_namer *nm, np_product_fn *fn,
                              void *arg) {
  struct np_build *b = calloc(1, sizeof *b);
  if (b == NULL)
    return NULL;
  if (opts != NULL)
    b->opts = *opts;
  b->nm = nm;
  b->log = nm != NULL ? nm->log : NULL;
  b->fn = fn;
  b->arg = arg;
  b->max_frags = NP_MAX_FRAGS;
  if (!np_bytes_init(&b->bytes)) {
    np_build_free(b);
    return NULL;
  }
  return b;
}

void np_build_free(struct np_build *b) {
  if (b == NULL)
    return;
  np_goes_drop(b);
  if (b->inf.init)
    inflateEnd(&b->inf.z);
  np_bytes_free(&b->bytes);
  free(b);
}

void np_build_discard(struct np_build *b) {
  b->active = false;
  b->nextfrag = 0;
  np_goes_drop(b);
}

void np_build_end(struct np_build *b) {
  np_build_discard(b);
}

/* Datastreams 1, 2 and 4 take the GOES path (docs/noaaport.md,
 * "Channels and input"). */
static bool goes_channel(int ds) {
  return ds == 1 || ds == 2 || ds == 4;
}

/* A PSH read: it replaces the current one (LDM keeps one, and clears the
 * CCB values and META it holds). */
static void take_psh(struct np_build *b, const struct np_psh *h) {
  b->psh.h = *h;
  b->psh.category = h->category;
  b->psh.ccb_mode = 0;
  b->psh.ccb_submode = 0;
  b->psh.meta = false;
}

/* The new frame's headers, as LDM prints them after "OOPS". */
static void oops_burst(struct np_build *b, const struct np_frame *f) {
  const struct np_psh *h = &f->psh;
  const struct np_log *lg = b->log;
  np_log(lg, NP_ERROR, "Product definition header version %d pdhlen %d",
         f->pdh_version, f->pdh_len);
  np_log(lg, NP_ERROR, "PDH transfer type %u", f->tt);
  if (f->tt & NP_TT_ERROR)
    np_log(lg, NP_ERROR, "Product transfer flag error %u", f->tt);
  if (f->tt & NP_TT_ABORT)
    np_log(lg, NP_ERROR, "Product transfer flag error %u", f->tt);
  np_log(lg, NP_ERROR, "header length %d [pshlen = %d]",
         f->pdh_len + f->psh_len, f->psh_len);
  np_log(lg, NP_ERROR, "blocks per record %d records per block %d",
         f->blocks_per_rec, f->recs_per_block);
  np_log(lg, NP_ERROR,
         "product seqnumber %u block number %d data block size %d", f->prod_seq,
         f->block, f->data_len);
  np_log(lg, NP_ERROR, "product header flag %d", h->flag);
  np_log(lg, NP_ERROR, "prodspecific data length %d", h->awips_len);
  np_log(lg, NP_ERROR, "bytes per record %d", h->bytes_per_record);
  np_log(lg, NP_ERROR, "Fragments = %d category %d", h->nfrag, h->category);
  if (h->orig_run_id != 0)
    np_log(lg, NP_ERROR, "original runid %d", h->orig_run_id);
  np_log(lg, NP_ERROR, "next header offset %d", h->next_off);
  np_log(lg, NP_ERROR, "original seq number %u", h->orig_seq);
  np_log(lg, NP_ERROR, "receive time %u", h->ncf_recv);
  np_log(lg, NP_ERROR, "transmit time %u", h->ncf_send);
  np_log(lg, NP_ERROR, "run ID %d", h->run_id);
  np_log(lg, NP_ERROR, "original run id %d", h->orig_run_id);
}

/* A product starts while another is unfinished: it is discarded (with -f
 * on the GOES path, completed and handed on first). */
static void oops(struct np_build *b, const struct np_frame *f) {
  np_log(b->log, NP_ERROR,
         "OOPS, start of new product [%u ] with unfinished product %u",
         f->prod_seq, b->seq);
  if (goes_channel(f->datastream))
    np_goes_fill_tail(b, f->prod_seq);
  if (b->opts.inflate) {
    np_log(b->log, NP_INFO, "resetting inflate due to prod error....");
    np_inflate_end(b);
  }
  np_build_discard(b);
  oops_burst(b, f);
}

/* The name and the FOS header of an NWSTG-path product.  @return the
 * bytes of the CCB to leave out of the data */
static size_t nwstg_start(struct np_build *b, const struct np_frame *f) {
  struct np_ccb ccb;
  np_ccb_parse(f->data, f->data_len, &ccb, b->log);
  np_name_nwstg(f->data, f->data_len, &ccb, b->psh.h.type, b->psh.category,
                &b->name, b->nm);
  b->psh.category = b->name.category;
  b->psh.ccb_mode = ccb.valid ? ccb.mode : 0;
  b->psh.ccb_submode = ccb.valid ? ccb.submode : 0;
  b->psh.meta = true;
  size_t n = b->name.name_len < NP_IDENT_MAX ? b->name.name_len : NP_IDENT_MAX;
  memcpy(b->prod_name, b->name.ident, n);
  b->prod_name[n] = '\0';
  np_log(b->log, NP_INFO, "%s", b->prod_name);
  b->capacity = (size_t)(b->nfrag ? b->nfrag : 1) * NP_NWSTG_BLOCK_ALLOC + 32u;
  uint8_t hdr[12];
  np_fos_header(b->seq, hdr);
  np_bytes_add(&b->bytes, hdr, NP_FOS_HDR_LEN, false);
  return ccb.valid && ccb.len <= f->data_len ? ccb.len : 0;
}

/* A frame with a PSH.  @return whether its block is appended next */
static bool start(struct np_build *b, const struct np_frame *f, bool *goes,
                  size_t *skip) {
  if (b->active)
    oops(b, f);
  take_psh(b, &f->psh);
  b->seq = f->prod_seq;
  b->nfrag = f->psh.nfrag;
  b->nextfrag = 0;
  if (b->nfrag >= b->max_frags) {
    b->max_frags = b->nfrag + 1;
    np_log(b->log, NP_NOTE, "increasing fragheap to %u", b->max_frags);
  }
  if (f->truncated) {
    np_log(b->log, NP_ERROR, "problem reading datablock");
    return false;
  }
  if (f->datastream == 4 && b->psh.category != 3)
    *goes = false;
  np_bytes_reset(&b->bytes);
  *skip = 0;
  if (*goes)
    return np_goes_start(b, f);
  *skip = nwstg_start(b, f);
  return true;
}

/* A frame without a PSH.  @return whether its block is appended next */
static bool carry_on(struct np_build *b, const struct np_frame *f) {
  if (f->truncated) {
    np_log(b->log, NP_ERROR, "problem reading datablock (cont)");
    return false;
  }
  if (!b->active) {
    np_log(b->log, NP_INFO,
           "found data block before header, skipping sequence %u frag #%d",
           f->prod_seq, f->block);
    return false;
  }
  return true;
}

/* The NWSTG path's sequence check, then the block.  @return whether it is
 * appended */
static bool nwstg_append(struct np_build *b, const struct np_frame *f,
                         size_t skip, bool last) {
  if (b->nfrag != 0 && b->active &&
      (f->block != b->last_block + 1 || f->prod_seq != b->seq)) {
    np_log(b->log, NP_ERROR,
           "Missing fragment in sequence, last %d/%d this "
           "%d/%d",
           (int)b->last_block, (int)(int32_t)b->seq, f->block,
           (int)(int32_t)f->prod_seq);
    if (b->opts.inflate) {
      np_log(b->log, NP_INFO, "resetting inflate due to prod error....");
      np_inflate_end(b);
    }
    np_build_discard(b);
    return false;
  }
  return np_nwstg_block(b, f, f->data + skip, f->data_len - skip, last);
}

/* The identifier, NAME then META (cut as LDM cuts it). */
static void ident(const struct np_build *b, char *out, size_t size) {
  const char *meta = "";
  if (b->psh.meta)
    meta = b->name.ident + b->name.name_len;
  snprintf(out, size, "%s%s", b->prod_name, meta);
}

void np_build_deliver(struct np_build *b, int datastream) {
  char id[NP_IDENT_MAX + 1];
  ident(b, id, sizeof id);
  if (b->bytes.len == 0) {
    np_log(b->log, NP_ERROR, "heapsize is invalid %ld for prod %s", 0L, id);
    return;
  }
  struct np_product p = {.ident = id, .seqno = b->seq};
  np_bytes_md5_final(&b->bytes, p.sig);
  np_log(b->log, NP_INFO, "md5 checksum final");
  p.type = b->psh.h.type;
  p.category = b->psh.category;
  if (id[0] == '\0') {
    p.ident = "_NOHEAD";
    np_log(b->log, NP_NOTE, "strange header %s (%d) size %d %d", p.ident,
           p.type, (int)b->bytes.len, (int)(int32_t)b->seq);
  }
  p.feedtype = np_feedtype(datastream, p.type, p.category);
  p.data = b->bytes.p;
  p.size = b->bytes.len;
  p.ccb_mode = b->psh.ccb_mode;
  p.ccb_submode = b->psh.ccb_submode;
  p.datastream = datastream;
  if (b->fn != NULL)
    b->fn(b->arg, &p);
}

/* The product is complete: its last bytes, its name's GRIB2 part, and it
 * goes to the caller. */
static void complete(struct np_build *b, const struct np_frame *f, bool goes) {
  if (b->opts.inflate)
    np_inflate_end(b);
  if (goes)
    np_goes_finish(b);
  np_log(b->log, NP_INFO,
         "we should have a complete product %u %u/%u %d /heap %ld", b->seq,
         f->prod_seq, b->nfrag, f->block, (long)b->bytes.len);
  if (!goes)
    np_nwstg_finish(b, f->datastream);
  if (b->psh.meta && b->name.grib2)
    np_name_grib2_final(&b->name, b->bytes.p, b->bytes.len,
                        NP_FOS_HDR_LEN + b->name.grib2_at, b->nm);
  if (!goes)
    np_nwstg_trailer(b);
  np_build_deliver(b, f->datastream);
  np_build_discard(b);
}

/* LDM's fragment table grows by 1000 when a product has more frames than
 * it holds. */
static void count_frag(struct np_build *b) {
  if (b->nextfrag >= b->max_frags) {
    b->max_frags += NP_MAX_FRAGS;
    np_log(b->log, NP_ERROR,
           "Error in number of frags, increasing fragheap "
           "to %u",
           b->max_frags);
  }
  b->nextfrag++;
}

void np_build_frame(struct np_build *b, const struct np_frame *f) {
  if (f->psh_bad) {
    take_psh(b, &f->psh); /* LDM parsed it before checking its length */
    return;
  }
  bool goes = goes_channel(f->datastream);
  size_t skip = 0;
  if (f->has_psh) {
    if (!start(b, f, &goes, &skip))
      return;
  } else {
    if (f->datastream == 4 && b->psh.category != 3)
      goes = false;
    if (!carry_on(b, f))
      return;
  }
  count_frag(b);
  bool last = b->nfrag == 0 || b->nfrag == (unsigned)f->block + 1;
  bool ok =
      goes ? np_goes_block(b, f, f->has_psh) : nwstg_append(b, f, skip, last);
  if (!ok)
    return;
  b->active = true;
  b->last_block = f->block;
  b->saved_rpb = f->recs_per_block;
  b->saved_ds = f->datastream;
  if (last)
    complete(b, f, goes);
  else if (f->tt & NP_TT_END)
    np_log(b->log, NP_ERROR, "Hmmm....should call completed product %u [%u %d]",
           b->seq, b->nfrag, f->block);
}
