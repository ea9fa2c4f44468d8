/*
 * product_inflate.c - owns -c, the option that stores compressed frames
 * inflated: one zlib inflater per product, reset at its block 0, each
 * stream of a block giving at most 5700 bytes, and the clear heading and
 * NNNXXX lines that start a compressed NWSTG block 0 (the stream repeats
 * them).  LDM documents -c for well-formed input only; this is a simpler
 * reading of what it does (docs/noaaport.md, "Reassembly"): a block whose
 * inflating fails adds nothing, and the inflater stays dead until the
 * next product, each later block logging the error LDM logs for it.
 */
#include <ctype.h>
#include <string.h>

#include "pqutils/ingest/product_internal.h"

/* LDM inflates into a heap sized for the compressed bytes and writes past
 * it; here an inflated product stops growing at this size. */
#define NP_INFLATE_MAX (256u * 1024u * 1024u)

/* zlib's codes as LDM names them in its log lines. */
static const char *zname(int code) {
  switch (code) {
  case Z_OK:
    return "OK";
  case Z_STREAM_END:
    return "STREAM_END";
  case Z_NEED_DICT:
    return "NEED_DICT";
  case Z_ERRNO:
    return "ERRNO";
  case Z_STREAM_ERROR:
    return "STREAM_ERROR";
  case Z_DATA_ERROR:
    return "DATA_ERROR";
  case Z_MEM_ERROR:
    return "MEM_ERROR";
  case Z_BUF_ERROR:
    return "BUF_ERROR";
  case Z_VERSION_ERROR:
    return "VERSION_ERROR";
  default:
    return "";
  }
}

void np_inflate_begin(struct np_build *b) {
  struct np_inflater *in = &b->inf;
  if (in->live)
    return; /* LDM keeps a stream that was never ended */
  if (!in->init) {
    memset(&in->z, 0, sizeof in->z);
    int rc = inflateInit(&in->z);
    if (rc != Z_OK) {
      np_log(b->log, NP_ERROR, "ERROR %d inflateInit (%s)", rc, zname(rc));
      return;
    }
    in->init = true;
  }
  in->live = true;
}

void np_inflate_end(struct np_build *b) {
  b->inf.live = false;
}

/* The inflater died: LDM ends its stream. */
static void inflate_error(struct np_build *b, int rc) {
  np_log(b->log, NP_ERROR, " Error %d inflate (%s)", rc, zname(rc));
  b->inf.live = false;
}

/* One zlib stream from in[0, n) onto the product (not hashed yet), at
 * most room bytes of it.  @return the input bytes it took, 0 at the end
 * (nothing made), or SIZE_MAX on error */
static size_t one_stream(struct np_build *b, const uint8_t *in, size_t n,
                         size_t room) {
  z_stream *z = &b->inf.z;
  if (b->bytes.len + room > NP_INFLATE_MAX || !np_bytes_room(&b->bytes, room))
    return 0;
  inflateReset(z);
  z->next_in = (Bytef *)(uintptr_t)in;
  z->avail_in = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
  z->next_out = b->bytes.p + b->bytes.len;
  z->avail_out = (uInt)room;
  int rc = inflate(z, Z_NO_FLUSH);
  size_t made = room - z->avail_out;
  if (rc < 0) {
    inflate_error(b, rc);
    return SIZE_MAX;
  }
  if (made == 0) {
    np_log(b->log, NP_NOTE, "\n Unable to decompress data - truncated");
    return 0;
  }
  if (rc != Z_STREAM_END) {
    /* More output than the buffer holds, or a stream cut short: LDM's
     * next call to inflate has no room or no input. */
    inflate_error(b, Z_BUF_ERROR);
    return SIZE_MAX;
  }
  b->bytes.len += made;
  return n - z->avail_in;
}

/* A block's streams go into LDM's one 5700-byte buffer: their output
 * beyond it (LDM writes past the buffer) is not taken. */
size_t np_inflate_block(struct np_build *b, const uint8_t *in, size_t n) {
  if (!b->inf.live || !b->inf.init) {
    np_log(b->log, NP_ERROR, " Error %d inflate (%s)", Z_STREAM_ERROR,
           zname(Z_STREAM_ERROR));
    return 0;
  }
  size_t start = b->bytes.len, pos = 0;
  while (pos < n && b->bytes.len - start < NP_INFLATE_CHUNK) {
    size_t room = NP_INFLATE_CHUNK - (b->bytes.len - start);
    size_t took = one_stream(b, in + pos, n - pos, room);
    if (took == SIZE_MAX) {
      b->bytes.len = start; /* a failed block adds nothing */
      return 0;
    }
    if (took == 0)
      break;
    pos += took;
  }
  if (b->bytes.md5_ok) /* hashed once the block is whole */
    EVP_DigestUpdate(b->bytes.md5, b->bytes.p + start, b->bytes.len - start);
  return b->bytes.len - start;
}

static bool up(uint8_t c) {
  return isupper(c) || isdigit(c);
}

