/*
 * noaaportIngester - NOAAPORT (SBN) frames into a product queue, as LDM
 * 6.15's program of that name: one process per channel, under ldmd's EXEC,
 * reading a multicast group (-m) or standard input (a file of frames, a
 * capture), making the products LDM makes from them (libnoaaport) and
 * inserting them (docs/noaaport.md; man page noaaportIngester.1).
 *
 * From standard input one thread reads and builds.  From a multicast
 * group a reader thread, at real-time priority where the system allows,
 * moves datagrams into a bounded FIFO (-b pages, ingest_fifo.h) and the
 * main thread builds from it, so that a slow insert never makes the
 * kernel drop datagrams.  SIGTERM closes the input: what was read is
 * still turned into products, then the statistics are logged and the
 * program exits 0.  SIGUSR1 logs the statistics and reopens the log;
 * SIGUSR2 cycles the log level.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/ingest/ingest_fifo.h"
#include "pqutils/ingest/ingest_insert.h"
#include "pqutils/ingest/ingest_stats.h"
#include "pqutils/ingest/product_build.h"
#include "pqutils/ingest/sbn_frame.h"

#ifndef NP_VERSION
#define NP_VERSION "0"
#endif

static const char usage[] =
    "Usage: noaaportIngester [-cfnvx] [-l dest] [-u n] [-m group] [-q queue]\n"
    "                        [-b npages] [-I iface] [-R bytes]\n"
    "  -c        Store compressed frames inflated\n"
    "  -f        Fill the scan lines of missing GOES blocks\n"
    "  -n        Log at NOTE and above (a line per product)\n"
    "  -v        Log at INFO and above\n"
    "  -x        Log at DEBUG and above\n"
    "  -l dest   Log to dest: \"-\" standard error, \"\" syslog, else a file\n"
    "  -u n      Log to syslog, facility local<n> (0-7)\n"
    "  -m group  Read this IPv4 multicast group (224.x.y.1-10, port\n"
    "            1200 + the last octet); default: standard input\n"
    "  -I iface  IPv4 address of the interface to join the group on\n"
    "  -R bytes  Socket receive buffer size\n"
    "  -q queue  Product queue (default: the registry's /queue/path)\n"
    "  -b npages Size of the FIFO in pages (default 5000)\n"
    "  -r, -s, -t  Retransmission options of LDM's AWIPS builds: ignored\n";

struct opts {
  struct np_build_opts build;
  const char *group;
  const char *iface;
  uint64_t rcvbuf; /* 0: the system's */
  uint64_t npages;
  struct in_addr group_addr;
  uint16_t port;
};

/* LDM's level options: -n NOTE (the others are cli.c's -v and -x). */
static int option(struct cli *c, int ch, const char *arg, struct opts *o) {
  uint64_t v;
  switch (ch) {
  case 'c':
    o->build.inflate = true;
    return 0;
  case 'f':
    o->build.fill = true;
    return 0;
  case 'n':
    if (!ldm_log_enabled(LDM_LOG_NOTICE))
      ldm_log_set_level(LDM_LOG_NOTICE);
    return 0;
  case 'u': {
    static const int fac[] = {LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3,
                              LOG_LOCAL4, LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};
    if (cli_parse_uint(c, "-u", arg, 7, &v) != 0)
      return -1;
    ldm_log_set_facility(fac[v]);
    return ldm_log_set_destination("") == 0 ? 0 : -1;
  }
  case 'm':
    o->group = arg;
    return 0;
  case 'I':
    o->iface = arg;
    return 0;
  case 'R':
    if (cli_parse_uint(c, "-R", arg, INT32_MAX, &v) != 0 || v == 0) {
      fprintf(stderr, "%s: Invalid receive buffer size: \"%s\"\n", c->progname,
              arg);
      return -1;
    }
    o->rcvbuf = v;
    return 0;
  case 'b':
    if (cli_parse_uint(c, "-b", arg, 1u << 20, &v) != 0 || v == 0) {
      fprintf(stderr, "%s: Invalid FIFO size: \"%s\"\n", c->progname, arg);
      return -1;
    }
    o->npages = v;
    return 0;
  case 'r':
  case 's':
  case 't': /* LDM's RETRANS_SUPPORT options: accepted, ignored */
    return 0;
  default:
    return -1;
  }
}

