/*
 * test_settings.c - ldmd's settings reader (ldmd/server/settings.h):
 * every setting's default with no registry file, each taken from a
 * registry file instead, the command line's over the registry's, the
 * rules that tie settings (the registry's time offset cut to the maximum
 * latency, a maximum below its minimum raised, an HTTP address for the
 * figures needing them on), values out of range and unreadable files
 * refused with a message that names the key, the file and the range, and
 * what the children are handed (ldmd_settings_fill()).  The registry is
 * found as ldmd finds it: $LDMHOME/etc/registry.xml, or the file
 * $LDM_REGISTRY names, in a scratch directory per test (tu_tmpdir.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/server/settings.h"
#include "ldmd/site/registry.h"

#define TU_TMPDIR_PREFIX "test_settings"
#include "test/lib/tu_tmpdir.h"

/* A registry that sets every key the reader reads, none to its default. */
static const char full_registry[] =
    "<?xml version=\"1.0\"?>\n"
    "<registry>\n"
    "  <queue><path>/run/test/ldm.pq</path></queue>\n"
    "  <server>\n"
    "    <config-path>/etc/test/ldmd.conf</config-path>\n"
    "    <ip-addr>192.0.2.1</ip-addr>\n"
    "    <port>1388</port>\n"
    "    <max-clients>40</max-clients>\n"
    "    <max-latency>600</max-latency>\n"
    "    <time-offset>900</time-offset>\n"
    "    <enable-anti-DOS>FALSE</enable-anti-DOS>\n"
    "    <zero-copy>TRUE</zero-copy>\n"
    "    <check-sent>EACH</check-sent>\n"
    "    <interval>7</interval>\n"
    "    <restart-min>10</restart-min>\n"
    "    <restart-max>3</restart-max>\n"
    "    <max-per-address>5</max-per-address>\n"
    "    <first-call-limit>11</first-call-limit>\n"
    "    <max-product-size>2M</max-product-size>\n"
    "    <max-product-memory>3M</max-product-memory>\n"
    "    <user>nobody</user>\n"
    "  </server>\n"
    "  <requester>\n"
    "    <silence-limit>120</silence-limit>\n"
    "    <retry-min>8</retry-min>\n"
    "    <retry-max>90</retry-max>\n"
    "    <autoshift-interval>45</autoshift-interval>\n"
    "    <state-dir>/var/test/state</state-dir>\n"
    "  </requester>\n"
    "  <metrics>\n"
    "    <enable>TRUE</enable>\n"
    "    <live-path>/run/test/figures</live-path>\n"
    "    <http-address>9388</http-address>\n"
    "    <max-per-address>20</max-per-address>\n"
    "  </metrics>\n"
    "  <tls>\n"
    "    <cert>/etc/test/cert.pem</cert>\n"
    "    <key>/etc/test/key.pem</key>\n"
    "    <ca>/etc/test/ca.pem</ca>\n"
    "  </tls>\n"
    "</registry>\n";

static char reg_path[512]; /* this test's registry file */

/* The scratch directory, LDMHOME in it, and no registry named by the
 * environment: ldm_reg_open() looks for $LDMHOME/etc/registry.xml. */
static int setup(void **state) {
  if (tu_tmpdir_setup(state) != 0)
    return -1;
  snprintf(reg_path, sizeof reg_path, "%s/registry.xml", tu_dir);
  unsetenv("LDM_REGISTRY");
  unsetenv("LDM_REGISTRY_DIR");
  return setenv("LDMHOME", tu_dir, 1);
}

static int teardown(void **state) {
  unsetenv("LDM_REGISTRY");
  unsetenv("LDMHOME");
  return tu_tmpdir_teardown(state);
}

/* Write text as this test's registry and name it in $LDM_REGISTRY. */
static void registry(const char *text) {
  FILE *f = fopen(reg_path, "w");

  assert_non_null(f);
  assert_true(fputs(text, f) >= 0);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(setenv("LDM_REGISTRY", reg_path, 1), 0);
}

/* A registry of one key, <registry><a><b>value</b></a></registry>. */
static void registry_key(const char *node, const char *leaf,
                         const char *value) {
  char text[1024];

  snprintf(text, sizeof text, "<registry><%s><%s>%s</%s></%s></registry>\n",
           node, leaf, value, leaf, node);
  registry(text);
}

