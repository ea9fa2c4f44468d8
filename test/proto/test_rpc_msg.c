/*
 * test_rpc_msg.c - ONC RPC headers and record marking: the exact bytes of
 * every header LDM sends (CALL, SUCCESS, PROG_MISMATCH, PROC_UNAVAIL,
 * GARBAGE_ARGS, SYSTEM_ERR, AUTH_TOOWEAK, RPC_MISMATCH), malformed and
 * truncated headers, credentials other than AUTH_NONE, the framer (pieces of
 * every size, many fragments, empty fragments, several records in one read,
 * the size limit announced by a mark), record layout for writev() through a
 * real socket, and the stray-reply rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_types.h"
#include "ldmd/proto/rpc_msg.h"
#include "test/lib/testutil.h"

/* buf[0..n) must be the hex; it must decode and encode back the same. */
static void expect_header(const uint8_t *buf, size_t n, const char *hex,
                          ldm6_rpc_msg *msg) {
  uint8_t want[128], again[128];
  size_t nwant = tu_unhex(hex, want, sizeof want), used, n2;

  assert_int_equal(n, nwant);
  assert_memory_equal(buf, want, n);
  assert_int_equal(ldm6_rpc_decode(buf, n, msg, &used), 0);
  assert_int_equal(used, n);
  assert_int_equal(ldm6_rpc_encode(msg, again, sizeof again, &n2), 0);
  assert_int_equal(n2, n);
  assert_memory_equal(again, buf, n);
}

/* The accepted reply to xid 7 with accept_stat stat must be the hex.
 * @return its length */
static size_t expect_accepted(uint32_t stat, const char *hex,
                              ldm6_rpc_msg *msg) {
  uint8_t buf[64];
  size_t n = 0;

  assert_int_equal(ldm6_rpc_encode_accepted(7, stat, buf, sizeof buf, &n), 0);
  expect_header(buf, n, hex, msg);
  return n;
}

static void test_call_header(void **state) {
  uint8_t buf[64];
  ldm6_rpc_msg m;
  size_t n;

  (void)state;
  assert_int_equal(
      ldm6_rpc_encode_call(0x11223344, LDM6_PROG, 6, 4, buf, sizeof buf, &n),
      0);
  expect_header(buf, n,
                "11223344 00000000 00000002 000493fd 00000006 00000004 "
                "00000000 00000000 00000000 00000000",
                &m);
  assert_int_equal(m.type, LDM6_RPC_CALL);
  assert_int_equal(m.xid, 0x11223344);
  assert_int_equal(m.u.call.rpcvers, 2);
  assert_int_equal(m.u.call.prog, LDM6_PROG);
  assert_int_equal(m.u.call.vers, 6);
  assert_int_equal(m.u.call.proc, 4);
  assert_int_equal(m.u.call.cred.flavor, LDM6_RPC_AUTH_NONE);
  assert_int_equal(m.u.call.cred.len, 0);
  assert_int_equal(n, LDM6_RPC_CALL_HDR_LEN);
}

