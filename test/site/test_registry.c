/*
 * test_registry.c - the registry (ldmd/site/registry.h): where the file is
 * found, the defaults of every built-in key with no file (LDM's and ldmd's
 * own, each of ldmd's also overridden by the file and by a set), value
 * types and parsers, set/get/remove round trips through the file, typed
 * sets refused, malformed files named with their line, walk order, create
 * and reset, writers in several processes losing nothing, the example
 * etc/registry.xml, and regutil's command line.  Files live in a scratch
 * directory under $PQ_TEST_DIR (or /tmp); LDM_REGISTRY always points
 * there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/site/registry.h"
#include "test/lib/tu_reg_keys.h"
#include "test/lib/testutil.h"

/* Keys with a built-in default: LDM's 24, ldmd's own 8, 4 for its live
 * figures, 5 against abuse and 3 for TLS, pqact's own 1, ldmadmin's own 1,
 * the NATS bridge's 9, pqsurf's 4 (LDM's), and ldmd's /server/zero-copy,
 * /server/check-sent and /server/feed-hub. */
#define NBUILTIN 62

static char scratch[1024]; /* this run's directory */
static char home[2048];    /* LDMHOME for the tests */

/* ---- helpers ---- */

static void scratch_path(char *buf, size_t len, const char *name) {
  int n = snprintf(buf, len, "%s/%s", scratch, name);
  assert_true(n > 0 && (size_t)n < len);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
}

/* The whole file, malloc'ed; NULL if it does not exist. */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf;
  long n;

  if (f == NULL)
    return NULL;
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static ldm_registry *open_ok(const char *path) {
  ldm_registry *reg = NULL;
  char err[512] = "";
  int rc = ldm_reg_open(path, &reg, err, sizeof err);
  if (rc != LDM_REG_OK)
    fail_msg("ldm_reg_open %s: %d %s", path ? path : "(default)", rc, err);
  assert_non_null(reg);
  return reg;
}

static void want_string(ldm_registry *reg, const char *key, const char *want) {
  char buf[4096];
  int rc = ldm_reg_get_string(reg, key, buf, sizeof buf);
  if (rc != LDM_REG_OK)
    fail_msg("get %s: %d %s", key, rc, ldm_reg_error(reg));
  assert_string_equal(buf, want);
}

static void want_uint(ldm_registry *reg, const char *key, uint64_t want) {
  uint64_t v = ~want;
  int rc = ldm_reg_get_uint(reg, key, &v);
  if (rc != LDM_REG_OK)
    fail_msg("get %s: %d %s", key, rc, ldm_reg_error(reg));
  assert_int_equal(v, want);
}

static void want_bool(ldm_registry *reg, const char *key, bool want) {
  bool v = !want;
  int rc = ldm_reg_get_bool(reg, key, &v);
  if (rc != LDM_REG_OK)
    fail_msg("get %s: %d %s", key, rc, ldm_reg_error(reg));
  assert_int_equal(v, want);
}

static void want_set(ldm_registry *reg, const char *key, const char *value,
                     int want) {
  int rc = ldm_reg_set_string(reg, key, value);
  if (rc != want)
    fail_msg("set %s to \"%s\": got %d want %d (%s)", key,
             value != NULL ? value : "(null)", rc, want, ldm_reg_error(reg));
}

/* A fresh registry path for one test, and LDM_REGISTRY naming it. */
static void fresh(char *buf, size_t len, const char *name) {
  scratch_path(buf, len, name);
  (void)unlink(buf);
  assert_int_equal(setenv("LDM_REGISTRY", buf, 1), 0);
}

static int setup(void **state) {
  (void)state;
  if (tu_scratch_make(scratch, sizeof scratch, "test_registry") != 0)
    return -1;
  snprintf(home, sizeof home, "%s/home", scratch);
  if (mkdir(home, 0755) != 0)
    return -1;
  setenv("LDMHOME", home, 1);
  unsetenv("LDM_REGISTRY_DIR");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tu_scratch_remove(scratch);
}

/* ---- where the file is ---- */

static void test_default_path(void **state) {
  char buf[4096], want[4096];
  (void)state;

  unsetenv("LDM_REGISTRY");
  unsetenv("LDM_REGISTRY_DIR");
  snprintf(want, sizeof want, "%s/etc/registry.xml", home);
  assert_ptr_equal(ldm_reg_default_path(buf, sizeof buf), buf);
  assert_string_equal(buf, want);

  unsetenv("LDMHOME");
  assert_non_null(ldm_reg_default_path(buf, sizeof buf));
  assert_string_equal(buf, LDM_HOME_DEFAULT "/etc/registry.xml");
  setenv("LDMHOME", "", 1); /* empty is unset */
  assert_non_null(ldm_reg_default_path(buf, sizeof buf));
  assert_string_equal(buf, LDM_HOME_DEFAULT "/etc/registry.xml");
  setenv("LDMHOME", home, 1);

  setenv("LDM_REGISTRY_DIR", "/some/dir", 1);
  assert_non_null(ldm_reg_default_path(buf, sizeof buf));
  assert_string_equal(buf, "/some/dir/registry.xml");

  setenv("LDM_REGISTRY", "/a/file.xml", 1); /* the file wins */
  assert_non_null(ldm_reg_default_path(buf, sizeof buf));
  assert_string_equal(buf, "/a/file.xml");

  assert_null(ldm_reg_default_path(buf, 5)); /* does not fit */
  assert_null(ldm_reg_default_path(NULL, 0));
  unsetenv("LDM_REGISTRY_DIR");
  unsetenv("LDM_REGISTRY");
}

/* Write file with port as its one key, open open_path (NULL: where the
 * environment says), and require that the handle read file. */
static void want_read(const char *file, const char *open_path, unsigned port) {
  char text[128];
  ldm_registry *reg;

  snprintf(text, sizeof text,
           "<registry><server><port>%u</port></server></registry>", port);
  write_file(file, text);
  reg = open_ok(open_path);
  assert_string_equal(ldm_reg_path(reg), file);
  want_uint(reg, REG_PORT, port);
  ldm_reg_close(reg);
}

static void test_open_from_env(void **state) {
  char path[4096], dir[2048];
  (void)state;

  fresh(path, sizeof path, "env.xml");
  want_read(path, NULL, 4000);

  /* LDM_REGISTRY_DIR when LDM_REGISTRY is not set. */
  unsetenv("LDM_REGISTRY");
  scratch_path(dir, sizeof dir, "regdir");
  assert_int_equal(mkdir(dir, 0755), 0);
  setenv("LDM_REGISTRY_DIR", dir, 1);
  snprintf(path, sizeof path, "%s/registry.xml", dir);
  want_read(path, NULL, 4001);
  unsetenv("LDM_REGISTRY_DIR");

  /* An explicit path beats both. */
  fresh(path, sizeof path, "env.xml");
  unsetenv("LDM_REGISTRY");
  want_read(path, path, 4002);
}

/* ---- defaults ---- */