/* A command line that gives nothing. */
static ldmd_cmdline no_options(void) {
  ldmd_cmdline cl = {
      .port = -1, .max_latency = -1, .time_offset = -1, .max_clients = -1};
  return cl;
}

/* Read with cl; fail the test with the reader's message if it refuses. */
static void read_ok(const ldmd_cmdline *cl, ldmd_params *p) {
  char err[8192] = "";

  if (ldmd_settings_read(cl, p, err, sizeof err) != 0)
    fail_msg("ldmd_settings_read refused: %s", err);
}

/* Read with no options; the read must be refused, and its message hold
 * each of the texts want[] lists (up to a NULL). */
static void read_refused(const char *const want[]) {
  ldmd_cmdline cl = no_options();
  ldmd_params p;
  char err[8192] = "";
  size_t i;

  assert_int_equal(ldmd_settings_read(&cl, &p, err, sizeof err), -1);
  for (i = 0; want[i] != NULL; i++)
    if (strstr(err, want[i]) == NULL)
      fail_msg("the message \"%s\" does not say \"%s\"", err, want[i]);
}

/* REFUSED("text", ...): read_refused() of those texts. */
#define REFUSED(...) read_refused((const char *const[]){__VA_ARGS__, NULL})

/* ---- defaults ---- */

/* No registry file: the built-in default of every key (registry_keys.c,
 * ldmd.8), and the metrics file beside the queue. */
static void test_defaults_without_a_registry_file(void **state) {
  ldmd_cmdline cl = no_options();
  ldmd_params p;
  char conf[600];

  (void)state;
  read_ok(&cl, &p);
  snprintf(conf, sizeof conf, "%s/etc/ldmd.conf", tu_dir);
  assert_string_equal(p.queue, "/dev/shm/ldm.pq");
  assert_string_equal(p.conf_path, conf);
  assert_string_equal(p.ip_addr, "0.0.0.0");
  assert_int_equal(p.port, 388);
  assert_int_equal(p.max_latency, 3600);
  assert_int_equal(p.time_offset, 3600);
  assert_int_equal(p.max_clients, 256);
  assert_int_equal(p.interval_ms, 30000);
  assert_int_equal(p.restart_min_ms, 1000);
  assert_int_equal(p.restart_max_ms, 60000);
  assert_int_equal(p.silence_ms, 300000);
  assert_int_equal(p.retry_min_ms, 1000);
  assert_int_equal(p.retry_max_ms, 60000);
  assert_int_equal(p.autoshift_ms, 60000);
  assert_int_equal(p.first_call_ms, 30000);
  assert_true(p.anti_dos);
  assert_false(p.zero_copy);  /* off by default */
  assert_false(p.check_each); /* ONCE by default */
  assert_int_equal(p.max_product, 0);
  assert_int_equal(p.max_product_memory, 16000000);
  assert_int_equal(p.max_per_address, 32);
  assert_string_equal(p.state_dir, "");
  assert_string_equal(p.user, "");
  assert_true(p.metrics_on);
  assert_string_equal(p.metrics_path, "/dev/shm/ldm.pq.metrics");
  assert_string_equal(p.http_addr, "");
  assert_int_equal(p.http_per_address, 8);
  assert_string_equal(p.tls_cert, "");
  assert_string_equal(p.tls_key, "");
  assert_string_equal(p.tls_ca, "");
}

/* ---- the registry's values ---- */

/* Every key from the file; the time offset (900) cut to the maximum
 * latency (600), each maximum below its minimum raised to it. */
