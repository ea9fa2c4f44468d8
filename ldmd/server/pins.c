/*
 * pins.c - the products an upstream's socket may still read from the queue
 * file (pins.h says why).  The FIFO follows the connection: products are
 * pinned in the order they are sent, so they are released from the front
 * as the peer's position passes their ends.
 *
 * The peer's position is the bytes the socket has taken less its unsent
 * and unacknowledged bytes (SIOCOUTQ); for a peer on this host, less also
 * what waits unread in its socket's receive queue, which refers to our
 * pages until it is read (a loopback peer acknowledges bytes it has not
 * read yet).  That one is asked of sock_diag(7): one request naming the
 * peer's socket by its addresses and ports (the mirror of ours); a socket
 * that is no longer there has nothing unread.  At the start the same
 * request tells whether the peer is on this host at all.
 */
#include "ldmd/server/pins.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/server/clock.h"

#define LOOK_EVERY_MS 10 /* between looks while waiting for a local peer */

struct diag_req {
  struct nlmsghdr nlh;
  struct inet_diag_req_v2 r;
};

/* Fill the request naming the peer's socket: its source is our peer
 * address, its destination our address.  @return false if the
 * addresses are not TCP over IPv4 or IPv6 */
static bool make_request(ldmd_pins *p) {
  struct sockaddr_storage me, him;
  socklen_t ml = sizeof me, hl = sizeof him;
  struct diag_req q;

  if (getsockname(p->sock, (struct sockaddr *)&me, &ml) != 0 ||
      getpeername(p->sock, (struct sockaddr *)&him, &hl) != 0 ||
      me.ss_family != him.ss_family)
    return false;
  memset(&q, 0, sizeof q);
  q.nlh.nlmsg_len = sizeof q;
  q.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  q.nlh.nlmsg_flags = NLM_F_REQUEST;
  q.r.sdiag_protocol = IPPROTO_TCP;
  q.r.idiag_states = ~0u;
  q.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  if (me.ss_family == AF_INET) {
    const struct sockaddr_in *m = (const struct sockaddr_in *)&me;
    const struct sockaddr_in *h = (const struct sockaddr_in *)&him;

    q.r.sdiag_family = AF_INET;
    q.r.id.idiag_sport = h->sin_port;
    q.r.id.idiag_dport = m->sin_port;
    memcpy(q.r.id.idiag_src, &h->sin_addr, 4);
    memcpy(q.r.id.idiag_dst, &m->sin_addr, 4);
  } else if (me.ss_family == AF_INET6) {
    const struct sockaddr_in6 *m = (const struct sockaddr_in6 *)&me;
    const struct sockaddr_in6 *h = (const struct sockaddr_in6 *)&him;

    q.r.id.idiag_sport = h->sin6_port;
    q.r.id.idiag_dport = m->sin6_port;
    if (IN6_IS_ADDR_V4MAPPED(&m->sin6_addr) &&
        IN6_IS_ADDR_V4MAPPED(&h->sin6_addr)) {
      /* An IPv4 peer on a dual-stack socket: its own socket is IPv4. */
      q.r.sdiag_family = AF_INET;
      memcpy(q.r.id.idiag_src, h->sin6_addr.s6_addr + 12, 4);
      memcpy(q.r.id.idiag_dst, m->sin6_addr.s6_addr + 12, 4);
    } else {
      q.r.sdiag_family = AF_INET6;
      memcpy(q.r.id.idiag_src, &h->sin6_addr, 16);
      memcpy(q.r.id.idiag_dst, &m->sin6_addr, 16);
    }
  } else {
    return false;
  }
  memcpy(p->id, &q, sizeof q);
  p->idlen = sizeof q;
  return true;
}

/* The peer socket's unread bytes: >= 0, -1 when it is not on this host
 * (or gone), -2 when the question failed. */
static long peer_unread(ldmd_pins *p) {
  /* One answer: a header and an inet_diag_msg (and attributes not asked
   * for), or an error; aligned as a header. */
  struct nlmsghdr ans[1024 / sizeof(struct nlmsghdr)];
  const struct nlmsghdr *h = ans;
  struct pollfd pf = {.fd = p->diag, .events = POLLIN};
  ssize_t n;

  if (send(p->diag, p->id, p->idlen, 0) != (ssize_t)p->idlen)
    return -2;
  if (poll(&pf, 1, 1000) != 1)
    return -2;
  n = recv(p->diag, ans, sizeof ans, 0);
  if (n < (ssize_t)sizeof *h || !NLMSG_OK(h, (size_t)n))
    return -2;
  if (h->nlmsg_type == NLMSG_ERROR) {
    const struct nlmsgerr *e = NLMSG_DATA(h);

    return e->error == -ENOENT ? -1 : -2;
  }
  if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
      h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
    return -2;
  return (long)((const struct inet_diag_msg *)NLMSG_DATA(h))->idiag_rqueue;
}

