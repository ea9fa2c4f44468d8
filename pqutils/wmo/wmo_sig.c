/*
 * wmo_sig.c - pqing's product signatures (wmo_sig.h), the MD5 from
 * OpenSSL.
 */
#include "pqutils/wmo/wmo_sig.h"

#include <openssl/evp.h>
#include <string.h>

#include "pqutils/wmo/wmo_frame.h"

size_t wmo_sig_skip(const uint8_t *p, size_t n, bool whole) {
  static const uint8_t start[4] = {WMO_SOH, WMO_CR, WMO_CR, WMO_LF};
  if (whole || n < 4 || memcmp(p, start, 4) != 0)
    return 0;
  for (size_t i = 4; i + 3 <= n && p[i] != 0; i++) {
    if (p[i] == WMO_CR && p[i + 1] == WMO_CR && p[i + 2] == WMO_LF)
      return i - 4 <= 4 ? i + 3 : 0;
  }
  return 0;
}

int wmo_signature(const uint8_t *p, size_t n, bool whole, uint8_t sig[16]) {
  size_t skip = wmo_sig_skip(p, n, whole);
  unsigned len = 0;
  return EVP_Digest(p + skip, n - skip, sig, &len, EVP_md5(), NULL) == 1 &&
                 len == 16
             ? 0
             : -1;
}
