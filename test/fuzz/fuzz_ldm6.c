/*
 * fuzz_ldm6.c - libFuzzer target for the LDM-6 codec, the trust boundary
 * every byte from the network crosses: every XDR decoder of
 * ldmd/proto/ldm6_xdr.c, the RPC header decoder and the record framer of
 * ldmd/proto/rpc_msg.c, and the conversions of decoded metadata and classes
 * into the product model.
 *
 * One input is used three ways: (1) as the bytes of a value, given to every
 * type's decoder; (2) as a message, header then arguments or results by
 * procedure; (3) as a TCP byte stream, fed to the framer once whole and once
 * in uneven pieces, which must give the same records, each of which is then
 * handled as (2).  Whatever decodes must encode again, to exactly as many
 * bytes as it took, and that encoding must be stable (decode, encode: the
 * same bytes), so the decoders accept nothing the encoders refuse.
 *
 * Seeds: every message of the captured LDM session, written by ldm6_seeds
 * (test/fuzz/ldm6_seeds.c) before the run.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_msg.h"

#define MAX_RECORD (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond) {
  if (!cond)
    abort();
}

/* Glibc's regcomp takes seconds on short patterns with nested bounded
 * repetitions ("((a{255}){255}){255}"): a known cost of accepting EREs
 * from peers (LDM has it too), not a codec bug; keep it out of the run. */
static int slow_to_compile(const ldm6_prod_class *cls) {
  uint32_t i;

  for (i = 0; i < cls->psa_len; i++)
    if (strchr(cls->psa[i].pattern, '{') != NULL)
      return 1;
  return 0;
}

/* The model conversions of what a decoder produced. */
static void convert(ldm6_type type, const ldm6_value *v) {
  const ldm6_prod_class *cls = NULL;
  const ldm6_prod_info *info = NULL;
  pq_prod_info pinfo;
  ldm6_prod_info winfo;

  switch (type) {
  case LDM6_T_PROD_CLASS:
    cls = &v->prod_class;
    break;
  case LDM6_T_FEEDPAR:
    cls = &v->feedpar.prod_class;
    break;
  case LDM6_T_PROD_INFO:
    info = &v->prod_info;
    break;
  case LDM6_T_PRODUCT:
    info = &v->product.info;
    break;
  case LDM6_T_COMINGSOON_ARGS:
    info = &v->comingsoon_args.info;
    break;
  default:
    return;
  }
  if (info != NULL) {
    check(ldm6_info_to_pq(info, &pinfo) == 0);
    check(ldm6_info_from_pq(&pinfo, &winfo) == 0);
    check(memcmp(&winfo.arrival, &info->arrival, sizeof winfo.arrival) == 0);
    check(strcmp(winfo.ident, info->ident) == 0);
    check(winfo.sz == info->sz);
  }
  if (cls != NULL && !slow_to_compile(cls)) {
    pq_class pcls;
    ldm6_prod_class back;
    char err[256];
    int rc = ldm6_class_to_pq(cls, &pcls, err, sizeof err);

    check(rc == 0 || rc == LDM6_EPATTERN);
    if (rc == 0) {
      check(ldm6_class_from_pq(&pcls, &back) == 0);
      check(back.psa_len == cls->psa_len);
      pq_class_free(&pcls);
    }
  }
}

/* Decode as type; if that works, the value must encode to as many bytes,
 * and encode the same again after another decode. */
static void roundtrip(ldm6_type type, const uint8_t *buf, size_t len) {
  ldm6_value v;
  uint8_t *enc1, *enc2;
  size_t used = 0, n1 = 0, n2 = 0, used2 = 0;

  if (ldm6_decode(type, buf, len, &v, &used) != 0)
    return;
  check(used <= len);
  convert(type, &v);
  enc1 = malloc(used + 1);
  enc2 = malloc(used + 1);
  check(enc1 != NULL && enc2 != NULL);
  check(ldm6_encode(type, &v, enc1, used + 1, &n1) == 0);
  check(n1 == used);
  check(ldm6_decode(type, enc1, n1, &v, &used2) == 0);
  check(used2 == n1);
  check(ldm6_encode(type, &v, enc2, used + 1, &n2) == 0);
  check(n2 == n1 && memcmp(enc1, enc2, n1) == 0);
  free(enc2);
  free(enc1);
}