/* The command line: CLI_GO_ON, or the status to exit with.  Not
 * cli_parse(): the level must start at WARN, LDM's ingester's default,
 * before -n, -v or -x lower it. */
static int parse(struct cli *c, int argc, char **argv, struct opts *o) {
  cli_init(c, argv[0]);
  ldm_log_set_level(LDM_LOG_WARNING);
  int ch, st;
  while ((st = cli_next_option(c, argc, argv, ":cfnvxl:u:m:q:b:I:R:r:s:t:",
                               usage, &ch)) == CLI_OPT_OWN)
    if (option(c, ch, optarg, o) != 0)
      return CLI_EXIT_USAGE;
  if (st == CLI_OPT_HELP)
    return 0;
  if (st == CLI_OPT_ERROR)
    return CLI_EXIT_USAGE;
  if (optind < argc) {
    cli_usage_error(c, usage, "Extraneous command-line argument: \"%s\"",
                    argv[optind]);
    return CLI_EXIT_USAGE;
  }
  return CLI_GO_ON;
}

/* -m: a multicast group whose last octet is a channel (1..10). */
static int check_group(struct opts *o) {
  if (o->group == NULL)
    return 0;
  if (inet_pton(AF_INET, o->group, &o->group_addr) != 1 ||
      !IN_MULTICAST(ntohl(o->group_addr.s_addr))) {
    log_error("Invalid multicast address: \"%s\"", o->group);
    return -1;
  }
  unsigned last = ntohl(o->group_addr.s_addr) & 0xffu;
  if (last < 1 || last > 10) {
    log_error("Invalid NBS channel: %u", last);
    return -1;
  }
  o->port = (uint16_t)(1200 + last);
  return 0;
}

/* ---- messages of the library to the logger ---- */

static void to_logger(void *arg, int level, const char *msg) {
  (void)arg;
  if (ldm_log_enabled((enum ldm_log_level)level))
    ldm_log_write((enum ldm_log_level)level, "noaaportIngester.c", "ingest", 0,
                  "%s", msg);
}

/* The library's level follows the logger's (SIGUSR2 changes it). */
static void sync_level(struct np_log *lg) {
  lg->level = (int)ldm_log_get_level();
}

/* ---- building: frames out of bytes, products into the queue ---- */

struct ingest {
  struct np_log log;
  struct np_namer namer;
  struct np_sbn sbn;
  struct np_build *build;
  struct np_inserter ins;
  uint8_t *buf; /* bytes not yet made into frames: [0, len) */
  size_t len, cap;
  uint64_t octets;
  struct np_fifo *fifo; /* with -m, else NULL */
  uint64_t fullfifo;    /* the FIFO's count, once it is gone */
  struct np_stats last; /* at the previous report */
  double start, last_at;
};

static void on_product(void *arg, const struct np_product *p) {
  struct ingest *g = arg;
  (void)np_insert(&g->ins, p);
}

static struct np_stats current(const struct ingest *g) {
  return (struct np_stats){
      .octets = g->octets,
      .frames = g->sbn.counts.frames,
      .missed = g->sbn.counts.missed,
      .fullfifo = g->fifo != NULL
                      ? __atomic_load_n(&g->fifo->fullfifo, __ATOMIC_RELAXED)
                      : g->fullfifo,
      .products = g->ins.products,
  };
}

/* LDM's statistics block: at NOTE whatever the level. */
static void report(struct ingest *g) {
  enum ldm_log_level was = ldm_log_get_level();
  if (was > LDM_LOG_NOTICE)
    ldm_log_set_level(LDM_LOG_NOTICE);
  struct np_log lg = {to_logger, NULL, NP_NOTE};
  struct np_stats now = current(g);
  struct np_stats iv = np_stats_diff(&now, &g->last);
  double t = cli_monotonic();
  np_stats_log(&iv, t - g->last_at, &now, t - g->start, &lg);
  g->last = now;
  g->last_at = t;
  if (was > LDM_LOG_NOTICE)
    ldm_log_set_level(was);
}