static void check_all_defaults(ldm_registry *reg) {
  char want[4096], host[256];
  uint64_t size;

  want_string(reg, REG_QUEUE_PATH, "/dev/shm/ldm.pq");
  want_string(reg, REG_QUEUE_SIZE, "500M");
  assert_int_equal(ldm_reg_get_size(reg, REG_QUEUE_SIZE, &size), LDM_REG_OK);
  assert_int_equal(size, 500000000);
  want_string(reg, REG_QUEUE_SLOTS, "default");
  want_string(reg, REG_QUEUE_MAX_SIZE, "40G");
  snprintf(want, sizeof want, "%s/etc/ldmd.conf", home);
  want_string(reg, REG_LDMD_CONFIG, want);
  want_string(reg, REG_IP_ADDR, "0.0.0.0");
  want_uint(reg, REG_PORT, 388);
  want_uint(reg, REG_MAX_CLIENTS, 256);
  want_uint(reg, REG_MAX_LATENCY, 3600);
  want_uint(reg, REG_TIME_OFFSET, 3600);
  want_bool(reg, REG_ANTI_DOS, true);
  want_bool(reg, REG_ZERO_COPY, false);
  want_bool(reg, REG_FEED_HUB, true);
  want_string(reg, REG_CHECK_SENT, "ONCE");
  snprintf(want, sizeof want, "%s/etc/pqact.conf", home);
  want_string(reg, REG_PQACT_CONFIG, want);
  snprintf(want, sizeof want, "%s/var/data", home);
  want_string(reg, REG_PQACT_DATADIR, want);
  want_uint(reg, REG_PQACT_MAX_CHILDREN, 32);
  snprintf(want, sizeof want, "%s/var/queues/pqsurf.pq", home);
  want_string(reg, REG_SURFQUEUE_PATH, want);
  assert_int_equal(ldm_reg_get_size(reg, REG_SURFQUEUE_SIZE, &size),
                   LDM_REG_OK);
  assert_int_equal(size, 2000000);
  snprintf(want, sizeof want, "%s/etc/pqsurf.conf", home);
  want_string(reg, REG_PQSURF_CONFIG, want);
  snprintf(want, sizeof want, "%s/var/data", home);
  want_string(reg, REG_PQSURF_DATADIR, want);
  snprintf(want, sizeof want, "%s/var/logs/ldmd.log", home);
  want_string(reg, REG_LOG_FILE, want);
  want_uint(reg, REG_LOG_COUNT, 7);
  want_uint(reg, REG_LOG_ROTATE, 1);
  want_bool(reg, REG_LOG_ROTATE, true);
  want_uint(reg, REG_INSERTION_CHECK, 300);
  want_string(reg, REG_RECONCILIATION, "do nothing");
  want_uint(reg, REG_DELETE_INFO_FILES, 0);
  want_bool(reg, REG_DELETE_INFO_FILES, false);
  snprintf(want, sizeof want, "%s/var/logs/metrics.txt", home);
  want_string(reg, REG_METRICS_FILE, want);
  snprintf(want, sizeof want, "%s/var/logs/metrics.txt*", home);
  want_string(reg, REG_METRICS_FILES, want);
  want_uint(reg, REG_METRICS_COUNT, 4);
  want_uint(reg, REG_INTERVAL, 30);
  want_uint(reg, REG_RESTART_MIN, 1);
  want_uint(reg, REG_RESTART_MAX, 60);
  want_uint(reg, REG_SILENCE_LIMIT, 300);
  want_uint(reg, REG_RETRY_MIN, 1);
  want_uint(reg, REG_RETRY_MAX, 60);
  want_uint(reg, REG_AUTOSHIFT, 60);
  want_string(reg, REG_STATE_DIR, "");
  want_bool(reg, REG_METRICS_ENABLE, true);
  want_string(reg, REG_METRICS_PATH, "");
  want_string(reg, REG_METRICS_HTTP, "");
  want_uint(reg, REG_METRICS_PER_ADDRESS, 8);
  want_uint(reg, REG_MAX_PER_ADDRESS, 32);
  want_uint(reg, REG_FIRST_CALL_LIMIT, 30);
  want_uint(reg, REG_MAX_PRODUCT_SIZE, 0);
  assert_int_equal(ldm_reg_get_size(reg, REG_MAX_PRODUCT_MEMORY, &size),
                   LDM_REG_OK);
  assert_int_equal(size, 16000000);
  want_string(reg, REG_USER, "");
  want_string(reg, REG_TLS_CERT, ""); /* TLS off */
  want_string(reg, REG_TLS_KEY, "");
  want_string(reg, REG_TLS_CA, "");
  assert_string_equal(REG_TLS_CERT, "/tls/cert");
  assert_string_equal(REG_TLS_KEY, "/tls/key");
  assert_string_equal(REG_TLS_CA, "/tls/ca");
  want_string(reg, REG_NATS_URL, "nats://127.0.0.1:4222");
  want_string(reg, REG_NATS_STREAM, "LDM");
  want_string(reg, REG_NATS_PREFIX, "ldm");
  want_string(reg, REG_NATS_DURABLE, "nats2pq");
  want_string(reg, REG_NATS_CREDENTIALS, "");
  want_string(reg, REG_NATS_TOKEN_FILE, "");
  want_string(reg, REG_NATS_CA, "");
  want_string(reg, REG_NATS_CERT, "");
  want_string(reg, REG_NATS_KEY, "");
  assert_string_equal(REG_NATS_URL, "/nats/url");
  assert_string_equal(REG_NATS_KEY, "/nats/key");
  assert_string_equal(REG_NATS_TOKEN_FILE, "/nats/token-file");
  assert_int_equal(gethostname(host, sizeof host), 0);
  want_string(reg, REG_HOSTNAME, host);
}

static void test_defaults_missing_file(void **state) {
  static const char *const keys[] = {TU_REG_BUILTIN_KEYS};
  char path[4096], buf[64], err[512];
  struct stat st;
  ldm_registry *reg;
  (void)state;

  fresh(path, sizeof path, "missing.xml");
  reg = open_ok(path);
  check_all_defaults(reg);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    assert_false(ldm_reg_is_set(reg, keys[i]));
  assert_int_equal(ldm_reg_get_string(reg, "/no/such", buf, sizeof buf),
                   LDM_REG_NOENT);
  assert_non_null(strstr(ldm_reg_error(reg), "/no/such"));
  assert_int_equal(sizeof keys / sizeof keys[0], NBUILTIN);
  ldm_reg_close(reg);
  assert_int_equal(stat(path, &st), -1); /* reading created nothing */

  /* A directory that does not exist is a missing file too. */
  reg = open_ok("/nonexistent-dir-for-test/registry.xml");
  want_uint(reg, REG_PORT, 388);
  ldm_reg_close(reg);

  /* An empty or blank file is refused, never taken as all defaults. */
  write_file(path, "");
  assert_int_equal(ldm_reg_open(path, &reg, err, sizeof err), LDM_REG_EFILE);
  assert_non_null(strstr(err, "empty"));
  assert_non_null(strstr(err, path));
  write_file(path, " \n\t\n");
  assert_int_equal(ldm_reg_open(path, &reg, err, sizeof err), LDM_REG_EFILE);
  assert_non_null(strstr(err, "empty"));
}

/* ---- values ---- */

static void test_parse_size(void **state) {
  static const struct {
    const char *s;
    uint64_t v;
  } good[] = {
      {"500M", 500000000},
      {"2G", 2000000000},
      {"1k", 1000},
      {"1K", 1000},
      {"3m", 3000000},
      {"2g", 2000000000},
      {"0500M", 500000000},
      {"010", 10},
      {"0", 0},
      {"12345", 12345},
      {"18446744073709551615", UINT64_MAX},
      {"18446744073G", 18446744073000000000u},
  };
  static const char *const bad[] = {"",
                                    "M",
                                    "-1",
                                    "12Q",
                                    "1.5G",
                                    " 1",
                                    "1 ",
                                    "5MM",
                                    "0x",
                                    "0x10",
                                    "0x10k",
                                    "G1",
                                    "1e3",
                                    "+5",
                                    "1kB",
                                    "18446744073709551616",
                                    "18446744074G",
                                    "99999999999999999999k"};
  uint64_t v;
  (void)state;

  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    v = 1;
    if (ldm_parse_size(good[i].s, &v) != 0)
      fail_msg("ldm_parse_size(\"%s\") refused", good[i].s);
    assert_int_equal(v, good[i].v);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = 7;
    if (ldm_parse_size(bad[i], &v) != -1)
      fail_msg("ldm_parse_size(\"%s\") took it", bad[i]);
    assert_int_equal(v, 7); /* untouched */
  }
  assert_int_equal(ldm_parse_size(NULL, &v), -1);
  assert_int_equal(ldm_parse_size("1", NULL), -1);
}

/* One integer rule (ldm_parse_uint): decimal digits only, leading zeros
 * decimal, 0x refused with a reason, no sign, no overflow. */
