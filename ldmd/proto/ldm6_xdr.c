/*
 * ldm6_xdr.c - the XDR coders of every LDM-6 type, written by hand on
 * libtirpc's primitives (xdrmem, xdr_u_int, xdr_int, xdr_opaque), plus the
 * procedure table and the conversions to the product model.  Owns the wire
 * format of the arguments and results; the RPC header and record marking
 * around them are ldmd/proto/rpc_msg.c's.
 *
 * Each type has one static coder that works in both directions, XDR style,
 * so that encoding and decoding cannot drift apart.  The coders never write
 * through the value when encoding (public encoders take const values).  A
 * cursor carries the stream and the first error, so that a failure deep in
 * a structure surfaces as a precise LDM6_E* code rather than XDR's bare
 * FALSE.  Everything rpcgen would do differently from LDM is done LDM's way
 * here: pointers inline, product data without a length word.
 */
#include "ldmd/proto/ldm6_xdr.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

static_assert(LDM6_SIGLEN == PQ_SIGLEN, "signature length");
static_assert(LDM6_HOSTNAMESIZE == PQ_ORIGIN_MAX, "origin bound");
static_assert(LDM6_KEYSIZE == PQ_IDENT_MAX, "ident bound");
static_assert(LDM6_MAXPATTERN == PQ_PATTERN_MAX, "pattern bound");
static_assert(LDM6_PSA_MAX == PQ_CLASS_MAX, "specs per class");

#define USEC_MAX 999999

/* Discriminant sets, one bit per ldm_errt value. */
#define ERRT_BIT(e) (1u << (e))
#define ERRT_ANY 0xffu
#define ERRT_FORNME                                                            \
  (ERRT_BIT(LDM6_OK) | ERRT_BIT(LDM6_BADPATTERN) | ERRT_BIT(LDM6_RECLASS))
#define ERRT_HIYA                                                              \
  (ERRT_BIT(LDM6_OK) | ERRT_BIT(LDM6_DONT_SEND) | ERRT_BIT(LDM6_RECLASS))

/* ---------------------------------------------------------------------- */
/* Status texts                                                           */
/* ---------------------------------------------------------------------- */

const char *ldm6_strerror(int code) {
  switch (code) {
#define LDM6__MSG(name, value, msg)                                            \
  case name:                                                                   \
    return msg;
    LDM6_ERROR_MAP(LDM6__MSG)
#undef LDM6__MSG
  default:
    return "LDM6_UNKNOWN: unknown status code";
  }
}

const char *ldm6_errt_name(int code) {
  static const char *const names[] = {
      "OK",     "SHUTTING_DOWN", "BAD_PATTERN", "DONT_SEND",
      "RESEND", "RESTART",       "REDIRECT",    "RECLASS"};

  if (code < 0 || code >= (int)(sizeof names / sizeof names[0]))
    return "UNKNOWN";
  return names[code];
}

/* ---------------------------------------------------------------------- */
/* The cursor and the primitives                                          */
/* ---------------------------------------------------------------------- */

/* An XDR memory stream over one buffer, and the first error met. */
typedef struct xcur {
  XDR xdr;
  const uint8_t *base;
  size_t len;
  int err;
} xcur;

/* len must be <= UINT_MAX (checked by the callers). */
static void xcur_init(xcur *c, const void *buf, size_t len, enum xdr_op op) {
  /* xdrmem_create takes a char *: decoding only reads through it. */
  xdrmem_create(&c->xdr, (char *)buf, (u_int)len, op);
  c->base = buf;
  c->len = len;
  c->err = 0;
}

static bool decoding(const xcur *c) {
  return c->xdr.x_op == XDR_DECODE;
}

static bool fail(xcur *c, int err) {
  if (c->err == 0)
    c->err = err;
  return false;
}

/* An XDR primitive failed: the input ran out, or the output is full. */
static bool fail_io(xcur *c) {
  return fail(c, decoding(c) ? LDM6_ESHORT : LDM6_ENOSPACE);
}

static bool x_u32(xcur *c, uint32_t *v) {
  u_int u = decoding(c) ? 0 : *v;

  if (!xdr_u_int(&c->xdr, &u))
    return fail_io(c);
  if (decoding(c))
    *v = u;
  return true;
}

static bool x_i32(xcur *c, int32_t *v) {
  int i = decoding(c) ? 0 : *v;

  if (!xdr_int(&c->xdr, &i))
    return fail_io(c);
  if (decoding(c))
    *v = i;
  return true;
}

