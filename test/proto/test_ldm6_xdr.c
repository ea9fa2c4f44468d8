/*
 * test_ldm6_xdr.c - the LDM-6 XDR coders against real LDM bytes: every
 * message of the captured LDM 6.15 session (test/vectors/ldm6) is
 * reassembled, decoded by procedure (replies by the xid of their call),
 * checked field by field against the capture's decoded text and encoded
 * again to the same bytes (a missing capture is a failure); byte-exact
 * encodings of example values; zero-copy HEREIS and BLKDATA layouts;
 * hostile input (every truncation, every bound, bad times and
 * discriminants, byte mutations); the procedure table and the conversions
 * to the product model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_msg.h"
#include "test/lib/ldm6_capture.h"
#include "test/lib/testutil.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/* Encode value and compare with the expected hex; then decode the bytes
 * and encode again: same bytes. */
static void expect_encoding(ldm6_type type, const void *value,
                            const char *hex) {
  uint8_t want[512], got[512], again[512];
  size_t nwant = tu_unhex(hex, want, sizeof want), ngot = 0, used = 0, n2 = 0;
  ldm6_value back;

  assert_int_equal(ldm6_encode(type, value, got, sizeof got, &ngot), 0);
  assert_int_equal(ngot, nwant);
  assert_memory_equal(got, want, nwant);
  assert_int_equal(ldm6_decode(type, want, nwant, &back, &used), 0);
  assert_int_equal(used, nwant);
  assert_int_equal(ldm6_encode(type, &back, again, sizeof again, &n2), 0);
  assert_int_equal(n2, nwant);
  assert_memory_equal(again, want, nwant);
}

static const uint8_t SIG_10_1F[LDM6_SIGLEN] = {
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
    0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};

/* The product of the HEREIS example of section 3.8. */
static ldm6_product example_product(void) {
  ldm6_product p;

  memset(&p, 0, sizeof p);
  p.info.arrival = (ldm6_timestamp){1700000000, 123456};
  memcpy(p.info.signature, SIG_10_1F, LDM6_SIGLEN);
  strcpy(p.info.origin, "host.example.com");
  p.info.feedtype = PQ_FT_IDS;
  p.info.seqno = 42;
  strcpy(p.info.ident, "SAUS01 KWBC 010000");
  p.info.sz = 5;
  p.data = "hello";
  return p;
}

#define HEX_EXAMPLE_INFO                                                       \
  "6553f100 0001e240 10111213 14151617 18191a1b 1c1d1e1f "                     \
  "00000010 686f7374 2e657861 6d706c65 2e636f6d 00000008 0000002a "            \
  "00000012 53415553 3031204b 57424320 30313030 30300000 00000005"

/* {WMO, "^SA"} from 1700000000.0 to TS_ENDT. */
static ldm6_prod_class example_class(void) {
  ldm6_prod_class c;

  memset(&c, 0, sizeof c);
  c.from = (ldm6_timestamp){1700000000, 0};
  c.to = (ldm6_timestamp){0x7fffffff, 999999};
  c.psa_len = 1;
  c.psa[0].feedtype = PQ_FT_WMO;
  strcpy(c.psa[0].pattern, "^SA");
  return c;
}

#define HEX_EXAMPLE_CLASS                                                      \
  "6553f100 00000000 7fffffff 000f423f 00000001 0000000f 00000003 5e534100"

/* ---------------------------------------------------------------------- */
/* The capture                                                            */
/* ---------------------------------------------------------------------- */

typedef struct fixture {
  bool loaded;
  char why[1200];
  capture cap;
} fixture;

static int load_capture(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  const char *dir = cap_dir();
  unsigned bad = 0;
  int rc;

  if (fx == NULL)
    return -1;
  *state = fx;
  if (dir == NULL) {
    snprintf(fx->why, sizeof fx->why,
             "no vectors directory (set LDM6_VECTORS)");
    return 0;
  }
  rc = cap_load(dir, &fx->cap, &bad);
  if (rc == -1) {
    snprintf(fx->why, sizeof fx->why, "cannot read %s/session_decoded.txt: %s",
             dir, strerror(errno));
    return 0;
  }
  if (rc != 0) {
    fprintf(stderr, "%s/session_decoded.txt: line %u not understood\n", dir,
            bad);
    return -1;
  }
  fx->loaded = true;
  return 0;
}

static int free_capture(void **state) {
  fixture *fx = *state;

  cap_free(&fx->cap);
  free(fx);
  return 0;
}

static const capture *need_capture(void **state) {
  const fixture *fx = *state;

  if (!fx->loaded) /* it is part of the tree: never a skip */
    fail_msg("the LDM capture is not available: %s", fx->why);
  return &fx->cap;
}

/* What a capture message decoded to. */
typedef struct decoded {
  const cap_msg *cm;
  ldm6_rpc_msg hdr;
  const ldm6_proc_desc *pd; /* the call's, also for its reply */
  ldm6_type type;           /* of val; VOID when nothing follows */
  ldm6_value val;
  const uint8_t *rec;
  size_t rec_len;
  size_t hdr_len;
  size_t checked; /* fields compared with the capture's text */
} decoded;

/* The calls seen so far, to give replies their procedure. */
typedef struct call_log {
  struct {
    int conn;
    uint32_t xid;
    const ldm6_proc_desc *pd;
  } e[256];
  size_t n;
} call_log;

static const ldm6_proc_desc *call_of(const call_log *log, int conn,
                                     uint32_t xid) {
  size_t i;

  for (i = log->n; i-- > 0;)
    if (log->e[i].conn == conn && log->e[i].xid == xid)
      return log->e[i].pd;
  return NULL;
}

/* A value to compare with a field of the capture. */
enum { V_NUM, V_STR, V_SIG };
typedef struct ourval {
  int kind;
  uint64_t num;
  const uint8_t *bytes;
  size_t len;
} ourval;

static bool num(ourval *v, uint64_t n) {
  v->kind = V_NUM;
  v->num = n;
  return true;
}

static bool str(ourval *v, const void *s, size_t len) {
  v->kind = V_STR;
  v->bytes = s;
  v->len = len;
  return true;
}

static bool sig(ourval *v, const uint8_t *s) {
  v->kind = V_SIG;
  v->bytes = s;
  v->len = LDM6_SIGLEN;
  return true;
}

static bool starts(const char *s, const char *prefix, const char **rest) {
  size_t n = strlen(prefix);

  if (strncmp(s, prefix, n) != 0)
    return false;
  *rest = s + n;
  return true;
}

static bool info_field(const ldm6_prod_info *info, const char *f, ourval *v) {
  if (strcmp(f, "arrival.tv_sec") == 0)
    return num(v, (uint32_t)info->arrival.tv_sec);
  if (strcmp(f, "arrival.tv_usec") == 0)
    return num(v, (uint32_t)info->arrival.tv_usec);
  if (strcmp(f, "signature") == 0)
    return sig(v, info->signature);
  if (strcmp(f, "origin: length") == 0)
    return num(v, strlen(info->origin));
  if (strcmp(f, "origin: bytes") == 0)
    return str(v, info->origin, strlen(info->origin));
  if (strcmp(f, "feedtype") == 0)
    return num(v, info->feedtype);
  if (strcmp(f, "seqno") == 0)
    return num(v, info->seqno);
  if (strcmp(f, "ident: length") == 0)
    return num(v, strlen(info->ident));
  if (strcmp(f, "ident: bytes") == 0)
    return str(v, info->ident, strlen(info->ident));
  if (strcmp(f, "sz") == 0)
    return num(v, info->sz);
  return false;
}

