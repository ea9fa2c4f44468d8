/*
 * metrics_bounds.c - the metrics endpoint's bounds on its connections
 * (metrics_bounds.h): the table of open connections with the start of
 * each one's request, the descriptors the bounds may take, and the sweep
 * that ends requests older than the whole-request bound.
 */
#include "ldmd/server/metrics_bounds.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "ldmd/server/clock.h"
#include "ldmd/site/log.h"

/* Descriptors the serving process keeps besides its connections: the
 * standard ones, the log, the queue, the figures' file, the listening
 * socket, epoll's and the signals', with room to spare. */
#define OWN_FDS 32u

/* want, or what RLIMIT_NOFILE leaves for connections if that is less. */
static unsigned fd_room(unsigned want) {
  struct rlimit rl;
  unsigned room;

  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur >= (rlim_t)want + OWN_FDS)
    return want;
  room = rl.rlim_cur > OWN_FDS + 1 ? (unsigned)(rl.rlim_cur - OWN_FDS) : 1u;
  log_warning("metrics: %u connections at most, not %u: the limit on open "
              "files (RLIMIT_NOFILE) is %llu",
              room, want, (unsigned long long)rl.rlim_cur);
  return room;
}

int ldmd_mb_init(ldmd_mb *mb, unsigned want, unsigned per_address,
                 unsigned request_s) {
  mb->max = fd_room(want);
  mb->per_address = per_address < mb->max ? per_address : mb->max;
  mb->request_ms = (int64_t)request_s * 1000;
  mb->cut = 0;
  mb->said_ms = 0;
  mb->last[0] = '\0';
  mb->log_from_ms = ldmd_now_ms();
  mb->log_lines = 0;
  mb->log_left_out = 0;
  mb->conns = calloc(mb->max, sizeof *mb->conns);
  if (mb->conns == NULL) {
    log_error("metrics: out of memory for %u connections", mb->max);
    return -1;
  }
  return 0;
}

void ldmd_mb_free(ldmd_mb *mb) {
  free(mb->conns);
  mb->conns = NULL;
}

/* The descriptor of conn, or -1. */
static int conn_fd(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

  return ci == NULL ? -1 : ci->connect_fd;
}

void ldmd_mb_notify(void *cls, struct MHD_Connection *conn, void **ctx,
                    enum MHD_ConnectionNotificationCode code) {
  ldmd_mb *mb = cls;
  ldmd_mb_conn *c = *ctx;
  unsigned i;

  if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    if (c != NULL)
      c->conn = NULL;
    *ctx = NULL;
    return;
  }
  for (i = 0; i < mb->max && mb->conns[i].conn != NULL; i++)
    ;
  if (i == mb->max) { /* libmicrohttpd's limit is max: cannot happen */
    int fd = conn_fd(conn);

    if (fd >= 0)
      (void)shutdown(fd, SHUT_RDWR);
    return;
  }
  mb->conns[i] = (ldmd_mb_conn){conn, ldmd_now_ms(), false};
  *ctx = &mb->conns[i];
}

void ldmd_mb_completed(void *cls, struct MHD_Connection *conn, void **state,
                       enum MHD_RequestTerminationCode toe) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  ldmd_mb_conn *c = ci == NULL ? NULL : ci->socket_context;

  (void)cls;
  (void)state;
  (void)toe;
  if (c != NULL)
    c->since_ms = ldmd_now_ms();
}

/* Say how many were cut, at most once per bound's time. */
static void tell(ldmd_mb *mb, int64_t now) {
  if (mb->cut == 0 || (mb->said_ms != 0 && now - mb->said_ms < mb->request_ms))
    return;
  log_warning("metrics: closed %lu connection%s whose request took more than "
              "%lld s (the last from %s)",
              mb->cut, mb->cut == 1 ? "" : "s",
              (long long)(mb->request_ms / 1000), mb->last);
  mb->cut = 0;
  mb->said_ms = now;
}

/* conn's peer address as text into buf ("?" if unknown). */
static void peer_text(struct MHD_Connection *conn, char *buf, size_t len) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const struct sockaddr *sa = ci == NULL ? NULL : ci->client_addr;
  socklen_t sl = sa != NULL && sa->sa_family == AF_INET6
                     ? sizeof(struct sockaddr_in6)
                     : sizeof(struct sockaddr_in);

  if (sa == NULL ||
      getnameinfo(sa, sl, buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST) != 0)
    snprintf(buf, len, "?");
}

void ldmd_mb_log(void *cls, const char *fmt, va_list ap) {
  ldmd_mb *mb = cls;
  int64_t now = ldmd_now_ms();
  char text[512];

  if (now - mb->log_from_ms >= (int64_t)LDMD_MB_LOG_S * 1000) {
    if (mb->log_left_out > 0)
      log_warning("metrics: %lu more messages of libmicrohttpd left out in "
                  "%u s",
                  mb->log_left_out, LDMD_MB_LOG_S);
    mb->log_from_ms = now;
    mb->log_lines = 0;
    mb->log_left_out = 0;
  }
  if (mb->log_lines >= LDMD_MB_LOG_LINES) {
    mb->log_left_out++;
    return;
  }
  mb->log_lines++;
  vsnprintf(text, sizeof text, fmt, ap);
  text[strcspn(text, "\n")] = '\0';
  log_warning("metrics: %s", text);
}

int64_t ldmd_mb_sweep(ldmd_mb *mb) {
  int64_t now = ldmd_now_ms(), next = -1;
  unsigned i;

  for (i = 0; i < mb->max; i++) {
    ldmd_mb_conn *c = &mb->conns[i];
    int64_t left;

    if (c->conn == NULL || c->cut)
      continue;
    left = c->since_ms + mb->request_ms - now;
    if (left > 0) {
      next = next < 0 || left < next ? left : next;
      continue;
    }
    /* Its socket ends; libmicrohttpd sees it in its next round and closes
     * the connection, telling ldmd_mb_notify(). */
    c->cut = true;
    if (conn_fd(c->conn) >= 0)
      (void)shutdown(conn_fd(c->conn), SHUT_RDWR);
    peer_text(c->conn, mb->last, sizeof mb->last);
    mb->cut++;
  }
  tell(mb, now);
  if (mb->cut > 0) { /* a line is owed: come back when it may be said */
    int64_t at = mb->said_ms + mb->request_ms - now;

    next = next < 0 || at < next ? at : next;
  }
  return next;
}
