/*
 * grib2_decode.c - the sections of a GRIB2 message and its fields, as LDM
 * 6.15's namer sees them through its copy of g2clib (docs/noaaport.md,
 * "GRIB edition 2", Decoding): first an inventory of the whole message
 * (every section length within the message, section numbers 2 to 7 after
 * section 1, "7777" only at the very end, at least one field), then each
 * field in turn, with the grid definition that applies to it, unpacked
 * from sections 1, 3, 4 and 5.  Any template LDM's copy does not know, or
 * anything that runs past the message, fails the whole message.
 *
 * g2clib fetches field k by walking the message from its start until it
 * has seen a grid definition, field k's section 4, a section 5 after it
 * (before the next section 4) and a bit-map section; it unpacks every
 * grid definition on the way and keeps the last.  The walks of successive
 * fields are prefixes of one another, so one walk names them all: a field
 * is handed over at the point where its own walk would stop, fields
 * waiting for the first grid or bit-map section all at once.  A field's own
 * sections 4 and 5 are unpacked only when g2clib fetches that field, after
 * LDM named the fields before it: when they fail, those fields are still
 * handed over (and log what LDM logs) before the message fails.  The cost
 * is linear in the message's length.
 */
#include <stdbool.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static unsigned u16(const uint8_t *p) {
  return (unsigned)p[0] << 8 | p[1];
}

static bool is_end(const uint8_t *p) {
  return memcmp(p, "7777", 4) == 0;
}

/* g2clib's inventory: where the sections after section 1 start, and how
 * many fields there are.  0, or -1 if LDM would not name the message. */
static int inventory(const uint8_t *p, size_t len, size_t *first,
                     size_t *fields) {
  if (len < 16 + 5)
    return -1;
  uint32_t l1 = u32(p + 16);
  if (l1 < 16 || l1 > len - 16 || p[20] != 1)
    return -1;
  size_t pos = 16 + l1, rem = len - pos, n = 0;
  *first = pos;
  while (rem >= 4) {
    if (is_end(p + pos)) {
      *fields = n;
      return rem == 4 && n > 0 ? 0 : -1;
    }
    if (rem < 5)
      return -1;
    uint32_t ls = u32(p + pos);
    unsigned num = p[pos + 4];
    if (ls < 5 || ls > rem || num < 2 || num > 7)
      return -1;
    n += num == 4;
    pos += ls;
    rem -= ls;
  }
  *fields = n;
  return rem == 0 && n > 0 ? 0 : -1;
}

/* Section 1's values, at fixed offsets whatever its stated length. */
static int unpack1(const uint8_t *p, size_t len, struct np__g2_msg *m) {
  static const uint8_t widths[13] = {2, 2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1};
  size_t pos = 16 + 5;
  if (len < 16 + 21)
    return -1;
  m->disc = p[6];
  for (int i = 0; i < 13; i++) {
    m->ids[i] = widths[i] == 2 ? (int64_t)u16(p + pos) : p[pos];
    pos += widths[i];
  }
  return 0;
}

/* Section 3 at p[off]: the grid definition, its template and the optional
 * list of points per row, which must be there if announced. */
static int unpack3(const uint8_t *p, size_t len, size_t off,
                   struct np__g2_grid *g) {
  if (len - off < 14)
    return -1;
  unsigned numoct = p[off + 10], gdtn = u16(p + off + 12);
  uint64_t bytes = 0;
  g->source = p[off + 5];
  g->gdt.num = gdtn;
  g->gdt.len = 0;
  if (gdtn != 65535 &&
      np__g2_unpack(NP__G2_GDT, gdtn, p, off + 14, len, &g->gdt, &bytes) != 0)
    return -1;
  if (numoct == 0)
    return 0;
  int64_t rows = ((int64_t)u32(p + off) - 14 - (int64_t)bytes) / numoct;
  if (rows <= 0)
    return -1;
  return (uint64_t)rows * numoct <= len - off - 14 - bytes ? 0 : -1;
}

/* Section 4 at p[off]: the product definition and its coordinate values. */
static int unpack4(const uint8_t *p, size_t len, size_t off,
                   struct np__g2_tmpl *t) {
  uint64_t bytes;
  if (len - off < 9 || np__g2_unpack(NP__G2_PDT, u16(p + off + 7), p, off + 9,
                                     len, t, &bytes) != 0)
    return -1;
  uint64_t coords = 4 * (uint64_t)u16(p + off + 5);
  return coords <= len - off - 9 - bytes ? 0 : -1;
}