static void test_parse_uint(void **state) {
  static const struct {
    const char *s;
    uint64_t v;
  } good[] = {
      {"0", 0},
      {"00", 0},
      {"7", 7},
      {"0600", 600},
      {"0100", 100},
      {"08", 8},
      {"010", 10},
      {"3600", 3600},
      {"18446744073709551615", UINT64_MAX},
      {"018446744073709551615", UINT64_MAX},
  };
  static const char *const bad[] = {"",
                                    "0x",
                                    "0x12c",
                                    "0X12C",
                                    "-1",
                                    "+1",
                                    " 1",
                                    "1 ",
                                    "1k",
                                    "1.",
                                    "1e3",
                                    "abc",
                                    "12a",
                                    "0b1",
                                    "0o7",
                                    "1,0",
                                    "18446744073709551616",
                                    "99999999999999999999"};
  uint64_t v;
  (void)state;

  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    v = 1;
    if (ldm_parse_uint(good[i].s, &v) != 0)
      fail_msg("ldm_parse_uint(\"%s\") refused", good[i].s);
    assert_int_equal(v, good[i].v);
    assert_null(ldm_uint_problem(good[i].s));
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = 7;
    if (ldm_parse_uint(bad[i], &v) != -1)
      fail_msg("ldm_parse_uint(\"%s\") took it", bad[i]);
    assert_int_equal(v, 7); /* untouched */
    assert_non_null(ldm_uint_problem(bad[i]));
  }
  assert_non_null(strstr(ldm_uint_problem("0x12c"), "0x (hexadecimal)"));
  assert_non_null(
      strstr(ldm_uint_problem("18446744073709551616"), "too large"));
  assert_int_equal(ldm_parse_uint(NULL, &v), -1);
  assert_int_equal(ldm_parse_uint("1", NULL), -1);
}

/* Booleans written as integers follow the integer rule, after a sign. */
static void test_parse_bool_integers(void **state) {
  static const struct {
    const char *s;
    int want; /* 1 true, 0 false, -1 refused */
  } cases[] = {
      {"1", 1},    {"2", 1},    {"08", 1},   {"09", 1},   {"010", 1},
      {"-3", 1},   {"+3", 1},   {"-08", 1},  {"0", 0},    {"00", 0},
      {"-0", 0},   {"+00", 0},  {"0x1", -1}, {"0x0", -1}, {"-0x1", -1},
      {"1.0", -1}, {"--1", -1}, {"-", -1},   {"", -1},    {"1 ", -1},
  };
  (void)state;

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bool b = false;
    int rc = ldm_parse_bool(cases[i].s, &b);
    if (cases[i].want < 0) {
      if (rc != -1)
        fail_msg("ldm_parse_bool(\"%s\") took it", cases[i].s);
    } else if (rc != 0 || b != (cases[i].want == 1)) {
      fail_msg("ldm_parse_bool(\"%s\"): rc %d, %d; expected %d", cases[i].s, rc,
               b, cases[i].want);
    }
  }
}

static void test_get_types(void **state) {
  char path[4096], buf[8];
  ldm_registry *reg;
  uint64_t u;
  bool b;
  (void)state;

  fresh(path, sizeof path, "types.xml");
  write_file(path, "<?xml version=\"1.0\"?>\n"
                   "<registry>\n"
                   "  <u><hex>0x10</hex><oct>010</oct><pad>  42\n</pad>\n"
                   "     <neg>-1</neg><word>abc</word><big>99999999999999999999"
                   "</big></u>\n"
                   "  <b><t1>TRUE</t1><t2>yes</t2><t3>Afirmative</t3>"
                   "<t4>affirmative</t4><t5>1</t5><t6>2</t6><t7>-3</t7>"
                   "<f1>false</f1><f2>NO</f2><f3>negative</f3><f4>0</f4>"
                   "<bad>maybe</bad><empty/></b>\n"
                   "  <s><amp>a&amp;b</amp><cdata><![CDATA[<x>]]></cdata>"
                   "<long>0123456789</long></s>\n"
                   "  <queue><size> 2G </size></queue>\n"
                   "</registry>\n");
  reg = open_ok(path);
  /* Decimal, as every integer (ldm_parse_uint): LDM's base 0 made these
   * 16 and 8. */
  assert_int_equal(ldm_reg_get_uint(reg, "/u/hex", &u), LDM_REG_EVALUE);
  assert_non_null(strstr(ldm_reg_error(reg), "0x (hexadecimal) is not taken"));
  want_uint(reg, "/u/oct", 10);
  want_uint(reg, "/u/pad", 42);
  assert_int_equal(ldm_reg_get_uint(reg, "/u/neg", &u), LDM_REG_EVALUE);
  assert_int_equal(ldm_reg_get_uint(reg, "/u/word", &u), LDM_REG_EVALUE);
  assert_non_null(strstr(ldm_reg_error(reg), "/u/word"));
  assert_non_null(strstr(ldm_reg_error(reg), path));
  assert_int_equal(ldm_reg_get_uint(reg, "/u/big", &u), LDM_REG_EVALUE);
  assert_int_equal(ldm_reg_get_uint(reg, "/u/nothing", &u), LDM_REG_NOENT);

  for (int i = 1; i <= 7; i++) {
    char key[32];
    snprintf(key, sizeof key, "/b/t%d", i);
    want_bool(reg, key, true);
  }
  for (int i = 1; i <= 4; i++) {
    char key[32];
    snprintf(key, sizeof key, "/b/f%d", i);
    want_bool(reg, key, false);
  }
  assert_int_equal(ldm_reg_get_bool(reg, "/b/bad", &b), LDM_REG_EVALUE);
  assert_int_equal(ldm_reg_get_bool(reg, "/b/empty", &b), LDM_REG_EVALUE);
  want_string(reg, "/b/empty", "");
  assert_true(ldm_reg_is_set(reg, "/b/empty"));

  want_string(reg, "/s/amp", "a&b");
  want_string(reg, "/s/cdata", "<x>");
  assert_int_equal(ldm_reg_get_string(reg, "/s/long", buf, sizeof buf),
                   LDM_REG_EINVAL); /* 10 bytes do not fit in 8 */
  assert_int_equal(ldm_reg_get_size(reg, REG_QUEUE_SIZE, &u), LDM_REG_OK);
  assert_int_equal(u, 2000000000);
  assert_int_equal(ldm_reg_get_size(reg, "/u/word", &u), LDM_REG_EVALUE);
  /* A size key read as an integer is not one. */
  assert_int_equal(ldm_reg_get_uint(reg, REG_QUEUE_SIZE, &u), LDM_REG_EVALUE);

  /* Nodes are not keys. */
  assert_false(ldm_reg_is_set(reg, "/u"));
  assert_int_equal(ldm_reg_get_string(reg, "/u", buf, sizeof buf),
                   LDM_REG_NOENT);
  /* Bad keys. */
  assert_int_equal(ldm_reg_get_uint(reg, "u/hex", &u), LDM_REG_EINVAL);
  assert_int_equal(ldm_reg_get_uint(reg, "/", &u), LDM_REG_EINVAL);
  assert_int_equal(ldm_reg_get_uint(reg, "/u//hex", &u), LDM_REG_EINVAL);
  assert_int_equal(ldm_reg_get_uint(reg, NULL, &u), LDM_REG_EINVAL);
  assert_false(ldm_reg_is_set(reg, "bad"));
  ldm_reg_close(reg);
  assert_int_equal(ldm_reg_get_uint(NULL, REG_PORT, &u), LDM_REG_EINVAL);
}

/* ---- writing ---- */