static bool class_field(const ldm6_prod_class *cls, const char *f, ourval *v) {
  unsigned i;
  int n = 0;

  if (strcmp(f, "from.tv_sec") == 0)
    return num(v, (uint32_t)cls->from.tv_sec);
  if (strcmp(f, "from.tv_usec") == 0)
    return num(v, (uint32_t)cls->from.tv_usec);
  if (strcmp(f, "to.tv_sec") == 0)
    return num(v, (uint32_t)cls->to.tv_sec);
  if (strcmp(f, "to.tv_usec") == 0)
    return num(v, (uint32_t)cls->to.tv_usec);
  if (strcmp(f, "psa: number of prod_spec elements") == 0)
    return num(v, cls->psa_len);
  if (sscanf(f, "psa[%u].%n", &i, &n) != 1 || n == 0 || i >= cls->psa_len)
    return false;
  f += n;
  if (strcmp(f, "feedtype") == 0)
    return num(v, cls->psa[i].feedtype);
  if (strcmp(f, "pattern: length") == 0)
    return num(v, strlen(cls->psa[i].pattern));
  if (strcmp(f, "pattern: bytes") == 0)
    return str(v, cls->psa[i].pattern, strlen(cls->psa[i].pattern));
  return false;
}

static bool header_field(const decoded *d, const char *name, ourval *v) {
  const ldm6_rpc_call *c = &d->hdr.u.call;
  const ldm6_rpc_reply *r = &d->hdr.u.reply;
  const ldm6_rpc_auth *verf =
      d->hdr.type == LDM6_RPC_CALL ? &c->verf : &r->verf;

  if (strcmp(name, "xid") == 0)
    return num(v, d->hdr.xid);
  if (strcmp(name, "msg_type") == 0)
    return num(v, d->hdr.type);
  if (strcmp(name, "verf.flavor") == 0)
    return num(v, verf->flavor);
  if (strcmp(name, "verf.body: length") == 0)
    return num(v, verf->len);
  if (d->hdr.type == LDM6_RPC_CALL) {
    if (strcmp(name, "rpcvers") == 0)
      return num(v, c->rpcvers);
    if (strcmp(name, "prog") == 0)
      return num(v, c->prog);
    if (strcmp(name, "vers") == 0)
      return num(v, c->vers);
    if (strcmp(name, "proc") == 0)
      return num(v, c->proc);
    if (strcmp(name, "cred.flavor") == 0)
      return num(v, c->cred.flavor);
    if (strcmp(name, "cred.body: length") == 0)
      return num(v, c->cred.len);
    return false;
  }
  if (strcmp(name, "reply_stat") == 0)
    return num(v, r->reply_stat);
  if (strcmp(name, "accept_stat") == 0)
    return num(v, r->accept_stat);
  return false;
}

/* Our value of a named field of the capture, or false if we have none. */
static bool our_field(const decoded *d, const char *name, ourval *v) {
  const ldm6_value *x = &d->val;
  const char *f;

  if (header_field(d, name, v))
    return true;
  switch (d->type) {
  case LDM6_T_FEEDPAR:
    if (strcmp(name, "feedpar.max_hereis") == 0)
      return num(v, x->feedpar.max_hereis);
    return starts(name, "prod_class.", &f) &&
           class_field(&x->feedpar.prod_class, f, v);
  case LDM6_T_PROD_CLASS:
    return starts(name, "prod_class.", &f) && class_field(&x->prod_class, f, v);
  case LDM6_T_PRODUCT:
    if (strcmp(name, "product.data") == 0)
      return str(v, x->product.data, x->product.info.sz);
    return starts(name, "product.info.", &f) &&
           info_field(&x->product.info, f, v);
  case LDM6_T_PROD_INFO:
    return starts(name, "prod_info.", &f) && info_field(&x->prod_info, f, v);
  case LDM6_T_COMINGSOON_ARGS:
    if (strcmp(name, "comingsoon_args.pktsz") == 0)
      return num(v, x->comingsoon_args.pktsz);
    return starts(name, "infop.", &f) &&
           info_field(&x->comingsoon_args.info, f, v);
  case LDM6_T_DATAPKT:
    if (strcmp(name, "datapkt.signature") == 0)
      return sig(v, x->datapkt.signature);
    if (strcmp(name, "datapkt.pktnum") == 0)
      return num(v, x->datapkt.pktnum);
    if (strcmp(name, "datapkt.data: length") == 0)
      return num(v, x->datapkt.data_len);
    if (strcmp(name, "datapkt.data: bytes") == 0)
      return str(v, x->datapkt.data, x->datapkt.data_len);
    return false;
  case LDM6_T_FORNME_REPLY:
    if (strcmp(name, "fornme_reply_t.code") == 0)
      return num(v, (uint32_t)x->fornme_reply.code);
    if (strcmp(name, "fornme_reply_t.id") == 0 &&
        x->fornme_reply.code == LDM6_OK)
      return num(v, x->fornme_reply.u.id);
    return false;
  case LDM6_T_HIYA_REPLY:
    if (strcmp(name, "hiya_reply_t.code") == 0)
      return num(v, (uint32_t)x->hiya_reply.code);
    if (strcmp(name, "hiya_reply_t.max_hereis") == 0 &&
        x->hiya_reply.code == LDM6_OK)
      return num(v, x->hiya_reply.u.max_hereis);
    return false;
  case LDM6_T_COMINGSOON_REPLY:
    if (strcmp(name, "comingsoon_reply_t") == 0)
      return num(v, (uint32_t)x->comingsoon_reply);
    return false;
  default:
    return false;
  }
}

/* The capture prints strings as Python literals: undo the escapes.
 * Returns the length; *cut is set when the text ends in "...". */
static size_t unquote(const char *s, char *out, size_t cap, bool *cut) {
  size_t n = 0;

  assert_true(*s == '\'');
  s++;
  while (*s != '\0' && *s != '\'') {
    char c = *s++;

    if (c == '\\') {
      c = *s++;
      if (c == 'n')
        c = '\n';
      else if (c == 't')
        c = '\t';
      else if (c == 'r')
        c = '\r';
      else if (c == 'x') {
        char h[3] = {s[0], s[1], 0};

        c = (char)strtoul(h, NULL, 16);
        s += 2;
      }
    }
    assert_true(n + 1 < cap);
    out[n++] = c;
  }
  assert_true(*s == '\'');
  *cut = strcmp(s + 1, "...") == 0;
  out[n] = '\0';
  return n;
}

