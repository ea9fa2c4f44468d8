/*
 * relay_bench.c - how fast and how promptly two ldmd servers relay
 * products over loopback: server A holds the products, server B REQUESTs
 * them (ldmd.conf: REQUEST ANY ".*" 127.0.0.1:<A's port>) and stores them
 * in its own queue.  A and B are real ldmd processes started by the bench
 * (ldmd forks a process per connection: A's feeder, B's requester); the
 * bench only inserts into A's queue and reads B's.  Figures are printed
 * beside the project's targets for the relay (below: 3 times LDM_1K_RATE
 * for 1 KiB products, 90% of loopback TCP for 1 MiB ones, no loss and a p99
 * under TARGET_P99_MS at 10x the IDD peak).  A benchmark, not a test.
 *
 * It prints only what it measured in this run.  A target is labelled
 * "target:"; LDM's own figures, which it does not measure, are labelled
 * "reference (not measured here):".  A figure it could not measure (a
 * loopback run that failed, a transfer whose start time is not in A's log
 * or whose products did not all arrive, a latency step with no arrival)
 * is an error: a message on stderr, no figure, and exit status 1.
 *
 * What it measures:
 *   1. Loopback TCP, one stream: a sender process writes 1 MiB buffers, a
 *      receiver reads them (best of three runs of 4 GiB): the ceiling of
 *      one connection on this machine, printed because the 1 MiB target is
 *      90% of it.
 *   2. Relay throughput for 20,000 x 1 KiB, 10,000 x 10 KiB and
 *      2,000 x 1 MiB (random bytes, MD5 signatures), two ways:
 *        new      the products are put into A's queue first; then B starts
 *                 and its REQUEST asks for them.  Time runs from A's feeder
 *                 starting the feed (its log line "Starting Up(", written
 *                 once it has answered B's FEEDME) to the insertion of the
 *                 last product in B's queue.  Everything is fresh: the
 *                 connection's processes and their mappings of the queues.
 *        running  B is connected and a warm-up has cycled both queues'
 *                 rings once through the relay (what a relay that has run
 *                 for a while is like); B's processes are stopped
 *                 (SIGSTOP), the products put into A, and the time runs
 *                 from SIGCONT to the last insertion in B.
 *      "steady" is the rate between the first and the last arrival.  CPU
 *      is that of each server's whole process tree during the transfer.
 *      Each row is measured over plain TCP and over TLS 1.3 (-l): B's
 *      REQUEST {tls}, both servers with a key and a self-signed
 *      certificate naming 127.0.0.1 made at the start, which each takes
 *      as its CA; a TLS row says how its MB/s compares with plain TCP's.
 *   3. Latency under an IDD-like load (test/bench/iddmix.h: the 2024 feed
 *      mix, sizes lognormal up to 20 MB, unique random bytes, reproducible
 *      from the seed): one long-running ingester process inserts the
 *      stream into A, paced in real time, at 1x, 3x and 10x the 2024 peak
 *      of 34.5 MB/s, one step after the other with the servers running
 *      throughout, after a warm-up that cycles both rings once.  Each
 *      product's creation time is set when it is complete (bytes made, MD5
 *      computed), just before it is inserted into A; its arrival is its
 *      insertion time in B's queue, which the bench reads with pq_next()
 *      and pq_wait() (no polling).  Reported per step: products/s and MB/s
 *      inserted, latency percentiles, products lost (inserted into A,
 *      never in B after a drain of up to 10 s), and the CPU of each
 *      server's process tree and of the ingester, in cores.
 *
 * Queues live on /dev/shm (-D); each is created for its phase with every
 * page of its file written once (zeros into the holes), so no figure pays
 * for tmpfs allocating pages.  Everything the bench starts is stopped, and
 * its directory removed, at the end or on SIGINT/SIGTERM.
 *
 * usage: relay_bench [-d seconds] [-s seed] [-r rates] [-t tests] [-m mult]
 *                    [-n runs] [-l links] [-D dir] [-L ldmd] [-k] [-v]
 *   -d seconds  length of each latency step (default 15)
 *   -s seed     seed of the IDD-like stream and of the contents (default 1)
 *   -r rates    latency steps, multiples of the 2024 peak (default 1,3,10)
 *   -t tests    which parts: tcp, thr, lat, comma-separated (default all);
 *               thr1k, thr10k, thr1m for one throughput size
 *   -m mult     multiply the throughput product counts (default 1)
 *   -n runs     runs per throughput figure, the best printed (default 3,
 *               as for TCP; the others are listed below it)
 *   -l links    the throughput's links: tcp, tls, comma-separated (default
 *               both; the latency steps are plain TCP)
 *   -D dir      where the queues go (default /dev/shm)
 *   -L ldmd     the server (default: the one built with this program);
 *               given twice, two builds side by side: each throughput
 *               row is measured with both, their runs alternating (the
 *               first's, the second's, ...), and the second's row says how
 *               its prods/s and MB/s compare (what a change costs); the
 *               TCP and latency parts use the first
 *   -k          keep the run directory (queues, logs) for a post-mortem
 *   -v          show the 5 slowest products of each latency step
 * A full default run takes about three minutes.
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "pq/pq.h"
#include "test/bench/iddmix.h"
#include "test/bench/procstat.h"
#include "test/bench/relay_servers.h"
#include "test/lib/tu_clock.h"

#ifndef LDMD_PATH
#define LDMD_PATH "ldmd"
#endif

#define KIB 1024u
#define MIB (1024u * 1024u)
#define MAX_STEPS 8
/* Reference (not measured here): LDM 6.15's relay of 1 KiB products on
 * this kind of machine, the figure the target was set from; the target is 3
 * times it. */
#define LDM_1K_RATE 61500.0
#define TARGET_P99_MS 5.0
#define TCP_RUNS 3u
#define TCP_BYTES (4096ull * MIB)
#define DRAIN_S 10.0    /* most time given to the last products */
#define NOPROGRESS_S 20 /* a throughput transfer that stalls this long */

/* The run: options and what was started. */
typedef struct bench {
  double step_s;
  uint64_t seed;
  double rates[MAX_STEPS];
  unsigned nrates;
  bool do_tcp, do_thr, do_lat;
  unsigned thr_sizes; /* bit i: throughput case i */
  double mult;
  unsigned thr_runs; /* runs per throughput figure, best kept */
  const char *base;
  const char *ldmd;     /* the servers being set up run this one */
  const char *ldmds[2]; /* -L, once or twice */
  unsigned nldmd;
  bool keep;
  bool verbose;
  char run[RB_RUN_MAX];
  server a, b;
  unsigned links; /* bit 0: plain TCP, bit 1: TLS (-l) */
  bool tls;       /* the servers being set up speak TLS */
  char tls_cert[RB_RUN_MAX + 16], tls_key[RB_RUN_MAX + 16];
  double tcp_mbs;  /* best loopback figure, 0 if not measured */
  unsigned errors; /* figures that could not be measured */
} bench;

