/*
 * fanout_bench.c - what it costs one upstream ldmd to serve N downstream
 * subscribers on loopback (issue 24): one upstream, N subscribers that
 * each ask it for everything, for N = 1, 10, 100, 300.  A benchmark, not
 * a test: it prints what it measured in this run, targets labelled
 * "target:" and LDM's figures, which it does not measure, "reference (not
 * measured here):".
 *
 * Subscribers come in two kinds (-k):
 *   ldmd   real downstream ldmd servers, each with its own queue, whose
 *          ldmd.conf REQUESTs everything from the upstream (as relay_bench's
 *          B): what a relay serving real downstreams does;
 *   sink   cheap FEEDME sinks (fanout_sink.c, one process each): they read
 *          each record's marks, header and prod_info, let the kernel drop
 *          the product's data (-S), check its signature and note when it
 *          came, so that the upstream's cost is seen apart from the
 *          downstreams'.
 * Two modes (-m):
 *   backlog  the upstream's queue holds -b products of -z bytes (2,000 of
 *            50 KiB) before anything starts; the downstream queues are
 *            made with every page of their files written (so tmpfs does
 *            not allocate pages on the clock); the N subscribers are then
 *            started together, and the wall time runs from their start
 *            until every one holds every product (a real downstream: the
 *            last insertion in its queue; a sink: the last product's
 *            arrival).
 *   live     the N subscribers connect first; then a feeder process inserts
 *            the project's IDD-like stream (iddmix.h, the 2024 feed mix)
 *            into the upstream's queue at -r times the 2024 IDD peak of
 *            34.5 MB/s for -d seconds, each product's creation time set
 *            just before its insertion; the feeder runs at nice -20 (-F:
 *            it stands for a relay's ingest from the network, which does
 *            not queue for a CPU behind the downstreams' machines; the
 *            upstream is not raised).  Latency is from that time to the
 *            product's arrival: a sink's clock when its last byte came, a
 *            real downstream's insertion time in its queue (which the bench
 *            follows with pq_next() while the stream runs).  After the
 *            stream, up to 10 s for the last products; what has not come
 *            by then is lost.  A feeder that falls behind the stream's
 *            pace (the machine saturated) goes on slower, and is stopped
 *            at 3 times the stream's length.  A run "keeps up" when
 *            nothing is lost, the p99 latency is under -K ms (default
 *            1000) and the feeder kept the pace (never 1 s behind): the
 *            largest N of those tried that keeps up is printed per build
 *            and kind.
 * Printed for each run: upstream CPU per downstream per GB (user + system
 * of the upstream ldmd's whole process tree, which has a process per
 * downstream, from /proc/<pid>/stat with its reaped children's, over the
 * run, divided by N and by the GB sent to each), the wall time (backlog),
 * latency p50/p99/max over every product and subscriber and the products
 * lost (live), the subscribers' CPU (their processes' trees); under it,
 * how idle the machine was and how many cores processes other than the
 * bench's took (/proc/stat), and for a live run the feeder's CPU and its
 * time runnable but waiting for a CPU (/proc/self/schedstat): a feeder
 * that falls behind while it waits for a CPU is starved, one that does
 * not wait is blocked (the queue) or was never behind.  A "limits:" line
 * then says what limited the run (the feeder's wait for a CPU, no idle
 * CPU and who took it, or neither), with the cores each party used and
 * the subscribers' CPU per subscriber per GB, alone and with the
 * upstream's.  Then the targets beside what was measured.
 *
 * The upstream's registry raises /server/max-per-address (32 by default:
 * every subscriber here comes from 127.0.0.1) and /server/max-clients to
 * N + 16, and turns /server/enable-anti-DOS off (N identical requests
 * from one address would otherwise replace each other; docs/security.md).
 *
 * Two builds side by side: -L given twice (or FANOUT_LDMD_B set) runs each
 * row with the first ldmd and then with the second, the second's row
 * followed by its ratio to the first (what a change does, measured in one
 * run).  Queues live on /dev/shm (-D).  A run whose queues would not fit
 * in the tmpfs or in the memory available is skipped, saying so (300 real
 * downstreams with a 2,000 x 50 KiB backlog need about 34 GB).
 * Everything the bench starts is stopped (SIGTERM, then SIGKILL after a
 * bounded wait), and its directory removed, at the end or on SIGINT or
 * SIGTERM; every server, sink and the feeder also gets SIGTERM if the
 * bench itself dies (PR_SET_PDEATHSIG).  Every wait is bounded.
 *
 * usage: fanout_bench [-m modes] [-k kinds] [-N list] [-b count] [-z bytes]
 *                     [-d seconds] [-r rate] [-K ms] [-Q MiB] [-s seed]
 *                     [-D dir] [-L ldmd [-L ldmd]] [-U ldmd]
 *                     [-X xml [-X xml]]
 *                     [-S discard|read [-S discard|read]] [-F nice|off]
 *                     [-q] [-x] [-v]
 *   -m modes   backlog, live, comma-separated (default both)
 *   -k kinds   sink, ldmd, comma-separated (default both)
 *   -N list    subscriber counts (default 1,10,100,300)
 *   -b count   backlog products (default 2000)
 *   -z bytes   backlog product size (default 51200)
 *   -d seconds live stream length (default 20)
 *   -r rate    live stream, multiple of the 2024 peak (default 1)
 *   -K ms      p99 under which a live run keeps up (default 1000)
 *   -Q MiB     each real downstream's queue in live mode (default 64; the
 *              bench reads what arrives as it arrives, so it need not hold
 *              the whole stream; a backlog's hold the whole backlog)
 *   -s seed    of the products (default 1)
 *   -D dir     where the queues go (default /dev/shm)
 *   -L ldmd    the server (default: the one built with this program);
 *              twice: two builds side by side (also FANOUT_LDMD_B=path)
 *   -U ldmd    the upstream server of every row (default: the row's -L,
 *              which then runs only the downstreams): with -L twice, two
 *              builds of the receiving side under one upstream
 *   -X xml     more of the upstream's registry, inside <server> (e.g.
 *              "<zero-copy>FALSE</zero-copy>"); given twice, the first
 *              goes with the first -L and the second with the second
 *              (the same binary with a setting off and on)
 *   -S way     how the sinks take a product's data: discard (the default:
 *              dropped by the kernel, recv(2) MSG_TRUNC, never copied into
 *              the sink) or read (every byte read through rpc_io, the sink
 *              before 2026-12-07); given twice, paired with the -L's as -X
 *   -F nice    the live feeder's nice value (default -20; "off": the
 *              bench's own).  The feeder stands for a relay's ingest, which
 *              comes from the network and does not wait for a CPU behind
 *              the downstreams' machines, as the N sinks make it do here;
 *              raising it needs root (a warning says when it could not)
 *   -q         quick: N = 1,2, a backlog of 40 x 50 KiB, 2 s of live
 *              stream, small queues (the smoke test, ctest bench_fanout)
 *   -x         exit 1 unless every run was measured, every live run lost
 *              nothing and no product came with the wrong signature (the
 *              smoke test: its tiny runs always fit, so one skipped for
 *              want of room is a failure, not a skip)
 *   -v         keep the run directory (logs, queues) for a post-mortem
 * Examples:
 *   build/release/test/fanout_bench -N 1,10,100
 *   build/release/test/fanout_bench -L old/ldmd -L new/ldmd -m backlog
 * A default run took 8 minutes on the 2-core development machine (N = 1,
 * 10 and 100 in 340 s, 300 sinks in 126 s; 300 real downstreams do not
 * fit in its memory and are skipped); -L twice doubles it; -q takes
 * about 10 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/bench/fanout_sink.h"
#include "test/bench/iddmix.h"
#include "test/bench/procstat.h"
#include "test/bench/relay_servers.h"
#include "test/lib/tu_clock.h"

#ifndef LDMD_PATH
#define LDMD_PATH "ldmd"
#endif

#define MAXN 8      /* subscriber counts */
#define MAXSUB 1000 /* subscribers in one run */
#define MIB (1024u * 1024u)
#define DRAIN_S 10.0    /* most time given to the last live products */
#define CONNECT_S 120.0 /* most time for N subscribers to connect */
#define BACKLOG_S 300.0 /* most time for a backlog to reach everyone */
#define TARGET_CPU 0.12 /* s per downstream per GB */
#define REF_CPU_LO 0.34 /* LDM 6.15, measured on this machine */
#define REF_CPU_HI 0.37
#define TARGET_LIVE_N 100u     /* subscribers at the peak ... */
#define TARGET_P99_MS 50.0     /* ... with p99 under this */
#define LARGE_PRODUCT 1000000u /* live latency is also printed by size */
#define REF_BACKLOG_S 9.5      /* LDM 6.15: 2,000 x 50 KiB to 100 downstreams */
#define TARGET_BACKLOG_N 100u
#define FT_BACKLOG 0x00000002u /* PPS */
#define FEEDER_NICE (-20)      /* -F: the live feeder's nice value */
#define NO_GROUP 99            /* no autogroup */