static void check_field(decoded *d, const cap_field *f) {
  const cap_msg *m = d->cm;
  ourval v;

  assert_true(f->off + f->len <= m->len);
  /* The hex column is the bytes at the offset (unless cut). */
  if (f->len > 0 && strstr(f->hex, "...") == NULL) {
    uint8_t b[64];

    assert_int_equal(tu_unhex(f->hex, b, sizeof b), f->len);
    assert_memory_equal(b, m->bytes + f->off, f->len);
  }
  if (!f->has_value) {
    unsigned flen = 0, last = 0;

    if (strncmp(f->desc, "record mark:", 12) == 0) {
      uint32_t len;
      bool is_last;

      assert_int_equal(sscanf(f->desc,
                              "record mark: last-fragment bit=%u, "
                              "fragment length=%u",
                              &last, &flen),
                       2);
      ldm6_rpc_mark_get(m->bytes, &len, &is_last);
      assert_int_equal(len, flen);
      assert_int_equal(is_last, last);
      assert_int_equal(flen, d->rec_len);
    } else if (strncmp(f->desc, "XDR padding", 11) == 0) {
      unsigned i;

      for (i = 0; i < f->len; i++)
        assert_int_equal(m->bytes[f->off + i], 0);
    } else if (f->desc[0] != '[') {
      fail_msg("frame %u: field without value not understood: %s", m->frame,
               f->desc);
    }
    return;
  }
  if (!our_field(d, f->name, &v))
    fail_msg("frame %u: no decoded value for field \"%s\"", m->frame, f->name);
  d->checked++;
  if (v.kind == V_NUM) {
    char *end;
    unsigned long long want = strtoull(f->value, &end, 0);

    assert_true(end != f->value);
    if (want != v.num)
      fail_msg("frame %u: %s: capture %llu, decoded %llu", m->frame, f->name,
               want, (unsigned long long)v.num);
  } else if (v.kind == V_SIG) {
    uint8_t want[LDM6_SIGLEN];
    char hex[33];

    snprintf(hex, sizeof hex, "%.32s", f->value);
    assert_int_equal(tu_unhex(hex, want, sizeof want), LDM6_SIGLEN);
    assert_memory_equal(v.bytes, want, LDM6_SIGLEN);
  } else {
    char want[CAP_VALUE_MAX];
    bool cut;
    size_t n = unquote(f->value, want, sizeof want, &cut);

    if (cut)
      assert_true(v.len >= n);
    else
      assert_int_equal(v.len, n);
    if (n > 0)
      assert_memory_equal(v.bytes, want, n);
  }
}

/* Reassemble, decode, check and re-encode one message of the capture. */
static void run_message(const cap_msg *m, call_log *log, decoded *d) {
  ldm6_rpc_framer fr;
  uint8_t *rec = NULL, out[1024];
  size_t rec_len = 0, used = 0, i, n = 0, n2 = 0;
  int rc = 0;

  memset(d, 0, sizeof *d);
  d->cm = m;
  assert_true(m->len > LDM6_RPC_MARK_LEN && m->len < sizeof out);

  /* The framer gives the record whole, fed at once or byte by byte. */
  ldm6_rpc_framer_init(&fr, LDM6_MAX_RPC_BUF);
  assert_int_equal(ldm6_rpc_framer_feed(&fr, m->bytes, m->len, &used), 1);
  assert_int_equal(used, m->len);
  assert_true(ldm6_rpc_framer_record(&fr, &rec, &rec_len));
  assert_int_equal(rec_len, m->len - LDM6_RPC_MARK_LEN);
  assert_memory_equal(rec, m->bytes + LDM6_RPC_MARK_LEN, rec_len);
  for (i = 0; i < m->len; i++) {
    rc = ldm6_rpc_framer_feed(&fr, m->bytes + i, 1, &used);
    assert_int_equal(used, 1);
    assert_int_equal(rc, i + 1 == m->len ? 1 : 0);
  }
  assert_true(ldm6_rpc_framer_record(&fr, &rec, &rec_len));
  assert_memory_equal(rec, m->bytes + LDM6_RPC_MARK_LEN, rec_len);
  ldm6_rpc_framer_free(&fr);

  /* The header, then the arguments or results by procedure. */
  d->rec = m->bytes + LDM6_RPC_MARK_LEN;
  d->rec_len = m->len - LDM6_RPC_MARK_LEN;
  assert_int_equal(ldm6_rpc_decode(d->rec, d->rec_len, &d->hdr, &d->hdr_len),
                   0);
  assert_int_equal(d->hdr.xid, m->xid);
  if (m->is_call) {
    assert_int_equal(d->hdr.type, LDM6_RPC_CALL);
    assert_int_equal(d->hdr.u.call.rpcvers, LDM6_RPC_VERSION);
    assert_int_equal(d->hdr.u.call.prog, m->prog);
    assert_int_equal(d->hdr.u.call.vers, m->vers);
    assert_int_equal(d->hdr.u.call.proc, m->proc);
    d->pd = ldm6_proc_lookup(m->vers, m->proc);
    assert_non_null(d->pd);
    assert_string_equal(d->pd->name, m->proc_name);
    d->type = d->pd->arg;
    assert_true(log->n < sizeof log->e / sizeof log->e[0]);
    log->e[log->n].conn = m->conn;
    log->e[log->n].xid = m->xid;
    log->e[log->n++].pd = d->pd;
  } else {
    assert_int_equal(d->hdr.type, LDM6_RPC_REPLY);
    d->pd = call_of(log, m->conn, m->xid);
    if (d->pd == NULL)
      fail_msg("frame %u: reply xid %#x answers no call", m->frame, m->xid);
    assert_string_equal(d->pd->name, m->proc_name);
    d->type = d->hdr.u.reply.reply_stat == LDM6_RPC_MSG_ACCEPTED &&
                      d->hdr.u.reply.accept_stat == LDM6_RPC_SUCCESS
                  ? d->pd->res
                  : LDM6_T_VOID;
  }
  rc = ldm6_decode(d->type, d->rec + d->hdr_len, d->rec_len - d->hdr_len,
                   &d->val, &used);
  if (rc != 0)
    fail_msg("frame %u: %s %s: %s", m->frame, d->pd->name,
             ldm6_type_name(d->type), ldm6_strerror(rc));
  assert_int_equal(d->hdr_len + used, d->rec_len);

  for (i = 0; i < m->nfields; i++)
    check_field(d, &m->fields[i]);

  /* Encoded again: the same bytes. */
  assert_int_equal(ldm6_rpc_encode(&d->hdr, out + LDM6_RPC_MARK_LEN,
                                   sizeof out - LDM6_RPC_MARK_LEN, &n),
                   0);
  assert_int_equal(ldm6_encode(d->type, &d->val, out + LDM6_RPC_MARK_LEN + n,
                               sizeof out - LDM6_RPC_MARK_LEN - n, &n2),
                   0);
  ldm6_rpc_mark_put(out, (uint32_t)(n + n2), true);
  assert_int_equal(LDM6_RPC_MARK_LEN + n + n2, m->len);
  assert_memory_equal(out, m->bytes, m->len);
}

static void test_capture_every_message(void **state) {
  const capture *cap = need_capture(state);
  call_log *log = calloc(1, sizeof *log);
  decoded *d = malloc(sizeof *d);
  size_t i, calls = 0, replies = 0, reencoded = 0, fields = 0;
  unsigned types = 0;

  assert_non_null(log);
  assert_non_null(d);
  assert_true(cap->n > 0);
  assert_int_equal(cap->n, cap->titles);
  for (i = 0; i < cap->n; i++) {
    run_message(&cap->msgs[i], log, d);
    if (cap->msgs[i].is_call)
      calls++;
    else
      replies++;
    types |= 1u << d->type;
    fields += d->checked;
    reencoded++;
  }
  /* The session covers every v6 argument and result type it should. */
  assert_true(types & (1u << LDM6_T_FEEDPAR));
  assert_true(types & (1u << LDM6_T_PRODUCT));
  assert_true(types & (1u << LDM6_T_PROD_INFO));
  assert_true(types & (1u << LDM6_T_PROD_CLASS));
  assert_true(types & (1u << LDM6_T_COMINGSOON_ARGS));
  assert_true(types & (1u << LDM6_T_DATAPKT));
  assert_true(types & (1u << LDM6_T_FORNME_REPLY));
  assert_true(types & (1u << LDM6_T_HIYA_REPLY));
  assert_true(types & (1u << LDM6_T_COMINGSOON_REPLY));
  print_message("capture: %zu messages (%zu calls, %zu replies) decoded, "
                "%zu named fields matched, %zu re-encoded byte for byte\n",
                cap->n, calls, replies, fields, reencoded);
  free(d);
  free(log);
}

