/*
 * test_np_grib2.c - GRIB edition 2 names (pqutils/ingest/grib2_name.h):
 * every GRIB2 product of LDM 6.15's vectors (test/ingest/vectors) gets
 * exactly LDM's identifier part after " !" and LDM's ERROR and WARN lines;
 * ecCodes' sample messages decode (the names of a few worked out by hand
 * from docs/noaaport.md, "GRIB edition 2"); synthetic messages (written
 * with np_grib2_msg.h) show each rule and quirk of that section; and
 * truncated or lying messages name
 * nothing and read nothing past their end (the sanitizer build proves it).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/grib2_internal.h"
#include "pqutils/ingest/grib2_name.h"
#include "pqutils/ingest/grib_names.h"
#include "test/ingest/np_grib2_msg.h"
#include "test/lib/tu_skip.h"

/* ---- the log lines a namer gives ---------------------------------------- */

struct lines {
  char text[64][512]; /* "LEVEL\tmessage" */
  int n;
};

static void collect(void *arg, int level, const char *msg) {
  static const char *const names[] = {"DEBUG", "INFO", "NOTE", "WARN", "ERROR"};
  struct lines *l = arg;
  if (l->n < 64 && level >= 0 && level <= 4)
    snprintf(l->text[l->n++], sizeof l->text[0], "%s\t%s", names[level], msg);
}

/* Name msg[0..n) under NAME name; the tag or "-1", and the log lines. */
static int name_of(const uint8_t *msg, size_t n, const char *name, char *tag,
                   size_t size, struct lines *l) {
  l->n = 0;
  struct np_log lg = {collect, l, 0};
  struct np_namer nm = {&lg, 0};
  snprintf(tag, size, "untouched");
  return np_grib2_name(msg, n, name, tag, size, &nm);
}

/* ---- LDM's vectors --------------------------------------------------------
 */

static uint8_t *read_file(const char *dir, const char *file, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  uint8_t *buf = NULL;
  size_t cap = 0;
  *n = 0;
  for (;;) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 65536;
      uint8_t *more = realloc(buf, cap + 1);
      assert_non_null(more);
      buf = more;
    }
    size_t k = fread(buf + *n, 1, cap - *n, f);
    if (k == 0)
      break;
    *n += k;
  }
  fclose(f);
  buf[*n] = 0;
  return buf;
}

static const char *vectors(void) {
  const char *d = getenv("NP_VECTORS");
  return d != NULL ? d : "test/ingest/vectors";
}

/* A GRIB2 message of a single-frame product: its start and length. */
struct msg {
  const uint8_t *p;
  size_t n;
};

/* The GRIB2 messages of an .sbn stream, in order.  docs/noaaport.md,
 * "Frame format": a frame header of 16 bytes, then the PDH (header length
 * at bytes 2-3, data size at 8-9) and, for a product's first frame, the
 * PSH; the data starts with a CCB of 2*(((b0 & 0x3F) << 8) | b1) bytes,
 * then the WMO heading line; the GRIB message follows its LF. */
static int grib2_messages(const uint8_t *s, size_t n, struct msg *out,
                          int max) {
  int k = 0;
  size_t i = 0;
  while (i + 16 + 10 <= n && k < max) {
    if (s[i] != 0xFF) {
      i++;
      continue;
    }
    const uint8_t *pdh = s + i + 16;
    size_t hlen = (size_t)pdh[2] << 8 | pdh[3];
    size_t dlen = (size_t)pdh[8] << 8 | pdh[9];
    const uint8_t *d = pdh + hlen;
    if (i + 16 + hlen + dlen > n)
      break;
    i += 16 + hlen + dlen;
    if (hlen < 16 + 36 || dlen < 2)
      continue;
    size_t ccb = 2 * ((size_t)(d[0] & 0x3F) << 8 | d[1]);
    const uint8_t *lf = ccb < dlen ? memchr(d + ccb, '\n', dlen - ccb) : NULL;
    if (lf == NULL || (size_t)(d + dlen - lf) < 9 ||
        memcmp(lf + 1, "GRIB", 4) || lf[8] != 2)
      continue;
    out[k].p = lf + 1;
    out[k].n = (size_t)(d + dlen - (lf + 1));
    k++;
  }
  return k;
}

/* A product of products.tsv: its identifier and sequence number. */
struct product {
  char *ident;
  long seq;
};

/* The products of a products.tsv that hold " !grib2/", in order. */
static int grib2_products(char *tsv, struct product *out, int max) {
  int k = 0;
  for (char *line = strtok(tsv, "\n"); line != NULL && k < max;
       line = strtok(NULL, "\n")) {
    char *tab = strchr(line, '\t');
    if (tab == NULL || strstr(line, " !grib2/") == NULL)
      continue;
    *tab = '\0';
    const char *seq = strchr(tab + 1, '\t');
    out[k].ident = line;
    out[k++].seq = seq != NULL ? strtol(seq + 1, NULL, 10) : -1;
  }
  return k;
}

/* LDM's ERROR and WARN lines logged before a product was inserted (since
 * the product inserted before it). */
static void lines_before(const char *log, const struct product *pr,
                         struct lines *l) {
  char want[600], seq[32];
  snprintf(want, sizeof want, "NOTE\t%s inserted ", pr->ident);
  snprintf(seq, sizeof seq, " seq %ld size ", pr->seq);
  const char *end = strstr(log, want);
  while (end != NULL &&
         (strchr(end, '\n') == NULL || strstr(end, seq) == NULL ||
          strstr(end, seq) > strchr(end, '\n')))
    end = strstr(end + 1, want);
  assert_non_null(end);
  const char *from = end;
  while (from > log) {
    const char *p = from - 1;
    while (p > log && p[-1] != '\n')
      p--;
    if (strncmp(p, "NOTE\t", 5) == 0 && strstr(p, " inserted ") != NULL &&
        strstr(p, " inserted ") < end)
      break;
    from = p;
  }
  l->n = 0;
  for (const char *p = from; p < end;) {
    const char *nl = strchr(p, '\n');
    if (strncmp(p, "ERROR\t", 6) == 0 || strncmp(p, "WARN\t", 5) == 0)
      snprintf(l->text[l->n++], sizeof l->text[0], "%.*s", (int)(nl - p), p);
    p = nl + 1;
  }
}

