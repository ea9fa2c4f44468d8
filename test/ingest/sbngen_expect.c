/*
 * sbngen_expect.c - what a perfect ingester makes of a libsbngen product
 * (sbngen.h), worked out from docs/noaaport.md alone: the stored bytes
 * ("The product built": the FOS header, the data after the CCB with the
 * last block's CR CR LF ETX trailers stripped, the trailer; for GINI the
 * heading, the PDB marked 128 and the image as PNG, or every block of a
 * "satz" product as it is), the MD5 signature (bytes 11 on of NWSTG
 * products, all bytes of GOES ones), the feedtype ("Feedtypes": the NIDS
 * category, the ASCII test on NMC, the decision by datastream, type and
 * category) and, for text and NEXRAD products, the identifier
 * ("Identifiers": the canonical heading, " /p" and the PIL, " !nids/").
 */
#include "test/ingest/sbngen.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <png.h>

static bool sg_alnum(unsigned c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
         (c >= 'a' && c <= 'z');
}

/* The product sequence number modulo 1000 as LDM prints it, through a
 * signed int: from 2^31 on, negative, and "-123" overwrites the header's
 * last LF ("The product built", FOS framing). */
void sg_fos_header(uint8_t out[11], uint32_t seqno) {
  char s[16];

  snprintf(s, sizeof s, "\001\r\r\n%03d \r\r\n", (int)(int32_t)seqno % 1000);
  memcpy(out, s, 11);
}

static bool sg_ascii_byte(uint8_t c) {
  if (c >= 0x20 && c <= 0x7F)
    return true;
  return c == 0 || c == 0x1E || c == '\t' || c == '\n' || c == '\r';
}

/* Positions 1 to 100 and N - 101 to N - 2; bytes from 0x80 are not
 * printable (signed chars), ETX is not allowed ("Feedtypes"). */
bool sg_ascii_ok(const uint8_t *buf, size_t n) {
  if (n < 3)
    return true;
  size_t last = n - 2;
  size_t head = last < 100 ? last : 100;
  for (size_t i = 1; i <= head; i++)
    if (!sg_ascii_byte(buf[i]))
      return false;
  size_t tail = n > 101 ? n - 101 : 1;
  for (size_t i = tail > head ? tail : head + 1; i <= last; i++)
    if (!sg_ascii_byte(buf[i]))
      return false;
  return true;
}

/* W(max): spaces skipped, then up to max letters or digits.  False when
 * only spaces remain before the end (a NUL ends the text). */
static bool sg_word(const uint8_t *t, size_t n, size_t *pos, size_t max,
                    char *out) {
  size_t i = *pos, k = 0;

  while (i < n && t[i] == ' ')
    i++;
  if (i >= n || t[i] == 0)
    return false;
  while (k < max && i < n && sg_alnum(t[i]))
    out[k++] = (char)t[i++];
  out[k] = 0;
  *pos = i;
  return true;
}

bool sg_heading(const uint8_t *text, size_t n, char *out, size_t outsz,
                size_t *next) {
  char tt[3], aa[3], cccc[5], time[7], bbb[10];
  unsigned long ii = 0;
  size_t i = 0;

  if (!sg_word(text, n, &i, 2, tt) || !sg_word(text, n, &i, 2, aa))
    return false;
  for (; i < n && text[i] >= '0' && text[i] <= '9'; i++)
    ii = ii < 100000 ? ii * 10 + (text[i] - '0') : ii;
  if (!sg_word(text, n, &i, 4, cccc) || !sg_word(text, n, &i, 6, time) ||
      !sg_word(text, n, &i, 9, bbb))
    return false;
  size_t lf = i;
  while (lf < n && lf - i < 31 && text[lf] != '\n' && text[lf] != 0)
    lf++;
  if (lf >= n || lf - i >= 31 || text[lf] != '\n')
    return false;
  int len = snprintf(out, outsz, "%s%s%02lu %s %s%s%s", tt, aa, ii, cccc, time,
                     bbb[0] ? " " : "", bbb);
  if (len < 0 || (size_t)len >= outsz || len > 128)
    return false;
  *next = lf + 1;
  return true;
}