static void test_registry_values_replace_defaults(void **state) {
  ldmd_cmdline cl = no_options();
  ldmd_params p;

  (void)state;
  registry(full_registry);
  read_ok(&cl, &p);
  assert_string_equal(p.queue, "/run/test/ldm.pq");
  assert_string_equal(p.conf_path, "/etc/test/ldmd.conf");
  assert_string_equal(p.ip_addr, "192.0.2.1");
  assert_int_equal(p.port, 1388);
  assert_int_equal(p.max_latency, 600);
  assert_int_equal(p.time_offset, 600);
  assert_int_equal(p.max_clients, 40);
  assert_int_equal(p.interval_ms, 7000);
  assert_int_equal(p.restart_min_ms, 10000);
  assert_int_equal(p.restart_max_ms, 10000);
  assert_int_equal(p.silence_ms, 120000);
  assert_int_equal(p.retry_min_ms, 8000);
  assert_int_equal(p.retry_max_ms, 90000);
  assert_int_equal(p.autoshift_ms, 45000);
  assert_int_equal(p.first_call_ms, 11000);
  assert_false(p.anti_dos);
  assert_true(p.zero_copy);
  assert_true(p.check_each);
  assert_int_equal(p.max_product, 2000000);
  assert_int_equal(p.max_product_memory, 3000000);
  assert_int_equal(p.max_per_address, 5);
  assert_string_equal(p.state_dir, "/var/test/state");
  assert_string_equal(p.user, "nobody");
  assert_true(p.metrics_on);
  assert_string_equal(p.metrics_path, "/run/test/figures");
  assert_string_equal(p.http_addr, "9388");
  assert_int_equal(p.http_per_address, 20);
  assert_string_equal(p.tls_cert, "/etc/test/cert.pem");
  assert_string_equal(p.tls_key, "/etc/test/key.pem");
  assert_string_equal(p.tls_ca, "/etc/test/ca.pem");
}

/* A retry maximum below its minimum is raised to it too. */
static void test_retry_max_raised_to_min(void **state) {
  ldmd_cmdline cl = no_options();
  ldmd_params p;

  (void)state;
  registry("<registry><requester><retry-min>20</retry-min>"
           "<retry-max>4</retry-max></requester></registry>\n");
  read_ok(&cl, &p);
  assert_int_equal(p.retry_min_ms, 20000);
  assert_int_equal(p.retry_max_ms, 20000);
}

/* The metrics file follows the queue when /metrics/live-path is empty. */
static void test_metrics_file_follows_queue(void **state) {
  ldmd_cmdline cl = no_options();
  ldmd_params p;

  (void)state;
  registry_key("queue", "path", "/srv/q/ldm.pq");
  read_ok(&cl, &p);
  assert_string_equal(p.metrics_path, "/srv/q/ldm.pq.metrics");
  cl.queue = "/other.pq";
  read_ok(&cl, &p);
  assert_string_equal(p.metrics_path, "/other.pq.metrics");
}

/* ---- the command line's ---- */

/* Each option given takes its key's place; -I leaves /server/ip-addr
 * unread; an -o within -m is kept as it is. */
static void test_command_line_over_registry(void **state) {
  ldmd_cmdline cl = {.port = 2000,
                     .max_latency = 100,
                     .time_offset = 50,
                     .max_clients = 3,
                     .queue = "/cl/ldm.pq",
                     .conf = "/cl/ldmd.conf",
                     .user = "ldm",
                     .have_addrs = true};
  ldmd_params p;

  (void)state;
  registry(full_registry);
  read_ok(&cl, &p);
  assert_int_equal(p.port, 2000);
  assert_int_equal(p.max_latency, 100);
  assert_int_equal(p.time_offset, 50);
  assert_int_equal(p.max_clients, 3);
  assert_string_equal(p.queue, "/cl/ldm.pq");
  assert_string_equal(p.conf_path, "/cl/ldmd.conf");
  assert_string_equal(p.user, "ldm");
  assert_string_equal(p.ip_addr, "");
  /* What the command line has no option for is still the registry's. */
  assert_int_equal(p.interval_ms, 7000);
  assert_string_equal(p.tls_ca, "/etc/test/ca.pem");
}

/* -o above the maximum latency is an error, not cut (LDM's rule for the
 * command line), whether the latency is -m's or the registry's. */
static void test_offset_above_latency_refused(void **state) {
  ldmd_cmdline cl = no_options();
  ldmd_params p;
  char err[8192] = "";

  (void)state;
  registry_key("server", "max-latency", "600");
  cl.time_offset = 700;
  assert_int_equal(ldmd_settings_read(&cl, &p, err, sizeof err), -1);
  assert_non_null(strstr(err, "time offset 700 s (-o) exceeds max latency "
                              "600 s (" REG_MAX_LATENCY ")"));
  cl.max_latency = 650;
  assert_int_equal(ldmd_settings_read(&cl, &p, err, sizeof err), -1);
  assert_non_null(strstr(err, "exceeds max latency 650 s (-m)"));
  cl.max_latency = 700;
  read_ok(&cl, &p);
  assert_int_equal(p.time_offset, 700);
}

/* ---- values refused ---- */

