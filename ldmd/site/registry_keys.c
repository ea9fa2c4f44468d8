/*
 * registry_keys.c - the registry's built-in keys: LDM's keys and ldmd's own,
 * each with its default and the type a value set for it must have (the one
 * place they are written; regutil lists them), and the parsers of values:
 * unsigned integers, sizes with LDM's suffixes, booleans.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldmd/site/registry_internal.h"

/* ---- the built-in keys: defaults and the types a set must respect ---- */

static const char *const reconciliation_modes[] = {
    "do nothing", "increase queue", "decrease maximum latency", NULL};
static const char *const check_sent_modes[] = {"ONCE", "EACH", NULL};

const struct reg_default ldm__reg_defaults[] = {
    {REG_HOSTNAME, NULL, RT_HOSTNAME, 0, 0, NULL},
    {REG_QUEUE_PATH, "/dev/shm/ldm.pq", RT_STRING, 0, 0, NULL},
    {REG_QUEUE_SIZE, "500M", RT_SIZE, 0, 0, NULL},
    {REG_QUEUE_SLOTS, "default", RT_SLOTS, 0, 0, NULL},
    /* ours: the cap of "ldmadmin vetqueuesize" (LDM issue #126) */
    {REG_QUEUE_MAX_SIZE, "40G", RT_SIZE, 0, 0, NULL},
    {REG_LDMD_CONFIG, "$LDMHOME/etc/ldmd.conf", RT_STRING, 0, 0, NULL},
    {REG_IP_ADDR, "0.0.0.0", RT_STRING, 0, 0, NULL},
    {REG_PORT, "388", RT_UINT, 1, 65535, NULL},
    {REG_MAX_CLIENTS, "256", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_MAX_LATENCY, "3600", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_TIME_OFFSET, "3600", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_ANTI_DOS, "TRUE", RT_BOOL, 0, 0, NULL},
    {REG_PQACT_CONFIG, "$LDMHOME/etc/pqact.conf", RT_STRING, 0, 0, NULL},
    {REG_PQACT_DATADIR, "$LDMHOME/var/data", RT_STRING, 0, 0, NULL},
    /* ours: PQACT_CHILDREN_CAP of pqutils/pqact/children.h */
    {REG_PQACT_MAX_CHILDREN, "32", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_SURFQUEUE_PATH, "$LDMHOME/var/queues/pqsurf.pq", RT_STRING, 0, 0,
     NULL},
    {REG_SURFQUEUE_SIZE, "2M", RT_SIZE, 0, 0, NULL},
    {REG_PQSURF_CONFIG, "$LDMHOME/etc/pqsurf.conf", RT_STRING, 0, 0, NULL},
    {REG_PQSURF_DATADIR, "$LDMHOME/var/data", RT_STRING, 0, 0, NULL},
    {REG_SCOUR_CONFIG, "$LDMHOME/etc/scour.conf", RT_STRING, 0, 0, NULL},
    {REG_SCOUR_EXCLUDE, "$LDMHOME/etc/scour_excludes.conf", RT_STRING, 0, 0,
     NULL},
    {REG_LOG_FILE, "$LDMHOME/var/logs/ldmd.log", RT_STRING, 0, 0, NULL},
    {REG_LOG_COUNT, "7", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_LOG_ROTATE, "1", RT_BOOL, 0, 0, NULL},
    {REG_INSERTION_CHECK, "300", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_RECONCILIATION, "do nothing", RT_CHOICE, 0, 0, reconciliation_modes},
    {REG_DELETE_INFO_FILES, "0", RT_BOOL, 0, 0, NULL},
    {REG_METRICS_FILE, "$LDMHOME/var/logs/metrics.txt", RT_STRING, 0, 0, NULL},
    {REG_METRICS_FILES, "$LDMHOME/var/logs/metrics.txt*", RT_STRING, 0, 0,
     NULL},
    {REG_METRICS_COUNT, "4", RT_UINT, 1, UINT32_MAX, NULL},
    /* ldmd's own keys (ldmd.8): LDM's values where LDM has one. */
    {REG_INTERVAL, "30", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RESTART_MIN, "1", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RESTART_MAX, "60", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_SILENCE_LIMIT, "300", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RETRY_MIN, "1", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RETRY_MAX, "60", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_AUTOSHIFT, "60", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_STATE_DIR, "", RT_STRING, 0, 0, NULL}, /* "": the queue's directory */
    /* ldmd's live figures (docs/metrics.md) */
    {REG_METRICS_ENABLE, "TRUE", RT_BOOL, 0, 0, NULL},
    {REG_METRICS_PATH, "", RT_STRING, 0, 0, NULL}, /* "": <queue>.metrics */
    {REG_METRICS_HTTP, "", RT_STRING, 0, 0, NULL}, /* "": not served */
    {REG_METRICS_PER_ADDRESS, "8", RT_UINT, 1, 128, NULL}, /* of 128 */
    /* ldmd's limits against abuse (docs/security.md): none is LDM's. */
    {REG_MAX_PER_ADDRESS, "32", RT_UINT, 1, 1000000, NULL},
    {REG_FIRST_CALL_LIMIT, "30", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_MAX_PRODUCT_SIZE, "0", RT_SIZE, 0, 0, NULL}, /* 0: the queue's size */
    {REG_MAX_PRODUCT_MEMORY, "16M", RT_SIZE, 0, 0, NULL},
    /* ours: sendfile of products to plain downstreams */
    {REG_ZERO_COPY, "FALSE", RT_BOOL, 0, 0, NULL},
    /* ours: the plain primary feeds served by one process (hub.h) */
    {REG_FEED_HUB, "TRUE", RT_BOOL, 0, 0, NULL},
    /* ours: a feed's check of the products it sends (pq_set_verify()) */
    {REG_CHECK_SENT, "ONCE", RT_CHOICE, 0, 0, check_sent_modes},
    {REG_USER, "", RT_STRING, 0, 0, NULL},     /* "": ldm, if it exists */
    {REG_TLS_CERT, "", RT_STRING, 0, 0, NULL}, /* "": TLS off */
    {REG_TLS_KEY, "", RT_STRING, 0, 0, NULL},  /* "": in the cert's file */
    {REG_TLS_CA, "", RT_STRING, 0, 0, NULL},
    /* the bridge to NATS JetStream (pqutils/nats/ldmnats.h): none is LDM's */
    {REG_NATS_URL, "nats://127.0.0.1:4222", RT_STRING, 0, 0, NULL},
    {REG_NATS_STREAM, "LDM", RT_STRING, 0, 0, NULL},
    {REG_NATS_PREFIX, "ldm", RT_STRING, 0, 0, NULL},
    {REG_NATS_DURABLE, "nats2pq", RT_STRING, 0, 0, NULL},
    {REG_NATS_CREDENTIALS, "", RT_STRING, 0, 0, NULL}, /* "": none */
    {REG_NATS_TOKEN_FILE, "", RT_STRING, 0, 0, NULL},  /* "": no token */
    {REG_NATS_CA, "", RT_STRING, 0, 0, NULL},          /* "": no TLS CA */
    {REG_NATS_CERT, "", RT_STRING, 0, 0, NULL},
    {REG_NATS_KEY, "", RT_STRING, 0, 0, NULL},
};
const size_t ldm__reg_ndefaults =
    sizeof ldm__reg_defaults / sizeof ldm__reg_defaults[0];