/* Stop both servers and remove the phase's files. */
static void servers_down(bench *b) {
  rb_server_stop(&b->b);
  rb_server_stop(&b->a);
  rb_kill_leftovers(b->run);
  if (!b->keep) {
    if (b->a.dir[0] != '\0')
      rb_remove_tree(b->a.dir);
    if (b->b.dir[0] != '\0')
      rb_remove_tree(b->b.dir);
  }
}

/* The servers' registries: with /tls keys when b->tls. */
static int setup_servers(bench *b, uint64_t qbytes, uint64_t slots) {
  const char *tls[2] = {b->tls_cert, b->tls_key};
  const char *const *t = b->tls ? tls : NULL;

  return rb_server_setup(&b->a, b->run, "A", qbytes, slots, t) != 0 ||
                 rb_server_setup(&b->b, b->run, "B", qbytes, slots, t) != 0
             ? -1
             : 0;
}

/*
 * A key and a self-signed certificate naming 127.0.0.1 (SAN IP), which
 * both servers show and take as their CA, in the run directory: made with
 * OpenSSL's API, as the openssl command would.  @return 0 or -1
 */
static int make_cert(bench *b) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  X509_EXTENSION *san =
      X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, "IP:127.0.0.1");
  FILE *fc = NULL, *fk = NULL;
  int rc = -1;

  snprintf(b->tls_cert, sizeof b->tls_cert, "%s/cert.pem", b->run);
  snprintf(b->tls_key, sizeof b->tls_key, "%s/key.pem", b->run);
  if (key == NULL || x == NULL || san == NULL)
    goto out;
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             (const unsigned char *)"relay-bench", -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(x));
  if (X509_add_ext(x, san, -1) != 1 || X509_sign(x, key, EVP_sha256()) == 0)
    goto out;
  fc = fopen(b->tls_cert, "w");
  fk = fopen(b->tls_key, "w");
  if (fc == NULL || fk == NULL || PEM_write_X509(fc, x) != 1 ||
      PEM_write_PrivateKey(fk, key, NULL, NULL, 0, NULL, NULL) != 1)
    goto out;
  rc = 0;
out:
  if (fc != NULL && fclose(fc) != 0)
    rc = -1;
  if (fk != NULL && fclose(fk) != 0)
    rc = -1;
  if (rc != 0)
    rb_warn("cannot make a TLS key and certificate in %s", b->run);
  X509_EXTENSION_free(san);
  X509_free(x);
  EVP_PKEY_free(key);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* 1. Loopback TCP                                                        */
/* ---------------------------------------------------------------------- */

/* One stream of `bytes` in 1 MiB writes from a child to this process.
 * @return MB/s (10^6 bytes) at the receiver, or 0 */
static double tcp_once(uint64_t bytes) {
  struct sockaddr_in sa = {.sin_family = AF_INET};
  socklen_t len = sizeof sa;
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), cs;
  uint8_t *buf = malloc(MIB);
  uint64_t got = 0;
  double t0 = 0, t1;
  pid_t pid;

  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (buf == NULL || ls < 0 || bind(ls, (struct sockaddr *)&sa, len) != 0 ||
      listen(ls, 1) != 0 || getsockname(ls, (struct sockaddr *)&sa, &len)) {
    rb_warn("loopback socket: %s", strerror(errno));
    free(buf);
    if (ls >= 0)
      close(ls);
    return 0;
  }
  memset(buf, 0x5a, MIB);
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    uint64_t sent = 0;

    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) != 0)
      _exit(1);
    while (sent < bytes) {
      ssize_t n = write(s, buf, MIB);

      if (n <= 0)
        _exit(1);
      sent += (uint64_t)n;
    }
    close(s);
    _exit(0);
  }
  cs = pid > 0 ? accept(ls, NULL, NULL) : -1;
  close(ls);
  if (cs >= 0) {
    for (;;) {
      ssize_t n = read(cs, buf, MIB);

      if (n <= 0)
        break;
      if (got == 0)
        t0 = tu_now_s();
      got += (uint64_t)n;
    }
    close(cs);
  }
  t1 = tu_now_s();
  if (pid > 0)
    waitpid(pid, NULL, 0);
  free(buf);
  return got == bytes && t1 > t0 ? (double)got / (t1 - t0) / 1e6 : 0;
}

static void run_tcp(bench *b) {
  double r[TCP_RUNS];
  unsigned i;

  printf("\nLoopback TCP, one stream, 1 MiB writes (sender and receiver "
         "processes, %u x %llu MiB):\n",
         TCP_RUNS, (unsigned long long)(TCP_BYTES / MIB));
  b->tcp_mbs = 0;
  for (i = 0; i < TCP_RUNS && !rb_stop; i++) {
    r[i] = tcp_once(TCP_BYTES);
    if (r[i] <= 0 && !rb_stop) {
      rb_warn("loopback TCP run %u did not move its %llu MiB", i + 1,
              (unsigned long long)(TCP_BYTES / MIB));
      b->errors++;
      b->tcp_mbs = 0; /* no figure from a set with a failed run */
      return;
    }
    if (r[i] > b->tcp_mbs)
      b->tcp_mbs = r[i];
  }
  if (i == 0)
    return; /* interrupted */
  printf("  %.0f MB/s (best of", b->tcp_mbs);
  for (unsigned j = 0; j < i; j++)
    printf(" %.0f", r[j]);
  printf(")\n");
}

/* ---------------------------------------------------------------------- */
/* 2. Throughput                                                          */
/* ---------------------------------------------------------------------- */

/* Products of the measured batch are NOTHER; warm-up products EXP. */
#define FT_BATCH PQ_FT_NOTHER
#define FT_WARM PQ_FT_EXP
#define WARM_SIZE MIB
#define WARM_WINDOW 64 /* warm-up products in flight at most */

struct tally {
  uint64_t n, bytes;          /* batch products in B */
  uint64_t warm;              /* warm-up products in B */
  uint64_t first_us, last_us; /* insertion times in B */
};

static int count_fn(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  struct tally *t = arg;

  (void)data;
  if (info->feedtype == FT_WARM) {
    t->warm++;
    return 0;
  }
  if (t->n == 0)
    t->first_us = place->pp_inserted;
  t->last_us = place->pp_inserted;
  t->n++;
  t->bytes += info->size;
  return 0;
}

/* Read what B has now, without waiting.  @return 0 or -1 */
static int drain_b(const bench *b, pq_t *bq, struct tally *t) {
  int x;

  while ((x = pq_next(bq, PQ_FORWARD, NULL, count_fn, t)) == PQ_OK)
    ;
  if (x != PQ_END) {
    rb_warn("cannot read %s: %s", b->b.queue, pq_strerror(x));
    return -1;
  }
  return 0;
}

/* Cycle A's and B's rings once through the relay: WARM_SIZE products
 * adding up to A's data area, at most WARM_WINDOW in flight, so that
 * every page of both queues has been used by the processes that will
 * carry the batch (the state of a relay that has run for a while).
 * @return 0 or -1 */
