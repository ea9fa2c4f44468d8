/*
 * registry.h - the LDM registry: site parameters in an XML file read with
 * libxml2, with LDM's key paths and defaults (docs/protocol.md §16)
 * and those of ldmd's own keys.
 *
 * A key path /a/b/c is the text of <registry><a><b><c>, without surrounding
 * white space; an element with elements inside, or with only comments (keys
 * commented out), is a node, not a key; <c/> is a key whose value is "".  A
 * key missing from the file, or a missing file, gives the built-in default;
 * an empty (or blank) file is an error, and a malformed one an error that
 * names the file and line.  The
 * file is read under a shared fcntl lock and written (re-read, changed,
 * written whole to a temporary file renamed into place) under an exclusive
 * one, so concurrent writers do not lose each other's changes.  A registry
 * reached through a symbolic link is replaced where the link points.
 *
 * Where the registry is: the path given to ldm_reg_open(), else
 * $LDM_REGISTRY (a file path), else $LDM_REGISTRY_DIR/registry.xml, else
 * $LDMHOME/etc/registry.xml, with LDMHOME from the environment or
 * LDM_HOME_DEFAULT.  Tests point LDM_REGISTRY at a scratch file so they never
 * touch a system path.
 *
 * Values: strings; unsigned integers (strtoull base 0); sizes, decimal
 * digits (base 10 always, unlike LDM's base 0) with a suffix k, M or G in
 * either case (x1e3, x1e6, x1e9, as LDM);
 * booleans TRUE/YES/AFIRMATIVE/AFFIRMATIVE or FALSE/NO/NEGATIVE
 * (case-insensitive) or any integer, non-zero being true; times
 * YYYYMMDDThhmmss[.uuuuuu]; signatures as 32 hex digits.  Defaults that name
 * files contain $LDMHOME, expanded when read; /hostname defaults to
 * gethostname() at the time it is read.  The built-in keys (LDM's and
 * ldmd's own, below) have types that ldm_reg_set_string() enforces (a port
 * is an integer 1-65535, /queue/size and /queue/max-size sizes, /queue/slots
 * "default" or an integer, booleans booleans, /reconciliation-mode one of LDM's
 * three modes, ldmd's timers integers 1-REG_SECONDS_MAX); other keys are
 * strings.
 *
 * Not thread-safe per handle; safe across fork() for reading.
 */
#ifndef LDMD_SITE_REGISTRY_H
#define LDMD_SITE_REGISTRY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LDM_HOME_DEFAULT "/var/lib/ldm"

/* Key paths (LDM's names). */
#define REG_HOSTNAME "/hostname"
#define REG_QUEUE_PATH "/queue/path"   /* default /dev/shm/ldm.pq */
#define REG_QUEUE_SIZE "/queue/size"   /* default 500M */
#define REG_QUEUE_SLOTS "/queue/slots" /* default "default" */
/* Ours, not LDM's: the largest /queue/size "ldmadmin vetqueuesize" grows
 * the queue to (a size, default 40G: pqutils/ops/ldmadmin.1). */
#define REG_QUEUE_MAX_SIZE "/queue/max-size"
#define REG_LDMD_CONFIG "/server/config-path"
#define REG_IP_ADDR "/server/ip-addr"
#define REG_PORT "/server/port"
#define REG_MAX_CLIENTS "/server/max-clients"
#define REG_MAX_LATENCY "/server/max-latency"
#define REG_TIME_OFFSET "/server/time-offset"
#define REG_ANTI_DOS "/server/enable-anti-DOS"
#define REG_PQACT_CONFIG "/pqact/config-path"
#define REG_PQACT_DATADIR "/pqact/datadir-path"
/* Ours, not LDM's: the most EXEC and PIPE -close children pqact runs at
 * once (pqutils/pqact/pqact.1); 0 for no cap. */
#define REG_PQACT_MAX_CHILDREN "/pqact/max-children"
/* LDM's SURFQUEUE_PATH, SURFQUEUE_SIZE, PQSURF_CONFIG_PATH and
 * PQSURF_DATADIR_PATH: pqsurf's private queue and its pqact's
 * configuration and data directory (pqutils/surf/pqsurf.1). */