void ldmd_pins_init(ldmd_pins *p, pq_t *pq, int sock, uint64_t limit) {
  static const struct linger abort_close = {.l_onoff = 1, .l_linger = 0};

  memset(p, 0, sizeof *p);
  p->pq = pq;
  p->sock = sock;
  p->limit = limit;
  p->diag = -1;
  /* Whatever ends this process, even SIGKILL, its socket must not go on
   * sending pages it no longer pins: a close drops the unsent bytes (and
   * resets the connection; the downstream resumes after what it got). */
  (void)setsockopt(sock, SOL_SOCKET, SO_LINGER, &abort_close,
                   sizeof abort_close);
  if (!make_request(p))
    return;
  p->diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (p->diag < 0)
    return;
  p->local = peer_unread(p) >= 0;
  if (!p->local) {
    close(p->diag);
    p->diag = -1;
  }
}

void ldmd_pins_init_off(ldmd_pins *p) {
  memset(p, 0, sizeof *p);
  p->diag = -1;
}

/* Bytes the peer has taken: tx less what the sockets hold.  A question
 * that fails counts as nothing taken (pins are then kept longer). */
static uint64_t peer_position(ldmd_pins *p, uint64_t tx) {
  int outq = 0;
  uint64_t held;

  if (ioctl(p->sock, SIOCOUTQ, &outq) != 0 || outq < 0)
    return 0;
  held = (uint64_t)outq;
  if (p->local) {
    long unread = peer_unread(p);

    if (unread == -2)
      return 0;
    if (unread > 0)
      held += (uint64_t)unread;
  }
  return held < tx ? tx - held : 0;
}

static void release_front(ldmd_pins *p) {
  pq_unpin(p->pq, &p->ring[p->head].pin);
  p->bytes -= p->ring[p->head].pin.pn_len;
  p->head = (p->head + 1) % LDMD_PINS_MAX;
  p->n--;
}

unsigned ldmd_pins_reap(ldmd_pins *p, uint64_t tx) {
  uint64_t at;

  if (p->n == 0)
    return 0;
  at = peer_position(p, tx);
  while (p->n > 0 && p->ring[p->head].end <= at)
    release_front(p);
  return p->n;
}

bool ldmd_pins_room(ldmd_pins *p, uint64_t size, uint64_t tx) {
  if (p->n < LDMD_PINS_MAX && p->bytes + size <= p->limit)
    return true;
  ldmd_pins_reap(p, tx);
  return p->n < LDMD_PINS_MAX && p->bytes + size <= p->limit;
}

void ldmd_pins_add(ldmd_pins *p, const pq_pin_t *pin, uint64_t end) {
  unsigned i = (p->head + p->n) % LDMD_PINS_MAX;

  p->ring[i].pin = *pin;
  p->ring[i].end = end;
  p->bytes += pin->pn_len;
  p->n++;
}

void ldmd_pins_release_all(ldmd_pins *p) {
  while (p->n > 0)
    release_front(p);
}

void ldmd_pins_release_to(ldmd_pins *p, uint64_t pos) {
  while (p->n > 0 && p->ring[p->head].end <= pos)
    release_front(p);
}

unsigned ldmd_pins_end(ldmd_pins *p, uint64_t tx, int timeout_ms) {
  int64_t until = ldmd_now_ms() + timeout_ms;
  unsigned left = 0;

  if (p->n > 0) {
    /* A peer on this host reads our pages from its receive queue, even
     * after a reset: give it time to read them while the connection is
     * up (a reset would hide its socket from sock_diag). */
    while (p->local && ldmd_pins_reap(p, tx) > 0 && ldmd_now_ms() < until)
      (void)poll(NULL, 0, LOOK_EVERY_MS);
    left = p->local ? p->n : 0;
    if (p->n > 0) {
      /* Drop what the socket still holds, now (an abortive disconnect:
       * connect(2) to AF_UNSPEC), so that no page goes out unpinned. */
      struct sockaddr none = {.sa_family = AF_UNSPEC};

      (void)connect(p->sock, &none, sizeof none);
    }
  }
  ldmd_pins_release_all(p);
  return left;
}

void ldmd_pins_close(ldmd_pins *p) {
  if (p->diag >= 0)
    close(p->diag);
  p->diag = -1;
}