static int warm_up(const bench *b, pq_t *aq, pq_t *bq, struct tally *t,
                   uint8_t *buf) {
  uint32_t n = (uint32_t)(pq_data_size(aq) / WARM_SIZE) + 8, i;
  double end = tu_now_s() + 120;

  for (i = 0; i < n && !rb_stop; i++) {
    while (i >= t->warm + WARM_WINDOW && !rb_stop) {
      if (drain_b(b, bq, t) != 0)
        return -1;
      if (i < t->warm + WARM_WINDOW)
        break;
      if (tu_now_s() > end) {
        rb_warn("the warm-up stalled: %llu of %u products reached B",
                (unsigned long long)t->warm, i);
        return -1;
      }
      (void)pq_wait(bq, 100);
    }
    if (rb_insert(aq, b->seed ^ 0x5741524dull, FT_WARM, i, buf, WARM_SIZE,
                  "WARMUP", NULL) != PQ_OK)
      return -1;
  }
  while (t->warm < n && !rb_stop) {
    if (drain_b(b, bq, t) != 0)
      return -1;
    if (t->warm >= n)
      break;
    if (tu_now_s() > end) {
      rb_warn("the warm-up stalled: %llu of %u products reached B",
              (unsigned long long)t->warm, n);
      return -1;
    }
    (void)pq_wait(bq, 100);
  }
  return rb_stop ? -1 : 0;
}

struct thr_result {
  double rate, mbs; /* from the start of the transfer */
  double steady, steady_mbs;
  double cpu_a, cpu_b; /* cores */
  uint64_t got;
};

/* Open A's queue to write and B's to read, without spinning.
 * @return 0 or -1 (said) */
static int thr_open(const bench *b, pq_t **aq, pq_t **bq) {
  pq_error err;

  if (pq_open(b->a.queue, 0, aq, &err) != PQ_OK ||
      pq_open(b->b.queue, PQ_READONLY, bq, &err) != PQ_OK) {
    rb_warn("cannot open a queue: %s", err.pe_msg);
    return -1;
  }
  pq_set_spin(*bq, 0); /* the reader must not take CPU from the servers */
  return 0;
}

/* Warm: start A and B, wait for B's request to reach A, cycle the rings
 * (warm_up) and stop B's processes.  @return 0 or -1 */
static int thr_warm(bench *b, pq_t *aq, pq_t *bq, struct tally *t,
                    uint8_t *buf) {
  if (rb_start_upstream(&b->a, b->ldmd) != 0 ||
      rb_start_downstream(&b->b, &b->a, b->ldmd, b->tls) != 0)
    return -1;
  if (rb_wait_feed(&b->a) == 0) {
    rb_warn("B's request did not reach A within 10 s (see %s)", b->b.log);
    return -1;
  }
  if (warm_up(b, aq, bq, t, buf) != 0)
    return -1;
  rb_tree_signal(b->b.pid, SIGSTOP);
  return 0;
}

/* Read B's queue until the n products of the batch are in, or nothing
 * came for NOPROGRESS_S.  @return 0 (t says how many came) or -1 */
static int thr_collect(const bench *b, pq_t *bq, unsigned n, struct tally *t) {
  double last_progress = tu_now_s();

  while (t->n < n && !rb_stop) {
    uint64_t before = t->n;
    int x = pq_next(bq, PQ_FORWARD, NULL, count_fn, t);

    if (x == PQ_END) {
      if (tu_now_s() - last_progress > NOPROGRESS_S)
        break;
      (void)pq_wait(bq, 200);
    } else if (x != PQ_OK) {
      rb_warn("cannot read %s: %s", b->b.queue, pq_strerror(x));
      return -1;
    }
    if (t->n != before)
      last_progress = tu_now_s();
  }
  return 0;
}

/* The got, steady and rate figures of a batch from its tally and start
 * time.  A batch without a start time before its last arrival, or of which
 * some products did not arrive, has no rate figure (said).
 * @return 0 or -1 */
static int thr_figures(const bench *b, unsigned n, uint64_t size, bool warm,
                       const struct tally *t, uint64_t start_us,
                       struct thr_result *r) {
  r->got = t->n;
  r->steady = r->steady_mbs = -1; /* one arrival: no steady rate */
  if (t->n > 1 && t->last_us > t->first_us) {
    double sec = (double)(t->last_us - t->first_us) / 1e6;

    r->steady = (double)(t->n - 1) / sec;
    r->steady_mbs = (double)(t->n - 1) * (double)size / sec / 1e6;
  }
  if (start_us == 0 || start_us >= t->last_us) {
    if (!rb_stop)
      rb_warn("%s, %llu B: no start time (%s): no figure",
              warm ? "running" : "new", (unsigned long long)size,
              start_us == 0 ? "A's log has no feed start line"
                            : "the feed started after the last arrival");
    return -1;
  }
  if (b->verbose && t->first_us > start_us)
    printf("  (%s, %llu B: first arrival %.1f ms after the start)\n",
           warm ? "running" : "new", (unsigned long long)size,
           (double)(t->first_us - start_us) / 1e3);
  if (t->n != n) {
    if (!rb_stop)
      rb_warn("%s, %llu B: only %llu of %u products reached B (see the "
              "logs%s): no figure",
              warm ? "running" : "new", (unsigned long long)size,
              (unsigned long long)t->n, n, b->keep ? "" : "; -k keeps them");
    return -1;
  }
  {
    double sec = (double)(t->last_us - start_us) / 1e6;

    r->rate = (double)t->n / sec;
    r->mbs = (double)t->bytes / sec / 1e6;
  }
  return 0;
}

/*
 * One batch of n products of `size` bytes from A's queue to B's.
 * Cold: the batch is in A before B starts; time from A's feeder starting
 * the feed (its log line) to the last insertion in B.  Warm: B has been
 * connected and both rings cycled once (warm_up); B's processes are then
 * stopped (SIGSTOP), the batch is put into A, and the time runs from
 * SIGCONT to the last insertion in B.
 */