enum kind { K_SINK, K_LDMD };
enum mode { M_BACKLOG, M_LIVE };
static const char *const kind_name[] = {"sink", "ldmd"};

typedef struct opts {
  bool modes[2], kinds[2];
  unsigned ns[MAXN], nn;
  uint32_t backlog_n;
  uint64_t backlog_size;
  double live_s, rate, keepup_ms;
  uint64_t seed;
  const char *base;
  const char *ldmds[2];
  unsigned nldmd;
  const char *up_ldmd; /* -U: the upstream of every row, or NULL */
  const char *xml[2];  /* -X: the upstream's registry, with each build */
  unsigned nxml;
  fs_way ways[2]; /* -S: how the sinks take the data, with each build */
  unsigned nway;
  bool raise_feeder; /* -F: the feeder's nice value set to feeder_nice */
  int feeder_nice;
  bool quick, strict, keep;
  uint64_t up_live_bytes, down_live_bytes; /* queue sizes, live mode */
} opts;

/* What one run measured. */
typedef struct result {
  bool ran, ok;          /* ok: every figure measured */
  double wall_s;         /* backlog: start to the last arrival */
  double cpu_s;          /* upstream tree */
  double sub_cpu_s;      /* the subscribers' (their trees), all together */
  double gb;             /* sent to each subscriber (what it should get) */
  double p50, p99, pmax; /* live, ms */
  /* live: the same for products under LARGE_PRODUCT bytes [0] and the
   * others [1], and how many deliveries each */
  double p50_by[2], p99_by[2];
  size_t n_by[2];
  uint64_t lost, expected;
  double in_mbs;   /* live: what the feeder inserted, MB/s */
  double behind_s; /* live: the feeder's worst lateness */
  bool cut;        /* live: the feeder was stopped before the stream's end */
  double feeder_cpu_s, feeder_s; /* live: the feeder's CPU, its time */
  double idle;                   /* the machine's idle share over the run */
  double others;                 /* cores the machine's other processes
                                    took over the run (not the bench's) */
  double feeder_wait_s;  /* live: the feeder runnable, waiting for a CPU */
  double span_s;         /* the time the CPU figures are over */
  uint64_t badsig;       /* products that came with the wrong signature */
  int feeder_nice;       /* live: the feeder's nice value while it ran */
  int feeder_group;      /* live: its autogroup's nice value, or NO_GROUP */
  bool feeder_own_group; /* live: an autogroup of its own */
  double insert_s, insert_max_s; /* live: the feeder's time making and
                                    inserting products, all and longest */
} result;

/* Shared with the feeder (a child). */
typedef struct feed_share {
  volatile int started, done, error;
  volatile int halt; /* the bench says: stop now (it fell too far behind) */
  volatile uint64_t inserted, bytes;
  volatile double seconds, max_behind;
  volatile double run_s, wait_s; /* on a CPU, and runnable but waiting for
                                    one (/proc/self/schedstat) */
  volatile int nice;             /* its nice value while it ran */
  volatile int nice_errno;       /* why it could not be raised, or 0 */
  volatile int group_nice;       /* its autogroup's nice value, or
                                    NO_GROUP */
  volatile int own_group;        /* it has an autogroup of its own */
  volatile double insert_s;      /* wall time making and inserting products */
  volatile double insert_max_s;  /* the longest of those */
} feed_share;

/* One run's processes and files. */
typedef struct run {
  const opts *o;
  const char *ldmd;
  const char *xml; /* more for the upstream's <server>, or NULL */
  fs_way way;      /* the sinks' */
  char dir[RB_RUN_MAX];
  server up;
  server *down; /* n, for K_LDMD */
  pid_t *sink;  /* n, for K_SINK */
  fs_slot *slots;
  int32_t *lat;    /* n x cap, by subscriber then seqno; -1: not arrived */
  uint8_t *sigs;   /* cap x 16: the signature inserted under each seqno */
  uint32_t *sizes; /* cap: live, the size of the product of each seqno */
  uint32_t cap;
  size_t shared_len;
  void *shared;
  pq_t **dq; /* the downstream queues, read by the bench */
  unsigned n;
  enum kind kind;
  pid_t feeder;
  feed_share *fs;
} run;

static char top_run[RB_RUN_MAX]; /* the bench's directory */

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* ---------------------------------------------------------------------- */

static uint64_t epoch_us(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Lines of the upstream's log saying a feed started (one per subscriber
 * connected), as rb_feed_started_us() reads them. */
static unsigned feeds_started(const server *s) {
  FILE *f = fopen(s->log, "r");
  char line[2048];
  unsigned n = 0;

  if (f == NULL)
    return 0;
  while (fgets(line, sizeof line, f) != NULL) {
    const char *feed = strstr(line, "(feed)");

    if (feed != NULL && strstr(feed, "Starting Up(") != NULL)
      n++;
  }
  fclose(f);
  return n;
}

/* Bytes free in the tmpfs of dir and in the machine's MemAvailable, the
 * smaller. */
static uint64_t room_bytes(const char *dir) {
  struct statvfs v;
  uint64_t shm = UINT64_MAX, mem = UINT64_MAX;
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];

  if (statvfs(dir, &v) == 0)
    shm = (uint64_t)v.f_bavail * v.f_frsize;
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    unsigned long long kb;

    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
      mem = kb * 1024u;
  }
  if (f != NULL)
    fclose(f);
  return shm < mem ? shm : mem;
}

static int cmp_i32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;

  return (a > b) - (a < b);
}

/* SIGTERM to every pid; then up to limit_s for all to exit; SIGKILL the
 * rest.  Reaps them all. */
static void stop_all(pid_t *pids, unsigned n, double limit_s) {
  double end = tu_now_s() + limit_s;
  unsigned i, left = 0;

  for (i = 0; i < n; i++)
    if (pids[i] > 0 && kill(pids[i], SIGTERM) == 0)
      left++;
  while (left > 0 && tu_now_s() < end) {
    left = 0;
    for (i = 0; i < n; i++) {
      if (pids[i] <= 0)
        continue;
      if (waitpid(pids[i], NULL, WNOHANG) == pids[i])
        pids[i] = 0;
      else
        left++;
    }
    if (left > 0)
      rb_sleep(0.01);
  }
  for (i = 0; i < n; i++)
    if (pids[i] > 0) {
      rb_warn("process %d did not stop on SIGTERM: killed", (int)pids[i]);
      kill(pids[i], SIGKILL);
      waitpid(pids[i], NULL, 0);
      pids[i] = 0;
    }
}

/* ---------------------------------------------------------------------- */
/* The upstream                                                           */
/* ---------------------------------------------------------------------- */

/* The upstream's queue, registry and limits; for a backlog, its products
 * inserted.  @return 0 or -1 */
