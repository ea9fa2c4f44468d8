/*
 * settings.h - ldmd's settings as the top-level process starts with them:
 * each one from the command line if it says, else from the registry
 * (ldmd/site/registry.h, found as ldm_reg_open() finds it: $LDM_REGISTRY,
 * $LDM_REGISTRY_DIR, $LDMHOME/etc/registry.xml), else the registry's
 * built-in default.  LDM's keys (the port, the queue, ldmd.conf, the
 * latency, the time offset, the connections at most, the address to
 * listen on) and ldmd's own (its timers, the requesters' state directory,
 * the limits against abuse, the live figures, TLS, the user to run as;
 * ldmd.8, REGISTRY), each checked against its range, and the rules that
 * tie them: a time offset from the registry is cut to the maximum
 * latency (LDM's rule) while one from -o above it is an error; a maximum
 * below its minimum is raised to it; an HTTP address for the figures
 * needs the figures on.
 *
 * The reader neither logs nor exits: it reports the first setting it
 * cannot take in the caller's buffer, naming the key, the registry file
 * and the range, so that ldmd logs it and a test reads it.  Top-level
 * process, before any child exists; not thread-safe (the registry handle
 * and the environment).
 */
#ifndef LDMD_SERVER_SETTINGS_H
#define LDMD_SERVER_SETTINGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldmd/server/server.h"

/** What the command line says of the settings the registry also holds.
 *  Each field given takes the place of its key; its "unset" value (-1,
 *  NULL, false) leaves the key's. */
typedef struct ldmd_cmdline {
  long port;         /**< -P (0-65535), or -1: /server/port */
  long max_latency;  /**< -m, seconds, or -1: /server/max-latency */
  long time_offset;  /**< -o, seconds, or -1: /server/time-offset */
  long max_clients;  /**< -M, or -1: /server/max-clients */
  const char *queue; /**< -q, or NULL: /queue/path */
  const char *conf;  /**< the argument, or NULL: /server/config-path */
  const char *user;  /**< -U, or NULL: /server/user */
  bool have_addrs;   /**< -I given: /server/ip-addr is not read */
} ldmd_cmdline;

/** The settings, resolved: what ldmd_settings_read() fills. */
typedef struct ldmd_params {
  /* LDM's keys, or the command line. */
  char queue[PATH_MAX];     /**< the product queue */
  char conf_path[PATH_MAX]; /**< ldmd.conf */
  char ip_addr[256];        /**< the address to listen on; "" with -I */
  unsigned port;            /**< 1-65535 (0 from -P: any) */
  unsigned max_latency;     /**< seconds, 1-INT_MAX */
  unsigned time_offset;     /**< seconds, at most max_latency */
  unsigned max_clients;     /**< connection processes at once, 1-1000000 */
  /* ldmd's own keys (-U for the user). */
  int interval_ms;          /**< /server/interval */
  int restart_min_ms;       /**< /server/restart-min */
  int restart_max_ms;       /**< /server/restart-max, at least restart_min_ms */
  int silence_ms;           /**< /requester/silence-limit */
  int retry_min_ms;         /**< /requester/retry-min */
  int retry_max_ms;         /**< /requester/retry-max, at least retry_min_ms */
  int autoshift_ms;         /**< /requester/autoshift-interval */
  int first_call_ms;        /**< /server/first-call-limit */
  bool anti_dos;            /**< /server/enable-anti-DOS */
  bool zero_copy;           /**< /server/zero-copy */
  bool feed_hub;            /**< /server/feed-hub */
  bool check_each;          /**< /server/check-sent is EACH (not ONCE) */
  uint64_t max_product;     /**< /server/max-product-size, bytes; 0: none */
  unsigned max_per_address; /**< /server/max-per-address, 1-1000000 */
  char state_dir[PATH_MAX]; /**< /requester/state-dir; "": the queue's */
  char user[256];           /**< -U or /server/user; "": none named */
  bool metrics_on;          /**< /metrics/enable */
  char metrics_path[PATH_MAX]; /**< /metrics/live-path, or <queue>.metrics */
  char http_addr[256];         /**< /metrics/http-address; "": not served */
  unsigned http_per_address;   /**< /metrics/max-per-address, 1-128 */
  char tls_cert[PATH_MAX];     /**< /tls/cert; "": TLS off */
  char tls_key[PATH_MAX];      /**< /tls/key; "": in the cert's file */
  char tls_ca[PATH_MAX];       /**< /tls/ca; "": none */
  uint64_t max_product_memory; /**< /server/max-product-memory, bytes */
} ldmd_params;

/**
 * Read the settings: cl's where it gives them, else the registry's.
 * @param cl  the command line's (not NULL)
 * @param p   filled, whole, on success; partly on failure
 * @param err the first setting refused: the registry that cannot be read,
 *            a key that cannot be got ("cannot get KEY from the registry
 *            FILE: why"), a value out of its range ("registry FILE: KEY is
 *            V, not within LO..HI"), -o above the maximum latency, an
 *            HTTP address with the figures off, a metrics file name too
 *            long
 * @return 0; -1 with a message in err
 */
int ldmd_settings_read(const ldmd_cmdline *cl, ldmd_params *p, char *err,
                       size_t errlen);

/**
 * Copy into set what the children take of p: the queue and state
 * directory (pointers into p, which must outlive set), the port, the
 * latency and offset, the timers a connection or requester keeps, the
 * limits on products.  Nothing else of set is touched.
 */
void ldmd_settings_fill(const ldmd_params *p, ldmd_settings *set);

#endif /* LDMD_SERVER_SETTINGS_H */