static void check_case(const char *name, int products) {
  char file[64];
  size_t ns, nt, nl;
  snprintf(file, sizeof file, "%s.sbn", name);
  uint8_t *sbn = read_file(vectors(), file, &ns);
  snprintf(file, sizeof file, "%s.products.tsv", name);
  char *tsv = (char *)read_file(vectors(), file, &nt);
  snprintf(file, sizeof file, "%s.log", name);
  char *log = (char *)read_file(vectors(), file, &nl);
  assert_non_null(sbn);
  assert_non_null(tsv);
  assert_non_null(log);
  struct msg m[64];
  struct product pr[64];
  int nm = grib2_messages(sbn, ns, m, 64);
  int ni = grib2_products(tsv, pr, 64);
  assert_int_equal(nm, products);
  assert_int_equal(ni, products);
  for (int i = 0; i < nm; i++) {
    char tag[512], head[256];
    struct lines got = {.n = 0}, want = {.n = 0};
    const char *bang = strstr(pr[i].ident, " !");
    snprintf(head, sizeof head, "%.*s", (int)(bang - pr[i].ident), pr[i].ident);
    assert_int_equal(name_of(m[i].p, m[i].n, head, tag, sizeof tag, &got), 0);
    assert_string_equal(tag, bang + 2);
    lines_before(log, &pr[i], &want);
    assert_int_equal(got.n, want.n);
    for (int j = 0; j < got.n; j++)
      assert_string_equal(got.text[j], want.text[j]);
  }
  free(sbn);
  free(tsv);
  free(log);
}

static void test_vectors_grib2(void **state) {
  (void)state;
  check_case("grib2", 13);
}

static void test_vectors_nwstg_basic(void **state) {
  (void)state;
  check_case("nwstg-basic", 3);
}

/* ---- synthetic messages ----------------------------------------------------
 */

/* Section 0 and section 1: reference time 2024-03-15 12:00. */
static void start(struct g2 *m, int disc, int centre, int mv, int lv) {
  m->n = 0;
  memcpy(m->b, "GRIB", 4);
  m->n = 4;
  g2_put(m, 0, 2);
  g2_put(m, disc, 1);
  g2_put(m, 2, 1);
  g2_put(m, 0, 8);
  g2_open_section(m, 1);
  const struct g2e s1[] = {{2, centre}, {2, 0}, {1, mv}, {1, lv}, {1, 1},
                           {2, 2024},   {1, 3}, {1, 15}, {1, 12}, {1, 0},
                           {1, 0},      {1, 0}, {1, 1}};
  g2_put_all(m, s1, sizeof s1 / sizeof s1[0]);
  g2_close_section(m);
}

static void grid(struct g2 *m, int source, int gdtn, const struct g2e *t,
                 size_t n) {
  g2_open_section(m, 3);
  g2_put(m, source, 1);
  g2_put(m, 259920, 4);
  g2_put(m, 0, 1);
  g2_put(m, 0, 1);
  g2_put(m, gdtn, 2);
  g2_put_all(m, t, n);
  g2_close_section(m);
}

/* GDT 3.0 of grid #004: 720 x 361, 0.5 degree, from 90N 0E to 90S 0.5W. */
static const struct g2e gdt004[] = {
    {1, 6},          {1, 0},         {4, 0},      {1, 0},   {4, 0},
    {1, 0},          {4, 0},         {4, 720},    {4, 361}, {4, 0},
    {4, 0xFFFFFFFF}, {-4, 90000000}, {4, 0},      {1, 48},  {-4, -90000000},
    {4, 359500000},  {4, 500000},    {4, 500000}, {1, 0}};

static void grid004(struct g2 *m) {
  grid(m, 0, 0, gdt004, sizeof gdt004 / sizeof gdt004[0]);
}

/* Sections 0 to 3 of a GFS message (centre 7, master 2, local 1) on grid
 * #004. */
static void start004(struct g2 *m) {
  start(m, 0, 7, 2, 1);
  grid004(m);
}

/* Section 4 up to its template, PDT 4.pdtn; g2_close_section() ends it. */
static void open_product(struct g2 *m, int pdtn) {
  g2_open_section(m, 4);
  g2_put(m, 0, 2);
  g2_put(m, pdtn, 2);
}

static void product(struct g2 *m, int pdtn, const struct g2e *t, size_t n) {
  open_product(m, pdtn);
  g2_put_all(m, t, n);
  g2_close_section(m);
}

/* A PDT 4.0 field: category, number, process, generating process, unit
 * and forecast time, then type, scale and value of both surfaces. */
struct pdt0 {
  int cat, num, proc, gen, unit;
  int64_t ft;
  int l1, s1;
  int64_t v1;
  int l2, s2;
  int64_t v2;
};

#define MISSING4 (-2147483647LL)

/* TMP at 250 hPa, 24-hour GFS forecast */
static const struct pdt0 tmp250 = {0,   0, 2,     96,  1,    24,
                                   100, 0, 25000, 255, -127, MISSING4};

/* APCP at the surface, GFS forecast time ft hours: the PDT 4.0 fields
 * that PDT 4.5, 4.8 and 4.9-4.14 begin with. */
static struct pdt0 apcp(int64_t ft) {
  struct pdt0 p = {1, 8, 2, 96, 1, ft, 1, 0, 0, 255, -127, MISSING4};
  return p;
}

/* The PDT 4.0 fields, in an open section 4. */
static void put_pdt0(struct g2 *m, const struct pdt0 *p) {
  const struct g2e t[] = {{1, p->cat}, {1, p->num}, {1, p->proc}, {1, 0},
                          {1, p->gen}, {2, 0},      {1, 0},       {1, p->unit},
                          {4, p->ft},  {1, p->l1},  {-1, p->s1},  {-4, p->v1},
                          {1, p->l2},  {-1, p->s2}, {-4, p->v2}};
  g2_put_all(m, t, sizeof t / sizeof t[0]);
}

static void product0(struct g2 *m, const struct pdt0 *p) {
  open_product(m, 0);
  put_pdt0(m, p);
  g2_close_section(m);
}

/* The end of a message: sections 5 (DRT 5.0), 6, 7 and 8; its length. */
static size_t end_field(struct g2 *m) {
  g2_data(m, 0);
  return g2_finish(m);
}

/* One field of PDT 4.0 on grid #004, centre 7, master 2, local 1. */
static size_t one_field(struct g2 *m, int centre, int mv, int lv,
                        const struct pdt0 *p) {
  start(m, 0, centre, mv, lv);
  grid004(m);
  product0(m, p);
  return end_field(m);
}

static const char *const HEAD = "LTPA98 KWBC 151200";

/* The tag of a message built in m, with its log lines. */
static const char *tag_of(const struct g2 *m, struct lines *l) {
  static char tag[512];
  struct lines none;
  if (name_of(m->b, m->n, HEAD, tag, sizeof tag, l != NULL ? l : &none) != 0)
    return "-1";
  return tag;
}

static void test_builder(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  /* the same field as vector product 9 of grib2.products.tsv */
  one_field(&m, 7, 2, 1, &tmp250);
  assert_string_equal(tag_of(&m, &l),
                      "grib2/ncep/GFS/#004/202403151200F024/TMP/250 hPa PRES");
  assert_int_equal(l.n, 0);
}

static void assert_lines(const struct lines *l, int n, ...) {
  va_list ap;
  va_start(ap, n);
  assert_int_equal(l->n, n);
  for (int i = 0; i < n; i++)
    assert_string_equal(l->text[i], va_arg(ap, const char *));
  va_end(ap);
}

#define DECODE_FAILED                                                          \
  "ERROR\tCouldn't decode GRIB2 message. WMO header=\"LTPA98 KWBC 151200\""