/*
 * Who waits for which reply: a sender of a synchronous call waits for its
 * xid; one-way calls are not waited for.  Every reply in the capture must be
 * either the awaited one or a stray answer to a one-way call (notifyme's
 * PROC_UNAVAIL to NOTIFICATION), which the waiting side discards.
 */
static void test_capture_stray_replies(void **state) {
  const capture *cap = need_capture(state);
  call_log *log = calloc(1, sizeof *log);
  decoded *d = malloc(sizeof *d);
  struct {
    int conn;
    char addr[32];
    bool waiting;
    uint32_t xid;
  } ep[64];
  size_t nep = 0, i, j, matched = 0, stray = 0, oneway = 0;

  assert_non_null(log);
  assert_non_null(d);
  for (i = 0; i < cap->n; i++) {
    const cap_msg *m = &cap->msgs[i];
    const char *who = m->is_call ? m->src : m->dst;

    run_message(m, log, d);
    for (j = 0; j < nep; j++)
      if (ep[j].conn == m->conn && strcmp(ep[j].addr, who) == 0)
        break;
    if (j == nep) {
      assert_true(nep < sizeof ep / sizeof ep[0]);
      memset(&ep[nep], 0, sizeof ep[nep]);
      ep[nep].conn = m->conn;
      snprintf(ep[nep].addr, sizeof ep[nep].addr, "%s", who);
      nep++;
    }
    if (m->is_call) {
      if (d->pd->oneway) {
        oneway++;
      } else {
        assert_false(ep[j].waiting); /* one call at a time */
        ep[j].waiting = true;
        ep[j].xid = m->xid;
      }
    } else if (ldm6_rpc_reply_is_awaited(&d->hdr, ep[j].waiting, ep[j].xid)) {
      ep[j].waiting = false;
      matched++;
    } else {
      /* Discarded: it must answer a one-way call. */
      assert_true(d->pd->oneway);
      assert_int_equal(d->hdr.u.reply.accept_stat, LDM6_RPC_PROC_UNAVAIL);
      stray++;
    }
  }
  assert_true(oneway > 0);
  assert_int_equal(stray, 1);
  assert_true(matched > 0);
  print_message("capture: %zu one-way calls, %zu awaited replies, %zu stray "
                "reply discarded\n",
                oneway, matched, stray);
  free(d);
  free(log);
}

/* Every strict prefix of every captured value fails with LDM6_ESHORT; byte
 * mutations never crash, and what still decodes encodes stably. */
static void test_capture_hostile(void **state) {
  const capture *cap = need_capture(state);
  call_log *log = calloc(1, sizeof *log);
  decoded *d = malloc(sizeof *d);
  ldm6_value *v = malloc(sizeof *v);
  uint8_t *buf = malloc(1024), *enc1 = malloc(1024), *enc2 = malloc(1024);
  static const uint8_t subst[] = {0x00, 0xff, 0x80, 0x01, 0x7f};
  size_t i, k, s, used, n1, n2, mutants = 0;

  assert_true(log && d && v && buf && enc1 && enc2);
  for (i = 0; i < cap->n; i++) {
    const uint8_t *arg;
    size_t alen;

    run_message(&cap->msgs[i], log, d);
    arg = d->rec + d->hdr_len;
    alen = d->rec_len - d->hdr_len;
    for (k = 0; k < alen; k++) {
      memcpy(buf, arg, k); /* exactly k bytes: ASan sees any overread */
      assert_int_equal(ldm6_decode(d->type, buf, k, v, &used), LDM6_ESHORT);
    }
    for (k = 0; k < alen; k++)
      for (s = 0; s < sizeof subst; s++) {
        memcpy(buf, arg, alen);
        buf[k] = subst[s];
        mutants++;
        if (ldm6_decode(d->type, buf, alen, v, &used) != 0)
          continue;
        assert_true(used <= alen);
        assert_int_equal(ldm6_encode(d->type, v, enc1, 1024, &n1), 0);
        assert_int_equal(ldm6_decode(d->type, enc1, n1, v, &used), 0);
        assert_int_equal(used, n1);
        assert_int_equal(ldm6_encode(d->type, v, enc2, 1024, &n2), 0);
        assert_int_equal(n1, n2);
        assert_memory_equal(enc1, enc2, n1);
      }
    /* The header too. */
    for (k = 0; k < d->hdr_len; k++) {
      ldm6_rpc_msg h;

      memcpy(buf, d->rec, k);
      assert_int_equal(ldm6_rpc_decode(buf, k, &h, &used), LDM6_ESHORT);
    }
  }
  print_message("capture: %zu mutated values decoded safely\n", mutants);
  free(enc2);
  free(enc1);
  free(buf);
  free(v);
  free(d);
  free(log);
}

/* A HEREIS record laid out for writev (header and metadata, then the data
 * from its own buffer, then padding) equals the captured one, and arrives
 * whole through the framer when cut into small fragments. */
static void test_capture_zero_copy_hereis(void **state) {
  const capture *cap = need_capture(state);
  const cap_msg *m = NULL;
  ldm6_product p;
  uint8_t head[512], flat[1024], marks[64][LDM6_RPC_MARK_LEN];
  static const uint8_t zeros[4] = {0};
  struct iovec pieces[3], out[200];
  size_t i, n, n2, used, nout, total, max_frag;
  ldm6_rpc_framer fr;

  for (i = 0; i < cap->n && m == NULL; i++)
    if (cap->msgs[i].is_call && cap->msgs[i].proc == LDM6_HEREIS)
      m = &cap->msgs[i];
  assert_non_null(m);
  assert_int_equal(
      ldm6_rpc_decode(m->bytes + 4, m->len - 4, &(ldm6_rpc_msg){0}, &used), 0);
  assert_int_equal(ldm6_decode(LDM6_T_PRODUCT, m->bytes + 4 + used,
                               m->len - 4 - used, &p, &n),
                   0);
  /* The data must come from elsewhere: copy it out of the capture. */
  {
    char *data = malloc(p.info.sz);

    assert_non_null(data);
    memcpy(data, p.data, p.info.sz);
    p.data = data;
  }
  assert_int_equal(ldm6_rpc_encode_call(m->xid, LDM6_PROG, LDM6_VERSION6,
                                        LDM6_HEREIS, head, sizeof head, &n),
                   0);
  assert_int_equal(
      ldm6_encode(LDM6_T_PROD_INFO, &p.info, head + n, sizeof head - n, &n2),
      0);
  pieces[0] = (struct iovec){head, n + n2};
  pieces[1] = (struct iovec){(void *)p.data, p.info.sz};
  pieces[2] = (struct iovec){(void *)zeros, ldm6_xdr_pad(p.info.sz)};
  for (max_frag = 0; max_frag <= 64; max_frag += 4) {
    assert_int_equal(
        ldm6_rpc_record_iov(pieces, 3, max_frag, marks, 64, out, 200, &nout),
        0);
    for (total = 0, i = 0; i < nout; i++) {
      assert_true(total + out[i].iov_len <= sizeof flat);
      memcpy(flat + total, out[i].iov_base, out[i].iov_len);
      total += out[i].iov_len;
    }
    if (max_frag == 0) { /* one fragment: the captured bytes */
      assert_int_equal(total, m->len);
      assert_memory_equal(flat, m->bytes, m->len);
    } else {
      uint8_t *rec;
      size_t rec_len;

      assert_int_equal(
          total,
          m->len + 4 * (ldm6_rpc_record_nfrags(m->len - 4, max_frag) - 1));
      ldm6_rpc_framer_init(&fr, 4096);
      assert_int_equal(ldm6_rpc_framer_feed(&fr, flat, total, &used), 1);
      assert_int_equal(used, total);
      assert_true(ldm6_rpc_framer_record(&fr, &rec, &rec_len));
      assert_int_equal(rec_len, m->len - 4);
      assert_memory_equal(rec, m->bytes + 4, rec_len);
      ldm6_rpc_framer_free(&fr);
    }
  }
  free((void *)p.data);
}