bool sg_pil(const uint8_t *text, size_t n, char out[8]) {
  if (n >= 4 && memcmp(text, "GRIB", 4) == 0)
    return false;
  if (n >= 4 && memcmp(text, "^NMC", 4) == 0) {
    text += 4;
    n -= 4;
  }
  const uint8_t *lf = n > 0 ? memchr(text, '\n', n) : NULL;
  if (lf == NULL || !sg_alnum(text[0]))
    return false;
  size_t len = (size_t)(lf - text);
  while (len > 0 && (text[len - 1] < 0x20 || text[len - 1] >= 0x80))
    len--;
  if (len != 6)
    return false;
  while (len > 3 && text[len - 1] == ' ')
    len--;
  bool digits = true;
  for (size_t i = 0; i < len; i++) {
    if (!sg_alnum(text[i]))
      return false;
    digits = digits && text[i] >= '0' && text[i] <= '9';
  }
  if (digits)
    return false;
  memcpy(out, text, len);
  out[len] = 0;
  return true;
}

/* "Feedtypes", the decision. */
static const char *sg_feedtype(unsigned ds, unsigned type, unsigned cat) {
  if (ds == SG_DS_NMC2)
    return type >= 1 && type <= 3 ? "NIMAGE"
           : type == 4            ? "NGRID"
           : type == 5            ? "NEXRAD3"
                                  : "NOTHER";
  if (type < 4)
    return "NIMAGE";
  switch (cat) {
  case 1:
  case 7:
    return "IDS|DDPLUS";
  case 101:
  case 107:
  case 2:
  case 4:
  case 5:
    return "HDS";
  case 99:
    return "NEXRAD3";
  default:
    return "NOTHER";
  }
}

