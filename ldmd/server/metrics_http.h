/*
 * metrics_http.h - the HTTP endpoint of ldmd's live figures
 * (docs/metrics.md): its address (the registry's /metrics/http-address),
 * the listening socket the top-level ldmd binds at start, and the process
 * of its own that serves it (a task of the top process, children.h), so
 * that a scrape never makes the server's event loop wait.
 *
 *   GET /metrics      the Prometheus text exposition format 0.0.4
 *   GET /status.json  the same figures as JSON, for a status page
 *   GET /             the status page's place: for now a short index
 *
 * The serving process runs libmicrohttpd in its one thread (one request
 * at a time), with the bounds of metrics_bounds.h against slow and many
 * clients (128 connections, 8 from one address, 10 s for a request's
 * whole time, 10 s idle); the same loop reads its signals.  It reads the
 * figures from the metrics file (ldmd/metrics/metrics.h) and the queue's own
 * statistics at each request, with a read-only queue handle.
 */
#ifndef LDMD_SERVER_METRICS_HTTP_H
#define LDMD_SERVER_METRICS_HTTP_H

#include <stddef.h>

#include "ldmd/metrics/metrics.h"

/**
 * Bind and listen on addr: "PORT" (127.0.0.1:PORT), "HOST:PORT" or
 * "[V6ADDR]:PORT", with a numeric host; PORT 0 lets the kernel choose.
 * The socket is close-on-exec.
 * @param name  set to "ADDR:PORT" (or "[ADDR]:PORT") as bound
 * @return the descriptor, or -1 (err: the address and what failed)
 */
int ldmd_metrics_listen(const char *addr, char *name, size_t namelen, char *err,
                        size_t errlen);

/**
 * In the serving process: serve fd until SIGTERM or SIGINT (SIGUSR1
 * reopens the log, SIGUSR2 rolls its level).  Blocks those signals.
 * @param queue_path  the queue whose statistics are shown
 * @param per_address  connections from one client address at most
 *                     (/metrics/max-per-address)
 * @return the process's exit status
 */
int ldmd_metrics_serve(const ldmm_file *f, int fd, const char *queue_path,
                       unsigned per_address);

#endif /* LDMD_SERVER_METRICS_HTTP_H */
