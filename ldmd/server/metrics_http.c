/*
 * metrics_http.c - the metrics endpoint (metrics_http.h): parsing its
 * address and binding it, and the serving process: libmicrohttpd on the
 * bound socket, one handler that dispatches on the path (the figures, and
 * the status page built in from ldmd/metrics/status.html), and the one
 * thread's loop that waits on libmicrohttpd's epoll descriptor and on the
 * signals (signalfd), runs libmicrohttpd's round, and then ends the
 * requests older than their bound (metrics_bounds.h): libmicrohttpd's
 * callbacks run in this thread, so no lock is needed.
 */
#include "ldmd/server/metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/metrics/render.h"
#include "ldmd/metrics/status_page.h"
#include "ldmd/server/metrics_bounds.h"
#include "ldmd/site/log.h"

/* ---------------------------------------------------------------------- */
/* The address                                                            */
/* ---------------------------------------------------------------------- */

/* Split "PORT", "HOST:PORT", "[HOST]:PORT" into host and port.
 * @return 0 or -1 */
static int split(const char *addr, char *host, size_t hlen, long *port) {
  const char *colon, *p;
  char *end;

  if (addr[0] == '[') {
    const char *close = strchr(addr, ']');

    if (close == NULL || close[1] != ':' || (size_t)(close - addr - 1) >= hlen)
      return -1;
    memcpy(host, addr + 1, (size_t)(close - addr - 1));
    host[close - addr - 1] = '\0';
    p = close + 2;
  } else if ((colon = strrchr(addr, ':')) != NULL) {
    if ((size_t)(colon - addr) >= hlen || strchr(addr, ':') != colon)
      return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    p = colon + 1;
  } else {
    snprintf(host, hlen, "127.0.0.1");
    p = addr;
  }
  if (*p < '0' || *p > '9')
    return -1;
  errno = 0;
  *port = strtol(p, &end, 10);
  return errno != 0 || *end != '\0' || *port < 0 || *port > 65535 ? -1 : 0;
}

int ldmd_metrics_listen(const char *addr, char *name, size_t namelen, char *err,
                        size_t errlen) {
  struct sockaddr_storage ss;
  struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
  socklen_t sl;
  char host[INET6_ADDRSTRLEN + 1], text[INET6_ADDRSTRLEN];
  long port;
  int fd, one = 1;

  memset(&ss, 0, sizeof ss);
  if (split(addr, host, sizeof host, &port) != 0) {
    snprintf(err, errlen,
             "invalid metrics address \"%s\": not PORT, HOST:PORT or "
             "[HOST]:PORT",
             addr);
    return -1;
  }
  if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    sl = sizeof *v4;
  } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    sl = sizeof *v6;
  } else {
    snprintf(err, errlen,
             "invalid metrics address \"%s\": %s is not a numeric IPv4 or "
             "IPv6 address",
             addr, host);
    return -1;
  }
  fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(err, errlen, "cannot serve metrics on %s: socket: %s", addr,
             strerror(errno));
    return -1;
  }
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (ss.ss_family == AF_INET6)
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  /* A backlog of as many as it serves: clients that come back together
   * (all ended by the bound at once) do not crowd a scraper out. */
  if (bind(fd, (struct sockaddr *)&ss, sl) != 0 ||
      listen(fd, (int)LDMD_MB_CONNECTIONS) != 0 ||
      getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
    snprintf(err, errlen, "cannot serve metrics on %s: %s", addr,
             strerror(errno));
    close(fd);
    return -1;
  }
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    snprintf(name, namelen, "%s:%u", text, (unsigned)ntohs(v4->sin_port));
  } else {
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    snprintf(name, namelen, "[%s]:%u", text, (unsigned)ntohs(v6->sin6_port));
  }
  return fd;
}

/* ---------------------------------------------------------------------- */
/* Serving                                                                */
/* ---------------------------------------------------------------------- */

/* What the handler works with; used by the serving thread only. */
typedef struct endpoint {
  const ldmm_file *file;
  const char *queue_path;
  pq_t *pq; /* opened at the first request that needs it */
  ldmm_snapshot snap;
  bool said_queue; /* the queue's failure was logged */
} endpoint;

static void figures(endpoint *e, ldmm_queue *q) {
  if (e->pq == NULL) {
    pq_error err;

    if (pq_open(e->queue_path, PQ_READONLY, &e->pq, &err) != PQ_OK) {
      e->pq = NULL;
      if (!e->said_queue)
        log_error("metrics: cannot open the queue %s: %s", e->queue_path,
                  err.pe_msg);
      e->said_queue = true;
    }
  }
  ldmm_queue_read(e->pq, q);
}

/* Send BODY (LEN bytes; freed after if OWNED) as TYPE; with CSP (not
 * NULL) the page's headers too: its policy, no sniffing, no referrer. */