/* Section 5 at p[off]: its data representation template must be known. */
static int unpack5(const uint8_t *p, size_t len, size_t off) {
  struct np__g2_tmpl t;
  uint64_t bytes;
  if (len - off < 11)
    return -1;
  return np__g2_unpack(NP__G2_DRT, u16(p + off + 9), p, off + 11, len, &t,
                       &bytes);
}

struct walk {
  const uint8_t *p;
  size_t len;
  struct np__g2_msg msg;
  struct np__g2_grid grid; /* the last grid definition unpacked */
  bool have3, have6;       /* a grid definition, a bit-map section seen */
  bool cur5;               /* the last field seen has its section 5 */
  size_t total, seen, named;
  size_t bad;     /* the first field g2clib cannot fetch (1-based), or 0 */
  size_t pending; /* where the section 4 of field named + 1 is */
  size_t last4;   /* where the section 4 of field `seen` is */
  struct np__g2_field field;
  np__g2_field_fn *fn;
  void *arg;
};

/* Hand over the fields from `pending` on that have their section 5 (and
 * come before the first one that cannot be fetched). */
static void hand_over(struct walk *w) {
  size_t upto = w->cur5 ? w->seen : w->seen - 1;
  if (w->bad != 0 && upto >= w->bad)
    upto = w->bad - 1;
  for (size_t pos = w->pending; w->named < upto; pos += u32(w->p + pos)) {
    if (w->p[pos + 4] != 4)
      continue;
    /* it unpacked when the walk passed it */
    (void)unpack4(w->p, w->len, pos, &w->field.pdt);
    w->field.grid = &w->grid;
    w->field.index = w->named++;
    w->fn(w->arg, &w->field);
  }
  w->pending = w->last4;
}

/* A section 4: the next field.  A field's own section 4 or 5 is unpacked
 * only when g2clib fetches that field, after the fields before it were
 * named: its failure is marked, not acted on yet. */
static void field_section(struct walk *w, size_t off) {
  struct np__g2_tmpl t;
  if (w->bad != 0) {
    w->seen++;
    return;
  }
  if (w->seen > w->named && !w->cur5) {
    w->bad = w->seen; /* it never gets its section 5 */
    return;
  }
  w->last4 = off;
  if (w->seen++ == w->named)
    w->pending = off;
  w->cur5 = false;
  if (unpack4(w->p, w->len, off, &t) != 0)
    w->bad = w->seen;
}

/* A section of the walk; -1 if a field not yet named cannot be fetched. */
static int section(struct walk *w, size_t off, unsigned num) {
  switch (num) {
  case 3:
    if (w->named == w->total)
      return 0; /* past the last field's walk: never unpacked */
    w->have3 = true;
    return unpack3(w->p, w->len, off, &w->grid);
  case 4:
    field_section(w, off);
    return 0;
  case 5:
    if (w->bad != 0 || w->seen == w->named)
      return 0;
    w->cur5 = true;
    if (unpack5(w->p, w->len, off) != 0)
      w->bad = w->seen;
    return 0;
  case 6: /* g2clib reads its bit-map indicator, past it at the very end */
    if (w->named < w->total && w->len - off < 6)
      return -1;
    w->have6 = true;
    return 0;
  default:
    return 0;
  }
}

int np__g2_decode(const uint8_t *p, size_t len, np__g2_field_fn *fn,
                  void *arg) {
  struct walk w = {.p = p, .len = len, .fn = fn, .arg = arg};
  size_t pos;
  if (inventory(p, len, &pos, &w.total) != 0 || unpack1(p, len, &w.msg) != 0)
    return -1;
  w.field.msg = &w.msg;
  w.field.total = w.total;
  while (len - pos >= 4 && !is_end(p + pos)) {
    if (section(&w, pos, p[pos + 4]) != 0)
      return -1;
    if (w.have3 && w.have6 && w.seen > w.named &&
        (w.cur5 || w.seen - 1 > w.named))
      hand_over(&w);
    if (w.bad != 0 && w.named + 1 >= w.bad)
      return -1; /* the fields before it are named */
    pos += u32(p + pos);
  }
  return w.named == w.total ? 0 : -1;
}
