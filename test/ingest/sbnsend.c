/*
 * sbnsend.c - sbnsend, the test tree's NOAAPORT multicast sender (not
 * installed): sends a stream of SBN frames, one frame a UDP datagram, to
 * an IPv4 multicast group, as a NOAAPORT receiver puts them on the LAN
 * (docs/noaaport.md, "Channels and input").  The stream is split by the
 * frames' own lengths (libsbngen's sg_next_unit); bytes between frames go
 * as datagrams of their own, so every byte of the file is sent, in order.
 *
 *   sbnsend -g group:port [-i interface-address] [-r Mbit/s] [-n repeat]
 *           [-d every] [-D index,...] [-v] file
 *   sbnsend -L port [-r Mbit/s] [-n repeat] [-d every] [-D index,...] file
 *
 * -i sets the sending interface (IP_MULTICAST_IF); loopback is on and the
 * TTL is 1.  -r paces the datagrams on absolute deadlines (0, the
 * default: as fast as possible).  -n sends the file that many times (1).
 * -d N leaves out the datagrams whose index in the file is N-1 modulo N
 * (every N-th), -D the datagrams of those indexes (from 0).  Only a
 * multicast group is ever a destination: anything else is refused.
 * -L serves the stream instead as an LDM "fanout server" does, over TCP:
 * it listens on 127.0.0.1 only (port 0: any; the port is printed as
 * "sbnsend: listening on 127.0.0.1:PORT"), takes one connection, writes
 * the stream (less the frames left out) and closes it.
 */
#include "test/ingest/sbngen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_DATAGRAM 65507
#define MAX_DROPS 4096

struct options {
  struct sockaddr_in group;
  struct in_addr iface;
  double mbps;
  unsigned long repeat, every;
  unsigned long drops[MAX_DROPS];
  size_t ndrops;
  int verbose;
  int listen;     /* -L: serve the stream over TCP instead */
  uint16_t lport; /* its port on 127.0.0.1 (0: any) */
  const char *file;
};

static void usage(void) {
  fprintf(stderr, "usage: sbnsend -g group:port [-i interface-address] "
                  "[-r Mbit/s] [-n repeat]\n"
                  "               [-d every] [-D index,...] [-v] file\n");
  exit(1);
}

static void fail(const char *what, const char *arg) {
  fprintf(stderr, "sbnsend: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
  exit(1);
}

static unsigned long number(const char *s, const char *what) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);

  if (errno || end == s || *end || *s == '-')
    fail(what, s);
  return v;
}

/* "a.b.c.d:port", a multicast group only. */
static void parse_group(struct sockaddr_in *sa, const char *arg) {
  char host[INET_ADDRSTRLEN];
  const char *colon = strrchr(arg, ':');

  if (colon == NULL || (size_t)(colon - arg) >= sizeof host)
    fail("bad group:port", arg);
  memcpy(host, arg, (size_t)(colon - arg));
  host[colon - arg] = 0;
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  unsigned long port = number(colon + 1, "bad port");
  if (port < 1 || port > 65535)
    fail("bad port", colon + 1);
  sa->sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
    fail("bad group address", host);
  if (!IN_MULTICAST(ntohl(sa->sin_addr.s_addr)))
    fail("not a multicast group, refused", host);
}

static void parse_drops(struct options *o, char *arg) {
  for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
    if (o->ndrops == MAX_DROPS)
      fail("too many indexes for -D", NULL);
    o->drops[o->ndrops++] = number(tok, "bad index");
  }
}

static void parse(struct options *o, int argc, char **argv) {
  int c;
  char *end;

  memset(o, 0, sizeof *o);
  o->repeat = 1;
  while ((c = getopt(argc, argv, "g:i:r:n:d:D:vL:")) != -1) {
    switch (c) {
    case 'g':
      parse_group(&o->group, optarg);
      break;
    case 'i':
      if (inet_pton(AF_INET, optarg, &o->iface) != 1)
        fail("bad interface address", optarg);
      break;
    case 'r':
      o->mbps = strtod(optarg, &end);
      if (end == optarg || *end || !(o->mbps >= 0 && o->mbps < 1e6))
        fail("bad rate", optarg);
      break;
    case 'n':
      o->repeat = number(optarg, "bad repeat count");
      break;
    case 'd':
      o->every = number(optarg, "bad -d");
      break;
    case 'D':
      parse_drops(o, optarg);
      break;
    case 'v':
      o->verbose = 1;
      break;
    case 'L': {
      unsigned long port = number(optarg, "bad port");
      if (port > 65535)
        fail("bad port", optarg);
      o->listen = 1;
      o->lport = (uint16_t)port;
      break;
    }
    default:
      usage();
    }
  }
  if ((o->group.sin_family != AF_INET && !o->listen) || optind + 1 != argc)
    usage();
  o->file = argv[optind];
}