static void test_reply_headers(void **state) {
  uint8_t buf[64];
  ldm6_rpc_msg m;
  size_t n;

  (void)state;
  assert_int_equal(
      expect_accepted(LDM6_RPC_SUCCESS,
                      "00000007 00000001 00000000 00000000 00000000 00000000",
                      &m),
      LDM6_RPC_SUCCESS_HDR_LEN);
  assert_int_equal(m.type, LDM6_RPC_REPLY);
  assert_int_equal(m.u.reply.reply_stat, LDM6_RPC_MSG_ACCEPTED);
  assert_int_equal(m.u.reply.accept_stat, LDM6_RPC_SUCCESS);

  expect_accepted(LDM6_RPC_PROC_UNAVAIL,
                  "00000007 00000001 00000000 00000000 00000000 00000003", &m);
  expect_accepted(LDM6_RPC_PROG_UNAVAIL,
                  "00000007 00000001 00000000 00000000 00000000 00000001", &m);
  expect_accepted(LDM6_RPC_GARBAGE_ARGS,
                  "00000007 00000001 00000000 00000000 00000000 00000004", &m);
  expect_accepted(LDM6_RPC_SYSTEM_ERR,
                  "00000007 00000001 00000000 00000000 00000000 00000005", &m);
  assert_int_equal(m.u.reply.accept_stat, LDM6_RPC_SYSTEM_ERR);
  assert_int_equal(
      ldm6_rpc_encode_accepted(7, LDM6_RPC_PROG_MISMATCH, buf, sizeof buf, &n),
      LDM6_EINVAL);

  /* PROG_MISMATCH with the versions LDM serves. */
  assert_int_equal(ldm6_rpc_encode_prog_mismatch(7, 4, 6, buf, sizeof buf, &n),
                   0);
  expect_header(buf, n,
                "00000007 00000001 00000000 00000000 00000000 00000002 "
                "00000004 00000006",
                &m);
  assert_int_equal(m.u.reply.low, 4);
  assert_int_equal(m.u.reply.high, 6);

  /* LDM's "not allowed": MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK (xid 0). */
  assert_int_equal(
      ldm6_rpc_encode_auth_error(0, LDM6_RPC_AUTH_TOOWEAK, buf, sizeof buf, &n),
      0);
  expect_header(buf, n, "00000000 00000001 00000001 00000001 00000005", &m);
  assert_int_equal(m.u.reply.reply_stat, LDM6_RPC_MSG_DENIED);
  assert_int_equal(m.u.reply.reject_stat, LDM6_RPC_AUTH_ERROR);
  assert_int_equal(m.u.reply.auth_stat, LDM6_RPC_AUTH_TOOWEAK);

  assert_int_equal(ldm6_rpc_encode_rpc_mismatch(9, 2, 2, buf, sizeof buf, &n),
                   0);
  expect_header(buf, n, "00000009 00000001 00000001 00000000 00000002 00000002",
                &m);
  assert_int_equal(m.u.reply.reject_stat, LDM6_RPC_RPC_MISMATCH);
}

/* Credentials other than AUTH_NONE are read and written back verbatim. */
static void test_auth_bodies(void **state) {
  static const char hex[] =
      "00000005 00000000 00000002 000493fd 00000006 00000000 "
      "00000001 00000005 41424344 45000000 " /* AUTH_SYS-ish, 5 bytes */
      "00000000 00000000";
  uint8_t buf[128], again[128];
  size_t n = tu_unhex(hex, buf, sizeof buf), used, n2;
  ldm6_rpc_msg m;

  (void)state;
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), 0);
  assert_int_equal(used, n);
  assert_int_equal(m.u.call.cred.flavor, 1);
  assert_int_equal(m.u.call.cred.len, 5);
  assert_memory_equal(m.u.call.cred.body, "ABCDE", 5);
  assert_int_equal(ldm6_rpc_encode(&m, again, sizeof again, &n2), 0);
  assert_int_equal(n2, n);
  assert_memory_equal(again, buf, n);

  /* 400 bytes is the limit; 401 is refused. */
  tu_unhex("00000190", buf + 28, 4);
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), LDM6_ESHORT);
  tu_unhex("00000191", buf + 28, 4);
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), LDM6_EBOUND);
  m.u.call.cred.len = 401;
  assert_int_equal(ldm6_rpc_encode(&m, again, sizeof again, &n2), LDM6_EBOUND);
  m.u.call.cred.len = 5;
  m.u.call.cred.body = NULL;
  assert_int_equal(ldm6_rpc_encode(&m, again, sizeof again, &n2), LDM6_EINVAL);
}