static void test_set_get_remove(void **state) {
  char path[4096], buf[256];
  ldm_registry *reg, *other;
  struct stat st;
  char *text;
  (void)state;

  fresh(path, sizeof path, "rw.xml");
  reg = open_ok(path);
  want_set(reg, REG_QUEUE_SIZE, "2G", LDM_REG_OK); /* creates the file */
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0077 & ~(mode_t)0044, 0); /* not writable */
  assert_true(ldm_reg_is_set(reg, REG_QUEUE_SIZE));
  want_string(reg, REG_QUEUE_SIZE, "2G");
  want_set(reg, "/a/b/c", "deep & <odd> \"text\"", LDM_REG_OK);
  want_set(reg, REG_PORT, "8080", LDM_REG_OK);
  want_set(reg, REG_PORT, "8081", LDM_REG_OK); /* replaces */

  other = open_ok(path); /* what another process reads */
  want_string(other, REG_QUEUE_SIZE, "2G");
  want_string(other, "/a/b/c", "deep & <odd> \"text\"");
  want_uint(other, REG_PORT, 8081);
  want_uint(other, REG_MAX_CLIENTS, 256); /* still by default */
  ldm_reg_close(other);

  text = read_file(path);
  assert_non_null(strstr(text, "<registry>"));
  assert_non_null(strstr(text, "&amp;"));
  assert_int_equal(strstr(text, "<port>8080</port>") == NULL, 1);
  free(text);

  assert_int_equal(ldm_reg_remove(reg, REG_QUEUE_SIZE), LDM_REG_OK);
  assert_false(ldm_reg_is_set(reg, REG_QUEUE_SIZE));
  want_string(reg, REG_QUEUE_SIZE, "500M"); /* the default again */
  assert_int_equal(ldm_reg_remove(reg, REG_QUEUE_SIZE), LDM_REG_NOENT);
  assert_non_null(strstr(ldm_reg_error(reg), REG_QUEUE_SIZE));

  /* A node goes with its keys, and empty nodes go with their last key. */
  assert_int_equal(ldm_reg_remove(reg, "/a"), LDM_REG_OK);
  assert_false(ldm_reg_is_set(reg, "/a/b/c"));
  text = read_file(path);
  assert_null(strstr(text, "<queue"));
  assert_null(strstr(text, "<a>"));
  free(text);

  other = open_ok(path);
  want_string(other, REG_QUEUE_SIZE, "500M");
  assert_int_equal(ldm_reg_get_string(other, "/a/b/c", buf, sizeof buf),
                   LDM_REG_NOENT);
  ldm_reg_close(other);

  /* "/" removes every key. */
  assert_int_equal(ldm_reg_remove(reg, "/"), LDM_REG_OK);
  assert_false(ldm_reg_is_set(reg, REG_PORT));
  assert_int_equal(ldm_reg_remove(reg, "/"), LDM_REG_NOENT);
  assert_int_equal(ldm_reg_remove(reg, "bad"), LDM_REG_EINVAL);
  ldm_reg_close(reg);

  /* Removing from a file that does not exist creates nothing. */
  fresh(path, sizeof path, "never.xml");
  reg = open_ok(path);
  assert_int_equal(ldm_reg_remove(reg, REG_PORT), LDM_REG_NOENT);
  assert_int_equal(stat(path, &st), -1);
  ldm_reg_close(reg);
}

