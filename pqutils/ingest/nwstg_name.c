/*
 * nwstg_name.c - the identifier of a product on the NWSTG path, as LDM
 * 6.15's ingester makes it from the product's first block: the CCB, then
 * NAME (the canonical heading with its " /p" PIL or " /m" GRIB1 model, or
 * a fallback) and META (" !" and the NIDS, graph or redbook tag, the
 * redbook title and the GRIB tag), the NEXRAD level III category on the
 * way, and the GRIB2 part of META named again when the product is complete
 * (docs/noaaport.md, section "Identifiers").  Only the bytes of the block
 * are read; nothing is kept from one product to the next.
 */
#include "pqutils/ingest/nwstg_name.h"

#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/feedtype_rules.h"
#include "pqutils/ingest/grib1_name.h"
#include "pqutils/ingest/grib2_name.h"

/* Byte i of a block of n bytes; bytes past its end read as 0. */
static uint8_t byte_at(const uint8_t *b, size_t n, size_t i) {
  return i < n ? b[i] : 0;
}

void np_ccb_parse(const uint8_t *block, size_t n, struct np_ccb *ccb,
                  const struct np_log *lg) {
  uint8_t b0 = byte_at(block, n, 0), b1 = byte_at(block, n, 1);
  memset(ccb, 0, sizeof *ccb);
  ccb->len = 2u * ((((unsigned)b0 & 0x3Fu) << 8) | b1);
  ccb->valid = ccb->len <= n;
  if (!ccb->valid) {
    /* A product without its CCB: named from the block's first byte. */
    np_log(lg, NP_INFO, "Invalid ccb length = %u %u %u, blen %zu", ccb->len, b0,
           b1, n);
    np_log(lg, NP_INFO, "Error reading ccb, using default name");
    return;
  }
  ccb->mode = byte_at(block, n, 10);
  ccb->submode = byte_at(block, n, 11);
  ccb->user1 = byte_at(block, n, 12);
  ccb->user2 = byte_at(block, n, 13);
}

/* A string being built in a buffer of size bytes, cut to size - 1. */
struct sbuf {
  char *s;
  size_t len, size;
};

static void sb_add(struct sbuf *b, const char *t) {
  size_t n = strlen(t);
  if (n > b->size - 1 - b->len)
    n = b->size - 1 - b->len;
  memcpy(b->s + b->len, t, n);
  b->len += n;
  b->s[b->len] = '\0';
}

/* The fallback NAME: the printable prefix of p, or LDM's default. */
static void fallback_name(const uint8_t *p, size_t n,
                          char name[NP_PREFIX_MAX + 1]) {
  if (np_printable_prefix(p, n, name) == 0)
    snprintf(name, NP_PREFIX_MAX + 1, "Unidentifiable product");
}

/* What naming the heading gives: NAME and the GRIB part of META. */
struct heading_name {
  char name[NP_PREFIX_MAX + 1];
  char gribtag[256];
  bool grib2;
  size_t grib2_at;
};

/* The GRIB part of META for the message at g (its line after the heading),
 * and " /m<model>" for NAME if it is GRIB1.  @return false if not GRIB */
static bool grib_tag(const uint8_t *g, size_t n, struct heading_name *h,
                     char *model_part, size_t model_size, struct np_namer *nm) {
  if (n < 4 || memcmp(g, "GRIB", 4) != 0)
    return false;
  int edition = (int8_t)byte_at(g, n, 7);
  if (edition == 0 || edition == 1) {
    char model[64];
    np_grib1_name(g, n, model, sizeof model, h->gribtag, sizeof h->gribtag, nm);
    snprintf(model_part, model_size, " /m%s", model);
  } else if (edition == 2) {
    snprintf(h->gribtag, sizeof h->gribtag, "grib2/");
    h->grib2 = true;
  } else {
    snprintf(h->gribtag, sizeof h->gribtag, "gribx/");
  }
  return true;
}

