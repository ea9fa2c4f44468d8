/*
 * rpc_msg.c - ONC RPC v2 message headers and TCP record marking for the
 * LDM protocol.  Owns the bytes around an LDM message: the CALL and REPLY
 * headers (coded on libtirpc's XDR primitives, one coder for both
 * directions), the fragment marks, the reassembly of records from a stream,
 * and the iovec layout that sends a record without copying its data.
 * The arguments and results themselves are ldmd/proto/ldm6_xdr.c's.
 *
 * The framer grows its buffer as bytes arrive, never to more than the
 * current fragment still needs, so a mark that announces a large fragment
 * costs nothing until the bytes come; a mark that would take the record
 * past the maximum fails at once.  A buffer grown past 1 MiB for a large
 * record is freed when the next record starts.
 */
#include "ldmd/proto/rpc_msg.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

#define FRAMER_MIN_CAP 4096u
#define FRAMER_KEEP_CAP (1u << 20)

/* ---------------------------------------------------------------------- */
/* Headers                                                                */
/* ---------------------------------------------------------------------- */

/* An XDR memory stream over one buffer, and the first error met. */
typedef struct hcur {
  XDR xdr;
  const uint8_t *base;
  size_t len;
  int err;
} hcur;

static bool decoding(const hcur *c) {
  return c->xdr.x_op == XDR_DECODE;
}

static bool fail(hcur *c, int err) {
  if (c->err == 0)
    c->err = err;
  return false;
}

static bool h_u32(hcur *c, uint32_t *v) {
  u_int u = decoding(c) ? 0 : *v;

  if (!xdr_u_int(&c->xdr, &u))
    return fail(c, decoding(c) ? LDM6_ESHORT : LDM6_ENOSPACE);
  if (decoding(c))
    *v = u;
  return true;
}

/* opaque_auth: flavor, then a body of at most 400 bytes. */
static bool h_auth(hcur *c, ldm6_rpc_auth *a) {
  uint32_t len = decoding(c) ? 0 : a->len;

  if (!decoding(c) && len > LDM6_RPC_MAX_AUTH_BYTES)
    return fail(c, LDM6_EBOUND);
  if (!h_u32(c, &a->flavor) || !h_u32(c, &len))
    return false;
  if (len > LDM6_RPC_MAX_AUTH_BYTES)
    return fail(c, LDM6_EBOUND);
  if (decoding(c)) {
    u_int pos = xdr_getpos(&c->xdr);
    size_t padded = (len + 3u) & ~3u;

    if (pos > c->len || padded > c->len - pos)
      return fail(c, LDM6_ESHORT);
    a->len = len;
    a->body = c->base + pos;
    if (!xdr_setpos(&c->xdr, (u_int)(pos + padded)))
      return fail(c, LDM6_ESHORT);
    return true;
  }
  if (len > 0 && a->body == NULL)
    return fail(c, LDM6_EINVAL);
  /* xdr_opaque takes a char *: encoding only reads through it. */
  if (!xdr_opaque(&c->xdr, (char *)a->body, len))
    return fail(c, LDM6_ENOSPACE);
  return true;
}

static bool h_call(hcur *c, ldm6_rpc_call *call) {
  return h_u32(c, &call->rpcvers) && h_u32(c, &call->prog) &&
         h_u32(c, &call->vers) && h_u32(c, &call->proc) &&
         h_auth(c, &call->cred) && h_auth(c, &call->verf);
}

static bool h_accepted(hcur *c, ldm6_rpc_reply *r) {
  if (!h_auth(c, &r->verf) || !h_u32(c, &r->accept_stat))
    return false;
  if (r->accept_stat == LDM6_RPC_PROG_MISMATCH)
    return h_u32(c, &r->low) && h_u32(c, &r->high);
  return true; /* SUCCESS: results follow; the others carry nothing */
}