/* Make frames of what is buffered and move the rest to the front. */
static void build_buffered(struct ingest *g, bool eof) {
  sync_level(&g->log);
  size_t pos = 0;
  struct np_frame f;
  while (np_sbn_next(&g->sbn, g->buf, g->len, &pos, &f, eof) == NP_SBN_FRAME)
    np_build_frame(g->build, &f);
  memmove(g->buf, g->buf + pos, g->len - pos);
  g->len -= pos;
  if (cli_stats_requested())
    report(g);
}

/* Room for n more bytes in the buffer (it holds at most one partial
 * frame and what was just read, so it stays small). */
static int reserve(struct ingest *g, size_t n) {
  if (g->cap - g->len >= n)
    return 0;
  size_t cap = g->cap != 0 ? g->cap : 1u << 20;
  while (cap - g->len < n)
    cap *= 2;
  uint8_t *p = realloc(g->buf, cap);
  if (p == NULL) {
    log_error("Out of memory for %zu bytes of frames", cap);
    return -1;
  }
  g->buf = p;
  g->cap = cap;
  return 0;
}

/* Standard input, to its end or a stop. */
static int read_stdin(struct ingest *g) {
  for (;;) {
    if (reserve(g, 256 * 1024) != 0)
      return -1;
    int w = cli_io_wait(STDIN_FILENO, POLLIN, 1000);
    if (w < 0 && cli_stopping())
      break;
    if (w <= 0) {
      if (cli_stats_requested())
        report(g);
      continue;
    }
    ssize_t n = read(STDIN_FILENO, g->buf + g->len, g->cap - g->len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      log_error("Couldn't read standard input: %s", strerror(errno));
      return -1;
    }
    if (n == 0) {
      log_notice("FIFO EOF");
      break;
    }
    g->octets += (uint64_t)n;
    g->len += (size_t)n;
    build_buffered(g, false);
  }
  build_buffered(g, true);
  return 0;
}

/* ---- multicast ---- */

/* The socket LDM's ingester reads: bound to the group and its port,
 * joined on -I's interface (or the system's choice). */
static int open_group(const struct opts *o) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    log_error("Couldn't create socket: %s", strerror(errno));
    return -1;
  }
  int on = 1;
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons(o->port),
                           .sin_addr = o->group_addr};
  struct ip_mreq mr = {.imr_multiaddr = o->group_addr};
  mr.imr_interface.s_addr = htonl(INADDR_ANY);
  if (o->iface != NULL &&
      inet_pton(AF_INET, o->iface, &mr.imr_interface) != 1) {
    log_error("Invalid interface address: \"%s\"", o->iface);
    goto fail;
  }
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) != 0) {
    log_error("Couldn't join multicast group %s port %u: %s", o->group,
              (unsigned)o->port, strerror(errno));
    goto fail;
  }
  if (o->rcvbuf != 0) {
    int v = (int)o->rcvbuf;
    log_notice("Setting receive buffer size");
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) != 0)
      log_warning("Couldn't set receive buffer size: %s", strerror(errno));
  }
  int got = 0;
  socklen_t len = sizeof got;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0)
    log_notice("Receive buffer size is %d bytes", got);
  return fd;
fail:
  (void)close(fd);
  return -1;
}

struct reader {
  int fd;
  struct np_fifo *fifo;
  uint64_t octets; /* read by the reader thread (under no lock: only
                      read after it has been joined, or racily for stats) */
};

/* Real-time priority for a thread, as LDM's ingester asks for with -m:
 * the highest for the reader, one less for the builder. */
static void realtime(const char *who, int below_max) {
  struct sched_param sp = {.sched_priority =
                               sched_get_priority_max(SCHED_FIFO) - below_max};
  int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  if (rc != 0)
    log_warning("Couldn't give the %s thread real-time priority: %s", who,
                strerror(rc));
}

static void *reader_main(void *arg) {
  struct reader *r = arg;
  realtime("reader", 0);
  for (;;) {
    uint8_t *p = np_fifo_reserve(r->fifo);
    if (p == NULL)
      break;
    int w = cli_io_wait(r->fd, POLLIN, -1);
    if (w < 0)
      break; /* a stop */
    ssize_t n = recv(r->fd, p, NP_DATAGRAM_MAX, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      log_error("Couldn't read multicast socket: %s", strerror(errno));
      break;
    }
    __atomic_add_fetch(&r->octets, (uint64_t)n, __ATOMIC_RELAXED);
    np_fifo_commit(r->fifo, (size_t)n);
  }
  np_fifo_close(r->fifo);
  return NULL;
}