static int throughput(bench *b, unsigned n, uint64_t size, bool warm,
                      struct thr_result *r) {
  /* Room for every product twice over, and slots to match. */
  uint64_t qbytes = (uint64_t)n * (size + 512) * 2 + 64 * MIB;
  uint64_t slots = (uint64_t)n * 2 + 1000 + qbytes / WARM_SIZE;
  struct tally t = {0};
  pq_t *aq = NULL, *bq = NULL;
  uint8_t *buf = malloc(size > WARM_SIZE ? size : WARM_SIZE);
  uint64_t start_us = 0;
  double a0, b0, w0, a1, b1, w1;
  unsigned i;
  int rc = -1;

  memset(r, 0, sizeof *r);
  if (buf == NULL || setup_servers(b, qbytes, slots) != 0 ||
      thr_open(b, &aq, &bq) != 0)
    goto out;
  if (warm && thr_warm(b, aq, bq, &t, buf) != 0)
    goto out;
  for (i = 0; i < n && !rb_stop; i++)
    if (rb_insert(aq, b->seed ^ (size << 32), FT_BATCH, i, buf, size, "BATCH",
                  NULL) != PQ_OK)
      goto out;
  if (!warm && rb_start_upstream(&b->a, b->ldmd) != 0)
    goto out;
  w0 = tu_now_s();
  a0 = rb_tree_cpu(b->a.pid);
  b0 = warm ? rb_tree_cpu(b->b.pid) : 0; /* new: B starts below, from 0 */
  if (warm) {
    start_us = pq_ts_to_us(pq_ts_now());
    rb_tree_signal(b->b.pid, SIGCONT);
  } else if (rb_start_downstream(&b->b, &b->a, b->ldmd, b->tls) != 0) {
    goto out;
  }
  if (thr_collect(b, bq, n, &t) != 0)
    goto out;
  w1 = tu_now_s();
  a1 = rb_tree_cpu(b->a.pid);
  b1 = rb_tree_cpu(b->b.pid);
  if (!warm)
    start_us = rb_feed_started_us(&b->a);
  if (thr_figures(b, n, size, warm, &t, start_us, r) != 0)
    goto out;
  /* CPU: -1 if a tree could not be read (its root gone). */
  r->cpu_a = a0 < 0 || a1 < 0 ? -1 : (a1 - a0) / (w1 - w0);
  r->cpu_b = b0 < 0 || b1 < 0 ? -1 : (b1 - b0) / (w1 - w0);
  rc = 0;
out:
  if (warm && b->b.pid > 0)
    rb_tree_signal(b->b.pid, SIGCONT);
  pq_close(aq);
  pq_close(bq);
  free(buf);
  servers_down(b);
  return rc;
}

/* A figure into buf: "%*.*f" of v, or "-" when v < 0 (not measured). */
static const char *fig(char *buf, size_t len, int width, int prec, double v) {
  if (v < 0)
    snprintf(buf, len, "%*s", width, "-");
  else
    snprintf(buf, len, "%*.*f", width, prec, v);
  return buf;
}

/* One row size of the throughput table: n products of `size` bytes. */
struct thr_case {
  unsigned n;
  uint64_t size;
  const char *name;
};

static const char *const thr_link_names[] = {"tcp", "tls"};

static void print_throughput_header(void) {
  printf("\nRelay throughput, A's queue -> ldmd A -> TCP -> ldmd B "
         "(REQUEST) -> B's queue\n"
         "  new:     the products are in A when B starts; from A's feed start "
         "to the last\n"
         "           insertion in B (a new connection: fresh processes and "
         "mappings)\n"
         "  running: B connected and both rings cycled once, B stopped while "
         "the products\n"
         "           go into A; from B's SIGCONT to the last insertion in B\n"
         "  steady: first to last arrival; CPU: cores used by each server's "
         "processes\n"
         "  link: tcp, plain LDM-6; tls, TLS 1.3 (B's REQUEST {tls}, A's "
         "certificate\n"
         "           verified), its MB/s beside plain TCP's of the same row\n"
         "  reference (not measured here): LDM 6.15 relays %.0f 1 KiB "
         "products/s\n",
         LDM_1K_RATE);
  printf("  %-7s %-8s %-4s %8s %10s %8s %10s %8s %5s %5s  %s\n", "size", "conn",
         "link", "products", "prods/s", "MB/s", "steady/s", "MB/s", "CPU A",
         "CPU B", "target");
}

/* The runs of one server for a row: the best, every run's prods/s (printed
 * below the row), how many failed and how many did not. */
struct thr_runs {
  struct thr_result best;
  char runs[160];
  size_t used;
  unsigned failed, done;
};

/*
 * Best of b->thr_runs, as for loopback TCP: this 2-core VM moves +-30%
 * between runs.  With two servers (-L twice) their runs alternate, so that
 * a slow spell of the machine falls on both alike: r[i] is server i's.
 */
static void thr_best_of(bench *b, unsigned n, uint64_t size, bool warm,
                        struct thr_runs r[2]) {
  struct thr_result one;

  memset(r, 0, 2 * sizeof *r);
  for (unsigned k = 0; k < b->thr_runs && !rb_stop; k++)
    for (unsigned i = 0; i < b->nldmd && !rb_stop; i++) {
      struct thr_runs *x = &r[i];

      b->ldmd = b->ldmds[i];
      if (throughput(b, n, size, warm, &one) != 0) {
        x->failed += !rb_stop;
        continue;
      }
      x->done++;
      if (one.rate > x->best.rate)
        x->best = one;
      if (x->used < sizeof x->runs)
        x->used += (size_t)snprintf(x->runs + x->used, sizeof x->runs - x->used,
                                    "%s%.0f", k ? " " : "", one.rate);
    }
  b->ldmd = b->ldmds[0];
}

/* The row's last column into target: TLS against plain TCP's MB/s (plain_mbs,
 * < 0 if none), else the target the case has, if any. */
static void thr_target(char *target, size_t len, const bench *b,
                       const struct thr_case *c, bool tls, double plain_mbs,
                       const struct thr_result *r) {
  if (tls && plain_mbs > 0) {
    snprintf(target, len, "TLS: %.0f%% of plain TCP's MB/s",
             100.0 * r->mbs / plain_mbs);
  } else if (tls) {
    snprintf(target, len, "(no plain TCP figure beside it)");
  } else if (c->size == KIB) {
    double want = 3 * LDM_1K_RATE;

    snprintf(target, len, "target: >= %.0f/s (3 x the reference): %s", want,
             r->rate >= want ? "met" : "MISSED");
  } else if (c->size == MIB && b->tcp_mbs > 0) {
    double want = 0.9 * b->tcp_mbs;

    snprintf(target, len, "target: >= %.0f MB/s (90%% of TCP): %s", want,
             r->mbs >= want ? "met" : "MISSED");
  } else if (c->size == MIB) {
    snprintf(target, len,
             "target: 90%% of loopback TCP (not measured: -t tcp,thr)");
  }
}

/* The line of server i of a row (after the first: how it compares with
 * the first's best, r[0]). */
static void thr_print(bench *b, const struct thr_case *c, unsigned w,
                      unsigned l, unsigned i, const struct thr_runs *r,
                      double plain_mbs) {
  const char *size_name = w == 0 && i == 0 ? c->name : "";
  const char *conn = i > 0 ? "" : w == 0 ? "new" : "running";
  const struct thr_result *x = &r[i].best;
  unsigned n = (unsigned)(c->n * b->mult);
  char target[128] = "", f[4][16];

  if (i > 0 && r[0].done > 0 && r[0].best.rate > 0 && r[0].best.mbs > 0)
    snprintf(target, sizeof target,
             "vs server 1: prods/s %+.1f%%, MB/s %+.1f%%",
             100.0 * (x->rate / r[0].best.rate - 1),
             100.0 * (x->mbs / r[0].best.mbs - 1));
  else
    thr_target(target, sizeof target, b, c, l == 1, plain_mbs, x);
  printf("  %-7s %-8s %-4s %8u %10.0f %8.1f %s %s %s %s  %s\n", size_name, conn,
         thr_link_names[l], n, x->rate, x->mbs,
         fig(f[0], sizeof f[0], 10, 0, x->steady),
         fig(f[1], sizeof f[1], 8, 1, x->steady_mbs),
         fig(f[2], sizeof f[2], 5, 2, x->cpu_a),
         fig(f[3], sizeof f[3], 5, 2, x->cpu_b), target);
  if (b->nldmd > 1 || b->thr_runs > 1)
    printf("  %-7s %-8s %-4s %8s (%s%u runs, prods/s: %s)\n", "", "", "", "",
           b->nldmd > 1 ? (i == 0 ? "server 1, " : "server 2, ") : "",
           b->thr_runs, r[i].runs);
}

