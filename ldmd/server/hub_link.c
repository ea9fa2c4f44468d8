/*
 * hub_link.c - the hand-over of a feed from its connection process to the
 * feed hub (hub.h, hub_link.h): the channel, the message with its two
 * descriptors, the hub's replies, and the connection process's wait until
 * the feed it handed over ends.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/server/clock.h"
#include "ldmd/server/hub.h"
#include "ldmd/server/hub_link.h"
#include "ldmd/site/log.h"

#define HANDOFF_WAIT_MS 5000 /* the channel full: the hub is stuck */
#define TAKEN_WAIT_MS 2000   /* the hub's answer to a hand-over */
/* A stop: the hub's last word on the feed, well within LDMD_CHILD_STOP_S */
#define ENDED_WAIT_MS 1500

unsigned ldmd_hub_count(void) {
  cpu_set_t set;
  long n;

  /* The CPUs this process may run on (a container's cpuset, taskset),
   * else those online. */
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    n = CPU_COUNT(&set);
  else
    n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    return 1;
  return n > LDMD_HUB_MAX ? LDMD_HUB_MAX : (unsigned)n;
}

int ldmd_hub_channel(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

int hub_link_receive(int chan, hub_handoff *h, int fds[2]) {
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(2 * sizeof(int))];
  } ctl;
  struct iovec iov = {h, sizeof *h};
  struct msghdr msg = {0};
  struct cmsghdr *cm;
  ssize_t n;
  int got = 0;

  fds[0] = fds[1] = -1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  do
    n = recvmsg(chan, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      size_t i;

      for (i = 0; i < k; i++) {
        int fd;

        memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
        if (got < 2)
          fds[got++] = fd;
        else
          (void)close(fd);
      }
    }
  }
  if (got == 2 && (size_t)n == sizeof *h && (msg.msg_flags & MSG_TRUNC) == 0 &&
      h->magic == HUB_MAGIC && h->class_len <= sizeof h->class_xdr &&
      h->nfilter <= PQ_CLASS_MAX) {
    h->peer[sizeof h->peer - 1] = '\0';
    return 1;
  }
  log_error("feed hub: a broken hand-over (%zd bytes, %d descriptors): "
            "dropped",
            n, got);
  if (fds[0] >= 0)
    (void)close(fds[0]);
  if (fds[1] >= 0)
    (void)close(fds[1]);
  fds[0] = fds[1] = -1;
  errno = EPROTO;
  return -1;
}

int hub_link_reply(int fd, const hub_reply *r) {
  ssize_t n;

  do
    n = send(fd, r, sizeof *r, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof *r ? 0 : -1;
}

/* The hand-over message of a feed. */
static int fill(hub_handoff *h, const ldmd_conn *c, const pq_class *cls,
                const ldm_conf_filter *filter, uint64_t cursor_us) {
  ldm6_prod_class wire;
  size_t used;
  unsigned i;

  memset(h, 0, offsetof(hub_handoff, class_xdr));
  h->magic = HUB_MAGIC;
  h->cursor_us = cursor_us;
  h->metrics_slot = c->set->metrics_slot;
  h->nfilter = filter->nparts;
  for (i = 0; i < filter->nparts; i++) {
    const ldm_conf_allow *a = filter->parts[i].allow;

    h->filter_ft[i] = filter->parts[i].feedtype;
    if (a < c->set->conf->allows ||
        a >= c->set->conf->allows + c->set->conf->nallows)
      return -1; /* not the server's configuration: cannot be named */
    h->filter_allow[i] = (uint32_t)(a - c->set->conf->allows);
  }
  snprintf(h->peer, sizeof h->peer, "%s", c->peer);
  if (ldm6_class_from_pq(cls, &wire) != 0 ||
      ldm6_encode(LDM6_T_PROD_CLASS, &wire, h->class_xdr, sizeof h->class_xdr,
                  &used) != 0)
    return -1;
  h->class_len = (uint32_t)used;
  return 0;
}

/* Send h with the two descriptors, waiting up to HANDOFF_WAIT_MS for room
 * in the channel.  @return 0 or -1 (nothing sent) */
static int send_handoff(int chan, const hub_handoff *h, int sock, int pair) {
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(2 * sizeof(int))];
  } ctl;
  struct iovec iov = {(void *)h, sizeof *h};
  struct msghdr msg = {0};
  struct cmsghdr *cm;
  int64_t end = ldmd_now_ms() + HANDOFF_WAIT_MS;
  int fds[2] = {sock, pair};

  memset(&ctl, 0, sizeof ctl);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  for (;;) {
    struct pollfd p = {.fd = chan, .events = POLLOUT};
    int64_t left;
    ssize_t n = sendmsg(chan, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);

    if (n == (ssize_t)sizeof *h)
      return 0;
    if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
      log_error("cannot hand the feed of %s to the feed hub: %s", h->peer,
                n >= 0 ? "short message" : strerror(errno));
      return -1;
    }
    left = end - ldmd_now_ms();
    if (left <= 0) {
      log_error("cannot hand the feed of %s to the feed hub: its channel "
                "stayed full for %d s",
                h->peer, HANDOFF_WAIT_MS / 1000);
      return -1;
    }
    (void)poll(&p, 1, left > LDMD_SLICE_MS ? LDMD_SLICE_MS : (int)left);
  }
}

