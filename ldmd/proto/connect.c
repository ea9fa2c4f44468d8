/*
 * connect.c - connecting an ldm6_io to a host and port: the name
 * resolved, then every address it has tried within the one timeout.
 *
 * timeout_ms bounds the whole connect, however many addresses the name
 * has (it used to bound each address in turn, so a host with three dead
 * addresses took three timeouts).  The attempts overlap as in RFC 8305
 * ("Happy Eyeballs"), without its sorting of the addresses: the first
 * starts at once, the next one ATTEMPT_DELAY_MS later or as soon as an
 * attempt fails, the earlier ones stay in flight, and the first to
 * connect wins; all of them share the one deadline.  So a dead first
 * address costs a quarter of a second, not the timeout, and a slow one
 * can still win.  The socket that wins is handed to ldm6_io_new(); what
 * is done on it afterwards is the rest of ldm6_io's.
 *
 * Two ways end a connect early, for two kinds of caller.  The server's
 * requester passes a flag (ldm6_io_connect_cancel()): a signal that
 * interrupts the wait while the flag is set ends it.  That misses a signal
 * that comes just before poll(2), which a process that is going on anyway
 * can afford; the clients (pqutils/net/ldmclient.c) cannot, since a stop
 * must end them at once, so they pass a descriptor instead
 * (ldm6_io_connect_stop(): their self-pipe, pqutils/common/cli_io.h),
 * polled beside the attempts, whose readiness nothing can miss.
 */
#include "ldmd/proto/connect.h"
#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_io_internal.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ATTEMPT_DELAY_MS 250 /* RFC 8305's connection attempt delay */
#define MAX_ATTEMPTS 16      /* connects in flight at once */

/* Start connecting to ai.  @return a descriptor, with *done true if it is
 * connected already, or -1 (errno). */
static int start_attempt(const struct addrinfo *ai, bool *done) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                  ai->ai_protocol);
  int err;

  *done = false;
  if (fd < 0)
    return -1;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
    *done = true;
    return fd;
  }
  if (errno == EINPROGRESS || errno == EINTR)
    return fd;
  err = errno;
  close(fd);
  errno = err;
  return -1;
}

static void close_attempts(struct pollfd *p, size_t n) {
  size_t i;

  for (i = 0; i < n; i++)
    close(p[i].fd);
}

int ldm6_io__connect_list(const struct addrinfo *list, int timeout_ms,
                          const volatile sig_atomic_t *cancel, int stop_fd) {
  int64_t deadline = ldm6_io__deadline(timeout_ms), next = ldm6_io__now_ms();
  const struct addrinfo *ai = list;
  struct pollfd p[MAX_ATTEMPTS + 1]; /* the attempts, then stop_fd */
  size_t n = 0, i;
  int saved = ECONNREFUSED;

  for (;;) {
    int64_t now = ldm6_io__now_ms(), wait;
    int r;

    if (ai != NULL && n < MAX_ATTEMPTS && (n == 0 || now >= next)) {
      bool done;
      int fd = start_attempt(ai, &done);

      ai = ai->ai_next;
      if (fd >= 0 && done) {
        close_attempts(p, n);
        return fd;
      }
      if (fd < 0) {
        saved = errno; /* refused at once, say: the next one now */
        next = now;
        continue;
      }
      p[n].fd = fd;
      p[n].events = POLLOUT;
      p[n].revents = 0;
      n++;
      next = now + ATTEMPT_DELAY_MS;
      continue;
    }
    if (n == 0) { /* every address failed */
      errno = saved;
      return -1;
    }
    if (deadline >= 0 && now >= deadline) {
      close_attempts(p, n);
      errno = ETIMEDOUT;
      return -1;
    }
    wait = deadline < 0 ? -1 : deadline - now;
    if (ai != NULL && n < MAX_ATTEMPTS && (wait < 0 || next - now < wait))
      wait = next - now;
    /* Slot n is stop_fd's (ignored by poll when it is -1). */
    p[n] = (struct pollfd){.fd = stop_fd, .events = POLLIN};
    r = poll(p, (nfds_t)n + 1, wait > INT_MAX ? INT_MAX : (int)wait);
    if (r < 0 && errno == EINTR && (cancel == NULL || !*cancel))
      continue;
    if (r < 0 || p[n].revents != 0) { /* poll failed, or a stop */
      saved = r < 0 ? errno : EINTR;
      close_attempts(p, n);
      errno = saved;
      return -1;
    }
    for (i = 0; i < n;) {
      int err = 0;
      socklen_t el = sizeof err;

      if (p[i].revents == 0) {
        i++;
        continue;
      }
      if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
        err = errno;
      if (err == 0) {
        int fd = p[i].fd;

        p[i] = p[--n];
        close_attempts(p, n);
        return fd;
      }
      saved = err;
      close(p[i].fd);
      p[i] = p[--n];
      next = now; /* it failed: the next address at once */
    }
  }
}

/* Resolve host and connect to it (ldm6_io__connect_list()'s cancel and
 * stop_fd), the messages in err.  *unresolved (if not NULL) says whether
 * it was the name that failed. */
static ldm6_io *connect_host(const char *host, unsigned port, int timeout_ms,
                             const volatile sig_atomic_t *cancel, int stop_fd,
                             bool *unresolved, char *err, size_t errlen) {
  struct addrinfo hints = {0}, *res = NULL;
  char service[16];
  int rc, fd, saved;
  ldm6_io *io;

  if (unresolved != NULL)
    *unresolved = false;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  /* No AI_ADDRCONFIG: it hides ::1 on hosts whose only IPv6 address is
   * the loopback one; an unusable family just fails to connect. */
  snprintf(service, sizeof service, "%u", port);
  rc = getaddrinfo(host, service, &hints, &res);
  if (rc != 0) {
    if (err != NULL)
      snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
    if (unresolved != NULL)
      *unresolved = true;
    errno = rc == EAI_SYSTEM ? errno : EHOSTUNREACH;
    return NULL;
  }
  fd = ldm6_io__connect_list(res, timeout_ms, cancel, stop_fd);
  saved = errno;
  freeaddrinfo(res);
  if (fd < 0) {
    if (err != NULL)
      snprintf(err, errlen, "cannot connect to %s port %u: %s", host, port,
               strerror(saved));
    errno = saved;
    return NULL;
  }
  io = ldm6_io_new(fd, 0);
  if (io == NULL) {
    if (err != NULL)
      snprintf(err, errlen, "cannot connect to %s port %u: %s", host, port,
               strerror(ENOMEM));
    errno = ENOMEM;
    return NULL;
  }
  return io;
}

ldm6_io *ldm6_io_connect(const char *host, unsigned port, int timeout_ms,
                         char *err, size_t errlen) {
  return connect_host(host, port, timeout_ms, NULL, -1, NULL, err, errlen);
}

ldm6_io *ldm6_io_connect_cancel(const char *host, unsigned port, int timeout_ms,
                                const volatile sig_atomic_t *cancel, char *err,
                                size_t errlen) {
  ldm6_io *io =
      connect_host(host, port, timeout_ms, cancel, -1, NULL, err, errlen);

  if (io != NULL)
    ldm6_io_set_cancel(io, cancel);
  return io;
}

ldm6_io *ldm6_io_connect_stop(const char *host, unsigned port, int timeout_ms,
                              int stop_fd, bool *unresolved, char *err,
                              size_t errlen) {
  return connect_host(host, port, timeout_ms, NULL, stop_fd, unresolved, err,
                      errlen);
}
