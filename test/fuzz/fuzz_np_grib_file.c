/*
 * fuzz_np_grib_file.c - libFuzzer target for gribinsert's reading of a
 * file (pqutils/ingest/grib_file.h): the search for GRIB messages in any
 * bytes (np_grib_next()) and the identifier of each message found
 * (np_grib_file_ident(), which runs the ingester's GRIB namers on it).
 * The input is a whole file, copied into a buffer of exactly its size, so
 * that ASan sees any read past it.
 *
 * Properties checked: no crash, leak or sanitizer report; every search
 * moves forward; a message found lies within the file, starts "GRIB" and
 * ends "7777"; every identifier is at most 255 bytes and starts with the
 * file's name.
 *
 * Seeds: with FUZZ_SEEDS_DIR set, the target writes a few files there
 * (two GRIB1 messages with junk around them, a truncated one) and exits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/grib_file.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A GRIB1 message of 40 bytes: a 28-byte PDS (ncep GFS 500 mb TMP). */
static const uint8_t grib1[40] = {
    'G', 'R', 'I', 'B', 0,  0,   40, 1, 0,   0,   28,  2,  7,  96,
    3,   128, 11,  100, 1,  244, 24, 3, 15,  12,  0,   1,  24, 0,
    0,   0,   0,   0,   21, 0,   0,  0, '7', '7', '7', '7'};

static void write_seed(const char *dir, const char *name, const uint8_t *p,
                       size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "fuzz_np_grib_file: cannot write %s\n", path);
    exit(1);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir != NULL) {
    uint8_t b[200];
    size_t n = 0;
    memcpy(b, "head GRI\n", 9);
    n = 9;
    memcpy(b + n, grib1, sizeof grib1);
    n += sizeof grib1;
    memcpy(b + n, "GRIB\0\0\0\3", 8);
    n += 8;
    memcpy(b + n, grib1, sizeof grib1);
    n += sizeof grib1;
    write_seed(dir, "two.grb", b, n);
    write_seed(dir, "truncated.grb", grib1, 30);
    exit(0);
  }
  return 0;
}

static void sink(void *arg, int level, const char *msg) {
  (void)arg;
  (void)level;
  if (strlen(msg) > 4096)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct np_log lg = {sink, NULL, 0};
  struct np_namer nm = {&lg, 0};
  uint8_t *copy = malloc(size > 0 ? size : 1);
  if (copy == NULL)
    return 0;
  if (size > 0)
    memcpy(copy, data, size);
  size_t from = 0;
  uint32_t seqno = 0;
  struct np_grib_msg m;
  int rc;
  while ((rc = np_grib_next(copy, size, from, &m)) != NP_GRIB_END) {
    if (m.resume <= from || m.off < from || m.off + 4 > size)
      abort(); /* no progress, or a "GRIB" that is not there */
    if (memcmp(copy + m.off, "GRIB", 4) != 0)
      abort();
    if (rc == NP_GRIB_MSG) {
      if (m.len > size - m.off ||
          memcmp(copy + m.off + m.len - 4, "7777", 4) != 0)
        abort();
      uint8_t *msg = malloc((size_t)m.len);
      if (msg == NULL)
        break;
      memcpy(msg, copy + m.off, (size_t)m.len);
      char ident[256];
      np_grib_file_ident(msg, (size_t)m.len, "dir/file.grb", seqno++, ident,
                         &nm);
      free(msg);
      if (strlen(ident) > 255 || strncmp(ident, "dir/file.grb !", 14) != 0)
        abort();
    }
    from = m.resume;
  }
  free(copy);
  return 0;
}
