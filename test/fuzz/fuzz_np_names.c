/*
 * fuzz_np_names.c - libFuzzer target for the NOAAPORT namers
 * (pqutils/ingest/nwstg_name.h, grib1_name.h, gini_name.h), the code LDM's
 * ingester crashed in at every NWS office in 2019 on one corrupt GRIB
 * message (docs/noaaport.md, section "Hostile input").  Input: byte 0 the
 * PSH product type, byte 1 the category, the rest a first block.  Each
 * input is named as an NWSTG-path product three ways (the block as it
 * comes; behind a CCB and a WMO heading, so that the PIL, redbook and tag
 * code run; behind a CCB, a heading and "GRIB", so that the GRIB1 namer
 * reads it), with the GRIB2 namer called at "completion" when the name
 * asks for it, as a GRIB1 message alone, and as a GOES-path block in the
 * clear and compressed.
 *
 * Properties checked: no crash, leak or sanitizer report; every name is
 * NUL-terminated within LDM's limits (NAME + META at most 1023 bytes, META
 * at most 511, a satellite name at most 254); NAME is the identifier's
 * start.
 *
 * Seeds: with FUZZ_SEEDS_DIR set, the target writes small valid inputs
 * there (a text product, a redbook graphic, a NEXRAD product, a GRIB1
 * message, GINI blocks in the clear and compressed) and exits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pqutils/ingest/gini_name.h"
#include "pqutils/ingest/grib1_name.h"
#include "pqutils/ingest/nwstg_name.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BLOCK 6000

static const uint8_t ccb[24] = {0x40, 12, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 7, 9};

static void write_seed(const char *dir, const char *name, const void *p,
                       size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(p, 1, n, f) != n)
    abort();
  fclose(f);
}

/* A seed: type, category, then a CCB (mode 1, or 2 for NEXRAD) and text. */
static void text_seed(const char *dir, const char *name, uint8_t category,
                      uint8_t mode, const void *text, size_t n) {
  uint8_t s[1024] = {4, category};
  memcpy(s + 2, ccb, sizeof ccb);
  s[2 + 10] = mode;
  memcpy(s + 2 + sizeof ccb, text, n);
  write_seed(dir, name, s, 2 + sizeof ccb + n);
}

static void gini_seeds(const char *dir) {
  uint8_t clear[21 + 512] = "TIGE04 KNES 151200\r\r\n", s[1024] = {1, 3};
  uint8_t *pdb = clear + 21;
  pdb[1] = 19;
  pdb[2] = 1;
  pdb[3] = 4;
  pdb[8] = 124;
  pdb[9] = 3;
  pdb[10] = 15;
  pdb[11] = 12;
  pdb[17] = 8;
  pdb[19] = 4;
  pdb[41] = 4;
  memcpy(s + 2, clear, sizeof clear);
  write_seed(dir, "gini.bin", s, 2 + sizeof clear);
  uLongf zn = sizeof s - 2 - 21;
  if (compress(s + 2 + 21, &zn, clear, sizeof clear) != Z_OK)
    abort();
  write_seed(dir, "satz.bin", s, 2 + 21 + zn);
}

static void write_seeds(const char *dir) {
  static const char text[] = "NOUS41 KWBC 151200\r\r\nPNSWSH\r\r\nbody\r\r\n";
  static const char nids[] = "SDUS51 KBOX 151204\r\r\nN0QBOX\r\r\n\x00\xff";
  static const char red[] = "PGUS99 KWBC 151307\r\r\n"
                            "\x40\x10\x01\x01\0\0\0\0\0\0\0PILNAME01\x07\xe8"
                            "\x03\x0f\x0d\x00"
                            "ABCDEF\x40\x0c\x02\x02\0\0\0\0\0\0\0CPIL";
  static const uint8_t grib[] = {
      4,  4,  'G', 'R', 'I', 'B', 0,  0,    52, 1, 0,  0,  28, 2,
      7,  96, 3,   128, 11,  100, 1,  0xF4, 24, 3, 15, 12, 0,  1,
      24, 0,  0,   0,   0,   0,   21, 0,    0,  0, 0,  0,  12, 0};
  text_seed(dir, "text.bin", 1, 1, text, sizeof text - 1);
  text_seed(dir, "nids.bin", 1, 2, nids, sizeof nids - 1);
  text_seed(dir, "redbook.bin", 2, 1, red, sizeof red - 1);
  write_seed(dir, "grib1.bin", grib, sizeof grib);
  gini_seeds(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir != NULL) {
    write_seeds(dir);
    exit(0);
  }
  return 0;
}

