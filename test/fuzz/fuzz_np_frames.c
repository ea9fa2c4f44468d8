/*
 * fuzz_np_frames.c - libFuzzer target for the NOAAPORT ingester's input
 * side, a trust boundary: whoever can put bytes on the multicast group (or
 * damage them on the way) writes them.  An input is a frame stream behind
 * two bytes: the first selects -c (bit 0) and -f (bit 1), the second the
 * size of the pieces the stream is then fed in (1 to 256 bytes).  The
 * stream goes through the frame reader (pqutils/ingest/sbn_frame.h) and the
 * product builder with the namers behind it (product_build.h), every log
 * line formatted, once whole and once in pieces.
 *
 * Properties checked: no crash, leak or sanitizer report; every frame
 * returned lies within the bytes given and the reader never moves back;
 * every product has bytes and an identifier within LDM's 1023 bytes; and
 * the pieces give exactly the products and the log lines of the whole
 * (a frame split across reads is decided, and logged, once).
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes
 * LDM's vector streams (the .sbn files of test/ingest/vectors/) there,
 * behind a few option bytes, and exits.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pqutils/ingest/product_build.h"
#include "pqutils/ingest/sbn_frame.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A digest of what a run made: FNV-1a over the log lines and products. */
struct digest {
  uint64_t h;
  unsigned products, lines;
};

static void mix(struct digest *d, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++)
    d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static void on_log(void *arg, int level, const char *msg) {
  struct digest *d = arg;
  mix(d, &level, sizeof level);
  mix(d, msg, strlen(msg));
  d->lines++;
}

static void on_product(void *arg, const struct np_product *p) {
  struct digest *d = arg;
  if (p->size == 0 || p->data == NULL || strlen(p->ident) == 0 ||
      strlen(p->ident) > 1023)
    abort();
  mix(d, p->ident, strlen(p->ident));
  mix(d, &p->seqno, sizeof p->seqno);
  mix(d, &p->feedtype, sizeof p->feedtype);
  mix(d, p->sig, sizeof p->sig);
  mix(d, p->data, p->size);
  d->products++;
}

/* The stream fed in pieces of step bytes. */
static struct digest run(const uint8_t *s, size_t n, size_t step,
                         const struct np_build_opts *o) {
  struct digest d = {0xcbf29ce484222325ull, 0, 0};
  struct np_log lg = {on_log, &d, NP_DEBUG};
  struct np_namer nm = {&lg, 0};
  struct np_sbn r;
  np_sbn_init(&r, &lg);
  struct np_build *b = np_build_new(o, &nm, on_product, &d);
  if (b == NULL)
    abort();
  size_t pos = 0, have = step < n ? step : n;
  struct np_frame f;
  for (;;) {
    bool eof = have == n;
    size_t before = pos;
    int rc = np_sbn_next(&r, s, have, &pos, &f, eof);
    if (pos < before || pos > have)
      abort();
    if (rc == NP_SBN_FRAME) {
      if (f.raw < s || f.raw + f.raw_len > s + have ||
          (f.data != NULL && f.data + f.data_len > s + have))
        abort();
      np_build_frame(b, &f);
      continue;
    }
    if (eof)
      break;
    have = have + step < n ? have + step : n;
  }
  np_build_end(b);
  np_build_free(b);
  mix(&d, &r.counts, sizeof r.counts);
  return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  struct np_build_opts o = {.inflate = data[0] & 1, .fill = (data[0] & 2) != 0};
  size_t step = (size_t)data[1] + 1;
  struct digest whole = run(data + 2, size - 2, size, &o);
  struct digest pieces = run(data + 2, size - 2, step, &o);
  if (whole.h != pieces.h || whole.products != pieces.products ||
      whole.lines != pieces.lines)
    abort();
  return 0;
}

/* One seed: the options, the piece size, then the vector's stream. */
static void write_seed(const char *dir, const char *name, uint8_t opts,
                       uint8_t step) {
  char in[4096], out[4096];
  snprintf(in, sizeof in, "%s/%s.sbn", NP_VECTORS_DIR, name);
  snprintf(out, sizeof out, "%s/%s-%u-%u", dir, name, opts, step);
  FILE *fp = fopen(in, "rb");
  uint8_t *buf = malloc(65536);
  if (fp == NULL || buf == NULL) {
    fprintf(stderr, "fuzz_np_frames: cannot read %s\n", in);
    exit(1);
  }
  buf[0] = opts;
  buf[1] = step;
  size_t n = 2 + fread(buf + 2, 1, 65536 - 2, fp);
  fclose(fp);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && fuzz_write_all(fd, buf, n) == 0;
  if (fd >= 0 && close(fd) != 0)
    ok = false;
  free(buf);
  if (!ok) {
    fprintf(stderr, "fuzz_np_frames: cannot write the seed %s\n", out);
    exit(1);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir == NULL)
    return 0; /* a fuzzing run */
  static const char *const cases[] = {
      "nwstg-basic", "nwstg-errors", "grib1", "grib2", "gini", "gini-fallback"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    write_seed(dir, cases[i], (uint8_t)(i % 4), (uint8_t)(7 * i + 6));
  exit(0);
}