static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
                               const char *type, char *body, size_t len,
                               bool owned, const char *csp) {
  struct MHD_Response *r = MHD_create_response_from_buffer(
      len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  enum MHD_Result rc;

  if (r == NULL) {
    if (owned)
      free(body);
    return MHD_NO;
  }
  (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  (void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (csp != NULL) {
    (void)MHD_add_response_header(r, "Content-Security-Policy", csp);
    (void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    (void)MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
  }
  rc = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result plain(struct MHD_Connection *conn, unsigned status,
                             const char *text) {
  return respond(conn, status, "text/plain; charset=utf-8", (char *)text,
                 strlen(text), false, NULL);
}

/* /metrics or /status.json: the figures, rendered. */
static enum MHD_Result render(endpoint *e, struct MHD_Connection *conn,
                              bool json) {
  ldmm_prom_buf b = {0};
  ldmm_queue q;

  if (ldmm_snapshot_take(e->file, &e->snap) != 0)
    return plain(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
  figures(e, &q);
  if (json)
    ldmm_render_json(&e->snap, &q, &b);
  else
    ldmm_render_prom(&e->snap, &q, &b);
  if (b.failed || b.p == NULL) {
    ldmm_prom_free(&b);
    return plain(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
  }
  return respond(conn, MHD_HTTP_OK,
                 json ? "application/json"
                      : "text/plain; version=0.0.4; charset=utf-8",
                 b.p, b.len, true, NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **state) {
  endpoint *e = cls;

  (void)version;
  (void)upload;
  (void)upload_size;
  if (*state == NULL) { /* the headers are in; the body, if any, is not */
    *state = e;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    *upload_size = 0; /* a body is read and dropped */
    return MHD_YES;
  }
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return plain(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
  if (strcmp(url, "/metrics") == 0)
    return render(e, conn, false);
  if (strcmp(url, "/status.json") == 0)
    return render(e, conn, true);
  if (strcmp(url, "/") == 0)
    return respond(conn, MHD_HTTP_OK, "text/html; charset=utf-8",
                   (char *)ldmm_status_page, ldmm_status_page_len, false,
                   ldmm_status_page_csp);
  return plain(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* Start libmicrohttpd on fd, driven by this thread (epoll, no thread of
 * its own), with the bounds of mb (metrics_bounds.h). */
static struct MHD_Daemon *start(endpoint *e, ldmd_mb *mb, int fd) {
  return MHD_start_daemon(
      MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, e,
      MHD_OPTION_EXTERNAL_LOGGER, ldmd_mb_log, mb, MHD_OPTION_LISTEN_SOCKET, fd,
      MHD_OPTION_CONNECTION_LIMIT, mb->max, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      mb->per_address, MHD_OPTION_CONNECTION_TIMEOUT, LDMD_MB_IDLE_S,
      MHD_OPTION_NOTIFY_CONNECTION, ldmd_mb_notify, mb,
      MHD_OPTION_NOTIFY_COMPLETED, ldmd_mb_completed, mb, MHD_OPTION_END);
}

/* How long to wait: libmicrohttpd's own timeout, or the next request's
 * bound (next_ms, -1: none) if sooner; -1: until something happens. */
static int wait_ms(struct MHD_Daemon *d, int64_t next_ms) {
  MHD_UNSIGNED_LONG_LONG mhd;
  int64_t ms = next_ms;

  if (MHD_get_timeout(d, &mhd) == MHD_YES && (ms < 0 || (int64_t)mhd < ms))
    ms = mhd > INT_MAX ? INT_MAX : (int64_t)mhd;
  return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Read the signals that came; the one that stops (SIGTERM, SIGINT) or 0. */
static int signals(int sfd) {
  struct signalfd_siginfo si;

  while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
    if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
      return (int)si.ssi_signo;
    if (si.ssi_signo == SIGUSR1)
      ldm_log_request_refresh();
    else if (si.ssi_signo == SIGUSR2)
      ldm_log_request_roll();
  }
  return 0;
}

/* The serving loop: libmicrohttpd's epoll descriptor and the signals,
 * then its round, then the bound on each request's whole time, until
 * SIGTERM or SIGINT. */
static void loop(struct MHD_Daemon *d, ldmd_mb *mb, int sfd) {
  const union MHD_DaemonInfo *di =
      MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
  struct pollfd p[2] = {
      {.fd = di == NULL ? -1 : di->epoll_fd, .events = POLLIN},
      {.fd = sfd, .events = POLLIN}};
  int64_t next = -1;

  if (p[0].fd < 0) {
    log_error("metrics: libmicrohttpd has no epoll descriptor");
    return;
  }
  for (;;) {
    if (poll(p, 2, wait_ms(d, next)) < 0 && errno != EINTR) {
      log_error("metrics: poll: %s", strerror(errno));
      return;
    }
    if ((p[1].revents & POLLIN) != 0 && signals(sfd) != 0)
      return;
    if (MHD_run(d) != MHD_YES) {
      log_error("metrics: the HTTP server failed (libmicrohttpd)");
      return;
    }
    next = ldmd_mb_sweep(mb);
  }
}

int ldmd_metrics_serve(const ldmm_file *f, int fd, const char *queue_path,
                       unsigned per_address) {
  endpoint e;
  ldmd_mb mb;
  struct MHD_Daemon *d;
  sigset_t set;
  int sfd;

  memset(&e, 0, sizeof e);
  e.file = f;
  e.queue_path = queue_path;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  (void)sigprocmask(SIG_BLOCK, &set, NULL);
  sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    log_error("metrics: signalfd: %s", strerror(errno));
    return 1;
  }
  if (ldmd_mb_init(&mb, LDMD_MB_CONNECTIONS, per_address, LDMD_MB_REQUEST_S) !=
      0) {
    close(sfd);
    return 1;
  }
  d = start(&e, &mb, fd);
  if (d == NULL) {
    log_error("metrics: cannot start the HTTP server (libmicrohttpd)");
    ldmd_mb_free(&mb);
    close(sfd);
    return 1;
  }
  loop(d, &mb, sfd);
  MHD_stop_daemon(d);
  ldmd_mb_free(&mb);
  close(sfd);
  ldmm_snapshot_free(&e.snap);
  if (e.pq != NULL)
    pq_close(e.pq);
  return 0;
}