static int upstream_setup(run *r, enum mode m) {
  const opts *o = r->o;
  uint64_t bytes, slots;
  char xml[512];

  if (m == M_BACKLOG) {
    bytes = (o->backlog_size + 512) * o->backlog_n + 8 * MIB;
    slots = o->backlog_n + 1024;
  } else {
    bytes = o->up_live_bytes;
    slots = pq_default_slots(bytes);
  }
  if (rb_server_setup(&r->up, r->dir, "up", bytes, slots, NULL) != 0)
    return -1;
  snprintf(xml, sizeof xml,
           "<max-per-address>%u</max-per-address>"
           "<max-clients>%u</max-clients>"
           "<enable-anti-DOS>FALSE</enable-anti-DOS>",
           r->n + 16, r->n + 16);
  if (rb_server_registry_insert(&r->up, "</server>", xml) != 0 ||
      (r->xml != NULL &&
       rb_server_registry_insert(&r->up, "</server>", r->xml) != 0))
    return -1;
  if (m == M_BACKLOG) {
    pq_t *pq;
    pq_error err;
    uint8_t *buf = malloc(o->backlog_size);
    uint32_t i;
    int rc = 0;

    if (buf == NULL || pq_open(r->up.queue, 0, &pq, &err) != PQ_OK) {
      rb_warn("cannot open %s", r->up.queue);
      free(buf);
      return -1;
    }
    for (i = 0; i < o->backlog_n && rc == 0 && !rb_stop; i++) {
      rc = rb_insert(pq, o->seed, FT_BACKLOG, i, buf, o->backlog_size,
                     "BACKLOG", NULL) == PQ_OK
               ? 0
               : -1;
      /* what the sinks check each product's signature against (buf holds
       * the product just inserted) */
      if (rc == 0 &&
          pq_md5(buf, o->backlog_size, r->sigs + (size_t)i * 16) != 0)
        rc = -1;
    }
    pq_close(pq);
    free(buf);
    if (rc != 0 || rb_stop)
      return -1;
  }
  return rb_start_upstream(&r->up,
                           r->o->up_ldmd != NULL ? r->o->up_ldmd : r->ldmd);
}

/* ---------------------------------------------------------------------- */
/* Subscribers                                                            */
/* ---------------------------------------------------------------------- */

/* The downstream servers' directories, registries and queues. */
static int downs_setup(run *r, enum mode m) {
  uint64_t bytes, slots;
  unsigned i;

  if (m == M_BACKLOG) {
    bytes = (r->o->backlog_size + 512) * r->o->backlog_n + 8 * MIB;
    slots = r->o->backlog_n + 1024;
  } else {
    bytes = r->o->down_live_bytes;
    slots = pq_default_slots(bytes);
  }
  for (i = 0; i < r->n && !rb_stop; i++) {
    char name[32], *copy;

    snprintf(name, sizeof name, "d%03u", i);
    copy = strdup(name); /* the server keeps it; freed by run_down() */
    if (copy == NULL) {
      rb_warn("out of memory");
      return -1;
    }
    if (rb_server_setup(&r->down[i], r->dir, copy, bytes, slots, NULL) != 0) {
      r->down[i].name = copy;
      return -1;
    }
  }
  return rb_stop ? -1 : 0;
}

/* Start every downstream ldmd at once (not waiting for one before the
 * next): each REQUESTs everything from the upstream. */
static int downs_start(run *r) {
  unsigned i;

  for (i = 0; i < r->n; i++)
    if (rb_spawn_downstream(&r->down[i], &r->up, r->ldmd, false) != 0)
      return -1;
  return 0;
}

/* Start the N sinks at once. */
static int sinks_start(run *r) {
  unsigned i;

  fflush(stdout);
  for (i = 0; i < r->n; i++) {
    r->sink[i] = fork();
    if (r->sink[i] < 0) {
      rb_warn("fork: %s", strerror(errno));
      return -1;
    }
    if (r->sink[i] == 0) {
      int rc;

      fs_conf c = {r->up.port, r->way, r->lat + (size_t)i * r->cap, r->cap,
                   r->sigs};

      prctl(PR_SET_PDEATHSIG, SIGTERM);
      rc = fs_run(&c, &r->slots[i], &rb_stop);
      r->slots[i].done = 1;
      _exit(rc == 0 ? 0 : 1);
    }
  }
  return 0;
}

/* Open the downstream queues for the bench's reading. */
static int downs_open(run *r) {
  unsigned i;

  for (i = 0; i < r->n; i++) {
    pq_error err;

    if (pq_open(r->down[i].queue, PQ_READONLY, &r->dq[i], &err) != PQ_OK) {
      rb_warn("cannot open %s: %s", r->down[i].queue, err.pe_msg);
      return -1;
    }
  }
  return 0;
}

struct follow {
  int32_t *lat;
  uint32_t cap;
  fs_slot *slot;
};

static int follow_fn(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  struct follow *f = arg;

  (void)data;
  if (place->pp_oldest && f->slot->arrived > 0)
    f->slot->lagged++;
  if (place->pp_inserted > f->slot->last_us)
    f->slot->last_us = place->pp_inserted;
  if (info->seqno >= f->cap) {
    f->slot->strays++;
  } else if (f->lat[info->seqno] >= 0) {
    f->slot->dups++;
  } else {
    int64_t d =
        (int64_t)place->pp_inserted - (int64_t)pq_ts_to_us(info->arrival);

    f->lat[info->seqno] = d < 0 ? 0 : d > INT32_MAX ? INT32_MAX : (int32_t)d;
    f->slot->bytes += info->size;
    f->slot->arrived++;
  }
  return 0;
}

/* Read what came into each downstream queue since the last look (a real
 * downstream's slot is the bench's to fill). */
static void downs_follow(run *r) {
  unsigned i;

  for (i = 0; i < r->n; i++) {
    struct follow f = {r->lat + (size_t)i * r->cap, r->cap, &r->slots[i]};
    int k, rc = PQ_OK;

    for (k = 0; k < 10000 && rc == PQ_OK; k++)
      rc = pq_next(r->dq[i], PQ_FORWARD, NULL, follow_fn, &f);
  }
}

/* Has every subscriber `want` products?  Sinks say so themselves; a real
 * downstream's queue is read.  Also notes a sink that has ended. */
static bool all_have(run *r, uint64_t want, unsigned *dead) {
  unsigned i;
  bool all = true;

  if (r->kind == K_LDMD)
    downs_follow(r);
  *dead = 0;
  for (i = 0; i < r->n; i++) {
    if (r->slots[i].arrived < want)
      all = false;
    if (r->kind == K_SINK && r->slots[i].done)
      (*dead)++;
  }
  return all;
}

/* CPU seconds of one process alone (with its reaped children's), 0 if it
 * is gone. */
