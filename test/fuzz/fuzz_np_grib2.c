/*
 * fuzz_np_grib2.c - libFuzzer target for the GRIB edition 2 namer
 * (np_grib2_name() in pqutils/ingest/grib2_name.c), a trust boundary: the
 * bytes after a NOAAPORT product's WMO heading are whatever was uplinked,
 * and a corrupt GRIB message once crashed LDM at every NWS office
 * (docs/noaaport.md, "Failure history").  Each input is copied into a
 * buffer of exactly its size (so that ASan sees any read past it), made to
 * start "GRIB" with edition 2 as the namer's trigger guarantees, and, when
 * its octet 8 (the unused high half of the length) is even, given its own
 * size as the stated length, so that the fuzzer reaches the sections.
 *
 * Properties checked: no crash, leak or sanitizer report; a message named
 * gets a tag "grib2/..." cut to the buffer, one not named leaves the tag
 * untouched; every log line is a string.
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes a
 * few small valid messages there (with test/ingest/np_grib2_msg.h) and exits
 * (the test fuzz_np_grib2_seeds does it before the brief run).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/grib2_name.h"
#include "test/fuzz/fuzz_util.h"
#include "test/ingest/np_grib2_msg.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Section 0 and 1: centre 7, master version 2, local version 1. */
static void head(struct g2 *m) {
  m->n = 0;
  memcpy(m->b, "GRIB\0\0\0\2", 8);
  m->n = 8;
  g2_put(m, 0, 8);
  g2_open_section(m, 1);
  g2_put(m, 7, 2);
  g2_put(m, 0, 2);
  g2_put(m, 0x0201, 2);
  g2_put(m, 1, 1);
  g2_put(m, 2024, 2);
  g2_put(m, 0x030F0C000000, 6);
  g2_put(m, 1, 1);
  g2_close_section(m);
}

/* GDT 3.0 of grid #004, or 3.20 of grid #240. */
static void grid(struct g2 *m, int gdtn) {
  g2_open_section(m, 3);
  g2_put(m, 0, 1);
  g2_put(m, 259920, 4);
  g2_put(m, 0, 2);
  g2_put(m, gdtn, 2);
  g2_put(m, 6, 1);
  g2_put(m, 0, 15);
  if (gdtn == 0) {
    g2_put(m, 720, 4);
    g2_put(m, 361, 4);
    g2_put(m, 0, 4);
    g2_put(m, 0xFFFFFFFF, 4);
    g2_put(m, 90000000, 4);
    g2_put(m, 0, 4);
    g2_put(m, 48, 1);
    g2_put(m, 0x80000000 | 90000000, 4);
    g2_put(m, 359500000, 4);
    g2_put(m, 500000, 4);
    g2_put(m, 500000, 4);
    g2_put(m, 0, 1);
  } else {
    g2_put(m, 1121, 4);
    g2_put(m, 881, 4);
    g2_put(m, 23098000, 4);
    g2_put(m, 240964000, 4);
    g2_put(m, 8, 1);
    g2_put(m, 60000000, 4);
    g2_put(m, 255000000, 4);
    g2_put(m, 5079000, 4);
    g2_put(m, 5079000, 4);
    g2_put(m, 0, 1);
    g2_put(m, 64, 1);
  }
  g2_close_section(m);
}

/* PDT 4.0 (TMP at 250 hPa) or 4.8 (APCP over 6 hours); then sections 5
 * (DRT 5.0), 6 and 7. */
static void field(struct g2 *m, int pdtn) {
  g2_open_section(m, 4);
  g2_put(m, 0, 2);
  g2_put(m, pdtn, 2);
  g2_put(m, pdtn == 0 ? 0x0000020060 : 0x0108020060, 5);
  g2_put(m, 0, 3);
  g2_put(m, 1, 1);
  g2_put(m, pdtn == 0 ? 24 : 0, 4);
  g2_put(m, pdtn == 0 ? 100 : 1, 1);
  g2_put(m, 0, 1);
  g2_put(m, pdtn == 0 ? 25000 : 0, 4);
  g2_put(m, 0xFFFFFFFFFFFF, 6);
  if (pdtn == 8) {
    g2_put(m, 2024, 2);
    g2_put(m, 0x030F120000, 5);
    g2_put(m, 1, 1);
    g2_put(m, 0, 4);
    g2_put(m, 0x010201, 3);
    g2_put(m, 6, 4);
    g2_put(m, 1, 1);
    g2_put(m, 0, 4);
  }
  g2_close_section(m);
  g2_data(m, 0);
}

static void write_seed(const char *dir, const char *name, struct g2 *m) {
  char path[4096];
  g2_finish(m);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(m->b, 1, m->n, f) != m->n || fclose(f) != 0) {
    fprintf(stderr, "fuzz_np_grib2: cannot write %s\n", path);
    exit(1);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir != NULL) {
    static struct g2 m;
    head(&m);
    grid(&m, 0);
    field(&m, 0);
    write_seed(dir, "tmp250.grib2", &m);
    head(&m);
    grid(&m, 0);
    field(&m, 8);
    field(&m, 0);
    write_seed(dir, "apcp-tmp.grib2", &m);
    head(&m);
    grid(&m, 20);
    field(&m, 0);
    write_seed(dir, "polar.grib2", &m);
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
  char tag[512];
  uint8_t *copy = malloc(size > 0 ? size : 1);
  if (copy == NULL)
    return 0;
  if (size > 0)
    memcpy(copy, data, size);
  if (size >= 16) {
    memcpy(copy, "GRIB", 4);
    copy[7] = 2;
    if (copy[8] % 2 == 0)
      for (int i = 0; i < 4; i++)
        copy[12 + i] = (uint8_t)(size >> (8 * (3 - i)));
  }
  size_t cut = size > 0 ? data[size - 1] % 64 + 1 : 1;
  memcpy(tag, "untouched", 10);
  if (np_grib2_name(copy, size, "LTPA98 KWBC 151200", tag,
                    cut < sizeof tag ? cut : sizeof tag, &nm) == 0) {
    if (strnlen(tag, sizeof tag) >= cut ||
        strncmp(tag, "grib2/", cut - 1 < 6 ? cut - 1 : 6) != 0)
      abort();
  } else if (strcmp(tag, "untouched") != 0) {
    abort();
  }
  free(copy);
  return 0;
}
