/*
 * fuzz_ldmd_conf.c - libFuzzer target for the ldmd.conf parser, a trust
 * boundary (a site's file, and whatever it INCLUDEs).  Each input is written
 * to ldmd.conf in a fresh private directory and parsed; relative INCLUDEs
 * then resolve inside that directory (the input may INCLUDE itself, which
 * exercises the cycle check).  A configuration that parses is then put
 * through every access rule with a fixed peer and class, so the matching
 * code sees the compiled EREs too.
 *
 * Properties checked: no crash, leak or sanitizer report; a failed parse
 * leaves *out NULL and a non-empty message; a successful one leaves none.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/ldmd_conf.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Use the access rules of a parsed configuration. */
static void exercise(const ldm_conf *conf) {
  static const char *const peers[][2] = {
      {"localhost", "127.0.0.1"},
      {"idd.unidata.ucar.edu", "::ffff:128.117.140.1"},
      {NULL, "::1"},
  };
  pq_class *want = malloc(sizeof *want);
  pq_class *got = malloc(sizeof *got);
  ldm_conf_filter filter;
  char err[256], text[1024];
  size_t i;

  if (want == NULL || got == NULL) {
    free(want);
    free(got);
    return;
  }
  pq_class_init(want, PQ_TS_ZERO, PQ_TS_ENDT);
  (void)pq_class_add(want, PQ_FT_ANY, ".*", NULL, 0);
  (void)pq_class_add(want, PQ_FT_NEXRAD3, "^SDUS", NULL, 0);
  for (i = 0; i < sizeof peers / sizeof peers[0]; i++) {
    const char *name = peers[i][0], *ip = peers[i][1];

    (void)ldm_conf_host_allowed(conf, name, ip);
    if (ldm_conf_allowed_class(conf, name, ip, want, got, &filter, err,
                               sizeof err) == LDM_CONF_OK) {
      (void)ldm_conf_class_equal(got, want);
      (void)ldm_conf_filter_match(&filter, PQ_FT_WMO, "SAUS01 KWBC");
      (void)ldm_conf_filter_format(&filter, text, sizeof text);
    }
    pq_class_free(got);
    (void)ldm_conf_accepted_class(conf, name, ip, want, got, err, sizeof err);
    pq_class_free(got);
  }
  pq_class_free(want);
  free(want);
  free(got);
}

/* Parse one file and check the result's contract. */
static void parse_one(const char *path) {
  char err[1024];
  ldm_conf *conf = NULL;
  int rc = ldm_conf_parse(path, &conf, err, sizeof err);

  if (rc == LDM_CONF_OK) {
    if (conf == NULL || err[0] != '\0')
      abort();
    exercise(conf);
    ldm_conf_free(conf);
  } else if (conf != NULL || err[0] == '\0') {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char dir[512], path[600];

  if (fuzz_input_file("fuzz_ldmd_conf", "ldmd.conf", data, size, dir,
                      sizeof dir, path, sizeof path))
    parse_one(path);
  fuzz_remove_dir(dir);
  return 0;
}