/* Fixed-length opaque: n bytes and padding, no length word. */
static bool x_fixed(xcur *c, uint8_t *p, u_int n) {
  if (!xdr_opaque(&c->xdr, (char *)p, n))
    return fail_io(c);
  return true;
}

/* string<max> into or from s[max + 1]. */
static bool x_string(xcur *c, char *s, size_t max) {
  uint32_t n = 0;

  if (!decoding(c)) {
    size_t k = strnlen(s, max + 1);

    if (k > max)
      return fail(c, LDM6_EBOUND);
    n = (uint32_t)k;
  }
  if (!x_u32(c, &n))
    return false;
  if (decoding(c) && n > max)
    return fail(c, LDM6_EBOUND);
  if (!xdr_opaque(&c->xdr, s, n))
    return fail_io(c);
  if (decoding(c)) {
    if (memchr(s, '\0', n) != NULL)
      return fail(c, LDM6_ENUL);
    s[n] = '\0';
  }
  return true;
}

/*
 * n bytes of data and their padding, with no length word (the caller coded
 * it).  Decoding points *data into the input after checking that n bytes
 * and the padding remain; encoding copies from *data.
 */
static bool x_data(xcur *c, uint32_t n, const void **data) {
  if (decoding(c)) {
    u_int pos = xdr_getpos(&c->xdr);
    size_t padded = (size_t)n + ldm6_xdr_pad(n);

    if (pos > c->len || padded > c->len - pos)
      return fail(c, LDM6_ESHORT);
    *data = c->base + pos;
    if (!xdr_setpos(&c->xdr, (u_int)(pos + padded)))
      return fail_io(c);
    return true;
  }
  if (n > 0 && *data == NULL)
    return fail(c, LDM6_EINVAL);
  /* xdr_opaque takes a char *: encoding only reads through it. */
  if (!xdr_opaque(&c->xdr, (char *)*data, n))
    return fail_io(c);
  return true;
}

static bool errt_allowed(int32_t v, unsigned allowed) {
  return v >= 0 && v < 32 && ((allowed >> v) & 1u) != 0;
}

/* An ldm_errt (an XDR enum: one int) limited to the allowed values. */
static bool x_errt(xcur *c, ldm6_errt *e, unsigned allowed) {
  int32_t v = decoding(c) ? 0 : (int32_t)*e;

  if (!decoding(c) && !errt_allowed(v, allowed))
    return fail(c, LDM6_EVALUE);
  if (!x_i32(c, &v))
    return false;
  if (decoding(c)) {
    if (!errt_allowed(v, allowed))
      return fail(c, LDM6_EVALUE);
    *e = (ldm6_errt)v;
  }
  return true;
}

/* An XDR bool: exactly 0 or 1. */
static bool x_bool(xcur *c, bool *b) {
  uint32_t v = decoding(c) ? 0 : (*b ? 1u : 0u);

  if (!x_u32(c, &v))
    return false;
  if (decoding(c)) {
    if (v > 1)
      return fail(c, LDM6_EVALUE);
    *b = v == 1;
  }
  return true;
}

/* ---------------------------------------------------------------------- */
/* The types of ldm.x                                                     */
/* ---------------------------------------------------------------------- */

static bool ts_valid(ldm6_timestamp t) {
  return t.tv_sec >= 0 && t.tv_usec >= 0 && t.tv_usec <= USEC_MAX;
}

/* timestampt: two ints, valid both ways (LDM asserts it when encoding). */
static bool x_timestamp(xcur *c, ldm6_timestamp *t) {
  if (!decoding(c) && !ts_valid(*t))
    return fail(c, LDM6_ETIME);
  if (!x_i32(c, &t->tv_sec) || !x_i32(c, &t->tv_usec))
    return false;
  if (decoding(c) && !ts_valid(*t))
    return fail(c, LDM6_ETIME);
  return true;
}

static bool x_prod_spec(xcur *c, ldm6_prod_spec *s) {
  return x_u32(c, &s->feedtype) && x_string(c, s->pattern, LDM6_MAXPATTERN);
}