/* ---------------------------------------------------------------------- */
/* Section 3.8: byte-exact examples                                       */
/* ---------------------------------------------------------------------- */

static void test_spec_call_header(void **state) {
  uint8_t buf[64], want[64];
  size_t n;

  (void)state;
  assert_int_equal(ldm6_rpc_encode_call(0x11223344, LDM6_PROG, 6, LDM6_FEEDME,
                                        buf, sizeof buf, &n),
                   0);
  assert_int_equal(n, LDM6_RPC_CALL_HDR_LEN);
  tu_unhex("11223344 00000000 00000002 000493fd 00000006 00000004 00000000 "
           "00000000 00000000 00000000",
           want, sizeof want);
  assert_memory_equal(buf, want, n);
}

static void test_spec_feedme(void **state) {
  ldm6_feedpar fp;
  uint8_t rec[256], want[256];
  size_t n, n2, nwant;

  (void)state;
  memset(&fp, 0, sizeof fp);
  fp.prod_class = example_class();
  fp.prod_class.psa_len = 2;
  fp.prod_class.psa[1].feedtype = PQ_FT_NONE;
  strcpy(fp.prod_class.psa[1].pattern, "SIG=00112233445566778899aabbccddeeff");
  fp.max_hereis = LDM6_MAX_HEREIS_PRIMARY;
  expect_encoding(LDM6_T_FEEDPAR, &fp,
                  "6553f100 00000000 7fffffff 000f423f 00000002 "
                  "0000000f 00000003 5e534100 "
                  "00000000 00000024 5349473d 30303131 32323333 34343535 "
                  "36363737 38383939 61616262 63636464 65656666 "
                  "ffffffff");
  /* The whole record: 80000078, the header, the 80-byte argument. */
  assert_int_equal(ldm6_rpc_encode_call(0x11223344, LDM6_PROG, 6, LDM6_FEEDME,
                                        rec + 4, sizeof rec - 4, &n),
                   0);
  assert_int_equal(
      ldm6_encode(LDM6_T_FEEDPAR, &fp, rec + 4 + n, sizeof rec - 4 - n, &n2),
      0);
  assert_int_equal(n2, 80);
  ldm6_rpc_mark_put(rec, (uint32_t)(n + n2), true);
  nwant = tu_unhex("80000078", want, sizeof want);
  assert_memory_equal(rec, want, nwant);
}

static void test_spec_fornme(void **state) {
  ldm6_fornme_reply r;

  (void)state;
  memset(&r, 0, sizeof r);
  r.code = LDM6_OK;
  r.u.id = 12345;
  expect_encoding(LDM6_T_FORNME_REPLY, &r, "00000000 00003039");
  r.code = LDM6_BADPATTERN;
  expect_encoding(LDM6_T_FORNME_REPLY, &r, "00000002");
  r.code = LDM6_RECLASS;
  r.u.prod_class = example_class();
  expect_encoding(LDM6_T_FORNME_REPLY, &r, "00000007 " HEX_EXAMPLE_CLASS);
  memset(&r.u.prod_class, 0, sizeof r.u.prod_class); /* denied */
  expect_encoding(LDM6_T_FORNME_REPLY, &r,
                  "00000007 00000000 00000000 00000000 00000000 00000000");
}

static void test_spec_hereis_and_friends(void **state) {
  ldm6_product p = example_product();
  ldm6_comingsoon_args cs;
  ldm6_datapkt pkt;
  ldm6_comingsoon_reply csr = LDM6_DONT_SEND;
  uint8_t head[64], want[64];
  size_t n;

  (void)state;
  expect_encoding(LDM6_T_PRODUCT, &p, HEX_EXAMPLE_INFO " 68656c6c 6f000000");
  expect_encoding(LDM6_T_PROD_INFO, &p.info, HEX_EXAMPLE_INFO);
  cs.info = p.info;
  cs.pktsz = 5;
  expect_encoding(LDM6_T_COMINGSOON_ARGS, &cs, HEX_EXAMPLE_INFO " 00000005");
  expect_encoding(LDM6_T_COMINGSOON_REPLY, &csr, "00000003");
  memcpy(pkt.signature, SIG_10_1F, LDM6_SIGLEN);
  pkt.pktnum = 0;
  pkt.data_len = 5;
  pkt.data = "hello";
  expect_encoding(LDM6_T_DATAPKT, &pkt,
                  "10111213 14151617 18191a1b 1c1d1e1f 00000000 "
                  "00000005 68656c6c 6f000000");
  /* The zero-copy head of the same BLKDATA. */
  pkt.data = NULL;
  assert_int_equal(ldm6_encode_datapkt_head(&pkt, head, sizeof head, &n), 0);
  assert_int_equal(n, 24);
  tu_unhex("10111213 14151617 18191a1b 1c1d1e1f 00000000 00000005", want,
           sizeof want);
  assert_memory_equal(head, want, n);
  assert_int_equal(ldm6_xdr_pad(5), 3);
  assert_int_equal(ldm6_xdr_pad(8), 0);
  assert_int_equal(ldm6_xdr_pad(0xffffffffu), 1);
}

static void test_spec_hiya_and_is_alive(void **state) {
  ldm6_hiya_reply h;
  uint32_t pid = 12345;
  bool alive = true;

  (void)state;
  memset(&h, 0, sizeof h);
  h.code = LDM6_OK;
  h.u.max_hereis = 0xffffffffu;
  expect_encoding(LDM6_T_HIYA_REPLY, &h, "00000000 ffffffff");
  h.code = LDM6_RECLASS;
  h.u.feedpar.prod_class = example_class();
  h.u.feedpar.max_hereis = 0xffffffffu;
  expect_encoding(LDM6_T_HIYA_REPLY, &h,
                  "00000007 " HEX_EXAMPLE_CLASS " ffffffff");
  h.code = LDM6_DONT_SEND;
  expect_encoding(LDM6_T_HIYA_REPLY, &h, "00000003");
  expect_encoding(LDM6_T_UINT, &pid, "00003039");
  expect_encoding(LDM6_T_BOOL, &alive, "00000001");
  alive = false;
  expect_encoding(LDM6_T_BOOL, &alive, "00000000");
}

