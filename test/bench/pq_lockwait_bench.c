/*
 * pq_lockwait_bench.c - what readers cost the queue's single writer: one
 * process inserts products as fast as it can while R reader processes
 * follow the queue (pq_next(), pq_wait() at the end), as the feed
 * processes of an upstream ldmd do, and the time of every pq_insert() is
 * recorded.  The writer waits for the control lock exclusive while the
 * readers take it shared, once per product each: docs/queue-format.md
 * section 15.7 (writer preference) is what bounds that wait.
 *
 * For each R it prints the writer's inserts/s, its pq_insert() time p50,
 * p99 and max, the share of the run it spent inside pq_insert(), the
 * products the readers read and, with -r (a live stream: products at a
 * fixed rate, the readers asleep in pq_wait() between them, all waking at
 * each commit), the writer's worst lag behind its schedule.  It prints what it
 * measured in this run and judges nothing.  To compare builds, run two copies
 * built from each tree one after the other in the same session (figures move
 * with the machine's load; compare ratios side by side).
 *
 * usage: pq_lockwait_bench [-R n[,n...]] [-d seconds] [-s bytes] [-D dir]
 *                          [-r products_per_second]
 *   -R  reader counts (default 10,100)   -d  seconds per R (default 5)
 *   -s  product size (default 16384)     -D  queue directory (/dev/shm)
 *   -r  insert at this rate (default: as fast as it can)
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/lib/tu_clock.h"

#define MAX_READERS 300
#define MAX_SAMPLES 4000000

struct shared {
  atomic_int stop;
  atomic_int ready;
  atomic_ullong reads;
};

static int touch(const pq_prod_info *info, const void *data,
                 const pq_place *place, void *arg) {
  (void)place;
  volatile const unsigned char *p = data;
  *(uint64_t *)arg += info->size ? p[0] : 0;
  return 0;
}

static void reader(const char *path, struct shared *sh) {
  pq_t *pq;
  pq_error err;
  if (pq_open(path, PQ_READONLY, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pq_lockwait_bench: reader: open: %s\n", err.pe_msg);
    _exit(1);
  }
  uint64_t sum = 0, n = 0;
  atomic_fetch_add(&sh->ready, 1);
  while (!atomic_load(&sh->stop)) {
    int rc = pq_next(pq, PQ_FORWARD, NULL, touch, &sum);
    if (rc == PQ_OK) {
      n++;
    } else if (rc == PQ_END) {
      (void)pq_wait(pq, 50);
    } else {
      fprintf(stderr, "pq_lockwait_bench: reader: pq_next: %s\n",
              pq_strerror(rc));
      _exit(1);
    }
  }
  atomic_fetch_add(&sh->reads, n);
  pq_close(pq);
  _exit(sum == UINT64_MAX ? 2 : 0); /* sum keeps the reads from vanishing */
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int run(const char *dir, unsigned nreaders, double secs, size_t size,
               double rate, uint64_t *lat) {
  char path[4096];
  snprintf(path, sizeof path, "%s/pq_lockwait_bench.%ld.pq", dir,
           (long)getpid());
  pq_create_opts o = {
      .pc_data_size = 256u << 20, .pc_slots = 40000, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error err;
  if (pq_create(path, &o, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pq_lockwait_bench: create %s: %s\n", path, err.pe_msg);
    return 1;
  }
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(sh, 0, sizeof *sh);
  pid_t kids[MAX_READERS];
  for (unsigned i = 0; i < nreaders; i++) {
    kids[i] = fork();
    if (kids[i] == 0)
      reader(path, sh);
    if (kids[i] < 0) {
      perror("fork");
      return 1;
    }
  }
  int64_t until = tu_now_ms() + 30000;
  while (atomic_load(&sh->ready) < (int)nreaders && tu_now_ms() < until)
    (void)usleep(1000); /* startup, not timed */
  if (atomic_load(&sh->ready) < (int)nreaders) {
    fprintf(stderr,
            "pq_lockwait_bench: R=%u: only %d readers started in 30 s\n",
            nreaders, atomic_load(&sh->ready));
    atomic_store(&sh->stop, 1);
    for (unsigned i = 0; i < nreaders; i++)
      (void)waitpid(kids[i], NULL, 0);
    unlink(path);
    return 1;
  }
  char *buf = malloc(size);
  if (buf == NULL)
    return 1;
  memset(buf, 'x', size);
  pq_prod_info info = {.feedtype = PQ_FT_EXP, .size = size};
  snprintf(info.origin, sizeof info.origin, "bench");
  uint64_t n = 0;
  int64_t t0 = tu_now_ns(), tin = 0, end = t0 + (int64_t)(secs * 1e9);
  int rc = 0;
  int64_t lag_max = 0;
  while (tu_now_ns() < end && n < MAX_SAMPLES) {
    int64_t due = 0;
    if (rate > 0) { /* pacing the stream, not synchronisation */
      due = t0 + (int64_t)((double)n * 1e9 / rate);
      struct timespec ts = {due / 1000000000, due % 1000000000};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
             EINTR)
        ;
    }
    info.arrival = pq_ts_now();
    info.seqno = (uint32_t)n;
    snprintf(info.ident, sizeof info.ident, "lockwait.%" PRIu64, n);
    memcpy(info.signature, &n, sizeof n);
    memcpy(info.signature + 8, &t0, sizeof t0);
    int64_t a = tu_now_ns();
    int irc = pq_insert(pq, &info, buf);
    int64_t b = tu_now_ns();
    if (irc != PQ_OK) {
      fprintf(stderr, "pq_lockwait_bench: pq_insert: %s\n", pq_strerror(irc));
      rc = 1;
      break;
    }
    lat[n++] = (uint64_t)(b - a);
    if (rate > 0 && b - due > lag_max)
      lag_max = b - due;
    tin += b - a;
  }
  double took = (double)(tu_now_ns() - t0) / 1e9;
  atomic_store(&sh->stop, 1);
  for (unsigned i = 0; i < nreaders; i++) {
    int st;
    if (waitpid(kids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      rc = 1;
  }
  pq_close(pq);
  unlink(path);
  free(buf);
  if (rc != 0 || n == 0) {
    fprintf(stderr, "pq_lockwait_bench: R=%u: a reader or the writer failed\n",
            nreaders);
    return 1;
  }
  qsort(lat, n, sizeof *lat, cmp_u64);
  printf("R=%-4u inserts %8" PRIu64 " %8.0f/s  insert p50 %7.1f us  p99 "
         "%8.1f us  max %9.1f us  in insert %5.1f%% of %.1f s  reads %llu",
         nreaders, n, (double)n / took, (double)lat[n / 2] / 1e3,
         (double)lat[n * 99 / 100] / 1e3, (double)lat[n - 1] / 1e3,
         100.0 * (double)tin / 1e9 / took, took,
         (unsigned long long)atomic_load(&sh->reads));
  if (rate > 0)
    printf("  lag max %.1f ms", (double)lag_max / 1e6);
  printf("\n");
  munmap(sh, sizeof *sh);
  return 0;
}

int main(int argc, char **argv) {
  const char *rlist = "10,100", *dir = "/dev/shm";
  double secs = 5, rate = 0;
  size_t size = 16384;
  int c;
  while ((c = getopt(argc, argv, "R:d:s:D:r:")) != -1) {
    switch (c) {
    case 'R':
      rlist = optarg;
      break;
    case 'd':
      secs = atof(optarg);
      break;
    case 's':
      size = (size_t)strtoul(optarg, NULL, 10);
      break;
    case 'D':
      dir = optarg;
      break;
    case 'r':
      rate = atof(optarg);
      break;
    default:
      fprintf(stderr, "usage: pq_lockwait_bench [-R n[,n...]] [-d seconds] "
                      "[-s bytes] [-D dir] [-r rate]\n");
      return 1;
    }
  }
  if (secs <= 0 || size == 0 || size > (1u << 24)) {
    fprintf(stderr, "pq_lockwait_bench: bad -d or -s\n");
    return 1;
  }
  uint64_t *lat = malloc(MAX_SAMPLES * sizeof *lat);
  if (lat == NULL)
    return 1;
  printf("pq_lockwait_bench: one writer, %zu-byte products, %.1f s per "
         "reader count, queue in %s\n",
         size, secs, dir);
  int rc = 0;
  for (const char *p = rlist; *p != '\0';) {
    char *e;
    unsigned long r = strtoul(p, &e, 10);
    if (e == p || r > MAX_READERS) {
      fprintf(stderr, "pq_lockwait_bench: bad -R (0..%d)\n", MAX_READERS);
      return 1;
    }
    if (run(dir, (unsigned)r, secs, size, rate, lat) != 0)
      rc = 1;
    p = *e == ',' ? e + 1 : e;
  }
  free(lat);
  return rc;
}