/*
 * One row of the table: case c, new (w 0) or running (w 1), over link l;
 * a line per server.  *plain_mbs is plain TCP's MB/s of the row (the first
 * server's), set by the tcp row for the tls row after it.  A run that
 * failed leaves no figure for its server.
 */
static void thr_row(bench *b, const struct thr_case *c, unsigned w, unsigned l,
                    double *plain_mbs) {
  const char *conn = w == 0 ? "new" : "running";
  unsigned n = (unsigned)(c->n * b->mult);
  struct thr_runs r[2];

  b->tls = l == 1;
  if (n < 2) {
    printf("  %-7s %-8s %-4s %8u  ERROR: -m %g leaves fewer than 2 "
           "products: no figure\n",
           c->name, conn, thr_link_names[l], n, b->mult);
    b->errors++;
    return;
  }
  thr_best_of(b, n, c->size, w == 1, r);
  if (rb_stop)
    return;
  for (unsigned i = 0; i < b->nldmd; i++) {
    if (r[i].failed > 0 || r[i].done == 0) {
      printf("  %-7s %-8s %-4s %8u  ERROR: %u of %u runs of server %u "
             "failed (see above): no figure\n",
             i == 0 ? c->name : "", conn, thr_link_names[l], n, r[i].failed,
             b->thr_runs, i + 1);
      b->errors++;
      r[i].done = 0;
      continue;
    }
    if (l == 0 && i == 0)
      *plain_mbs = r[i].best.mbs;
    thr_print(b, c, w, l, i, r, *plain_mbs);
  }
  fflush(stdout);
}

static void run_throughput(bench *b) {
  static const struct thr_case cases[] = {
      {20000, KIB, "1 KiB"}, {10000, 10 * KIB, "10 KiB"}, {2000, MIB, "1 MiB"}};
  double plain[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}; /* MB/s, for TLS's */
  unsigned i, w, l;

  print_throughput_header();
  for (i = 0; i < sizeof cases / sizeof cases[0] && !rb_stop; i++)
    for (w = 0; w < 2 && !rb_stop && (b->thr_sizes & 1u << i); w++)
      for (l = 0; l < 2 && !rb_stop; l++)
        if (b->links & 1u << l)
          thr_row(b, &cases[i], w, l, &plain[i][w]);
  b->tls = false;
}

/* ---------------------------------------------------------------------- */
/* 3. Latency under an IDD-like load                                      */
/* ---------------------------------------------------------------------- */

/* Shared between the ingester (a child) and the bench. */
struct ingest_share {
  volatile int step;        /* being ingested; -1 before, nrates when done */
  volatile uint32_t warm_n; /* warm-up products (0: not known yet) */
  volatile uint64_t warm_arrived; /* of them in B (set by the bench) */
  volatile int go;                /* the bench says: start the steps */
  uint32_t first_seq[MAX_STEPS + 1];
  uint64_t inserted[MAX_STEPS], bytes[MAX_STEPS], failed[MAX_STEPS];
  double seconds[MAX_STEPS]; /* how long each step really took */
  double max_behind[MAX_STEPS];
  volatile int error;
};

/* The ingester's part of the warm-up (see warm_up()): the bench counts
 * what reaches B into sh->warm_arrived and sets sh->go when all has.
 * @return 0 or -1 */
static int ingest_warm_up(const bench *b, struct ingest_share *sh, pq_t *pq,
                          uint8_t *buf) {
  uint32_t n = (uint32_t)(pq_data_size(pq) / WARM_SIZE) + 8, i;
  double end = tu_now_s() + 120;

  sh->warm_n = n;
  for (i = 0; i < n && !rb_stop; i++) {
    while (i >= sh->warm_arrived + WARM_WINDOW && tu_now_s() < end)
      rb_sleep(0.0002);
    if (tu_now_s() >= end || rb_insert(pq, b->seed ^ 0x5741524dull, FT_WARM, i,
                                       buf, WARM_SIZE, "WARMUP", NULL) != PQ_OK)
      return -1;
  }
  while (!sh->go && tu_now_s() < end && !rb_stop)
    rb_sleep(0.001);
  return sh->go ? 0 : -1;
}

/* The ingester: the stream at each rate for step_s seconds. */
static void ingester(const bench *b, struct ingest_share *sh) {
  pq_t *pq;
  pq_error err;
  iddmix mix;
  iddmix_prod p;
  uint8_t *buf = malloc(IDDMIX_MAX_SIZE);
  unsigned s;
  bool have = false;

  if (buf == NULL || pq_open(b->a.queue, 0, &pq, &err) != PQ_OK) {
    sh->error = 1;
    _exit(1);
  }
  if (ingest_warm_up(b, sh, pq, buf) != 0) {
    sh->error = 1;
    _exit(1);
  }
  iddmix_init(&mix, b->seed, 1.0, IDDMIX_MAX_SIZE);
  for (s = 0; s < b->nrates && !rb_stop; s++) {
    double t0 = tu_now_s(), at0 = mix.clock;

    iddmix_set_scale(&mix, b->rates[s] * IDDMIX_PEAK);
    sh->first_seq[s] = mix.seqno - (have ? 1u : 0u);
    sh->step = (int)s;
    for (;;) {
      double due, late;
      int rc;

      if (!have) {
        iddmix_next(&mix, &p);
        have = true;
      }
      if (p.at - at0 > b->step_s || rb_stop)
        break; /* p is the first product of the next step */
      due = t0 + (p.at - at0);
      tu_sleep_until_s(due);
      rc = rb_insert_mix(pq, b->seed, &p, buf, "ingest.relay-bench", NULL);
      have = false;
      late = tu_now_s() - due;
      if (late > sh->max_behind[s])
        sh->max_behind[s] = late;
      if (rc == PQ_OK) {
        sh->inserted[s]++;
        sh->bytes[s] += p.size;
      } else {
        sh->failed[s]++;
      }
    }
    /* The step's products are seqnos first_seq[s] .. first_seq[s+1]-1. */
    sh->first_seq[s + 1] = have ? p.seqno : mix.seqno;
    sh->seconds[s] = tu_now_s() - t0;
  }
  pq_close(pq);
  free(buf);
  sh->step = (int)b->nrates;
  _exit(0);
}