static bool h_denied(hcur *c, ldm6_rpc_reply *r) {
  uint32_t stat = decoding(c) ? 0 : r->reject_stat;

  if (!decoding(c) && stat != LDM6_RPC_RPC_MISMATCH &&
      stat != LDM6_RPC_AUTH_ERROR)
    return fail(c, LDM6_EMSG);
  if (!h_u32(c, &stat))
    return false;
  if (decoding(c))
    r->reject_stat = stat;
  if (stat == LDM6_RPC_RPC_MISMATCH)
    return h_u32(c, &r->low) && h_u32(c, &r->high);
  if (stat == LDM6_RPC_AUTH_ERROR)
    return h_u32(c, &r->auth_stat);
  return fail(c, LDM6_EMSG);
}

static bool h_reply(hcur *c, ldm6_rpc_reply *r) {
  uint32_t stat = decoding(c) ? 0 : r->reply_stat;

  if (!decoding(c) && stat != LDM6_RPC_MSG_ACCEPTED &&
      stat != LDM6_RPC_MSG_DENIED)
    return fail(c, LDM6_EMSG);
  if (!h_u32(c, &stat))
    return false;
  if (decoding(c))
    r->reply_stat = stat;
  if (stat == LDM6_RPC_MSG_ACCEPTED)
    return h_accepted(c, r);
  if (stat == LDM6_RPC_MSG_DENIED)
    return h_denied(c, r);
  return fail(c, LDM6_EMSG);
}

static bool h_msg(hcur *c, ldm6_rpc_msg *m) {
  uint32_t type = decoding(c) ? 0 : m->type;

  if (!decoding(c) && type != LDM6_RPC_CALL && type != LDM6_RPC_REPLY)
    return fail(c, LDM6_EMSG);
  if (!h_u32(c, &m->xid) || !h_u32(c, &type))
    return false;
  if (decoding(c))
    m->type = type;
  if (type == LDM6_RPC_CALL)
    return h_call(c, &m->u.call);
  if (type == LDM6_RPC_REPLY)
    return h_reply(c, &m->u.reply);
  return fail(c, LDM6_EMSG);
}

/* Code a header over buf; *len is the header's length on success. */
static int code_msg(ldm6_rpc_msg *m, const void *buf, size_t len,
                    enum xdr_op op, size_t *used) {
  hcur c;
  bool ok;

  /* xdrmem_create takes a char *: decoding only reads through it. */
  xdrmem_create(&c.xdr, (char *)buf, (u_int)len, op);
  c.base = buf;
  c.len = len;
  c.err = 0;
  ok = h_msg(&c, m);
  if (ok)
    *used = xdr_getpos(&c.xdr);
  xdr_destroy(&c.xdr);
  if (!ok)
    return c.err != 0 ? c.err : LDM6_EINVAL;
  return LDM6_XDR_OK;
}

int ldm6_rpc_decode(const void *buf, size_t len, ldm6_rpc_msg *msg,
                    size_t *used) {
  if ((buf == NULL && len > 0) || msg == NULL || used == NULL || len > UINT_MAX)
    return LDM6_EINVAL;
  memset(msg, 0, sizeof *msg);
  return code_msg(msg, buf, len, XDR_DECODE, used);
}

int ldm6_rpc_encode(const ldm6_rpc_msg *msg, void *buf, size_t cap,
                    size_t *len) {
  if (msg == NULL || buf == NULL || len == NULL)
    return LDM6_EINVAL;
  if (cap > UINT_MAX)
    cap = UINT_MAX;
  /* The coders do not write through the message when encoding. */
  return code_msg((ldm6_rpc_msg *)msg, buf, cap, XDR_ENCODE, len);
}

int ldm6_rpc_encode_call(uint32_t xid, uint32_t prog, uint32_t vers,
                         uint32_t proc, void *buf, size_t cap, size_t *len) {
  ldm6_rpc_msg m;

  memset(&m, 0, sizeof m);
  m.xid = xid;
  m.type = LDM6_RPC_CALL;
  m.u.call.rpcvers = LDM6_RPC_VERSION;
  m.u.call.prog = prog;
  m.u.call.vers = vers;
  m.u.call.proc = proc;
  return ldm6_rpc_encode(&m, buf, cap, len);
}