/* NAME from the canonical heading of p[0, n), with its PIL or model part,
 * and the GRIB part of META.  @return false if LDM finds no heading (the
 * GRIB part is kept when the name is only too long) */
static bool name_heading(const uint8_t *p, size_t n, struct heading_name *h,
                         struct np_namer *nm) {
  const struct np_log *lg = nm != NULL ? nm->log : NULL;
  char wmo[NP_WMO_MAX + 1], extra[96] = "";
  size_t after;
  if (np_wmo_heading(p, n, wmo, &after, lg) != 0)
    return false;
  if (grib_tag(p + after, n - after, h, extra, sizeof extra, nm)) {
    h->grib2_at = after;
  } else {
    char pil[8];
    if (np_wmo_pil(p + after, n - after, pil))
      snprintf(extra, sizeof extra, " /p%s", pil);
  }
  size_t len = strlen(wmo) + strlen(extra);
  if (len > NP_WMO_MAX) {
    np_log(lg, NP_ERROR, "wmoid is bizzare %zu", len);
    h->grib2 = false;
    return false;
  }
  snprintf(h->name, sizeof h->name, "%s%s", wmo, extra);
  return true;
}

/* The redbook graphic's title parts (docs/noaaport.md, section
 * "Identifiers"): each ends at its first NUL. */
struct redbook {
  char a[10], b[7], p[10], date[32];
  int seen;
};

/* Copy len bytes of block data from off (0 past the data) into out. */
static void copy_raw(const uint8_t *d, size_t n, size_t off, size_t len,
                     char *out) {
  for (size_t i = 0; i < len; i++)
    out[i] = (char)byte_at(d, n, off + i);
  out[len] = '\0';
}

/* Mode 1 / submode 1: product identification, the block at d[s]. */
static void redbook_ident(const uint8_t *d, size_t n, size_t s, unsigned len,
                          struct redbook *r) {
  copy_raw(d, n, s + 11, 9, r->a);
  if (2 * len > 31)
    copy_raw(d, n, s + 26, 6, r->b);
  int year = (int16_t)((byte_at(d, n, s + 20) << 8) | byte_at(d, n, s + 21));
  snprintf(r->date, sizeof r->date, "%04d%02d%02d %02d%02d", year,
           (int8_t)byte_at(d, n, s + 22), (int8_t)byte_at(d, n, s + 23),
           (int8_t)byte_at(d, n, s + 24), (int8_t)byte_at(d, n, s + 25));
  r->seen++;
}

/* Mode 2 / submode 2: the PIL, cut at its first control byte. */
static void redbook_pil(const uint8_t *d, size_t n, size_t s, unsigned len,
                        struct redbook *r, const struct np_log *lg) {
  if (2 * len < 21) {
    np_log(lg, NP_ERROR, "mode 2 submode 2 short %u", len);
    return;
  }
  copy_raw(d, n, s + 11, 9, r->p);
  for (int i = 0; i < 9; i++)
    if ((int8_t)r->p[i] < 0x20)
      r->p[i] = '\0';
}

/* The redbook title of a graphic product's data d[0, n), or "". */
static void redbook_title(const uint8_t *d, size_t n, char *title, size_t size,
                          const struct np_log *lg) {
  struct redbook r;
  memset(&r, 0, sizeof r);
  const uint8_t *lf = memchr(d, '\n', n);
  size_t s = lf != NULL ? (size_t)(lf - d) + 1 : n + 1;
  while (s + 4 < n) {
    int ff = (int8_t)d[s] >> 6;
    unsigned len = (((unsigned)d[s] << 8) | d[s + 1]) & 0x3FFFu;
    int mode = (int8_t)d[s + 2], submode = (int8_t)d[s + 3];
    if (ff != 1 || len == 0 || n < s + 2 * (size_t)len)
      break;
    if (mode == 1 && submode == 1) {
      redbook_ident(d, n, s, len, &r);
    } else if (mode == 2 && submode == 2) {
      redbook_pil(d, n, s, len, &r, lg);
      break;
    } else if (mode == 1 && submode == 2) {
      break;
    }
    s += 2 * (size_t)len;
  }
  title[0] = '\0';
  if (r.seen > 0)
    snprintf(title, size, "%s/%s/%s/%s", r.p, r.b, r.a, r.date);
}