/* Has the ingester exited?  (Not reaped: its CPU times stay readable.) */
static bool ingester_died(pid_t pid) {
  siginfo_t si;

  memset(&si, 0, sizeof si);
  return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         si.si_pid == pid;
}

struct lat_reader {
  int64_t *lat;   /* us, by seqno; -1: not arrived */
  uint32_t *size; /* bytes, by seqno */
  uint32_t *ft;   /* feedtype, by seqno */
  size_t cap;
  uint64_t arrived, dups, strays;
  uint64_t warm; /* warm-up products */
};

static int lat_fn(const pq_prod_info *info, const void *data,
                  const pq_place *place, void *arg) {
  struct lat_reader *r = arg;

  (void)data;
  if (info->feedtype == FT_WARM) {
    r->warm++;
    return 0;
  }
  if (info->seqno >= r->cap) {
    r->strays++;
    return 0;
  }
  if (r->lat[info->seqno] >= 0) {
    r->dups++;
    return 0;
  }
  r->lat[info->seqno] =
      (int64_t)place->pp_inserted - (int64_t)pq_ts_to_us(info->arrival);
  r->size[info->seqno] = (uint32_t)info->size;
  r->ft[info->seqno] = info->feedtype;
  r->arrived++;
  return 0;
}

/* The 5 slowest products of seqnos lo .. hi-1 (-v). */
static void print_slowest(const struct lat_reader *r, uint32_t lo,
                          uint32_t hi) {
  uint32_t top[5], q;
  unsigned n = 0, i;

  for (q = lo; q < hi && q < r->cap; q++) {
    if (r->lat[q] < 0)
      continue;
    for (i = n; i > 0 && r->lat[top[i - 1]] < r->lat[q]; i--)
      if (i < 5)
        top[i] = top[i - 1];
    if (i < 5) {
      top[i] = q;
      if (n < 5)
        n++;
    }
  }
  for (i = 0; i < n; i++) {
    char ft[180];

    pq_feedtype_format(r->ft[top[i]], ft, sizeof ft);
    printf("         slowest: %-10s %9.3f MB %8.2f ms (seqno %u)\n", ft,
           r->size[top[i]] / 1e6, (double)r->lat[top[i]] / 1000.0, top[i]);
  }
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

  return (a > b) - (a < b);
}

static double pct(const int64_t *v, size_t n, double p) {
  if (n == 0)
    return NAN;
  return (double)v[rb_pct_index(n, p)] / 1000.0;
}

/* CPU counters at a step's edges; steal and all are the machine's (the
 * "cpu" line of /proc/stat: time the hypervisor gave to others while this
 * VM wanted to run, and all time). */
struct cpu_mark {
  double wall, a, b, ing;
  unsigned long long steal, all;
};

static void mark(const bench *b, pid_t ing, struct cpu_mark *m) {
  m->wall = tu_now_s();
  m->a = rb_tree_cpu(b->a.pid);
  m->b = rb_tree_cpu(b->b.pid);
  m->ing = rb_tree_cpu(ing);
  struct procstat p;
  (void)procstat_read(&p); /* all zero if it cannot be read */
  m->steal = p.steal;
  m->all = procstat_total(&p);
}

/* Cores a process tree used over wall seconds between two CPU readings,
 * or -1 (no figure) if there is no interval or a tree was not readable. */
static double cores(double wall, double cpu0, double cpu1) {
  return wall > 0 && cpu0 >= 0 && cpu1 >= 0 ? (cpu1 - cpu0) / wall : -1;
}

/* The notes under step s's line: insertion failures, the ingester's lag,
 * the hypervisor's steal, the slowest products (-v), the 10x target. */
static void step_notes(const bench *b, const struct ingest_share *sh,
                       const struct lat_reader *rd, unsigned s, double wall,
                       const struct cpu_mark *m0, const struct cpu_mark *m1,
                       uint64_t lost, double p99) {
  if (sh->failed[s] > 0)
    printf("         (%llu products could not be inserted into A)\n",
           (unsigned long long)sh->failed[s]);
  if (sh->max_behind[s] > 0.5)
    printf("         (the ingester fell up to %.1f s behind its "
           "schedule)\n",
           sh->max_behind[s]);
  if (wall > 0 && m1->all > m0->all &&
      m1->steal - m0->steal > (m1->all - m0->all) / 200)
    printf("         (the hypervisor took %.1f%% of this machine's CPU time "
           "meanwhile: steal)\n",
           100.0 * (double)(m1->steal - m0->steal) /
               (double)(m1->all - m0->all));
  if (b->verbose)
    print_slowest(rd, sh->first_seq[s], sh->first_seq[s + 1]);
  if (b->rates[s] == 10.0)
    printf("         target at 10x: no loss and p99 < %.0f ms: %s\n",
           TARGET_P99_MS,
           lost == 0 && sh->failed[s] == 0 && p99 < TARGET_P99_MS ? "met"
                                                                  : "MISSED");
}

/* Step s's line and notes; an error (b->errors) if it did not run or none
 * of its products arrived.  @return 0, or -1 if out of memory (said) */
static int report_step(bench *b, const struct ingest_share *sh,
                       const struct lat_reader *rd,
                       const struct cpu_mark *marks, int seen, unsigned s) {
  uint32_t lo = sh->first_seq[s], hi = sh->first_seq[s + 1], q;
  size_t n = 0;
  int64_t *v;
  uint64_t lost = 0;
  double secs = sh->seconds[s], wall;
  const struct cpu_mark *m0 = &marks[s], *m1 = &marks[s + 1];
  char ratename[16], f[3][16];

  snprintf(ratename, sizeof ratename, "%gx", b->rates[s]);
  if (secs <= 0 || (int)s >= seen) { /* the step never ran */
    if (!rb_stop) {
      printf("  %-6s ERROR: the step did not run (see above): no figure\n",
             ratename);
      b->errors++;
    }
    return 0;
  }
  v = malloc(((size_t)(hi - lo) + 1) * sizeof *v);
  if (v == NULL) {
    rb_warn("out of memory");
    b->errors++;
    return -1;
  }
  for (q = lo; q < hi && q < rd->cap; q++) {
    if (rd->lat[q] >= 0)
      v[n++] = rd->lat[q];
    else
      lost++;
  }
  lost = lost > sh->failed[s] ? lost - sh->failed[s] : 0;
  if (n == 0) {
    printf("  %-6s ERROR: none of the %llu products inserted reached B: no "
           "figure\n",
           ratename, (unsigned long long)sh->inserted[s]);
    b->errors++;
    free(v);
    return 0;
  }
  qsort(v, n, sizeof *v, cmp_i64);
  /* CPU over the step: from its start mark to the next; none when the
   * run ended before the next was taken, or a tree was not readable. */
  wall = (int)s + 1 <= seen ? m1->wall - m0->wall : 0;
  if (wall <= 0 && !rb_stop) {
    rb_warn("%s: the run ended before the step's end: no CPU figures",
            ratename);
    b->errors++;
  }
  printf("  %-6s %8.1f %8.0f %8llu %6llu %7.2f %7.2f %7.2f %7.2f %s %s %s\n",
         ratename, (double)sh->bytes[s] / secs / 1e6,
         (double)sh->inserted[s] / secs, (unsigned long long)sh->inserted[s],
         (unsigned long long)lost, pct(v, n, 50), pct(v, n, 90), pct(v, n, 99),
         (double)v[n - 1] / 1000.0,
         fig(f[0], sizeof f[0], 6, 2, cores(wall, m0->a, m1->a)),
         fig(f[1], sizeof f[1], 6, 2, cores(wall, m0->b, m1->b)),
         fig(f[2], sizeof f[2], 6, 2, cores(wall, m0->ing, m1->ing)));
  step_notes(b, sh, rd, s, wall, m0, m1, lost, pct(v, n, 99));
  free(v);
  return 0;
}

