/*
 * metrics_bench.c - what ldmd's live figures (docs/metrics.md) cost the
 * relay: relay throughput from one ldmd to another over loopback with the
 * figures off, on, and on with both servers scraped over HTTP while the
 * products flow, side by side in one run; then the CPU cost of one
 * scrape.  A benchmark, not a test: it prints only what it measured in
 * this run.
 *
 *   1. memcpy bandwidth of this machine now (the scale of everything),
 *      and what the counting itself costs: ldmm_inserted() (a received
 *      product: its slot and its feed) and ldmm_sent() in a loop of 10^7,
 *      on a metrics file of its own, in ns per call.
 *   2. Relay runs, the modes interleaved (off, on, scraped, off, on, ...)
 *      so that a machine that gets busier or quieter during the run
 *      weighs on each alike.  Each run: fresh queues and servers; n
 *      products of `size` random bytes are put into A's queue, then B
 *      starts with REQUEST ANY ".*" from A; the time runs from A's feeder
 *      starting the feed (its log line) to the insertion of the last
 *      product into B's queue (B's newest insertion time), and the CPU
 *      is that of both servers' process trees from B's start to then.
 *        off      /metrics/enable FALSE on both servers: no file, no
 *                 counting
 *        on       the default: every product counted (no HTTP)
 *        scraped  on, with /metrics/http-address on both servers, and a
 *                 scraper process GETting both /metrics every -i ms
 *      Per mode: the median, least and most products/s, and the median
 *      CPU microseconds per product of A and B together.
 *   3. Scrape cost: B (with its requester's figures and those of the
 *      products it got) scraped -k times in a row, one connection each;
 *      the CPU of B's process tree (the metrics process does the work;
 *      the rest is idle) divided by the scrapes, the wall time per scrape
 *      and the bytes of one; and, measured in this process on B's queue,
 *      the part of a scrape that reads the queue's statistics
 *      (pq_stats_get() and pq_stats_held()).
 *
 * usage: metrics_bench [-n products] [-s size] [-r runs] [-i ms] [-k scrapes]
 *                      [-D dir] [-L ldmd]
 *   -n  products per relay run (default 50000)
 *   -s  bytes per product (default 1024)
 *   -r  runs per mode (default 5)
 *   -i  scrape interval in the scraped mode, ms (default 100: 150 times
 *       Prometheus' usual 15 s)
 *   -k  scrapes for the scrape cost (default 2000)
 *   -D  where the queues go (default /dev/shm)
 *   -L  the server (default: the one built with this program)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/metrics/metrics.h"
#include "pq/pq.h"
#include "test/bench/iddmix.h"
#include "test/bench/relay_servers.h"
#include "test/lib/tu_clock.h"

#ifndef LDMD_PATH
#define LDMD_PATH "ldmd"
#endif

#define NMODES 3
#define MAX_RUNS 64
#define STALL_S 20.0
#define MIB (1024.0 * 1024.0)

enum mode { OFF, ON, SCRAPED };
static const char *const mode_names[NMODES] = {"off", "on", "scraped"};

typedef struct opts {
  unsigned n, runs, interval_ms, scrapes;
  uint64_t size;
  const char *base, *ldmd;
} opts;

typedef struct result {
  double rate;      /* products/s */
  double cpu_us;    /* CPU of A and B per product */
  unsigned scrapes; /* scraped mode: scrapes done during the run */
} result;

static void queue_stats_figure(const char *queue);

static void on_stop(int sig) {
  (void)sig;
  rb_stop = 1;
}

static double cpu_now(void) {
  struct timespec ts;

  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------- */
/* HTTP                                                                   */
/* ---------------------------------------------------------------------- */

/* The port of a server's metrics endpoint, from its log; 0 if none. */
static unsigned http_port(const server *s) {
  char line[2048];
  unsigned port = 0;
  FILE *f = fopen(s->log, "r");

  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    const char *p = strstr(line, "serving metrics on http://127.0.0.1:");

    if (p != NULL)
      port = (unsigned)atoi(p + strlen("serving metrics on http://127.0.0.1:"));
  }
  if (f != NULL)
    fclose(f);
  return port;
}

