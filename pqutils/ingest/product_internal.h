/*
 * product_internal.h - what the files of the product builder share
 * (product_build.c: reassembly and the finished product; product_bytes.c:
 * the growing bytes and their MD5; product_nwstg.c: the FOS framing;
 * product_goes.c: GINI imagery as PNG or as sent; product_inflate.c: the
 * -c inflater).  Not part of libnoaaport's interface: product_build.h is.
 */
#ifndef PQUTILS_INGEST_PRODUCT_INTERNAL_H
#define PQUTILS_INGEST_PRODUCT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "pqutils/ingest/gini_name.h"
#include "pqutils/ingest/nwstg_name.h"
#include "pqutils/ingest/product_build.h"

/* LDM's allocation per block, by path: 4000 + 15 on the NWSTG path, 5152
 * on the GOES path; plus 32 (docs/noaaport.md, "Reassembly"). */
#define NP_NWSTG_BLOCK_ALLOC 4015u
#define NP_GOES_BLOCK_ALLOC 5152u
#define NP_FOS_HDR_LEN 11u
/* The -c inflater's output buffer: one zlib stream gives at most this. */
#define NP_INFLATE_CHUNK 5700u

struct np_png; /* product_goes.c */

/** The product's bytes and the running MD5 of those LDM hashes. */
struct np_bytes {
  uint8_t *p;
  size_t len, cap;
  EVP_MD_CTX *md5;
  bool md5_ok; /* the digest could be set up */
};

/** The -c inflater: one zlib stream state, reset at each product's block
 *  0, dead after an error until then. */
struct np_inflater {
  z_stream z;
  bool init; /* inflateInit done */
  bool live; /* usable (LDM's "stream set") */
};

/** The current PSH as LDM keeps it: the last one read, with the category
 *  and CCB values naming set. */
struct np_cur_psh {
  struct np_psh h;
  int category; /* adjusted: 99, 101, 107 */
  int ccb_mode, ccb_submode;
  bool meta; /* the name's META still holds (a later PSH clears it) */
};

struct np_build {
  struct np_build_opts opts;
  struct np_namer *nm;
  const struct np_log *log;
  np_product_fn *fn;
  void *arg;

  /* reassembly (docs/noaaport.md, "Reassembly") */
  bool active;         /* a product is in progress: a block is appended */
  uint32_t seq;        /* its PDH sequence number */
  unsigned nfrag;      /* its block count, 0: one frame */
  unsigned last_block; /* the block appended last */
  unsigned max_frags;  /* LDM's fragment table size ("increasing ...") */
  unsigned nextfrag;   /* frames of this product that reached the table */
  struct np_cur_psh psh;

  /* the name, fixed at the start (its META counts while psh.meta) */
  struct np_nwstg_name name;
  /* LDM's PROD_NAME: NAME on the NWSTG path, the satellite name on the
   * GOES path; kept until the next product that gets a name. */
  char prod_name[NP_IDENT_MAX + 1];
  size_t capacity; /* LDM's capacity rule */

  /* GOES path */
  struct np_gini_pdb pdb;
  struct np_png *png; /* a PNG being written, or NULL */
  /* -f: what LDM saves of the last frame handled */
  unsigned saved_rpb;
  int saved_ds;

  struct np_inflater inf;
  struct np_bytes bytes;
};

/* product_bytes.c */
bool np_bytes_init(struct np_bytes *b);
void np_bytes_free(struct np_bytes *b);
/** Make room for n more bytes.  @return false if out of memory */
bool np_bytes_room(struct np_bytes *b, size_t n);
/** Append n bytes, hashed if md5. @return false if out of memory */
bool np_bytes_add(struct np_bytes *b, const void *p, size_t n, bool md5);
/** Start again: no bytes, a fresh MD5. */
void np_bytes_reset(struct np_bytes *b);
void np_bytes_md5_final(struct np_bytes *b, uint8_t sig[16]);

/* product_nwstg.c */
/** The FOS header for a product sequence number (11 bytes to keep). */
void np_fos_header(uint32_t seq, uint8_t hdr[12]);
/** Append an NWSTG-path block: trailer stripping on the last block, the
 *  capacity rule, -c inflating.  @return false if the frame is dropped */
bool np_nwstg_block(struct np_build *b, const struct np_frame *f,
                    const uint8_t *data, size_t n, bool last);
/** At completion: the ASCII test on datastream 5. */
void np_nwstg_finish(struct np_build *b, int datastream);
/** At completion, after naming: the trailer.  @return false if out of
 *  memory */
bool np_nwstg_trailer(struct np_build *b);

/* product_goes.c */
/** Start a GOES-path product from its first frame's block.  @return false
 *  if no product can be made */
bool np_goes_start(struct np_build *b, const struct np_frame *f);
/** Append a GOES-path block (first: the block of the frame that started
 *  the product).  @return false if the frame is dropped (the product may
 *  have been discarded or, with -f, handed on) */
bool np_goes_block(struct np_build *b, const struct np_frame *f, bool first);
/** At completion: the PNG's end. */
void np_goes_finish(struct np_build *b);
/** Forget a PNG being written. */
void np_goes_drop(struct np_build *b);
/** -f at the start of the next product: fill the tail and hand the product
 *  on.  @return whether it was handed on */
bool np_goes_fill_tail(struct np_build *b, uint32_t next_seq);

/* product_inflate.c */
/** Reset the inflater for a product's block 0. */
void np_inflate_begin(struct np_build *b);
/** End the inflater (completion or a product error).  */
void np_inflate_end(struct np_build *b);
/** Inflate a block's zlib streams onto the product (hashed).  @return the
 *  bytes added */
size_t np_inflate_block(struct np_build *b, const uint8_t *in, size_t n);
/** Where the compressed part of an NWSTG block 0 starts, after its clear
 *  heading and NNNXXX lines.  @return false if no heading is found */
bool np_inflate_skip_heading(const uint8_t *data, size_t n, size_t *skip);

/* product_build.c */
/** Hand the product on as it stands (completion, or -f). */
void np_build_deliver(struct np_build *b, int datastream);
/** Forget the product in progress. */
void np_build_discard(struct np_build *b);

#endif