const struct reg_default *ldm__reg_find_default(const char *key) {
  for (size_t i = 0; i < ldm__reg_ndefaults; i++)
    if (strcmp(ldm__reg_defaults[i].key, key) == 0)
      return &ldm__reg_defaults[i];
  return NULL;
}

/* ---- value parsers ---- */

/*
 * Unsigned integers: decimal digits and nothing else, no sign, at most
 * UINT64_MAX.  Base 10 always, where LDM's registry reads its integers with
 * strtoul base 0 ("0600" octal, 384; "0x12c" hexadecimal): every program
 * here (ldmd's options and the registry's keys, the queue utilities'
 * options, pqact's /pqact/max-children, ldmadmin through regutil -T uint)
 * reads an integer with this one function, so that a value means the same
 * to all of them, as a size does; and a leading zero read as octal only
 * surprises an operator.  No LDM site's value is known to need hex or
 * octal (the LDM references show none).
 */
static const char *uint_parse(const char *s, uint64_t *value) {
  static const char not_uint[] = "not an unsigned integer (decimal digits)";
  char *end;
  unsigned long long v;

  if (s == NULL || !isdigit((unsigned char)*s))
    return not_uint;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return "not an unsigned integer: integers are decimal, 0x (hexadecimal) "
           "is not taken";
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno == ERANGE)
    return "too large: more than 18446744073709551615";
  if (*end != '\0')
    return not_uint;
  *value = (uint64_t)v;
  return NULL;
}

const char *ldm_uint_problem(const char *s) {
  uint64_t v;
  return uint_parse(s, &v);
}

