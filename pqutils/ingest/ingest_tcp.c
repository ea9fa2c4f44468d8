/*
 * ingest_tcp.c - the TCP sources of ingest_tcp.h: connect (IPv4 or IPv6,
 * each address in turn, never blocking past a stop), read, and start
 * again after a pause when the server goes away.
 */
#include "pqutils/ingest/ingest_tcp.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli_io.h"

#define CONNECT_TIMEOUT_MS 10000

/* host and port of "host:port" ("[v6]:port" too). */
static bool split(const char *spec, char *host, size_t hsize, char *port,
                  size_t psize) {
  const char *colon = strrchr(spec, ':');
  if (colon == NULL || colon == spec || colon[1] == '\0')
    return false;
  const char *h = spec, *he = colon;
  if (*h == '[' && he[-1] == ']') {
    h++;
    he--;
  }
  if ((size_t)(he - h) >= hsize || strlen(colon + 1) >= psize)
    return false;
  memcpy(host, h, (size_t)(he - h));
  host[he - h] = '\0';
  strcpy(port, colon + 1);
  char *end;
  long p = strtol(port, &end, 10);
  return *end == '\0' && p >= 1 && p <= 65535 && host[0] != '\0';
}

bool np_tcp_spec_ok(const char *spec) {
  char host[256], port[8];
  return split(spec, host, sizeof host, port, sizeof port);
}

/* One address, with a bounded wait that a stop ends. */
static int connect_one(const struct addrinfo *ai) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                  ai->ai_protocol);
  if (fd < 0)
    return -1;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
    return fd;
  int err = 0;
  socklen_t len = sizeof err;
  if (errno == EINPROGRESS &&
      cli_io_wait(fd, POLLOUT, CONNECT_TIMEOUT_MS) > 0 &&
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
    return fd;
  (void)close(fd);
  return -1;
}

static int connect_spec(const char *spec) {
  char host[256], port[8];
  if (!split(spec, host, sizeof host, port, sizeof port))
    return -1;
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
  if (getaddrinfo(host, port, &hints, &res) != 0)
    return -1;
  int fd = -1;
  for (const struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
    fd = connect_one(ai);
  freeaddrinfo(res);
  return fd;
}

/* Read fd into the FIFO until the connection ends (0) or a stop (-1). */
static int pump(struct np_tcp *t, int fd) {
  for (;;) {
    if (cli_io_wait(fd, POLLIN, -1) < 0)
      return -1; /* a stop */
    np_fifo_write_lock(t->fifo);
    uint8_t *p = np_fifo_reserve(t->fifo);
    ssize_t n = p != NULL ? recv(fd, p, NP_DATAGRAM_MAX, MSG_DONTWAIT) : 0;
    if (p != NULL && n > 0)
      np_fifo_commit(t->fifo, (size_t)n, t->src);
    np_fifo_write_unlock(t->fifo);
    if (p == NULL)
      return -1; /* the FIFO is closed */
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
      return 0;
  }
}

static void *tcp_main(void *arg) {
  struct np_tcp *t = arg;
  while (!cli_io_stopping()) {
    int fd = connect_spec(t->spec);
    if (fd >= 0) {
      log_notice("Connected to fanout server %s", t->spec);
      int r = pump(t, fd);
      (void)close(fd);
      if (r < 0)
        break;
      log_error("Lost connection with fanout server. Will retry after %g s. "
                "(%s)",
                t->retry_s, t->spec);
    } else {
      log_error("Couldn't connect to fanout server %s. Will retry after %g "
                "s.",
                t->spec, t->retry_s);
    }
    double end = cli_monotonic() + t->retry_s; /* SIGUSR1 wakes a sleep */
    while (!cli_io_stopping() && cli_monotonic() < end)
      (void)cli_io_sleep(end - cli_monotonic());
  }
  return NULL;
}

int np_tcp_start(struct np_tcp *t) {
  int rc = pthread_create(&t->thread, NULL, tcp_main, t);
  if (rc != 0) {
    log_error("Couldn't start the thread of %s: %s", t->spec, strerror(rc));
    return -1;
  }
  t->started = true;
  return 0;
}

void np_tcp_join(struct np_tcp *t) {
  if (t->started)
    (void)pthread_join(t->thread, NULL);
  t->started = false;
}