static void check_nwstg(const struct np_nwstg_name *out) {
  size_t len = strnlen(out->ident, sizeof out->ident);
  if (len > NP_IDENT_MAX || out->name_len > len ||
      len - out->name_len > NP_META_MAX)
    abort();
}

/* Name block[0, n) as an NWSTG product, and again at completion. */
static void name_nwstg(const uint8_t *block, size_t n, int type, int cat,
                       struct np_namer *nm) {
  static uint8_t prod[11 + MAX_BLOCK + 64];
  struct np_ccb c;
  struct np_nwstg_name out;
  np_ccb_parse(block, n, &c, nm->log);
  if (c.valid && c.len > n)
    abort();
  np_name_nwstg(block, n, &c, type, cat, &out, nm);
  check_nwstg(&out);
  if (!out.grib2 || !c.valid)
    return;
  if (out.grib2_at > n - c.len)
    abort();
  memcpy(prod, "\001\r\r\n000 \r\r\n", 11);
  memcpy(prod + 11, block + c.len, n - c.len);
  np_name_grib2_final(&out, prod, 11 + n - c.len, 11 + out.grib2_at, nm);
  check_nwstg(&out);
}

/* The data behind a CCB and a heading (and prefix): block's length. */
static size_t behind_heading(const uint8_t *d, size_t n, const char *prefix,
                             uint8_t *block) {
  static const char heading[] = "HTQA50 KWBC 151200\r\r\n";
  size_t h = strlen(prefix), k = sizeof ccb;
  memcpy(block, ccb, k);
  memcpy(block + k, heading, sizeof heading - 1);
  k += sizeof heading - 1;
  memcpy(block + k, prefix, h);
  memcpy(block + k + h, d, n);
  return k + h + n;
}

static void name_gini(const uint8_t *d, size_t n, int type, bool z,
                      struct np_namer *nm) {
  char name[300];
  struct np_gini_pdb pdb;
  if (np_gini_name(d, n, type, z, name, sizeof name, &pdb, nm) == 0 &&
      (strnlen(name, sizeof name) > 254 || pdb.nx < 1 || pdb.ny < 1))
    abort();
}

static void log_sink(void *arg, int level, const char *msg) {
  (void)arg;
  (void)level;
  if (strlen(msg) >= 4096)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uint8_t block[MAX_BLOCK + 128];
  struct np_log lg = {log_sink, NULL, NP_DEBUG};
  struct np_namer nm = {&lg, 0};
  if (size < 2 || size - 2 > MAX_BLOCK)
    return 0;
  int type = data[0], cat = data[1];
  const uint8_t *d = data + 2;
  size_t n = size - 2;
  name_nwstg(d, n, type, cat, &nm);
  name_nwstg(block, behind_heading(d, n, "", block), type, cat, &nm);
  name_nwstg(block, behind_heading(d, n, "GRIB", block), type, cat, &nm);
  char model[64], tag[256];
  np_grib1_name(d, n, model, sizeof model, tag, sizeof tag, &nm);
  if (strnlen(tag, sizeof tag) >= sizeof tag)
    abort();
  name_gini(d, n, type, false, &nm);
  name_gini(d, n, type, true, &nm);
  return 0;
}