/* The end of the TTAAii group at p[0, n), by the forms LDM accepts:
 * TTAAii, TTAAi, TTAA i, TTA#ii; 0 if none. */
static size_t ttaaii(const uint8_t *p, size_t n) {
  if (n < 7 || !isalpha(p[0]) || !isalpha(p[1]) || !isalpha(p[2]))
    return 0;
  bool end7 = isspace(p[6]) || isalpha(p[6]);
  if (isalpha(p[3])) {
    if (isdigit(p[4]) && isdigit(p[5]) && end7)
      return 6;
    if (isdigit(p[4]) && isspace(p[5]) && end7)
      return 5;
    if (isspace(p[4]) && isdigit(p[5]) && end7)
      return 6;
    if (isdigit(p[4]) && isalpha(p[5]))
      return 5;
    return 0;
  }
  if (isdigit(p[3]) && isdigit(p[4]) && isdigit(p[5]) && end7)
    return 6;
  return 0;
}

/* The heading's TTAA group, or the bare "TTAA CCCC " form, starting at
 * *start.  @return the offset after it, 0 if none before the first CR CR
 * LF */
static size_t heading_start(const uint8_t *p, size_t n, size_t *start) {
  for (size_t i = 0; i + 7 <= n; i++) {
    if (memcmp(p + i, "\r\r\n", 3) == 0)
      break;
    size_t k = ttaaii(p + i, n - i);
    *start = i;
    if (k != 0)
      return i + k;
  }
  for (size_t i = 0; i + 10 <= n; i++) {
    if (memcmp(p + i, "\r\r\n", 3) == 0)
      return 0;
    const uint8_t *q = p + i;
    *start = i;
    if (isalpha(q[0]) && isalpha(q[1]) && isalpha(q[2]) && isalpha(q[3]) &&
        isspace(q[4]) && isalpha(q[5]) && isalpha(q[6]) && isalpha(q[7]) &&
        isalpha(q[8]) && isspace(q[9]))
      return i + 4;
  }
  return 0;
}

static size_t spaces(const uint8_t *p, size_t i, size_t n) {
  while (i < n && isspace(p[i]))
    i++;
  return i;
}

static size_t digits(const uint8_t *p, size_t i, size_t n) {
  size_t k = 0;
  while (i + k < n && isdigit(p[i + k]))
    k++;
  return k;
}

/* CCCC and the time group after the TTAAii group ending at i.  @return
 * the offset after them, 0 if they are not there */
static size_t cccc_time(const uint8_t *p, size_t i, size_t n) {
  i = spaces(p, i, n);
  if (i + 4 > n || !isalpha(p[i]) || !isalnum(p[i + 1]) || !isalpha(p[i + 2]) ||
      !isalnum(p[i + 3]))
    return 0;
  size_t t = spaces(p, i + 4, n);
  size_t d = digits(p, t, n);
  if (d >= 6)
    t += 6;
  else if (d == 4 && t + 4 < n && isspace(p[t + 4]))
    t += 4;
  else if (d == 5 && t - (i + 4) > 1)
    t += 5;
  else
    return 0;
  if (t < n && p[t] == 'Z')
    t++;
  return t;
}

/* An optional BBB, then the run of CR and LF (at most 3) ending the
 * heading line, from t.  @return the offset after it */
static size_t bbb_crlf(const uint8_t *p, size_t t, size_t n) {
  int crlf = 0;
  bool bbb = false;
  while (t < n && crlf < 3) {
    if (p[t] == '\r' || p[t] == '\n') {
      crlf++;
      t++;
    } else if (crlf != 0) {
      break;
    } else if (isalpha(p[t]) && !bbb) {
      size_t k = 1;
      while (k < 3 && t + k < n && isalpha(p[t + k]))
        k++;
      if (t + k >= n || !isspace(p[t + k]))
        break;
      bbb = true;
      t += k;
    } else if (isspace(p[t])) {
      t++;
    } else {
      break;
    }
  }
  return t;
}

/* The NNNXXX line at p[0, n): 4 to 6 upper-case letters or digits, blank
 * padding allowed, then CR CR LF.  @return its length, 0 if none */
static size_t nnnxxx(const uint8_t *p, size_t n) {
  size_t k = 0;
  while (k < n && k < 6 && up(p[k]))
    k++;
  if (k < 4)
    return 0;
  while (k < n && k < 8 && p[k] == ' ')
    k++;
  if (k + 3 > n || memcmp(p + k, "\r\r\n", 3) != 0)
    return 0;
  return k + 3;
}

bool np_inflate_skip_heading(const uint8_t *data, size_t n, size_t *skip) {
  size_t start = 0;
  size_t at = heading_start(data, n, &start);
  if (at == 0)
    return false;
  size_t t = cccc_time(data, at, n);
  if (t == 0)
    return false;
  /* LDM skips the heading's length counted from the block's start (the
   * same when, as sent, the heading opens the block). */
  size_t len = bbb_crlf(data, t, n) - start;
  *skip = len + nnnxxx(data + len, n - len);
  return true;
}