/* prod_class: from, to, then psa<32> as a count and the elements. */
static bool x_prod_class(xcur *c, ldm6_prod_class *cls) {
  uint32_t n = decoding(c) ? 0 : cls->psa_len;
  uint32_t i;

  if (!x_timestamp(c, &cls->from) || !x_timestamp(c, &cls->to))
    return false;
  if (!decoding(c) && n > LDM6_PSA_MAX)
    return fail(c, LDM6_EBOUND);
  if (!x_u32(c, &n))
    return false;
  if (n > LDM6_PSA_MAX)
    return fail(c, LDM6_EBOUND);
  if (decoding(c))
    cls->psa_len = n;
  for (i = 0; i < n; i++)
    if (!x_prod_spec(c, &cls->psa[i]))
      return false;
  return true;
}

/* feedpar: the class pointer is inline (no presence word). */
static bool x_feedpar(xcur *c, ldm6_feedpar *fp) {
  return x_prod_class(c, &fp->prod_class) && x_u32(c, &fp->max_hereis);
}

static bool x_prod_info(xcur *c, ldm6_prod_info *info) {
  return x_timestamp(c, &info->arrival) &&
         x_fixed(c, info->signature, LDM6_SIGLEN) &&
         x_string(c, info->origin, LDM6_HOSTNAMESIZE) &&
         x_u32(c, &info->feedtype) && x_u32(c, &info->seqno) &&
         x_string(c, info->ident, LDM6_KEYSIZE) && x_u32(c, &info->sz);
}

/* product: the data's length is info.sz; no length word of its own. */
static bool x_product(xcur *c, ldm6_product *p) {
  return x_prod_info(c, &p->info) && x_data(c, p->info.sz, &p->data);
}

/* comingsoon_args: infop inline, then pktsz. */
static bool x_comingsoon_args(xcur *c, ldm6_comingsoon_args *a) {
  return x_prod_info(c, &a->info) && x_u32(c, &a->pktsz);
}

/* datapkt up to the dbuf length word; signaturep inline. */
static bool x_datapkt_head(xcur *c, ldm6_datapkt *pkt) {
  return x_fixed(c, pkt->signature, LDM6_SIGLEN) && x_u32(c, &pkt->pktnum) &&
         x_u32(c, &pkt->data_len);
}

static bool x_datapkt(xcur *c, ldm6_datapkt *pkt) {
  return x_datapkt_head(c, pkt) && x_data(c, pkt->data_len, &pkt->data);
}

static bool x_fornme_reply(xcur *c, ldm6_fornme_reply *r) {
  if (!x_errt(c, &r->code, ERRT_FORNME))
    return false;
  switch (r->code) {
  case LDM6_OK:
    return x_u32(c, &r->u.id);
  case LDM6_RECLASS:
    return x_prod_class(c, &r->u.prod_class);
  default: /* BADPATTERN: void */
    return true;
  }
}

static bool x_hiya_reply(xcur *c, ldm6_hiya_reply *r) {
  if (!x_errt(c, &r->code, ERRT_HIYA))
    return false;
  switch (r->code) {
  case LDM6_OK:
    return x_u32(c, &r->u.max_hereis);
  case LDM6_RECLASS:
    return x_feedpar(c, &r->u.feedpar);
  default: /* DONT_SEND: void */
    return true;
  }
}

/* rendezvoust: union on ldm_addrt (v5 REDIRECT, which nobody sends). */
static bool x_rendezvous(xcur *c, ldm6_rendezvous *r) {
  int32_t type = decoding(c) ? 0 : (int32_t)r->type;
  uint32_t port;

  if (type < LDM6_ADDR_NONE || type > LDM6_ADDR_IP)
    return fail(c, LDM6_EVALUE);
  if (!x_i32(c, &type))
    return false;
  if (type < LDM6_ADDR_NONE || type > LDM6_ADDR_IP)
    return fail(c, LDM6_EVALUE);
  if (decoding(c))
    r->type = (ldm6_addrt)type;
  switch (type) {
  case LDM6_ADDR_RPC:
    return x_string(c, r->u.rpc.hostname, LDM6_HOSTNAMESIZE) &&
           x_u32(c, &r->u.rpc.prog) && x_u32(c, &r->u.rpc.vers);
  case LDM6_ADDR_IP:
    /* u_short is a whole word on the wire; refuse what does not fit. */
    port = decoding(c) ? 0 : r->u.ip.port;
    if (!x_i32(c, &r->u.ip.protocol) || !x_u32(c, &port))
      return false;
    if (port > 0xffffu)
      return fail(c, LDM6_EVALUE);
    if (decoding(c))
      r->u.ip.port = (uint16_t)port;
    return x_u32(c, &r->u.ip.addr);
  default:
    return true;
  }
}

