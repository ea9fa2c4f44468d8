/*
 * fuzz_registry.c - libFuzzer target for the registry reader
 * (ldm_reg_open() in ldmd/site/registry.c), a trust boundary: every utility and
 * ldmd read the file, which a site edits by hand.  Each input is written
 * to registry.xml in a fresh private directory and opened; a registry
 * that opens is then read through every getter for every built-in key,
 * walked, and written (one key set, one removed) so that the writer
 * serialises whatever tree the parser built, and read back.
 *
 * Properties checked: no crash, leak or sanitizer report; a failed open
 * leaves the handle NULL and a non-empty message; a key that was set reads
 * back as set, from the handle and from a fresh open of the file written
 * (which must open: what the writer writes, the reader reads).
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes a
 * few small valid registries there and exits (the test fuzz_registry_seeds
 * does it before the brief run).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldmd/site/registry.h"
#include "test/fuzz/fuzz_util.h"
#include "test/lib/tu_reg_keys.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {
    TU_REG_BUILTIN_KEYS,    "/fuzz", "/fuzz/key", "/queue", "/",
    "/a/b/c/d/e/f/g/h/i/j",
};

static const char *const seeds[] = {
    "<registry/>\n",
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<registry>\n"
    "  <hostname>ldm.example.edu</hostname>\n"
    "  <queue>\n"
    "    <path>/dev/shm/ldm.pq</path>\n"
    "    <size>500M</size>\n"
    "    <slots>default</slots>\n"
    "  </queue>\n"
    "  <server>\n"
    "    <port>388</port>\n"
    "    <ip-addr>0.0.0.0</ip-addr>\n"
    "    <max-clients>256</max-clients>\n"
    "    <enable-anti-DOS>TRUE</enable-anti-DOS>\n"
    "  </server>\n"
    "  <reconciliation-mode>do nothing</reconciliation-mode>\n"
    "</registry>\n",
    "<registry>\n"
    "  <!-- <hostname>commented.out</hostname> -->\n"
    "  <log><file>$LDMHOME/var/logs/ldmd.log</file><count>7</count>"
    "<rotate>1</rotate></log>\n"
    "  <requester><silence-limit>120</silence-limit>"
    "<state-dir/></requester>\n"
    "  <site><a><b>x &amp; y</b></a></site>\n"
    "</registry>\n",
    "",
};

static void write_seeds(const char *dir) {
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed%zu.xml", dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fuzz_write_all(fd, seeds[i], strlen(seeds[i])) != 0) {
      perror(path);
      exit(1);
    }
    close(fd);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir != NULL) {
    write_seeds(dir);
    exit(0);
  }
  /* The registry expands $LDMHOME in its defaults: a fixed one. */
  setenv("LDMHOME", "/nonexistent/ldmhome", 1);
  unsetenv("LDM_REGISTRY");
  unsetenv("LDM_REGISTRY_DIR");
  return 0;
}

static int count_key(const char *key, const char *value, bool is_default,
                     void *arg) {
  (void)key;
  (void)value;
  (void)is_default;
  ++*(unsigned *)arg;
  return 0;
}

/* Every getter on every key. */
static void read_all(ldm_registry *reg) {
  char buf[512];
  uint64_t u;
  bool b;
  unsigned n = 0;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    (void)ldm_reg_get_string(reg, keys[i], buf, sizeof buf);
    (void)ldm_reg_get_string(reg, keys[i], buf, 4); /* too short */
    (void)ldm_reg_get_uint(reg, keys[i], &u);
    (void)ldm_reg_get_size(reg, keys[i], &u);
    (void)ldm_reg_get_bool(reg, keys[i], &b);
    (void)ldm_reg_is_set(reg, keys[i]);
  }
  (void)ldm_reg_walk(reg, "/", count_key, &n);
  (void)ldm_reg_walk(reg, "/server", count_key, &n);
  (void)ldm_reg_walk(reg, "/fuzz", count_key, &n);
  (void)ldm_reg_error(reg);
}

/* Set a key, remove another, and read the set one back (also from a fresh
 * open of the file written). */
static void write_and_reread(const char *path, ldm_registry *reg) {
  static const char value[] = "fuzzed value";
  if (ldm_reg_set_string(reg, "/fuzz/key", value) == LDM_REG_OK) {
    char buf[64], err[512];
    if (ldm_reg_get_string(reg, "/fuzz/key", buf, sizeof buf) != LDM_REG_OK ||
        strcmp(buf, value) != 0)
      abort();
    ldm_registry *again = NULL; /* what the writer wrote, it must read */
    if (ldm_reg_open(path, &again, err, sizeof err) != LDM_REG_OK ||
        ldm_reg_get_string(again, "/fuzz/key", buf, sizeof buf) != LDM_REG_OK ||
        strcmp(buf, value) != 0)
      abort();
    read_all(again);
    ldm_reg_close(again);
  }
  (void)ldm_reg_remove(reg, REG_QUEUE_PATH);
  (void)ldm_reg_set_string(reg, REG_PORT, "3888");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char dir[512], path[600];
  if (fuzz_input_file("fuzz_registry", "registry.xml", data, size, dir,
                      sizeof dir, path, sizeof path)) {
    ldm_registry *reg = NULL;
    char err[1024] = "";
    int rc = ldm_reg_open(path, &reg, err, sizeof err);
    if (rc == LDM_REG_OK) {
      if (reg == NULL)
        abort();
      read_all(reg);
      write_and_reread(path, reg);
      ldm_reg_close(reg);
    } else if (reg != NULL || err[0] == '\0') {
      abort();
    }
  }
  /* with whatever the registry writer left in it */
  fuzz_remove_dir(dir);
  return 0;
}
