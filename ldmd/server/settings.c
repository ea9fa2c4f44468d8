/*
 * settings.c - ldmd_settings_read() (settings.h): the registry opened
 * once, each setting the command line left open read from it and checked,
 * the first failure kept in the caller's buffer (a reader that has failed
 * reads nothing more), then the rules that tie settings together.  Moved
 * out of ldmd.c so that the process's life and the reading of its
 * settings are apart, and a unit test can drive the reading
 * (test/server/test_settings.c).
 */
#include "ldmd/server/settings.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ldmd/metrics/metrics.h"
#include "ldmd/server/metrics_bounds.h"
#include "ldmd/site/registry.h"

/* The registry being read, and the first failure. */
typedef struct reader {
  ldm_registry *reg;
  char *err;
  size_t errlen;
  bool failed; /* err holds why; nothing more is read */
} reader;

static void refuse(reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Keep the first failure in the caller's buffer; the reader stops. */
static void refuse(reader *r, const char *fmt, ...) {
  va_list ap;

  if (r->failed)
    return;
  va_start(ap, fmt);
  vsnprintf(r->err, r->errlen, fmt, ap);
  va_end(ap);
  r->failed = true;
}

/* A getter's failure: the registry handle says why. */
static void cannot_get(reader *r, const char *key) {
  refuse(r, "cannot get %s from the registry %s: %s", key, ldm_reg_path(r->reg),
         ldm_reg_error(r->reg));
}

/* An unsigned key within lo..hi into *out. */
static void get_uint(reader *r, const char *key, long lo, long hi, long *out) {
  uint64_t v;

  if (r->failed)
    return;
  if (ldm_reg_get_uint(r->reg, key, &v) != LDM_REG_OK) {
    cannot_get(r, key);
    return;
  }
  if (v < (uint64_t)lo || v > (uint64_t)hi) {
    refuse(r, "registry %s: %s is %llu, not within %ld..%ld",
           ldm_reg_path(r->reg), key, (unsigned long long)v, lo, hi);
    return;
  }
  *out = (long)v;
}

static void get_string(reader *r, const char *key, char *buf, size_t len) {
  if (!r->failed && ldm_reg_get_string(r->reg, key, buf, len) != LDM_REG_OK)
    cannot_get(r, key);
}

static void get_bool(reader *r, const char *key, bool *out) {
  if (!r->failed && ldm_reg_get_bool(r->reg, key, out) != LDM_REG_OK)
    cannot_get(r, key);
}

static void get_size(reader *r, const char *key, uint64_t *out) {
  if (!r->failed && ldm_reg_get_size(r->reg, key, out) != LDM_REG_OK)
    cannot_get(r, key);
}

/* /server/check-sent: ONCE or EACH (a file edited by hand may hold
 * another value: refused, not taken for either). */
static void get_check_sent(reader *r, bool *each) {
  char v[64] = "";

  get_string(r, REG_CHECK_SENT, v, sizeof v);
  if (r->failed)
    return;
  *each = strcmp(v, "EACH") == 0;
  if (!*each && strcmp(v, "ONCE") != 0)
    refuse(r, "registry %s: %s is \"%s\", not ONCE or EACH",
           ldm_reg_path(r->reg), REG_CHECK_SENT, v);
}

/* A timer key of ldmd's own, in seconds, into *ms in milliseconds. */
static void get_seconds(reader *r, const char *key, int *ms) {
  long v = 0;

  get_uint(r, key, 1, REG_SECONDS_MAX, &v);
  *ms = (int)(v * 1000);
}

/* A number of the command line, or the key's if it gave none (< 0). */
static void get_number(reader *r, long given, const char *key, long lo, long hi,
                       long *out) {
  if (given >= 0)
    *out = given;
  else
    get_uint(r, key, lo, hi, out);
}

/* A string of the command line, or the key's if it gave none (NULL). */
static void get_text(reader *r, const char *given, const char *key, char *buf,
                     size_t len) {
  if (given == NULL)
    get_string(r, key, buf, len);
  else if ((size_t)snprintf(buf, len, "%s", given) >= len)
    refuse(r, "the command line's %s is too long (%zu bytes at most): %s", key,
           len - 1, given);
}

/* LDM's keys: the command line's options over them.  The registry's time
 * offset is cut to the maximum latency, as LDM does. */
static void ldm_keys(reader *r, const ldmd_cmdline *cl, ldmd_params *p) {
  long port = 0, latency = 0, offset = 0, clients = 0;

  get_number(r, cl->port, REG_PORT, 1, 65535, &port);
  get_number(r, cl->max_latency, REG_MAX_LATENCY, 1, INT_MAX, &latency);
  get_number(r, cl->max_clients, REG_MAX_CLIENTS, 1, 1000000, &clients);
  get_number(r, cl->time_offset, REG_TIME_OFFSET, 0, INT_MAX, &offset);
  if (cl->time_offset < 0 && offset > latency)
    offset = latency;
  get_text(r, cl->queue, REG_QUEUE_PATH, p->queue, sizeof p->queue);
  get_text(r, cl->conf, REG_LDMD_CONFIG, p->conf_path, sizeof p->conf_path);
  p->ip_addr[0] = '\0';
  if (!cl->have_addrs)
    get_string(r, REG_IP_ADDR, p->ip_addr, sizeof p->ip_addr);
  p->port = (unsigned)port;
  p->max_latency = (unsigned)latency;
  p->time_offset = (unsigned)offset;
  p->max_clients = (unsigned)clients;
}

/* ldmd's own keys (ldmd.8, REGISTRY): timers, limits, the state
 * directory, the user. */
static void own_keys(reader *r, const ldmd_cmdline *cl, ldmd_params *p) {
  long per = 0;

  get_seconds(r, REG_INTERVAL, &p->interval_ms);
  get_seconds(r, REG_RESTART_MIN, &p->restart_min_ms);
  get_seconds(r, REG_RESTART_MAX, &p->restart_max_ms);
  get_seconds(r, REG_SILENCE_LIMIT, &p->silence_ms);
  get_seconds(r, REG_RETRY_MIN, &p->retry_min_ms);
  get_seconds(r, REG_RETRY_MAX, &p->retry_max_ms);
  get_seconds(r, REG_AUTOSHIFT, &p->autoshift_ms);
  get_seconds(r, REG_FIRST_CALL_LIMIT, &p->first_call_ms);
  get_bool(r, REG_ANTI_DOS, &p->anti_dos);
  get_bool(r, REG_ZERO_COPY, &p->zero_copy);
  get_bool(r, REG_FEED_HUB, &p->feed_hub);
  get_check_sent(r, &p->check_each);
  get_size(r, REG_MAX_PRODUCT_SIZE, &p->max_product);
  get_size(r, REG_MAX_PRODUCT_MEMORY, &p->max_product_memory);
  get_uint(r, REG_MAX_PER_ADDRESS, 1, 1000000, &per);
  p->max_per_address = (unsigned)per;
  get_string(r, REG_STATE_DIR, p->state_dir, sizeof p->state_dir);
  get_text(r, cl->user, REG_USER, p->user, sizeof p->user);
  if (p->restart_max_ms < p->restart_min_ms)
    p->restart_max_ms = p->restart_min_ms;
  if (p->retry_max_ms < p->retry_min_ms)
    p->retry_max_ms = p->retry_min_ms;
}

/* The live figures' keys and TLS's. */
static void figures_and_tls(reader *r, ldmd_params *p) {
  long per = 0;

  get_bool(r, REG_METRICS_ENABLE, &p->metrics_on);
  get_string(r, REG_METRICS_PATH, p->metrics_path, sizeof p->metrics_path);
  get_string(r, REG_METRICS_HTTP, p->http_addr, sizeof p->http_addr);
  get_uint(r, REG_METRICS_PER_ADDRESS, 1, LDMD_MB_CONNECTIONS, &per);
  p->http_per_address = (unsigned)per;
  get_string(r, REG_TLS_CERT, p->tls_cert, sizeof p->tls_cert);
  get_string(r, REG_TLS_KEY, p->tls_key, sizeof p->tls_key);
  get_string(r, REG_TLS_CA, p->tls_ca, sizeof p->tls_ca);
}

/* The rules that tie settings read apart, once all are read. */
static void tie(reader *r, const ldmd_cmdline *cl, ldmd_params *p) {
  if (r->failed)
    return;
  if (p->time_offset > p->max_latency) {
    refuse(r, "time offset %u s (-o) exceeds max latency %u s (%s)",
           p->time_offset, p->max_latency,
           cl->max_latency >= 0 ? "-m" : REG_MAX_LATENCY);
    return;
  }
  if (p->metrics_path[0] == '\0' &&
      ldmm_default_path(p->queue, p->metrics_path, sizeof p->metrics_path) !=
          0) {
    refuse(r, "cannot name the metrics file of %s: path too long", p->queue);
    return;
  }
  if (!p->metrics_on && p->http_addr[0] != '\0')
    refuse(r, "registry %s: %s is \"%s\" but %s is false: nothing to serve",
           ldm_reg_path(r->reg), REG_METRICS_HTTP, p->http_addr,
           REG_METRICS_ENABLE);
}

int ldmd_settings_read(const ldmd_cmdline *cl, ldmd_params *p, char *err,
                       size_t errlen) {
  reader r = {.err = err, .errlen = errlen};
  char why[512];

  memset(p, 0, sizeof *p);
  if (ldm_reg_open(NULL, &r.reg, why, sizeof why) != LDM_REG_OK) {
    snprintf(err, errlen, "cannot read the registry: %s", why);
    return -1;
  }
  ldm_keys(&r, cl, p);
  own_keys(&r, cl, p);
  figures_and_tls(&r, p);
  tie(&r, cl, p);
  ldm_reg_close(r.reg);
  return r.failed ? -1 : 0;
}

void ldmd_settings_fill(const ldmd_params *p, ldmd_settings *set) {
  set->queue_path = p->queue;
  set->state_dir = p->state_dir;
  set->port = p->port;
  set->max_latency = p->max_latency;
  set->time_offset = p->time_offset;
  set->interval_ms = p->interval_ms;
  set->silence_ms = p->silence_ms;
  set->retry_min_ms = p->retry_min_ms;
  set->retry_max_ms = p->retry_max_ms;
  set->autoshift_ms = p->autoshift_ms;
  set->first_call_ms = p->first_call_ms;
  set->anti_dos = p->anti_dos;
  set->zero_copy = p->zero_copy;
  set->feed_hub = p->feed_hub;
  set->hub_fd = -1; /* ldmd.c: once the hub's channel is made */
  set->check_each = p->check_each;
  set->max_product = p->max_product;
  set->max_product_memory = p->max_product_memory;
}