#define REG_SURFQUEUE_PATH "/surf-queue/path"
#define REG_SURFQUEUE_SIZE "/surf-queue/size"
#define REG_PQSURF_CONFIG "/pqsurf/config-path"
#define REG_PQSURF_DATADIR "/pqsurf/datadir-path"
/* LDM's SCOUR_CONFIG_PATH and SCOUR_EXCLUDE_PATH (pqutils/ops/scour.1). */
#define REG_SCOUR_CONFIG "/scour/config-path"
#define REG_SCOUR_EXCLUDE "/scour/exclude-path"
#define REG_LOG_FILE "/log/file"
#define REG_LOG_COUNT "/log/count"
#define REG_LOG_ROTATE "/log/rotate"
#define REG_INSERTION_CHECK "/insertion-check-interval"
#define REG_RECONCILIATION "/reconciliation-mode"
#define REG_DELETE_INFO_FILES "/delete-info-files"
/* LDM's METRICS_FILE, METRICS_FILES (a glob) and METRICS_COUNT, of
 * ldmadmin's addmetrics, plotmetrics and newmetrics
 * (pqutils/ops/ldmadmin.1). */
#define REG_METRICS_FILE "/metrics/file"
#define REG_METRICS_FILES "/metrics/files"
#define REG_METRICS_COUNT "/metrics/count"

/* Keys of ldmd's own, not LDM's (ldmd.8 says what they do; their defaults
 * are in the table in registry.c, which regutil lists): timers in whole
 * seconds from 1 to REG_SECONDS_MAX, and the requesters' state directory
 * ("" for the queue's directory). */
#define REG_INTERVAL "/server/interval"
#define REG_RESTART_MIN "/server/restart-min"
#define REG_RESTART_MAX "/server/restart-max"
#define REG_SILENCE_LIMIT "/requester/silence-limit"
#define REG_RETRY_MIN "/requester/retry-min"
#define REG_RETRY_MAX "/requester/retry-max"
#define REG_AUTOSHIFT "/requester/autoshift-interval"
#define REG_STATE_DIR "/requester/state-dir"
/* ldmd's live figures (docs/metrics.md, ldmd.8): whether they are kept,
 * the file they live in ("": the queue's path with ".metrics" added), and
 * where they are served over HTTP ("": nowhere; "PORT" is 127.0.0.1:PORT,
 * else "HOST:PORT" or "[HOST]:PORT" with a numeric host). */
#define REG_METRICS_ENABLE "/metrics/enable"
#define REG_METRICS_PATH "/metrics/live-path"
#define REG_METRICS_HTTP "/metrics/http-address"
/* The HTTP endpoint's connections from one client address (docs/security.md,
 * "The metrics endpoint"): raise it behind a proxy or NAT that many
 * scrapers or browsers share. */
#define REG_METRICS_PER_ADDRESS "/metrics/max-per-address"
/* ldmd's own limits against abusive peers (ldmd.8, docs/security.md): the
 * connections of one peer address, the time a new connection has for its
 * first whole call (seconds), the largest product a peer may send (a size;
 * 0: what the queue can hold, as LDM), and the user ldmd started as root
 * becomes ("": ldm if there is such a user). */
#define REG_MAX_PER_ADDRESS "/server/max-per-address"
#define REG_FIRST_CALL_LIMIT "/server/first-call-limit"
#define REG_MAX_PRODUCT_SIZE "/server/max-product-size"
#define REG_MAX_PRODUCT_MEMORY "/server/max-product-memory"
/* Ours: product data of plain feeds sent from the queue file by reference
 * (sendfile), each product pinned until its peer has it (docs/protocol.md,
 * section 6.8). */
#define REG_ZERO_COPY "/server/zero-copy"
/* Ours: the plain primary feeds (LDM-6 FEEDME without TLS, zero-copy off)
 * of every connection sent by a process per CPU, the feed hubs, each of
 * which reads a product once for all of its feeds (docs/protocol.md,
 * section 6.9). */