static void test_malformed_headers(void **state) {
  uint8_t buf[64];
  ldm6_rpc_msg m;
  size_t n, used, k;

  (void)state;
  /* msg_type, reply_stat, reject_stat outside their unions. */
  n = tu_unhex("00000001 00000002", buf, sizeof buf);
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), LDM6_EMSG);
  n = tu_unhex("00000001 00000001 00000002", buf, sizeof buf);
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), LDM6_EMSG);
  n = tu_unhex("00000001 00000001 00000001 00000002", buf, sizeof buf);
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), LDM6_EMSG);
  memset(&m, 0, sizeof m);
  m.type = 2;
  assert_int_equal(ldm6_rpc_encode(&m, buf, sizeof buf, &n), LDM6_EMSG);
  m.type = LDM6_RPC_REPLY;
  m.u.reply.reply_stat = 2;
  assert_int_equal(ldm6_rpc_encode(&m, buf, sizeof buf, &n), LDM6_EMSG);
  m.u.reply.reply_stat = LDM6_RPC_MSG_DENIED;
  m.u.reply.reject_stat = 2;
  assert_int_equal(ldm6_rpc_encode(&m, buf, sizeof buf, &n), LDM6_EMSG);

  /* Every truncation of every header form. */
  assert_int_equal(
      ldm6_rpc_encode_call(1, LDM6_PROG, 6, 1, buf, sizeof buf, &n), 0);
  for (k = 0; k < n; k++)
    assert_int_equal(ldm6_rpc_decode(buf, k, &m, &used), LDM6_ESHORT);
  assert_int_equal(ldm6_rpc_encode_prog_mismatch(1, 4, 6, buf, sizeof buf, &n),
                   0);
  for (k = 0; k < n; k++)
    assert_int_equal(ldm6_rpc_decode(buf, k, &m, &used), LDM6_ESHORT);
  assert_int_equal(ldm6_rpc_encode_auth_error(1, 5, buf, sizeof buf, &n), 0);
  for (k = 0; k < n; k++)
    assert_int_equal(ldm6_rpc_decode(buf, k, &m, &used), LDM6_ESHORT);
  /* And every output buffer too small. */
  for (k = 0; k < LDM6_RPC_CALL_HDR_LEN; k++)
    assert_int_equal(ldm6_rpc_encode_call(1, LDM6_PROG, 6, 1, buf, k, &n),
                     LDM6_ENOSPACE);
  assert_int_equal(ldm6_rpc_decode(NULL, 0, &m, &used), LDM6_ESHORT);
  assert_int_equal(ldm6_rpc_decode(NULL, 4, &m, &used), LDM6_EINVAL);
}

/* A call with rpcvers 3 still decodes, so the server can answer
 * RPC_MISMATCH. */
static void test_other_rpc_version(void **state) {
  uint8_t buf[64];
  size_t n = tu_unhex("00000001 00000000 00000003 000493fd 00000006 00000000 "
                      "00000000 00000000 00000000 00000000",
                      buf, sizeof buf),
         used;
  ldm6_rpc_msg m;

  (void)state;
  assert_int_equal(ldm6_rpc_decode(buf, n, &m, &used), 0);
  assert_int_equal(m.u.call.rpcvers, 3);
}

static void test_stray_replies(void **state) {
  ldm6_rpc_msg m;

  (void)state;
  memset(&m, 0, sizeof m);
  m.type = LDM6_RPC_REPLY;
  m.xid = 0x690a4885;
  assert_true(ldm6_rpc_reply_is_awaited(&m, true, 0x690a4885));
  assert_false(ldm6_rpc_reply_is_awaited(&m, false, 0x690a4885));
  /* The reply notifyme sends to a NOTIFICATION while the upstream waits
   * for its NULLPROC: discarded. */
  m.xid = 0x6a0a4885;
  assert_false(ldm6_rpc_reply_is_awaited(&m, true, 0x690a4885));
  m.type = LDM6_RPC_CALL;
  m.xid = 0x690a4885;
  assert_false(ldm6_rpc_reply_is_awaited(&m, true, 0x690a4885));
}

/* A refusal, whatever its xid (LDM's and ldmd's with xid 0 too); not
 * another denial nor an accepted reply, and never a call. */
static void test_refusals(void **state) {
  uint8_t buf[64];
  size_t len, used;
  ldm6_rpc_msg m;

  (void)state;
  assert_int_equal(ldm6_rpc_encode_auth_error(0, LDM6_RPC_AUTH_TOOWEAK, buf,
                                              sizeof buf, &len),
                   0);
  assert_int_equal(ldm6_rpc_decode(buf, len, &m, &used), 0);
  assert_true(ldm6_rpc_reply_is_refusal(&m));
  assert_false(ldm6_rpc_reply_is_awaited(&m, true, 7));
  assert_int_equal(ldm6_rpc_encode_auth_error(7, LDM6_RPC_AUTH_BADCRED, buf,
                                              sizeof buf, &len),
                   0);
  assert_int_equal(ldm6_rpc_decode(buf, len, &m, &used), 0);
  assert_true(ldm6_rpc_reply_is_refusal(&m));
  assert_int_equal(ldm6_rpc_encode_rpc_mismatch(7, 2, 2, buf, sizeof buf, &len),
                   0);
  assert_int_equal(ldm6_rpc_decode(buf, len, &m, &used), 0);
  assert_false(ldm6_rpc_reply_is_refusal(&m)); /* denied, not refused us */
  assert_int_equal(
      ldm6_rpc_encode_accepted(7, LDM6_RPC_SUCCESS, buf, sizeof buf, &len), 0);
  assert_int_equal(ldm6_rpc_decode(buf, len, &m, &used), 0);
  assert_false(ldm6_rpc_reply_is_refusal(&m));
  memset(&m, 0, sizeof m);
  m.type = LDM6_RPC_CALL;
  assert_false(ldm6_rpc_reply_is_refusal(&m));
}

