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
 * SIGUSR2 cycles the log level.  Beside ldmd (its metrics file found as
 * pqmon finds it), the statistics are also live figures there
 * (ldmd/metrics/ingester.h; docs/metrics.md, "Ingesters").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "ldmd/metrics/ingester.h"
#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pqutils/common/cli.h"
#include "pqutils/ingest/ingest_fifo.h"
#include "pqutils/ingest/ingest_mcast.h"
#include "pqutils/ingest/ingest_run.h"
#include "pqutils/ingest/ingest_tcp.h"

#ifndef NP_VERSION
#define NP_VERSION "0"
#endif

static const char usage[] =
    "Usage: noaaportIngester [-cfnvx] [-l dest] [-u n] [-m group] [-q queue]\n"
    "                        [-b npages] [-I iface]... [-R bytes]\n"
    "                        [-T host:port]... [-W secs]\n"
    "  -c        Store compressed frames inflated\n"
    "  -f        Fill the scan lines of missing GOES blocks\n"
    "  -n        Log at NOTE and above (a line per product)\n"
    "  -v        Log at INFO and above\n"
    "  -x        Log at DEBUG and above\n"
    "  -l dest   Log to dest: \"-\" standard error, \"\" syslog, else a file\n"
    "  -u n      Log to syslog, facility local<n> (0-7)\n"
    "  -m group  Read this IPv4 multicast group (224.x.y.1-10, port\n"
    "            1200 + the last octet); default: standard input\n"
    "  -I iface  IPv4 address of the interface to join the group on; several\n"
    "            -I: a receiver on each, blended (-W)\n"
    "  -T host:port  Also read frames from this TCP server (an LDM fanout\n"
    "            server); several sources are blended (-W)\n"
    "  -W secs   Blend: order frames (of all receivers) by product and\n"
    "            block, drop duplicates, each frame waiting at most secs\n"
    "            for earlier ones (default with several -I: 1)\n"
    "  -R bytes  Socket receive buffer size\n"
    "  -q queue  Product queue (default: the registry's /queue/path)\n"
    "  -b npages Size of the FIFO in pages (default 5000)\n"
    "  -r, -s, -t  Retransmission options of LDM's AWIPS builds: ignored\n";

