/*
 * test_np_vectors.c - LDM 6.15's own output for the synthetic frame
 * streams of test/ingest/vectors/ (docs/noaaport.md): each <case>.sbn read
 * by the frame reader and built by the product builder, with the namers
 * behind them, must give the products of <case>.products.tsv (sequence
 * number, size and MD5 signature; identifier and feedtype) and the lines
 * of <case>.log, LDM's "inserted" lines made here from each product as
 * noaaportIngester makes them.  The stream is read whole, then again in
 * pieces of 7 bytes, which must change nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "np_test_frames.h"
#include "pqutils/ingest/feedtype_rules.h"
#include "pqutils/ingest/product_build.h"

/* What a run made: products as TSV rows like the vectors', and the log. */
struct made {
  struct tbuf bytes; /* "seqno\tsize\tmd5\n" rows */
  struct tbuf names; /* "ident\tfeedtype\n" rows */
  struct tlog log;
};

static void made_product(void *arg, const struct np_product *p) {
  struct made *m = arg;
  char row[2048];
  const char *ft = np_feedtype_name(p->feedtype);
  char md5[33];
  for (int i = 0; i < 16; i++)
    snprintf(md5 + 2 * i, 3, "%02x", p->sig[i]);
  snprintf(row, sizeof row, "%u\t%zu\t%s\n", p->seqno, p->size, md5);
  tb_str(&m->bytes, row);
  snprintf(row, sizeof row, "%s\t%s\n", p->ident, ft);
  tb_str(&m->names, row);
  snprintf(row, sizeof row,
           "%s inserted %s [cat %d type %d ccb %d/%d seq %u size %zu]",
           p->ident, ft, p->category, p->type, p->ccb_mode, p->ccb_submode,
           p->seqno, p->size);
  tlog_add(&m->log, NP_NOTE, row);
}

/* Read the case's stream in pieces of step bytes (0: whole). */
static void make(const char *name, size_t step, struct made *m) {
  memset(m, 0, sizeof *m);
  char path[1024];
  const char *dir = getenv("NP_VECTORS");
  assert_non_null(dir);
  snprintf(path, sizeof path, "%s/%s.sbn", dir, name);
  struct tbuf s = {0};
  assert_true(tb_file(&s, path));
  struct np_log lg = {tlog_add, &m->log, NP_NOTE};
  struct np_namer nm = {&lg, 0};
  struct np_sbn r;
  np_sbn_init(&r, &lg);
  struct np_build_opts o = {0};
  struct np_build *b = np_build_new(&o, &nm, made_product, m);
  assert_non_null(b);
  size_t pos = 0, have = step ? 0 : s.len;
  struct np_frame f;
  for (;;) {
    bool eof = have == s.len;
    if (np_sbn_next(&r, s.p, have, &pos, &f, eof) == NP_SBN_FRAME) {
      np_build_frame(b, &f);
      continue;
    }
    if (eof)
      break;
    have = have + step < s.len ? have + step : s.len;
  }
  np_build_end(b);
  np_build_free(b);
  tb_free(&s);
  tb_byte(&m->bytes, 0);
  tb_byte(&m->names, 0);
}

static void made_free(struct made *m) {
  tb_free(&m->bytes);
  tb_free(&m->names);
  tb_free(&m->log.text);
}

/* The vector file's rows after its header line, keeping the columns
 * [first, first + n) of each. */
static void expected(const char *name, const char *ext, int first, int n,
                     struct tbuf *out) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.%s", getenv("NP_VECTORS"), name, ext);
  struct tbuf f = {0};
  assert_true(tb_file(&f, path));
  tb_byte(&f, 0);
  char *line = strchr((char *)f.p, '\n');
  assert_non_null(line);
  for (line++; *line != '\0';) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    int col = 0, kept = 0;
    for (size_t i = 0, start = 0; i <= len; i++) {
      if (i < len && line[i] != '\t')
        continue;
      if (col >= first && col < first + n) {
        if (kept++)
          tb_byte(out, '\t');
        tb_add(out, line + start, i - start);
      }
      col++;
      start = i + 1;
    }
    tb_byte(out, '\n');
    line += end ? len + 1 : len;
  }
  tb_byte(out, 0);
  tb_free(&f);
}

static const char *const cases[] = {
    "nwstg-basic", "nwstg-errors", "grib1", "grib2", "gini", "gini-fallback"};

/* Whether got is want; if not, both are printed.  Either way both are
 * freed, so that a failure leaks nothing. */
static bool same(const char *what, const char *name, const char *got,
                 struct tbuf *want) {
  bool eq = strcmp(got, (const char *)want->p) == 0;
  if (!eq)
    print_message("%s of %s: got\n%s\nwant\n%s\n", what, name, got,
                  (const char *)want->p);
  tb_free(want);
  return eq;
}

/* Sequence number, size and signature: the frame reader and the builder. */
static void test_bytes(void **state) {
  const char *name = *state;
  struct made m, pieces;
  make(name, 0, &m);
  make(name, 7, &pieces);
  struct tbuf want = {0}, again = {0};
  expected(name, "products.tsv", 2, 3, &want);
  expected(name, "products.tsv", 2, 3, &again);
  bool ok = same("products", name, (const char *)m.bytes.p, &want);
  ok &= same("products in pieces", name, (const char *)pieces.bytes.p, &again);
  ok &= strcmp(tlog_str(&pieces.log), tlog_str(&m.log)) == 0;
  made_free(&m);
  made_free(&pieces);
  assert_true(ok);
}

/* Identifier and feedtype: the namers too. */
static void test_names(void **state) {
  const char *name = *state;
  struct made m;
  make(name, 0, &m);
  struct tbuf want = {0};
  expected(name, "products.tsv", 0, 2, &want);
  bool ok = same("identifiers", name, (const char *)m.names.p, &want);
  made_free(&m);
  assert_true(ok);
}

/* Every NOTE, WARN and ERROR line, in LDM's order. */
static void test_log(void **state) {
  const char *name = *state;
  struct made m;
  make(name, 0, &m);
  struct tbuf want = {0};
  expected(name, "log", 0, 2, &want);
  bool ok = same("log", name, tlog_str(&m.log), &want);
  made_free(&m);
  assert_true(ok);
}

#define CASE(i)                                                                \
  cmocka_unit_test_prestate(test_bytes, (void *)cases[i]),                     \
      cmocka_unit_test_prestate(test_names, (void *)cases[i]),                 \
      cmocka_unit_test_prestate(test_log, (void *)cases[i])

int main(void) {
  const struct CMUnitTest tests[] = {CASE(0), CASE(1), CASE(2),
                                     CASE(3), CASE(4), CASE(5)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
