/*
 * np_bench.c - how fast libnoaaport turns NOAAPORT frames into products on
 * one core: a stream of frames (made beforehand by the test tree's sbngen,
 * an IDD-like mix of text, NEXRAD3 and GRIB products) held in memory and
 * run through the frame reader and the product builder, first with
 * nothing done with the products (the cost of frames, reassembly, MD5 and
 * naming), then inserting every product into a queue on /dev/shm (what
 * noaaportIngester does).  Each pass is timed on the thread's CPU clock
 * and on the wall clock; the best of the runs is printed with every run.
 *
 *   np_bench STREAM [RUNS]
 *
 * Prints frames/s and MB/s of frames (1 MB = 10^6 bytes) beside the
 * issue's target, labelled as such: 250 MB/s on one core, 20 times what
 * all the SBN's channels carry together (under 100 Mbit/s).
 * test/bench/np_bench.sh makes the stream and also times the program
 * reading a file and a multicast group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "pqutils/ingest/ingest_insert.h"
#include "pqutils/ingest/product_build.h"
#include "pqutils/ingest/sbn_frame.h"

#define TARGET_MBS 250.0

struct pass {
  pq_t *pq; /* NULL: products are only counted */
  struct np_inserter ins;
  uint64_t products, bytes;
};

static void on_product(void *arg, const struct np_product *p) {
  struct pass *ps = arg;
  ps->products++;
  ps->bytes += p->size;
  if (ps->pq != NULL)
    (void)np_insert(&ps->ins, p);
}

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One pass over the stream; cpu and wall seconds out. */
static uint64_t run_pass(const uint8_t *s, size_t n, struct pass *ps,
                         double *cpu, double *wall) {
  struct np_log lg = {NULL, NULL, NP_ERROR};
  struct np_namer nm = {.log = &lg};
  struct np_sbn sbn;
  np_sbn_init(&sbn, &lg);
  ps->ins.log = &lg;
  struct np_build_opts bo = {0};
  struct np_build *b = np_build_new(&bo, &nm, on_product, ps);
  if (b == NULL) {
    fprintf(stderr, "np_bench: out of memory\n");
    exit(1);
  }
  double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
  size_t pos = 0;
  struct np_frame f;
  uint64_t frames = 0;
  while (np_sbn_next(&sbn, s, n, &pos, &f, true) == NP_SBN_FRAME) {
    np_build_frame(b, &f);
    frames++;
  }
  np_build_end(b);
  *cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  *wall = clock_s(CLOCK_MONOTONIC) - w0;
  np_build_free(b);
  return frames;
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
    perror(path);
    exit(1);
  }
  long len = ftell(f);
  rewind(f);
  uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
  if (buf == NULL || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    perror(path);
    exit(1);
  }
  fclose(f);
  *n = (size_t)len;
  return buf;
}

/* Run `runs` passes of one kind and print each and the best. */
static void measure(const char *what, const uint8_t *s, size_t n, int runs,
                    pq_t *pq) {
  double best = 0;
  printf("%s:\n", what);
  for (int r = 0; r < runs; r++) {
    struct pass ps = {.pq = pq,
                      .ins = {.pq = pq, .origin = "bench.example.org"}};
    double cpu, wall;
    uint64_t frames = run_pass(s, n, &ps, &cpu, &wall);
    double mbs = n / 1e6 / cpu;
    printf("  run %d: %llu frames, %llu products, %.1f MB in %.3f s CPU "
           "(%.3f s wall): %.0f frames/s, %.1f MB/s of frames per core\n",
           r + 1, (unsigned long long)frames, (unsigned long long)ps.products,
           n / 1e6, cpu, wall, frames / cpu, mbs);
    if (mbs > best)
      best = mbs;
    if (pq != NULL) { /* the next run inserts anew, not duplicates */
      pq_cursor_oldest(pq);
      (void)pq_expire(pq, PQ_TS_ENDT, NULL, NULL, NULL, NULL);
    }
  }
  printf("  best: %.1f MB/s per core (target: %.0f MB/s; %.1f times it)\n",
         best, TARGET_MBS, best / TARGET_MBS);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: np_bench STREAM [RUNS]\n");
    return 2;
  }
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  size_t n;
  uint8_t *s = slurp(argv[1], &n);
  printf("stream %s: %.1f MB of frames\n", argv[1], n / 1e6);
  measure("frames into products (nothing done with them)", s, n, runs, NULL);

  char path[256];
  snprintf(path, sizeof path, "/dev/shm/np_bench.%ld.pq", (long)getpid());
  pq_create_opts co = {.pc_data_size = (uint64_t)n * 2 + (64u << 20),
                       .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  if (pq_create(path, &co, &pq, NULL) != PQ_OK) {
    fprintf(stderr, "np_bench: cannot create %s\n", path);
    return 1;
  }
  measure("frames into products into a queue on /dev/shm", s, n, runs, pq);
  pq_close(pq);
  unlink(path);
  free(s);
  return 0;
}
