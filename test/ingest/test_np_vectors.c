/*
 * test_np_vectors.c - the ingester against LDM 6.15 itself: each frame
 * stream of test/ingest/vectors/ goes through what noaaportIngester does
 * (frames, products, inserts into a real queue) and every product in the
 * queue must be the one LDM's queue held for the same stream: identifier,
 * feedtype, sequence number, size and MD5 signature, in order
 * (<case>.products.tsv); and the NOTE, WARN and ERROR lines must be LDM's,
 * in order (<case>.log).  The vectors were made by running LDM's
 * noaaportIngester on our own synthetic frames (docs/noaaport.md).
 *
 * The one exception is named where it is made: the PNG bytes of an
 * uncompressed GOES product depend on the zlib that compressed them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pq/pq.h"
#include "pqutils/ingest/feedtype_rules.h"
#include "pqutils/ingest/ingest_insert.h"
#include "pqutils/ingest/product_build.h"
#include "pqutils/ingest/sbn_frame.h"
#include "test/lib/testutil.h"

#define MAXLINES 256

struct run {
  char lines[MAXLINES][1100]; /* "LEVEL\tmessage", as <case>.log */
  int nlines;
  struct np_inserter ins;
};

static void collect(void *arg, int level, const char *msg) {
  struct run *r = arg;
  static const char *const names[] = {"DEBUG", "INFO", "NOTE", "WARN", "ERROR"};
  if (level < NP_NOTE || level > NP_ERROR || r->nlines >= MAXLINES)
    return;
  snprintf(r->lines[r->nlines++], sizeof r->lines[0], "%s\t%s", names[level],
           msg);
}

static void on_product(void *arg, const struct np_product *p) {
  struct run *r = arg;
  (void)np_insert(&r->ins, p);
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  uint8_t *buf = malloc(1 << 20);
  assert_non_null(buf);
  *n = fread(buf, 1, 1 << 20, f);
  fclose(f);
  return buf;
}

/* Feed the stream in pieces of `step` bytes, as reads would come. */
static void ingest(struct run *r, const uint8_t *s, size_t n, size_t step) {
  struct np_log lg = {collect, r, NP_NOTE};
  struct np_namer nm = {.log = &lg};
  struct np_sbn sbn;
  np_sbn_init(&sbn, &lg);
  r->ins.log = &lg;
  struct np_build_opts bo = {0};
  struct np_build *b = np_build_new(&bo, &nm, on_product, r);
  assert_non_null(b);
  size_t have = 0, pos = 0;
  struct np_frame f;
  while (have < n) {
    have = have + step < n ? have + step : n;
    while (np_sbn_next(&sbn, s, have, &pos, &f, have == n) == NP_SBN_FRAME)
      np_build_frame(b, &f);
  }
  np_build_end(b);
  np_build_free(b);
}

struct expect {
  char line[1200];
};

static int read_lines(const char *path, struct expect *e, int max) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int n = 0;
  char line[1200];
  assert_non_null(fgets(line, sizeof line, f)); /* the header */
  while (n < max && fgets(line, sizeof line, f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(e[n++].line, sizeof e[0].line, "%s", line);
  }
  fclose(f);
  return n;
}

struct check {
  struct expect *want;
  int n, i;
  const char *skip_md5_of; /* the PNG product, see the file's top */
};

static int check_product(const pq_prod_info *info, const void *data,
                         const pq_place *place, void *arg) {
  (void)data;
  (void)place;
  struct check *c = arg;
  assert_true(c->i < c->n);
  char sig[33];
  for (int k = 0; k < 16; k++)
    snprintf(sig + 2 * k, 3, "%02x", info->signature[k]);
  char got[1200];
  snprintf(got, sizeof got, "%s\t%s\t%u\t%llu\t%s", info->ident,
           np_feedtype_name(info->feedtype), info->seqno,
           (unsigned long long)info->size, sig);
  const char *want = c->want[c->i++].line;
  if (c->skip_md5_of != NULL && strcmp(info->ident, c->skip_md5_of) == 0) {
    /* identifier, feedtype and sequence number only */
    const char *tab = strrchr(want, '\t');
    tab = tab != NULL ? memrchr(want, '\t', (size_t)(tab - want)) : NULL;
    assert_non_null(tab);
    size_t len = (size_t)(tab - want);
    if (strncmp(got, want, len) != 0)
      fail_msg("product %d:\n got  %s\n want %s", c->i, got, want);
    return 0;
  }
  if (strcmp(got, want) != 0)
    fail_msg("product %d:\n got  %s\n want %s", c->i, got, want);
  return 0;
}

static void run_case(const char *name, size_t step, const char *skip_md5_of) {
  const char *dir = getenv("NP_VECTORS");
  assert_non_null(dir);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.sbn", dir, name);
  size_t n;
  uint8_t *s = slurp(path, &n);

  char qpath[512];
  tu_path(qpath, sizeof qpath, name);
  pq_create_opts co = {.pc_data_size = 8u << 20, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  assert_int_equal(pq_create(qpath, &co, &pq, NULL), PQ_OK);
  struct run *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->ins.pq = pq;
  r->ins.origin = "test.example.org";
  ingest(r, s, n, step);

  static struct expect want[MAXLINES];
  snprintf(path, sizeof path, "%s/%s.products.tsv", dir, name);
  int nwant = read_lines(path, want, MAXLINES);
  struct check c = {want, nwant, 0, skip_md5_of};
  pq_cursor_oldest(pq);
  while (pq_next(pq, PQ_FORWARD, NULL, check_product, &c) == PQ_OK)
    ;
  assert_int_equal(c.i, nwant);

  snprintf(path, sizeof path, "%s/%s.log", dir, name);
  int nlog = read_lines(path, want, MAXLINES);
  for (int i = 0; i < nlog && i < r->nlines; i++)
    if (strcmp(r->lines[i], want[i].line) != 0)
      fail_msg("%s log line %d:\n got  %s\n want %s", name, i + 1, r->lines[i],
               want[i].line);
  assert_int_equal(r->nlines, nlog);
  pq_close(pq);
  unlink(qpath);
  free(r);
  free(s);
}

/* Whole, and a byte at a time (frames split across every read). */
static void test_nwstg_basic(void **state) {
  (void)state;
  run_case("nwstg-basic", 1 << 20, NULL);
  run_case("nwstg-basic", 1, NULL);
}
static void test_nwstg_errors(void **state) {
  (void)state;
  run_case("nwstg-errors", 1 << 20, NULL);
  run_case("nwstg-errors", 7, NULL);
}
static void test_grib1(void **state) {
  (void)state;
  run_case("grib1", 1 << 20, NULL);
}
static void test_grib2(void **state) {
  (void)state;
  run_case("grib2", 1 << 20, NULL);
}
static void test_gini(void **state) {
  (void)state;
  /* The PNG's deflate stream is zlib's: LDM's build and ours may differ. */
  run_case("gini", 1 << 20,
           "sat/ch1/GOES-16/IR/20240315 1200/EAST-CONUS/4km/ TIGE04 KNES "
           "151200");
}
static void test_gini_fallback(void **state) {
  (void)state;
  run_case("gini-fallback", 1 << 20, NULL);
}

int main(void) {
  setenv("TZ", "UTC", 1); /* as LDM was run for the vectors */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nwstg_basic), cmocka_unit_test(test_nwstg_errors),
      cmocka_unit_test(test_grib1),       cmocka_unit_test(test_grib2),
      cmocka_unit_test(test_gini),        cmocka_unit_test(test_gini_fallback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