/* A one-way call with a 4-byte argument is a 44-byte record. */
static void test_spec_oneway_frame(void **state) {
  uint8_t rec[64];
  uint32_t arg = 7;
  size_t n, n2;

  (void)state;
  assert_int_equal(ldm6_rpc_encode_call(1, LDM6_PROG, 6, LDM6_NOTIFICATION,
                                        rec + 4, sizeof rec - 4, &n),
                   0);
  assert_int_equal(
      ldm6_encode(LDM6_T_UINT, &arg, rec + 4 + n, sizeof rec - 4 - n, &n2), 0);
  ldm6_rpc_mark_put(rec, (uint32_t)(n + n2), true);
  assert_int_equal(rec[0], 0x80);
  assert_int_equal(rec[3], 0x2c);
}

/* Every arm of the v5 ldm_replyt. */
static void test_replyt_arms(void **state) {
  ldm6_replyt r;
  int code;

  (void)state;
  for (code = LDM6_OK; code <= LDM6_DONT_SEND; code++) {
    char hex[16];

    memset(&r, 0, sizeof r);
    r.code = (ldm6_errt)code;
    snprintf(hex, sizeof hex, "%08x", (unsigned)code);
    expect_encoding(LDM6_T_REPLYT, &r, hex);
  }
  memset(&r, 0, sizeof r);
  r.code = LDM6_RESEND;
  memcpy(r.u.resend.signature, SIG_10_1F, LDM6_SIGLEN);
  r.u.resend.pktnum = 3;
  expect_encoding(LDM6_T_REPLYT, &r,
                  "00000004 10111213 14151617 18191a1b 1c1d1e1f 00000003");
  r.code = LDM6_RESTART;
  memcpy(r.u.restart, SIG_10_1F, LDM6_SIGLEN);
  expect_encoding(LDM6_T_REPLYT, &r,
                  "00000005 10111213 14151617 18191a1b 1c1d1e1f");
  memset(&r.u, 0, sizeof r.u);
  r.code = LDM6_REDIRECT;
  r.u.redirect.type = LDM6_ADDR_NONE;
  expect_encoding(LDM6_T_REPLYT, &r, "00000006 00000000");
  r.u.redirect.type = LDM6_ADDR_RPC;
  strcpy(r.u.redirect.u.rpc.hostname, "abc");
  r.u.redirect.u.rpc.prog = LDM6_PROG;
  r.u.redirect.u.rpc.vers = 6;
  expect_encoding(LDM6_T_REPLYT, &r,
                  "00000006 00000001 00000003 61626300 000493fd 00000006");
  memset(&r.u, 0, sizeof r.u);
  r.u.redirect.type = LDM6_ADDR_IP;
  r.u.redirect.u.ip.protocol = 6;
  r.u.redirect.u.ip.port = 388;
  r.u.redirect.u.ip.addr = 0x7f000001;
  expect_encoding(LDM6_T_REPLYT, &r,
                  "00000006 00000002 00000006 00000184 7f000001");
  r.code = LDM6_RECLASS;
  r.u.reclass = example_class();
  expect_encoding(LDM6_T_REPLYT, &r, "00000007 " HEX_EXAMPLE_CLASS);
}

/* ---------------------------------------------------------------------- */
/* Hostile input and encoder refusals                                     */
/* ---------------------------------------------------------------------- */

static int decode_hex(ldm6_type type, const char *hex, void *v) {
  uint8_t buf[1024];
  size_t n = tu_unhex(hex, buf, sizeof buf), used;

  return ldm6_decode(type, buf, n, v, &used);
}

static void test_decode_bounds(void **state) {
  ldm6_value *v = malloc(sizeof *v);
  char hex[4096];
  size_t o;
  int i;

  (void)state;
  assert_non_null(v);
  /* origin: 64 accepted, 65 refused before any byte is copied. */
  o = (size_t)snprintf(hex, sizeof hex,
                       "00000000 00000000 " /* arrival */
                       "00000000 00000000 00000000 00000000 00000040");
  for (i = 0; i < 16; i++)
    o += (size_t)snprintf(hex + o, sizeof hex - o, " 41414141");
  snprintf(hex + o, sizeof hex - o,
           " 00000001 00000002 00000001 41000000 00000000");
  assert_int_equal(decode_hex(LDM6_T_PROD_INFO, hex, v), 0);
  assert_int_equal(strlen(v->prod_info.origin), 64);
  assert_int_equal(decode_hex(LDM6_T_PROD_INFO,
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000041",
                              v),
                   LDM6_EBOUND);
  /* ident 256, pattern 256, psa 33. */
  assert_int_equal(decode_hex(LDM6_T_PROD_INFO,
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000000 00000000 00000000 00000100",
                              v),
                   LDM6_EBOUND);
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "00000000 00000000 7fffffff 000f423f 00000001 "
                              "ffffffff 00000100",
                              v),
                   LDM6_EBOUND);
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "00000000 00000000 7fffffff 000f423f 00000021",
                              v),
                   LDM6_EBOUND);
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "00000000 00000000 7fffffff 000f423f ffffffff",
                              v),
                   LDM6_EBOUND);
  /* A NUL inside a string. */
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "00000000 00000000 7fffffff 000f423f 00000001 "
                              "ffffffff 00000002 2e000000",
                              v),
                   LDM6_ENUL);
  /* Data longer than what remains, up to 4 GiB - 1. */
  assert_int_equal(decode_hex(LDM6_T_PRODUCT,
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000005 68656c6c 6f",
                              v),
                   LDM6_ESHORT); /* padding missing */
  assert_int_equal(decode_hex(LDM6_T_PRODUCT,
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000000 00000000 00000000 00000000 "
                              "ffffffff 68656c6c 6f000000",
                              v),
                   LDM6_ESHORT);
  assert_int_equal(decode_hex(LDM6_T_DATAPKT,
                              "00000000 00000000 00000000 00000000 00000000 "
                              "fffffffd 00000000",
                              v),
                   LDM6_ESHORT);
  /* An empty product decodes, with no data bytes. */
  assert_int_equal(decode_hex(LDM6_T_PRODUCT,
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000000 00000000 00000000 00000000 00000000 "
                              "00000000",
                              v),
                   0);
  assert_int_equal(v->product.info.sz, 0);
  free(v);
}

static void test_decode_times_and_discriminants(void **state) {
  ldm6_value *v = malloc(sizeof *v);

  (void)state;
  assert_non_null(v);
  /* usec 1000000, negative seconds, TS_NONE: invalid wire times. */
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "00000000 000f4240 7fffffff 000f423f 00000000",
                              v),
                   LDM6_ETIME);
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "80000000 00000000 7fffffff 000f423f 00000000",
                              v),
                   LDM6_ETIME);
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "00000000 00000000 ffffffff ffffffff 00000000",
                              v),
                   LDM6_ETIME);
  assert_int_equal(decode_hex(LDM6_T_PROD_CLASS,
                              "7fffffff 000f423f 00000000 00000000 00000000",
                              v),
                   0);
  /* fornme_reply_t: only OK, BADPATTERN, RECLASS. */
  assert_int_equal(decode_hex(LDM6_T_FORNME_REPLY, "00000001", v), LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_FORNME_REPLY, "00000003", v), LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_FORNME_REPLY, "ffffffff", v), LDM6_EVALUE);
  /* hiya_reply_t: only OK, DONT_SEND, RECLASS. */
  assert_int_equal(decode_hex(LDM6_T_HIYA_REPLY, "00000002", v), LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_HIYA_REPLY, "00000000", v), LDM6_ESHORT);
  /* ldm_errt, ldm_replyt, rendezvoust, bool, u_short. */
  assert_int_equal(decode_hex(LDM6_T_COMINGSOON_REPLY, "00000008", v),
                   LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_REPLYT, "00000020", v), LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_REPLYT, "00000006 00000003", v),
                   LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_REPLYT,
                              "00000006 00000002 00000006 00010000 00000000",
                              v),
                   LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_BOOL, "00000002", v), LDM6_EVALUE);
  assert_int_equal(decode_hex(LDM6_T_UINT, "000030", v), LDM6_ESHORT);
  free(v);
}

