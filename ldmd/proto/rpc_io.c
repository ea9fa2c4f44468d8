/*
 * rpc_io.c - one LDM connection as an object: its socket and peer, the
 * clock and the one wait on the socket that every path shares, and the
 * synchronous call that joins the send path to the receive path.  Its
 * wait for the reply (ldm6_io_await_reply()) is the only such loop: the
 * server, its requesters and the protocol clients all run it, so that a
 * refusal (AUTH_TOOWEAK, sent with xid 0 before the call is read) means
 * the same to each of them.
 *
 * The descriptor is made non-blocking so that every read and every write
 * waits in poll(2) with a timeout (ldm6_io__wait()): a peer that stops
 * reading cannot hang a sender forever (the send timeout, reset whenever
 * bytes move, is LDM's 60 s RPC timeout unless changed), and a stop
 * (ldm6_io_set_cancel()) ends any wait at once.  The rest is in files of
 * their own, each sharing the object through rpc_io_internal.h: the
 * bytes, plain or TLS (transport.c), receiving records (rpc_recv.c),
 * sending them (rpc_send.c), and connecting (connect.c).
 */
#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_io_internal.h"
#include "ldmd/proto/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SEND_MS (60 * 1000)

/* ---------------------------------------------------------------------- */
/* Time and waits                                                         */
/* ---------------------------------------------------------------------- */

int64_t ldm6_io__now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ldm6_io__left_ms(int64_t deadline) {
  int64_t left;

  if (deadline < 0)
    return -1;
  left = deadline - ldm6_io__now_ms();
  if (left <= 0)
    return 0;
  return left > INT_MAX ? INT_MAX : (int)left;
}

int64_t ldm6_io__deadline(int timeout_ms) {
  return timeout_ms < 0 ? -1 : ldm6_io__now_ms() + timeout_ms;
}

/* Wait for events on fd.  @return 1 ready, 0 timed out, -1 errno set
 * (EINTR when a signal came and *cancel is set). */
static int wait_fd(int fd, short events, int64_t deadline,
                   const volatile sig_atomic_t *cancel) {
  for (;;) {
    struct pollfd p = {.fd = fd, .events = events};
    int n = poll(&p, 1, ldm6_io__left_ms(deadline));

    if (n > 0)
      return 1;
    if (n == 0)
      return 0;
    if (errno != EINTR || (cancel != NULL && *cancel))
      return -1;
  }
}

/* wait_fd() on the connection: LDM6_IO_OK (ready), LDM6_IO_TIMEDOUT,
 * LDM6_IO_STOPPED (a stop, not a fault: no detail to log), or LDM6_IO_ESYS
 * with the detail. */
int ldm6_io__wait(ldm6_io *io, short events, int64_t deadline) {
  int r = wait_fd(io->fd, events, deadline, io->cancel);

  if (r > 0)
    return LDM6_IO_OK;
  if (r == 0)
    return LDM6_IO_TIMEDOUT;
  if (errno == EINTR) {
    snprintf(io->detail, sizeof io->detail, "a stop ended the wait");
    return LDM6_IO_STOPPED;
  }
  snprintf(io->detail, sizeof io->detail, "poll: %s", strerror(errno));
  return LDM6_IO_ESYS;
}

/* ---------------------------------------------------------------------- */
/* Construction                                                           */
/* ---------------------------------------------------------------------- */

/* Text form of an address; an IPv4-mapped IPv6 address as plain IPv4, as
 * access rules written for IPv4 expect. */
static void addr_text(const struct sockaddr_storage *ss, char *out,
                      size_t outlen, unsigned *port) {
  *port = 0;
  snprintf(out, outlen, "unknown");
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

    inet_ntop(AF_INET, &s4->sin_addr, out, (socklen_t)outlen);
    *port = ntohs(s4->sin_port);
  } else if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

    if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
      inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], out, (socklen_t)outlen);
    else
      inet_ntop(AF_INET6, &s6->sin6_addr, out, (socklen_t)outlen);
    *port = ntohs(s6->sin6_port);
  }
}

static uint32_t initial_xid(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint32_t)getpid() ^ (uint32_t)ts.tv_sec ^ (uint32_t)ts.tv_nsec;
}