static void test_marks(void **state) {
  uint8_t mark[4];
  uint32_t len;
  bool last;

  (void)state;
  ldm6_rpc_mark_put(mark, 76, true);
  assert_memory_equal(mark, "\x80\x00\x00\x4c", 4);
  ldm6_rpc_mark_get(mark, &len, &last);
  assert_int_equal(len, 76);
  assert_true(last);
  ldm6_rpc_mark_put(mark, LDM6_RPC_FRAG_MAX, false);
  assert_memory_equal(mark, "\x7f\xff\xff\xff", 4);
  ldm6_rpc_mark_get(mark, &len, &last);
  assert_int_equal(len, LDM6_RPC_FRAG_MAX);
  assert_false(last);
  ldm6_rpc_mark_put(mark, 0, true);
  assert_memory_equal(mark, "\x80\x00\x00\x00", 4);
}

/* A stream of records: fragments of the given size, records of lengths
 * 0..count-1 bytes whose byte i is (record + i). */
static size_t make_stream(uint8_t *out, size_t cap, unsigned count,
                          size_t frag) {
  size_t o = 0;
  unsigned r;

  for (r = 0; r < count; r++) {
    size_t len = r, done = 0;

    do {
      size_t f = len - done < frag ? len - done : frag;
      size_t i;

      assert_true(o + 4 + f <= cap);
      ldm6_rpc_mark_put(out + o, (uint32_t)f, done + f == len);
      o += 4;
      for (i = 0; i < f; i++)
        out[o++] = (uint8_t)(r + done + i);
      done += f;
    } while (done < len);
  }
  return o;
}

static void test_framer_pieces(void **state) {
  static uint8_t stream[64 * 1024];
  size_t frag, piece;

  (void)state;
  for (frag = 1; frag <= 41; frag += 8) {
    size_t n = make_stream(stream, sizeof stream, 60, frag);

    for (piece = 1; piece <= 70; piece += 3) {
      ldm6_rpc_framer f;
      size_t off = 0, used0, rlen0;
      uint8_t *rec0;
      unsigned next = 0;

      ldm6_rpc_framer_init(&f, 1000);
      while (off < n) {
        size_t len = n - off < piece ? n - off : piece, used;
        const uint8_t *p = stream + off;

        off += len;
        while (len > 0 || next < 60) {
          int rc = ldm6_rpc_framer_feed(&f, p, len, &used);
          uint8_t *rec;
          size_t rlen, i;

          assert_true(rc == 0 || rc == 1);
          assert_true(used <= len);
          p += used;
          len -= used;
          if (rc == 0)
            break;
          assert_true(ldm6_rpc_framer_record(&f, &rec, &rlen));
          assert_int_equal(rlen, next);
          for (i = 0; i < rlen; i++)
            assert_int_equal(rec[i], (uint8_t)(next + i));
          next++;
        }
      }
      assert_int_equal(next, 60);
      assert_int_equal(ldm6_rpc_framer_feed(&f, NULL, 0, &used0), 0);
      assert_false(ldm6_rpc_framer_record(&f, &rec0, &rlen0));
      ldm6_rpc_framer_free(&f);
    }
  }
}