/* A registry reached through a symbolic link is written where it is. */
static void test_symlink(void **state) {
  char path[4096], real[4096];
  ldm_registry *reg;
  struct stat st;
  (void)state;

  scratch_path(real, sizeof real, "real.xml");
  write_file(real, "<registry><a>1</a></registry>");
  fresh(path, sizeof path, "link.xml");
  assert_int_equal(symlink(real, path), 0);
  reg = open_ok(path);
  want_set(reg, "/b", "2", LDM_REG_OK);
  ldm_reg_close(reg);
  assert_int_equal(lstat(path, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  reg = open_ok(real);
  want_string(reg, "/a", "1");
  want_string(reg, "/b", "2");
  ldm_reg_close(reg);
}

/* A handle sees what others wrote before its own write. */
static void test_set_rereads(void **state) {
  char path[4096];
  ldm_registry *a, *b;
  (void)state;

  fresh(path, sizeof path, "reread.xml");
  a = open_ok(path);
  b = open_ok(path);
  want_set(a, "/x/one", "1", LDM_REG_OK);
  want_set(b, "/x/two", "2", LDM_REG_OK); /* b read before a wrote */
  want_string(b, "/x/one", "1");
  ldm_reg_close(a);
  a = open_ok(path);
  want_string(a, "/x/one", "1");
  want_string(a, "/x/two", "2");
  ldm_reg_close(a);
  ldm_reg_close(b);
}

static void test_set_refused(void **state) {
  static const struct {
    const char *key, *value;
    int rc;
  } cases[] = {
      {REG_PORT, "abc", LDM_REG_EVALUE},
      {REG_PORT, "0", LDM_REG_EVALUE},
      {REG_PORT, "65536", LDM_REG_EVALUE},
      {REG_PORT, "-1", LDM_REG_EVALUE},
      {REG_PORT, "65535", LDM_REG_OK},
      {REG_QUEUE_SIZE, "1.5G", LDM_REG_EVALUE},
      {REG_QUEUE_SIZE, "lots", LDM_REG_EVALUE},
      {REG_QUEUE_SIZE, "0x10M", LDM_REG_EVALUE},
      {REG_QUEUE_MAX_SIZE, "huge", LDM_REG_EVALUE},
      {REG_QUEUE_MAX_SIZE, "2T", LDM_REG_EVALUE},
      {REG_QUEUE_MAX_SIZE, "100G", LDM_REG_OK},
      {REG_QUEUE_SLOTS, "0", LDM_REG_EVALUE},
      {REG_QUEUE_SLOTS, "many", LDM_REG_EVALUE},
      {REG_QUEUE_SLOTS, "70000", LDM_REG_OK},
      {REG_QUEUE_SLOTS, "default", LDM_REG_OK},
      {REG_ANTI_DOS, "maybe", LDM_REG_EVALUE},
      {REG_ANTI_DOS, "FALSE", LDM_REG_OK},
      {REG_DELETE_INFO_FILES, "1", LDM_REG_OK},
      {REG_MAX_LATENCY, "1h", LDM_REG_EVALUE},
      {REG_MAX_LATENCY, "0x12c", LDM_REG_EVALUE},
      {REG_MAX_LATENCY, "+600", LDM_REG_EVALUE},
      {REG_MAX_LATENCY, "0600", LDM_REG_OK},
      {REG_PORT, "0388", LDM_REG_OK},
      {REG_PORT, "065536", LDM_REG_EVALUE}, /* decimal 65536, not octal */
      {REG_QUEUE_SLOTS, "0x40", LDM_REG_EVALUE},
      {REG_QUEUE_SLOTS, "0100", LDM_REG_OK},
      {REG_DELETE_INFO_FILES, "0x1", LDM_REG_EVALUE},
      {REG_DELETE_INFO_FILES, "08", LDM_REG_OK},
      {REG_RECONCILIATION, "bogus", LDM_REG_EVALUE},
      {REG_RECONCILIATION, "increase queue", LDM_REG_OK},
      {REG_CHECK_SENT, "each", LDM_REG_EVALUE},
      {REG_CHECK_SENT, "EACH", LDM_REG_OK},
      {REG_HOSTNAME, "", LDM_REG_EVALUE},
      {REG_INTERVAL, "0", LDM_REG_EVALUE},
      {REG_INTERVAL, "2147484", LDM_REG_EVALUE}, /* REG_SECONDS_MAX + 1 */
      {REG_INTERVAL, "2147483", LDM_REG_OK},
      {REG_RETRY_MAX, "1m", LDM_REG_EVALUE},
      {REG_SILENCE_LIMIT, "-1", LDM_REG_EVALUE},
      {REG_STATE_DIR, "", LDM_REG_OK},
      {"/free/form", "anything at all", LDM_REG_OK},
      {"/free/form", "bell\a", LDM_REG_EVALUE},
      {"/free/form", "bad \xff utf-8", LDM_REG_EVALUE},
      {"/free/form", "tab\tand\nnewline", LDM_REG_OK},
      {"/free/form", "caf\xc3\xa9", LDM_REG_OK},
      {"", "x", LDM_REG_EINVAL},
      {"queue", "x", LDM_REG_EINVAL},
      {"/", "x", LDM_REG_EINVAL},
      {"/a//b", "x", LDM_REG_EINVAL},
      {"/a/", "x", LDM_REG_EINVAL},
      {"/1a", "x", LDM_REG_EINVAL},
      {"/a b", "x", LDM_REG_EINVAL},
      {"/a/<b>", "x", LDM_REG_EINVAL},
  };
  char path[4096];
  ldm_registry *reg;
  (void)state;

  fresh(path, sizeof path, "refuse.xml");
  reg = open_ok(path);
  want_set(reg, REG_QUEUE_SIZE, "1G", LDM_REG_OK);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *before = read_file(path);
    want_set(reg, cases[i].key, cases[i].value, cases[i].rc);
    char *after = read_file(path);
    if (cases[i].rc != LDM_REG_OK && strcmp(before, after) != 0)
      fail_msg("refused set of %s changed the file", cases[i].key);
    if (cases[i].rc == LDM_REG_EVALUE &&
        strstr(ldm_reg_error(reg), cases[i].key) == NULL)
      fail_msg("message \"%s\" does not name %s", ldm_reg_error(reg),
               cases[i].key);
    free(before);
    free(after);
  }
  want_string(reg, "/free/form", "caf\xc3\xa9");
  want_bool(reg, REG_ANTI_DOS, false);

  /* A node is not a value, and a value has no keys below it. */
  want_set(reg, "/queue", "x", LDM_REG_EINVAL);
  assert_non_null(strstr(ldm_reg_error(reg), "node"));
  want_set(reg, "/queue/size/more", "x", LDM_REG_EINVAL);
  assert_non_null(strstr(ldm_reg_error(reg), "/queue/size"));
  want_set(reg, "/free/form", NULL, LDM_REG_EINVAL);
  assert_int_equal(ldm_reg_set_string(NULL, REG_PORT, "1"), LDM_REG_EINVAL);
  ldm_reg_close(reg);

  /* The directory must exist. */
  reg = open_ok("/nonexistent-dir-for-test/registry.xml");
  want_set(reg, REG_PORT, "1000", LDM_REG_ESYS);
  assert_non_null(
      strstr(ldm_reg_error(reg), "/nonexistent-dir-for-test/registry.xml"));
  assert_non_null(strstr(ldm_reg_error(reg), strerror(ENOENT)));
  ldm_reg_close(reg);
}

/* ---- malformed files ---- */

static void want_malformed(const char *path, const char *text, const char *line,
                           const char *words) {
  char err[512] = "";
  ldm_registry *reg = (ldm_registry *)err; /* must be cleared */

  write_file(path, text);
  assert_int_equal(ldm_reg_open(path, &reg, err, sizeof err), LDM_REG_EFILE);
  assert_null(reg);
  if (strstr(err, path) == NULL || strstr(err, line) == NULL ||
      strstr(err, words) == NULL)
    fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", err, line, words);
}

static void test_malformed(void **state) {
  char path[4096], err[512];
  ldm_registry *reg;
  (void)state;

  fresh(path, sizeof path, "bad.xml");
  want_malformed(path,
                 "<?xml version=\"1.0\"?>\n<registry>\n  <queue>\n"
                 "    <size>2G</queue>\n  </queue>\n</registry>\n",
                 "line 4", "mismatch");
  want_malformed(path, "<?xml version=\"1.0\"?>\n<registry>\n<a>1</a>\n",
                 "line 4", "");
  want_malformed(path, "<?xml version=\"1.0\"?>\n\n<settings/>\n", "line 3",
                 "<settings>");
  want_malformed(path, "<registry>\n<a>&undefined;</a>\n</registry>\n",
                 "line 2", "undefined");
  want_malformed(path, "not xml at all\n", "line 1", "");
  /* An element twice beside itself: its second keys would be lost. */
  want_malformed(path,
                 "<registry>\n<metrics><enable>TRUE</enable></metrics>\n"
                 "<metrics><count>9</count></metrics>\n</registry>\n",
                 "line 3", "<metrics> again (first at line 2)");
  want_malformed(path,
                 "<registry>\n<queue>\n  <size>2M</size>\n"
                 "  <size>3M</size>\n</queue>\n</registry>\n",
                 "line 4", "<size> again (first at line 3)");
  /* The error buffer may be absent. */
  reg = NULL;
  assert_int_equal(ldm_reg_open(path, &reg, NULL, 0), LDM_REG_EFILE);
  assert_null(reg);
  assert_int_equal(ldm_reg_open(path, NULL, err, sizeof err), LDM_REG_EINVAL);

  /* A file gone bad under a handle stops a set, which leaves it be. */
  write_file(path, "<registry><a>1</a></registry>");
  reg = open_ok(path);
  write_file(path, "<registry><a>1</a>\n<b>\n");
  want_set(reg, "/c", "3", LDM_REG_EFILE);
  assert_non_null(strstr(ldm_reg_error(reg), "line 3"));
  want_string(reg, "/a", "1"); /* the handle keeps what it read */
  ldm_reg_close(reg);

  /* An external entity is not fetched. */
  write_file(path, "<?xml version=\"1.0\"?>\n"
                   "<!DOCTYPE registry [<!ENTITY x SYSTEM "
                   "\"file:///etc/passwd\">]>\n"
                   "<registry><a>&x;</a></registry>\n");
  reg = open_ok(path);
  want_string(reg, "/a", "");
  ldm_reg_close(reg);

  /* A directory is not a registry file. */
  assert_int_equal(ldm_reg_open(scratch, &reg, err, sizeof err), LDM_REG_EFILE);
}

/* Keys whose elements hold only comments are nodes, not empty values. */
static void test_comment_nodes(void **state) {
  char path[4096], buf[64];
  ldm_registry *reg;
  (void)state;

  fresh(path, sizeof path, "comments.xml");
  write_file(path, "<registry>\n"
                   "  <pqact>\n"
                   "    <!-- <config-path>/x</config-path> -->\n"
                   "  </pqact>\n"
                   "  <empty/>\n"
                   "  <mixed>v<!-- note --></mixed>\n"
                   "</registry>\n");
  reg = open_ok(path);
  assert_false(ldm_reg_is_set(reg, "/pqact"));
  assert_int_equal(ldm_reg_get_string(reg, "/pqact", buf, sizeof buf),
                   LDM_REG_NOENT);
  assert_true(ldm_reg_is_set(reg, "/empty"));
  want_string(reg, "/mixed", "v");
  /* Setting a key below such a node works. */
  want_set(reg, REG_PQACT_CONFIG, "/y/pqact.conf", LDM_REG_OK);
  want_string(reg, REG_PQACT_CONFIG, "/y/pqact.conf");
  ldm_reg_close(reg);
}

/* ---- walking ---- */

struct seen {
  char keys[96][128];
  char values[96][128];
  bool is_default[96];
  int n;
  int stop_at; /* return 7 after this many, 0 for never */
};

static int record(const char *key, const char *value, bool is_default,
                  void *arg) {
  struct seen *s = arg;

  assert_true(s->n < 96);
  snprintf(s->keys[s->n], sizeof s->keys[0], "%s", key);
  snprintf(s->values[s->n], sizeof s->values[0], "%s", value);
  s->is_default[s->n] = is_default;
  s->n++;
  return s->stop_at != 0 && s->n == s->stop_at ? 7 : 0;
}

/* Walk reg under prefix (NULL: all) into *s, emptied first; the walk must
 * return 0 and see n keys. */
static void walk_n(ldm_registry *reg, const char *prefix, struct seen *s,
                   int n) {
  int rc;

  memset(s, 0, sizeof *s);
  rc = ldm_reg_walk(reg, prefix, record, s);
  if (rc != 0 || s->n != n)
    fail_msg("walk of %s: returned %d with %d keys, want 0 with %d",
             prefix != NULL ? prefix : "(NULL)", rc, s->n, n);
}

/* Compare key paths one component at a time (strcmp on each). */
static int component_cmp(const char *a, const char *b) {
  char x[128], y[128];
  char *sx, *sy, *px, *py;
  int c = 0;

  snprintf(x, sizeof x, "%s", a);
  snprintf(y, sizeof y, "%s", b);
  px = strtok_r(x, "/", &sx);
  py = strtok_r(y, "/", &sy);
  while (c == 0 && px != NULL && py != NULL) {
    c = strcmp(px, py);
    px = strtok_r(NULL, "/", &sx);
    py = strtok_r(NULL, "/", &sy);
  }
  if (c != 0)
    return c;
  return (px != NULL) - (py != NULL);
}

static int find_seen(const struct seen *s, const char *key) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->keys[i], key) == 0)
      return i;
  return -1;
}