static void sg_md5(const uint8_t *p, size_t n, char hex[33]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;

  EVP_Digest(p, n, md, &len, EVP_md5(), NULL);
  for (unsigned i = 0; i < 16; i++)
    snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static bool sg_nids_prefix(const uint8_t *t, size_t n) {
  static const char *const pre[] = {"SDUS2", "SDUS3", "SDUS5",
                                    "SDUS6", "SDUS7", "SDUS8"};

  for (size_t i = 0; n >= 5 && i < sizeof pre / sizeof pre[0]; i++)
    if (memcmp(t, pre[i], 5) == 0)
      return true;
  return false;
}

/* The identifier of a text or NEXRAD product; "" for GRIB, graphics and
 * headings that do not parse (not computed here). */
static void sg_nwstg_ident(struct sg_product *p, const uint8_t *t, size_t n,
                           unsigned cat, unsigned user1) {
  char *id = p->expect.ident, pil[8];
  size_t next;

  if (cat == 2 || !sg_heading(t, n, id, sizeof p->expect.ident, &next))
    return;
  if (n - next >= 4 && memcmp(t + next, "GRIB", 4) == 0) {
    id[0] = 0;
    return;
  }
  size_t len = strlen(id);
  if (sg_pil(t + next, n - next, pil))
    len +=
        (size_t)snprintf(id + len, sizeof p->expect.ident - len, " /p%s", pil);
  if (cat == 99 && user1 != 'F')
    snprintf(id + len, sizeof p->expect.ident - len, " !nids/");
}

/* The data: the blocks after the CCB, the last block's trailers gone. */
static void sg_nwstg_data(struct sg_product *p, size_t ccb) {
  for (size_t i = 0; i < p->nblocks; i++) {
    const struct sg_buf *b = &p->blocks[i];
    size_t from = i == 0 ? ccb : 0, n = b->n - from;

    while (i + 1 == p->nblocks && n > 4 &&
           memcmp(b->p + from + n - 4, "\r\r\n\003", 4) == 0)
      n -= 4;
    sg_buf_put(&p->expect.bytes, b->p + from, n);
  }
}

static void sg_expect_nwstg(struct sg_product *p) {
  const struct sg_buf *b0 = &p->blocks[0];
  size_t ccb = b0->n >= 2 ? 2 * (((b0->p[0] & 0x3Fu) << 8) | b0->p[1]) : 1;
  bool valid = ccb <= b0->n;
  unsigned cat = p->category;
  uint8_t fos[11];

  if (!valid)
    ccb = 0;
  sg_fos_header(fos, p->seqno);
  sg_buf_put(&p->expect.bytes, fos, sizeof fos);
  sg_nwstg_data(p, ccb);
  valid = valid && ccb >= 14;
  if (valid && (p->type == 5 || (b0->p[10] == 2 && b0->p[11] == 0 &&
                                 sg_nids_prefix(b0->p + ccb, b0->n - ccb))))
    cat = 99;
  if (p->datastream == SG_DS_NMC && (cat == 1 || cat == 7) &&
      !sg_ascii_ok(p->expect.bytes.p, p->expect.bytes.n))
    cat += 100;
  sg_buf_str(&p->expect.bytes, "\r\r\n\003");
  sg_md5(p->expect.bytes.p + 11, p->expect.bytes.n - 11, p->expect.md5);
  p->expect.known = true;
  p->expect.feedtype = sg_feedtype(p->datastream, p->type, cat);
  if (valid)
    sg_nwstg_ident(p, b0->p + ccb, b0->n - ccb, cat, b0->p[12]);
}

static void sg_png_write(png_structp png, png_bytep data, size_t n) {
  sg_buf_put(png_get_io_ptr(png), data, n);
}

static void sg_png_flush(png_structp png) {
  (void)png;
}

/* The rows of the later blocks, at most records-per-block a block, as a
 * PNG of nx by ny + 1 with libpng's defaults ("Satellite names" and
 * "Reassembly", GOES-path data).  False if the rows are not ny + 1. */
static bool sg_png(struct sg_product *p, unsigned nx, unsigned ny) {
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  volatile bool ok = false;

  if (info == NULL || setjmp(png_jmpbuf(png)))
    goto out;
  png_set_write_fn(png, &p->expect.bytes, sg_png_write, sg_png_flush);
  png_set_IHDR(png, info, nx, ny + 1, 8, PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (size_t i = 1; i < p->nblocks; i++) {
    const struct sg_buf *b = &p->blocks[i];
    for (size_t k = 0; k * nx < b->n && k < p->records_per_block; k++)
      png_write_row(png, b->p + k * nx);
  }
  png_write_end(png, NULL);
  ok = true;
out:
  png_destroy_write_struct(&png, &info);
  return ok;
}

/* The rows the later blocks hold, whole rows only. */
static size_t sg_rows(const struct sg_product *p, unsigned nx) {
  size_t rows = 0;

  for (size_t i = 1; i < p->nblocks; i++) {
    size_t k = p->blocks[i].n / nx;
    if (p->blocks[i].n % nx != 0 || k > p->records_per_block)
      return 0;
    rows += k;
  }
  return rows;
}

static void sg_expect_gini(struct sg_product *p) {
  const struct sg_buf *b0 = &p->blocks[0];
  const uint8_t *lf = memchr(b0->p, '\n', b0->n);
  size_t pdb = lf ? (size_t)(lf - b0->p) + 1 : b0->n;

  p->expect.feedtype = sg_feedtype(p->datastream, p->type, p->category);
  sg_buf_put(&p->expect.bytes, b0->p, b0->n);
  if (p->tt_extra & SG_TT_COMPRESSED) {
    for (size_t i = 1; i < p->nblocks; i++)
      sg_buf_put(&p->expect.bytes, p->blocks[i].p, p->blocks[i].n);
  } else {
    if (b0->n < pdb + SG_PDB_LEN)
      return;
    const uint8_t *d = b0->p + pdb;
    unsigned nx = (unsigned)d[16] << 8 | d[17];
    unsigned ny = (unsigned)d[18] << 8 | d[19];
    p->expect.bytes.p[pdb + 42] = 128;
    if (nx < 1 || ny < 1 || sg_rows(p, nx) != ny + 1 || !sg_png(p, nx, ny))
      return;
  }
  sg_md5(p->expect.bytes.p, p->expect.bytes.n, p->expect.md5);
  p->expect.known = true;
}

void sg_expect(struct sg_product *p) {
  sg_buf_free(&p->expect.bytes);
  memset(&p->expect, 0, sizeof p->expect);
  if (p->nblocks == 0)
    return;
  if (p->nwstg)
    sg_expect_nwstg(p);
  else
    sg_expect_gini(p);
}