static ldm6_rpc_msg reply_msg(uint32_t xid, uint32_t reply_stat) {
  ldm6_rpc_msg m;

  memset(&m, 0, sizeof m);
  m.xid = xid;
  m.type = LDM6_RPC_REPLY;
  m.u.reply.reply_stat = reply_stat;
  return m;
}

int ldm6_rpc_encode_accepted(uint32_t xid, uint32_t accept_stat, void *buf,
                             size_t cap, size_t *len) {
  ldm6_rpc_msg m = reply_msg(xid, LDM6_RPC_MSG_ACCEPTED);

  if (accept_stat == LDM6_RPC_PROG_MISMATCH)
    return LDM6_EINVAL;
  m.u.reply.accept_stat = accept_stat;
  return ldm6_rpc_encode(&m, buf, cap, len);
}

int ldm6_rpc_encode_prog_mismatch(uint32_t xid, uint32_t low, uint32_t high,
                                  void *buf, size_t cap, size_t *len) {
  ldm6_rpc_msg m = reply_msg(xid, LDM6_RPC_MSG_ACCEPTED);

  m.u.reply.accept_stat = LDM6_RPC_PROG_MISMATCH;
  m.u.reply.low = low;
  m.u.reply.high = high;
  return ldm6_rpc_encode(&m, buf, cap, len);
}

int ldm6_rpc_encode_auth_error(uint32_t xid, uint32_t auth_stat, void *buf,
                               size_t cap, size_t *len) {
  ldm6_rpc_msg m = reply_msg(xid, LDM6_RPC_MSG_DENIED);

  m.u.reply.reject_stat = LDM6_RPC_AUTH_ERROR;
  m.u.reply.auth_stat = auth_stat;
  return ldm6_rpc_encode(&m, buf, cap, len);
}

int ldm6_rpc_encode_rpc_mismatch(uint32_t xid, uint32_t low, uint32_t high,
                                 void *buf, size_t cap, size_t *len) {
  ldm6_rpc_msg m = reply_msg(xid, LDM6_RPC_MSG_DENIED);

  m.u.reply.reject_stat = LDM6_RPC_RPC_MISMATCH;
  m.u.reply.low = low;
  m.u.reply.high = high;
  return ldm6_rpc_encode(&m, buf, cap, len);
}

bool ldm6_rpc_reply_is_refusal(const ldm6_rpc_msg *msg) {
  return msg->type == LDM6_RPC_REPLY &&
         msg->u.reply.reply_stat == LDM6_RPC_MSG_DENIED &&
         msg->u.reply.reject_stat == LDM6_RPC_AUTH_ERROR;
}

bool ldm6_rpc_reply_is_awaited(const ldm6_rpc_msg *msg, bool waiting,
                               uint32_t awaited_xid) {
  return waiting && msg->type == LDM6_RPC_REPLY && msg->xid == awaited_xid;
}

/* ---------------------------------------------------------------------- */
/* Marks                                                                  */
/* ---------------------------------------------------------------------- */

void ldm6_rpc_mark_put(uint8_t mark[LDM6_RPC_MARK_LEN], uint32_t len,
                       bool last) {
  uint32_t word = (len & LDM6_RPC_FRAG_MAX) | (last ? LDM6_RPC_LAST_FRAG : 0u);

  mark[0] = (uint8_t)(word >> 24);
  mark[1] = (uint8_t)(word >> 16);
  mark[2] = (uint8_t)(word >> 8);
  mark[3] = (uint8_t)word;
}

void ldm6_rpc_mark_get(const uint8_t mark[LDM6_RPC_MARK_LEN], uint32_t *len,
                       bool *last) {
  uint32_t word = (uint32_t)mark[0] << 24 | (uint32_t)mark[1] << 16 |
                  (uint32_t)mark[2] << 8 | (uint32_t)mark[3];

  *len = word & LDM6_RPC_FRAG_MAX;
  *last = (word & LDM6_RPC_LAST_FRAG) != 0;
}

