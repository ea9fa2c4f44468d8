/*
 * wmo_sig.h - the signature pqing gives a product: the MD5 of the message
 * without its leading control characters and sequence number, so that
 * messages that differ only in sequence number are duplicates; with -5,
 * the MD5 of the whole message (docs/pqing.md, "Signatures").  Pure
 * functions; thread-safe.
 */
#ifndef PQUTILS_WMO_WMO_SIG_H
#define PQUTILS_WMO_WMO_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Where the signed bytes begin: 0 with whole, or when the message does not
 * begin SOH CR CR LF <at most four bytes> CR CR LF (searched as LDM
 * searches it, a NUL byte ending the search); else the byte after that
 * second CR CR LF.
 */
size_t wmo_sig_skip(const uint8_t *p, size_t n, bool whole);

/**
 * The signature of the message p[0, n).
 * @return 0, or -1 if MD5 failed (OpenSSL)
 */
int wmo_signature(const uint8_t *p, size_t n, bool whole, uint8_t sig[16]);

#endif