int ldm_parse_uint(const char *s, uint64_t *value) {
  uint64_t v;

  if (value == NULL || uint_parse(s, &v) != NULL)
    return -1;
  *value = v;
  return 0;
}

/*
 * Sizes: decimal digits, then k, M or G in either case (x1e3, x1e6, x1e9,
 * as LDM).  Base 10 always: LDM's registry reads numbers with strtoul base
 * 0, which made "0500M" octal (320 MB) and took "0x10M"; every program
 * here, ldmadmin through regutil -T too, reads a size with this one
 * function, so a size means the same everywhere and a leading zero is only
 * a leading zero.
 */
static const char *size_parse(const char *s, uint64_t *value) {
  static const char not_size[] =
      "not a size (decimal digits with an optional k, M or G)";
  static const char too_large[] =
      "too large: more than 18446744073709551615 bytes";
  char *end;
  unsigned long long v;
  uint64_t mult = 1;

  if (s == NULL || !isdigit((unsigned char)*s))
    return not_size;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return "not a size: sizes are decimal, 0x (hexadecimal) is not taken";
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno == ERANGE)
    return too_large;
  switch (*end) {
  case '\0':
    break;
  case 'k':
  case 'K':
    mult = 1000;
    end++;
    break;
  case 'm':
  case 'M':
    mult = 1000 * 1000;
    end++;
    break;
  case 'g':
  case 'G':
    mult = 1000 * 1000 * 1000;
    end++;
    break;
  default:
    return not_size;
  }
  if (*end != '\0')
    return not_size;
  if (v > UINT64_MAX / mult)
    return too_large;
  *value = (uint64_t)v * mult;
  return NULL;
}

const char *ldm_size_problem(const char *s) {
  uint64_t v;
  return size_parse(s, &v);
}

int ldm_parse_size(const char *s, uint64_t *value) {
  uint64_t v;

  if (value == NULL || size_parse(s, &v) != NULL)
    return -1;
  *value = v;
  return 0;
}

/*
 * LDM's booleans: words either way, or any integer (non-zero is true).  The
 * rule is LDM's registry's (its registry/ code; the LDM-6 reference's
 * registry section states it: "TRUE/YES/AFIRMATIVE/1 versus
 * FALSE/NO/NEGATIVE/0, case-insensitive, or any integer"), plus the
 * correct spelling AFFIRMATIVE.  The integer is read as every integer is,
 * ldm_parse_uint() after an optional sign: decimal ("08" is true), not
 * strtol base 0 as LDM's registry.  ldmadmin reads
 * /log/rotate through regutil -T bool, so it follows the same rule.
 */
int ldm_parse_bool(const char *s, bool *value) {
  static const char *const yes[] = {"TRUE", "YES", "AFIRMATIVE", "AFFIRMATIVE",
                                    NULL};
  static const char *const no[] = {"FALSE", "NO", "NEGATIVE", NULL};
  uint64_t v;

  for (size_t i = 0; yes[i] != NULL; i++)
    if (strcasecmp(s, yes[i]) == 0) {
      *value = true;
      return 0;
    }
  for (size_t i = 0; no[i] != NULL; i++)
    if (strcasecmp(s, no[i]) == 0) {
      *value = false;
      return 0;
    }
  if (*s == '-' || *s == '+')
    s++;
  if (ldm_parse_uint(s, &v) != 0)
    return -1;
  *value = v != 0;
  return 0;
}

/* Does value suit the key's type?  If not, why (for "value ... is %s"). */
const char *ldm__reg_type_mismatch(const struct reg_default *d,
                                   const char *value) {
  uint64_t u;
  bool b;

  switch (d->type) {
  case RT_STRING:
    return NULL;
  case RT_HOSTNAME:
    return *value == '\0' ? "empty" : NULL;
  case RT_UINT:
    if (ldm_parse_uint(value, &u) != 0)
      return ldm_uint_problem(value);
    return u < d->min || u > d->max ? "out of range" : NULL;
  case RT_SIZE:
    return ldm_size_problem(value);
  case RT_BOOL:
    return ldm_parse_bool(value, &b) != 0 ? "not a boolean (TRUE or FALSE)"
                                          : NULL;
  case RT_SLOTS:
    if (strcmp(value, "default") == 0)
      return NULL;
    return ldm_parse_uint(value, &u) != 0 || u == 0
               ? "neither \"default\" nor a positive decimal integer"
               : NULL;
  case RT_CHOICE:
    for (size_t i = 0; d->choices[i] != NULL; i++)
      if (strcmp(value, d->choices[i]) == 0)
        return NULL;
    return "not one of the allowed values";
  }
  return NULL;
}