static void test_encode_refusals(void **state) {
  ldm6_product p = example_product();
  ldm6_fornme_reply fr;
  ldm6_hiya_reply hr;
  ldm6_prod_class c = example_class();
  ldm6_errt e = (ldm6_errt)8;
  uint8_t buf[512];
  size_t n, full, cap;

  (void)state;
  /* Every buffer too small by at least one byte. */
  assert_int_equal(ldm6_encode(LDM6_T_PRODUCT, &p, buf, sizeof buf, &full), 0);
  for (cap = 0; cap < full; cap++)
    assert_int_equal(ldm6_encode(LDM6_T_PRODUCT, &p, buf, cap, &n),
                     LDM6_ENOSPACE);
  /* Bounds, times, data. */
  memset(p.info.origin, 'a', sizeof p.info.origin); /* no NUL */
  assert_int_equal(ldm6_encode(LDM6_T_PRODUCT, &p, buf, sizeof buf, &n),
                   LDM6_EBOUND);
  p = example_product();
  p.info.arrival.tv_usec = 1000000;
  assert_int_equal(ldm6_encode(LDM6_T_PRODUCT, &p, buf, sizeof buf, &n),
                   LDM6_ETIME);
  p.info.arrival = (ldm6_timestamp){-1, -1};
  assert_int_equal(ldm6_encode(LDM6_T_PROD_INFO, &p.info, buf, sizeof buf, &n),
                   LDM6_ETIME);
  p = example_product();
  p.data = NULL;
  assert_int_equal(ldm6_encode(LDM6_T_PRODUCT, &p, buf, sizeof buf, &n),
                   LDM6_EINVAL);
  c.psa_len = 33;
  assert_int_equal(ldm6_encode(LDM6_T_PROD_CLASS, &c, buf, sizeof buf, &n),
                   LDM6_EBOUND);
  /* Discriminants outside their union. */
  memset(&fr, 0, sizeof fr);
  fr.code = LDM6_SHUTTING_DOWN;
  assert_int_equal(ldm6_encode(LDM6_T_FORNME_REPLY, &fr, buf, sizeof buf, &n),
                   LDM6_EVALUE);
  memset(&hr, 0, sizeof hr);
  hr.code = LDM6_BADPATTERN;
  assert_int_equal(ldm6_encode(LDM6_T_HIYA_REPLY, &hr, buf, sizeof buf, &n),
                   LDM6_EVALUE);
  assert_int_equal(
      ldm6_encode(LDM6_T_COMINGSOON_REPLY, &e, buf, sizeof buf, &n),
      LDM6_EVALUE);
  /* Bad calls. */
  assert_int_equal(ldm6_encode(LDM6_T_COUNT, &e, buf, sizeof buf, &n),
                   LDM6_EINVAL);
  assert_int_equal(ldm6_encode(LDM6_T_PRODUCT, NULL, buf, sizeof buf, &n),
                   LDM6_EINVAL);
  assert_int_equal(ldm6_encode(LDM6_T_VOID, NULL, buf, sizeof buf, &n), 0);
  assert_int_equal(n, 0);
  assert_int_equal(ldm6_decode(LDM6_T_VOID, NULL, 0, NULL, &n), 0);
}

/* ---------------------------------------------------------------------- */
/* The procedure table                                                    */
/* ---------------------------------------------------------------------- */

static void test_proc_table(void **state) {
  static const uint32_t v6[] = {0, 1, 4, 5, 8, 9, 12, 13, 14};
  const ldm6_proc_desc *pd;
  uint32_t proc;
  size_t i, served = 0;

  (void)state;
  for (i = 0; i < sizeof v6 / sizeof v6[0]; i++)
    assert_non_null(ldm6_proc_lookup(6, v6[i]));
  for (proc = 0; proc < 64; proc++) {
    pd = ldm6_proc_lookup(6, proc);
    if (pd == NULL)
      continue;
    served++;
    assert_int_equal(pd->proc, proc);
    assert_int_equal(pd->oneway, proc == LDM6_HEREIS ||
                                     proc == LDM6_NOTIFICATION ||
                                     proc == LDM6_BLKDATA);
    if (pd->oneway)
      assert_int_equal(pd->res, LDM6_T_VOID);
  }
  assert_int_equal(served, 9);
  pd = ldm6_proc_lookup(6, LDM6_FEEDME);
  assert_string_equal(pd->name, "FEEDME");
  assert_int_equal(pd->arg, LDM6_T_FEEDPAR);
  assert_int_equal(pd->res, LDM6_T_FORNME_REPLY);
  /* v5: every call answered with ldm_replyt; FEEDME takes a class. */
  pd = ldm6_proc_lookup(5, LDM6_FEEDME);
  assert_int_equal(pd->arg, LDM6_T_PROD_CLASS);
  for (proc = 1; proc < 64; proc++) {
    pd = ldm6_proc_lookup(5, proc);
    if (pd != NULL) {
      assert_false(pd->oneway);
      assert_int_equal(pd->res, LDM6_T_REPLYT);
    }
  }
  assert_null(ldm6_proc_lookup(5, LDM6_IS_ALIVE));
  assert_non_null(ldm6_proc_lookup(5, LDM6_NULLPROC));
  /* v4: only the ping.  v7 and others: not served. */
  assert_non_null(ldm6_proc_lookup(4, LDM6_NULLPROC));
  assert_null(ldm6_proc_lookup(4, LDM6_HEREIS));
  assert_null(ldm6_proc_lookup(7, LDM6_NULLPROC));
  assert_null(ldm6_proc_lookup(3, LDM6_NULLPROC));
  assert_string_equal(ldm6_type_name(LDM6_T_PRODUCT), "product");
  assert_string_equal(ldm6_type_name(LDM6_T_COUNT), "unknown");
}

static void test_strerror_and_names(void **state) {
  int code;

  (void)state;
  for (code = LDM6_ERROR_MIN; code <= 0; code++) {
    const char *msg = ldm6_strerror(code);

    assert_non_null(msg);
    assert_true(strncmp(msg, "LDM6_", 5) == 0);
    assert_null(strstr(msg, "UNKNOWN"));
  }
  assert_non_null(strstr(ldm6_strerror(LDM6_ERROR_MIN - 1), "UNKNOWN"));
  assert_non_null(strstr(ldm6_strerror(1), "UNKNOWN"));
  assert_string_equal(ldm6_errt_name(LDM6_OK), "OK");
  assert_string_equal(ldm6_errt_name(LDM6_BADPATTERN), "BAD_PATTERN");
  assert_string_equal(ldm6_errt_name(LDM6_RECLASS), "RECLASS");
  assert_string_equal(ldm6_errt_name(8), "UNKNOWN");
  assert_string_equal(ldm6_errt_name(-1), "UNKNOWN");
  /* The enum values are the wire's. */
  assert_int_equal(LDM6_SHUTTING_DOWN, 1);
  assert_int_equal(LDM6_DONT_SEND, 3);
  assert_int_equal(LDM6_RESEND, 4);
  assert_int_equal(LDM6_RESTART, 5);
  assert_int_equal(LDM6_REDIRECT, 6);
  assert_int_equal(LDM6_PROG, 0x493fd);
}

