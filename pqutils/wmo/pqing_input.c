/*
 * pqing_input.c - pqing's sources (pqing_input.h): files, standard input,
 * terminals and TCP connections, with the stop-aware waits of cli_io.h.
 */
#include "pqutils/wmo/pqing_input.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/common/cli_io.h"

#define CONNECT_TIMEOUT_MS 30000
#define BACKOFF_MAX_S 60u

void pqing_input_init(struct pqing_input *in, const char *name, unsigned port) {
  memset(in, 0, sizeof *in);
  in->name = name;
  in->port = port;
  in->fd = in->raw_fd = in->tty.fd = -1;
  const char *slash = strrchr(name, '/');
  const char *base = slash != NULL ? slash + 1 : name;
  if (port != 0)
    in->kind = PQING_TCP;
  else if (strcmp(name, "-") == 0)
    in->kind = PQING_STDIN;
  else if (strncmp(base, "tty", 3) == 0)
    in->kind = PQING_TTY;
  else
    in->kind = PQING_FILE;
}

/* Connect to in->name:in->port, each address in turn, each within
 * CONNECT_TIMEOUT_MS.  @return the socket, or -1 (logged) */
static int tcp_connect(struct pqing_input *in) {
  char port[16];
  snprintf(port, sizeof port, "%u", in->port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(in->name, port, &hints, &res);
  if (rc != 0) {
    log_error("cannot resolve %s: %s", in->name, gai_strerror(rc));
    return -1;
  }
  int fd = -1, err = 0;
  for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      err = errno;
    } else {
      int w = cli_io_wait(fd, POLLOUT, CONNECT_TIMEOUT_MS);
      socklen_t len = sizeof err;
      if (w == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
          err == 0)
        break;
      if (w == 0)
        err = ETIMEDOUT;
      else if (w < 0)
        err = errno;
    }
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0 && err != EINTR)
    log_error("connect to %s port %u: %s", in->name, in->port, strerror(err));
  return fd;
}

static int open_raw(struct pqing_input *in) {
  if (in->raw_path == NULL || in->raw_fd >= 0)
    return 0;
  in->raw_fd =
      open(in->raw_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (in->raw_fd < 0) {
    log_error("cannot open the raw file \"%s\": %s", in->raw_path,
              strerror(errno));
    return -1;
  }
  return 0;
}

int pqing_input_open(struct pqing_input *in) {
  if (open_raw(in) != 0)
    return -1;
  switch (in->kind) {
  case PQING_TCP:
    in->fd = tcp_connect(in);
    if (in->fd < 0)
      return -1;
    log_notice("NET \"%s\" %u", in->name, in->port);
    return 0;
  case PQING_STDIN:
    in->fd = STDIN_FILENO;
    log_notice("FILE stdin");
    return 0;
  case PQING_TTY: {
    int err = pqing_tty_open(&in->tty, in->name, in->baud, in->parity,
                             in->flow_control);
    if (err != 0) {
      log_error("Couldn't open tty device \"%s\": %s", in->name, strerror(err));
      return -1;
    }
    in->fd = in->tty.fd;
    log_notice("TERMIOS \"%s\": %u baud, %s parity", in->name, in->baud,
               in->parity);
    return 0;
  }
  default:
    in->fd = cli_io_open_read(in->name);
    if (in->fd < 0) {
      log_error("Couldn't open file \"%s\": %s", in->name, strerror(errno));
      return -1;
    }
    log_notice("FILE \"%s\"", in->name);
    return 0;
  }
}

ssize_t pqing_input_read(struct pqing_input *in, void *buf, size_t n,
                         int timeout_ms) {
  int w = cli_io_wait(in->fd, POLLIN, timeout_ms);
  if (w < 0)
    return -1;
  if (w == 0)
    return -2;
  ssize_t got = read(in->fd, buf, n);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return -2;
  if (got <= 0)
    return got;
  in->bytes += (uint64_t)got;
  if (in->kind == PQING_TTY && in->parity != NULL && in->parity[0] != 'n')
    for (ssize_t i = 0; i < got; i++)
      in->parity_errs += ((const uint8_t *)buf)[i] == 0;
  if (in->raw_fd >= 0 && cli_io_write_all(in->raw_fd, buf, (size_t)got) != 0) {
    log_error("cannot write the raw file \"%s\": %s; no more copied",
              in->raw_path, strerror(errno));
    close(in->raw_fd);
    in->raw_fd = -1;
    in->raw_path = NULL;
  }
  return got;
}

void pqing_input_close(struct pqing_input *in) {
  if (in->kind == PQING_TTY)
    pqing_tty_close(&in->tty);
  else if (in->fd >= 0 && in->kind != PQING_STDIN)
    close(in->fd);
  in->fd = -1;
}

int pqing_input_reconnect(struct pqing_input *in, void (*stats_fn)(void *),
                          void *arg) {
  pqing_input_close(in);
  while (!cli_stopping()) {
    if (in->tries > 0) {
      unsigned s = in->tries >= 7 ? BACKOFF_MAX_S : 1u << (in->tries - 1);
      if (s > BACKOFF_MAX_S)
        s = BACKOFF_MAX_S;
      log_notice("sleeping %u seconds before retry %u", s, in->tries + 1);
      double until = cli_monotonic() + s;
      while (!cli_stopping() && cli_monotonic() < until) {
        if (cli_stats_requested() && stats_fn != NULL)
          stats_fn(arg);
        (void)cli_io_sleep(until - cli_monotonic());
      }
      if (cli_stopping())
        break;
    }
    log_notice("Trying to re-open connection on port %u", in->port);
    in->fd = tcp_connect(in);
    if (in->fd >= 0) {
      log_notice("NET \"%s\" %u", in->name, in->port);
      in->tries = 0;
      return 0;
    }
    in->tries++;
  }
  return -1;
}

void pqing_input_stats(const struct pqing_input *in) {
  if (in->kind == PQING_TTY) {
    log_notice("  TTY Bytes read:   %10llu", (unsigned long long)in->bytes);
    if (in->parity != NULL && in->parity[0] != 'n')
      log_notice("  TTY parity errors:  %8llu",
                 (unsigned long long)in->parity_errs);
  } else {
    log_notice("  FILE Bytes read:    %8llu", (unsigned long long)in->bytes);
  }
  if (in->kind == PQING_TCP)
    log_notice("  Connections lost:   %8lu", in->drops);
}