static void test_walk(void **state) {
  char path[4096];
  ldm_registry *reg;
  struct seen s;
  int i, j;
  (void)state;

  fresh(path, sizeof path, "walk.xml");
  write_file(path, "<registry>\n"
                   "  <zeta>z</zeta>\n"
                   "  <alpha-x>ax</alpha-x>\n"
                   "  <alpha><b>ab</b><a>aa</a></alpha>\n"
                   "  <queue><size>2G</size></queue>\n"
                   "</registry>\n");
  reg = open_ok(path);

  /* 5 keys of the file, the built-in defaults less the one the file sets
   * (an element repeated beside itself is refused: test_malformed). */
  walk_n(reg, "/", &s, 5 + NBUILTIN - 1);
  assert_string_equal(s.keys[0], "/alpha/a"); /* path order ... */
  assert_string_equal(s.keys[1], "/alpha/b");
  assert_string_equal(s.keys[2], "/alpha-x"); /* ... component-wise */
  assert_string_equal(s.keys[s.n - 1], "/zeta");
  assert_string_equal(s.values[s.n - 1], "z");
  for (i = 1; i < s.n; i++)
    if (component_cmp(s.keys[i - 1], s.keys[i]) >= 0)
      fail_msg("out of order: %s then %s", s.keys[i - 1], s.keys[i]);
  i = find_seen(&s, REG_QUEUE_SIZE);
  assert_true(i >= 0);
  assert_false(s.is_default[i]);
  assert_string_equal(s.values[i], "2G");
  j = find_seen(&s, REG_QUEUE_PATH);
  assert_true(j >= 0);
  assert_true(s.is_default[j]);
  assert_string_equal(s.values[j], "/dev/shm/ldm.pq");
  assert_true(find_seen(&s, REG_HOSTNAME) >= 0);
  assert_true(find_seen(&s, "/log/file") > find_seen(&s, "/log/count"));

  /* Under a prefix; a trailing slash is the same prefix. */
  walk_n(reg, "/queue", &s, 4);
  assert_string_equal(s.keys[0], REG_QUEUE_MAX_SIZE);
  assert_string_equal(s.keys[1], REG_QUEUE_PATH);
  assert_string_equal(s.keys[2], REG_QUEUE_SIZE);
  assert_string_equal(s.keys[3], REG_QUEUE_SLOTS);
  walk_n(reg, "/queue/", &s, 4);
  walk_n(reg, "/alpha", &s, 2); /* not /alpha-x */
  walk_n(reg, REG_PORT, &s, 1);
  assert_string_equal(s.values[0], "388");
  walk_n(reg, "/nothing", &s, 0);
  walk_n(reg, NULL, &s, 5 + NBUILTIN - 1); /* all */

  /* A non-zero return stops the walk and is returned. */
  memset(&s, 0, sizeof s);
  s.stop_at = 2;
  assert_int_equal(ldm_reg_walk(reg, "/", record, &s), 7);
  assert_int_equal(s.n, 2);

  assert_int_equal(ldm_reg_walk(reg, "bad", record, &s), LDM_REG_EINVAL);
  assert_int_equal(ldm_reg_walk(reg, "/a//b", record, &s), LDM_REG_EINVAL);
  assert_int_equal(ldm_reg_walk(reg, "/", NULL, &s), LDM_REG_EINVAL);
  ldm_reg_close(reg);
}

/* ---- ldmd's own keys ---- */

/* Each key, its default, and another value. */
static const struct {
  const char *key, *def, *other;
} own_keys[] = {
    {REG_INTERVAL, "30", "5"},      {REG_RESTART_MIN, "1", "2"},
    {REG_RESTART_MAX, "60", "120"}, {REG_SILENCE_LIMIT, "300", "45"},
    {REG_RETRY_MIN, "1", "3"},      {REG_RETRY_MAX, "60", "600"},
    {REG_AUTOSHIFT, "60", "7"},     {REG_STATE_DIR, "", "/var/tmp/ldm-state"},
};
#define NOWN (sizeof own_keys / sizeof own_keys[0])

/* Every one of ldmd's keys holds its default (or, if others, its other
 * value), a timer also read as an integer, and is set in the file or not. */
static void want_own(ldm_registry *reg, bool others, bool set) {
  for (size_t i = 0; i < NOWN; i++) {
    const char *v = others ? own_keys[i].other : own_keys[i].def;
    want_string(reg, own_keys[i].key, v);
    if (strcmp(own_keys[i].key, REG_STATE_DIR) != 0)
      want_uint(reg, own_keys[i].key, strtoull(v, NULL, 10));
    if (ldm_reg_is_set(reg, own_keys[i].key) != set)
      fail_msg("%s is%s set", own_keys[i].key, set ? " not" : "");
  }
}

static void test_own_keys(void **state) {
  char path[4096], text[4096];
  ldm_registry *reg, *other;
  struct seen s;
  size_t n;
  (void)state;

  /* The names ldmd.8, etc/registry.xml and the net tests use. */
  assert_string_equal(REG_INTERVAL, "/server/interval");
  assert_string_equal(REG_RESTART_MIN, "/server/restart-min");
  assert_string_equal(REG_RESTART_MAX, "/server/restart-max");
  assert_string_equal(REG_SILENCE_LIMIT, "/requester/silence-limit");
  assert_string_equal(REG_RETRY_MIN, "/requester/retry-min");
  assert_string_equal(REG_RETRY_MAX, "/requester/retry-max");
  assert_string_equal(REG_AUTOSHIFT, "/requester/autoshift-interval");
  assert_string_equal(REG_STATE_DIR, "/requester/state-dir");
  assert_int_equal(REG_SECONDS_MAX, 2147483);

  /* Defaults with no file, listed by a walk as defaults. */
  fresh(path, sizeof path, "own.xml");
  reg = open_ok(path);
  want_own(reg, false, false);
  walk_n(reg, "/requester", &s, 5);
  assert_string_equal(s.keys[0], REG_AUTOSHIFT);
  assert_string_equal(s.keys[1], REG_RETRY_MAX);
  assert_string_equal(s.keys[2], REG_RETRY_MIN);
  assert_string_equal(s.keys[3], REG_SILENCE_LIMIT);
  assert_string_equal(s.keys[4], REG_STATE_DIR);
  assert_string_equal(s.values[4], "");
  for (int i = 0; i < s.n; i++)
    assert_true(s.is_default[i]);
  walk_n(reg, "/server", &s, 18); /* LDM's 7 and ldmd's 11 */
  for (size_t i = 0; i < NOWN; i++)
    if (strncmp(own_keys[i].key, "/server/", 8) == 0) {
      int j = find_seen(&s, own_keys[i].key);
      assert_true(j >= 0);
      assert_true(s.is_default[j]);
      assert_string_equal(s.values[j], own_keys[i].def);
    }
  ldm_reg_close(reg);

  /* The file overrides every one. */
  n = (size_t)snprintf(text, sizeof text,
                       "<registry>\n"
                       "  <server><interval>%s</interval>"
                       "<restart-min>%s</restart-min>"
                       "<restart-max>%s</restart-max></server>\n"
                       "  <requester><silence-limit>%s</silence-limit>"
                       "<retry-min>%s</retry-min><retry-max>%s</retry-max>"
                       "<autoshift-interval>%s</autoshift-interval>"
                       "<state-dir>%s</state-dir></requester>\n"
                       "</registry>\n",
                       own_keys[0].other, own_keys[1].other, own_keys[2].other,
                       own_keys[3].other, own_keys[4].other, own_keys[5].other,
                       own_keys[6].other, own_keys[7].other);
  assert_true(n < sizeof text);
  write_file(path, text);
  reg = open_ok(path);
  want_own(reg, true, true);
  walk_n(reg, "/requester", &s, 5);
  for (int i = 0; i < s.n; i++)
    assert_false(s.is_default[i]);
  ldm_reg_close(reg);

  /* A set overrides every one, for other readers too; a remove restores
   * the default. */
  fresh(path, sizeof path, "own.xml");
  reg = open_ok(path);
  for (size_t i = 0; i < NOWN; i++)
    want_set(reg, own_keys[i].key, own_keys[i].other, LDM_REG_OK);
  want_own(reg, true, true);
  other = open_ok(path);
  want_own(other, true, true);
  ldm_reg_close(other);
  for (size_t i = 0; i < NOWN; i++)
    assert_int_equal(ldm_reg_remove(reg, own_keys[i].key), LDM_REG_OK);
  want_own(reg, false, false);
  other = open_ok(path);
  want_own(other, false, false);
  ldm_reg_close(other);

  /* Timers are integers from 1 to REG_SECONDS_MAX; the directory is any
   * string. */
  for (size_t i = 0; i < NOWN; i++) {
    if (strcmp(own_keys[i].key, REG_STATE_DIR) == 0)
      continue;
    want_set(reg, own_keys[i].key, "0", LDM_REG_EVALUE);
    want_set(reg, own_keys[i].key, "2147484", LDM_REG_EVALUE);
    want_set(reg, own_keys[i].key, "soon", LDM_REG_EVALUE);
    want_set(reg, own_keys[i].key, "2147483", LDM_REG_OK);
    want_uint(reg, own_keys[i].key, REG_SECONDS_MAX);
  }
  want_set(reg, REG_STATE_DIR, "relative dir", LDM_REG_OK);
  want_string(reg, REG_STATE_DIR, "relative dir");
  ldm_reg_close(reg);
}

