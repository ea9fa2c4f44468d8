/*
 * ldm6_xdr.h - XDR encoding and decoding of every LDM-6 type, exactly as
 * LDM puts them on the wire, and conversion between the wire types of
 * ldmd/proto/ldm6_types.h and the product model of pq/product.h.
 *
 * WIRE RULES (docs/protocol.md §3) the coders keep:
 *   - members that ldm.x declares as pointers (feedpar.prod_class,
 *     comingsoon_args.infop, datapkt.signaturep, the pointer arms of the
 *     unions) are encoded inline, with no 4-byte presence word;
 *   - product data has no length word: its length is info.sz; dbuf
 *     (datapkt.data) does have one;
 *   - strings have bounds (origin 64, ident 255, pattern 255) and a class
 *     at most 32 specs;
 *   - timestamps are two XDR ints and must lie in TS_ZERO..TS_ENDT with
 *     0 <= usec <= 999999.  LDM asserts this when it encodes; we check it
 *     both ways, so what we decode we can send on;
 *   - the discriminants of fornme_reply_t and hiya_reply_t are limited to
 *     their listed arms, ldm_replyt and rendezvoust to theirs, and a bare
 *     ldm_errt to 0..7.
 *
 * DECODING HOSTILE INPUT.  Decoders read from a buffer of known length and
 * never past it; every length word is checked against its bound and against
 * the bytes that remain before anything is copied.  Strings are copied into
 * the inline arrays of the wire types; a string with a NUL byte inside is
 * refused (LDM would silently cut it there).  Padding bytes are skipped
 * without being checked, as every XDR implementation does.  Product data
 * (product.data, datapkt.data) is not copied: the decoded pointer points
 * into the input buffer, which must outlive its use.
 *
 * ZERO-COPY ENCODING.  A HEREIS argument is the encoded prod_info, then
 * info.sz data bytes, then ldm6_xdr_pad(info.sz) zero bytes; a BLKDATA
 * argument is ldm6_encode_datapkt_head(), then the data, then the padding.
 * With ldm6_rpc_record_iov() (ldmd/proto/rpc_msg.h) the data goes to the
 * socket (sendmsg(2)) straight from the queue's mapping.
 *
 * Everything here is thread-safe and fork-safe: no state, no logging, and
 * no allocation except the compiled patterns of ldm6_class_to_pq().
 * Functions return 0 (LDM6_XDR_OK) or a negative LDM6_E* code of
 * ldmd/proto/ldm6_types.h.
 */
#ifndef LDMD_PROTO_LDM6_XDR_H
#define LDMD_PROTO_LDM6_XDR_H

#include <stddef.h>
#include <stdint.h>

#include "ldmd/proto/ldm6_types.h"
#include "pq/product.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The XDR types, as arguments and results of procedures.  The comment names
 * the C type a `void *value` must point to for that type.
 */
typedef enum ldm6_type {
  LDM6_T_VOID = 0,         /**< nothing (value ignored, may be NULL) */
  LDM6_T_UINT,             /**< uint32_t: IS_ALIVE's pid */
  LDM6_T_BOOL,             /**< bool: IS_ALIVE's result */
  LDM6_T_PROD_CLASS,       /**< ldm6_prod_class */
  LDM6_T_FEEDPAR,          /**< ldm6_feedpar */
  LDM6_T_PROD_INFO,        /**< ldm6_prod_info */
  LDM6_T_PRODUCT,          /**< ldm6_product */
  LDM6_T_COMINGSOON_ARGS,  /**< ldm6_comingsoon_args */
  LDM6_T_DATAPKT,          /**< ldm6_datapkt */
  LDM6_T_FORNME_REPLY,     /**< ldm6_fornme_reply */
  LDM6_T_HIYA_REPLY,       /**< ldm6_hiya_reply */
  LDM6_T_COMINGSOON_REPLY, /**< ldm6_comingsoon_reply (ldm6_errt) */
  LDM6_T_REPLYT,           /**< ldm6_replyt */
  LDM6_T_COUNT
} ldm6_type;

/** Storage for a value of any type, e.g. to decode by procedure. */
typedef union ldm6_value {
  uint32_t uint;
  bool boolean;
  ldm6_prod_class prod_class;
  ldm6_feedpar feedpar;
  ldm6_prod_info prod_info;
  ldm6_product product;
  ldm6_comingsoon_args comingsoon_args;
  ldm6_datapkt datapkt;
  ldm6_fornme_reply fornme_reply;
  ldm6_hiya_reply hiya_reply;
  ldm6_comingsoon_reply comingsoon_reply;
  ldm6_replyt replyt;
} ldm6_value;

/** One procedure of one version of program 300029. */
typedef struct ldm6_proc_desc {
  const char *name; /**< LDM's name: "FEEDME", "NULLPROC"... */
  uint32_t vers;
  uint32_t proc;
  ldm6_type arg;
  ldm6_type res;
  bool oneway; /**< never answered: v6 HEREIS, NOTIFICATION, BLKDATA */
} ldm6_proc_desc;

/**
 * The procedure table of docs/protocol.md §2: version 6 (all of §2.1), version
 * 5 (§2.3: every call answered with ldm_replyt, FEEDME takes a bare prod_class)
 * and version 4 (NULLPROC only).
 * @return the procedure, or NULL if that version does not serve it (the
 *         caller answers PROC_UNAVAIL, or PROG_MISMATCH for a version
 *         other than 4..6).
 */