/* A whole message: header, then what the procedure says follows. */
static void message(const uint8_t *rec, size_t len) {
  ldm6_rpc_msg m, m2;
  size_t used = 0, n = 0, used2 = 0;
  uint8_t hdr[LDM6_RPC_CALL_HDR_LEN + 2 * LDM6_RPC_MAX_AUTH_BYTES];
  int t;

  if (ldm6_rpc_decode(rec, len, &m, &used) != 0)
    return;
  check(used <= len && used <= sizeof hdr);
  check(ldm6_rpc_encode(&m, hdr, sizeof hdr, &n) == 0 && n == used);
  check(ldm6_rpc_decode(hdr, n, &m2, &used2) == 0 && used2 == n);
  (void)ldm6_rpc_reply_is_awaited(&m, true, m.xid ^ 1u);
  if (m.type == LDM6_RPC_CALL) {
    const ldm6_proc_desc *pd = ldm6_proc_lookup(m.u.call.vers, m.u.call.proc);

    if (pd != NULL)
      roundtrip(pd->arg, rec + used, len - used);
  } else if (m.u.reply.reply_stat == LDM6_RPC_MSG_ACCEPTED &&
             m.u.reply.accept_stat == LDM6_RPC_SUCCESS) {
    /* A reply's procedure is that of its call: try every result. */
    for (t = LDM6_T_FORNME_REPLY; t < LDM6_T_COUNT; t++)
      roundtrip((ldm6_type)t, rec + used, len - used);
    roundtrip(LDM6_T_BOOL, rec + used, len - used);
  }
}

/* Feed the stream in pieces of the given sizes (cycled); call back with
 * each record and return how many there were, or -error. */
static long frame(const uint8_t *data, size_t size, const size_t *pieces,
                  size_t npieces, uint64_t *digest, int handle) {
  ldm6_rpc_framer f;
  size_t off = 0, k = 0;
  long records = 0;
  int rc = 0;

  *digest = 1469598103934665603ull;
  ldm6_rpc_framer_init(&f, MAX_RECORD);
  while (off < size && rc >= 0) {
    size_t len = pieces[k++ % npieces], used = 0;

    if (len > size - off)
      len = size - off;
    check(ldm6_rpc_framer_want(&f) > 0);
    while (len > 0) {
      uint8_t *rec;
      size_t rlen, i;

      rc = ldm6_rpc_framer_feed(&f, data + off, len, &used);
      if (rc < 0)
        break;
      check(used <= len);
      off += used;
      len -= used;
      if (rc == 0)
        break;
      check(ldm6_rpc_framer_record(&f, &rec, &rlen));
      check(rlen <= MAX_RECORD);
      records++;
      for (i = 0; i < rlen; i++)
        *digest = (*digest ^ rec[i]) * 1099511628211ull;
      *digest = (*digest ^ rlen) * 1099511628211ull;
      if (handle)
        message(rec, rlen);
    }
  }
  ldm6_rpc_framer_free(&f);
  return rc < 0 ? rc : records;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const size_t whole[] = {SIZE_MAX};
  static const size_t uneven[] = {1, 3, 7, 2, 64, 5, 4096};
  uint64_t d1, d2;
  long r1, r2;
  int t;

  for (t = LDM6_T_VOID; t < LDM6_T_COUNT; t++)
    roundtrip((ldm6_type)t, data, size);
  message(data, size);
  r1 = frame(data, size, whole, 1, &d1, 1);
  r2 = frame(data, size, uneven, sizeof uneven / sizeof uneven[0], &d2, 0);
  /* The same records, and the same error if any, whatever the pieces. */
  check(r1 == r2 && d1 == d2);
  return 0;
}
