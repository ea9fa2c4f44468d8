/*
 * iddfeed.c - the main job's ingester: inserts an IDD-like stream of
 * products (test/bench/iddmix.h: the 2024 feed mix, its feedtypes, sizes
 * and identifiers) into a product queue, paced in real time, until it is
 * stopped, a count is reached or a time has passed.
 *
 * Each product gets its creation time when it is inserted, the MD5 of its
 * bytes as its signature, and the next sequence number.  The pace follows
 * an absolute schedule, so a late insert is caught up rather than drifting.
 *
 * usage: iddfeed -q queue [-x scale] [-s seed] [-m max_size] [-n count]
 *                [-d seconds] [-o origin] [-v]
 *   -x scale     rates relative to the 2024 average (109 products/s,
 *                17.6 MB/s); default 0.05
 *   -s seed      the stream's seed (default 1): same seed, same products
 *   -m max_size  cap on product sizes, bytes (default 20000000)
 *   -n count     stop after this many products (default: no limit)
 *   -d seconds   stop after this time (default: no limit)
 *   -o origin    the products' origin (default: this host's name)
 *   -v           print each product inserted (LDM's product line)
 * SIGINT or SIGTERM stops it; it then prints what it inserted and exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/bench/iddmix.h"
#include "test/lib/tu_clock.h"

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig) {
  (void)sig;
  stop_flag = 1;
}

struct options {
  const char *queue;
  double scale;
  unsigned long long seed;
  unsigned long long max_size;
  unsigned long long count; /* 0: no limit */
  double seconds;           /* 0: no limit */
  char origin[PQ_ORIGIN_MAX + 1];
  int verbose;
};

static void usage(void) {
  fprintf(stderr, "usage: iddfeed -q queue [-x scale] [-s seed] [-m max_size] "
                  "[-n count]\n"
                  "               [-d seconds] [-o origin] [-v]\n");
}

static int parse(int argc, char **argv, struct options *o) {
  int c;
  char *end;

  memset(o, 0, sizeof *o);
  o->scale = 0.05;
  o->seed = 1;
  o->max_size = IDDMIX_MAX_SIZE;
  if (gethostname(o->origin, sizeof o->origin - 1) != 0)
    snprintf(o->origin, sizeof o->origin, "localhost");
  while ((c = getopt(argc, argv, "q:x:s:m:n:d:o:v")) != -1) {
    errno = 0;
    end = NULL;
    switch (c) {
    case 'q':
      o->queue = optarg;
      break;
    case 'x':
      o->scale = strtod(optarg, &end);
      if (o->scale <= 0)
        end = optarg;
      break;
    case 's':
      o->seed = strtoull(optarg, &end, 0);
      break;
    case 'm':
      o->max_size = strtoull(optarg, &end, 0);
      if (o->max_size < IDDMIX_MIN_SIZE)
        end = optarg;
      break;
    case 'n':
      o->count = strtoull(optarg, &end, 0);
      break;
    case 'd':
      o->seconds = strtod(optarg, &end);
      if (o->seconds < 0)
        end = optarg;
      break;
    case 'o':
      snprintf(o->origin, sizeof o->origin, "%s", optarg);
      break;
    case 'v':
      o->verbose = 1;
      break;
    default:
      return -1;
    }
    if (end != NULL && (errno != 0 || end == optarg || *end != '\0')) {
      fprintf(stderr, "iddfeed: invalid -%c value \"%s\"\n", c, optarg);
      return -1;
    }
  }
  if (o->queue == NULL || optind != argc) {
    fprintf(stderr, "iddfeed: %s\n",
            o->queue == NULL ? "no queue (-q)" : "unexpected operand");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  struct options o;
  struct sigaction sa;
  pq_t *pq;
  pq_error err;
  iddmix mix;
  iddmix_prod p;
  pq_prod_info info;
  unsigned long long n = 0, bytes = 0, failed = 0;
  uint8_t *buf;
  double start;
  int rc;

  if (parse(argc, argv, &o) != 0) {
    usage();
    return 1;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  rc = pq_open(o.queue, 0, &pq, &err);
  if (rc != PQ_OK) {
    fprintf(stderr, "iddfeed: cannot open %s: %s\n", o.queue, err.pe_msg);
    return 1;
  }
  buf = malloc(o.max_size);
  if (buf == NULL) {
    fprintf(stderr, "iddfeed: out of memory for %llu bytes\n", o.max_size);
    pq_close(pq);
    return 1;
  }
  iddmix_init(&mix, o.seed, o.scale, o.max_size);
  fprintf(stderr,
          "iddfeed: inserting an IDD-like stream into %s: %.1f products/s, "
          "%.2f MB/s on average (seed %llu)\n",
          o.queue, iddmix_rate() * o.scale, iddmix_byte_rate() * o.scale / 1e6,
          o.seed);
  start = tu_now_s();
  while (!stop_flag && (o.count == 0 || n + failed < o.count)) {
    iddmix_next(&mix, &p);
    if (o.seconds > 0 && p.at > o.seconds)
      break;
    tu_sleep_until_s(start + p.at);
    if (stop_flag)
      break;
    iddmix_fill(o.seed, p.seqno, buf, p.size);
    memset(&info, 0, sizeof info);
    info.feedtype = p.feedtype;
    info.seqno = p.seqno;
    info.size = p.size;
    snprintf(info.ident, sizeof info.ident, "%s", p.ident);
    snprintf(info.origin, sizeof info.origin, "%s", o.origin);
    if (pq_md5(buf, p.size, info.signature) != 0) {
      fprintf(stderr, "iddfeed: MD5 failed\n");
      break;
    }
    info.arrival = pq_ts_now();
    rc = pq_insert(pq, &info, buf);
    if (rc == PQ_OK) {
      n++;
      bytes += p.size;
      if (o.verbose) {
        char line[600];

        pq_prod_info_format(&info, false, line, sizeof line);
        printf("%s\n", line);
        fflush(stdout);
      }
    } else {
      failed++;
      fprintf(stderr, "iddfeed: cannot insert %s: %s\n", info.ident,
              rc == PQ_SYSTEM ? pq_last_error(pq)->pe_msg : pq_strerror(rc));
      if (rc == PQ_CORRUPT || rc == PQ_SYSTEM || rc == PQ_FORKED)
        break;
    }
  }
  fprintf(stderr,
          "iddfeed: %llu products (%llu bytes) inserted in %.1f s, %llu "
          "failed\n",
          n, bytes, tu_now_s() - start, failed);
  free(buf);
  pq_close(pq);
  return failed > 0 && n == 0 ? 1 : 0;
}