/* META: " !" and the tags, or "" if there are none. */
static void make_meta(const uint8_t *d, size_t n, const struct np_ccb *ccb,
                      int category, const char *gribtag, char *meta,
                      const struct np_log *lg) {
  char tag[32] = "", title[96] = "";
  if (category == NP_CAT_NIDS) {
    if (ccb->user1 != 'F')
      snprintf(tag, sizeof tag, "nids/");
  } else if (category == 2) {
    redbook_title(d, n, title, sizeof title, lg);
    /* user1 twice: LDM never reads user2. */
    snprintf(tag, sizeof tag, "%s %u_%u/", title[0] ? "redbook" : "graph",
             ccb->user1, ccb->user1);
  }
  struct sbuf m = {meta, 0, NP_META_MAX + 1};
  meta[0] = '\0';
  if (tag[0] == '\0' && title[0] == '\0' && gribtag[0] == '\0')
    return;
  sb_add(&m, " !");
  sb_add(&m, tag);
  sb_add(&m, title);
  sb_add(&m, gribtag);
}

/* ident = NAME + META, cut to LDM's buffer. */
static void set_ident(struct np_nwstg_name *out, const char *name,
                      const char *meta) {
  struct sbuf id = {out->ident, 0, sizeof out->ident};
  out->ident[0] = '\0';
  sb_add(&id, name);
  out->name_len = id.len;
  sb_add(&id, meta);
}

void np_name_nwstg(const uint8_t *block, size_t n, const struct np_ccb *ccb,
                   int type, int category, struct np_nwstg_name *out,
                   struct np_namer *nm) {
  const struct np_log *lg = nm != NULL ? nm->log : NULL;
  struct heading_name h;
  memset(out, 0, sizeof *out);
  memset(&h, 0, sizeof h);
  out->category = category;
  if (!ccb->valid) {
    fallback_name(block, n, h.name);
    set_ident(out, h.name, "");
    return;
  }
  const uint8_t *d = block + ccb->len;
  size_t dn = n - ccb->len;
  if (!name_heading(d, dn, &h, nm)) {
    fallback_name(d, dn, h.name);
    np_log(lg, NP_NOTE, "Non-wmo product type %s ccbmode %u ccbsubmode %u",
           h.name, ccb->mode, ccb->submode);
  }
  if (np_is_nids(type, ccb->mode, ccb->submode, d, dn))
    out->category = NP_CAT_NIDS;
  char meta[NP_META_MAX + 1];
  make_meta(d, dn, ccb, out->category, h.gribtag, meta, lg);
  set_ident(out, h.name, meta);
  out->grib2 = h.grib2;
  out->grib2_at = h.grib2_at;
}

void np_name_grib2_final(struct np_nwstg_name *out, const uint8_t *prod,
                         size_t prod_len, size_t g_off, struct np_namer *nm) {
  const char *meta = out->ident + out->name_len;
  if (!out->grib2 || strcmp(meta, " !grib2/") != 0)
    return;
  if (prod_len < 16 || g_off >= prod_len - 16 ||
      memcmp(prod + g_off, "GRIB", 4) != 0)
    return;
  char name[NP_IDENT_MAX + 1], tag[510];
  memcpy(name, out->ident, out->name_len);
  name[out->name_len] = '\0';
  if (np_grib2_name(prod + g_off, prod_len - g_off, name, tag, sizeof tag,
                    nm) != 0)
    return;
  char newmeta[NP_META_MAX + 1];
  snprintf(newmeta, sizeof newmeta, " !%s", tag);
  set_ident(out, name, newmeta);
}
