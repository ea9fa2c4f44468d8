/*
 * test_md5.c - the queue library's checksums.  MD5 signatures: the RFC 1321
 * test suite through the one-call and the incremental interfaces, pieces of
 * every size giving the same digest, and contexts freed with and without a
 * digest (ASan sees leaks).  CRC-32C (pq_crc32c(), which pqsave's snapshots
 * use too): the standard check value, continued over pieces, and no
 * vector registers left dirty for the caller's SSE code (pq/crc32c.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "pq/pq.h"
#include "pq/product.h"
#include "test/lib/tu_skip.h"

/* RFC 1321, appendix A.5. */
static const struct {
  const char *msg;
  const char *md5;
} rfc1321[] = {
    {"", "d41d8cd98f00b204e9800998ecf8427e"},
    {"a", "0cc175b9c0f1b6a831c399e269772661"},
    {"abc", "900150983cd24fb0d6963f7d28e17f72"},
    {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
    {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
     "d174ab98d277d9f5a5611c2c9f419d9f"},
    {"1234567890123456789012345678901234567890123456789012345678901234567890"
     "1234567890",
     "57edf4a22be3c955ac49da2e2107b67a"},
};

#define NVEC (sizeof rfc1321 / sizeof rfc1321[0])

static void check_sig(const uint8_t sig[PQ_SIGLEN], const char *hex) {
  char buf[33];

  pq_sig_format(sig, buf);
  assert_string_equal(buf, hex);
}

static void test_one_call(void **state) {
  uint8_t sig[PQ_SIGLEN];
  size_t i;

  (void)state;
  for (i = 0; i < NVEC; i++) {
    memset(sig, 0, sizeof sig);
    assert_int_equal(pq_md5(rfc1321[i].msg, strlen(rfc1321[i].msg), sig), 0);
    check_sig(sig, rfc1321[i].md5);
  }
  /* Empty data may come without a buffer. */
  assert_int_equal(pq_md5(NULL, 0, sig), 0);
  check_sig(sig, rfc1321[0].md5);
}

static void test_incremental(void **state) {
  uint8_t sig[PQ_SIGLEN];
  size_t i, piece, off;

  (void)state;
  for (i = 0; i < NVEC; i++) {
    const char *msg = rfc1321[i].msg;
    size_t len = strlen(msg);

    /* Every piece size from 1 byte to the whole message at once. */
    for (piece = 1; piece <= len + 1; piece++) {
      pq_md5_ctx *ctx = pq_md5_new();

      assert_non_null(ctx);
      for (off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;

        assert_int_equal(pq_md5_update(ctx, msg + off, n), 0);
      }
      assert_int_equal(pq_md5_update(ctx, msg, 0), 0); /* no-op */
      memset(sig, 0, sizeof sig);
      assert_int_equal(pq_md5_final(ctx, sig), 0); /* frees ctx */
      check_sig(sig, rfc1321[i].md5);
    }
  }
}

static void test_large_matches_pieces(void **state) {
  static uint8_t data[1 << 20];
  uint8_t whole[PQ_SIGLEN], pieces[PQ_SIGLEN];
  pq_md5_ctx *ctx;
  size_t i, off, piece = 1;

  (void)state;
  for (i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(i * 131u + (i >> 9));
  assert_int_equal(pq_md5(data, sizeof data, whole), 0);
  ctx = pq_md5_new();
  assert_non_null(ctx);
  for (off = 0; off < sizeof data; off += piece, piece = piece * 3 + 1) {
    size_t n = sizeof data - off < piece ? sizeof data - off : piece;

    assert_int_equal(pq_md5_update(ctx, data + off, n), 0);
  }
  assert_int_equal(pq_md5_final(ctx, pieces), 0);
  assert_memory_equal(whole, pieces, PQ_SIGLEN);
  /* And the data matters. */
  data[12345] ^= 1;
  assert_int_equal(pq_md5(data, sizeof data, pieces), 0);
  assert_memory_not_equal(whole, pieces, PQ_SIGLEN);
}

static void test_ctx_free(void **state) {
  pq_md5_ctx *ctx;

  (void)state;
  pq_md5_free(NULL);
  ctx = pq_md5_new();
  assert_non_null(ctx);
  pq_md5_free(ctx); /* without a digest */
  ctx = pq_md5_new();
  assert_non_null(ctx);
  assert_int_equal(pq_md5_update(ctx, "abc", 3), 0);
  pq_md5_free(ctx); /* midway */
}

/* The check value of CRC-32C (iSCSI's, RFC 3720 B.4's polynomial):
 * "123456789" is 0xE3069283, whole or continued in pieces of every cut;
 * nothing gives 0. */
static void test_crc32c(void **state) {
  static const char s[] = "123456789";
  (void)state;
  assert_int_equal(pq_crc32c(0, s, 9), 0xE3069283u);
  for (size_t cut = 0; cut <= 9; cut++)
    assert_int_equal(pq_crc32c(pq_crc32c(0, s, cut), s + cut, 9 - cut),
                     0xE3069283u);
  assert_int_equal(pq_crc32c(0, NULL, 0), 0u);
}

#if defined(__x86_64__)
/* XINUSE (XGETBV with ECX=1, where the processor has it): bit 2, the upper
 * halves of YMM0-15; bit 6, the upper halves of ZMM0-15. */
#define UPPER_STATE ((1u << 2) | (1u << 6))

static bool have_xinuse(void) {
  unsigned a, b, c, d;
  return __builtin_cpu_supports("avx") &&
         __get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & (1u << 2)) != 0;
}

static unsigned xinuse(void) {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  (void)hi;
  return lo;
}

__attribute__((target("avx"))) static void zero_upper(void) {
  _mm256_zeroupper();
}
#endif

/* ISA-L's AVX-512 routine returns with the vectors' upper halves in use;
 * left so, every SSE instruction after it is slowed (pq/crc32c.c).  After
 * pq_crc32c() they are clear.  Skipped where the processor cannot say
 * (no XINUSE) or says "in use" even just after VZEROUPPER (it may). */
static void test_crc32c_clears_upper(void **state) {
  (void)state;
#if defined(__x86_64__)
  if (!have_xinuse())
    tu_skip("this processor cannot say which vector state is in use "
            "(no AVX, or no XGETBV with ECX=1)");
  zero_upper();
  if ((xinuse() & UPPER_STATE) != 0)
    tu_skip("this processor says the upper halves are in use just after "
            "VZEROUPPER");
  size_t n = 1 << 16;
  unsigned char *buf = malloc(n);
  assert_non_null(buf);
  memset(buf, 0x5a, n);
  uint32_t crc = pq_crc32c(0, buf, n);
  unsigned used = xinuse() & UPPER_STATE;
  free(buf);
  assert_int_not_equal(crc, 0);
  assert_int_equal(used, 0);
#else
  tu_skip("not x86-64: no AVX-512 routine to leave vectors dirty");
#endif
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_call),
      cmocka_unit_test(test_incremental),
      cmocka_unit_test(test_large_matches_pieces),
      cmocka_unit_test(test_ctx_free),
      cmocka_unit_test(test_crc32c),
      cmocka_unit_test(test_crc32c_clears_upper),
  };

  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