/* ---------------------------------------------------------------------- */
/* The framer                                                             */
/* ---------------------------------------------------------------------- */

void ldm6_rpc_framer_init(ldm6_rpc_framer *f, size_t max_record) {
  memset(f, 0, sizeof *f);
  f->max = max_record;
}

void ldm6_rpc_framer_free(ldm6_rpc_framer *f) {
  free(f->buf);
  f->buf = NULL;
  f->cap = 0;
  f->len = 0;
  f->ready = false;
}

/* Forget the record handed out; drop a buffer grown for a large one. */
static void begin_record(ldm6_rpc_framer *f) {
  f->len = 0;
  f->skipped = 0;
  f->ready = false;
  if (f->cap > FRAMER_KEEP_CAP) {
    free(f->buf);
    f->buf = NULL;
    f->cap = 0;
  }
}

/* Room for need bytes, growing geometrically but never past end (the end
 * of the current fragment, which need does not exceed). */
static int reserve(ldm6_rpc_framer *f, size_t need, size_t end) {
  size_t cap;
  uint8_t *nbuf;

  if (need <= f->cap)
    return LDM6_XDR_OK;
  cap = f->cap < FRAMER_MIN_CAP ? FRAMER_MIN_CAP : f->cap;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  if (cap > end)
    cap = end;
  nbuf = realloc(f->buf, cap);
  if (nbuf == NULL)
    return LDM6_ENOMEM;
  f->buf = nbuf;
  f->cap = cap;
  return LDM6_XDR_OK;
}

/* Take up to len bytes of a mark; start the fragment once it is whole. */
static int take_mark(ldm6_rpc_framer *f, const uint8_t *p, size_t len,
                     size_t *took) {
  size_t n = LDM6_RPC_MARK_LEN - f->mark_have;
  uint32_t frag;
  bool last;

  if (n > len)
    n = len;
  memcpy(f->mark + f->mark_have, p, n);
  f->mark_have = (uint8_t)(f->mark_have + n);
  *took = n;
  if (f->mark_have < LDM6_RPC_MARK_LEN)
    return LDM6_XDR_OK;
  f->mark_have = 0;
  ldm6_rpc_mark_get(f->mark, &frag, &last);
  if (frag > f->max - f->len - f->skipped)
    return LDM6_ETOOBIG;
  f->frag_left = frag;
  f->last = last;
  f->in_frag = true;
  return LDM6_XDR_OK;
}

/* Take up to len bytes of the current fragment. */
static int take_frag(ldm6_rpc_framer *f, const uint8_t *p, size_t len,
                     size_t *took) {
  size_t n = f->frag_left < len ? f->frag_left : len;

  *took = 0;
  if (n > 0) {
    int rc = reserve(f, f->len + n, f->len + f->frag_left);

    if (rc != 0)
      return rc;
    memcpy(f->buf + f->len, p, n);
    f->len += n;
    f->frag_left -= (uint32_t)n;
    *took = n;
  }
  if (f->frag_left == 0) {
    f->in_frag = false;
    if (f->last)
      f->ready = true;
  }
  return LDM6_XDR_OK;
}

int ldm6_rpc_framer_feed(ldm6_rpc_framer *f, const void *data, size_t len,
                         size_t *consumed) {
  const uint8_t *p = data;
  size_t i = 0;

  *consumed = 0;
  if (f->error != 0)
    return f->error;
  if (f->ready)
    begin_record(f);
  while (i < len || f->in_frag) {
    size_t took;
    int rc;

    if (!f->in_frag) {
      rc = take_mark(f, p + i, len - i, &took);
      i += took;
      if (rc != 0) {
        f->error = rc;
        return rc;
      }
      if (!f->in_frag)
        break; /* the mark is still incomplete */
    }
    rc = take_frag(f, p + i, len - i, &took);
    i += took;
    if (rc != 0) {
      f->error = rc;
      return rc;
    }
    if (f->ready) {
      *consumed = i;
      return 1;
    }
    if (f->in_frag)
      break; /* input used up inside the fragment */
  }
  *consumed = i;
  return 0;
}