/* GET /metrics from 127.0.0.1:port.  @return the bytes of the answer
 * (headers and body), or -1 */
static long scrape(unsigned port) {
  static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  struct sockaddr_in sa = {.sin_family = AF_INET};
  char buf[65536];
  long total = 0;
  ssize_t n;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  while ((n = read(fd, buf, sizeof buf)) > 0)
    total += n;
  close(fd);
  return n == 0 && total > 0 && strncmp(buf, "HTTP/1.", 7) == 0 ? total : -1;
}

/* The scraper of the scraped mode: both endpoints every interval_ms until
 * SIGTERM; exits with the number of scrapes done (mod 256: see
 * scraper_stop) after writing it to fd. */
static void scraper(unsigned pa, unsigned pb, unsigned interval_ms, int fd) {
  unsigned done = 0;

  signal(SIGTERM, on_stop);
  while (!rb_stop) {
    if (scrape(pa) > 0)
      done++;
    if (scrape(pb) > 0)
      done++;
    rb_sleep(interval_ms / 1000.0);
  }
  if (write(fd, &done, sizeof done) != (ssize_t)sizeof done)
    _exit(1);
  _exit(0);
}

/* ---------------------------------------------------------------------- */
/* One relay run                                                          */
/* ---------------------------------------------------------------------- */

static int insert_all(const opts *o, const server *a, uint64_t seed) {
  uint8_t *buf = malloc(o->size);
  pq_t *pq = NULL;
  pq_error err;
  unsigned i;
  int rc = 0;

  if (buf == NULL || pq_open(a->queue, 0, &pq, &err) != PQ_OK) {
    rb_warn("cannot open %s: %s", a->queue,
            buf == NULL ? strerror(ENOMEM) : err.pe_msg);
    free(buf);
    return -1;
  }
  for (i = 0; i < o->n && rc == 0; i++) {
    pq_prod_info info;

    iddmix_fill(seed, i, buf, o->size);
    memset(&info, 0, sizeof info);
    info.feedtype = PQ_FT_IDS;
    info.seqno = i;
    info.size = o->size;
    snprintf(info.origin, sizeof info.origin, "metrics-bench");
    snprintf(info.ident, sizeof info.ident, "METRICS BENCH %06u", i);
    info.arrival = pq_ts_now();
    if (pq_md5(buf, o->size, info.signature) != 0 ||
        pq_insert(pq, &info, buf) != PQ_OK) {
      rb_warn("cannot insert into %s", a->queue);
      rc = -1;
    }
  }
  pq_close(pq);
  free(buf);
  return rc;
}

static const char *mode_xml(enum mode m) {
  switch (m) {
  case OFF:
    return "<metrics><enable>FALSE</enable></metrics>";
  case SCRAPED:
    return "<metrics><http-address>127.0.0.1:0</http-address></metrics>";
  default:
    return "<!-- the figures on: the default -->";
  }
}

/* Wait for B to hold n products.  @return its newest insertion time (us),
 * or 0 */
static uint64_t wait_all(const opts *o, const server *b) {
  pq_t *pq = NULL;
  pq_error err;
  uint64_t last = 0, seen = 0;
  double progress = tu_now_s();

  if (pq_open(b->queue, PQ_READONLY, &pq, &err) != PQ_OK) {
    rb_warn("cannot open %s: %s", b->queue, err.pe_msg);
    return 0;
  }
  while (!rb_stop) {
    pq_stats st;

    if (pq_stats_get(pq, &st) != PQ_OK)
      break;
    if (st.ps_nprods >= o->n) {
      last = st.ps_last_key;
      break;
    }
    if (st.ps_nprods != seen) {
      seen = st.ps_nprods;
      progress = tu_now_s();
    } else if (tu_now_s() - progress > STALL_S) {
      rb_warn("B got %llu of %u products, then nothing for %.0f s (see %s)",
              (unsigned long long)seen, o->n, STALL_S, b->log);
      break;
    }
    rb_sleep(0.002);
  }
  pq_close(pq);
  return last;
}