#define PARAM_FAILED "ERROR\t[GB 1] Couldn't get parameter values"

/* (0, 0, 250) is in no NCEP table row: the field has no name. */
static const struct pdt0 unknown = {0,   250, 2,     96,  1,    24,
                                    100, 0,   25000, 255, -127, MISSING4};
/* RH at 500 hPa */
static const struct pdt0 rh500 = {1,   1, 2,     96,  1,    24,
                                  100, 0, 50000, 255, -127, MISSING4};

static size_t two_fields(struct g2 *m, const struct pdt0 *a,
                         const struct pdt0 *b) {
  start004(m);
  product0(m, a);
  g2_data(m, 0);
  product0(m, b);
  return end_field(m);
}

/* docs/noaaport.md, "Joining and failures". */
static void test_joining(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  two_fields(&m, &tmp250, &rh500);
  assert_string_equal(
      tag_of(&m, &l),
      "grib2/ncep/GFS/#004/202403151200F024/TMP;RH/500 hPa PRES");
  /* quirk: a first field without a name leaves a leading ';' */
  two_fields(&m, &unknown, &tmp250);
  assert_string_equal(tag_of(&m, &l),
                      "grib2/ncep/GFS/#004/202403151200F024/;TMP/250 hPa PRES");
  assert_lines(&l, 3,
               "WARN\tCouldn't get parameter info: iver=2, disc=0, cat=0, "
               "id=250, pdtn=0, center=ncep, lclver=1, file=g2varsncep1.tbl",
               PARAM_FAILED, DECODE_FAILED);
  /* the last field without a name: FHRS and LVL, the names before kept */
  two_fields(&m, &tmp250, &unknown);
  assert_string_equal(tag_of(&m, &l), "grib2/ncep/GFS/#004/FHRS/TMP/LVL");
  assert_int_equal(l.n, 3);
}

/* The order of sections g2clib accepts: a field needs its own section 5
 * before the next section 4, a grid and a bit-map section anywhere before
 * it is handed over. */
static void test_section_order(void **state) {
  (void)state;
  struct g2 m;
  /* 1 4 5 3 6 7: the grid after the field */
  start(&m, 0, 7, 2, 1);
  product0(&m, &tmp250);
  g2_open_section(&m, 5);
  g2_put(&m, 1, 4);
  g2_put(&m, 0, 2);
  g2_put(&m, 0, 10);
  g2_close_section(&m);
  grid004(&m);
  g2_open_section(&m, 6);
  g2_put(&m, 255, 1);
  g2_close_section(&m);
  g2_open_section(&m, 7);
  g2_close_section(&m);
  g2_finish(&m);
  assert_string_equal(tag_of(&m, NULL),
                      "grib2/ncep/GFS/#004/202403151200F024/TMP/250 hPa PRES");
  /* 1 3 4 4 5 6 7: the first field has no section 5 */
  start004(&m);
  product0(&m, &tmp250);
  product0(&m, &rh500);
  end_field(&m);
  assert_string_equal(tag_of(&m, NULL), "-1");
  /* 1 3 4 5 4 5 6 7 with the second section 5 of DRT 5.42: g2clib fetches
   * field 1 (its walk skips field 2's sections) and LDM names it, logging,
   * then cannot fetch field 2: nothing is named */
  struct lines l;
  start004(&m);
  product0(&m, &unknown);
  g2_open_section(&m, 5);
  g2_put(&m, 1, 4);
  g2_put(&m, 0, 2);
  g2_put(&m, 0, 10);
  g2_close_section(&m);
  product0(&m, &tmp250);
  g2_data(&m, 42);
  g2_finish(&m);
  assert_string_equal(tag_of(&m, &l), "-1");
  assert_lines(&l, 3,
               "WARN\tCouldn't get parameter info: iver=2, disc=0, cat=0, "
               "id=250, pdtn=0, center=ncep, lclver=1, file=g2varsncep1.tbl",
               PARAM_FAILED, DECODE_FAILED);
  /* the same with field 2 lacking its section 5 (1 3 4 5 4 4 5 6 7) */
  start004(&m);
  product0(&m, &unknown);
  g2_open_section(&m, 5);
  g2_put(&m, 1, 4);
  g2_put(&m, 0, 2);
  g2_put(&m, 0, 10);
  g2_close_section(&m);
  product0(&m, &tmp250);
  product0(&m, &tmp250);
  end_field(&m);
  assert_string_equal(tag_of(&m, &l), "-1");
  assert_int_equal(l.n, 3);
  /* no field at all */
  start004(&m);
  g2_finish(&m);
  assert_string_equal(tag_of(&m, NULL), "-1");
  /* no "7777" but sections that end exactly at the stated length */
  one_field(&m, 7, 2, 1, &tmp250);
  m.n -= 4;
  size_t n = m.n;
  m.n = 8;
  g2_put(&m, (int64_t)n, 8);
  m.n = n;
  assert_string_equal(tag_of(&m, NULL),
                      "grib2/ncep/GFS/#004/202403151200F024/TMP/250 hPa PRES");
}

/* Templates LDM's copy of g2clib does not know fail the decode. */
static void test_unknown_templates(void **state) {
  (void)state;
  struct g2 m;
  const struct g2e none[] = {{1, 0}};
  start(&m, 0, 7, 2, 1); /* GDT 3.63 */
  grid(&m, 0, 63, gdt004, sizeof gdt004 / sizeof gdt004[0]);
  product0(&m, &tmp250);
  end_field(&m);
  assert_string_equal(tag_of(&m, NULL), "-1");
  start004(&m); /* PDT 4.40 */
  product(&m, 40, none, 1);
  end_field(&m);
  assert_string_equal(tag_of(&m, NULL), "-1");
  start004(&m); /* DRT 5.42 (CCSDS) */
  product0(&m, &tmp250);
  g2_data(&m, 42);
  g2_finish(&m);
  assert_string_equal(tag_of(&m, NULL), "-1");
  start(&m, 0, 7, 2, 1); /* GDT 65535: no template at all, grid 255 */
  grid(&m, 0, 65535, none, 0);
  product0(&m, &tmp250);
  end_field(&m);
  assert_string_equal(tag_of(&m, NULL),
                      "grib2/ncep/GFS/#255/202403151200F024/TMP/250 hPa PRES");
}

/* PDT 4.254 has 3 values: no level (values 9 and 12) and no generating
 * process (value 4): the field fails, the model reads 255 (GRIB's
 * "missing") where LDM reads past the template (docs/noaaport.md, UB).
 * Its parameter (0, 0, 0, PDTN 254): bsearch over g2varsncep's 527 rows
 * probes rows 263, 131, 65, 32, 16, 8, 4, then 2 (0,0,0,2) and 3 (0,0,0,5),
 * the last with the same (d, c, n). */