/* ldm_replyt: every v5 result; pointer arms inline. */
static bool x_replyt(xcur *c, ldm6_replyt *r) {
  if (!x_errt(c, &r->code, ERRT_ANY))
    return false;
  switch (r->code) {
  case LDM6_RESEND:
    return x_fixed(c, r->u.resend.signature, LDM6_SIGLEN) &&
           x_u32(c, &r->u.resend.pktnum);
  case LDM6_RESTART:
    return x_fixed(c, r->u.restart, LDM6_SIGLEN);
  case LDM6_REDIRECT:
    return x_rendezvous(c, &r->u.redirect);
  case LDM6_RECLASS:
    return x_prod_class(c, &r->u.reclass);
  default: /* OK, SHUTTING_DOWN, BADPATTERN, DONT_SEND: void */
    return true;
  }
}

static bool x_value(xcur *c, ldm6_type type, void *v) {
  switch (type) {
  case LDM6_T_VOID:
    return true;
  case LDM6_T_UINT:
    return x_u32(c, v);
  case LDM6_T_BOOL:
    return x_bool(c, v);
  case LDM6_T_PROD_CLASS:
    return x_prod_class(c, v);
  case LDM6_T_FEEDPAR:
    return x_feedpar(c, v);
  case LDM6_T_PROD_INFO:
    return x_prod_info(c, v);
  case LDM6_T_PRODUCT:
    return x_product(c, v);
  case LDM6_T_COMINGSOON_ARGS:
    return x_comingsoon_args(c, v);
  case LDM6_T_DATAPKT:
    return x_datapkt(c, v);
  case LDM6_T_FORNME_REPLY:
    return x_fornme_reply(c, v);
  case LDM6_T_HIYA_REPLY:
    return x_hiya_reply(c, v);
  case LDM6_T_COMINGSOON_REPLY:
    return x_errt(c, v, ERRT_ANY);
  case LDM6_T_REPLYT:
    return x_replyt(c, v);
  default:
    return fail(c, LDM6_EINVAL);
  }
}

/* ---------------------------------------------------------------------- */
/* Public coders                                                          */
/* ---------------------------------------------------------------------- */

/* Run a coder over buf; on success *len is the bytes it took. */
static int run(xcur *c, bool (*coder)(xcur *, ldm6_type, void *),
               ldm6_type type, void *value, size_t *len) {
  bool ok = coder(c, type, value);

  if (ok)
    *len = xdr_getpos(&c->xdr);
  xdr_destroy(&c->xdr);
  if (!ok)
    return c->err != 0 ? c->err : LDM6_EINVAL;
  return LDM6_XDR_OK;
}

static bool valid_type(ldm6_type type, const void *value) {
  return type >= LDM6_T_VOID && type < LDM6_T_COUNT &&
         (value != NULL || type == LDM6_T_VOID);
}

int ldm6_encode(ldm6_type type, const void *value, void *buf, size_t cap,
                size_t *len) {
  xcur c;

  if (!valid_type(type, value) || buf == NULL || len == NULL)
    return LDM6_EINVAL;
  if (cap > UINT_MAX)
    cap = UINT_MAX;
  xcur_init(&c, buf, cap, XDR_ENCODE);
  /* The coders do not write through the value when encoding. */
  return run(&c, x_value, type, (void *)value, len);
}

int ldm6_decode(ldm6_type type, const void *buf, size_t len, void *value,
                size_t *used) {
  xcur c;

  if (!valid_type(type, value) || (buf == NULL && len > 0) || used == NULL ||
      len > UINT_MAX)
    return LDM6_EINVAL;
  xcur_init(&c, buf, len, XDR_DECODE);
  return run(&c, x_value, type, value, used);
}

static bool x_datapkt_head_value(xcur *c, ldm6_type type, void *v) {
  (void)type;
  return x_datapkt_head(c, v);
}

int ldm6_encode_datapkt_head(const ldm6_datapkt *pkt, void *buf, size_t cap,
                             size_t *len) {
  xcur c;

  if (pkt == NULL || buf == NULL || len == NULL)
    return LDM6_EINVAL;
  if (cap > UINT_MAX)
    cap = UINT_MAX;
  xcur_init(&c, buf, cap, XDR_ENCODE);
  return run(&c, x_datapkt_head_value, LDM6_T_DATAPKT, (void *)pkt, len);
}

/* ---------------------------------------------------------------------- */
/* Procedures                                                             */
/* ---------------------------------------------------------------------- */

