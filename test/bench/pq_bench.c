/*
 * pq_bench.c - how fast the product queue is on this machine, measured
 * beside the machine's own limit (memcpy and MD5 bandwidth of the same run),
 * with the queue on /dev/shm and on a disk file, and the targets printed
 * next to the figures.
 *
 * What it measures, after warming each queue (filled once, so every page is
 * faulted in and inserts evict: the steady state):
 *   - inserts/s and MB/s of one writer for 1 KiB, 64 KiB and 1 MiB products,
 *     with the signature given (a relay) and with the MD5 computed;
 *   - sequential reads with pq_next() (products/s, MB/s; the callback reads
 *     every byte);
 *   - wake-up latency from commit to a reader parked in pq_wait() in another
 *     process: CLOCK_MONOTONIC time written in the product just before
 *     pq_commit(), read by the reader's callback; the writer sleeps 0.2 to
 *     2 ms between products so that the reader really sleeps;
 *   - aggregate inserts/s of 1, 2 and 4 writer processes (1 KiB, given
 *     signature).
 * Not a test: it prints, it does not judge (beyond "met" / "MISSED").  It
 * prints only what it measured in this run; each target is labelled
 * "target:".  A figure it could not measure (a wake-up sample that never
 * came, a writer round that inserted nothing, a reader or writer process
 * that failed) is an error: a message, and exit status 1.
 *
 * usage: pq_bench [-q] [-s shm_dir] [-d disk_dir]
 *   -q  quick run (a few seconds); the full run takes about a minute.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/bench/procstat.h"
#include "test/lib/tu_clock.h"

#define KIB 1024u
#define MIB (1024u * 1024u)
#define NSIZES 3
#define NCONC 3
#define MAX_LAT 20000

static const uint64_t sizes[NSIZES] = {KIB, 64 * KIB, MIB};
static const char *const size_names[NSIZES] = {"1 KiB", "64 KiB", "1 MiB"};
static const unsigned conc_writers[NCONC] = {1, 2, 4};

struct params {
  bool quick;
  uint64_t queue_bytes; /* data area of the insert and read queues */
  double insert_s, read_s, conc_s, copy_s;
  unsigned lat_samples;
};

struct results {
  double ins[NSIZES][2], ins_mbs[NSIZES][2]; /* [size][md5] */
  double rd[NSIZES], rd_mbs[NSIZES];
  double lat_p50, lat_p99, lat_max; /* microseconds */
  unsigned lat_n;
  double conc[NCONC];
};

struct where {
  const char *dir;
  char fs[16];
  struct results r;
};

/* ---------------------------------------------------------------------- */

static void sleep_us(long us) {
  struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

static uint64_t rnd(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define ROUNDS 3 /* each figure is the median of this many timed rounds */

static double median(double v[ROUNDS]) {
  qsort(v, ROUNDS, sizeof v[0], cmp_dbl);
  return v[ROUNDS / 2];
}

static bool progress; /* stderr is a terminal */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...) {
  if (!progress)
    return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

static void die(const char *what, int rc, pq_t *pq) {
  const pq_error *e = pq != NULL ? pq_last_error(pq) : NULL;
  fprintf(stderr, "pq_bench: %s: %s%s%s\n", what, pq_strerror(rc),
          e != NULL && e->pe_msg[0] ? " -- " : "", e != NULL ? e->pe_msg : "");
  exit(1);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (p == NULL) {
    fprintf(stderr, "pq_bench: out of memory\n");
    exit(1);
  }
  return p;
}

static void *shared(size_t n) {
  void *p =
      mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("pq_bench: mmap");
    exit(1);
  }
  return p;
}

/* Busy and total CPU time of the machine (/proc/stat, seconds), to tell
 * how much of it other processes took during the run: their work skews the
 * figures.  @return false if /proc/stat cannot be read */
static bool machine_cpu(double *busy, double *total) {
  struct procstat p;
  double hz = (double)sysconf(_SC_CLK_TCK);
  if (procstat_read(&p) != 0)
    return false;
  *total = (double)procstat_total(&p) / hz;
  *busy = *total - (double)(p.idle + p.iowait) / hz;
  return true;
}

static double own_cpu(void) {
  struct rusage a, b;
  getrusage(RUSAGE_SELF, &a);
  getrusage(RUSAGE_CHILDREN, &b);
  return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
                  b.ru_stime.tv_sec) +
         (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
                  b.ru_stime.tv_usec) /
             1e6;
}