static double pid_cpu(pid_t pid) {
  char path[64], buf[1024];
  const char *p;
  FILE *f;
  unsigned long long ut, st;
  long long cut, cst;

  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  f = fopen(path, "r");
  if (f == NULL)
    return 0;
  p = fgets(buf, sizeof buf, f);
  fclose(f);
  if (p == NULL || (p = strrchr(buf, ')')) == NULL ||
      sscanf(p + 2,
             "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
             &ut, &st, &cut, &cst) != 4)
    return 0;
  return (double)(ut + st + (unsigned long long)(cut + cst)) /
         (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of all the subscribers: each sink, each downstream ldmd's
 * tree (the server and its requester). */
static double subs_cpu(const run *r) {
  double t = 0;
  unsigned i;

  for (i = 0; i < r->n; i++)
    if (r->kind == K_SINK)
      t += r->sink[i] > 0 ? pid_cpu(r->sink[i]) : 0;
    else if (r->down[i].pid > 0) {
      double c = rb_tree_cpu(r->down[i].pid);

      t += c > 0 ? c : 0;
    }
  return t;
}

/* Why not every subscriber has everything: how many lack products, the
 * first of them, and the first sink that ended, with its reason. */
static void report_short(const run *r, uint64_t want, bool timed_out) {
  unsigned i, lacking = 0, first = 0, ended = 0, first_ended = 0;

  for (i = 0; i < r->n; i++) {
    if (r->slots[i].arrived < want && lacking++ == 0)
      first = i;
    if (r->kind == K_SINK && r->slots[i].done && ended++ == 0)
      first_ended = i;
  }
  rb_warn("%u of %u subscribers lack products%s (subscriber %u has %llu of "
          "%llu)",
          lacking, r->n, timed_out ? " after the time allowed" : "", first,
          (unsigned long long)r->slots[first].arrived,
          (unsigned long long)want);
  if (ended > 0)
    rb_warn("%u sinks ended; sink %u: %s", ended, first_ended,
            r->slots[first_ended].error[0] ? r->slots[first_ended].error
                                           : "(no reason)");
}

/* Cores busy (all ticks but idle and iowait, over the wall time) between
 * two readings of /proc/stat; NAN if unreadable. */
static double busy_cores(const struct procstat *a, const struct procstat *b) {
  unsigned long long all = procstat_total(b) - procstat_total(a);
  unsigned long long idle = (b->idle + b->iowait) - (a->idle + a->iowait);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

  return all > 0 && ncpu > 0
             ? (double)(all - idle) / ((double)all / (double)ncpu)
             : NAN;
}

/* The machine's idle share (idle and iowait ticks over all) between two
 * readings of /proc/stat; NAN if unreadable. */
static double idle_share(const struct procstat *a, const struct procstat *b) {
  unsigned long long all = procstat_total(b) - procstat_total(a);

  return all > 0 ? (double)((b->idle + b->iowait) - (a->idle + a->iowait)) /
                       (double)all
                 : NAN;
}

/* Wait (up to limit_s) until every subscriber is connected. */
static int wait_connected(run *r, double limit_s) {
  double end = tu_now_s() + limit_s;

  while (tu_now_s() < end && !rb_stop) {
    unsigned c = 0;

    if (r->kind == K_SINK) {
      for (unsigned i = 0; i < r->n; i++) {
        if (r->slots[i].done) {
          rb_warn("sink %u ended: %s", i, r->slots[i].error);
          return -1;
        }
        c += r->slots[i].connected != 0;
      }
    } else {
      c = feeds_started(&r->up);
    }
    if (c >= r->n)
      return 0;
    rb_sleep(0.02);
  }
  rb_warn("%u subscribers did not all connect within %.0f s", r->n, limit_s);
  return -1;
}

/* ---------------------------------------------------------------------- */
/* The live stream's feeder                                               */
/* ---------------------------------------------------------------------- */

/* This process's time on a CPU and its time runnable but waiting for one
 * (the first two fields of /proc/self/schedstat, ns); -1 if unknown. */
static void sched_times(volatile double *run_s, volatile double *wait_s) {
  FILE *f = fopen("/proc/self/schedstat", "r");
  unsigned long long on = 0, wait = 0;
  bool ok = f != NULL && fscanf(f, "%llu %llu", &on, &wait) == 2;

  if (f != NULL)
    fclose(f);
  *run_s = ok ? (double)on / 1e9 : -1;
  *wait_s = ok ? (double)wait / 1e9 : -1;
}

/* The feeder stands for a relay's ingest, whose products come from the
 * network: raised (-F), it does not queue for a CPU behind the N sinks,
 * which stand for other machines.  Its nice value alone is not enough
 * where the kernel groups each session's processes (autogroup, on here):
 * nice then weighs only within the session, and each session gets its
 * share of the CPUs.  So it also gets a session of its own (setsid(2))
 * whose group gets the same nice value (/proc/self/autogroup; see
 * sched(7)).  Nothing else is raised: the upstream and the subscribers
 * stay in the bench's session at its nice value. */
static void raise_feeder(const opts *o, feed_share *sh) {
  char line[128];
  FILE *f;
  int v;

  sh->group_nice = NO_GROUP;
  if (o->raise_feeder) {
    if (setpriority(PRIO_PROCESS, 0, o->feeder_nice) != 0)
      sh->nice_errno = errno;
    else if (access("/proc/self/autogroup", F_OK) == 0 && setsid() >= 0 &&
             (f = fopen("/proc/self/autogroup", "w")) != NULL) {
      fprintf(f, "%d", o->feeder_nice);
      if (fclose(f) != 0)
        sh->nice_errno = errno;
      else
        sh->own_group = 1;
    }
  }
  errno = 0;
  sh->nice = getpriority(PRIO_PROCESS, 0);
  f = fopen("/proc/self/autogroup", "r"); /* "/autogroup-123 nice -20" */
  if (f != NULL && fgets(line, sizeof line, f) != NULL &&
      sscanf(line, "%*s nice %d", &v) == 1)
    sh->group_nice = v;
  if (f != NULL)
    fclose(f);
}

static void feeder(const run *r) {
  const opts *o = r->o;
  feed_share *sh = r->fs;
  pq_t *pq;
  pq_error err;
  iddmix mix;
  iddmix_prod p;
  uint8_t *buf = malloc(IDDMIX_MAX_SIZE);
  double t0;

  prctl(PR_SET_PDEATHSIG, SIGTERM);
  raise_feeder(o, sh);
  if (buf == NULL || pq_open(r->up.queue, 0, &pq, &err) != PQ_OK) {
    sh->error = 1;
    _exit(1);
  }
  iddmix_init(&mix, o->seed, o->rate * IDDMIX_PEAK, IDDMIX_MAX_SIZE);
  t0 = tu_now_s();
  sh->started = 1;
  for (;;) {
    double due, late, start, took;

    iddmix_next(&mix, &p);
    if (p.at > o->live_s || rb_stop || sh->halt || p.seqno >= r->cap)
      break;
    due = t0 + p.at;
    while (tu_now_s() < due && !rb_stop)
      tu_sleep_until_s(due);
    start = tu_now_s();
    if (rb_insert_mix(pq, o->seed, &p, buf, "feeder.fanout-bench",
                      r->sigs + (size_t)p.seqno * 16) != PQ_OK) {
      sh->error = 1;
      break;
    }
    r->sizes[p.seqno] = (uint32_t)p.size;
    took = tu_now_s() - start;
    sh->insert_s += took;
    if (took > sh->insert_max_s)
      sh->insert_max_s = took;
    late = tu_now_s() - due;
    if (late > sh->max_behind)
      sh->max_behind = late;
    sh->inserted++;
    sh->bytes += p.size;
  }
  sh->seconds = tu_now_s() - t0;
  sched_times(&sh->run_s, &sh->wait_s);
  pq_close(pq);
  free(buf);
  sh->done = 1;
  _exit(sh->error ? 1 : 0);
}

/* ---------------------------------------------------------------------- */
/* One run                                                                */
/* ---------------------------------------------------------------------- */

static void run_down(run *r) {
  unsigned i;

  if (r->feeder > 0)
    stop_all(&r->feeder, 1, 5);
  if (r->sink != NULL)
    stop_all(r->sink, r->n, 15);
  if (r->down != NULL) {
    pid_t *pids = calloc(r->n, sizeof *pids);

    for (i = 0; pids != NULL && i < r->n; i++)
      pids[i] = r->down[i].pid;
    if (pids != NULL)
      stop_all(pids, r->n, 30); /* all at once */
    for (i = 0; i < r->n; i++)
      if (pids != NULL)
        r->down[i].pid = 0;
      else
        rb_server_stop(&r->down[i]); /* one by one */
    free(pids);
  }
  rb_server_stop(&r->up);
  rb_kill_leftovers(r->dir);
  if (r->dq != NULL)
    for (i = 0; i < r->n; i++)
      if (r->dq[i] != NULL)
        pq_close(r->dq[i]);
  if (r->down != NULL)
    for (i = 0; i < r->n; i++)
      free((char *)r->down[i].name);
  free(r->down);
  free(r->sink);
  free(r->dq);
  if (r->shared != NULL)
    munmap(r->shared, r->shared_len);
  if (r->fs != NULL)
    munmap(r->fs, sizeof *r->fs);
  if (!r->o->keep)
    rb_remove_tree(r->dir);
}

/* The latency percentiles of the deliveries of products under
 * LARGE_PRODUCT bytes and of the others (live mode), in res->*_by; all
 * has room for every delivery. */
static void by_size(const run *r, uint64_t expected, int32_t *all,
                    result *res) {
  unsigned i, b;
  uint64_t q;

  for (b = 0; b < 2; b++) {
    size_t total = 0;

    for (i = 0; i < r->n; i++)
      for (q = 0; q < expected; q++) {
        int32_t v = r->lat[(size_t)i * r->cap + q];

        if (v >= 0 && (r->sizes[q] >= LARGE_PRODUCT) == (b == 1))
          all[total++] = v;
      }
    res->n_by[b] = total;
    res->p50_by[b] = res->p99_by[b] = NAN;
    if (total > 0) {
      qsort(all, total, sizeof *all, cmp_i32);
      res->p50_by[b] = all[rb_pct_index(total, 50)] / 1000.0;
      res->p99_by[b] = all[rb_pct_index(total, 99)] / 1000.0;
    }
  }
}

/* Latency percentiles and losses over every subscriber's products
 * 0..expected-1. */
static void live_figures(const run *r, uint64_t expected, result *res) {
  size_t total = 0;
  int32_t *all = malloc(((size_t)r->n * expected + 1) * sizeof *all);
  unsigned i;
  uint64_t q;

  res->expected = expected * r->n;
  res->lost = 0;
  for (i = 0; i < r->n; i++)
    if (r->slots[i].lagged > 0) {
      rb_warn("the bench's reading of downstream %u's queue fell to its "
              "oldest product %llu times: products counted lost may have "
              "been evicted before it read them (a larger -Q helps)",
              i, (unsigned long long)r->slots[i].lagged);
      break;
    }
  if (all == NULL) {
    rb_warn("out of memory");
    res->ok = false;
    return;
  }
  for (i = 0; i < r->n; i++)
    for (q = 0; q < expected; q++) {
      int32_t v = r->lat[(size_t)i * r->cap + q];

      if (v < 0)
        res->lost++;
      else
        all[total++] = v;
    }
  if (total > 0) {
    qsort(all, total, sizeof *all, cmp_i32);
    res->p50 = all[rb_pct_index(total, 50)] / 1000.0;
    res->p99 = all[rb_pct_index(total, 99)] / 1000.0;
    res->pmax = all[total - 1] / 1000.0;
  } else {
    res->p50 = res->p99 = res->pmax = NAN;
    res->ok = false;
  }
  by_size(r, expected, all, res);
  free(all);
}

static int run_one(const opts *o, unsigned build, enum mode m, enum kind k,
                   unsigned n, result *res) {
  run r;
  double cpu0, sub0, t0, end;
  struct procstat ps0, ps1;
  uint64_t t0_us, want;
  unsigned dead = 0, i;
  int rc = -1;

  memset(res, 0, sizeof *res);
  memset(&r, 0, sizeof r);
  r.o = o;
  r.ldmd = o->ldmds[build];
  r.xml = o->xml[o->nxml > 1 ? build : 0];
  r.way = o->ways[o->nway > 1 ? build : 0];
  r.n = n;
  r.kind = k;
  snprintf(r.dir, sizeof r.dir, "%.400s/%s-%s-%u", top_run,
           m == M_BACKLOG ? "backlog" : "live", kind_name[k], n);
  if (mkdir(r.dir, 0755) != 0) {
    rb_warn("cannot make %s: %s", r.dir, strerror(errno));
    return -1;
  }
  r.cap =
      m == M_BACKLOG
          ? o->backlog_n
          : (uint32_t)(iddmix_rate() * IDDMIX_PEAK * o->rate * o->live_s * 1.5 +
                       1000);
  r.shared_len =
      (size_t)n * sizeof(fs_slot) + (size_t)n * r.cap * 4 + (size_t)r.cap * 20;
  r.shared = mmap(NULL, r.shared_len, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  r.fs = mmap(NULL, sizeof *r.fs, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (r.shared == MAP_FAILED || r.fs == MAP_FAILED) {
    rb_warn("mmap: %s", strerror(errno));
    r.shared = r.shared == MAP_FAILED ? NULL : r.shared;
    r.fs = r.fs == MAP_FAILED ? NULL : r.fs;
    goto out;
  }
  r.slots = r.shared;
  r.lat = (int32_t *)(r.slots + n);
  memset(r.lat, 0xff, (size_t)n * r.cap * 4); /* -1 */
  r.sigs = (uint8_t *)(r.lat + (size_t)n * r.cap);
  r.sizes = (uint32_t *)(r.sigs + (size_t)r.cap * 16);
  if (k == K_LDMD) {
    r.down = calloc(n, sizeof *r.down);
    r.dq = calloc(n, sizeof *r.dq);
  } else {
    r.sink = calloc(n, sizeof *r.sink);
  }
  if ((k == K_LDMD && (r.down == NULL || r.dq == NULL)) ||
      (k == K_SINK && r.sink == NULL)) {
    rb_warn("out of memory");
    goto out;
  }
  if (upstream_setup(&r, m) != 0)
    goto out;
  if (k == K_LDMD && (downs_setup(&r, m) != 0 || downs_open(&r) != 0))
    goto out;
  res->ran = true;
  res->ok = true;
  if (m == M_BACKLOG) {
    want = o->backlog_n;
    res->gb = (double)o->backlog_n * (double)o->backlog_size / 1e9;
    cpu0 = rb_tree_cpu(r.up.pid);
    procstat_read(&ps0);
    t0 = tu_now_s();
    t0_us = epoch_us();
    if ((k == K_SINK ? sinks_start(&r) : downs_start(&r)) != 0)
      goto out;
    end = t0 + BACKLOG_S;
    while (!all_have(&r, want, &dead) && tu_now_s() < end && !rb_stop &&
           dead == 0)
      rb_sleep(0.005);
    res->cpu_s = rb_tree_cpu(r.up.pid) - cpu0;
    procstat_read(&ps1);
    res->idle = idle_share(&ps0, &ps1);
    res->sub_cpu_s = subs_cpu(&r);
    res->span_s = tu_now_s() - t0;
    res->others =
        busy_cores(&ps0, &ps1) - (res->cpu_s + res->sub_cpu_s) / res->span_s;
    for (i = 0; i < n; i++)
      res->badsig += r.slots[i].badsig;
    if (!all_have(&r, want, &dead)) {
      report_short(&r, want, tu_now_s() >= end);
      res->ok = false;
      goto out;
    }
    for (i = 0; i < n; i++) {
      double w = ((double)r.slots[i].last_us - (double)t0_us) / 1e6;

      if (w > res->wall_s)
        res->wall_s = w;
    }
    rc = 0;
  } else {
    if ((k == K_SINK ? sinks_start(&r) : downs_start(&r)) != 0 ||
        wait_connected(&r, CONNECT_S) != 0) {
      res->ok = false;
      goto out;
    }
    sub0 = subs_cpu(&r);
    cpu0 = rb_tree_cpu(r.up.pid);
    procstat_read(&ps0);
    t0 = tu_now_s();
    fflush(stdout);
    r.feeder = fork();
    if (r.feeder < 0) {
      rb_warn("fork: %s", strerror(errno));
      goto out;
    }
    if (r.feeder == 0)
      feeder(&r);
    /* A feeder that falls behind (the machine is saturated) goes on,
     * slower; one that has not finished by 3 times the stream's length
     * is stopped there, and the figures are of what it inserted. */
    end = tu_now_s() + 3 * o->live_s + 10;
    while (!r.fs->done && !rb_stop) {
      if (k == K_LDMD)
        downs_follow(&r);
      if (tu_now_s() > end && !r.fs->halt) {
        r.fs->halt = 1;
        end += 30;
        rb_warn("the feeder was stopped %.0f s behind the stream: the "
                "machine cannot insert and send at this rate",
                r.fs->max_behind);
      } else if (tu_now_s() > end) {
        break;
      }
      rb_sleep(0.005);
    }
    end = tu_now_s() + DRAIN_S;
    while (!all_have(&r, r.fs->inserted, &dead) && tu_now_s() < end &&
           !rb_stop && dead == 0)
      rb_sleep(0.005);
    res->cpu_s = rb_tree_cpu(r.up.pid) - cpu0;
    procstat_read(&ps1);
    res->idle = idle_share(&ps0, &ps1);
    res->sub_cpu_s = subs_cpu(&r) - sub0;
    res->feeder_cpu_s = pid_cpu(r.feeder); /* exited, not reaped yet */
    res->feeder_s = r.fs->seconds;
    res->feeder_wait_s = r.fs->wait_s;
    res->feeder_nice = r.fs->nice;
    res->feeder_group = r.fs->group_nice;
    res->feeder_own_group = r.fs->own_group != 0;
    res->span_s = tu_now_s() - t0;
    res->others =
        busy_cores(&ps0, &ps1) -
        (res->cpu_s + res->sub_cpu_s + res->feeder_cpu_s) / res->span_s;
    for (i = 0; i < n; i++)
      res->badsig += r.slots[i].badsig;
    if (r.fs->nice_errno != 0)
      rb_warn("the feeder could not be raised to nice %d (%s): it ran at %d",
              o->feeder_nice, strerror(r.fs->nice_errno), r.fs->nice);
    /* per GB received: a run that lost products sent less than the
     * feeder inserted */
    res->gb = 0;
    for (i = 0; i < n; i++)
      res->gb += (double)r.slots[i].bytes / 1e9 / n;
    res->gb = (double)r.fs->bytes / 1e9; /* until what came is known */
    res->in_mbs = r.fs->seconds > 0 ? r.fs->bytes / 1e6 / r.fs->seconds : 0;
    res->behind_s = r.fs->max_behind;
    res->insert_s = r.fs->insert_s;
    res->insert_max_s = r.fs->insert_max_s;
    if (!r.fs->done || r.fs->error) {
      rb_warn("the feeder did not finish its stream%s",
              r.fs->error ? ": an insertion failed" : "");
      res->ok = false;
    }
    res->cut = r.fs->halt != 0;
    if (dead > 0)
      for (i = 0; i < n; i++)
        if (r.slots[i].done) {
          rb_warn("sink %u ended: %s", i, r.slots[i].error);
          break;
        }
    live_figures(&r, r.fs->inserted, res);
    rc = res->ok ? 0 : -1;
  }
out:
  if (res->badsig > 0)
    rb_warn("%llu products came with a signature other than the one inserted "
            "under their seqno (counted as not arrived)",
            (unsigned long long)res->badsig);
  if (rc != 0)
    res->ok = false;
  run_down(&r);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Printing                                                               */
/* ---------------------------------------------------------------------- */

static double per_ds_gb(const result *x, unsigned n) {
  return x->gb > 0 && n > 0 ? x->cpu_s / n / x->gb : NAN;
}

static bool keeps_up(const opts *o, const result *x) {
  return x->ran && x->ok && !x->cut && x->behind_s < 1.0 && x->lost == 0 &&
         x->p99 < o->keepup_ms;
}

/* What limits a run, from what it measured: a feeder that waited for a
 * CPU (the machine saturated: the stream's pace was not kept), a feeder
 * behind without that wait (its insertions blocked: the time they took
 * against its CPU), no idle CPU (and who took it), or none of these (the
 * upstream's own pace: its waits, not the CPU).  With the cores each
 * party used over the run, the subscribers' CPU per subscriber per GB
 * (what a sink costs) and the sum of theirs and the upstream's: on
 * loopback the kernel bills part of the upstream's sending to the
 * receivers (the soft interrupts that a receiver's acknowledgement sets
 * off run in its system call), more so with zero-copy on
 * (docs/fanout-bench.md), so the sum is the figure that a change of
 * sending path cannot move by accounting alone. */
static void print_limits(enum mode m, enum kind k, unsigned n,
                         const result *x) {
  double span = x->span_s > 0 ? x->span_s : NAN;
  double up = x->cpu_s / span, sub = x->sub_cpu_s / span;
  double feed = m == M_LIVE ? x->feeder_cpu_s / span : 0;
  double per = x->gb > 0 && n > 0 ? x->sub_cpu_s / n / x->gb : NAN;

  printf("     limits: ");
  if (m == M_LIVE && x->feeder_s > 0 && x->feeder_wait_s > 0.2 * x->feeder_s)
    printf("the feeder's wait for a CPU (%.1f s of its %.1f s): the machine "
           "was saturated",
           x->feeder_wait_s, x->feeder_s);
  else if (m == M_LIVE && x->behind_s > 1.0)
    printf("the feeder's insertions, blocked: it fell %.1f s behind, waiting "
           "only %.1f s for a CPU,\n       while making and inserting its "
           "products took %.1f s (the longest %.2f s) for %.1f s of CPU",
           x->behind_s, x->feeder_wait_s, x->insert_s, x->insert_max_s,
           x->feeder_cpu_s);
  else if (x->idle < 0.05)
    printf("the CPU (machine idle %.0f%%), %s", x->idle * 100,
           sub > up && sub > x->others ? "most of it to the subscribers"
           : up > x->others            ? "most of it to the upstream"
                                       : "most of it to other processes");
  else
    printf("not the CPU (machine idle %.0f%%): the upstream's own pace",
           x->idle * 100);
  printf("\n       cores over %.1f s: upstream %.2f, %s %.2f, feeder %.2f, "
         "other processes %.2f\n"
         "       CPU per subscriber per GB: %s %.3f s, upstream and %s "
         "together %.3f s\n",
         x->span_s, up, k == K_SINK ? "sinks" : "downstream ldmds", sub, feed,
         x->others, k == K_SINK ? "sinks'" : "downstreams'", per,
         k == K_SINK ? "sinks" : "downstreams", per + per_ds_gb(x, n));
}

/* "x0.52", or "(no ratio)" when either side is zero or not a number
 * (a run too short for the CPU clock's 10 ms ticks). */
static void ratio(double b, double a, char *buf, size_t len) {
  if (isfinite(a) && isfinite(b) && a > 0 && b > 0)
    snprintf(buf, len, "x%.2f", b / a);
  else
    snprintf(buf, len, "(no ratio)");
}

static void print_row(const opts *o, enum mode m, unsigned b, enum kind k,
                      unsigned n, const result *x, const result *base) {
  if (!x->ran)
    return;
  printf("  %-2s %-4s %4u ", b == 0 ? "A" : "B", kind_name[k], n);
  if (!x->ok) {
    printf("ERROR: not measured (see above)\n");
    return;
  }
  if (m == M_BACKLOG)
    printf("%9.2f %9.2f %11.3f %9.2f\n", x->wall_s, x->cpu_s, per_ds_gb(x, n),
           x->sub_cpu_s);
  else
    printf("%7.1f %8.2f %8.2f %9.1f %9llu %9.2f %11.3f %9.2f  %s\n", x->in_mbs,
           x->p50, x->p99, x->pmax, (unsigned long long)x->lost, x->cpu_s,
           per_ds_gb(x, n), x->sub_cpu_s,
           keeps_up(o, x) ? "keeps up" : "falls behind");
  if (m == M_LIVE && x->feeder_group != NO_GROUP)
    printf("     feeder (nice %d, %s autogroup at nice %d): %.2f s CPU "
           "and %.2f s waiting for a CPU in %.1f s; machine idle %.0f%%, "
           "other processes %.2f cores\n",
           x->feeder_nice, x->feeder_own_group ? "its own" : "the bench's",
           x->feeder_group, x->feeder_cpu_s, x->feeder_wait_s, x->feeder_s,
           x->idle * 100, x->others);
  else if (m == M_LIVE)
    printf("     feeder (nice %d): %.2f s CPU and %.2f s waiting for a CPU in "
           "%.1f s; machine idle %.0f%%, other processes %.2f cores\n",
           x->feeder_nice, x->feeder_cpu_s, x->feeder_wait_s, x->feeder_s,
           x->idle * 100, x->others);
  else
    printf("     machine idle %.0f%%, other processes %.2f cores\n",
           x->idle * 100, x->others);
  if (m == M_LIVE)
    printf("     latency by size: under %u kB p50 %.2f / p99 %.2f ms (%zu "
           "deliveries), %u kB or more p50 %.2f / p99 %.2f ms (%zu)\n",
           LARGE_PRODUCT / 1000, x->p50_by[0], x->p99_by[0], x->n_by[0],
           LARGE_PRODUCT / 1000, x->p50_by[1], x->p99_by[1], x->n_by[1]);
  print_limits(m, k, n, x);
  if (m == M_LIVE && x->cut)
    printf("     (the feeder was stopped before the stream's end: it fell "
           "%.0f s behind)\n",
           x->behind_s);
  else if (m == M_LIVE && x->behind_s > 1.0)
    printf("     (the feeder fell up to %.1f s behind the stream's pace: "
           "the limits line says why)\n",
           x->behind_s);
  if (base != NULL && base->ran && base->ok) {
    char t[32], c[32], sc[32];

    ratio(m == M_BACKLOG ? x->wall_s : x->p99,
          m == M_BACKLOG ? base->wall_s : base->p99, t, sizeof t);
    ratio(per_ds_gb(x, n), per_ds_gb(base, n), c, sizeof c);
    ratio(x->sub_cpu_s / x->gb, base->sub_cpu_s / base->gb, sc, sizeof sc);
    printf("     B/A: %s %s, upstream CPU per downstream per GB %s, "
           "subscribers' CPU per GB %s\n",
           m == M_BACKLOG ? "wall" : "p99", t, c, sc);
  }
}

/* ---------------------------------------------------------------------- */
/* Options                                                                */
/* ---------------------------------------------------------------------- */

static int parse_list(const char *s, unsigned *out, unsigned max, unsigned *n) {
  char *end;

  *n = 0;
  for (;;) {
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || v == 0 || v > MAXSUB || *n >= max)
      return -1;
    out[(*n)++] = (unsigned)v;
    if (*end == '\0')
      return 0;
    if (*end != ',')
      return -1;
    s = end + 1;
  }
}

static int parse_words(const char *s, const char *const *words, bool *out) {
  char buf[64], *tok, *save = NULL;

  out[0] = out[1] = false;
  snprintf(buf, sizeof buf, "%s", s);
  for (tok = strtok_r(buf, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    if (strcmp(tok, words[0]) == 0)
      out[0] = true;
    else if (strcmp(tok, words[1]) == 0)
      out[1] = true;
    else
      return -1;
  }
  return out[0] || out[1] ? 0 : -1;
}

static void usage(void) {
  fprintf(stderr,
          "usage: fanout_bench [-m backlog,live] [-k sink,ldmd] [-N list] "
          "[-b count] [-z bytes]\n"
          "                    [-d seconds] [-r rate] [-K ms] [-s seed] "
          "[-D dir] [-L ldmd [-L ldmd]]\n"
          "                    [-U ldmd] [-X xml [-X xml]] [-S discard|read "
          "[-S ...]] [-F nice|off]\n"
          "                    [-q] [-x] [-v]\n");
}

static int parse(int argc, char **argv, opts *o) {
  static const char *const modes[] = {"backlog", "live"};
  static const char *const kinds[] = {"sink", "ldmd"};
  const char *env = getenv("FANOUT_LDMD_B");
  bool set_n = false, set_b = false, set_d = false, set_q = false;
  int c;

  memset(o, 0, sizeof *o);
  o->modes[0] = o->modes[1] = o->kinds[0] = o->kinds[1] = true;
  o->backlog_n = 2000;
  o->backlog_size = 50 * 1024;
  o->live_s = 20;
  o->rate = 1;
  o->keepup_ms = 1000;
  o->seed = 1;
  o->base = "/dev/shm";
  o->up_live_bytes = 1024ull * MIB;
  o->down_live_bytes = 64ull * MIB;
  o->raise_feeder = true;
  o->feeder_nice = FEEDER_NICE;
  while ((c = getopt(argc, argv, "m:k:N:b:z:d:r:K:Q:s:D:L:U:X:S:F:qxv")) !=
         -1) {
    char *end = NULL;

    errno = 0;
    switch (c) {
    case 'm':
      if (parse_words(optarg, modes, o->modes) != 0)
        return rb_bad_value(c, optarg, optarg);
      break;
    case 'k':
      if (parse_words(optarg, kinds, o->kinds) != 0)
        return rb_bad_value(c, optarg, optarg);
      break;
    case 'N':
      if (parse_list(optarg, o->ns, MAXN, &o->nn) != 0)
        return rb_bad_value(c, optarg, optarg);
      set_n = true;
      break;
    case 'b':
      o->backlog_n = (uint32_t)strtoul(optarg, &end, 10);
      if (o->backlog_n == 0 || o->backlog_n > 10000000)
        end = optarg;
      set_b = true;
      break;
    case 'z':
      o->backlog_size = strtoull(optarg, &end, 10);
      if (o->backlog_size < 64 || o->backlog_size > 64ull * MIB)
        end = optarg;
      break;
    case 'd':
      o->live_s = strtod(optarg, &end);
      if (!(o->live_s > 0 && o->live_s <= 3600))
        end = optarg;
      set_d = true;
      break;
    case 'r':
      o->rate = strtod(optarg, &end);
      if (!(o->rate > 0 && o->rate <= 100))
        end = optarg;
      break;
    case 'K':
      o->keepup_ms = strtod(optarg, &end);
      if (!(o->keepup_ms > 0))
        end = optarg;
      break;
    case 'Q':
      o->down_live_bytes = strtoull(optarg, &end, 10) * MIB;
      if (o->down_live_bytes < 32ull * MIB ||
          o->down_live_bytes > 65536ull * MIB)
        end = optarg;
      set_q = true;
      break;
    case 's':
      o->seed = strtoull(optarg, &end, 0);
      break;
    case 'D':
      o->base = optarg;
      break;
    case 'L':
      if (o->nldmd == 2)
        return rb_bad_value(c, optarg, optarg);
      o->ldmds[o->nldmd++] = optarg;
      break;
    case 'U':
      o->up_ldmd = optarg;
      break;
    case 'X':
      if (o->nxml == 2 || strlen(optarg) > 1024)
        return rb_bad_value(c, optarg, optarg);
      o->xml[o->nxml++] = optarg;
      break;
    case 'S':
      if (o->nway == 2 ||
          (strcmp(optarg, "discard") != 0 && strcmp(optarg, "read") != 0))
        return rb_bad_value(c, optarg, optarg);
      o->ways[o->nway++] = strcmp(optarg, "read") == 0 ? FS_READ : FS_DISCARD;
      break;
    case 'F':
      if (strcmp(optarg, "off") == 0) {
        o->raise_feeder = false;
        break;
      }
      o->feeder_nice = (int)strtol(optarg, &end, 10);
      if (o->feeder_nice < -20 || o->feeder_nice > 19)
        end = optarg;
      break;
    case 'q':
      o->quick = true;
      break;
    case 'x':
      o->strict = true;
      break;
    case 'v':
      o->keep = true;
      break;
    default:
      usage();
      return -1;
    }
    if (rb_bad_value(c, optarg, end) != 0)
      return -1;
  }
  if (optind != argc) {
    usage();
    return -1;
  }
  if (o->quick) {
    if (!set_n) {
      o->ns[0] = 1;
      o->ns[1] = 2;
      o->nn = 2;
    }
    if (!set_b)
      o->backlog_n = 40;
    if (!set_d)
      o->live_s = 2;
    o->up_live_bytes = 256ull * MIB;
    if (!set_q)
      o->down_live_bytes = 48ull * MIB;
  } else if (!set_n) {
    static const unsigned def[] = {1, 10, 100, 300};

    memcpy(o->ns, def, sizeof def);
    o->nn = 4;
  }
  if (o->nldmd == 0)
    o->ldmds[o->nldmd++] = LDMD_PATH;
  if (o->nldmd == 1 && env != NULL && *env != '\0')
    o->ldmds[o->nldmd++] = env;
  return 0;
}

/* ---------------------------------------------------------------------- */
/* The bench                                                              */
/* ---------------------------------------------------------------------- */

/* Bytes of tmpfs a run needs. */
static uint64_t run_bytes(const opts *o, enum mode m, enum kind k, unsigned n) {
  uint64_t up = m == M_BACKLOG
                    ? (o->backlog_size + 512) * o->backlog_n + 8 * MIB
                    : o->up_live_bytes;
  uint64_t down = m == M_BACKLOG ? up : o->down_live_bytes;

  return k == K_LDMD ? up + (uint64_t)n * down : up;
}

static void print_head(const opts *o, enum mode m) {
  if (m == M_BACKLOG)
    printf("\nBacklog: %u products of %llu bytes (%.1f MB) in the upstream's "
           "queue; N subscribers\nstarted together; wall from their start "
           "until every one holds every product.\n"
           "  ld kind    N    wall s  upstream   CPU s per subscribers'\n"
           "                          CPU s   downstream     CPU s\n"
           "                                       per GB\n",
           o->backlog_n, (unsigned long long)o->backlog_size,
           (double)o->backlog_n * (double)o->backlog_size / 1e6);
  else
    printf("\nLive: the IDD-like stream (iddmix, the 2024 mix) at %.2f x the "
           "2024 peak (%.1f MB/s)\nfor %.0f s into the upstream's queue; "
           "latency from creation to arrival at each\nsubscriber; lost: not "
           "arrived %.0f s after the stream.\n"
           "  ld kind    N    MB/s   p50 ms   p99 ms    max ms      lost "
           "upstream   CPU s per subscribers'\n"
           "                                                            "
           "CPU s   downstream     CPU s\n"
           "                                                            "
           "               per GB\n",
           o->rate, 34.5 * o->rate, o->live_s, DRAIN_S);
}

/* The load average: the machine is shared, and figures move with it. */
static void print_load(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  double l1 = 0, l5 = 0;

  if (f != NULL && fscanf(f, "%lf %lf", &l1, &l5) == 2)
    printf("; load average %.2f (1 min), %.2f (5 min)", l1, l5);
  if (f != NULL)
    fclose(f);
  printf("\n");
}

/* The targets, each beside what this run measured for it (if it did). */
static void print_targets(const opts *o, result (*res)[2][MAXN][2]) {
  unsigned b, i, k, m;

  printf("\n  target: upstream CPU per downstream per GB <= %.2f s "
         "(reference (not measured here): LDM 6.15 %.2f-%.2f s)\n",
         TARGET_CPU, REF_CPU_LO, REF_CPU_HI);
  for (b = 0; b < o->nldmd; b++)
    for (m = 0; m < 2; m++)
      for (k = 0; k < 2; k++)
        for (i = 0; i < o->nn; i++) {
          const result *x = &res[m][k][i][b];
          double c = per_ds_gb(x, o->ns[i]);

          /* the largest N of each mode and kind: fixed costs amortised */
          if (!x->ran || !x->ok || (i + 1 < o->nn && res[m][k][i + 1][b].ok))
            continue;
          printf("          ldmd %s, %-7s %s, N %3u: %.3f s: %s\n",
                 b == 0 ? "A" : "B", m == M_BACKLOG ? "backlog" : "live",
                 kind_name[k], o->ns[i], c,
                 x->lost > 0       ? "not judged (products lost)"
                 : c <= TARGET_CPU ? "met"
                                   : "MISSED");
        }
  printf("  target: %u subscribers at the 2024 peak (34.5 MB/s), nothing "
         "lost, p99 < %.0f ms\n",
         TARGET_LIVE_N, TARGET_P99_MS);
  for (b = 0; b < o->nldmd; b++)
    for (k = 0; k < 2; k++)
      for (i = 0; i < o->nn; i++) {
        const result *x = &res[M_LIVE][k][i][b];

        if (o->ns[i] != TARGET_LIVE_N || !x->ran || o->rate != 1.0)
          continue;
        if (!x->ok)
          printf("          ldmd %s, %s: not measured\n", b == 0 ? "A" : "B",
                 kind_name[k]);
        else
          printf("          ldmd %s, %s: lost %llu, p99 %.1f ms: %s\n",
                 b == 0 ? "A" : "B", kind_name[k], (unsigned long long)x->lost,
                 x->p99,
                 x->lost == 0 && x->p99 < TARGET_P99_MS ? "met" : "MISSED");
      }
  printf("  target: backlog of 2,000 x 50 KiB to %u real downstream ldmds in "
         "< %.2f s (reference (not measured here): LDM 6.15 %.1f s)\n",
         TARGET_BACKLOG_N, REF_BACKLOG_S / 2, REF_BACKLOG_S);
  for (b = 0; b < o->nldmd; b++)
    for (i = 0; i < o->nn; i++) {
      const result *x = &res[M_BACKLOG][K_LDMD][i][b];

      if (o->ns[i] != TARGET_BACKLOG_N || !x->ran || !x->ok ||
          o->backlog_n != 2000 || o->backlog_size != 50 * 1024)
        continue;
      printf("          ldmd %s: %.2f s: %s\n", b == 0 ? "A" : "B", x->wall_s,
             x->wall_s < REF_BACKLOG_S / 2 ? "met" : "MISSED");
    }
}

int main(int argc, char **argv) {
  static result res[2][2][MAXN][2]; /* mode, kind, n, build */
  opts o;
  double t0 = tu_now_s();
  unsigned errors = 0, m, k, i, b;
  bool strict_fail = false;
  unsigned skipped = 0;
  int status;

  rb_prog = "fanout_bench";
  if (parse(argc, argv, &o) != 0)
    return 2;
  if (rb_run_begin(top_run, o.base) != 0)
    return 1;
  printf("fanout_bench: one upstream ldmd, N subscribers on loopback\n");
  rb_print_machine();
  print_load();
  if (o.up_ldmd != NULL)
    printf("  upstream of every row: %s (ldmd A and B below: the "
           "downstreams)\n",
           o.up_ldmd);
  for (b = 0; b < o.nldmd; b++)
    printf("  ldmd %s: %s%s%s; sinks %s\n", b == 0 ? "A" : "B", o.ldmds[b],
           o.xml[o.nxml > 1 ? b : 0] != NULL ? ", upstream registry + " : "",
           o.xml[o.nxml > 1 ? b : 0] != NULL ? o.xml[o.nxml > 1 ? b : 0] : "",
           o.ways[o.nway > 1 ? b : 0] == FS_READ
               ? "read every byte (-S read)"
               : "discard the data in the kernel (-S discard)");
  if (o.modes[M_LIVE]) {
    if (o.raise_feeder)
      printf("  live feeder raised (-F): nice %d, in a session (autogroup) "
             "of its own at nice %d;\n  it stands for a relay's ingest from "
             "the network, which does not queue for a CPU\n  behind the "
             "downstreams' machines; the upstream and the subscribers are "
             "not raised\n  (the bench's session, nice %d)\n",
             o.feeder_nice, o.feeder_nice, getpriority(PRIO_PROCESS, 0));
    else
      printf("  live feeder at the bench's nice value (%d), like the "
             "upstream and the subscribers (-F off)\n",
             getpriority(PRIO_PROCESS, 0));
  }
  for (m = 0; m < 2 && !rb_stop; m++) {
    if (!o.modes[m])
      continue;
    print_head(&o, (enum mode)m);
    for (k = 0; k < 2 && !rb_stop; k++) {
      if (!o.kinds[k])
        continue;
      for (i = 0; i < o.nn && !rb_stop; i++) {
        uint64_t need = run_bytes(&o, (enum mode)m, (enum kind)k, o.ns[i]);
        uint64_t room = room_bytes(o.base);

        if (need > room / 10 * 8) {
          skipped++;
          printf("  -- %-4s %4u skipped: needs %.1f GB of tmpfs and memory, "
                 "%.1f GB free\n",
                 kind_name[k], o.ns[i], need / 1e9, room / 1e9);
          continue;
        }
        for (b = 0; b < o.nldmd && !rb_stop; b++) {
          result *x = &res[m][k][i][b];

          if (run_one(&o, b, (enum mode)m, (enum kind)k, o.ns[i], x) != 0 &&
              !rb_stop)
            errors++;
          if (!x->ran && !rb_stop) {
            x->ran = true; /* print it as not measured */
            x->ok = false;
          }
          print_row(&o, (enum mode)m, b, (enum kind)k, o.ns[i], x,
                    b == 1 ? &res[m][k][i][0] : NULL);
          if ((m == M_LIVE && x->ran && (!x->ok || x->lost > 0)) ||
              x->badsig > 0)
            strict_fail = true;
          fflush(stdout);
        }
      }
    }
  }
  if (!rb_stop)
    printf("\nSummary\n");
  for (b = 0; b < o.nldmd && !rb_stop; b++) {
    for (k = 0; k < 2; k++) {
      unsigned best = 0, tried = 0;

      if (!o.kinds[k])
        continue;
      if (!o.modes[M_LIVE])
        continue;
      for (i = 0; i < o.nn; i++) {
        const result *x = &res[M_LIVE][k][i][b];

        if (x->ran)
          tried++;
        if (keeps_up(&o, x) && o.ns[i] > best)
          best = o.ns[i];
      }
      printf("  ldmd %s, %s subscribers: largest N that keeps up with the "
             "live stream (nothing lost, p99 < %.0f ms): ",
             b == 0 ? "A" : "B", kind_name[k], o.keepup_ms);
      if (tried == 0)
        printf("none tried\n");
      else if (best == 0)
        printf("none of those tried\n");
      else
        printf("%u\n", best);
    }
  }
  if (!rb_stop) {
    print_targets(&o, res);
    printf("\nat the end");
    print_load();
  }
  if (o.strict && strict_fail && !rb_stop) {
    rb_warn("-x: a live run lost products or could not be measured, or a "
            "product came with the wrong signature");
    errors++;
  }
  status = rb_finish(top_run, o.keep, errors, t0);
  if (status == 0 && o.strict && skipped > 0) {
    rb_warn("-x: %u run%s skipped for want of room", skipped,
            skipped > 1 ? "s" : "");
    return 1;
  }
  return status;
}