static const ldm6_proc_desc procs[] = {
    /* Version 6: HEREIS, NOTIFICATION and BLKDATA are one-way. */
    {"NULLPROC", 6, LDM6_NULLPROC, LDM6_T_VOID, LDM6_T_VOID, false},
    {"HEREIS", 6, LDM6_HEREIS, LDM6_T_PRODUCT, LDM6_T_VOID, true},
    {"FEEDME", 6, LDM6_FEEDME, LDM6_T_FEEDPAR, LDM6_T_FORNME_REPLY, false},
    {"HIYA", 6, LDM6_HIYA, LDM6_T_PROD_CLASS, LDM6_T_HIYA_REPLY, false},
    {"NOTIFICATION", 6, LDM6_NOTIFICATION, LDM6_T_PROD_INFO, LDM6_T_VOID, true},
    {"NOTIFYME", 6, LDM6_NOTIFYME, LDM6_T_PROD_CLASS, LDM6_T_FORNME_REPLY,
     false},
    {"COMINGSOON", 6, LDM6_COMINGSOON, LDM6_T_COMINGSOON_ARGS,
     LDM6_T_COMINGSOON_REPLY, false},
    {"BLKDATA", 6, LDM6_BLKDATA, LDM6_T_DATAPKT, LDM6_T_VOID, true},
    {"IS_ALIVE", 6, LDM6_IS_ALIVE, LDM6_T_UINT, LDM6_T_BOOL, false},
    /* Version 5: every call is answered with an ldm_replyt. */
    {"NULLPROC", 5, LDM6_NULLPROC, LDM6_T_VOID, LDM6_T_VOID, false},
    {"HEREIS", 5, LDM6_HEREIS, LDM6_T_PRODUCT, LDM6_T_REPLYT, false},
    {"FEEDME", 5, LDM6_FEEDME, LDM6_T_PROD_CLASS, LDM6_T_REPLYT, false},
    {"HIYA", 5, LDM6_HIYA, LDM6_T_PROD_CLASS, LDM6_T_REPLYT, false},
    {"NOTIFICATION", 5, LDM6_NOTIFICATION, LDM6_T_PROD_INFO, LDM6_T_REPLYT,
     false},
    {"NOTIFYME", 5, LDM6_NOTIFYME, LDM6_T_PROD_CLASS, LDM6_T_REPLYT, false},
    {"COMINGSOON", 5, LDM6_COMINGSOON, LDM6_T_COMINGSOON_ARGS, LDM6_T_REPLYT,
     false},
    {"BLKDATA", 5, LDM6_BLKDATA, LDM6_T_DATAPKT, LDM6_T_REPLYT, false},
    /* Version 4: only the ping. */
    {"NULLPROC", 4, LDM6_NULLPROC, LDM6_T_VOID, LDM6_T_VOID, false},
};

const ldm6_proc_desc *ldm6_proc_lookup(uint32_t vers, uint32_t proc) {
  size_t i;

  for (i = 0; i < sizeof procs / sizeof procs[0]; i++)
    if (procs[i].vers == vers && procs[i].proc == proc)
      return &procs[i];
  return NULL;
}

const char *ldm6_type_name(ldm6_type type) {
  static const char *const names[LDM6_T_COUNT] = {
      "void",      "u_int",        "bool",       "prod_class",
      "feedpar",   "prod_info",    "product",    "comingsoon_args",
      "datapkt",   "fornme_reply", "hiya_reply", "comingsoon_reply",
      "ldm_replyt"};

  if (type < LDM6_T_VOID || type >= LDM6_T_COUNT)
    return "unknown";
  return names[type];
}

/* ---------------------------------------------------------------------- */
/* Conversions                                                            */
/* ---------------------------------------------------------------------- */

pq_timestamp ldm6_ts_to_pq(ldm6_timestamp t) {
  return (pq_timestamp){(int64_t)t.tv_sec, t.tv_usec};
}

int ldm6_ts_from_pq(pq_timestamp t, ldm6_timestamp *out) {
  if (t.sec < INT32_MIN || t.sec > INT32_MAX)
    return LDM6_ERANGE;
  out->tv_sec = (int32_t)t.sec;
  out->tv_usec = t.usec;
  return ts_valid(*out) ? LDM6_XDR_OK : LDM6_ETIME;
}

/* Copy a string known to fit (NUL within src's array of n + 1 bytes). */
static int copy_bounded(char *dst, const char *src, size_t n) {
  const char *nul = memchr(src, '\0', n + 1);

  if (nul == NULL)
    return LDM6_EBOUND;
  memcpy(dst, src, (size_t)(nul - src) + 1);
  return LDM6_XDR_OK;
}