#define REG_FEED_HUB "/server/feed-hub"
/* Ours: which products a feed checks against their CRC32C before it sends
 * them (docs/security.md, "Damaged products"): ONCE, those no reader of the
 * queue has found sound yet (one check per product, whatever the number of
 * feeds); EACH, every product every feed sends. */
#define REG_CHECK_SENT "/server/check-sent"
#define REG_USER "/server/user"
/* TLS (docs/security.md): PEM files of the site's certificate (chain), its
 * key ("": in the certificate's file) and the CAs whose certificates
 * peers must have; TLS is off while /tls/cert is "". */
#define REG_TLS_CERT "/tls/cert"
#define REG_TLS_KEY "/tls/key"
#define REG_TLS_CA "/tls/ca"
/* The bridge to NATS JetStream (pqutils/nats/pq2nats.1, nats2pq.1): the
 * servers' URLs (comma-separated), the stream, the subject prefix,
 * nats2pq's durable consumer, and the connection's credentials file, token
 * file (mode 0600 or 0400: docs/security.md, "The NATS bridge") and TLS PEM
 * files ("": none). */
#define REG_NATS_URL "/nats/url"
#define REG_NATS_STREAM "/nats/stream"
#define REG_NATS_PREFIX "/nats/prefix"
#define REG_NATS_DURABLE "/nats/durable"
#define REG_NATS_CREDENTIALS "/nats/credentials"
#define REG_NATS_TOKEN_FILE "/nats/token-file"
#define REG_NATS_CA "/nats/ca"
#define REG_NATS_CERT "/nats/cert"
#define REG_NATS_KEY "/nats/key"
/** The most seconds a timer key may hold: ldmd counts them in int
 *  milliseconds. */
#define REG_SECONDS_MAX (INT_MAX / 1000)

/* Results. */
#define LDM_REG_OK 0
#define LDM_REG_NOENT 1  /* no such key and no default */
#define LDM_REG_EVALUE 2 /* the value is not of the asked type */
#define LDM_REG_EFILE 3  /* the file is malformed (message names the line) */
#define LDM_REG_ESYS 4   /* a system call failed (message names it) */
#define LDM_REG_EINVAL 5 /* bad key path or argument */

typedef struct ldm_registry ldm_registry;

/** Resolve the registry file path (see above) into buf.
 *  @return buf, or NULL if the path does not fit in len bytes. */
const char *ldm_reg_default_path(char *buf, size_t len);

/**
 * Read the registry.  A missing file is not an error (defaults apply); an
 * empty or blank one is (LDM_REG_EFILE): nobody chose its settings.
 * @param path NULL for the default location
 * @param err, errlen  message on failure (may be NULL, 0)
 * @return LDM_REG_OK, LDM_REG_EFILE, LDM_REG_ESYS (LDM_REG_EINVAL if reg
 *         is NULL); on failure *reg is NULL.
 */
int ldm_reg_open(const char *path, ldm_registry **reg, char *err,
                 size_t errlen);
void ldm_reg_close(ldm_registry *reg);
const char *ldm_reg_path(const ldm_registry *reg);
/** Message of the last failure on this handle. */
const char *ldm_reg_error(const ldm_registry *reg);

/*
 * Getters: the value in the file as read by ldm_reg_open() (or as written by
 * this handle since), else the default.
 * @return LDM_REG_OK; LDM_REG_NOENT (not in the file, no default);
 *         LDM_REG_EVALUE (not of the asked type); LDM_REG_EINVAL (bad key,
 *         or for get_string a value that does not fit in len bytes with its
 *         NUL); LDM_REG_ESYS.  The handle's message says which.
 */
int ldm_reg_get_string(ldm_registry *reg, const char *key, char *buf,
                       size_t len);
int ldm_reg_get_uint(ldm_registry *reg, const char *key, uint64_t *value);
int ldm_reg_get_size(ldm_registry *reg, const char *key, uint64_t *value);
int ldm_reg_get_bool(ldm_registry *reg, const char *key, bool *value);
/** Is the key set in the file (not only by default)? */
bool ldm_reg_is_set(ldm_registry *reg, const char *key);

