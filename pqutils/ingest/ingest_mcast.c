/*
 * ingest_mcast.c - the multicast sockets and their reader thread
 * (ingest_mcast.h).
 */
#include "pqutils/ingest/ingest_mcast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli_io.h"

/* One socket, joined on iface (NULL: the system's choice). */
static int open_one(const struct in_addr *group, uint16_t port,
                    const char *iface, uint64_t rcvbuf) {
  char gs[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, group, gs, sizeof gs);
  struct ip_mreq mr = {.imr_multiaddr = *group};
  mr.imr_interface.s_addr = htonl(INADDR_ANY);
  if (iface != NULL && inet_pton(AF_INET, iface, &mr.imr_interface) != 1) {
    log_error("Invalid interface address: \"%s\"", iface);
    return -1;
  }
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    log_error("Couldn't create socket: %s", strerror(errno));
    return -1;
  }
  int on = 1, off = 0;
  struct sockaddr_in sa = {
      .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *group};
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) != 0 ||
      /* only this socket's own membership: its interface's datagrams */
      setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &off, sizeof off) != 0) {
    log_error("Couldn't join multicast group %s port %u on %s: %s", gs,
              (unsigned)port, iface != NULL ? iface : "the default interface",
              strerror(errno));
    (void)close(fd);
    return -1;
  }
  if (rcvbuf != 0) {
    int v = (int)rcvbuf;
    log_notice("Setting receive buffer size");
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) != 0)
      log_warning("Couldn't set receive buffer size: %s", strerror(errno));
  }
  int got = 0;
  socklen_t len = sizeof got;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0)
    log_notice("Receive buffer size is %d bytes", got);
  return fd;
}

int np_mcast_open(struct np_mcast *m, const struct in_addr *group,
                  uint16_t port, const char *const ifaces[], size_t nifaces,
                  uint64_t rcvbuf) {
  size_t n = nifaces > 0 ? nifaces : 1;
  for (size_t i = 0; i < n && i < NP_MAX_SOURCES; i++) {
    int fd = open_one(group, port, nifaces > 0 ? ifaces[i] : NULL, rcvbuf);
    if (fd < 0)
      return -1;
    m->fd[m->nfd++] = fd;
  }
  return 0;
}

void np_mcast_realtime(const char *who, int below_max) {
  struct sched_param sp = {.sched_priority =
                               sched_get_priority_max(SCHED_FIFO) - below_max};
  int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  if (rc != 0)
    log_warning("Couldn't give the %s thread real-time priority: %s", who,
                strerror(rc));
}

/* What take() did. */
enum { TAKEN, CLOSED, SOCKET_FAILED };

/* One datagram from a ready socket into the FIFO. */
static int take(struct np_mcast *m, unsigned i) {
  np_fifo_write_lock(m->fifo); /* TCP sources write too (ingest_tcp.h) */
  uint8_t *p = np_fifo_reserve(m->fifo);
  int rc = TAKEN;
  ssize_t n = p != NULL ? recv(m->fd[i], p, NP_DATAGRAM_MAX, MSG_DONTWAIT) : 0;
  if (p == NULL) {
    rc = CLOSED;
  } else if (n >= 0) {
    np_fifo_commit(m->fifo, (size_t)n, i);
  } else if (errno != EINTR && errno != EAGAIN) {
    log_error("Couldn't read multicast socket %u: %s: no longer read", i,
              strerror(errno));
    rc = SOCKET_FAILED;
  }
  np_fifo_write_unlock(m->fifo);
  return rc;
}

static void *reader_main(void *arg) {
  struct np_mcast *m = arg;
  np_mcast_realtime("reader", 0);
  struct pollfd pfd[NP_MAX_SOURCES];
  for (size_t i = 0; i < m->nfd; i++)
    pfd[i] = (struct pollfd){.fd = m->fd[i], .events = POLLIN};
  size_t live = m->nfd;
  bool go = true;
  while (go && live > 0) {
    int w = cli_io_poll(pfd, m->nfd, -1);
    if (w < 0 && (errno != EINTR || cli_io_stopping()))
      break; /* a stop */
    for (size_t i = 0; go && i < m->nfd; i++) {
      if (!(pfd[i].revents & (POLLIN | POLLERR)))
        continue;
      int t = take(m, (unsigned)i);
      if (t == CLOSED)
        go = false;
      else if (t == SOCKET_FAILED) {
        pfd[i].fd = -1; /* poll(2) passes over it */
        live--;
      }
    }
  }
  m->failed = live == 0;
  np_fifo_close(m->fifo);
  return NULL;
}

int np_mcast_start(struct np_mcast *m) {
  int rc = pthread_create(&m->thread, NULL, reader_main, m);
  if (rc != 0) {
    log_error("Couldn't start the reader thread: %s", strerror(rc));
    return -1;
  }
  m->started = 1;
  return 0;
}

void np_mcast_join(struct np_mcast *m) {
  if (m->started)
    (void)pthread_join(m->thread, NULL);
  m->started = 0;
}

void np_mcast_close(struct np_mcast *m) {
  for (size_t i = 0; i < m->nfd; i++)
    (void)close(m->fd[i]);
  m->nfd = 0;
}
