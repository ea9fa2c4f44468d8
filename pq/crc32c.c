/*
 * crc32c.c - the checksum of a product (its record and its data), computed
 * when it is committed and checked by pq_check() and by readers that ask
 * (pq_set_verify).  CRC32C (Castagnoli), the CRC of iSCSI and ext4, from
 * Intel's ISA-L, which picks the fastest code the processor has at run time
 * (SSE4.2 crc32 and carry-less multiply on x86-64: several GB/s).
 *
 * ISA-L's crc32_iscsi() takes and returns the CRC register without the
 * final inversion, and a length of type int; pq__crc32c() wraps it into the
 * usual convention (CRC32C("123456789") = 0xe3069283, start from 0, chain
 * by passing the previous result) for any length.  pq_crc32c() is the same,
 * public (pq.h), for the programs' own files.
 *
 * On a processor with AVX-512, ISA-L (2.30, Debian 12) runs a routine
 * that leaves the upper halves of the vector registers in use and returns
 * without VZEROUPPER.  Until something clears them, every legacy-SSE
 * instruction the caller then runs (ours are built for baseline x86-64)
 * waits on them: measured in ldmd's feeder, the code after each check ran
 * ten times slower, and checking 1 KiB products cost a fifth of its CPU
 * where the CRC itself takes 2%.  Intel's optimization manual asks for a
 * VZEROUPPER after such code, and ISA-L's maintainers leave it to the
 * caller (intel/isa-l issue 24): pq__crc32c() clears them when the
 * processor has AVX.
 */
#include <isa-l/crc.h>
#include <limits.h>

#include "pq/internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

__attribute__((target("avx"))) static void zero_upper(void) {
  _mm256_zeroupper();
}

static void after_vector_code(void) {
  if (__builtin_cpu_supports("avx"))
    zero_upper();
}
#else
static void after_vector_code(void) {
}
#endif

#define CHUNK ((uint64_t)1 << 30)
static_assert(CHUNK <= INT_MAX, "crc32_iscsi() takes an int length");

uint32_t pq__crc32c(uint32_t crc, const void *p, uint64_t n) {
  unsigned int reg = ~crc;
  /* crc32_iscsi() only reads the buffer, but its prototype is not const. */
  unsigned char *b = (unsigned char *)(uintptr_t)p;
  while (n > 0) {
    uint64_t len = n < CHUNK ? n : CHUNK;
    reg = crc32_iscsi(b, (int)len, reg);
    b += len;
    n -= len;
  }
  after_vector_code();
  return ~reg;
}

uint32_t pq_crc32c(uint32_t crc, const void *data, size_t len) {
  return pq__crc32c(crc, data, len);
}