/* Build from the FIFO until the reader closes it. */
static int build_from_fifo(struct ingest *g, struct reader *r) {
  realtime("product-building", 1);
  for (;;) {
    size_t n;
    const uint8_t *p = np_fifo_next(g->fifo, &n);
    if (p == NULL)
      break;
    if (reserve(g, n) != 0) {
      np_fifo_release(g->fifo);
      return -1;
    }
    memcpy(g->buf + g->len, p, n);
    g->len += n;
    np_fifo_release(g->fifo);
    g->octets = __atomic_load_n(&r->octets, __ATOMIC_RELAXED);
    build_buffered(g, false);
  }
  build_buffered(g, true);
  return 0;
}

static int read_group(struct ingest *g, const struct opts *o) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t cap = (size_t)o->npages * page;
  if (cap < NP_DATAGRAM_MAX + 4 + 1) {
    log_error("Request-amount is greater than FIFO capacity: %d > %zu",
              NP_DATAGRAM_MAX, cap);
    return -1;
  }
  struct np_fifo fifo;
  if (np_fifo_init(&fifo, cap) != 0) {
    log_error("Couldn't allocate a FIFO of %zu bytes: %s", cap,
              strerror(errno));
    return -1;
  }
  struct reader r = {.fd = open_group(o), .fifo = &fifo};
  int rc = -1;
  pthread_t th;
  if (r.fd >= 0 && pthread_create(&th, NULL, reader_main, &r) == 0) {
    g->fifo = &fifo;
    rc = build_from_fifo(g, &r);
    np_fifo_close(&fifo);
    (void)pthread_join(th, NULL);
    g->octets = r.octets;
    g->fullfifo = fifo.fullfifo;
  }
  if (r.fd >= 0)
    (void)close(r.fd);
  g->fifo = NULL;
  np_fifo_destroy(&fifo);
  return rc;
}

/* ---- the program ---- */

/* LDM's ingester locks itself in memory (a page fault must not cost a
 * datagram).  Not under the sanitizers, whose shadow memory is huge. */
static void lock_memory(void) {
#if defined(__SANITIZE_ADDRESS__)
  return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return;
#endif
#endif
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
    log_warning("Couldn't lock process in physical memory");
}

static int run(struct ingest *g, const struct opts *o, pq_t *pq,
               const char *origin) {
  g->log = (struct np_log){to_logger, NULL, NP_WARN};
  sync_level(&g->log);
  g->namer = (struct np_namer){.log = &g->log};
  np_sbn_init(&g->sbn, &g->log);
  g->ins = (struct np_inserter){.pq = pq, .origin = origin, .log = &g->log};
  g->build = np_build_new(&o->build, &g->namer, on_product, g);
  if (g->build == NULL) {
    log_error("Out of memory");
    return -1;
  }
  g->start = g->last_at = cli_monotonic();
  int rc = o->group != NULL ? read_group(g, o) : read_stdin(g);
  np_build_end(g->build);
  report(g);
  np_build_free(g->build);
  free(g->buf);
  return rc;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.npages = 5000};
  int st = parse(&c, argc, argv, &o);
  if (st != CLI_GO_ON)
    return st;
  if (check_group(&o) != 0)
    return 1;
  cli_signals();
  log_notice("Starting up %s", NP_VERSION);
  log_notice("Copyright the ldmpq authors; products made as LDM 6.15's "
             "noaaportIngester makes them");
  if (o.group != NULL)
    lock_memory();
  const char *path = cli_queue_path(&c);
  pq_t *pq = path != NULL ? cli_open_queue(path, 0, NULL) : NULL;
  if (pq == NULL)
    return 1;
  char origin[PQ_ORIGIN_MAX + 1];
  cli_hostname(&c, origin);
  struct ingest g;
  memset(&g, 0, sizeof g);
  int rc = run(&g, &o, pq, origin);
  (void)pq_close(pq);
  return rc == 0 ? 0 : 1;
}