ldm6_io *ldm6_io_new(int fd, size_t max_record) {
  ldm6_io *io = calloc(1, sizeof *io);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  int one = 1, fl;

  if (io == NULL) {
    close(fd);
    return NULL;
  }
  io->fd = fd;
  io->max_record = max_record == 0 ? LDM6_IO_DEFAULT_MAX_RECORD : max_record;
  io->send_timeout_ms = DEFAULT_SEND_MS;
  io->next_xid = initial_xid();
  io->lowat = 1;
  io->want = POLLIN;
  ldm6_rpc_framer_init(&io->fr, io->max_record);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  memset(&ss, 0, sizeof ss);
  if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
    addr_text(&ss, io->peer, sizeof io->peer, &io->port);
  else
    snprintf(io->peer, sizeof io->peer, "unknown");
  return io;
}

void ldm6_io_free(ldm6_io *io) {
  if (io == NULL)
    return;
  ldm6_rpc_framer_free(&io->fr);
  free(io->obuf);
  ldm6_io__tls_end(io);
  if (io->fd >= 0)
    close(io->fd);
  free(io);
}

int ldm6_io_fd(const ldm6_io *io) {
  return io->fd;
}

const char *ldm6_io_peer_addr(const ldm6_io *io) {
  return io->peer;
}

unsigned ldm6_io_peer_port(const ldm6_io *io) {
  return io->port;
}

const char *ldm6_io_detail(const ldm6_io *io) {
  return io->detail;
}

void ldm6_io_set_cancel(ldm6_io *io, const volatile sig_atomic_t *flag) {
  io->cancel = flag;
}

/* ---------------------------------------------------------------------- */
/* The synchronous call                                                   */
/* ---------------------------------------------------------------------- */

int ldm6_io_await_reply(ldm6_io *io, uint32_t xid, int timeout_ms,
                        ldm6_io_msg *reply) {
  int64_t deadline = ldm6_io__deadline(timeout_ms);

  for (;;) {
    ldm6_io_msg m;
    int rc = ldm6_io_recv(io, ldm6_io__left_ms(deadline), &m);

    if (rc != LDM6_IO_OK)
      return rc;
    if (m.hdr.type == LDM6_RPC_CALL) {
      *reply = m;
      snprintf(io->detail, sizeof io->detail,
               "call (procedure %u) received while awaiting a reply",
               (unsigned)m.hdr.u.call.proc);
      return LDM6_IO_EPROTO;
    }
    if (ldm6_rpc_reply_is_refusal(&m.hdr)) {
      *reply = m;
      snprintf(io->detail, sizeof io->detail,
               "MSG_DENIED/AUTH_ERROR, auth_stat %u%s, xid %u",
               (unsigned)m.hdr.u.reply.auth_stat,
               m.hdr.u.reply.auth_stat == LDM6_RPC_AUTH_TOOWEAK
                   ? " (AUTH_TOOWEAK)"
                   : "",
               (unsigned)m.hdr.xid);
      return LDM6_IO_DENIED;
    }
    if (!ldm6_rpc_reply_is_awaited(&m.hdr, true, xid))
      continue; /* a stray answer to a one-way call */
    *reply = m;
    if (m.hdr.u.reply.reply_stat != LDM6_RPC_MSG_ACCEPTED ||
        m.hdr.u.reply.accept_stat != LDM6_RPC_SUCCESS)
      return LDM6_IO_EREPLY;
    return LDM6_IO_OK;
  }
}

int ldm6_io_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                 const struct iovec *args, int nargs, int timeout_ms,
                 ldm6_io_msg *reply) {
  uint32_t xid;
  int rc = ldm6_io_send_call(io, vers, proc, args, nargs, &xid);

  if (rc != LDM6_IO_OK)
    return rc;
  return ldm6_io_await_reply(io, xid, timeout_ms, reply);
}

const char *ldm6_io_strerror(int rc) {
  switch (rc) {
  case LDM6_IO_OK:
    return "success";
  case LDM6_IO_CLOSED:
    return "connection closed by peer";
  case LDM6_IO_TIMEDOUT:
    return "timed out";
  case LDM6_IO_EPROTO:
    return "protocol error";
  case LDM6_IO_ESYS:
    return "system error";
  case LDM6_IO_EREPLY:
    return "call not accepted";
  case LDM6_IO_AGAIN:
    return "the socket takes no more for now";
  case LDM6_IO_FULL:
    return "the batch of queued calls is full";
  case LDM6_IO_DENIED:
    return "not allowed by the peer";
  case LDM6_IO_STOPPED:
    return "stopped";
  default:
    return "unknown ldm6_io result";
  }
}
