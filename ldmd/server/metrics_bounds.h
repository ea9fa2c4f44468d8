/*
 * metrics_bounds.h - what the metrics endpoint's connections may cost
 * (docs/security.md, "The metrics endpoint"): how many at once, how many
 * from one address, and how long one request may take, from the
 * connection's opening (or the end of the request before it) to the last
 * byte of its answer.  libmicrohttpd bounds the first
 * two itself; its timeout is an idle one, which a client that sends or
 * reads a byte a second restarts forever, so the whole-request bound is
 * kept here: each connection's start is noted when libmicrohttpd opens it
 * (MHD_OPTION_NOTIFY_CONNECTION) and again when a request on it is done
 * (MHD_OPTION_NOTIFY_COMPLETED), and ldmd_mb_sweep() shuts down the socket
 * of one older than the bound, so that libmicrohttpd sees the end of the
 * connection and closes it itself.  Everything here runs in the one
 * thread that calls MHD_run() (the serving process's own loop,
 * metrics_http.c): libmicrohttpd forgets a connection (the CLOSED
 * notification) in that thread before it closes its descriptor, so a
 * descriptor shut down here is always the connection's own.
 *
 * libmicrohttpd's own messages are mostly about one connection (closed in
 * the middle of a request, refused at a limit), which any client causes
 * at will: ldmd_mb_log() writes at most LDMD_MB_LOG_LINES of them per
 * LDMD_MB_LOG_S seconds, and then how many it left out.
 */
#ifndef LDMD_SERVER_METRICS_BOUNDS_H
#define LDMD_SERVER_METRICS_BOUNDS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
/* After those: microhttpd.h needs them (its documentation says so). */
#include <microhttpd.h>
#include <stdint.h>

/** Connections at once (MHD_OPTION_CONNECTION_LIMIT): room for a
 *  hundred slow clients and the scrapers beside them, at one descriptor
 *  each, cut to what RLIMIT_NOFILE leaves (ldmd_mb_init()). */
#define LDMD_MB_CONNECTIONS 128u
/** Seconds from a request's start (the connection's opening, or the end
 *  of the request before it) to the end of its answer. */
#define LDMD_MB_REQUEST_S 10u
/** Seconds a connection may stay silent (MHD_OPTION_CONNECTION_TIMEOUT). */
#define LDMD_MB_IDLE_S 10u

/** libmicrohttpd's messages logged at most per period, and the period. */
#define LDMD_MB_LOG_LINES 10u
#define LDMD_MB_LOG_S 10u

/** A connection libmicrohttpd has open. */
typedef struct ldmd_mb_conn {
  struct MHD_Connection *conn; /**< NULL: the entry is free */
  int64_t since_ms;            /**< its start, or its last request's end */
  bool cut;                    /**< shut down, not yet closed */
} ldmd_mb_conn;

/** The bounds and the connections they apply to. */
typedef struct ldmd_mb {
  unsigned max;         /**< connections at once, as given to libmicrohttpd */
  unsigned per_address; /**< from one address (at most max): likewise */
  int64_t request_ms;   /**< the whole-request bound */
  ldmd_mb_conn *conns;  /**< max entries */
  unsigned long cut;    /**< connections cut since the last log line */
  int64_t said_ms;      /**< when that line was written (0: never) */
  char last[64];        /**< the address of the last connection cut */
  int64_t log_from_ms;  /**< the start of ldmd_mb_log()'s period */
  unsigned log_lines;   /**< its lines in that period */
  unsigned long log_left_out; /**< and those it did not write */
} ldmd_mb;

/**
 * Set the bounds: want connections at most (fewer if RLIMIT_NOFILE
 * leaves fewer descriptors, with a warning), per_address of them from one
 * address (MHD_OPTION_PER_IP_CONNECTION_LIMIT; /metrics/max-per-address),
 * requests of request_s seconds at most.
 * @return 0, or -1 (out of memory, logged)
 */
int ldmd_mb_init(ldmd_mb *mb, unsigned want, unsigned per_address,
                 unsigned request_s);

void ldmd_mb_free(ldmd_mb *mb);

/** MHD_OPTION_NOTIFY_CONNECTION's callback; cls is the ldmd_mb. */
void ldmd_mb_notify(void *cls, struct MHD_Connection *conn, void **ctx,
                    enum MHD_ConnectionNotificationCode code);

/** MHD_OPTION_NOTIFY_COMPLETED's callback: a request is done, the next
 *  one's time starts; cls is the ldmd_mb. */
void ldmd_mb_completed(void *cls, struct MHD_Connection *conn, void **state,
                       enum MHD_RequestTerminationCode toe);

/** MHD_OPTION_EXTERNAL_LOGGER's callback (with MHD_USE_ERROR_LOG): a
 *  warning, within the rate above; cls is the ldmd_mb. */
void ldmd_mb_log(void *cls, const char *fmt, va_list ap);

/**
 * Shut down every connection older than the bound (logged, at most one
 * line per bound's time, with the count).  Call after MHD_run(), in its
 * thread.
 * @return milliseconds until the next connection reaches the bound, or
 *         -1 if none is open
 */
int64_t ldmd_mb_sweep(ldmd_mb *mb);

#endif /* LDMD_SERVER_METRICS_BOUNDS_H */