static void test_framer_limits(void **state) {
  uint8_t mark[4], data[16] = {0};
  ldm6_rpc_framer f;
  size_t used;
  uint8_t *rec;
  size_t rlen;

  (void)state;
  /* A record of exactly the maximum, in two fragments. */
  ldm6_rpc_framer_init(&f, 16);
  ldm6_rpc_mark_put(mark, 10, false);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 4, &used), 0);
  assert_int_equal(ldm6_rpc_framer_want(&f), 10);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, 10, &used), 0);
  assert_int_equal(ldm6_rpc_framer_want(&f), 4);
  ldm6_rpc_mark_put(mark, 6, true);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 3, &used), 0);
  assert_int_equal(ldm6_rpc_framer_want(&f), 1);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark + 3, 1, &used), 0);
  assert_int_equal(ldm6_rpc_framer_want(&f), 6);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, 6, &used), 1);
  assert_true(ldm6_rpc_framer_record(&f, &rec, &rlen));
  assert_int_equal(rlen, 16);

  /* One byte more is refused as soon as the mark says so: no data needed,
   * and the framer stays failed. */
  ldm6_rpc_mark_put(mark, 10, false);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 4, &used), 0);
  ldm6_rpc_mark_put(mark, 7, true);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, 10, &used), 0);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 4, &used), LDM6_ETOOBIG);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, 1, &used), LDM6_ETOOBIG);
  assert_int_equal(used, 0);
  ldm6_rpc_framer_free(&f);

  /* A 2 GiB mark against a 256 KiB limit; nothing is allocated for it. */
  ldm6_rpc_framer_init(&f, LDM6_MAX_RPC_BUF);
  assert_int_equal(ldm6_rpc_framer_feed(&f, "\xff\xff\xff\xff", 4, &used),
                   LDM6_ETOOBIG);
  assert_null(f.buf);
  ldm6_rpc_framer_free(&f);

  /* A large announced fragment costs only what has arrived. */
  ldm6_rpc_framer_init(&f, (size_t)1 << 30);
  ldm6_rpc_mark_put(mark, 1u << 29, true);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 4, &used), 0);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, 16, &used), 0);
  assert_true(f.cap <= 4096);
  ldm6_rpc_framer_free(&f);

  /* Empty fragments, and an empty record. */
  ldm6_rpc_framer_init(&f, 16);
  assert_int_equal(
      ldm6_rpc_framer_feed(&f, "\x00\x00\x00\x00\x00\x00\x00\x00", 8, &used),
      0);
  assert_int_equal(used, 8);
  assert_int_equal(ldm6_rpc_framer_feed(&f, "\x80\x00\x00\x00", 4, &used), 1);
  assert_true(ldm6_rpc_framer_record(&f, &rec, &rlen));
  assert_int_equal(rlen, 0);
  ldm6_rpc_framer_free(&f);
}

/* A record larger than 1 MiB leaves no large buffer behind. */
static void test_framer_shrinks(void **state) {
  size_t big = (2u << 20) + 3, used;
  uint8_t *data = calloc(1, big), mark[4];
  ldm6_rpc_framer f;

  (void)state;
  assert_non_null(data);
  ldm6_rpc_framer_init(&f, big);
  ldm6_rpc_mark_put(mark, (uint32_t)big, true);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 4, &used), 0);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, big, &used), 1);
  assert_true(f.cap >= big);
  ldm6_rpc_mark_put(mark, 1, true);
  assert_int_equal(ldm6_rpc_framer_feed(&f, mark, 4, &used), 0);
  assert_true(f.cap < big);
  assert_int_equal(ldm6_rpc_framer_feed(&f, data, 1, &used), 1);
  ldm6_rpc_framer_free(&f);
  free(data);
}

static void flatten(const struct iovec *iov, size_t n, uint8_t *out, size_t cap,
                    size_t *len) {
  size_t i;

  *len = 0;
  for (i = 0; i < n; i++) {
    assert_true(*len + iov[i].iov_len <= cap);
    memcpy(out + *len, iov[i].iov_base, iov[i].iov_len);
    *len += iov[i].iov_len;
  }
}

