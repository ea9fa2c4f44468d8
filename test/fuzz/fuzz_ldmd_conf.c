/*
 * fuzz_ldmd_conf.c - libFuzzer target for the ldmd.conf parser, a trust
 * boundary (a site's file, and whatever it INCLUDEs).  Each input is written
 * to ldmd.conf in a fresh private directory and parsed; relative INCLUDEs
 * then resolve inside that directory (the input may INCLUDE itself, which
 * exercises the cycle check).  A configuration that parses is then put
 * through every access rule with a fixed peer and class, so the matching
 * code sees the compiled EREs too, as a plain peer and as TLS peers (with
 * and without a verified certificate), so the certificate identities of
 * our extension ("{cn=...,sha256=...}") are matched as well.
 *
 * Properties checked: no crash, leak or sanitizer report; a failed parse
 * leaves *out NULL and a non-empty message; a successful one leaves none.
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes a
 * few small valid files there, LDM's syntax and the identities, and exits
 * (the test fuzz_ldmd_conf_seeds does it before the brief run).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/ldmd_conf.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const seeds[] = {
    "ALLOW ANY ^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$\n"
    "ALLOW WMO \\.edu$ ^SA ^SAUS\n"
    "ACCEPT ANY .* ^pusher\\.org$\n"
    "REQUEST WMO .* upstream.example.org PRIMARY\n"
    "EXEC \"pqact -f ANY\"\n",
    "ALLOW ANY {cn=^b\\.test$}^127\\.0\\.0\\.1$\n"
    "ALLOW IDS {tls}\n"
    "ACCEPT EXP .* {dns=\\.example\\.org$,cert}\n"
    "ACCEPT ANY .* {sha256=00112233445566778899aabbccddeeff"
    "00112233445566778899aabbccddeeff}^10\\.\n",
    "REQUEST ANY .* {tls}up.example.org:3888\n"
    "REQUEST IDS .* {tls,cn=^up$}[::1]:388 ALTERNATE\n"
    "REQUEST EXP .* {sha256=00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:"
    "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff}10.0.0.1\n",
};

static void write_seeds(const char *dir) {
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    char path[4096];
    int fd;

    snprintf(path, sizeof path, "%s/seed%zu.conf", dir, i);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fuzz_write_all(fd, seeds[i], strlen(seeds[i])) != 0) {
      perror(path);
      exit(1);
    }
    close(fd);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *dir = fuzz_seeds_dir();

  (void)argc;
  (void)argv;
  if (dir != NULL) {
    write_seeds(dir);
    exit(0);
  }
  return 0;
}

/* The TLS peers the rules are tried with (and a plain one: NULL). */
static const char *const tls_dns[] = {"b.test", "up.example.org"};
static const ldm_conf_peer_id tls_peers[] = {
    {.tls = true,
     .cert = true,
     .verified = true,
     .pin_ok = true,
     .cn = "b.test",
     .dns = tls_dns,
     .ndns = 2,
     .spki_sha256 = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
                     0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}},
    {.tls = true, .cert = true, .cn = "expired"},
    {.tls = true},
};

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

    size_t k;

    (void)ldm_conf_host_allowed(conf, name, ip);
    for (k = 0; k < sizeof tls_peers / sizeof tls_peers[0]; k++) {
      (void)ldm_conf_host_allowed_peer(conf, name, ip, &tls_peers[k]);
      (void)ldm_conf_allowed_class_peer(conf, name, ip, &tls_peers[k], want,
                                        got, &filter, err, sizeof err);
      pq_class_free(got);
      (void)ldm_conf_accepted_class_peer(conf, name, ip, &tls_peers[k], want,
                                         got, err, sizeof err);
      pq_class_free(got);
    }
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