int ldm6_info_to_pq(const ldm6_prod_info *in, pq_prod_info *out) {
  int rc;

  if (!ts_valid(in->arrival))
    return LDM6_ETIME;
  memset(out, 0, sizeof *out);
  out->arrival = ldm6_ts_to_pq(in->arrival);
  memcpy(out->signature, in->signature, PQ_SIGLEN);
  rc = copy_bounded(out->origin, in->origin, LDM6_HOSTNAMESIZE);
  if (rc == 0)
    rc = copy_bounded(out->ident, in->ident, LDM6_KEYSIZE);
  out->feedtype = in->feedtype;
  out->seqno = in->seqno;
  out->size = in->sz;
  return rc;
}

int ldm6_info_from_pq(const pq_prod_info *in, ldm6_prod_info *out) {
  int rc;

  memset(out, 0, sizeof *out);
  rc = ldm6_ts_from_pq(in->arrival, &out->arrival);
  if (rc != 0)
    return rc;
  if (in->size > UINT32_MAX)
    return LDM6_ERANGE;
  memcpy(out->signature, in->signature, LDM6_SIGLEN);
  rc = copy_bounded(out->origin, in->origin, PQ_ORIGIN_MAX);
  if (rc == 0)
    rc = copy_bounded(out->ident, in->ident, PQ_IDENT_MAX);
  out->feedtype = in->feedtype;
  out->seqno = in->seqno;
  out->sz = (uint32_t)in->size;
  return rc;
}

/*
 * A pattern from the wire into the class.  A back-reference is refused
 * first: glibc's matcher is exponential on them and a peer's pattern is
 * matched against every product (docs/security.md, "Patterns from peers").
 * @return as pq_class_add()
 */
static int wire_pattern(pq_class *out, const ldm6_prod_spec *spec, char *why,
                        size_t len) {
  const char *ref = pq_ere_backref(spec->pattern);

  if (ref != NULL) {
    snprintf(why, len,
             "back-reference \\%c refused (POSIX EREs have none; matching "
             "one can take exponential time)",
             ref[1]);
    return PQ_CLASS_EPATTERN;
  }
  return pq_class_add(out, spec->feedtype, spec->pattern, why, len);
}

int ldm6_class_to_pq(const ldm6_prod_class *in, pq_class *out, char *errbuf,
                     size_t errlen) {
  uint32_t i;

  pq_class_init(out, ldm6_ts_to_pq(in->from), ldm6_ts_to_pq(in->to));
  if (!ts_valid(in->from) || !ts_valid(in->to))
    return LDM6_ETIME;
  if (in->psa_len > LDM6_PSA_MAX)
    return LDM6_EBOUND;
  for (i = 0; i < in->psa_len; i++) {
    const ldm6_prod_spec *spec = &in->psa[i];
    char why[128];
    int rc;

    if (memchr(spec->pattern, '\0', sizeof spec->pattern) == NULL) {
      pq_class_free(out);
      return LDM6_EBOUND;
    }
    rc = wire_pattern(out, spec, why, sizeof why);
    if (rc != 0) {
      pq_class_free(out);
      if (rc != PQ_CLASS_EPATTERN)
        return LDM6_EBOUND;
      if (errbuf != NULL && errlen > 0)
        snprintf(errbuf, errlen, "pattern %u \"%s\": %s", (unsigned)i,
                 spec->pattern, why);
      return LDM6_EPATTERN;
    }
  }
  return LDM6_XDR_OK;
}

int ldm6_class_from_pq(const pq_class *in, ldm6_prod_class *out) {
  unsigned i;
  int rc;

  memset(out, 0, sizeof *out);
  rc = ldm6_ts_from_pq(in->from, &out->from);
  if (rc == 0)
    rc = ldm6_ts_from_pq(in->to, &out->to);
  if (rc != 0)
    return rc;
  if (in->nspecs > LDM6_PSA_MAX)
    return LDM6_EBOUND;
  for (i = 0; i < in->nspecs; i++) {
    out->psa[i].feedtype = in->specs[i].feedtype;
    rc =
        copy_bounded(out->psa[i].pattern, in->specs[i].pattern, PQ_PATTERN_MAX);
    if (rc != 0)
      return rc;
  }
  out->psa_len = in->nspecs;
  return LDM6_XDR_OK;
}