struct opts {
  struct np_build_opts build;
  const char *group;
  const char *ifaces[NP_MAX_SOURCES]; /* -I, each a receiver */
  size_t nifaces;
  const char *tcp[NP_MAX_SOURCES]; /* -T host:port, each a receiver */
  size_t ntcp;
  double wait_s;   /* -W: blend, with this wait; < 0: not */
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
    if (o->nifaces == NP_MAX_SOURCES) {
      fprintf(stderr, "%s: at most %d interfaces (-I)\n", c->progname,
              NP_MAX_SOURCES);
      return -1;
    }
    o->ifaces[o->nifaces++] = arg;
    return 0;
  case 'T':
    if (!np_tcp_spec_ok(arg)) {
      fprintf(stderr, "%s: -T takes host:port: \"%s\"\n", c->progname, arg);
      return -1;
    }
    if (o->ntcp == NP_MAX_SOURCES) {
      fprintf(stderr, "%s: at most %d TCP sources (-T)\n", c->progname,
              NP_MAX_SOURCES);
      return -1;
    }
    o->tcp[o->ntcp++] = arg;
    return 0;
  case 'W':
    if (cli_parse_double(c, "-W", arg, &o->wait_s) != 0 || o->wait_s > 60) {
      fprintf(stderr, "%s: -W takes seconds, 0 to 60: \"%s\"\n", c->progname,
              arg);
      return -1;
    }
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
  while ((st = cli_next_option(c, argc, argv, ":cfnvxl:u:m:q:b:I:R:T:W:r:s:t:",
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

/* ---- reading ---- */

/* Standard input, to its end or a stop. */
static int read_stdin(struct ingest *g) {
  static uint8_t buf[256 * 1024];
  for (;;) {
    int due = ingest_due_ms(g);
    int w =
        cli_io_wait(STDIN_FILENO, POLLIN, due >= 0 && due < 1000 ? due : 1000);
    if (w < 0 && cli_stopping())
      break;
    if (w <= 0) {
      ingest_tick(g);
      continue;
    }
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
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
    if (!ingest_bytes(g, 0, buf, (size_t)n))
      return -1;
  }
  return 0;
}

/* Build from the FIFO until the reader closes it. */
static int build_from_fifo(struct ingest *g, struct np_fifo *fifo) {
  for (;;) {
    size_t n;
    unsigned src;
    /* At least once a second, so that SIGUSR1's statistics come while
     * the channel is silent. */
    int due = ingest_due_ms(g);
    const uint8_t *p =
        np_fifo_next(fifo, &n, &src, due >= 0 && due < 1000 ? due : 1000);
    if (p == NULL) {
      if (np_fifo_done(fifo))
        break;
      if (cli_stopping()) /* the readers end by themselves; then drain */
        np_fifo_close(fifo);
      ingest_tick(g); /* a held frame is due, or the statistics */
      continue;
    }
    bool ok = ingest_bytes(g, src, p, n);
    np_fifo_release(fifo);
    ingest_set_fullfifo(g, __atomic_load_n(&fifo->fullfifo, __ATOMIC_RELAXED));
    if (!ok)
      return -1;
  }
  return 0;
}

/* The group, one socket per interface, read into a FIFO by a reader
 * thread (ingest_mcast.h). */
static int read_group(struct ingest *g, const struct opts *o,
                      ldmm_ingester *fig) {
  size_t cap = (size_t)o->npages * (size_t)sysconf(_SC_PAGESIZE);
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
  struct np_mcast m = {.fifo = &fifo, .fig = fig};
  struct np_tcp tcp[NP_MAX_SOURCES];
  size_t nm = o->group != NULL ? (o->nifaces > 0 ? o->nifaces : 1) : 0;
  int rc = -1;
  bool ok =
      o->group == NULL || (np_mcast_open(&m, &o->group_addr, o->port, o->ifaces,
                                         o->nifaces, o->rcvbuf) == 0 &&
                           np_mcast_start(&m) == 0);
  size_t nt = 0;
  for (; ok && nt < o->ntcp; nt++) {
    tcp[nt] = (struct np_tcp){.fifo = &fifo,
                              .spec = o->tcp[nt],
                              .src = (unsigned)(nm + nt),
                              .retry_s = NP_TCP_RETRY_S};
    ok = np_tcp_start(&tcp[nt]) == 0;
  }
  if (ok) {
    if (o->group != NULL)
      np_mcast_realtime("product-building", 1);
    rc = build_from_fifo(g, &fifo);
  } else {
    cli_io_request_stop(); /* whatever was started ends */
  }
  np_fifo_close(&fifo);
  np_mcast_join(&m);
  for (size_t i = 0; i < nt; i++)
    np_tcp_join(&tcp[i]);
  if (rc == 0 && m.failed && o->ntcp == 0)
    rc = -1; /* every socket failed: not a stop */
  ingest_set_fullfifo(g, fifo.fullfifo);
  np_mcast_close(&m);
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

/* ---- ldmd's live figures ---- */

static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* ldmd's metrics file of the queue at qpath, read-write: the registry's
 * /metrics/live-path if its header names this queue, else the queue's
 * path with ".metrics" (docs/metrics.md, "Ingesters").  NULL when ldmd
 * keeps none (not running, figures off): the ingester runs without. */
static ldmm_file *attach_figures(struct cli *c, const char *qpath) {
  char cand[2][LDMM_PATH_MAX] = {"", ""};
  (void)cli_reg_string(c, REG_METRICS_PATH, cand[0], sizeof cand[0]);
  if (ldmm_default_path(qpath, cand[1], sizeof cand[1]) != 0)
    cand[1][0] = '\0';
  for (int i = 0; i < 2; i++) {
    char err[LDMM_PATH_MAX + 128];
    if (cand[i][0] == '\0')
      continue;
    ldmm_file *f = ldmm_attach(cand[i], err, sizeof err);
    if (f == NULL) {
      log_info("No live figures: %s", err);
      continue;
    }
    ldmm_snapshot snap = {0};
    bool mine = ldmm_snapshot_take(f, &snap) == 0 &&
                (i == 1 || same_file(snap.queue_path, qpath));
    ldmm_snapshot_free(&snap);
    if (mine)
      return f;
    ldmm_close(f, false);
  }
  return NULL;
}

static int run(const struct opts *o, pq_t *pq, const char *origin,
               ldmm_file *figs) {
  struct ingest_opts io = {.build = o->build, .wait_s = o->wait_s};
  char names[NP_MAX_SOURCES][64];
  size_t nm = o->group != NULL ? (o->nifaces > 0 ? o->nifaces : 1) : 0;
  io.nsources = nm + o->ntcp > 0 ? nm + o->ntcp : 1;
  for (size_t i = 0; i < io.nsources; i++) {
    if (i < nm)
      snprintf(names[i], sizeof names[i], "%s@%s", o->group,
               o->nifaces > 0 ? o->ifaces[i] : "*");
    else if (i - nm < o->ntcp)
      snprintf(names[i], sizeof names[i], "tcp:%s", o->tcp[i - nm]);
    else
      snprintf(names[i], sizeof names[i], "stdin");
    io.source_names[i] = names[i];
  }
  /* Receivers: the sockets of a group (the first nm sources); standard
   * input and TCP sources have none. */
  io.fig = ldmm_ingester_claim(figs,
                               o->group != NULL ? o->group
                               : o->ntcp > 0    ? "tcp"
                                                : "stdin",
                               io.source_names, (unsigned)nm);
  if (figs != NULL && io.fig == NULL)
    log_warning("Every ingester entry of ldmd's live figures is taken: "
                "running without");
  io.feeds = io.fig != NULL ? ldmm_feeds(figs) : NULL;
  struct ingest *g = ingest_new(&io, pq, origin);
  if (g == NULL) {
    ldmm_ingester_release(io.fig);
    return -1;
  }
  int rc = o->group != NULL || o->ntcp > 0 ? read_group(g, o, io.fig)
                                           : read_stdin(g);
  ingest_end(g);
  ingest_report(g);
  ingest_free(g);
  ldmm_ingester_release(io.fig);
  return rc;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.npages = 5000, .wait_s = -1};
  int st = parse(&c, argc, argv, &o);
  if (st != CLI_GO_ON)
    return st;
  if (check_group(&o) != 0)
    return 1;
  size_t receivers =
      (o.group != NULL ? (o.nifaces > 0 ? o.nifaces : 1) : 0) + o.ntcp;
  if (receivers > 1 && o.wait_s < 0)
    o.wait_s = 1.0; /* receivers are blended: LDM's blender's wait */
  if (receivers > NP_MAX_SOURCES) {
    log_error("At most %d receivers (-I and -T together)", NP_MAX_SOURCES);
    return 1;
  }
  cli_signals();
  (void)signal(SIGALRM, SIG_IGN); /* as LDM's ingester */
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
  ldmm_file *figs = attach_figures(&c, path);
  int rc = run(&o, pq, origin, figs);
  ldmm_close(figs, false);
  (void)pq_close(pq);
  return rc == 0 ? 0 : 1;
}