static void test_record_iov(void **state) {
  uint8_t head[40], data[30], marks[16][4], flat[256];
  struct iovec pieces[4], out[64];
  size_t nout, len;

  (void)state;
  memset(head, 'h', sizeof head);
  memset(data, 'd', sizeof data);
  pieces[0] = (struct iovec){head, sizeof head};
  pieces[1] = (struct iovec){NULL, 0}; /* skipped */
  pieces[2] = (struct iovec){data, sizeof data};
  pieces[3] = (struct iovec){(void *)"\0\0", 2};

  /* One fragment: mark, header, data, padding; nothing copied. */
  assert_int_equal(ldm6_rpc_record_iov(pieces, 4, 0, marks, 16, out, 64, &nout),
                   0);
  assert_int_equal(nout, 4);
  assert_ptr_equal(out[1].iov_base, head);
  assert_ptr_equal(out[2].iov_base, data);
  flatten(out, nout, flat, sizeof flat, &len);
  assert_int_equal(len, 76);
  assert_memory_equal(flat, "\x80\x00\x00\x48", 4);

  /* Fragments of 16 bytes: 72 = 16 * 4 + 8, five marks. */
  assert_int_equal(ldm6_rpc_record_nfrags(72, 16), 5);
  assert_int_equal(
      ldm6_rpc_record_iov(pieces, 4, 16, marks, 16, out, 64, &nout), 0);
  assert_true(nout <= 4 + 2 * 5 - 1);
  flatten(out, nout, flat, sizeof flat, &len);
  assert_int_equal(len, 72 + 5 * 4);
  assert_memory_equal(flat, "\x00\x00\x00\x10", 4);
  assert_memory_equal(flat + 4 * 20, "\x80\x00\x00\x08", 4);

  /* Too few marks or iovecs. */
  assert_int_equal(ldm6_rpc_record_iov(pieces, 4, 16, marks, 4, out, 64, &nout),
                   LDM6_ENOSPACE);
  assert_int_equal(ldm6_rpc_record_iov(pieces, 4, 16, marks, 16, out, 8, &nout),
                   LDM6_ENOSPACE);
  /* An empty record is one empty last fragment. */
  assert_int_equal(ldm6_rpc_record_nfrags(0, 16), 1);
  assert_int_equal(ldm6_rpc_record_iov(NULL, 0, 0, marks, 1, out, 1, &nout), 0);
  assert_int_equal(nout, 1);
  assert_memory_equal(out[0].iov_base, "\x80\x00\x00\x00", 4);
  assert_int_equal(ldm6_rpc_record_nfrags((size_t)1 << 32, 0), 3);
}

/* writev() of a fragmented record through a socket, read back in odd
 * pieces by the framer. */
static void test_writev_socket(void **state) {
  static uint8_t data[200000];
  uint8_t head[LDM6_RPC_CALL_HDR_LEN], marks[64][4], buf[777], *rec;
  struct iovec pieces[2], out[200];
  size_t nout, i, total = 0, used, rlen;
  ldm6_rpc_framer f;
  int sv[2];
  pid_t pid;

  (void)state;
  for (i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(i * 7);
  assert_int_equal(
      ldm6_rpc_encode_call(5, LDM6_PROG, 6, LDM6_HEREIS, head, sizeof head, &i),
      0);
  pieces[0] = (struct iovec){head, sizeof head};
  pieces[1] = (struct iovec){data, sizeof data};
  assert_int_equal(
      ldm6_rpc_record_iov(pieces, 2, 65536, marks, 64, out, 200, &nout), 0);
  for (i = 0; i < nout; i++)
    total += out[i].iov_len;
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ssize_t w = writev(sv[0], out, (int)nout);

    _exit(w == (ssize_t)total ? 0 : 1);
  }
  close(sv[0]);
  ldm6_rpc_framer_init(&f, sizeof data + sizeof head);
  for (;;) {
    ssize_t r = read(sv[1], buf, sizeof buf);
    int rc;

    assert_true(r > 0);
    rc = ldm6_rpc_framer_feed(&f, buf, (size_t)r, &used);
    if (rc == 1) {
      assert_int_equal(used, (size_t)r);
      break;
    }
    assert_int_equal(rc, 0);
  }
  assert_true(ldm6_rpc_framer_record(&f, &rec, &rlen));
  assert_int_equal(rlen, sizeof head + sizeof data);
  assert_memory_equal(rec, head, sizeof head);
  assert_memory_equal(rec + sizeof head, data, sizeof data);
  ldm6_rpc_framer_free(&f);
  close(sv[1]);
  {
    int status;

    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_call_header),
      cmocka_unit_test(test_reply_headers),
      cmocka_unit_test(test_auth_bodies),
      cmocka_unit_test(test_malformed_headers),
      cmocka_unit_test(test_other_rpc_version),
      cmocka_unit_test(test_stray_replies),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_marks),
      cmocka_unit_test(test_framer_pieces),
      cmocka_unit_test(test_framer_limits),
      cmocka_unit_test(test_framer_shrinks),
      cmocka_unit_test(test_record_iov),
      cmocka_unit_test(test_writev_socket),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