/* ---- create and reset ---- */

static void test_create_reset(void **state) {
  char path[4096], err[512];
  ldm_registry *reg;
  char *text;
  (void)state;

  fresh(path, sizeof path, "create.xml");
  assert_int_equal(ldm_reg_create(path, false, err, sizeof err), LDM_REG_OK);
  text = read_file(path);
  assert_non_null(text);
  assert_non_null(strstr(text, "<registry/>"));
  free(text);

  reg = open_ok(path);
  want_set(reg, REG_PORT, "999", LDM_REG_OK);
  ldm_reg_close(reg);
  /* Creating again leaves the file as it is. */
  assert_int_equal(ldm_reg_create(path, false, err, sizeof err), LDM_REG_OK);
  reg = open_ok(path);
  want_uint(reg, REG_PORT, 999);
  ldm_reg_close(reg);

  /* Reset: no key set, even from a malformed file. */
  assert_int_equal(ldm_reg_create(path, true, err, sizeof err), LDM_REG_OK);
  reg = open_ok(path);
  assert_false(ldm_reg_is_set(reg, REG_PORT));
  want_uint(reg, REG_PORT, 388);
  ldm_reg_close(reg);
  write_file(path, "<registry><broken>");
  assert_int_equal(ldm_reg_create(path, true, err, sizeof err), LDM_REG_OK);
  reg = open_ok(path);
  ldm_reg_close(reg);

  /* The default location, and a directory that is missing. */
  assert_int_equal(unlink(path), 0);
  assert_int_equal(ldm_reg_create(NULL, false, err, sizeof err), LDM_REG_OK);
  assert_non_null(text = read_file(path)); /* LDM_REGISTRY names it */
  free(text);
  assert_int_equal(ldm_reg_create("/nonexistent-dir-for-test/registry.xml",
                                  false, err, sizeof err),
                   LDM_REG_ESYS);
  assert_non_null(strstr(err, "/nonexistent-dir-for-test/registry.xml"));
}

/* ---- several writers at once ---- */