/* One line per step: rates, latency percentiles, loss, CPU.  A step the
 * run did not get through (not interrupted: an error of read_b()), or
 * whose products none arrived, is an error: no figure. */
static void report_latency(bench *b, const struct ingest_share *sh,
                           const struct lat_reader *rd,
                           const struct cpu_mark *marks, int seen) {
  unsigned s;

  printf("  %-6s %8s %8s %8s %6s %7s %7s %7s %7s %6s %6s %6s\n", "rate", "MB/s",
         "prods/s", "products", "lost", "p50 ms", "p90 ms", "p99 ms", "max ms",
         "CPU A", "CPU B", "ingest");
  for (s = 0; s < b->nrates; s++)
    if (report_step(b, sh, rd, marks, seen, s) != 0)
      break;
  printf("  (MB/s and prods/s: what the ingester inserted.  CPU in cores: "
         "each server's\n"
         "  process tree; the ingester makes the bytes and their MD5.)\n"
         "  reference (not measured here): LDM 6.15 on the same stream, p50 "
         "22-27 ms and\n"
         "  p99 54-69 ms at each rate\n");
  if (rd->dups > 0 || rd->strays > 0)
    printf("  (B received %llu products twice and %llu not from the "
           "stream)\n",
           (unsigned long long)rd->dups, (unsigned long long)rd->strays);
}

/*
 * The bench's side of the latency run: read B's queue as products arrive,
 * count the warm-up and let the ingester go when it is done, take the CPU
 * marks at each step's start, and stop once the ingester has finished and
 * everything it inserted has arrived (or DRAIN_S has passed, or nothing
 * came for 3 s).  @return the last step whose start was marked (nrates:
 * the end too)
 */
static int read_b(bench *b, struct ingest_share *sh, pq_t *pq,
                  struct lat_reader *rd, pid_t ing, struct cpu_mark *marks) {
  double drain_end = 0, last_arrival;
  int seen = -1;
  unsigned s;

  last_arrival = tu_now_s();
  for (;;) {
    int step = sh->step;
    int x;

    while (seen < step && seen < (int)b->nrates) {
      seen++;
      mark(b, ing, &marks[seen]);
    }
    if (step >= (int)b->nrates && drain_end == 0)
      drain_end = tu_now_s() + DRAIN_S;
    if (rb_stop)
      break;
    x = pq_next(pq, PQ_FORWARD, NULL, lat_fn, rd);
    sh->warm_arrived = rd->warm;
    if (!sh->go && sh->warm_n > 0 && rd->warm >= sh->warm_n)
      sh->go = 1; /* warmed up: the ingester starts the steps */
    if (x == PQ_OK) {
      last_arrival = tu_now_s();
      continue;
    }
    if (x != PQ_END) {
      rb_warn("cannot read %s: %s", b->b.queue, pq_strerror(x));
      b->errors++;
      break;
    }
    if (drain_end > 0) {
      uint64_t ins = 0;

      for (s = 0; s < b->nrates; s++)
        ins += sh->inserted[s];
      if (rd->arrived >= ins || tu_now_s() > drain_end ||
          tu_now_s() - last_arrival > 3)
        break;
    }
    if (sh->step < (int)b->nrates && ingester_died(ing)) {
      rb_warn("the ingester died");
      b->errors++;
      break;
    }
    (void)pq_wait(pq, 50);
  }
  return seen;
}

static void run_latency(bench *b) {
  double total_rate = 0;
  uint64_t qbytes = 2000ull * 1000 * 1000, slots = 200000;
  struct ingest_share *sh;
  struct lat_reader rd = {0};
  struct cpu_mark marks[MAX_STEPS + 1];
  pq_t *pq = NULL;
  pq_error err;
  pid_t ing = -1;
  int seen = -1;
  unsigned s;

  for (s = 0; s < b->nrates; s++)
    total_rate += b->rates[s];
  printf("\nLatency, IDD-like stream (2024 mix, seed %llu), %.0f s per rate, "
         "from creation in A\nto insertion in B's queue (2 GB queues, both "
         "rings cycled once through the relay first;\n1x = the 2024 peak, "
         "34.5 MB/s)\n",
         (unsigned long long)b->seed, b->step_s);
  /* Capacity for every seqno: the products/s of each step, with room. */
  rd.cap = (size_t)(total_rate * IDDMIX_PEAK * iddmix_rate() * b->step_s * 1.5 +
                    10000);
  rd.lat = malloc(rd.cap * sizeof *rd.lat);
  rd.size = calloc(rd.cap, sizeof *rd.size);
  rd.ft = calloc(rd.cap, sizeof *rd.ft);
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (rd.lat == NULL || rd.size == NULL || rd.ft == NULL || sh == MAP_FAILED) {
    rb_warn("out of memory");
    b->errors++;
    free(rd.lat);
    free(rd.size);
    free(rd.ft);
    return;
  }
  memset(sh, 0, sizeof *sh);
  sh->step = -1;
  for (size_t i = 0; i < rd.cap; i++)
    rd.lat[i] = -1;
  if (setup_servers(b, qbytes, slots) != 0 ||
      rb_start_upstream(&b->a, b->ldmd) != 0 ||
      rb_start_downstream(&b->b, &b->a, b->ldmd, b->tls) != 0) {
    b->errors++;
    goto out;
  }
  if (rb_wait_feed(&b->a) == 0) {
    rb_warn("B's request did not reach A within 10 s (see %s)", b->b.log);
    b->errors++;
    goto out;
  }
  if (pq_open(b->b.queue, PQ_READONLY, &pq, &err) != PQ_OK) {
    rb_warn("cannot open %s: %s", b->b.queue, err.pe_msg);
    b->errors++;
    goto out;
  }
  pq_set_spin(pq, 0); /* the reader must not take CPU from the servers */
  fflush(stdout);
  ing = fork();
  if (ing < 0) {
    rb_warn("fork: %s", strerror(errno));
    b->errors++;
    goto out;
  }
  if (ing == 0) {
    pq_close(pq); /* inherited: the child opens its own handles */
    ingester(b, sh);
  }
  seen = read_b(b, sh, pq, &rd, ing, marks);
  report_latency(b, sh, &rd, marks, seen);
out:
  if (ing > 0) {
    if (!ingester_died(ing))
      kill(ing, SIGTERM);
    waitpid(ing, NULL, 0);
  }
  pq_close(pq);
  servers_down(b);
  munmap(sh, sizeof *sh);
  free(rd.lat);
  free(rd.size);
  free(rd.ft);
}