/**
 * Set a key (creating elements as needed) and write the file, creating it
 * if missing (its directory must exist).
 * @return LDM_REG_OK; LDM_REG_EVALUE (the value is not of the key's type,
 *         or has control characters or bad UTF-8); LDM_REG_EINVAL (bad key,
 *         or the key is a node or lies below a value); LDM_REG_EFILE (the
 *         file as re-read is malformed); LDM_REG_ESYS.
 */
int ldm_reg_set_string(ldm_registry *reg, const char *key, const char *value);
/**
 * Remove a key from the file (its default applies again).  A node goes with
 * every key below it, "/" with every key; nodes left empty go too.
 * @return LDM_REG_OK; LDM_REG_NOENT if nothing at key is in the file;
 *         LDM_REG_EINVAL, LDM_REG_EFILE, LDM_REG_ESYS as for setting.
 */
int ldm_reg_remove(ldm_registry *reg, const char *key);

/**
 * Write an empty registry (<registry/>) at path (NULL for the default
 * location): if reset, in place of whatever is there, malformed or not;
 * else only if there is no file or an empty one.  Under the write lock.
 * For `regutil -c` and `regutil -R`.
 * @return LDM_REG_OK or LDM_REG_ESYS, with a message in err.
 */
int ldm_reg_create(const char *path, bool reset, char *err, size_t errlen);

/** Call fn for every key under prefix ("/" for all), file keys and
 *  defaults, in path order (component by component, bytewise, so /a/b
 *  comes before /a-b); a non-zero return stops the walk and is returned.
 *  @return 0, fn's non-zero return, or LDM_REG_EINVAL (bad prefix) or
 *          LDM_REG_ESYS: fn should return values it can tell from these. */
int ldm_reg_walk(ldm_registry *reg, const char *prefix,
                 int (*fn)(const char *key, const char *value, bool is_default,
                           void *arg),
                 void *arg);

/*
 * The value parsers every program shares (and ldmadmin through regutil -T),
 * so that a value means the same to all of them.
 */

/** Parse an unsigned integer: decimal digits and nothing else (no sign, no
 *  space; leading zeros are only zeros, "0600" = 600; 0x is refused), at
 *  most UINT64_MAX.  LDM's registry reads its integers with strtoul base 0
 *  ("0600" octal); ours read base 10, as every program here reads an
 *  integer a user types or configures (ldmd's and the utilities' options,
 *  the registry's integer keys, ldmadmin through regutil -T uint), so that
 *  a value means the same to all, and a leading zero does not turn octal.
 *  Safe across fork() and threads (no state).
 *  @return 0, or -1 if malformed or too large (*value untouched). */
int ldm_parse_uint(const char *s, uint64_t *value);
/** Why s is not an unsigned integer, for a message ("not an unsigned
 *  integer: integers are decimal, 0x (hexadecimal) is not taken"), or NULL
 *  if ldm_parse_uint() takes it. */
const char *ldm_uint_problem(const char *s);
/** Parse a size: decimal digits (leading zeros are only zeros; 0x is
 *  refused), then an optional k, M or G in either case, LDM's decimal
 *  suffixes ("500M" = 500,000,000, "0500M" the same).
 *  @return 0, or -1 if malformed or larger than UINT64_MAX. */
int ldm_parse_size(const char *s, uint64_t *value);
/** Why s is not a size, for a message ("not a size: sizes are decimal,
 *  0x (hexadecimal) is not taken"), or NULL if ldm_parse_size() takes it. */
const char *ldm_size_problem(const char *s);
/** Parse a boolean as LDM's registry does: TRUE, YES, AFIRMATIVE (LDM's
 *  spelling) or AFFIRMATIVE, FALSE, NO or NEGATIVE, case-insensitive, or
 *  any integer (an optional sign, then ldm_parse_uint(): decimal, so "08"
 *  is true), non-zero being true.
 *  @return 0, or -1 if s is none of these. */
int ldm_parse_bool(const char *s, bool *value);

#endif /* LDMD_SITE_REGISTRY_H */
