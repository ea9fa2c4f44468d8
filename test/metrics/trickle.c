/*
 * trickle.c - slow HTTP clients for the test of the metrics endpoint's
 * bounds (slow_clients.sh, docs/security.md "The metrics endpoint"): N
 * connections to 127.0.0.1:PORT, each from one of K loopback addresses
 * (127.0.0.B on, B 2 unless -b says), each sending a request one byte a second
 * whose headers never end, as a hostile client would to hold a slot.  A
 * connection the server ends is reported and, with -r, made again at the next
 * second. Once a second it prints a line the test reads:
 *
 *   tick T open O sent S cut C
 *
 * T seconds since the start, O connections open, S the fewest bytes any
 * of them has sent since it was made, C connections ended by the server
 * so far; and for each such end "cut I after MS ms" (I the connection's
 * number, MS its age).  It stops after -t seconds.
 *
 * Usage: trickle -p PORT -n N [-k K] [-b B] [-t SECONDS] [-r]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024

/* The request: its headers never end. */
static const char REQUEST[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";

typedef struct conn {
  int fd;         /* -1: not connected */
  long sent;      /* bytes sent since it was made */
  long long t0ms; /* when it was made */
} conn;

static long long now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first of the K local addresses: 127.0.0.FIRST. */
static unsigned first = 2;

/* Connect c from 127.0.0.(first + i % k) to port; c->fd stays -1 if not. */
static void dial(conn *c, int i, int k, unsigned port) {
  struct sockaddr_in me = {.sin_family = AF_INET}, to = me;
  struct timeval tv = {5, 0};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return;
  me.sin_addr.s_addr = htonl(0x7f000000u + first + (unsigned)(i % k));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons((uint16_t)port);
  (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (bind(fd, (struct sockaddr *)&me, sizeof me) != 0 ||
      connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
    close(fd);
    return;
  }
  c->fd = fd;
  c->sent = 0;
  c->t0ms = now_ms();
}

/* Has the server ended c (read end of file, or an error)? */
static int ended(const conn *c) {
  struct pollfd p = {.fd = c->fd, .events = POLLIN};
  char buf[512];

  if (poll(&p, 1, 0) <= 0)
    return 0;
  if ((p.revents & (POLLERR | POLLHUP)) != 0)
    return 1;
  return recv(c->fd, buf, sizeof buf, MSG_DONTWAIT) <= 0;
}

/* One byte more of c's request; 0, or -1 if the server has ended it. */
static int send_one(conn *c) {
  char b = c->sent < (long)sizeof REQUEST - 1 ? REQUEST[c->sent] : 'a';

  if (send(c->fd, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1 && errno != EAGAIN &&
      errno != EWOULDBLOCK)
    return -1;
  c->sent++;
  return 0;
}

/* One second's round over the n connections. */
static void round_all(conn *cs, int n, int k, unsigned port, int again,
                      long *cut) {
  int i;

  for (i = 0; i < n; i++) {
    conn *c = &cs[i];

    if (c->fd >= 0 && (ended(c) || send_one(c) != 0)) {
      printf("cut %d after %lld ms\n", i, now_ms() - c->t0ms);
      close(c->fd);
      c->fd = -1;
      (*cut)++;
      continue;
    }
    if (c->fd < 0 && (again || c->t0ms == 0))
      dial(c, i, k, port);
  }
}

static void report(const conn *cs, int n, long t, long cut) {
  long fewest = -1;
  int i, open = 0;

  for (i = 0; i < n; i++) {
    if (cs[i].fd < 0)
      continue;
    open++;
    if (fewest < 0 || cs[i].sent < fewest)
      fewest = cs[i].sent;
  }
  printf("tick %ld open %d sent %ld cut %ld\n", t, open,
         fewest < 0 ? 0 : fewest, cut);
  fflush(stdout);
}

int main(int argc, char **argv) {
  static conn cs[MAX_CONNS];
  unsigned port = 0;
  int n = 0, k = 1, again = 0, opt, i;
  long limit = 60, t, cut = 0;
  long long start;

  while ((opt = getopt(argc, argv, "p:n:k:b:t:r")) != -1) {
    if (opt == 'p')
      port = (unsigned)atoi(optarg);
    else if (opt == 'n')
      n = atoi(optarg);
    else if (opt == 'k')
      k = atoi(optarg);
    else if (opt == 'b')
      first = (unsigned)atoi(optarg);
    else if (opt == 't')
      limit = atol(optarg);
    else if (opt == 'r')
      again = 1;
    else
      return 2;
  }
  if (port == 0 || port > 65535 || n < 1 || n > MAX_CONNS || k < 1 ||
      first < 1 || first + (unsigned)k > 255 || limit < 1) {
    fprintf(stderr,
            "usage: trickle -p PORT -n N [-k K] [-b B] [-t SECONDS] [-r]\n");
    return 2;
  }
  for (i = 0; i < n; i++)
    cs[i].fd = -1;
  start = now_ms();
  for (t = 0; t < limit; t++) {
    long long next = start + (t + 1) * 1000, left;

    round_all(cs, n, k, port, again, &cut);
    report(cs, n, t, cut);
    /* One byte a second is the hostile client's pace, not a wait. */
    while ((left = next - now_ms()) > 0)
      (void)poll(NULL, 0, (int)left);
  }
  return 0;
}