/* Wait until *v reaches want, the children kids[0..n) counting their
 * progress in it; a child that fails (a child that has done its part may
 * exit 0), or 120 s without it, is an error (what says what was awaited).
 * Children are not reaped here. */
static void wait_children(atomic_uint *v, unsigned want, const pid_t *kids,
                          unsigned n, const char *what) {
  double end = tu_now_s() + 120;
  while (atomic_load(v) < want) {
    for (unsigned i = 0; i < n; i++) {
      siginfo_t si;
      memset(&si, 0, sizeof si);
      if (waitid(P_PID, (id_t)kids[i], &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          si.si_pid == kids[i] &&
          (si.si_code != CLD_EXITED || si.si_status != 0)) {
        fprintf(stderr, "pq_bench: a child process ended (%s %d) before %s\n",
                si.si_code == CLD_EXITED ? "status" : "signal", si.si_status,
                what);
        exit(1);
      }
    }
    if (tu_now_s() > end) {
      fprintf(stderr, "pq_bench: no %s within 120 s\n", what);
      exit(1);
    }
    sleep_us(1000);
  }
}

static void fs_name(const char *dir, char *buf, size_t len) {
  struct statfs sf;
  const char *n = "?";
  if (statfs(dir, &sf) == 0) {
    switch ((unsigned long)sf.f_type) {
    case 0x01021994UL:
      n = "tmpfs";
      break;
    case 0xEF53UL:
      n = "ext4";
      break;
    case 0x58465342UL:
      n = "xfs";
      break;
    case 0x9123683EUL:
      n = "btrfs";
      break;
    case 0x794c7630UL:
      n = "overlay";
      break;
    default:
      n = "other";
    }
  }
  snprintf(buf, len, "%s", n);
}

/* ---------------------------------------------------------------------- */
/* Machine limits                                                         */
/* ---------------------------------------------------------------------- */

/* memcpy of 1 MiB blocks into a warm shared file mapping as large as a
 * queue, in dir (what an insert of a large product does). */
static double memcpy_gbs(const struct params *p, const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/pq_bench_memcpy.%ld", dir, (long)getpid());
  size_t dlen = p->queue_bytes;
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  uint8_t *dst = MAP_FAILED;
  if (fd >= 0 && ftruncate(fd, (off_t)dlen) == 0)
    dst = mmap(NULL, dlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (dst == MAP_FAILED) {
    perror(path);
    exit(1);
  }
  uint8_t *src = xmalloc(MIB);
  memset(dst, 1, dlen);
  memset(src, 2, MIB);
  double gbs[ROUNDS];
  size_t off = 0;
  for (int r = 0; r < ROUNDS; r++) {
    uint64_t n = 0;
    double t0 = tu_now_s(), t;
    do {
      for (int k = 0; k < 16; k++) {
        memcpy(dst + off, src, MIB);
        off = off + 2 * MIB <= dlen ? off + MIB : 0;
        n++;
      }
      src[n % MIB] = (uint8_t)n;
    } while ((t = tu_now_s() - t0) < p->copy_s / ROUNDS);
    gbs[r] = (double)n * MIB / t / 1e9;
  }
  munmap(dst, dlen);
  close(fd);
  unlink(path);
  free(src);
  return median(gbs);
}

static double md5_gbs(const struct params *p) {
  uint8_t *buf = xmalloc(MIB), sig[PQ_SIGLEN];
  memset(buf, 3, MIB);
  uint64_t n = 0;
  double t0 = tu_now_s(), t;
  do {
    buf[0] = (uint8_t)n;
    pq_md5(buf, MIB, sig);
    n++;
  } while ((t = tu_now_s() - t0) < p->copy_s / 2);
  free(buf);
  return (double)n * MIB / t / 1e9;
}

/* ---------------------------------------------------------------------- */
/* Inserts and reads                                                      */
/* ---------------------------------------------------------------------- */

#define IDENT "bench/product"
#define ORIGIN "pq_bench"
#define RND8(x) (((x) + 7u) / 8u * 8u)

static uint64_t extent_of(uint64_t size) {
  return RND8(56 + strlen(ORIGIN) + strlen(IDENT)) + RND8(size);
}

struct writer {
  pq_t *pq;
  pq_prod_info info;
  uint8_t *buf;
  uint64_t counter, salt;
};

static void writer_init(struct writer *w, pq_t *pq, uint64_t size,
                        uint64_t salt) {
  memset(w, 0, sizeof *w);
  w->pq = pq;
  w->salt = salt;
  w->buf = xmalloc(size < 8 ? 8 : size);
  uint64_t s = salt;
  for (uint64_t i = 0; i + 8 <= size; i += 8) {
    uint64_t v = rnd(&s);
    memcpy(w->buf + i, &v, 8);
  }
  w->info.arrival = pq_ts_now();
  w->info.feedtype = PQ_FT_EXP;
  w->info.size = size;
  snprintf(w->info.origin, sizeof w->info.origin, ORIGIN);
  snprintf(w->info.ident, sizeof w->info.ident, IDENT);
}

/* Insert until n products or secs seconds, whichever first; returns the
 * count and the time taken. */
static uint64_t insert_run(struct writer *w, bool md5, uint64_t n, double secs,
                           double *took) {
  uint64_t size = w->info.size;
  unsigned batch = size <= 4 * KIB ? 256 : size <= 128 * KIB ? 8 : 1;
  uint64_t done = 0;
  double t0 = tu_now_s(), t;
  do {
    for (unsigned k = 0; k < batch && done < n; k++, done++) {
      uint64_t c = w->counter++;
      w->info.seqno = (uint32_t)c;
      if (md5) {
        memcpy(w->buf, &c, 8);
        pq_md5(w->buf, size, w->info.signature);
      } else {
        memcpy(w->info.signature, &c, 8);
        memcpy(w->info.signature + 8, &w->salt, 8);
      }
      int rc = pq_insert(w->pq, &w->info, w->buf);
      if (rc != PQ_OK)
        die("pq_insert", rc, w->pq);
    }
    t = tu_now_s() - t0;
  } while (done < n && t < secs);
  *took = t;
  return done;
}

static pq_t *make_queue(const char *path, uint64_t bytes, uint64_t slots) {
  pq_create_opts o = {
      .pc_data_size = bytes, .pc_slots = slots, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error err;
  int rc = pq_create(path, &o, &pq, &err);
  if (rc != PQ_OK) {
    fprintf(stderr, "pq_bench: create %s: %s\n", path, err.pe_msg);
    exit(1);
  }
  return pq;
}

/* Fill the queue once and a bit: every page faulted in, inserts evict. */
static void warm(struct writer *w, uint64_t bytes) {
  double took;
  (void)insert_run(w, false, bytes / extent_of(w->info.size) + 16, 1e9, &took);
}

struct rd_acc {
  uint64_t n, bytes, sum;
};

static int read_cb(const pq_prod_info *info, const void *data,
                   const pq_place *place, void *arg) {
  struct rd_acc *a = arg;
  const uint8_t *p = data;
  uint64_t s = 0, v;
  size_t i = 0;
  (void)place;
  for (; i + 8 <= info->size; i += 8) {
    memcpy(&v, p + i, 8);
    s += v;
  }
  a->sum += s;
  a->n++;
  a->bytes += info->size;
  return 0;
}

static double read_run(pq_t *pq, double secs, double *mbs) {
  struct rd_acc a = {0, 0, 0};
  double t0 = tu_now_s(), t;
  do {
    for (int k = 0; k < 64; k++) {
      int rc = pq_next(pq, PQ_FORWARD, NULL, read_cb, &a);
      if (rc == PQ_END)
        pq_cursor_oldest(pq); /* read the queue again */
      else if (rc != PQ_OK)
        die("pq_next", rc, pq);
    }
    t = tu_now_s() - t0;
  } while (t < secs);
  volatile uint64_t sink = a.sum;
  (void)sink;
  *mbs = (double)a.bytes / t / 1e6;
  return (double)a.n / t;
}

/* One size on one file system: warm, then the median of ROUNDS rounds of
 * given-signature inserts, MD5 inserts and reads. */
static void bench_size(const struct params *p, struct where *w,
                       const char *path, int si) {
  uint64_t size = sizes[si];
  uint64_t slots = p->queue_bytes / extent_of(size) + 64;
  say("  %s: inserts and reads of %s\n", w->dir, size_names[si]);
  pq_t *pq = make_queue(path, p->queue_bytes, slots);
  struct writer wr;
  writer_init(&wr, pq, size, 0x5157 + (uint64_t)si);
  warm(&wr, p->queue_bytes);
  for (int md5 = 0; md5 < 2; md5++) {
    double rate[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
      double took;
      uint64_t n =
          insert_run(&wr, md5 != 0, UINT64_MAX, p->insert_s / ROUNDS, &took);
      rate[k] = (double)n / took;
    }
    w->r.ins[si][md5] = median(rate);
    w->r.ins_mbs[si][md5] = w->r.ins[si][md5] * (double)size / 1e6;
  }
  free(wr.buf);
  pq_close(pq);

  pq_error err;
  if (pq_open(path, PQ_READONLY, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pq_bench: open %s: %s\n", path, err.pe_msg);
    exit(1);
  }
  double rate[ROUNDS], mbs[ROUNDS];
  for (int k = 0; k < ROUNDS; k++)
    rate[k] = read_run(pq, p->read_s / ROUNDS, &mbs[k]);
  w->r.rd[si] = median(rate);
  w->r.rd_mbs[si] = median(mbs);
  pq_close(pq);
  unlink(path);
}

/* ---------------------------------------------------------------------- */
/* Wake-up latency                                                        */
/* ---------------------------------------------------------------------- */

struct lat_shared {
  atomic_uint ready;
  atomic_uint n;
  int64_t lat_ns[MAX_LAT];
};

struct lat_reader {
  struct lat_shared *sh;
};

static int lat_cb(const pq_prod_info *info, const void *data,
                  const pq_place *place, void *arg) {
  int64_t now = tu_now_ns(), sent;
  struct lat_reader *lr = arg;
  (void)place;
  if (info->size < sizeof sent)
    return 0;
  memcpy(&sent, data, sizeof sent);
  unsigned i = atomic_load(&lr->sh->n);
  if (i < MAX_LAT) {
    lr->sh->lat_ns[i] = now - sent;
    atomic_store(&lr->sh->n, i + 1);
  }
  return 0;
}

static int lat_child(const char *path, struct lat_shared *sh, unsigned want) {
  pq_t *pq;
  pq_error err;
  if (pq_open(path, PQ_READONLY, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pq_bench: reader: open: %s\n", err.pe_msg);
    return 1;
  }
  struct rd_acc a = {0, 0, 0}; /* read it all once: fault the pages in */
  while (pq_next(pq, PQ_FORWARD, NULL, read_cb, &a) == PQ_OK)
    ;
  if (pq_cursor_newest(pq) != PQ_OK)
    return 1;
  struct lat_reader lr = {sh};
  atomic_store(&sh->ready, 1);
  double end = tu_now_s() + 60;
  while (atomic_load(&sh->n) < want && tu_now_s() < end) {
    int rc = pq_next(pq, PQ_FORWARD, NULL, lat_cb, &lr);
    if (rc == PQ_END)
      rc = pq_wait(pq, 1000);
    if (rc != PQ_OK && rc != PQ_TIMEDOUT)
      return 1;
  }
  pq_close(pq);
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void bench_latency(const struct params *p, struct where *w,
                          const char *path) {
  say("  %s: wake-up latency, %u products\n", w->dir, p->lat_samples);
  pq_t *pq = make_queue(path, 16 * MIB, 4096);
  struct writer wr;
  writer_init(&wr, pq, 64, 0x1a7);
  warm(&wr, 16 * MIB);
  pq_close(pq);
  free(wr.buf);

  struct lat_shared *sh = shared(sizeof *sh);
  fflush(stdout);
  fflush(stderr);
  pid_t kid = fork();
  if (kid < 0) {
    perror("pq_bench: fork");
    exit(1);
  }
  if (kid == 0)
    _exit(lat_child(path, sh, p->lat_samples));
  pq_error err;
  if (pq_open(path, 0, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pq_bench: open %s: %s\n", path, err.pe_msg);
    exit(1);
  }
  wait_children(&sh->ready, 1, &kid, 1, "the reader was ready");
  uint64_t s = 0x5eed;
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  info.arrival = pq_ts_now();
  info.feedtype = PQ_FT_EXP;
  info.size = 64;
  snprintf(info.origin, sizeof info.origin, ORIGIN);
  snprintf(info.ident, sizeof info.ident, "bench/latency");
  for (unsigned i = 0; i < p->lat_samples; i++) {
    sleep_us(200 + (long)(rnd(&s) % 1801));
    uint64_t sig[2] = {rnd(&s), 0x1a7e4c7ULL + i};
    memcpy(info.signature, sig, PQ_SIGLEN);
    pq_resv r;
    int rc = pq_reserve(pq, &info, &r);
    if (rc != PQ_OK)
      die("pq_reserve", rc, pq);
    memset(r.pr_data, 0, 64);
    int64_t t = tu_now_ns();
    memcpy(r.pr_data, &t, sizeof t);
    rc = pq_commit(pq, &r);
    if (rc != PQ_OK)
      die("pq_commit", rc, pq);
  }
  /* The reader stops once it has every sample: up to 10 s for it. */
  int status = 0;
  pid_t got = 0;
  for (int k = 0; k < 2000 && (got = waitpid(kid, &status, WNOHANG)) == 0; k++)
    sleep_us(5000);
  bool killed = got == 0;
  if (killed) {
    kill(kid, 9);
    waitpid(kid, &status, 0);
  }
  pq_close(pq);
  unlink(path);
  unsigned n = atomic_load(&sh->n);
  if (killed || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      n < p->lat_samples) {
    fprintf(stderr,
            "pq_bench: wake-up latency in %s: %u of %u samples; the reader "
            "%s\n",
            w->dir, n, p->lat_samples,
            killed ? "was still waiting 10 s after the last commit"
            : WIFEXITED(status) && WEXITSTATUS(status) == 0
                ? "exited without them"
                : "failed");
    exit(1);
  }
  w->r.lat_n = n;
  qsort(sh->lat_ns, n, sizeof sh->lat_ns[0], cmp_i64);
  w->r.lat_p50 = (double)sh->lat_ns[n / 2] / 1e3;
  w->r.lat_p99 = (double)sh->lat_ns[(size_t)n * 99 / 100] / 1e3;
  w->r.lat_max = (double)sh->lat_ns[n - 1] / 1e3;
  munmap(sh, sizeof *sh);
}

/* ---------------------------------------------------------------------- */
/* Concurrent writers                                                     */
/* ---------------------------------------------------------------------- */

struct conc_shared {
  atomic_uint ready; /* children warmed and waiting */
  atomic_int go;     /* round number + 1 that may start */
  atomic_uint done;  /* rounds finished, summed over the children */
  int64_t stop_ns;
  uint64_t count[ROUNDS][8];
};

static int conc_child(const struct params *p, const char *path,
                      struct conc_shared *sh, unsigned id, uint64_t salt) {
  pq_t *pq;
  pq_error err;
  if (pq_open(path, 0, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pq_bench: writer: open: %s\n", err.pe_msg);
    return 1;
  }
  struct writer w;
  writer_init(&w, pq, KIB, salt + id);
  warm(&w, p->queue_bytes); /* this process's own page tables, too */
  atomic_fetch_add(&sh->ready, 1);
  for (int r = 0; r < ROUNDS; r++) {
    while (atomic_load(&sh->go) <= r)
      ;
    uint64_t n = 0;
    while (tu_now_ns() < sh->stop_ns) {
      double took;
      n += insert_run(&w, false, 64, 1e9, &took);
    }
    sh->count[r][id] = n;
    atomic_fetch_add(&sh->done, 1);
  }
  pq_close(pq);
  free(w.buf);
  return 0;
}

static void warm_conc_queue(const struct params *p, const char *path) {
  uint64_t slots = p->queue_bytes / extent_of(KIB) + 64;
  pq_t *pq = make_queue(path, p->queue_bytes, slots);
  pq_close(pq);
}

/* nw writer processes, each warmed, then ROUNDS timed rounds; the median
 * of the aggregate rates. */
static double conc_rate(const struct params *p, const char *path, unsigned nw,
                        uint64_t salt) {
  struct conc_shared *sh = shared(sizeof *sh);
  pid_t kids[8];
  fflush(stdout);
  fflush(stderr);
  for (unsigned i = 0; i < nw; i++) {
    kids[i] = fork();
    if (kids[i] < 0) {
      perror("pq_bench: fork");
      exit(1);
    }
    if (kids[i] == 0)
      _exit(conc_child(p, path, sh, i, salt));
  }
  wait_children(&sh->ready, nw, kids, nw, "every writer was warmed up");
  double rate[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    int64_t start = tu_now_ns();
    sh->stop_ns = start + (int64_t)(p->conc_s / ROUNDS * 1e9);
    atomic_store(&sh->go, r + 1);
    wait_children(&sh->done, nw * (unsigned)(r + 1), kids, nw,
                  "every writer finished its round");
    uint64_t total = 0;
    for (unsigned i = 0; i < nw; i++) {
      if (sh->count[r][i] == 0) {
        fprintf(stderr,
                "pq_bench: %u writers on %s: writer %u inserted nothing in "
                "round %d\n",
                nw, path, i, r + 1);
        exit(1);
      }
      total += sh->count[r][i];
    }
    rate[r] = (double)total / ((double)(sh->stop_ns - start) / 1e9);
  }
  for (unsigned i = 0; i < nw; i++) {
    int status;
    waitpid(kids[i], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "pq_bench: a writer process failed\n");
      exit(1);
    }
  }
  munmap(sh, sizeof *sh);
  return median(rate);
}

/* ---------------------------------------------------------------------- */
/* Report                                                                 */
/* ---------------------------------------------------------------------- */

static void fmt_rate(char *buf, size_t len, double rate, double mbs) {
  if (mbs >= 0)
    snprintf(buf, len, "%10.0f/s %7.0f MB/s", rate, mbs);
  else
    snprintf(buf, len, "%10.0f/s %12s", rate, "");
}

static const char *within(double shm, double disk) {
  double r = disk / shm;
  return r >= 0.9 && r <= 1.1 ? "" : " *";
}

static void row(const char *name, double a, double amb, double b, double bmb,
                const char *target) {
  char x[48], y[48];
  fmt_rate(x, sizeof x, a, amb);
  fmt_rate(y, sizeof y, b, bmb);
  printf("%-30s %-26s %-26s %5.2f%-2s %s\n", name, x, y, b / a, within(a, b),
         target);
}

static void report(const struct params *p, const struct where *shm,
                   const struct where *disk, double copy, double md5) {
  const struct results *a = &shm->r, *b = &disk->r;
  char h1[64], h2[64], t[160];
  printf("\nmemcpy, 1 MiB blocks into a warm %" PRIu64
         " MiB mapping of a file in %s: %.2f GB/s;  pq_md5: %.2f GB/s\n\n",
         p->queue_bytes / MIB, shm->dir, copy, md5);
  snprintf(h1, sizeof h1, "%s (%s)", shm->dir, shm->fs);
  snprintf(h2, sizeof h2, "%s (%s)", disk->dir, disk->fs);
  printf("%-30s %-26s %-26s %-7s %s\n", "one writer, steady state", h1, h2,
         "dsk/shm", "target");
  for (int si = 0; si < NSIZES; si++)
    for (int md = 0; md < 2; md++) {
      char name[64];
      snprintf(name, sizeof name, "insert %s, %s", size_names[si],
               md ? "MD5 computed" : "given sig");
      t[0] = '\0';
      if (si == 0 && md == 0)
        snprintf(t, sizeof t, "target: >= 250000/s: %s",
                 a->ins[0][0] >= 250000 ? "met" : "MISSED");
      if (si == NSIZES - 1 && md == 0) {
        double ra = a->ins_mbs[si][0] / 1e3 / copy;
        double rb = b->ins_mbs[si][0] / 1e3 / copy;
        snprintf(t, sizeof t, "target: >= 0.5 memcpy: %.2f %s, disk %.2f %s",
                 ra, ra >= 0.5 ? "met" : "MISSED", rb,
                 rb >= 0.5 ? "met" : "MISSED");
      }
      row(name, a->ins[si][md], a->ins_mbs[si][md], b->ins[si][md],
          b->ins_mbs[si][md], t);
    }
  for (int si = 0; si < NSIZES; si++) {
    char name[64];
    snprintf(name, sizeof name, "read %s (pq_next)", size_names[si]);
    row(name, a->rd[si], a->rd_mbs[si], b->rd[si], b->rd_mbs[si], "");
  }
  for (int ci = 0; ci < NCONC; ci++) {
    char name[64];
    snprintf(name, sizeof name, "%u writer%s, 1 KiB, all", conc_writers[ci],
             conc_writers[ci] > 1 ? "s" : "");
    row(name, a->conc[ci], -1, b->conc[ci], -1, "");
  }
  char x[48], y[48];
  snprintf(x, sizeof x, "%.0f / %.0f / %.0f us", a->lat_p50, a->lat_p99,
           a->lat_max);
  snprintf(y, sizeof y, "%.0f / %.0f / %.0f us", b->lat_p50, b->lat_p99,
           b->lat_max);
  snprintf(t, sizeof t, "target: p99 < 1000 us: %s, disk %s (%u, %u samples)",
           a->lat_p99 < 1000 ? "met" : "MISSED",
           b->lat_p99 < 1000 ? "met" : "MISSED", a->lat_n, b->lat_n);
  printf("%-30s %-26s %-26s %5.2f%-2s %s\n", "wake-up p50 / p99 / max", x, y,
         b->lat_p99 / a->lat_p99, "", t);
  printf("(N writers, all: the inserts/s of N writer processes together)\n");
  int off = 0;
  for (int si = 0; si < NSIZES; si++)
    for (int md = 0; md < 2; md++)
      off += *within(a->ins[si][md], b->ins[si][md]) != '\0';
  for (int si = 0; si < NSIZES; si++)
    off += *within(a->rd[si], b->rd[si]) != '\0';
  for (int ci = 0; ci < NCONC; ci++)
    off += *within(a->conc[ci], b->conc[ci]) != '\0';
  printf("\ntarget: shm and disk rates within 10%% of each other: %s (%d of "
         "%d figures off, marked *)\n",
         off == 0 ? "met" : "MISSED", off, 2 * NSIZES + NSIZES + NCONC);
}

int main(int argc, char **argv) {
  struct params p = {.quick = false,
                     .queue_bytes = 256 * MIB,
                     .insert_s = 1.5,
                     .read_s = 1.0,
                     .conc_s = 1.5,
                     .copy_s = 1.0,
                     .lat_samples = 2000};
  struct where shm = {.dir = "/dev/shm"};
  struct where disk = {.dir = "/var/tmp"};
  int opt;
  while ((opt = getopt(argc, argv, "qs:d:")) != -1) {
    switch (opt) {
    case 'q':
      p = (struct params){.quick = true,
                          .queue_bytes = 64 * MIB,
                          .insert_s = 0.3,
                          .read_s = 0.2,
                          .conc_s = 0.3,
                          .copy_s = 0.3,
                          .lat_samples = 300};
      break;
    case 's':
      shm.dir = optarg;
      break;
    case 'd':
      disk.dir = optarg;
      break;
    default:
      fprintf(stderr, "usage: pq_bench [-q] [-s shm_dir] [-d disk_dir]\n");
      return 2;
    }
  }
  progress = isatty(2);
  struct utsname u;
  uname(&u);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  fs_name(shm.dir, shm.fs, sizeof shm.fs);
  fs_name(disk.dir, disk.fs, sizeof disk.fs);
  printf("pq_bench: %s run, %ld CPUs, Linux %s, queues of %" PRIu64
         " MiB on %s (%s) and %s (%s)\n",
         p.quick ? "quick" : "full", ncpu, u.release, p.queue_bytes / MIB,
         shm.dir, shm.fs, disk.dir, disk.fs);
  double busy0 = 0, total0 = 0, own0 = own_cpu();
  bool have_cpu = machine_cpu(&busy0, &total0);
  fflush(stdout);
  double t0 = tu_now_s();
  double copy = memcpy_gbs(&p, shm.dir), md5 = md5_gbs(&p);
  /* Each test runs on one file system and then the other, so that a
   * drift of the machine does not favour either. */
  struct where *places[2] = {&shm, &disk};
  char paths[2][512];
  for (int i = 0; i < 2; i++)
    snprintf(paths[i], sizeof paths[i], "%s/pq_bench.%ld.pq", places[i]->dir,
             (long)getpid());
  for (int si = 0; si < NSIZES; si++)
    for (int i = 0; i < 2; i++)
      bench_size(&p, places[i], paths[i], si);
  for (int i = 0; i < 2; i++)
    warm_conc_queue(&p, paths[i]);
  for (int ci = 0; ci < NCONC; ci++)
    for (int i = 0; i < 2; i++) {
      say("  %s: %u concurrent writer(s)\n", places[i]->dir, conc_writers[ci]);
      places[i]->r.conc[ci] = conc_rate(&p, paths[i], conc_writers[ci],
                                        0xc0c0ULL << 20 | (uint64_t)ci << 12);
    }
  for (int i = 0; i < 2; i++)
    unlink(paths[i]);
  for (int i = 0; i < 2; i++)
    bench_latency(&p, places[i], paths[i]);
  report(&p, &shm, &disk, copy, md5);
  double busy1 = 0, total1 = 0, own1 = own_cpu();
  have_cpu = machine_cpu(&busy1, &total1) && have_cpu && total1 > total0;
  if (!have_cpu) {
    printf("(%.0f s; the CPU time other processes used meanwhile was not "
           "measured: cannot read /proc/stat)\n",
           tu_now_s() - t0);
    return 0;
  }
  double others = ((busy1 - busy0) - (own1 - own0)) / (total1 - total0) * 100;
  if (others < 0)
    others = 0;
  printf("(%.0f s; other processes used %.0f%% of the machine's CPU time "
         "meanwhile%s)\n",
         tu_now_s() - t0, others,
         others > 10 ? ": the figures are low and noisy, run it again on an "
                       "idle machine"
                     : "");
  return 0;
}
