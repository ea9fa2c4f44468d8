/*
 * ingest_mcast.c - the multicast sockets and their reader thread
 * (ingest_mcast.h).
 */
#include "pqutils/ingest/ingest_mcast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
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
  /* The kernel's drop count on each datagram (a control message, no
   * system call of its own), for the live figures. */
  (void)setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
  return fd;
}

/* The bytes socket fd holds queued and its buffer, in the kernel's
 * accounting (SO_MEMINFO); false if it cannot say. */
static bool meminfo(int fd, uint64_t *queued, uint64_t *rcvbuf) {
  uint32_t mi[SK_MEMINFO_VARS];
  socklen_t len = sizeof mi;
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len) != 0 ||
      len < (SK_MEMINFO_RCVBUF + 1) * sizeof mi[0])
    return false;
  *queued = mi[SK_MEMINFO_RMEM_ALLOC];
  *rcvbuf = mi[SK_MEMINFO_RCVBUF];
  return true;
}

int np_mcast_open(struct np_mcast *m, const struct in_addr *group,
                  uint16_t port, const char *const ifaces[], size_t nifaces,
                  uint64_t rcvbuf) {
  size_t n = nifaces > 0 ? nifaces : 1;
  for (size_t i = 0; i < n && i < NP_MAX_SOURCES; i++) {
    int fd = open_one(group, port, nifaces > 0 ? ifaces[i] : NULL, rcvbuf);
    if (fd < 0)
      return -1;
    uint64_t queued, buf;
    if (m->fig != NULL && meminfo(fd, &queued, &buf))
      ldmm_ingester_rcvbuf(m->fig, (unsigned)m->nfd, buf);
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
static int take_locked(struct np_mcast *m, unsigned i) {
  uint8_t *p = np_fifo_reserve(m->fifo);
  if (p == NULL)
    return CLOSED;
  uint64_t queued = 0, rcvbuf = 0;
  if (m->fig != NULL && meminfo(m->fd[i], &queued, &rcvbuf))
    ldmm_ingester_rcvbuf(m->fig, i, rcvbuf);
  struct iovec iov = {.iov_base = p, .iov_len = NP_DATAGRAM_MAX};
  union {
    char buf[CMSG_SPACE(sizeof(uint32_t))];
    struct cmsghdr align;
  } ctl;
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = ctl.buf,
                      .msg_controllen = sizeof ctl.buf};
  ssize_t n = recvmsg(m->fd[i], &mh, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN)
      return TAKEN;
    log_error("Couldn't read multicast socket %u: %s: no longer read", i,
              strerror(errno));
    return SOCKET_FAILED;
  }
  int64_t drops = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL;
       c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
      uint32_t d;
      memcpy(&d, CMSG_DATA(c), sizeof d);
      drops = d;
    }
  ldmm_ingester_datagram(m->fig, i, (uint64_t)n, queued, drops);
  np_fifo_commit(m->fifo, (size_t)n, i);
  return TAKEN;
}

/* take_locked() with the FIFO's writers' turn held: TCP sources
 * (ingest_tcp.h) write into the same FIFO. */
static int take(struct np_mcast *m, unsigned i) {
  np_fifo_write_lock(m->fifo);
  int rc = take_locked(m, i);
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