/* A value the registry accepts but ldmd does not: the key, the file, the
 * value and the range are named. */
static void test_out_of_range_refused(void **state) {
  (void)state;
  registry_key("server", "max-clients", "0");
  REFUSED(REG_MAX_CLIENTS, reg_path, "is 0, not within 1..1000000");
  registry_key("server", "interval", "0");
  REFUSED(REG_INTERVAL, reg_path, "is 0, not within 1..2147483");
  registry_key("server", "max-per-address", "1000001");
  REFUSED(REG_MAX_PER_ADDRESS, "not within 1..1000000");
  registry_key("metrics", "max-per-address", "129");
  REFUSED(REG_METRICS_PER_ADDRESS, reg_path);
  registry_key("metrics", "max-per-address", "0");
  REFUSED(REG_METRICS_PER_ADDRESS, reg_path);
  /* A file edited by hand may hold what regutil would refuse. */
  registry_key("server", "check-sent", "each");
  REFUSED(REG_CHECK_SENT, reg_path, "is \"each\", not ONCE or EACH");
  registry_key("server", "check-sent", "ONCE");
  ldmd_cmdline cl = no_options();
  ldmd_params p;
  read_ok(&cl, &p);
  assert_false(p.check_each);
}

/* A value that is not of its key's type: the registry's own words. */
static void test_wrong_type_refused(void **state) {
  (void)state;
  registry_key("server", "port", "not-a-port");
  REFUSED("cannot get " REG_PORT " from the registry", reg_path);
  registry_key("metrics", "enable", "perhaps");
  REFUSED("cannot get " REG_METRICS_ENABLE);
  registry_key("server", "max-product-size", "12X");
  REFUSED("cannot get " REG_MAX_PRODUCT_SIZE);
}

/* Serving the figures with none kept. */
static void test_http_without_figures_refused(void **state) {
  (void)state;
  registry("<registry><metrics><enable>FALSE</enable>"
           "<http-address>9388</http-address></metrics></registry>\n");
  REFUSED(REG_METRICS_HTTP " is \"9388\" but " REG_METRICS_ENABLE
                           " is false: nothing to serve");
}

/* A registry that cannot be read at all: malformed, or empty. */
static void test_unreadable_registry_refused(void **state) {
  (void)state;
  registry("<registry><server><port>1388</server></registry>\n");
  REFUSED("cannot read the registry: ", reg_path);
  registry("");
  REFUSED("cannot read the registry: ", reg_path);
}

/* ---- what the children get ---- */

static void test_fill_hands_children_their_part(void **state) {
  ldmd_cmdline cl = no_options();
  ldmd_settings set;
  ldmd_params p;

  (void)state;
  registry(full_registry);
  read_ok(&cl, &p);
  memset(&set, 0, sizeof set);
  set.rpc_timeout = 77; /* not the reader's: left alone */
  set.metrics_slot = -1;
  ldmd_settings_fill(&p, &set);
  assert_ptr_equal(set.queue_path, p.queue);
  assert_ptr_equal(set.state_dir, p.state_dir);
  assert_int_equal(set.port, 1388);
  assert_int_equal(set.max_latency, 600);
  assert_int_equal(set.time_offset, 600);
  assert_int_equal(set.interval_ms, 7000);
  assert_int_equal(set.silence_ms, 120000);
  assert_int_equal(set.retry_min_ms, 8000);
  assert_int_equal(set.retry_max_ms, 90000);
  assert_int_equal(set.autoshift_ms, 45000);
  assert_int_equal(set.first_call_ms, 11000);
  assert_false(set.anti_dos);
  assert_true(set.zero_copy);
  assert_true(set.check_each);
  assert_int_equal(set.max_product, 2000000);
  assert_int_equal(set.max_product_memory, 3000000);
  assert_int_equal(set.rpc_timeout, 77);
  assert_int_equal(set.metrics_slot, -1);
  assert_null(set.conf);
  assert_null(set.metrics);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_defaults_without_a_registry_file),
      T(test_registry_values_replace_defaults),
      T(test_retry_max_raised_to_min),
      T(test_metrics_file_follows_queue),
      T(test_command_line_over_registry),
      T(test_offset_above_latency_refused),
      T(test_out_of_range_refused),
      T(test_wrong_type_refused),
      T(test_http_without_figures_refused),
      T(test_unreadable_registry_refused),
      T(test_fill_hands_children_their_part),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