static void test_concurrent_writers(void **state) {
  enum { NPROC = 4, NSET = 25 };
  char path[4096];
  ldm_registry *reg;
  pid_t pids[NPROC];
  (void)state;

  fresh(path, sizeof path, "concurrent.xml");
  for (int p = 0; p < NPROC; p++) {
    pids[p] = fork();
    assert_true(pids[p] >= 0);
    if (pids[p] == 0) {
      ldm_registry *mine;
      if (ldm_reg_open(path, &mine, NULL, 0) != LDM_REG_OK)
        _exit(10);
      for (int i = 0; i < NSET; i++) {
        char key[64], value[32];
        snprintf(key, sizeof key, "/p%d/k%d", p, i);
        snprintf(value, sizeof value, "%d", p * 1000 + i);
        if (ldm_reg_set_string(mine, key, value) != LDM_REG_OK)
          _exit(11);
      }
      ldm_reg_close(mine);
      _exit(0);
    }
  }
  for (int p = 0; p < NPROC; p++) {
    int status;
    assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  reg = open_ok(path);
  for (int p = 0; p < NPROC; p++)
    for (int i = 0; i < NSET; i++) {
      char key[64];
      snprintf(key, sizeof key, "/p%d/k%d", p, i);
      want_uint(reg, key, (uint64_t)(p * 1000 + i)); /* none lost */
    }
  ldm_reg_close(reg);
}

/* ---- the example registry ---- */

struct example_check {
  ldm_registry *defaults;
  int set;
};

static int same_as_default(const char *key, const char *value, bool is_default,
                           void *arg) {
  struct example_check *c = arg;
  char want[4096];

  if (is_default)
    return 0;
  c->set++;
  if (ldm_reg_get_string(c->defaults, key, want, sizeof want) != LDM_REG_OK)
    fail_msg("etc/registry.xml sets %s, which has no default", key);
  if (strcmp(value, want) != 0)
    fail_msg("etc/registry.xml: %s is \"%s\", its default \"%s\"", key, value,
             want);
  return 0;
}

static void test_example_file(void **state) {
  char none[4096];
  struct example_check c = {NULL, 0};
  ldm_registry *reg;
  (void)state;

  reg = open_ok(LDM_SOURCE_DIR "/etc/registry.xml");
  scratch_path(none, sizeof none, "no-such-registry.xml");
  c.defaults = open_ok(none);
  assert_int_equal(ldm_reg_walk(reg, "/", same_as_default, &c), 0);
  assert_true(c.set >= 10);
  assert_false(ldm_reg_is_set(reg, REG_HOSTNAME)); /* commented out */
  assert_false(ldm_reg_is_set(reg, REG_LOG_FILE));
  assert_false(ldm_reg_is_set(reg, REG_STATE_DIR));
  assert_true(ldm_reg_is_set(reg, REG_SILENCE_LIMIT)); /* ldmd's keys too */
  ldm_reg_close(c.defaults);
  ldm_reg_close(reg);
}

/* ---- regutil ---- */

/* Run regutil with args (shell words), its stdout and stderr into files;
 * return its exit status. */
static int regutil(const char *args, char **out, char **err) {
  char cmd[16384], outp[2048], errp[2048];
  int status;

  scratch_path(outp, sizeof outp, "regutil.out");
  scratch_path(errp, sizeof errp, "regutil.err");
  snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s", REGUTIL_PATH, args, outp, errp);
  status = system(cmd);
  assert_true(WIFEXITED(status));
  *out = read_file(outp);
  *err = read_file(errp);
  assert_non_null(*out);
  assert_non_null(*err);
  return WEXITSTATUS(status);
}

#define RUN(want, args)                                                        \
  do {                                                                         \
    free(out);                                                                 \
    free(err);                                                                 \
    int got_ = regutil(args, &out, &err);                                      \
    if (got_ != (want))                                                        \
      fail_msg("regutil %s: exit %d, want %d; stderr: %s", args, got_, (want), \
               err);                                                           \
  } while (0)

/*
 * test_regutil runs regutil against one registry file through the helpers
 * below, in order: each leaves the file as the next expects it.  Each has its
 * own out and err for RUN.
 */

/* Getting a value, a node and everything; a missing key. */
static void regutil_gets(void) {
  char *out = NULL, *err = NULL;

  RUN(0, "/queue/size"); /* a value: bare */
  assert_string_equal(out, "500M\n");
  RUN(0, "-s 2G /queue/size");
  RUN(0, "/queue/size");
  assert_string_equal(out, "2G\n");
  RUN(0, "/queue"); /* a node: key : value */
  assert_string_equal(out, "/queue/max-size : 40G\n"
                           "/queue/path : /dev/shm/ldm.pq\n"
                           "/queue/size : 2G\n"
                           "/queue/slots : default\n");
  RUN(0, "");
  assert_non_null(strstr(out, "/server/port : 388\n"));
  assert_non_null(strstr(out, "/hostname : "));
  RUN(2, "/nope");
  assert_non_null(strstr(err, "/nope"));
  RUN(2, "-q /nope");
  assert_string_equal(err, "");
  RUN(2, "/queue/size /nope"); /* the others still print */
  assert_string_equal(out, "2G\n");
  free(out);
  free(err);
}

/* Setting each type (-s -u -b -t -h), bad values, and bad command lines. */
static void regutil_typed_sets(void) {
  char *out = NULL, *err = NULL;

  RUN(1, "-s abc /server/port");
  assert_non_null(strstr(err, "/server/port"));
  RUN(1, "-s 1.5G /queue/size");
  RUN(1, "-u 0x1f90 /server/port");
  assert_non_null(strstr(err, "0x (hexadecimal) is not taken"));
  RUN(0, "-u 08080 /server/port"); /* decimal: stored 8080 */
  RUN(0, "/server/port");
  assert_string_equal(out, "8080\n");
  RUN(0, "-T uint /server/port");
  assert_string_equal(out, "8080\n");
  RUN(0, "-s 0600 /server/max-latency");
  RUN(0, "-T uint /server/max-latency");
  assert_string_equal(out, "600\n");
  RUN(1, "-T int /server/max-latency");
  RUN(1, "-u -5 /server/port");
  RUN(0, "-b false /server/enable-anti-DOS");
  RUN(0, "/server/enable-anti-DOS");
  assert_string_equal(out, "FALSE\n");
  RUN(1, "-b perhaps /server/enable-anti-DOS");
  RUN(0, "-t 20240229T235959.123456 /x/time");
  RUN(1, "-t 20230229T000000 /x/time");
  RUN(1, "-t 20240101T246000 /x/time");
  RUN(0, "-h 0123456789ABCDEF0123456789abcdef /x/sig");
  RUN(0, "/x/sig");
  assert_string_equal(out, "0123456789abcdef0123456789abcdef\n");
  RUN(1, "-h 0123 /x/sig");
  RUN(1, "-h"); /* a signature is missing, not a usage request */
  RUN(1, "-Z");
  assert_non_null(strstr(err, "usage"));
  RUN(1, "-s 1 /a /b");
  RUN(1, "-s 1");
  RUN(1, "-s 1 -u 2 /a");
  RUN(1, "-c -R");
  RUN(1, "-r");
  RUN(1, "relative/path");
  free(out);
  free(err);
}

/* -r removes a node and a value (which falls back to its default); removing
 * what is not there is exit 2, which -q keeps quiet. */
static void regutil_removes(void) {
  char *out = NULL, *err = NULL;

  RUN(0, "-r /x /queue/size");
  RUN(0, "/queue/size");
  assert_string_equal(out, "500M\n");
  RUN(2, "-r /x");
  RUN(2, "-q -r /x");
  assert_string_equal(err, "");
  free(out);
  free(err);
}

/* ldmd's own keys are listed with their defaults, typed and settable. */
static void regutil_ldmd_keys(void) {
  char *out = NULL, *err = NULL;

  RUN(0, "/requester");
  assert_string_equal(out, "/requester/autoshift-interval : 60\n"
                           "/requester/retry-max : 60\n"
                           "/requester/retry-min : 1\n"
                           "/requester/silence-limit : 300\n"
                           "/requester/state-dir : \n");
  RUN(0, "/server/interval /server/restart-min /server/restart-max");
  assert_string_equal(out, "30\n1\n60\n");
  RUN(0, "");
  assert_non_null(strstr(out, "/server/interval : 30\n"));
  assert_non_null(strstr(out, "/requester/silence-limit : 300\n"));
  RUN(0, "-u 5 /server/interval");
  RUN(0, "/server/interval");
  assert_string_equal(out, "5\n");
  RUN(1, "-u 0 /server/interval");
  assert_non_null(strstr(err, "/server/interval"));
  RUN(1, "-s 5s /requester/retry-max");
  RUN(0, "-s /var/tmp/state /requester/state-dir");
  RUN(0, "/requester/state-dir");
  assert_string_equal(out, "/var/tmp/state\n");
  RUN(0, "-r /server/interval /requester/state-dir");
  RUN(0, "/server/interval /requester/state-dir");
  assert_string_equal(out, "30\n\n");
  free(out);
  free(err);
}

/* -d and -f name the file; -c creates, -R resets, a malformed file is a
 * system error.  path is the registry file that LDM_REGISTRY names. */
static void regutil_files(const char *path) {
  char dir[2048], args[8192];
  char *out = NULL, *err = NULL;

  /* -d and -f name the file; the environment is then not used. */
  scratch_path(dir, sizeof dir, "regutil-d");
  assert_int_equal(mkdir(dir, 0755), 0);
  snprintf(args, sizeof args, "-d %s -s 77 /server/max-clients", dir);
  RUN(0, args);
  snprintf(args, sizeof args, "-f %s/registry.xml /server/max-clients", dir);
  RUN(0, args);
  assert_string_equal(out, "77\n");
  RUN(0, "/server/max-clients");
  assert_string_equal(out, "256\n");
  snprintf(args, sizeof args, "-d %s -f %s/registry.xml", dir, dir);
  RUN(1, args);

  /* -c creates, -R resets, a malformed file is a system error. */
  snprintf(args, sizeof args, "-f %s/new.xml -c", dir);
  RUN(0, args);
  snprintf(args, sizeof args, "%s/new.xml", dir);
  free(out);
  out = read_file(args);
  assert_non_null(out);
  assert_non_null(strstr(out, "<registry/>"));
  write_file(path, "<registry><queue>\n");
  RUN(3, "/queue");
  assert_non_null(strstr(err, "line 2"));
  RUN(0, "-R");
  RUN(0, "-s 3G /queue/size");
  RUN(0, "-x /queue/size");
  assert_string_equal(out, "3G\n");
  free(out);
  free(err);
}

static void test_regutil(void **state) {
  char path[4096];
  (void)state;

  fresh(path, sizeof path, "regutil.xml");
  regutil_gets();
  regutil_typed_sets();
  regutil_removes();
  regutil_ldmd_keys();
  regutil_files(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_path),
      cmocka_unit_test(test_open_from_env),
      cmocka_unit_test(test_defaults_missing_file),
      cmocka_unit_test(test_parse_size),
      cmocka_unit_test(test_parse_uint),
      cmocka_unit_test(test_parse_bool_integers),
      cmocka_unit_test(test_get_types),
      cmocka_unit_test(test_set_get_remove),
      cmocka_unit_test(test_set_rereads),
      cmocka_unit_test(test_symlink),
      cmocka_unit_test(test_set_refused),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_comment_nodes),
      cmocka_unit_test(test_walk),
      cmocka_unit_test(test_own_keys),
      cmocka_unit_test(test_create_reset),
      cmocka_unit_test(test_concurrent_writers),
      cmocka_unit_test(test_example_file),
      cmocka_unit_test(test_regutil),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