/* ---------------------------------------------------------------------- */

static void usage(void) {
  fprintf(
      stderr,
      "usage: relay_bench [-d seconds] [-s seed] [-r rates] [-t tests] "
      "[-m mult]\n"
      "                   [-n runs] [-l links] [-D dir] [-L ldmd] [-k] [-v]\n"
      "  -d seconds  length of each latency step (15)\n"
      "  -s seed     seed of the stream and contents (1)\n"
      "  -r rates    latency steps, x the 2024 peak (1,3,10)\n"
      "  -t tests    tcp,thr,lat (all); thr1k,thr10k,thr1m: one size\n"
      "  -m mult     multiply the throughput product counts (1)\n"
      "  -n runs     runs per throughput figure, best printed (3)\n"
      "  -l links    throughput over tcp,tls (both)\n"
      "  -D dir      where the queues go (/dev/shm)\n"
      "  -L ldmd     the server (%s); twice: two side by side\n"
      "  -k          keep the run directory\n"
      "  -v          show the 5 slowest products of each latency step\n",
      LDMD_PATH);
}

static void set_defaults(bench *b) {
  memset(b, 0, sizeof *b);
  b->step_s = 15;
  b->seed = 1;
  b->rates[0] = 1;
  b->rates[1] = 3;
  b->rates[2] = 10;
  b->nrates = 3;
  b->do_tcp = b->do_thr = b->do_lat = true;
  b->thr_sizes = 7;
  b->mult = 1;
  b->thr_runs = 3;
  b->links = 3;
  b->base = "/dev/shm";
  b->ldmd = LDMD_PATH;
  b->ldmds[0] = LDMD_PATH;
}

/* -r: the latency steps, a comma list of rates > 0. */
static int parse_rates(char *arg, bench *b) {
  char *end, *tok, *save;

  b->nrates = 0;
  for (tok = strtok_r(arg, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    if (b->nrates == MAX_STEPS ||
        (b->rates[b->nrates++] = strtod(tok, &end)) <= 0 || *end != '\0') {
      fprintf(stderr, "relay_bench: bad -r (at most %d rates > 0)\n",
              MAX_STEPS);
      return -1;
    }
  }
  return 0;
}

/* -t: the tests to run, a comma list; thr1k, thr10k and thr1m are one size
 * of thr each. */
static int parse_tests(char *arg, bench *b) {
  static const char *const names[] = {"tcp",   "thr",    "lat",
                                      "thr1k", "thr10k", "thr1m"};
  char *tok, *save;

  b->do_tcp = b->do_thr = b->do_lat = false;
  b->thr_sizes = 0;
  for (tok = strtok_r(arg, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    unsigned k = 0;
    while (k < 6 && strcmp(tok, names[k]) != 0)
      k++;
    if (k == 6) {
      fprintf(stderr, "relay_bench: bad -t %s\n", tok);
      return -1;
    }
    if (k == 0)
      b->do_tcp = true;
    else if (k == 2)
      b->do_lat = true;
    else {
      b->do_thr = true;
      b->thr_sizes |= k == 1 ? 7u : 1u << (k - 3);
    }
  }
  return 0;
}

/* -l: the throughput links, a comma list of tcp and tls. */
static int parse_links(char *arg, bench *b) {
  char *tok, *save;

  b->links = 0;
  for (tok = strtok_r(arg, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    if (strcmp(tok, "tcp") == 0) {
      b->links |= 1;
    } else if (strcmp(tok, "tls") == 0) {
      b->links |= 2;
    } else {
      fprintf(stderr, "relay_bench: bad -l %s (tcp, tls)\n", tok);
      return -1;
    }
  }
  return 0;
}

static int parse(int argc, char **argv, bench *b) {
  int c;
  char *end;

  set_defaults(b);
  while ((c = getopt(argc, argv, "d:s:r:t:m:n:l:D:L:kvh")) != -1) {
    errno = 0;
    end = NULL;
    switch (c) {
    case 'd':
      b->step_s = strtod(optarg, &end);
      if (b->step_s <= 0)
        end = optarg;
      break;
    case 's':
      b->seed = strtoull(optarg, &end, 0);
      break;
    case 'r':
      if (parse_rates(optarg, b) != 0)
        return -1;
      break;
    case 't':
      if (parse_tests(optarg, b) != 0)
        return -1;
      break;
    case 'n':
      b->thr_runs = (unsigned)strtoul(optarg, &end, 10);
      if (b->thr_runs == 0 || b->thr_runs > 20)
        end = optarg;
      break;
    case 'm':
      b->mult = strtod(optarg, &end);
      if (b->mult <= 0)
        end = optarg;
      break;
    case 'l':
      if (parse_links(optarg, b) != 0)
        return -1;
      break;
    case 'D':
      b->base = optarg;
      break;
    case 'L':
      if (b->nldmd == 2) {
        fprintf(stderr, "relay_bench: -L at most twice\n");
        return -1;
      }
      b->ldmds[b->nldmd++] = optarg;
      b->ldmd = b->ldmds[0];
      break;
    case 'k':
      b->keep = true;
      break;
    case 'v':
      b->verbose = true;
      break;
    default:
      return -1;
    }
    if (rb_bad_value(c, optarg, end) != 0)
      return -1;
  }
  if (b->nldmd == 0)
    b->nldmd = 1;
  return optind == argc && b->nrates > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  bench b;
  double t0 = tu_now_s();

  if (parse(argc, argv, &b) != 0) {
    usage();
    return 2;
  }
  for (unsigned i = 0; i < b.nldmd; i++)
    if (access(b.ldmds[i], X_OK) != 0) {
      rb_warn("cannot run %s: %s (give the server with -L)", b.ldmds[i],
              strerror(errno));
      return 1;
    }
  if (rb_run_begin(b.run, b.base) != 0)
    return 1;
  printf("relay_bench: ldmd A -> ldmd B over 127.0.0.1, queues in %s\n",
         b.base);
  rb_print_machine();
  if (b.nldmd == 1)
    printf("; %s\n", b.ldmd);
  else
    printf("; server 1 %s, server 2 %s\n", b.ldmds[0], b.ldmds[1]);
  if (b.do_tcp && !rb_stop)
    run_tcp(&b);
  if (b.do_thr && (b.links & 2) && make_cert(&b) != 0) {
    b.errors++;
    b.links &= ~2u;
  }
  if (b.do_thr && !rb_stop)
    run_throughput(&b);
  if (b.do_lat && !rb_stop)
    run_latency(&b);
  if (rb_stop)
    printf("\n(interrupted)\n");
  servers_down(&b);
  return rb_finish(b.run, b.keep, b.errors, t0);
}
