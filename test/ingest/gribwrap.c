/*
 * gribwrap.c - a test tool (not installed): each GRIB message of the
 * files given, as one NOAAPORT product of an SBN stream on standard
 * output, under a WMO heading, as NOAAPORT sends GRIB (CCB 2/1, category
 * 4: libsbngen's sg_nwstg_product()).  So the ingester can name the very
 * bytes gribinsert inserts, and test/ingest/gribinsert.sh compares the
 * two identifiers.
 *
 *   gribwrap heading file ... > stream
 *   gribwrap -r file ... > messages
 *
 * With -r the messages themselves are written, end to end, without what
 * lay between them.
 * The messages are found here by their own rule, independent of
 * gribinsert's: "GRIB", the length it states (edition 0 and 1: octets
 * 5-7; 2: octets 9-16), anything between messages skipped.  A message
 * whose length runs past its file ends the file, with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/ingest/sbngen.h"

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  struct sg_buf b = {0};
  uint8_t chunk[65536];
  size_t k;

  if (f == NULL)
    return NULL;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
    sg_buf_put(&b, chunk, k);
  fclose(f);
  *n = b.n;
  return b.p != NULL ? b.p : calloc(1, 1);
}

int main(int argc, char **argv) {
  struct sg_stream s;
  struct sg_buf out = {0};
  uint32_t seqno = 1;

  if (argc < 3) {
    fprintf(stderr, "usage: gribwrap heading|-r file ...\n");
    return 1;
  }
  bool raw = strcmp(argv[1], "-r") == 0;
  sg_stream_init(&s, 1);
  for (int i = 2; i < argc; i++) {
    size_t n = 0;
    uint8_t *p = slurp(argv[i], &n);

    if (p == NULL) {
      perror(argv[i]);
      return 1;
    }
    for (size_t off = 0; off + 16 <= n;) {
      const uint8_t *g = memmem(p + off, n - off, "GRIB", 4);
      uint64_t len = 0;

      if (g == NULL || (size_t)(g - p) + 16 > n)
        break;
      off = (size_t)(g - p);
      if (g[7] == 2)
        for (int k = 8; k < 16; k++)
          len = len << 8 | g[k];
      else
        len = (uint64_t)g[4] << 16 | (uint64_t)g[5] << 8 | g[6];
      if (len < 12 || len > n - off) {
        fprintf(stderr, "gribwrap: %s: a message past the end at %zu\n",
                argv[i], off);
        break;
      }
      if (raw) {
        sg_buf_put(&out, g, (size_t)len);
        off += (size_t)len;
        continue;
      }
      struct sg_nwstg in = {.kind = g[7] == 2 ? SG_GRIB2 : SG_GRIB1,
                            .category = 4,
                            .ccb = {.mode = 2, .submode = 1},
                            .heading = argv[1],
                            .body = g,
                            .body_len = (size_t)len};
      struct sg_product prod;
      sg_nwstg_product(&prod, &in, seqno++);
      sg_put_product(&s, &prod);
      sg_product_free(&prod);
      off += (size_t)len;
    }
    free(p);
  }
  if (!raw)
    sg_stream_bytes(&s, &out);
  if (out.n > 0 && fwrite(out.p, 1, out.n, stdout) != out.n) {
    perror("gribwrap: stdout");
    return 1;
  }
  sg_buf_free(&out);
  sg_stream_free(&s);
  return fflush(stdout) == 0 ? 0 : 1;
}
