/*
 * fuzz_surf.c - libFuzzer target for pqsurf's bulletin parser
 * (pqutils/surf/surf_split.c, surf_heading.c, surf_scan.c), a trust
 * boundary: bulletins come from any upstream.  The input is a bulletin's
 * bytes; its first 4 bytes, when there are 4, are also the sequence number.
 *
 * Properties checked: no crash, leak or sanitizer report (reads stay in the
 * bulletin); surf_split() returns -1 or a count no larger than the
 * observations it made; every observation's body is 4 to SURF_OBS_MAX
 * bytes and ends "=\r\r\n" (then zeros, after a NUL in the report), its
 * identifier is a NUL-terminated string with a space, and its signature is the
 * MD5 of its body.
 *
 * Seeds: with FUZZ_SEEDS_DIR set, the target writes one bulletin of each
 * kind there and exits (the test fuzz_surf_seeds).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ldmd/site/log.h"
#include "pqutils/surf/surf_split.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SOH "\001\r\r\n123 \r\r\n"
static const char *const seeds[] = {
    SOH "SAUS70 KWBC 071200 RRA\r\r\nMETAR\r\r\nKDEN 071153Z 10SM=\r\r\n"
        "KXYZ NIL=\r\r\nKABC AUTO CLR=\r\r\n\003",
    SOH "SPUS70 KWBC 071215\r\r\nSPECI\r\r\nKDEN 071210Z 2SM BR=\r\r\n\003",
    SOH "SMUS01 KWBC 071215\r\r\nAAXX 07121\r\r\n72201 32966 71504=\r\r\n"
        "72202 32970\r\r\n 80000=\r\r\n\003",
    SOH "SMUS02 KWBC 071800\r\r\n72201 32966 71504=\r\r\n\003",
    SOH "SMVD01 KWBC 071200\r\r\nBBXX\r\r\nWDB123 07121 99123=\r\r\n\003",
    SOH "SAUS80 KWBC 071200\r\r\nDEN SA 1150 CLR=\r\r\nKGLD 071153Z 10SM="
        "\r\r\n\003",
    SOH "SAUS80 KWBC 071200\r\r\nMTRDEN\r\r\nMETAR KDEN 071153Z 10SM=\r\r\n"
        "\003",
};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ldm_log_init("fuzz_surf");
  ldm_log_set_level(LDM_LOG_FATAL); /* the parser's errors are expected */
  const char *dir = fuzz_seeds_dir();
  if (dir == NULL)
    return 0;
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed%zu", dir, i);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
      exit(1);
    fwrite(seeds[i], 1, strlen(seeds[i]), f);
    fclose(f);
  }
  exit(0);
}

static int check_obs(const pq_prod_info *info, const void *body, void *arg) {
  int *made = arg;
  uint8_t sig[PQ_SIGLEN];
  const unsigned char *b = body;

  size_t end = (size_t)info->size;

  /* "=\r\r\n" ends the body, or, when the report had a NUL (which ends
   * what LDM copies), ends its text and zeros fill the rest */
  if (end < 4 || end > SURF_OBS_MAX)
    abort();
  while (end > 4 && b[end - 1] == '\0')
    end--;
  if (memcmp(b + end - 4, "=\r\r\n", 4) != 0)
    abort();
  if (memchr(info->ident, '\0', sizeof info->ident) == NULL ||
      strchr(info->ident, ' ') == NULL)
    abort();
  if (pq_md5(body, (size_t)info->size, sig) != 0 ||
      memcmp(sig, info->signature, PQ_SIGLEN) != 0)
    abort();
  ++*made;
  return *made % 3 == 0; /* some refused, as duplicates are */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pq_prod_info info;
  int made = 0;
  int n;
  /* a copy of exactly size bytes, so that ASan sees any read past it */
  uint8_t *copy = malloc(size ? size : 1);

  if (copy == NULL)
    return 0;
  memcpy(copy, data, size);
  memset(&info, 0, sizeof info);
  info.size = size;
  if (size >= 4)
    memcpy(&info.seqno, data, 4);
  n = surf_split(&info, copy, (time_t)1796668440, check_obs, &made);
  if (n < -1 || n > made)
    abort();
  free(copy);
  return 0;
}
