/*
 * tu_reg_keys.h - the registry's built-in keys as the tests list them:
 * LDM's 24, ldmd's own 8, 3 for its live figures, 4 against abuse and 3
 * for TLS, pqact's own 1, ldmadmin's own 1, the NATS bridge's 8 and
 * pqsurf's 4 (LDM's too), and ldmd's zero-copy, check-sent and feed-hub
 * (regutil.1), typed here independently of ldmd/site/registry_keys.c, so that
 * test_registry can check the registry has each of them and no other (it counts
 * them), and fuzz_registry reads each one.  A key added to the registry is
 * added here.
 */
#ifndef TEST_TU_REG_KEYS_H
#define TEST_TU_REG_KEYS_H

#include "ldmd/site/registry.h"

/* The keys, comma-separated: an array's initializer. */
#define TU_REG_BUILTIN_KEYS                                                    \
  REG_HOSTNAME, REG_QUEUE_PATH, REG_QUEUE_SIZE, REG_QUEUE_SLOTS,               \
      REG_LDMD_CONFIG, REG_IP_ADDR, REG_PORT, REG_MAX_CLIENTS,                 \
      REG_MAX_LATENCY, REG_TIME_OFFSET, REG_ANTI_DOS, REG_PQACT_CONFIG,        \
      REG_PQACT_DATADIR, REG_PQACT_MAX_CHILDREN, REG_SCOUR_CONFIG,             \
      REG_SCOUR_EXCLUDE, REG_LOG_FILE, REG_LOG_COUNT, REG_LOG_ROTATE,          \
      REG_INSERTION_CHECK, REG_RECONCILIATION, REG_DELETE_INFO_FILES,          \
      REG_METRICS_FILE, REG_METRICS_FILES, REG_METRICS_COUNT, REG_INTERVAL,    \
      REG_RESTART_MIN, REG_RESTART_MAX, REG_SILENCE_LIMIT, REG_RETRY_MIN,      \
      REG_RETRY_MAX, REG_AUTOSHIFT, REG_STATE_DIR, REG_QUEUE_MAX_SIZE,         \
      REG_METRICS_ENABLE, REG_METRICS_PATH, REG_METRICS_HTTP,                  \
      REG_METRICS_PER_ADDRESS, REG_MAX_PER_ADDRESS, REG_FIRST_CALL_LIMIT,      \
      REG_MAX_PRODUCT_SIZE, REG_MAX_PRODUCT_MEMORY, REG_USER, REG_TLS_CERT,    \
      REG_TLS_KEY, REG_TLS_CA, REG_NATS_URL, REG_NATS_STREAM, REG_NATS_PREFIX, \
      REG_NATS_DURABLE, REG_NATS_CREDENTIALS, REG_NATS_TOKEN_FILE,             \
      REG_NATS_CA, REG_NATS_CERT, REG_NATS_KEY, REG_SURFQUEUE_PATH,            \
      REG_SURFQUEUE_SIZE, REG_PQSURF_CONFIG, REG_PQSURF_DATADIR,               \
      REG_ZERO_COPY, REG_CHECK_SENT, REG_FEED_HUB

#endif /* TEST_TU_REG_KEYS_H */