/* Stop both servers of a run and remove what they left. */
static void pair_down(server *a, server *b, const char *run) {
  rb_server_stop(b);
  rb_server_stop(a);
  rb_kill_leftovers(run);
  rb_remove_tree(a->dir);
  rb_remove_tree(b->dir);
}

static int run_once(const opts *o, const char *run, enum mode m, unsigned k,
                    result *r) {
  uint64_t qbytes = (uint64_t)o->n * (o->size + 512) * 2 + 64 * 1024 * 1024;
  uint64_t slots = (uint64_t)o->n * 2 + 1000, start_us, end_us;
  server a, b;
  double cpu0, cpu1;
  pid_t scr = 0;
  int pipefd[2] = {-1, -1}, rc = -1;

  memset(r, 0, sizeof *r);
  if (rb_server_setup(&a, run, "A", qbytes, slots, NULL) != 0 ||
      rb_server_setup(&b, run, "B", qbytes, slots, NULL) != 0 ||
      rb_server_registry_add(&a, mode_xml(m)) != 0 ||
      rb_server_registry_add(&b, mode_xml(m)) != 0 ||
      insert_all(o, &a, 1000u * k + (unsigned)m) != 0)
    goto out;
  if (rb_start_upstream(&a, o->ldmd) != 0)
    goto out;
  cpu0 = rb_tree_cpu(a.pid);
  if (rb_start_downstream(&b, &a, o->ldmd, false) != 0)
    goto out;
  if (m == SCRAPED) {
    unsigned pa = http_port(&a), pb = http_port(&b);

    if (pa == 0 || pb == 0 || pipe(pipefd) != 0) {
      rb_warn("no metrics endpoint in %s or %s", a.log, b.log);
      goto out;
    }
    scr = fork();
    if (scr == 0)
      scraper(pa, pb, o->interval_ms, pipefd[1]);
  }
  start_us = rb_wait_feed(&a);
  end_us = wait_all(o, &b);
  cpu1 = rb_tree_cpu(a.pid) + rb_tree_cpu(b.pid);
  if (start_us == 0 || end_us <= start_us) {
    rb_warn("no feed start in %s, or no arrivals", a.log);
    goto out;
  }
  r->rate = o->n / ((double)(end_us - start_us) / 1e6);
  r->cpu_us = (cpu1 - cpu0) * 1e6 / o->n;
  rc = 0;
out:
  if (scr > 0) {
    unsigned done = 0;

    kill(scr, SIGTERM);
    if (read(pipefd[0], &done, sizeof done) == (ssize_t)sizeof done)
      r->scrapes = done;
    waitpid(scr, NULL, 0);
  }
  if (pipefd[0] >= 0) {
    close(pipefd[0]);
    close(pipefd[1]);
  }
  pair_down(&a, &b, run);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Scrape cost                                                            */
/* ---------------------------------------------------------------------- */

static int scrape_cost(const opts *o, const char *run) {
  uint64_t qbytes = (uint64_t)o->n * (o->size + 512) * 2 + 64 * 1024 * 1024;
  server a, b;
  unsigned port, i, conns = 0;
  double cpu0, cpu1, w0, w1;
  long bytes = 0;
  int rc = -1;

  if (rb_server_setup(&a, run, "A", qbytes, o->n * 2 + 1000, NULL) != 0 ||
      rb_server_setup(&b, run, "B", qbytes, o->n * 2 + 1000, NULL) != 0 ||
      rb_server_registry_add(&b, mode_xml(SCRAPED)) != 0 ||
      insert_all(o, &a, 7) != 0)
    goto out;
  if (rb_start_upstream(&a, o->ldmd) != 0)
    goto out;
  if (rb_start_downstream(&b, &a, o->ldmd, false) != 0 || wait_all(o, &b) == 0)
    goto out;
  port = http_port(&b);
  if (port == 0 || scrape(port) <= 0) {
    rb_warn("cannot scrape B (see %s)", b.log);
    goto out;
  }
  conns = 1; /* B's requester */
  cpu0 = rb_tree_cpu(b.pid);
  w0 = tu_now_s();
  for (i = 0; i < o->scrapes && !rb_stop; i++) {
    long n = scrape(port);

    if (n <= 0) {
      rb_warn("scrape %u of B failed", i + 1);
      goto out;
    }
    bytes = n;
  }
  w1 = tu_now_s();
  cpu1 = rb_tree_cpu(b.pid);
  printf("\nscrape cost: %u scrapes of B's /metrics in a row (%ld bytes each, "
         "%u connection and 1 feed shown), queue of %u products\n",
         o->scrapes, bytes, conns, o->n);
  printf("  CPU of B's processes per scrape: %.1f us\n",
         (cpu1 - cpu0) * 1e6 / o->scrapes);
  printf("  wall time per scrape (connect to last byte): %.1f us\n",
         (w1 - w0) * 1e6 / o->scrapes);
  queue_stats_figure(b.queue);
  rc = 0;
out:
  pair_down(&a, &b, run);
  return rc;
}

/* ---------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;

  return a < b ? -1 : a > b;
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per call of the hot-path counters, on a file of their own. */
static void counting_figure(const char *run) {
  char path[RB_RUN_MAX + 32], err[1024];
  const unsigned n = 10000000;
  ldmm_file *f;
  ldmm_slot *s;
  ldmm_feed *feeds;
  double t0, t1, t2;
  unsigned i;
  int slot;

  snprintf(path, sizeof path, "%s/bench.metrics", run);
  f = ldmm_create(path, 4, "none", "bench", err, sizeof err);
  if (f == NULL) {
    rb_warn("%s", err);
    return;
  }
  slot = ldmm_claim(f);
  ldmm_bind(f, slot, getpid());
  s = ldmm_slot_at(f, slot);
  feeds = ldmm_feeds(f);
  t0 = tu_now_s();
  for (i = 0; i < n; i++)
    ldmm_inserted(s, feeds, 1u << (i & 7), 1024 + (i & 63),
                  (int64_t)(i & 0xfffff) * 3);
  t1 = tu_now_s();
  for (i = 0; i < n; i++)
    ldmm_sent(s, 1024 + (i & 63));
  t2 = tu_now_s();
  printf("counting: %.1f ns per product received (ldmm_inserted: slot and "
         "feed), %.1f ns per product sent (ldmm_sent)\n",
         (t1 - t0) * 1e9 / n, (t2 - t1) * 1e9 / n);
  ldmm_close(f, true);
}

/* us per reading of the queue's statistics, as a scrape reads them. */
static void queue_stats_figure(const char *queue) {
  const unsigned n = 500;
  pq_t *pq = NULL;
  pq_error err;
  pq_stats st;
  uint64_t held;
  double t0, t1, t2;
  unsigned i;

  if (pq_open(queue, PQ_READONLY, &pq, &err) != PQ_OK) {
    rb_warn("cannot open %s: %s", queue, err.pe_msg);
    return;
  }
  t0 = cpu_now();
  for (i = 0; i < n; i++)
    (void)pq_stats_get(pq, &st);
  t1 = cpu_now();
  for (i = 0; i < n; i++)
    (void)pq_stats_held(pq, &held);
  t2 = cpu_now();
  printf("  of which the queue's statistics (CPU, in this process): "
         "pq_stats_get %.1f us, pq_stats_held %.1f us\n",
         (t1 - t0) * 1e6 / n, (t2 - t1) * 1e6 / n);
  pq_close(pq);
}

static void memcpy_figure(void) {
  size_t len = 64 << 20;
  char *src = malloc(len), *dst = malloc(len);
  double t0, t1;
  int i;

  if (src == NULL || dst == NULL) {
    free(src);
    free(dst);
    return;
  }
  memset(src, 1, len);
  memset(dst, 2, len);
  t0 = tu_now_s();
  for (i = 0; i < 16; i++) {
    src[i] = (char)i;
    memcpy(dst, src, len);
  }
  t1 = tu_now_s();
  printf("memcpy, 64 MiB warm buffers: %.1f GB/s (%d)\n",
         16.0 * (double)len / (t1 - t0) / 1e9, dst[len / 2]);
  free(src);
  free(dst);
}

static int parse(int argc, char **argv, opts *o) {
  int ch;

  o->n = 50000;
  o->size = 1024;
  o->runs = 5;
  o->interval_ms = 100;
  o->scrapes = 2000;
  o->base = "/dev/shm";
  o->ldmd = LDMD_PATH;
  while ((ch = getopt(argc, argv, "n:s:r:i:k:D:L:")) != -1) {
    switch (ch) {
    case 'n':
      o->n = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 's':
      o->size = strtoull(optarg, NULL, 10);
      break;
    case 'r':
      o->runs = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'i':
      o->interval_ms = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'k':
      o->scrapes = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'D':
      o->base = optarg;
      break;
    case 'L':
      o->ldmd = optarg;
      break;
    default:
      return -1;
    }
  }
  if (o->n == 0 || o->size == 0 || o->runs == 0 || o->runs > MAX_RUNS ||
      o->scrapes == 0 || o->interval_ms == 0)
    return -1;
  return 0;
}

int main(int argc, char **argv) {
  double rate[NMODES][MAX_RUNS], cpu[NMODES][MAX_RUNS], med[NMODES];
  unsigned scrapes = 0, k, m, errors = 0;
  char run[RB_RUN_MAX];
  opts o;
  double c0 = cpu_now();

  rb_prog = "metrics_bench";
  if (parse(argc, argv, &o) != 0) {
    fprintf(stderr,
            "usage: metrics_bench [-n products] [-s size] [-r runs 1-%d] "
            "[-i ms] [-k scrapes] [-D dir] [-L ldmd]\n",
            MAX_RUNS);
    return 2;
  }
  signal(SIGINT, on_stop);
  signal(SIGTERM, on_stop);
  signal(SIGPIPE, SIG_IGN);
  snprintf(run, sizeof run, "%s/metrics-bench.%ld", o.base, (long)getpid());
  if (mkdir(run, 0755) != 0) {
    rb_warn("cannot make %s: %s", run, strerror(errno));
    return 1;
  }
  memcpy_figure();
  counting_figure(run);
  printf("relay of %u x %llu B from A to B over loopback, %u runs per mode, "
         "modes interleaved\n",
         o.n, (unsigned long long)o.size, o.runs);
  for (k = 0; k < o.runs && !rb_stop; k++)
    for (m = 0; m < NMODES && !rb_stop; m++) {
      result r;

      if (run_once(&o, run, (enum mode)m, k, &r) != 0) {
        errors++;
        rate[m][k] = cpu[m][k] = 0;
        continue;
      }
      rate[m][k] = r.rate;
      cpu[m][k] = r.cpu_us;
      scrapes += r.scrapes;
    }
  printf("%-8s %12s %12s %12s %22s\n", "figures", "median p/s", "least p/s",
         "most p/s", "CPU us/product (A+B)");
  for (m = 0; m < NMODES && !rb_stop; m++) {
    double lo = rate[m][0], hi = rate[m][0];

    for (k = 1; k < o.runs; k++) {
      lo = rate[m][k] < lo ? rate[m][k] : lo;
      hi = rate[m][k] > hi ? rate[m][k] : hi;
    }
    med[m] = median(rate[m], o.runs);
    printf("%-8s %12.0f %12.0f %12.0f %22.2f\n", mode_names[m], med[m], lo, hi,
           median(cpu[m], o.runs));
  }
  if (!rb_stop && med[OFF] > 0) {
    printf("median on/off: %.3f, scraped/off: %.3f\n", med[ON] / med[OFF],
           med[SCRAPED] / med[OFF]);
    printf("scraped: %u scrapes during the runs (both servers every %u ms)\n",
           scrapes, o.interval_ms);
  }
  if (!rb_stop && scrape_cost(&o, run) != 0)
    errors++;
  rb_remove_tree(run);
  printf("\nthis program's own CPU: %.2f s\n", cpu_now() - c0);
  if (errors > 0) {
    rb_warn("%u figures could not be measured", errors);
    return 1;
  }
  return rb_stop ? 1 : 0;
}
