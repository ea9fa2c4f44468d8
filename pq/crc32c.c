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
 */
#include <isa-l/crc.h>
#include <limits.h>

#include "pq/internal.h"

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
  return ~reg;
}

uint32_t pq_crc32c(uint32_t crc, const void *data, size_t len) {
  return pq__crc32c(crc, data, len);
}