/* One reply from the hub, within timeout_ms, or until *stop (stop NULL:
 * whatever the flag).
 * @return 1 (got it), 0 (timed out or stopping), -1 (the hub's end closed
 *         or failed) */
static int await_reply(int fd, hub_reply *r, int timeout_ms,
                       const volatile sig_atomic_t *stop) {
  int64_t end = timeout_ms < 0 ? -1 : ldmd_now_ms() + timeout_ms;

  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int64_t left = end < 0 ? LDMD_SLICE_MS : end - ldmd_now_ms();
    ssize_t n;

    if (stop != NULL && *stop)
      return 0;
    if (left <= 0)
      return 0;
    if (poll(&p, 1, left > LDMD_SLICE_MS ? LDMD_SLICE_MS : (int)left) <= 0)
      continue;
    do
      n = recv(fd, r, sizeof *r, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      continue;
    if (n != (ssize_t)sizeof *r || r->magic != HUB_MAGIC)
      return -1;
    return 1;
  }
}

int ldmd_hub_delegate(ldmd_conn *c, const pq_class *cls,
                      const ldm_conf_filter *filter, uint64_t cursor_us,
                      ldmd_hub_end *end) {
  static hub_handoff h; /* 24 KB: not on the stack */
  hub_reply r;
  int pair[2], rc;

  memset(end, 0, sizeof *end);
  end->status = LDMD_FAIL;
  if (fill(&h, c, cls, filter, cursor_us) != 0) {
    log_warning("the feed of %s cannot be described to the feed hub: "
                "serving it here",
                c->peer);
    return -1;
  }
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    log_error("cannot hand the feed of %s to the feed hub: socketpair: %s",
              c->peer, strerror(errno));
    return -1;
  }
  if (send_handoff(c->set->hub_fd, &h, ldm6_io_fd(c->io), pair[1]) != 0) {
    (void)close(pair[0]);
    (void)close(pair[1]);
    return -1;
  }
  (void)close(pair[1]);
  /* Until the hub says it took the feed, it has not touched the socket,
   * so this process may still serve the feed itself. */
  rc = await_reply(pair[0], &r, TAKEN_WAIT_MS, c->set->stop);
  if (rc < 0 || (rc == 1 && r.kind != HUB_TAKEN)) {
    (void)close(pair[0]);
    log_warning("the feed hub refused the feed of %s: serving it here",
                c->peer);
    return LDMD_HUB_SHARED;
  }
  if (rc == 0 && !*c->set->stop) {
    /* No answer in time (the hub is stopped, or far behind): refuse any
     * later one, so that the hub's HUB_TAKEN fails (EPIPE) and it drops
     * the socket untouched, then look once more, for an answer that came
     * before the refusal. */
    (void)shutdown(pair[0], SHUT_RD);
    if (recv(pair[0], &r, sizeof r, MSG_DONTWAIT) == (ssize_t)sizeof r &&
        r.magic == HUB_MAGIC && r.kind == HUB_TAKEN) {
      /* Taken at the last moment, but its end could not be heard now:
       * closing the pair makes the hub drop it. */
      (void)close(pair[0]);
      log_error("the feed hub took the feed of %s after %d s: closing (the "
                "downstream reconnects)",
                c->peer, TAKEN_WAIT_MS / 1000);
      return LDMD_FAIL;
    }
    (void)close(pair[0]);
    log_warning("the feed hub did not take the feed of %s within %d s: "
                "serving it here",
                c->peer, TAKEN_WAIT_MS / 1000);
    return LDMD_HUB_SHARED;
  }
  if (rc == 1) {
    /* The hub has the socket: from here on this process never writes to
     * it, whatever happens. */
    log_debug("feed handed to the feed hub");
    rc = await_reply(pair[0], &r, -1, c->set->stop);
    if (rc == 0) {
      /* Stopping: what the hub sent is the feed's last line, as a feed
       * served here counts its products on a stop.  The end of this side
       * of the pair tells the hub to end the feed and say how (it does so
       * anyway when it stops itself). */
      (void)shutdown(pair[0], SHUT_WR);
      rc = await_reply(pair[0], &r, ENDED_WAIT_MS, NULL);
    }
  }
  (void)close(pair[0]); /* the hub drops the feed if it still has it */
  if (rc == 1 && r.kind == HUB_ENDED) {
    end->status = r.status == LDMD_DONE ? LDMD_DONE : LDMD_FAIL;
    end->nsent = r.nsent;
    end->nbytes = r.nbytes;
    end->nskipped = r.nskipped;
    end->ndamaged = r.ndamaged;
    if (*c->set->stop)
      log_info("stopping");
    return end->status;
  }
  if (*c->set->stop) {
    log_info("stopping");
    end->status = LDMD_DONE;
    return LDMD_DONE;
  }
  log_error("the feed hub ended while serving %s: closing (the downstream "
            "reconnects)",
            c->peer);
  return LDMD_FAIL;
}