/* ---------------------------------------------------------------------- */
/* Conversions                                                            */
/* ---------------------------------------------------------------------- */

static void test_convert_info(void **state) {
  ldm6_product p = example_product();
  ldm6_prod_info back;
  pq_prod_info info;

  (void)state;
  assert_int_equal(ldm6_info_to_pq(&p.info, &info), 0);
  assert_int_equal(info.arrival.sec, 1700000000);
  assert_int_equal(info.arrival.usec, 123456);
  assert_string_equal(info.origin, "host.example.com");
  assert_string_equal(info.ident, "SAUS01 KWBC 010000");
  assert_int_equal(info.size, 5);
  assert_int_equal(info.seqno, 42);
  assert_int_equal(info.feedtype, PQ_FT_IDS);
  assert_memory_equal(info.signature, SIG_10_1F, LDM6_SIGLEN);
  assert_int_equal(ldm6_info_from_pq(&info, &back), 0);
  assert_memory_equal(&back, &p.info, sizeof back);

  /* 2038 and beyond: the wire cannot carry it. */
  info.arrival.sec = (int64_t)INT32_MAX + 1;
  assert_int_equal(ldm6_info_from_pq(&info, &back), LDM6_ERANGE);
  info.arrival.sec = INT32_MAX;
  assert_int_equal(ldm6_info_from_pq(&info, &back), 0);
  info.arrival.sec = -5;
  assert_int_equal(ldm6_info_from_pq(&info, &back), LDM6_ETIME);
  info.arrival = (pq_timestamp){1, 1000000};
  assert_int_equal(ldm6_info_from_pq(&info, &back), LDM6_ETIME);
  info.arrival = (pq_timestamp){1, 0};
  info.size = (uint64_t)UINT32_MAX + 1;
  assert_int_equal(ldm6_info_from_pq(&info, &back), LDM6_ERANGE);
  info.size = UINT32_MAX;
  assert_int_equal(ldm6_info_from_pq(&info, &back), 0);
  assert_int_equal(back.sz, UINT32_MAX);

  p.info.arrival.tv_usec = -1;
  assert_int_equal(ldm6_info_to_pq(&p.info, &info), LDM6_ETIME);
  p = example_product();
  memset(p.info.ident, 'x', sizeof p.info.ident);
  assert_int_equal(ldm6_info_to_pq(&p.info, &info), LDM6_EBOUND);
}

static void test_convert_class(void **state) {
  ldm6_prod_class *w = malloc(sizeof *w), *back = malloc(sizeof *back);
  pq_class *cls = malloc(sizeof *cls);
  pq_prod_info info;
  ldm6_timestamp ts;
  char err[256];

  (void)state;
  assert_true(w && back && cls);
  *w = example_class();
  w->psa_len = 3;
  w->psa[1].feedtype = PQ_FT_EXP;
  strcpy(w->psa[1].pattern, ".*cap_");
  w->psa[2].feedtype = PQ_FT_NONE;
  strcpy(w->psa[2].pattern, "SIG=00112233445566778899aabbccddeeff");
  assert_int_equal(ldm6_class_to_pq(w, cls, err, sizeof err), 0);
  assert_int_equal(cls->nspecs, 3);
  assert_string_equal(cls->specs[1].pattern, ".*cap_"); /* as given */
  memset(&info, 0, sizeof info);
  info.arrival = (pq_timestamp){1796012031, 896502};
  info.feedtype = PQ_FT_EXP;
  strcpy(info.ident, "cap_hereis");
  assert_true(pq_class_match(cls, &info));
  strcpy(info.ident, "other");
  assert_false(pq_class_match(cls, &info));
  assert_int_equal(ldm6_class_from_pq(cls, back), 0);
  assert_memory_equal(back, w, sizeof *back);
  pq_class_free(cls);

  /* A pattern that does not compile: BADPATTERN, with the reason. */
  strcpy(w->psa[1].pattern, "(unclosed");
  err[0] = '\0';
  assert_int_equal(ldm6_class_to_pq(w, cls, err, sizeof err), LDM6_EPATTERN);
  assert_int_equal(cls->nspecs, 0);
  assert_non_null(strstr(err, "pattern 1 \"(unclosed\""));
  assert_int_equal(ldm6_class_to_pq(w, cls, NULL, 0), LDM6_EPATTERN);
  /* A back-reference, which compiles, is refused all the same
   * (docs/security.md, "Patterns from peers"). */
  strcpy(w->psa[1].pattern, "(.*)(.*)\\2\\1x");
  assert_int_equal(ldm6_class_to_pq(w, cls, err, sizeof err), LDM6_EPATTERN);
  assert_int_equal(cls->nspecs, 0);
  assert_non_null(strstr(err, "pattern 1 \"(.*)(.*)\\2\\1x\": back-reference"));
  strcpy(w->psa[1].pattern, "x");
  w->psa_len = 33;
  assert_int_equal(ldm6_class_to_pq(w, cls, NULL, 0), LDM6_EBOUND);
  w->psa_len = 1;
  w->to.tv_usec = 1000000;
  assert_int_equal(ldm6_class_to_pq(w, cls, NULL, 0), LDM6_ETIME);

  /* Times: exact both ways while they fit. */
  assert_int_equal(ldm6_ts_from_pq(PQ_TS_ENDT, &ts), 0);
  assert_int_equal(ts.tv_sec, 0x7fffffff);
  assert_int_equal(ts.tv_usec, 999999);
  assert_int_equal(ldm6_ts_to_pq(ts).sec, 0x7fffffff);
  assert_int_equal(ldm6_ts_from_pq(PQ_TS_NONE, &ts), LDM6_ETIME);
  assert_int_equal(ldm6_ts_from_pq((pq_timestamp){(int64_t)1 << 40, 0}, &ts),
                   LDM6_ERANGE);
  assert_int_equal(ldm6_ts_from_pq((pq_timestamp){-((int64_t)1 << 40), 0}, &ts),
                   LDM6_ERANGE);
  pq_class_init(cls, (pq_timestamp){(int64_t)1 << 33, 0}, PQ_TS_ENDT);
  assert_int_equal(ldm6_class_from_pq(cls, back), LDM6_ERANGE);
  free(cls);
  free(back);
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_capture_every_message),
      cmocka_unit_test(test_capture_stray_replies),
      cmocka_unit_test(test_capture_hostile),
      cmocka_unit_test(test_capture_zero_copy_hereis),
      cmocka_unit_test(test_spec_call_header),
      cmocka_unit_test(test_spec_feedme),
      cmocka_unit_test(test_spec_fornme),
      cmocka_unit_test(test_spec_hereis_and_friends),
      cmocka_unit_test(test_spec_hiya_and_is_alive),
      cmocka_unit_test(test_spec_oneway_frame),
      cmocka_unit_test(test_replyt_arms),
      cmocka_unit_test(test_decode_bounds),
      cmocka_unit_test(test_decode_times_and_discriminants),
      cmocka_unit_test(test_encode_refusals),
      cmocka_unit_test(test_proc_table),
      cmocka_unit_test(test_strerror_and_names),
      cmocka_unit_test(test_convert_info),
      cmocka_unit_test(test_convert_class),
  };

  return cmocka_run_group_tests(tests, load_capture, free_capture);
}