const ldm6_proc_desc *ldm6_proc_lookup(uint32_t vers, uint32_t proc);

/** Name of a type ("prod_class", "product"...), for messages. */
const char *ldm6_type_name(ldm6_type type);

/**
 * Encode a value.
 * @param type   what value points to (see ldm6_type)
 * @param value  the value; not modified
 * @param buf    output, cap bytes
 * @param len    set to the bytes written on success
 * @return 0; LDM6_ENOSPACE (buf too small); LDM6_EBOUND (a string not
 *         NUL-terminated within its bound, psa_len > 32); LDM6_ETIME (a
 *         timestamp outside TS_ZERO..TS_ENDT or usec outside 0..999999);
 *         LDM6_EVALUE (a discriminant not allowed for that union, an
 *         ldm_errt outside 0..7); LDM6_EINVAL (bad type, NULL value or
 *         NULL data with a non-zero length)
 */
int ldm6_encode(ldm6_type type, const void *value, void *buf, size_t cap,
                size_t *len);

/**
 * Decode a value.
 * @param type   what value points to
 * @param buf    input, len bytes (at most UINT_MAX); hostile input is safe
 * @param value  output; on failure its contents are unspecified.  Product
 *               and datapkt data point into buf.
 * @param used   set to the bytes the value took (trailing bytes are left
 *               to the caller)
 * @return 0; LDM6_ESHORT (input ends inside the value, including data
 *         lengths larger than what remains); LDM6_EBOUND; LDM6_ENUL (NUL in a
 *         string); LDM6_ETIME; LDM6_EVALUE; LDM6_EINVAL
 */
int ldm6_decode(ldm6_type type, const void *buf, size_t len, void *value,
                size_t *used);

/**
 * Encode the head of a datapkt for a zero-copy BLKDATA: signature, pktnum
 * and the dbuf length word pkt->data_len (pkt->data is not read).  The
 * argument is complete after data_len data bytes and ldm6_xdr_pad(data_len)
 * zero bytes.  @return as ldm6_encode()
 */
int ldm6_encode_datapkt_head(const ldm6_datapkt *pkt, void *buf, size_t cap,
                             size_t *len);

/** Zero bytes that follow n opaque bytes to reach a multiple of 4. */
static inline size_t ldm6_xdr_pad(uint32_t n) {
  return (size_t)((4u - (n & 3u)) & 3u);
}

/* ---------------------------------------------------------------------- */
/* Conversions to and from the product model                              */
/* ---------------------------------------------------------------------- */

/** A wire time as a model time (64-bit seconds; always exact). */
pq_timestamp ldm6_ts_to_pq(ldm6_timestamp t);

/**
 * A model time as a wire time.
 * @return 0; LDM6_ERANGE if the seconds do not fit in an int32 (after
 *         2038-01-19T03:14:07Z, or before 1901); LDM6_ETIME if it fits but
 *         is not a valid wire time (negative, or usec outside 0..999999)
 */
int ldm6_ts_from_pq(pq_timestamp t, ldm6_timestamp *out);

/**
 * Product metadata from the wire into the model.
 * @return 0; LDM6_EBOUND (origin or ident not NUL-terminated within its
 *         bound: possible only for a value not made by ldm6_decode());
 *         LDM6_ETIME (invalid arrival)
 */
int ldm6_info_to_pq(const ldm6_prod_info *in, pq_prod_info *out);

/**
 * Product metadata from the model for the wire.
 * @return 0; LDM6_ERANGE (arrival seconds beyond int32, or size beyond
 *         4 GiB - 1: LDM cannot send such a product); LDM6_ETIME; LDM6_EBOUND
 */
int ldm6_info_from_pq(const pq_prod_info *in, ldm6_prod_info *out);

/**
 * A wire class into a model class, compiling every pattern in order with
 * pq_class_add() (which strips leading ".*" as LDM does).  Specs are kept
 * as sent, including NONE specs and a trailing "SIG=" spec: separating
 * those is the server's business (docs/protocol.md §5.2).
 * @param out     initialised here; on failure it is left empty (freed)
 * @param errbuf  on LDM6_EPATTERN: which pattern and regerror()'s text
 *                (may be NULL, 0)
 * @return 0; LDM6_EPATTERN (an ERE that does not compile, is too complex
 *         or has a back-reference, see pq_ere_backref(): the answer is
 *         BADPATTERN); LDM6_EBOUND (psa_len > 32, unterminated pattern);
 *         LDM6_ETIME (invalid from or to)
 */
int ldm6_class_to_pq(const ldm6_prod_class *in, pq_class *out, char *errbuf,
                     size_t errlen);

/**
 * A model class for the wire (patterns as given, not as compiled).
 * @return 0; LDM6_ERANGE or LDM6_ETIME for from or to (see
 *         ldm6_ts_from_pq()); LDM6_EBOUND (more than 32 specs)
 */
int ldm6_class_from_pq(const pq_class *in, ldm6_prod_class *out);

#ifdef __cplusplus
}
#endif
#endif /* LDMD_PROTO_LDM6_XDR_H */