static uint8_t *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t cap = 0;

  if (f == NULL)
    fail(strerror(errno), path);
  *n = 0;
  for (;;) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      uint8_t *more = realloc(buf, cap);
      if (more == NULL || cap > (size_t)1 << 31)
        fail("file too large", path);
      buf = more;
    }
    size_t got = fread(buf + *n, 1, cap - *n, f);
    *n += got;
    if (got == 0)
      break;
  }
  if (ferror(f))
    fail(strerror(errno), path);
  fclose(f);
  return buf;
}

static int open_socket(const struct options *o) {
  int s = socket(AF_INET, SOCK_DGRAM, 0);
  unsigned char ttl = 1, loop = 1;

  if (s < 0 ||
      setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &o->iface, sizeof o->iface) !=
          0 ||
      setsockopt(s, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0 ||
      setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0)
    fail("multicast socket", strerror(errno));
  return s;
}

static int dropped(const struct options *o, unsigned long index) {
  if (o->every && index % o->every == o->every - 1)
    return 1;
  for (size_t i = 0; i < o->ndrops; i++)
    if (o->drops[i] == index)
      return 1;
  return 0;
}

/* Waits for the deadline of a datagram that follows bits already sent. */
static void pace(const struct options *o, const struct timespec *start,
                 double bits) {
  if (o->mbps <= 0)
    return;
  double at = bits / (o->mbps * 1e6);
  struct timespec t = *start;
  t.tv_sec += (time_t)at;
  t.tv_nsec += (long)((at - (double)(time_t)at) * 1e9);
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
    ;
}

struct totals {
  unsigned long sent, dropped;
  double bits;
};

static void send_datagram(int s, const struct options *o, const uint8_t *p,
                          size_t n, struct totals *t) {
  if (o->listen) { /* a byte stream: all of it */
    for (size_t k = 0; k < n;) {
      ssize_t w = write(s, p + k, n - k);
      if (w < 0 && errno != EINTR)
        fail("write", strerror(errno));
      k += w > 0 ? (size_t)w : 0;
    }
  } else if (sendto(s, p, n, 0, (const struct sockaddr *)&o->group,
                    sizeof o->group) != (ssize_t)n) {
    fail("sendto", strerror(errno));
  }
  t->sent++;
  t->bits += 8.0 * (double)n;
}

/* One pass over the file: each frame, or run of bytes between frames, one
 * datagram (split at 65507 bytes, the most UDP carries). */
static void send_file(int s, const struct options *o, const uint8_t *buf,
                      size_t n, const struct timespec *start,
                      struct totals *t) {
  unsigned long index = 0;

  for (size_t off = 0; off < n; index++) {
    size_t len = sg_next_unit(buf + off, n - off);
    if (dropped(o, index)) {
      t->dropped++;
    } else {
      for (size_t k = 0; k < len; k += MAX_DATAGRAM) {
        size_t part = len - k < MAX_DATAGRAM ? len - k : MAX_DATAGRAM;
        pace(o, start, t->bits);
        send_datagram(s, o, buf + off + k, part, t);
      }
      if (o->verbose)
        fprintf(stderr, "sbnsend: datagram %lu, %zu bytes\n", index, len);
    }
    off += len;
  }
}

/* -L: one connection on 127.0.0.1, once the port is printed. */
static int serve_one(const struct options *o) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(o->lport)};
  socklen_t len = sizeof sa;
  int on = 1, l = socket(AF_INET, SOCK_STREAM, 0);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 1) != 0 ||
      getsockname(l, (struct sockaddr *)&sa, &len) != 0)
    fail("listen", strerror(errno));
  fprintf(stderr, "sbnsend: listening on 127.0.0.1:%u\n",
          (unsigned)ntohs(sa.sin_port));
  fflush(stderr);
  int c = accept(l, NULL, NULL);
  if (c < 0)
    fail("accept", strerror(errno));
  close(l);
  return c;
}

int main(int argc, char **argv) {
  struct options o;
  struct totals t = {0};
  struct timespec start;
  size_t n;

  parse(&o, argc, argv);
  uint8_t *buf = read_file(o.file, &n);
  int s = o.listen ? serve_one(&o) : open_socket(&o);
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (unsigned long i = 0; i < o.repeat; i++)
    send_file(s, &o, buf, n, &start, &t);
  close(s);
  free(buf);
  fprintf(stderr, "sbnsend: %lu datagrams sent (%.0f bytes), %lu left out\n",
          t.sent, t.bits / 8, t.dropped);
  return 0;
}