static void test_short_template(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  const struct g2e text[] = {{1, 0}, {1, 0}, {4, 0}};
  start004(&m);
  product(&m, 254, text, 3);
  end_field(&m);
  assert_string_equal(tag_of(&m, &l), "grib2/ncep/255/#004/FHRS//LVL");
  assert_lines(&l, 3,
               "WARN\tUsing parameter with different PDTN: iver=2, disc=0, "
               "cat=0, id=0, desired pdtn=254, used pdtn=5, center=ncep, "
               "lclver=1, file=g2varsncep1.tbl",
               "ERROR\t[GB -27] Couldn't compute vertical co-ordinate values",
               DECODE_FAILED);
}

static const char *field_tag(const struct pdt0 *p, struct lines *l) {
  static struct g2 m;
  one_field(&m, 7, 2, 1, p);
  return tag_of(&m, l);
}

/* docs/noaaport.md, "Time", PDT 0-7 and 15: the forecast time in minutes
 * by the unit of PDT value 7, coded hours*100 + minutes. */
static void test_time_units(void **state) {
  (void)state;
  static const struct {
    int unit;
    int64_t ft;
    const char *time;
  } cases[] = {
      {0, 90, "202403151200F00130"},    /* minutes: 1 h 30 */
      {13, 5400, "202403151200F00130"}, /* seconds */
      {1, 24, "202403151200F024"},      {2, 1, "202403151200F024"},
      {10, 8, "202403151200F024"},   /* 3 hours */
      {11, 4, "202403151200F024"},   /* 6 hours */
      {12, 2, "202403151200F024"},   /* 12 hours */
      {5, 24, "202403151200F000"},   /* a unit not listed: 0 */
      {1, 0, "202403151200F000"},    /* the code 100000 is printed */
      {1, 1000, "202403151200G000"}, /* 1000 h: the code 200000 */
      {1, 1001, "202403151200G001"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct pdt0 p = tmp250;
    char want[128];
    p.unit = cases[i].unit;
    p.ft = cases[i].ft;
    snprintf(want, sizeof want, "grib2/ncep/GFS/#004/%s/TMP/250 hPa PRES",
             cases[i].time);
    assert_string_equal(field_tag(&p, NULL), want);
  }
}

/* PDT 4.8 at the surface: APCP, an interval ending at end[] after a
 * forecast time of ft hours, with n time ranges (the first in the base
 * template, the others an extension of 12 octets each). */
static size_t accumulation(struct g2 *m, const int end[5], int64_t ft, int n) {
  const struct pdt0 base = apcp(ft);
  const struct g2e head[] = {{2, end[0]}, {1, end[1]}, {1, end[2]}, {1, end[3]},
                             {1, end[4]}, {1, 0},      {1, n},      {4, 0}};
  const struct g2e range[] = {{1, 1}, {1, 2}, {1, 1}, {4, 6}, {1, 1}, {4, 0}};
  start004(m);
  open_product(m, 8);
  put_pdt0(m, &base);
  g2_put_all(m, head, sizeof head / sizeof head[0]);
  for (int i = 0; i < (n > 0 ? n : 1); i++)
    g2_put_all(m, range, sizeof range / sizeof range[0]);
  g2_close_section(m);
  return end_field(m);
}

/* docs/noaaport.md, "Time", PDT 8-14: f runs from the reference time to
 * the end of the interval, a from reference + forecast time to it. */
static void test_time_intervals(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  static const struct {
    int end[5];
    int64_t ft;
    const char *tag;
  } cases[] = {
      {{2024, 3, 15, 18, 0}, 0, "202403151200F006/APCP06/0 - NONE"},
      {{2024, 3, 16, 0, 0}, 6, "202403151200F012/APCP06/0 - NONE"},
      /* 30 minutes: F00030; a = 0 hours, appended only when positive */
      {{2024, 3, 15, 12, 30}, 0, "202403151200F00030/APCP/0 - NONE"},
      /* across the month: 16 days 12 hours */
      {{2024, 4, 1, 0, 0}, 0, "202403151200F396/APCP396/0 - NONE"},
      /* the forecast time added across a month: starts 04-04 12:00 */
      {{2024, 4, 10, 0, 0}, 480, "202403151200F612/APCP132/0 - NONE"},
      /* and across a year (2025-01-09 12:00); 7224 hours: the code
       * 822400, of type 8, "N" */
      {{2025, 1, 10, 12, 0}, 7200, "202403151200N224/APCP24/0 - NONE"},
      /* an end 12 hours before the reference: f = -720 minutes, the code
       * 100000 - 1200 = 98800 is positive, of type 0; a = -12 */
      {{2024, 3, 15, 0, 0}, 0, "202403151200A988/APCP/0 - NONE"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char want[128];
    accumulation(&m, cases[i].end, cases[i].ft, 1);
    snprintf(want, sizeof want, "grib2/ncep/GFS/#004/%s", cases[i].tag);
    assert_string_equal(tag_of(&m, &l), want);
    assert_int_equal(l.n, 0);
  }
  /* two time ranges: the template grows by 6 values (12 octets) */
  accumulation(&m, cases[1].end, 6, 2);
  assert_string_equal(tag_of(&m, NULL),
                      "grib2/ncep/GFS/#004/202403151200F012/APCP06/0 - NONE");
  /* 255 time ranges announced (value 21, at octet 32 of the template),
   * 2 present: the extension runs past the message */
  accumulation(&m, cases[1].end, 6, 2);
  assert_int_equal(m.b[16 + 21 + 72 + 9 + 32], 2);
  m.b[16 + 21 + 72 + 9 + 32] = 255;
  assert_string_equal(tag_of(&m, NULL), "-1");
}

/* An APCP field of PDT pdtn (4.9 to 4.14) on grid #004, its values after
 * the first 15 given in mid[], ending 2024-03-15 18:00 after a forecast
 * time of 0 hours, with one time range. */
static const char *statistical(int pdtn, const struct g2e *mid, size_t nmid,
                               struct lines *l) {
  static struct g2 m;
  const struct pdt0 head = apcp(0);
  const struct g2e end[] = {{2, 2024}, {1, 3}, {1, 15}, {1, 18}, {1, 0},
                            {1, 0},    {1, 1}, {4, 0},  {1, 1},  {1, 2},
                            {1, 1},    {4, 6}, {1, 1},  {4, 0}};
  start004(&m);
  open_product(&m, pdtn);
  put_pdt0(&m, &head);
  g2_put_all(&m, mid, nmid);
  g2_put_all(&m, end, sizeof end / sizeof end[0]);
  if (pdtn == 13 || pdtn == 14) /* the members of the cluster */
    g2_put_all(&m, (const struct g2e[]){{1, 4}, {1, 7}}, 2);
  g2_close_section(&m);
  end_field(&m);
  return tag_of(&m, l);
}

/* PDT 4.9-4.14: where each keeps the end of its interval (docs/noaaport.md,
 * "Time": values 22, 16, 18, 17, 31, 30), and 4.9's probability. */
static void test_statistical_templates(void **state) {
  (void)state;
  struct lines l;
  const char *p = "grib2/ncep/GFS/#004/202403151200F006/";
  char want[128];
  /* 4.9: probability of an upper limit of 0.254 after the time range:
   * "APCP06" then "0000PA", 12 characters */
  const struct g2e prob[] = {{1, 0},    {1, 1},  {1, 1},   {-1, 3},
                             {-4, 254}, {-1, 3}, {-4, 254}};
  snprintf(want, sizeof want, "%sAPCP060000PA/0 - NONE", p);
  assert_string_equal(statistical(9, prob, 7, &l), want);
  assert_int_equal(l.n, 0);
  snprintf(want, sizeof want, "%sAPCP06/0 - NONE", p);
  const struct g2e pctl[] = {{1, 50}};
  assert_string_equal(statistical(10, pctl, 1, NULL), want);
  const struct g2e ens[] = {{1, 3}, {1, 1}, {1, 21}};
  assert_string_equal(statistical(11, ens, 3, NULL), want);
  const struct g2e derived[] = {{1, 0}, {1, 21}};
  assert_string_equal(statistical(12, derived, 2, NULL), want);
  /* clusters: 2 members (value 26, or 25) follow the interval; g2varsncep
   * has no row of PDTN 13 or 14: bsearch's last probe of (0, 1, 8) is
   * PDTN 12 */
  const struct g2e rect[] = {
      {1, 2},         {1, 21},        {1, 1},         {1, 1},
      {1, 1},         {1, 3},         {1, 0},         {-4, 50000000},
      {-4, 20000000}, {4, 300000000}, {4, 250000000}, {1, 2},
      {-1, 0},        {4, 0},         {-1, 0},        {4, 0}};
  assert_string_equal(statistical(13, rect, 16, &l), want);
  assert_lines(&l, 1,
               "WARN\tUsing parameter with different PDTN: iver=2, disc=0, "
               "cat=1, id=8, desired pdtn=13, used pdtn=12, center=ncep, "
               "lclver=1, file=g2varsncep1.tbl");
  const struct g2e circle[] = {
      {1, 2}, {1, 21}, {1, 1},         {1, 1},         {1, 1},
      {1, 3}, {1, 0},  {-4, 40000000}, {4, 260000000}, {4, 500000},
      {1, 2}, {-1, 0}, {4, 0},         {-1, 0},        {4, 0}};
  assert_string_equal(statistical(14, circle, 15, NULL), want);
}

/* PDT 4.5: APCP's PDTN 5 row is missing from g2varsncep: the PDTN 8 row
 * is used (WARN), then the probability suffix. */
static const char *probability(int type, int s1, int64_t v1, int s2, int64_t v2,
                               struct lines *l) {
  static struct g2 m;
  const struct pdt0 base = apcp(24);
  const struct g2e t[] = {{1, 0},   {1, 1},   {1, type}, {-1, s1},
                          {-4, v1}, {-1, s2}, {-4, v2}};
  start004(&m);
  open_product(&m, 5);
  put_pdt0(&m, &base);
  g2_put_all(&m, t, sizeof t / sizeof t[0]);
  g2_close_section(&m);
  end_field(&m);
  return tag_of(&m, l);
}

/* docs/noaaport.md, "Parameter name", steps 3 to 6. */
static void test_param_suffixes(void **state) {
  (void)state;
  struct lines l;
  const char *p = "grib2/ncep/GFS/#004/202403151200F024/";
  char want[128];
  snprintf(want, sizeof want, "%sAPCP0000PA/0 - NONE", p);
  assert_string_equal(probability(1, 3, 0, 3, 254, &l), want);
  assert_lines(&l, 1,
               "WARN\tUsing parameter with different PDTN: iver=2, disc=0, "
               "cat=1, id=8, desired pdtn=5, used pdtn=8, center=ncep, "
               "lclver=1, file=g2varsncep1.tbl");
  snprintf(want, sizeof want, "%sAPCP-005PB/0 - NONE", p); /* %04d of -5 */
  assert_string_equal(probability(0, 0, -5, 0, 0, NULL), want);
  snprintf(want, sizeof want, "%sAPCP00010002/0 - NONE", p); /* type 2 */
  assert_string_equal(probability(2, 1, 10, 2, 200, NULL), want);
  /* 25 x 10^1 and 123456: "0250123456", cut at 12 characters */
  snprintf(want, sizeof want, "%sAPCP02501234/0 - NONE", p);
  assert_string_equal(probability(2, -1, 25, 0, 123456, NULL), want);
  snprintf(want, sizeof want, "%sAPCP/0 - NONE", p); /* other types */
  assert_string_equal(probability(3, 0, 1, 0, 2, NULL), want);
  /* process 7: AERR; a "--" with no accumulation: XX */
  struct pdt0 q = tmp250;
  q.proc = 7;
  assert_string_equal(field_tag(&q, NULL),
                      "grib2/ncep/GFS/#004/202403151200F024/TMPAERR/"
                      "250 hPa PRES");
  q = tmp250;
  q.cat = 1;
  q.num = 196; /* "CPR--" */
  assert_string_equal(field_tag(&q, NULL),
                      "grib2/ncep/GFS/#004/202403151200F024/CPRXX/"
                      "250 hPa PRES");
}

/* NSSL's 12-character name: nothing appended past 12, and the local
 * table of centre 161 (master version 255). */
static void test_param_tables(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  struct pdt0 q = tmp250;
  q.cat = 2;
  q.num = 2;
  q.proc = 6; /* FERR, but the name already has 12 characters */
  q.l1 = 1;
  start(&m, 209, 161, 255, 1);
  grid004(&m);
  product0(&m, &q);
  end_field(&m);
  assert_string_equal(tag_of(&m, &l),
                      "grib2/161/161/#004/202403151200F024/LgtDens15min/"
                      "0 - NONE");
  assert_int_equal(l.n, 0);
  /* local version 0: WMO tables (TMPK) */
  one_field(&m, 7, 2, 0, &tmp250);
  assert_string_equal(tag_of(&m, NULL),
                      "grib2/ncep/GFS/#004/202403151200F024/TMPK/250 hPa PRES");
  /* master versions 4 and 5 have no installed table, nor does 0xFF's
   * local version 2 of NCEP */
  one_field(&m, 7, 4, 0, &tmp250);
  assert_string_equal(tag_of(&m, &l), "grib2/ncep/GFS/#004/FHRS//LVL");
  assert_lines(&l, 4,
               "ERROR\tCouldn't read GRIB2 parameter file \"g2varswmo4.tbl\"",
               "ERROR\tCouldn't get parameter table: iver=4, disc=0, cat=0, "
               "id=0, pdtn=0, center=ncep, lclver=0",
               PARAM_FAILED, DECODE_FAILED);
  one_field(&m, 7, 2, 2, &tmp250);
  assert_string_equal(tag_of(&m, NULL), "grib2/ncep/GFS/#004/FHRS//LVL");
}

/* docs/noaaport.md, "Level". */
static void test_levels(void **state) {
  (void)state;
  static const struct {
    int l1, s1;
    int64_t v1;
    int l2, s2;
    int64_t v2;
    const char *level;
  } cases[] = {
      {100, 0, 25050, 255, -127, MISSING4, "250 hPa PRES"}, /* rint: even */
      {100, 0, 25150, 255, -127, MISSING4, "252 hPa PRES"},
      {100, 0, 85000, 100, 0, 50000, "850-500 hPa PRES"},
      /* quirk: the second value missing sets the first to -1 */
      {100, 0, 50000, 100, -127, MISSING4, "0 hPa PRES"},
      {100, 0, MISSING4, 255, -127, MISSING4, "0 hPa PRES"},
      {103, -127, 2, 255, -127, MISSING4, "2 m HGHT"}, /* factor 1 */
      {103, 1, 25, 255, -127, MISSING4, "2 m HGHT"},   /* 2.5 */
      {103, 1, 35, 255, -127, MISSING4, "4 m HGHT"},   /* 3.5 */
      {103, -2, 1, 255, -127, MISSING4, "100 m HGHT"},
      {1, 0, 7, 255, -127, MISSING4, "0 - NONE"}, /* the surface */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct pdt0 q = tmp250;
    char want[128];
    q.l1 = cases[i].l1;
    q.s1 = cases[i].s1;
    q.v1 = cases[i].v1;
    q.l2 = cases[i].l2;
    q.s2 = cases[i].s2;
    q.v2 = cases[i].v2;
    snprintf(want, sizeof want, "grib2/ncep/GFS/#004/202403151200F024/TMP/%s",
             cases[i].level);
    assert_string_equal(field_tag(&q, NULL), want);
  }
}

static void test_level_failures(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  struct pdt0 q = tmp250;
  q.l1 = 150; /* in no table */
  assert_string_equal(field_tag(&q, &l), "grib2/ncep/GFS/#004/FHRS//LVL");
  assert_lines(&l, 2,
               "ERROR\t[GB -1] Couldn't compute vertical co-ordinate values",
               DECODE_FAILED);
  /* NSSL, local version 0, a local level type: g2vcrdnssl0.tbl is not
   * installed (the parameter comes from the WMO table) */
  q = tmp250;
  q.l1 = 200;
  one_field(&m, 161, 2, 0, &q);
  assert_string_equal(tag_of(&m, &l), "grib2/161/161/#004/FHRS//LVL");
  assert_lines(&l, 3, "ERROR\t[GB -29] g2vcrdnssl0.tbl",
               "ERROR\t[GB -29] Couldn't compute vertical co-ordinate values",
               DECODE_FAILED);
}

/* The grid number of one TMP field on a grid definition. */
static const char *grid_tag(int source, int gdtn, const struct g2e *t,
                            size_t n) {
  static struct g2 m;
  static char tag[512];
  start(&m, 0, 7, 2, 1);
  grid(&m, source, gdtn, t, n);
  product0(&m, &tmp250);
  end_field(&m);
  snprintf(tag, sizeof tag, "%s", tag_of(&m, NULL));
  char *hash = strchr(tag, '#');
  if (hash != NULL)
    hash[4] = '\0';
  return hash != NULL ? hash : tag;
}

#define EARTH                                                                  \
  {1, 6}, {1, 0}, {4, 0}, {1, 0}, {4, 0}, {1, 0}, {                            \
    4, 0                                                                       \
  }

/* GDT 3.0: Ni, Nj, basic angle, subdivisions, corners. */
static const char *ced(int64_t ni, int64_t nj, int64_t angle, int64_t sub,
                       int64_t la1, int64_t lo1, int64_t la2, int64_t lo2) {
  const struct g2e t[] = {EARTH,     {4, ni},  {4, nj}, {4, angle}, {4, sub},
                          {-4, la1}, {4, lo1}, {1, 48}, {-4, la2},  {4, lo2},
                          {4, 0},    {4, 0},   {1, 0}};
  return grid_tag(0, 0, t, sizeof t / sizeof t[0]);
}

/* GDT 3.20 or 3.30: Nx, Ny, La1, Lo1, LoV, the projection centre flag. */
static const char *projected(int gdtn, int64_t nx, int64_t ny, int64_t la1,
                             int64_t lo1, int64_t lov, int flag) {
  const struct g2e t[] = {
      EARTH,          {4, nx},        {4, ny},         {-4, la1},
      {4, lo1},       {1, 8},         {-4, 60000000},  {4, lov},
      {4, 5079000},   {4, 5079000},   {1, flag},       {1, 64},
      {-4, 25000000}, {-4, 25000000}, {-4, -90000000}, {4, 0}};
  return grid_tag(0, gdtn, t, gdtn == 20 ? 18 : 22);
}

/* docs/noaaport.md, "Grid matching", against the rows of grdnav.tsv. */
static void test_grids(void **state) {
  (void)state;
  /* CED: GFSHD #4, either latitude order */
  assert_string_equal(ced(720, 361, 0, 0, 90000000, 0, -90000000, 359500000),
                      "#004");
  assert_string_equal(ced(720, 361, 0, 0, -90000000, 0, 90000000, 359500000),
                      "#004");
  assert_string_equal(ced(720, 360, 0, 0, 90000000, 0, -90000000, 359500000),
                      "#255");
  /* s = 10^6 * 2 / 2000000 = 1: whole degrees; GFS #3 (-90 0 90 -1) */
  assert_string_equal(ced(360, 181, 2, 2000000, -90, 0, 90, 359), "#003");
  /* within 0.001 of the row, in single precision: 90001001 is the float
   * 90001000, and 90.001f - 90.0f = 0.00099945 */
  assert_string_equal(ced(720, 361, 0, 0, 90000999, 0, -90000000, 359500000),
                      "#004");
  assert_string_equal(ced(720, 361, 0, 0, 90001001, 0, -90000000, 359500000),
                      "#004");
  assert_string_equal(ced(720, 361, 0, 0, 90001100, 0, -90000000, 359500000),
                      "#255");
  /* EC02 #702 and ECW1 #11 are the same grid: the last line of the file
   * (EC02) is searched first */
  assert_string_equal(ced(37, 37, 0, 0, 0, 270000000, 90000000, 0), "#702");
  /* STR: A240 #240 (LoV 255 = -105 after norm, A1 = +90) */
  assert_string_equal(
      projected(20, 1121, 881, 23098000, 240964000, 255000000, 0), "#240");
  /* bit 64 of the projection centre flag makes A1 -90; bit 128 does not */
  assert_string_equal(
      projected(20, 1121, 881, 23098000, 240964000, 255000000, 64), "#255");
  assert_string_equal(
      projected(20, 1121, 881, 23098000, 240964000, 255000000, 128), "#240");
  /* A2 must equal norm(LoV) exactly, as a float: 255.000001 is the float
   * 255, 255.0001 is not */
  assert_string_equal(
      projected(20, 1121, 881, 23098000, 240964000, 255000001, 0), "#240");
  assert_string_equal(
      projected(20, 1121, 881, 23098000, 240964000, 255000100, 0), "#255");
  /* LFMG #506 over LFM #6, the same grid */
  assert_string_equal(projected(20, 53, 45, 7647000, 226557000, 255000000, 0),
                      "#506");
  /* LCC: A236 #236, only Nx, Ny, La1 and Lo1 compared */
  assert_string_equal(projected(30, 151, 113, 16281000, 233862000, 1, 64),
                      "#236");
  /* MER: A254 #254 */
  const struct g2e mer[] = {EARTH,          {4, 369}, {4, 300}, {-4, -35000000},
                            {4, 110000000}, {1, 48},  {-4, 0},  {-4, 60789000},
                            {4, 250871000}, {1, 64},  {4, 0},   {4, 0},
                            {4, 0}};
  assert_string_equal(grid_tag(0, 10, mer, sizeof mer / sizeof mer[0]), "#254");
  /* the source of grid definition, when not 0, is the number */
  assert_string_equal(
      grid_tag(218, 0, gdt004, sizeof gdt004 / sizeof gdt004[0]), "#218");
  /* other projections: 255 */
  const struct g2e gauss[] = {
      EARTH,          {4, 720}, {4, 361}, {4, 0},          {4, 0},
      {-4, 90000000}, {4, 0},   {1, 48},  {-4, -90000000}, {4, 359500000},
      {4, 0},         {4, 180}, {1, 0}};
  assert_string_equal(grid_tag(0, 40, gauss, sizeof gauss / sizeof gauss[0]),
                      "#255");
}

/* The WMO-heading fallback for grid 0 (docs/noaaport.md, "Grid"): never
 * reached with LDM's grdnav.tbl, which has no grid 0, so its table is
 * checked here (grib2-wmo-grid-fallback.tsv, by T1 and A1). */
static void test_wmo_grid(void **state) {
  (void)state;
  assert_int_equal(np__g2_wmo_grid("HTAA50 KWBC"), 21);
  assert_int_equal(np__g2_wmo_grid("LTPA98 KWBC"), 237);
  assert_int_equal(np__g2_wmo_grid("EZZZ00 KWBC"), 255);
  assert_int_equal(np__g2_wmo_grid("HHQA50 KWBC"), -1);
  assert_int_equal(np__g2_wmo_grid("XXXX00 KWBC"), -1);
  /* subdivisions 0 with a basic angle of 2: the scale is +inf, every
   * corner 0, no row */
  assert_string_equal(ced(720, 361, 2, 0, 90000000, 0, -90000000, 359500000),
                      "#255");
}

/* docs/noaaport.md, "Centre and model". */
static void test_centres(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  struct pdt0 q = tmp250;
  one_field(&m, 8, 2, 1, &q);
  assert_string_equal(tag_of(&m, NULL), "grib2/nwstg/NWS_96/#004/"
                                        "202403151200F024/TMP/250 hPa PRES");
  q.gen = 97; /* no alias */
  one_field(&m, 7, 2, 1, &q);
  assert_string_equal(tag_of(&m, NULL), "grib2/ncep/97/#004/"
                                        "202403151200F024/TMP/250 hPa PRES");
  q.gen = 105;
  one_field(&m, 59, 2, 0, &q);
  assert_string_equal(tag_of(&m, NULL), "grib2/fsl/RUC2/#004/"
                                        "202403151200F024/TMPK/250 hPa PRES");
  /* both decimal: both show the centre (the model is resolved first) */
  q.gen = 33;
  one_field(&m, 150, 2, 0, &q);
  assert_string_equal(tag_of(&m, &l), "grib2/150/150/#004/"
                                      "202403151200F024/TMPK/250 hPa PRES");
  assert_lines(&l, 1,
               "ERROR\t[GB -14] Couldn't find originating center 150 in "
               "table \"\"");
  /* the names take the centre modulo 256, GEMPAK the whole of it */
  q.gen = 96;
  one_field(&m, 7 + 256, 2, 0, &q);
  assert_string_equal(tag_of(&m, &l), "grib2/ncep/GFS/#004/"
                                      "202403151200F024/TMPK/250 hPa PRES");
  assert_lines(&l, 1,
               "ERROR\t[GB -14] Couldn't find originating center 263 in "
               "table \"\"");
}

/* The tag is cut to the caller's size. */
static void test_tag_size(void **state) {
  (void)state;
  struct g2 m;
  struct lines l;
  char tag[12];
  one_field(&m, 7, 2, 1, &tmp250);
  assert_int_equal(name_of(m.b, m.n, HEAD, tag, sizeof tag, &l), 0);
  assert_string_equal(tag, "grib2/ncep/");
}

/* ---- ecCodes' samples ------------------------------------------------------
 */

#define SAMPLES "/usr/share/eccodes/samples"

/* Name a copy of file[0..n) in a buffer of exactly n bytes (so that the
 * sanitizers see any read past it). */
static int name_exact(const uint8_t *p, size_t n, char *tag, size_t size,
                      struct lines *l) {
  uint8_t *copy = malloc(n > 0 ? n : 1);
  assert_non_null(copy);
  if (n > 0)
    memcpy(copy, p, n);
  int r = name_of(copy, n, HEAD, tag, size, l);
  free(copy);
  return r;
}

static uint8_t *sample(const char *file, size_t *n) {
  uint8_t *p = read_file(SAMPLES, file, n);
  assert_non_null(p);
  return p;
}

/* Every GRIB2 sample decodes or not, without a sanitizer report. */
static void samples_all(void) {
  DIR *d = opendir(SAMPLES);
  assert_non_null(d);
  int grib2 = 0, named = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    size_t n;
    if (strstr(de->d_name, ".tmpl") == NULL)
      continue;
    uint8_t *p = read_file(SAMPLES, de->d_name, &n);
    if (p != NULL && n >= 16 && memcmp(p, "GRIB", 4) == 0 && p[7] == 2) {
      char tag[512];
      struct lines l;
      int r = name_exact(p, n, tag, sizeof tag, &l);
      grib2++;
      if (r == 0) {
        named++;
        assert_memory_equal(tag, "grib2/", 6);
      } else {
        assert_int_equal(r, -1);
        assert_string_equal(tag, "untouched");
      }
    }
    free(p);
  }
  closedir(d);
  assert_true(grib2 >= 10);
  assert_true(named >= 8);
}

/* A few samples, named by hand (docs/noaaport.md, "GRIB edition 2"). */
static void samples_named(void) {
  size_t n;
  char tag[512];
  struct lines l;
  /* GRIB2.tmpl: centre 98 "ecmwf"; PDT 4.0 generating process 128, of
   * centre 98: "ECMWF_128"; a 16 x 31 latitude/longitude grid, in no
   * grdnav row: #255; master table version 4: g2varswmo4.tbl is not
   * installed, so FHRS and LVL. */
  uint8_t *p = sample("GRIB2.tmpl", &n);
  assert_int_equal(name_exact(p, n, tag, sizeof tag, &l), 0);
  assert_string_equal(tag, "grib2/ecmwf/ECMWF_128/#255/FHRS//LVL");
  assert_lines(&l, 4,
               "ERROR\tCouldn't read GRIB2 parameter file \"g2varswmo4.tbl\"",
               "ERROR\tCouldn't get parameter table: iver=4, disc=0, cat=0, "
               "id=0, pdtn=0, center=ecmwf, lclver=0",
               PARAM_FAILED, DECODE_FAILED);
  free(p);
  /* regular_ll_pl_grib2.tmpl with master version 2 (octet 10 of section
   * 1): local version 0, so the WMO tables: (0, 0, 0, 0) is TMPK; level
   * type 100, value 85000 Pa at scale -2 is "850 hPa PRES"; reference
   * 2007-03-23 12:00, forecast 0 hours: code 100000, "F000". */
  p = sample("regular_ll_pl_grib2.tmpl", &n);
  p[16 + 9] = 2;
  assert_int_equal(name_exact(p, n, tag, sizeof tag, &l), 0);
  assert_string_equal(
      tag, "grib2/ecmwf/ECMWF_128/#255/200703231200F000/TMPK/850 hPa PRES");
  assert_int_equal(l.n, 0);
  free(p);
  /* polar_stereographic_sfc_grib2.tmpl (a local section 2, GDT 3.20 of
   * 16 x 31 points, in no grdnav row), master version 2: the surface,
   * "0 - NONE". */
  p = sample("polar_stereographic_sfc_grib2.tmpl", &n);
  p[16 + 9] = 2;
  assert_int_equal(name_exact(p, n, tag, sizeof tag, &l), 0);
  assert_string_equal(
      tag, "grib2/ecmwf/ECMWF_128/#255/200703231200F000/TMPK/0 - NONE");
  free(p);
  /* reduced_gg_pl_32_grib2.tmpl: GDT 3.40 with its list of points per row
   * (2 octets each); generating process 137; master version 5. */
  p = sample("reduced_gg_pl_32_grib2.tmpl", &n);
  assert_int_equal(name_exact(p, n, tag, sizeof tag, &l), 0);
  assert_string_equal(tag, "grib2/ecmwf/ECMWF_137/#255/FHRS//LVL");
  free(p);
  /* ccsds_grib2.tmpl: DRT 5.42, lambert_bf_grib2.tmpl: GDT 3.63, both
   * unknown to LDM's copy of g2clib */
  p = sample("ccsds_grib2.tmpl", &n);
  assert_int_equal(name_exact(p, n, tag, sizeof tag, &l), -1);
  free(p);
  p = sample("lambert_bf_grib2.tmpl", &n);
  assert_int_equal(name_exact(p, n, tag, sizeof tag, &l), -1);
  free(p);
}

/* ecCodes' samples (Debian's libeccodes-data), if installed. */
static void test_samples(void **state) {
  (void)state;
  size_t n;
  uint8_t *p = read_file(SAMPLES, "GRIB2.tmpl", &n);
  if (p == NULL)
    tu_skip("no ecCodes samples in %s (libeccodes-data)", SAMPLES);
  free(p);
  samples_all();
  samples_named();
}

/* ---- truncated and lying messages -----------------------------------------
 */

/* Every prefix of a valid message names nothing; a prefix whose stated
 * length is rewritten to its own may name or not, reading nothing past
 * it; a stated length past the bytes present names nothing. */
static void truncations(const uint8_t *p, size_t n) {
  char tag[512];
  struct lines l;
  uint8_t *copy = malloc(n + 1);
  assert_non_null(copy);
  for (size_t k = 0; k < n; k++) {
    assert_int_equal(name_exact(p, k, tag, sizeof tag, &l), -1);
    assert_string_equal(tag, "untouched");
    if (k < 16 || n > 4096)
      continue;
    memcpy(copy, p, k);
    copy[12] = (uint8_t)(k >> 24);
    copy[13] = (uint8_t)(k >> 16);
    copy[14] = (uint8_t)(k >> 8);
    copy[15] = (uint8_t)k;
    if (name_exact(copy, k, tag, sizeof tag, &l) == 0)
      assert_memory_equal(tag, "grib2/", 6);
  }
  memcpy(copy, p, n);
  copy[n] = 0;
  copy[15]++; /* L = n + 1 */
  assert_int_equal(name_exact(copy, n, tag, sizeof tag, &l), -1);
  assert_int_equal(name_exact(copy, n + 1, tag, sizeof tag, &l), -1);
  free(copy);
}

static void test_truncated(void **state) {
  (void)state;
  size_t ns;
  uint8_t *sbn = read_file(vectors(), "grib2.sbn", &ns);
  assert_non_null(sbn);
  struct msg m[64];
  int nm = grib2_messages(sbn, ns, m, 64);
  assert_int_equal(nm, 13);
  for (int i = 0; i < nm; i++)
    truncations(m[i].p, m[i].n);
  free(sbn);
  struct g2 g;
  two_fields(&g, &tmp250, &rh500);
  truncations(g.b, g.n);
  size_t n;
  uint8_t *p = read_file(SAMPLES, "reduced_gg_pl_32_grib2.tmpl", &n);
  if (p != NULL)
    truncations(p, n);
  free(p);
}

/* What the trigger of docs/noaaport.md guarantees, checked again. */
static void test_not_grib2(void **state) {
  (void)state;
  struct g2 m;
  char tag[64];
  struct lines l;
  one_field(&m, 7, 2, 1, &tmp250);
  m.b[7] = 1; /* edition 1 */
  assert_int_equal(name_exact(m.b, m.n, tag, sizeof tag, &l), -1);
  m.b[7] = 2;
  m.b[0] = 'g';
  assert_int_equal(name_exact(m.b, m.n, tag, sizeof tag, &l), -1);
  m.b[0] = 'G';
  m.b[16 + 4] = 2; /* no section 1 */
  assert_int_equal(name_exact(m.b, m.n, tag, sizeof tag, &l), -1);
  assert_string_equal(tag, "untouched");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors_grib2),
      cmocka_unit_test(test_vectors_nwstg_basic),
      cmocka_unit_test(test_builder),
      cmocka_unit_test(test_joining),
      cmocka_unit_test(test_section_order),
      cmocka_unit_test(test_unknown_templates),
      cmocka_unit_test(test_short_template),
      cmocka_unit_test(test_time_units),
      cmocka_unit_test(test_time_intervals),
      cmocka_unit_test(test_statistical_templates),
      cmocka_unit_test(test_param_suffixes),
      cmocka_unit_test(test_param_tables),
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_level_failures),
      cmocka_unit_test(test_grids),
      cmocka_unit_test(test_wmo_grid),
      cmocka_unit_test(test_centres),
      cmocka_unit_test(test_tag_size),
      cmocka_unit_test(test_samples),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_not_grib2),
  };
  if (tu_select(argc, argv) != 0)
    return 1;
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