bool ldm6_rpc_framer_record(const ldm6_rpc_framer *f, uint8_t **rec,
                            size_t *len) {
  if (!f->ready)
    return false;
  *rec = f->buf;
  *len = f->len;
  return true;
}

size_t ldm6_rpc_framer_want(const ldm6_rpc_framer *f) {
  if (f->in_frag && f->frag_left > 0)
    return f->frag_left;
  return LDM6_RPC_MARK_LEN - f->mark_have;
}

size_t ldm6_rpc_framer_frag_left(const ldm6_rpc_framer *f) {
  return f->in_frag ? f->frag_left : 0;
}

size_t ldm6_rpc_framer_stored(const ldm6_rpc_framer *f, uint8_t **bytes) {
  if (bytes != NULL)
    *bytes = f->buf;
  return f->len;
}

bool ldm6_rpc_framer_complete(const ldm6_rpc_framer *f) {
  return f->ready;
}

int ldm6_rpc_framer_skip(ldm6_rpc_framer *f, size_t n) {
  if (f->error != 0)
    return f->error;
  if (n > ldm6_rpc_framer_frag_left(f))
    return LDM6_EINVAL;
  f->frag_left -= (uint32_t)n;
  f->skipped += n;
  if (f->frag_left > 0)
    return 0;
  f->in_frag = false;
  if (!f->last)
    return 0;
  f->ready = true;
  return 1;
}

/* ---------------------------------------------------------------------- */
/* Writing records                                                        */
/* ---------------------------------------------------------------------- */

static size_t frag_limit(size_t max_frag) {
  return max_frag == 0 || max_frag > LDM6_RPC_FRAG_MAX ? LDM6_RPC_FRAG_MAX
                                                       : max_frag;
}

size_t ldm6_rpc_record_nfrags(size_t total, size_t max_frag) {
  size_t mf = frag_limit(max_frag);

  if (total == 0)
    return 1;
  return total / mf + (total % mf != 0);
}

int ldm6_rpc_record_iov(const struct iovec *pieces, size_t npieces,
                        size_t max_frag, uint8_t (*marks)[LDM6_RPC_MARK_LEN],
                        size_t nmarks, struct iovec *out, size_t outcap,
                        size_t *nout) {
  size_t mf = frag_limit(max_frag);
  size_t total = 0, done = 0, nfrags, frag, k = 0, off = 0, o = 0;

  if ((pieces == NULL && npieces > 0) || marks == NULL || out == NULL ||
      nout == NULL)
    return LDM6_EINVAL;
  for (k = 0; k < npieces; k++) {
    if (pieces[k].iov_len > SIZE_MAX - total)
      return LDM6_EINVAL;
    total += pieces[k].iov_len;
  }
  nfrags = ldm6_rpc_record_nfrags(total, max_frag);
  if (nmarks < nfrags)
    return LDM6_ENOSPACE;
  k = 0;
  for (frag = 0; frag < nfrags; frag++) {
    size_t flen = total - done < mf ? total - done : mf;
    size_t need = flen;

    if (o >= outcap)
      return LDM6_ENOSPACE;
    ldm6_rpc_mark_put(marks[frag], (uint32_t)flen, frag + 1 == nfrags);
    out[o].iov_base = marks[frag];
    out[o++].iov_len = LDM6_RPC_MARK_LEN;
    while (need > 0) {
      size_t take;

      while (pieces[k].iov_len == off) { /* skip used and empty pieces */
        k++;
        off = 0;
      }
      take = pieces[k].iov_len - off;
      if (take > need)
        take = need;
      if (o >= outcap)
        return LDM6_ENOSPACE;
      out[o].iov_base = (uint8_t *)pieces[k].iov_base + off;
      out[o++].iov_len = take;
      off += take;
      need -= take;
    }
    done += flen;
  }
  *nout = o;
  return LDM6_XDR_OK;
}
