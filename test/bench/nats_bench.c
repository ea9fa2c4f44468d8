/*
 * nats_bench.c - how fast and how promptly the NATS JetStream bridge
 * (pq2nats.1, nats2pq.1) carries products from one queue to another, beside
 * the ldmd -> ldmd relay measured the same way in the same run (results and
 * what limits them: docs/nats-bench.md).  The two paths:
 *
 *   relay  queue A -> ldmd A -> LDM-6 over 127.0.0.1 -> ldmd B (REQUEST
 *          ANY ".*" from A) -> queue B
 *   nats   queue A -> pq2nats -> nats-server (JetStream, one server, file
 *          storage in the run directory: on /dev/shm by default, so the
 *          "disk" is tmpfs) -> nats2pq -> queue B; every publish is
 *          acknowledged by JetStream, every message acknowledged by nats2pq
 *          once its product is committed to B
 *
 * Every process is real and started by the bench: ldmd, nats-server,
 * pq2nats and nats2pq (command lines of pqutils/nats/, the contract of the
 * bridge); the bench only inserts into A's queue and reads B's.  For each
 * path and for 1 KiB and 1 MiB products, with fresh queues, a fresh server
 * and a fresh JetStream store:
 *
 *   1. warm-up: products of the size through the path, all of them in B,
 *      so that the connections, the stream and the consumer exist;
 *   2. throughput: the process reading A (ldmd A's tree; pq2nats) is
 *      stopped (SIGSTOP), n products of random bytes are put into A, and
 *      the time runs from its SIGCONT to the insertion of the last of them
 *      in B; "steady" is the rate between the first and the last arrival.
 *      CPU: what each process (each server's tree for ldmd) used meanwhile,
 *      in cores;
 *   3. latency: a child process inserts products into A at a fixed rate
 *      (the same for both paths) for some seconds, each stamped when it is
 *      complete, just before it goes into A; its latency is its insertion
 *      time in B minus that stamp (one machine, one clock); the median,
 *      p99 and largest are printed.
 *
 * The 1 MiB products do not fit the NATS default max_payload (1 MiB, which
 * the headers count against): pq2nats sends each as chunks to the chunk
 * stream, then its product message.  The path "nats-8m" is the same with
 * the server's max_payload raised to 8 MiB: one message a product.
 *
 * It prints only what it measured in this run.  The bridge's targets
 * (TARGET_ below) are labelled "target:" with MET or MISSED.  A figure it
 * could not measure (a path that did not start, products that did not all
 * arrive) is an error: a message on stderr, no figure, and exit status 1.
 * Everything the bench starts is stopped, and its directory removed, at the
 * end or on SIGINT or SIGTERM.  A benchmark, not a test.
 *
 * usage: nats_bench [-p paths] [-s sizes] [-m mult] [-d seconds]
 *                   [-r rate1k,rate1m] [-D dir] [-L ldmd] [-N nats-server]
 *                   [-B bindir] [-a options] [-A options] [-k] [-v]
 *   -p paths    relay, nats, nats-8m, comma-separated (default all three;
 *               nats-8m only runs the 1 MiB size)
 *   -s sizes    1k, 1m, comma-separated (default both)
 *   -m mult     multiply the product counts (default 1: 50,000 x 1 KiB and
 *               1,000 x 1 MiB; 0.02 for a smoke run)
 *   -d seconds  length of each latency run (default 5)
 *   -r rates    the latency runs' products/s for 1 KiB and 1 MiB (default
 *               5000,50: below what both paths carry here)
 *   -D dir      where the queues and the JetStream store go (/dev/shm)
 *   -L ldmd     the LDM server (default: the one built with this program)
 *   -N server   nats-server (default: nats-server in PATH)
 *   -B bindir   where pq2nats and nats2pq are (default: those built with
 *               this program)
 *   -a options  more options for pq2nats, space-separated (e.g. "-m 8192")
 *   -A options  more options for nats2pq (e.g. "-b 1024")
 *   -k          keep the run directory (queues, logs) for a post-mortem
 *   -v          name each process's log and the run directory
 * A full default run takes about a minute and a half.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/bench/iddmix.h"
#include "test/bench/procstat.h"
#include "test/bench/relay_servers.h"
#include "test/lib/tu_clock.h"

#ifndef LDMD_PATH
#define LDMD_PATH "ldmd"
#endif
#ifndef NATS_BIN_DIR
#define NATS_BIN_DIR "."
#endif

#define KIB 1024u
#define MIB (1024u * 1024u)
#define STREAM "LDM"
#define TARGET_1K_RATE 50000.0 /* 1 KiB products/s, with acks */
#define TARGET_1M_MBS 500.0    /* 1 MiB products, MB/s (10^6 bytes) */
#define NOPROGRESS_S 20.0      /* a transfer that stalls this long failed */
#define DRAIN_S 20.0           /* most time for the last latency products */
#define START_S 15.0           /* most time for a process to come up */

/* Feedtypes tell the phases apart in B. */
#define FT_WARM PQ_FT_EXP
#define FT_BATCH PQ_FT_NOTHER
#define FT_LAT PQ_FT_NTEXT

enum path_kind { PATH_RELAY, PATH_NATS };

/* The paths, in the order they run. */
static const struct path {
  const char *name;
  enum path_kind kind;
  uint64_t max_payload; /* nats-server's, 0: its default (1 MiB) */
  const char *what;
} paths[] = {
    {"relay", PATH_RELAY, 0, "ldmd A -> LDM-6 -> ldmd B"},
    {"nats", PATH_NATS, 0, "pq2nats -> JetStream -> nats2pq"},
    {"nats-8m", PATH_NATS, 8 * MIB, "the same, max_payload 8 MiB (no chunks)"},
};
#define NPATHS (sizeof paths / sizeof paths[0])

static const struct size_case {
  const char *name;
  uint64_t size;
  unsigned n;    /* products of the throughput batch (times -m) */
  unsigned warm; /* warm-up products */
} sizes[] = {
    {"1 KiB", KIB, 50000, 2000},
    {"1 MiB", MIB, 1000, 50},
};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* A process the bench started (not ldmd: relay_servers.c owns those). */
typedef struct proc {
  const char *name;
  pid_t pid; /* 0: not running */
  char log[RB_RUN_MAX + 32];
} proc;

typedef struct bench {
  unsigned path_mask, size_mask;
  double mult, lat_s;
  double lat_rate[NSIZES];
  const char *base, *ldmd, *nats_server;
  const char *pub_args, *sub_args; /* -a, -A: more options */
  char pq2nats[RB_RUN_MAX], nats2pq[RB_RUN_MAX];
  bool keep, verbose;
  char run[RB_RUN_MAX];
  server a, b; /* the queues; for the relay, the servers too */
  proc nats, pub, sub;
  unsigned nats_port, mon_port;
  char url[64];
  unsigned errors;
} bench;

/* ---------------------------------------------------------------------- */
/* Processes                                                              */
/* ---------------------------------------------------------------------- */

/* Start argv[0] with stdout and stderr into p->log, and LDM_REGISTRY set
 * to reg (when not NULL).  @return 0 or -1 */
static int spawn(proc *p, const char *name, const char *log, const char *reg,
                 char *const argv[]) {
  p->name = name;
  snprintf(p->log, sizeof p->log, "%s", log);
  fflush(stdout);
  p->pid = fork();
  if (p->pid < 0) {
    rb_warn("fork: %s", strerror(errno));
    p->pid = 0;
    return -1;
  }
  if (p->pid == 0) {
    int fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (nul >= 0)
      dup2(nul, 0);
    if (reg != NULL)
      setenv("LDM_REGISTRY", reg, 1);
    unsetenv("LDM_REGISTRY_DIR");
    execv(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  return 0;
}

/* Has p exited?  (Reaped if so; p->pid becomes 0.) */
static bool proc_exited(proc *p) {
  if (p->pid > 0 && waitpid(p->pid, NULL, WNOHANG) == p->pid)
    p->pid = 0;
  return p->pid == 0;
}

/* SIGTERM, up to 15 s for it to exit, then SIGKILL. */
static void proc_stop(proc *p) {
  double end = tu_now_s() + 15;

  if (p->pid <= 0)
    return;
  kill(p->pid, SIGCONT); /* in case it was stopped */
  kill(p->pid, SIGTERM);
  while (tu_now_s() < end)
    if (proc_exited(p))
      return;
    else
      rb_sleep(0.01);
  rb_warn("%s (pid %d) did not stop on SIGTERM: killed", p->name, (int)p->pid);
  kill(p->pid, SIGKILL);
  waitpid(p->pid, NULL, 0);
  p->pid = 0;
}

/* The number after `key` in the file (a port in a log), 0 if none. */
static unsigned number_after(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  char line[1024];
  unsigned v = 0;

  if (f == NULL)
    return 0;
  while (v == 0 && fgets(line, sizeof line, f) != NULL) {
    const char *p = strstr(line, key);

    if (p != NULL)
      v = (unsigned)strtoul(p + strlen(key), NULL, 10);
  }
  fclose(f);
  return v;
}

/* GET path from 127.0.0.1:port (HTTP/1.0); the body into buf.
 * @return 0 if the server answered 200, -1 if not */
static int http_get(unsigned port, const char *path, char *buf, size_t len) {
  struct sockaddr_in sa = {.sin_family = AF_INET};
  struct timeval tv = {.tv_sec = 2};
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  size_t got = 0;
  char req[256];
  const char *body;

  if (s < 0)
    return -1;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons((uint16_t)port);
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  snprintf(req, sizeof req, "GET /%s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
           path);
  if (connect(s, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      write(s, req, strlen(req)) != (ssize_t)strlen(req)) {
    close(s);
    return -1;
  }
  for (;;) {
    ssize_t n = read(s, buf + got, len - 1 - got);

    if (n <= 0)
      break;
    got += (size_t)n;
    if (got == len - 1)
      break;
  }
  close(s);
  buf[got] = '\0';
  if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0)
    return -1;
  body = strstr(buf, "\r\n\r\n");
  if (body != NULL)
    memmove(buf, body + 4, strlen(body + 4) + 1);
  return 0;
}

/* nats-server with JetStream (file storage under the run directory), on
 * 127.0.0.1, ports it picks (read from its log).  @return 0 or -1 */
static int nats_up(bench *b, uint64_t max_payload) {
  char conf[RB_RUN_MAX + 32], log[RB_RUN_MAX + 32], text[4 * RB_RUN_MAX];
  char *argv[] = {(char *)b->nats_server, "-c", conf, NULL};
  double end = tu_now_s() + START_S;
  char mp[64] = "";
  FILE *f;

  snprintf(conf, sizeof conf, "%s/nats.conf", b->run);
  snprintf(log, sizeof log, "%s/nats.log", b->run);
  if (max_payload > 0)
    snprintf(mp, sizeof mp, "max_payload: %llu\n",
             (unsigned long long)max_payload);
  snprintf(text, sizeof text,
           "# nats_bench: one JetStream server, loopback only.\n"
           "listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\n%s"
           "jetstream { store_dir: \"%s/js\" }\n",
           mp, b->run);
  f = fopen(conf, "w");
  if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
    rb_warn("cannot write %s: %s", conf, strerror(errno));
    return -1;
  }
  unlink(log);
  if (spawn(&b->nats, "nats-server", log, NULL, argv) != 0)
    return -1;
  b->nats_port = b->mon_port = 0;
  while (tu_now_s() < end && !rb_stop && !proc_exited(&b->nats)) {
    b->nats_port =
        number_after(log, "Listening for client connections on 127.0.0.1:");
    b->mon_port = number_after(log, "Starting http monitor on 127.0.0.1:");
    if (b->nats_port > 0 && b->mon_port > 0) {
      char body[256];

      if (http_get(b->mon_port, "healthz?js-enabled-only=true", body,
                   sizeof body) == 0) {
        snprintf(b->url, sizeof b->url, "nats://127.0.0.1:%u", b->nats_port);
        return 0;
      }
    }
    rb_sleep(0.02);
  }
  rb_warn("nats-server (%s) did not start within %.0f s; see %s",
          b->nats_server, START_S, log);
  return -1;
}

/* Does the server hold the stream?  (Once pq2nats has made it.) */
static bool stream_exists(const bench *b) {
  static char body[1 << 16];

  return http_get(b->mon_port, "jsz?streams=true", body, sizeof body) == 0 &&
         strstr(body, "\"name\": \"" STREAM "\"") != NULL;
}

/* argv of pq2nats or nats2pq: the queue, the URL, the stream, logging to
 * stderr (its log file), then the words of extra (-a, -A; copied into
 * words, split there; at most MAX_ARGS - 10 of them). */
#define MAX_ARGS 32
#define WORDS_MAX 512
static void bridge_argv(char **argv, char *words, char *prog, char *queue,
                        char *url, const char *extra) {
  static char q[] = "-q", u[] = "-u", s[] = "-s", stream[] = STREAM, l[] = "-l",
              dash[] = "-";
  char *save = NULL, *tok;
  unsigned n = 0;

  argv[n++] = prog;
  argv[n++] = q;
  argv[n++] = queue;
  argv[n++] = u;
  argv[n++] = url;
  argv[n++] = s;
  argv[n++] = stream;
  argv[n++] = l;
  argv[n++] = dash;
  snprintf(words, WORDS_MAX, "%s", extra != NULL ? extra : "");
  for (tok = strtok_r(words, " ", &save); tok != NULL && n < MAX_ARGS - 1;
       tok = strtok_r(NULL, " ", &save))
    argv[n++] = tok;
  argv[n] = NULL;
}

/* The bridge: nats-server, pq2nats (which makes the stream), then nats2pq
 * once the stream exists.  @return 0 or -1 */
static int bridge_up(bench *b, uint64_t max_payload) {
  char plog[RB_RUN_MAX + 32], slog[RB_RUN_MAX + 32];
  double end;

  if (nats_up(b, max_payload) != 0)
    return -1;
  snprintf(plog, sizeof plog, "%s/pq2nats.log", b->run);
  snprintf(slog, sizeof slog, "%s/nats2pq.log", b->run);
  {
    char *argv[MAX_ARGS], words[WORDS_MAX];

    bridge_argv(argv, words, b->pq2nats, b->a.queue, b->url, b->pub_args);
    if (spawn(&b->pub, "pq2nats", plog, b->a.reg, argv) != 0)
      return -1;
  }
  end = tu_now_s() + START_S;
  while (!stream_exists(b)) {
    if (tu_now_s() > end || rb_stop || proc_exited(&b->pub)) {
      rb_warn("pq2nats did not make the stream %s within %.0f s; see %s",
              STREAM, START_S, plog);
      return -1;
    }
    rb_sleep(0.02);
  }
  {
    char *argv[MAX_ARGS], words[WORDS_MAX];

    bridge_argv(argv, words, b->nats2pq, b->b.queue, b->url, b->sub_args);
    if (spawn(&b->sub, "nats2pq", slog, b->b.reg, argv) != 0)
      return -1;
  }
  return 0;
}

/* Stop everything of a path and remove its files. */
static void path_down(bench *b) {
  proc_stop(&b->pub);
  proc_stop(&b->sub);
  proc_stop(&b->nats);
  rb_server_stop(&b->b);
  rb_server_stop(&b->a);
  rb_kill_leftovers(b->run);
  if (!b->keep) {
    char js[RB_RUN_MAX + 8];

    snprintf(js, sizeof js, "%s/js", b->run);
    rb_remove_tree(js);
    if (b->a.dir[0] != '\0')
      rb_remove_tree(b->a.dir);
    if (b->b.dir[0] != '\0')
      rb_remove_tree(b->b.dir);
  }
}

/* Queues holding every product of the case (none is ever evicted), then
 * the path's processes.  @return 0 or -1 */
static int path_up(bench *b, const struct path *p, uint64_t size,
                   unsigned products) {
  uint64_t qbytes = (uint64_t)products * (size + 512) + 64 * MIB;
  uint64_t slots = (uint64_t)products + 1000;

  if (rb_server_setup(&b->a, b->run, "A", qbytes, slots, NULL) != 0 ||
      rb_server_setup(&b->b, b->run, "B", qbytes, slots, NULL) != 0)
    return -1;
  if (p->kind == PATH_NATS)
    return bridge_up(b, p->max_payload);
  if (rb_start_upstream(&b->a, b->ldmd) != 0 ||
      rb_start_downstream(&b->b, &b->a, b->ldmd, false) != 0)
    return -1;
  if (rb_wait_feed(&b->a) == 0) {
    rb_warn("B's request did not reach A within 10 s (see %s)", b->b.log);
    return -1;
  }
  return 0;
}

/* The process that reads A, which the throughput run stops. */
static pid_t reader_of_a(const bench *b, const struct path *p) {
  return p->kind == PATH_NATS ? b->pub.pid : b->a.pid;
}

/* Is every process of the path still running? */
static bool path_alive(bench *b, const struct path *p) {
  if (p->kind == PATH_RELAY)
    return b->a.pid > 0 && b->b.pid > 0 &&
           waitpid(b->a.pid, NULL, WNOHANG) == 0 &&
           waitpid(b->b.pid, NULL, WNOHANG) == 0;
  return !proc_exited(&b->nats) && !proc_exited(&b->pub) &&
         !proc_exited(&b->sub);
}

/* CPU seconds of the path's processes: [0] A or pq2nats, [1] B or
 * nats2pq, [2] nats-server (the relay: none); and of the whole machine
 * (busy: not idle, not iowait, not steal), of this process, and the
 * machine's steal, for what the others took meanwhile. */
struct cpu3 {
  double wall, c[3];
  double busy, self, steal; /* seconds; busy < 0: not readable */
};

static void cpu_mark(const bench *b, const struct path *p, struct cpu3 *m) {
  struct procstat ps;
  double hz = (double)sysconf(_SC_CLK_TCK);

  m->wall = tu_now_s();
  if (procstat_read(&ps) == 0) {
    m->busy =
        (double)(ps.user + ps.nice + ps.system + ps.irq + ps.softirq) / hz;
    m->steal = (double)ps.steal / hz;
  } else {
    m->busy = -1;
  }
  {
    struct rusage ru; /* this process only: the others are its children */

    getrusage(RUSAGE_SELF, &ru);
    m->self = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
              (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  }
  if (p->kind == PATH_RELAY) {
    m->c[0] = rb_tree_cpu(b->a.pid);
    m->c[1] = rb_tree_cpu(b->b.pid);
    m->c[2] = -1;
  } else {
    m->c[0] = rb_tree_cpu(b->pub.pid);
    m->c[1] = rb_tree_cpu(b->sub.pid);
    m->c[2] = rb_tree_cpu(b->nats.pid);
  }
}

/* "pq2nats 0.91 nats-server 1.10 nats2pq 0.42" (cores) into buf. */
static const char *cpu_text(const struct path *p, const struct cpu3 *m0,
                            const struct cpu3 *m1, char *buf, size_t len) {
  static const char *const relay[] = {"ldmd A", "ldmd B", NULL};
  static const char *const nats[] = {"pq2nats", "nats2pq", "nats-server"};
  const char *const *names = p->kind == PATH_RELAY ? relay : nats;
  double wall = m1->wall - m0->wall;
  size_t used = 0;

  buf[0] = '\0';
  for (unsigned i = 0; i < 3 && used < len; i++) {
    if (names[i] == NULL)
      continue;
    if (m0->c[i] < 0 || m1->c[i] < 0 || wall <= 0)
      used += (size_t)snprintf(buf + used, len - used, "%s%s -",
                               used ? " " : "", names[i]);
    else
      used +=
          (size_t)snprintf(buf + used, len - used, "%s%s %.2f", used ? " " : "",
                           names[i], (m1->c[i] - m0->c[i]) / wall);
  }
  if (m0->busy >= 0 && m1->busy >= 0 && wall > 0 && used < len) {
    double path = m1->self - m0->self;

    for (unsigned i = 0; i < 3; i++)
      if (names[i] != NULL && m0->c[i] >= 0 && m1->c[i] >= 0)
        path += m1->c[i] - m0->c[i];
    used += (size_t)snprintf(
        buf + used, len - used, "; the bench %.2f; other processes %.2f",
        (m1->self - m0->self) / wall, (m1->busy - m0->busy - path) / wall);
    if (m1->steal - m0->steal > 0.01 * wall && used < len)
      snprintf(buf + used, len - used, "; steal %.2f",
               (m1->steal - m0->steal) / wall);
  }
  return buf;
}

/* ---------------------------------------------------------------------- */
/* Products                                                               */
/* ---------------------------------------------------------------------- */

/* What the bench has read from B. */
struct tally {
  uint64_t warm, n, bytes;    /* warm-up and batch products */
  uint64_t first_us, last_us; /* batch: first and last insertion in B */
  uint64_t lat_n, lat_dups, strays;
  uint64_t *lat_arrived; /* latency product i: insertion in B, 0: not yet */
  size_t lat_cap;
};

/* The number at the end of an ident ("nats_bench LAT 1024 000017"). */
static bool ident_index(const char *ident, unsigned long *i) {
  const char *sp = strrchr(ident, ' ');
  char *end;

  if (sp == NULL)
    return false;
  *i = strtoul(sp + 1, &end, 10);
  return end != sp + 1 && *end == '\0';
}

static int count_fn(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  struct tally *t = arg;
  unsigned long i;

  (void)data;
  if (info->feedtype == FT_WARM) {
    t->warm++;
  } else if (info->feedtype == FT_BATCH) {
    if (t->n == 0)
      t->first_us = place->pp_inserted;
    t->last_us = place->pp_inserted;
    t->n++;
    t->bytes += info->size;
  } else if (info->feedtype == FT_LAT && ident_index(info->ident, &i) &&
             i < t->lat_cap) {
    if (t->lat_arrived[i] != 0) {
      t->lat_dups++;
    } else {
      t->lat_arrived[i] = place->pp_inserted;
      t->lat_n++;
    }
  } else {
    t->strays++;
  }
  return 0;
}

/*
 * Read B until done(t, arg) is true: waiting on the queue, never polling;
 * failing when nothing arrives for `stall` seconds or a process of the
 * path exits.  @return 0, or -1 with a message
 */
static int read_b_until(bench *b, const struct path *p, pq_t *bq,
                        struct tally *t,
                        bool (*done)(const struct tally *, const void *),
                        const void *arg, double stall, const char *what) {
  double last = tu_now_s();
  uint64_t seen = t->warm + t->n + t->lat_n;

  while (!done(t, arg) && !rb_stop) {
    int x = pq_next(bq, PQ_FORWARD, NULL, count_fn, t);

    if (x == PQ_OK) {
      if (t->warm + t->n + t->lat_n != seen) {
        seen = t->warm + t->n + t->lat_n;
        last = tu_now_s();
      }
      continue;
    }
    if (x != PQ_END) {
      rb_warn("cannot read %s: %s", b->b.queue, pq_strerror(x));
      return -1;
    }
    if (tu_now_s() - last > stall) {
      rb_warn("%s: nothing reached B for %.0f s (see the logs%s)", what, stall,
              b->keep ? "" : "; -k keeps them");
      return -1;
    }
    if (!path_alive(b, p)) {
      rb_warn("%s: a process of the path %s exited (see the logs%s)", what,
              p->name, b->keep ? "" : "; -k keeps them");
      return -1;
    }
    (void)pq_wait(bq, 100);
  }
  return rb_stop ? -1 : 0;
}

static bool warm_done(const struct tally *t, const void *arg) {
  return t->warm >= *(const unsigned *)arg;
}

static bool batch_done(const struct tally *t, const void *arg) {
  return t->n >= *(const unsigned *)arg;
}

/* ---------------------------------------------------------------------- */
/* One path, one size                                                     */
/* ---------------------------------------------------------------------- */

struct result {
  double rate, mbs, steady, steady_mbs;
  struct cpu3 m0, m1;
  bool thr_ok;
  /* latency */
  double lat_rate; /* products/s really inserted */
  uint64_t lat_sent, lat_got;
  double p50, p99, max; /* ms */
  bool lat_ok;
};

/* Shared with the latency inserter (a child). */
struct lat_share {
  volatile uint64_t inserted, failed;
  volatile int done;
  double seconds;
  uint64_t sent_us[]; /* creation time of product i */
};

/* The child: `rate` products/s for `secs` seconds, paced on the clock. */
static void lat_inserter(const bench *b, struct lat_share *sh, size_t cap,
                         uint64_t size, double rate, double secs) {
  uint8_t *buf = malloc(size);
  pq_t *pq;
  pq_error err;
  double t0 = tu_now_s();
  size_t i;

  if (buf == NULL || pq_open(b->a.queue, 0, &pq, &err) != PQ_OK)
    _exit(1);
  for (i = 0; i < cap && !rb_stop; i++) {
    double due = t0 + (double)i / rate;
    uint64_t t;

    if (due - t0 >= secs)
      break;
    if (due > tu_now_s())
      tu_sleep_until_s(due);
    if (rb_insert(pq, 0x4c4154ull ^ size, FT_LAT, (uint32_t)i, buf, size, "LAT",
                  &t) != PQ_OK) {
      sh->failed++;
      continue;
    }
    sh->sent_us[i] = t;
    sh->inserted = i + 1;
  }
  sh->seconds = tu_now_s() - t0;
  sh->done = 1;
  pq_close(pq);
  free(buf);
  _exit(0);
}

static bool lat_done(const struct tally *t, const void *arg) {
  const struct lat_share *sh = arg;

  return sh->done && t->lat_n + sh->failed >= sh->inserted;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

  return (a > b) - (a < b);
}

static double pct_ms(const uint64_t *v, size_t n, double p) {
  return (double)v[rb_pct_index(n, p)] / 1000.0;
}

/* The latency run on a path already up.  @return 0 or -1 */
static int latency(bench *b, const struct path *p, pq_t *bq, struct tally *t,
                   uint64_t size, double rate, struct result *r) {
  size_t cap = (size_t)(rate * b->lat_s) + 16;
  size_t shsize = sizeof(struct lat_share) + cap * sizeof(uint64_t);
  struct lat_share *sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  uint64_t *lat = NULL;
  size_t n = 0;
  pid_t child;
  int rc = -1;

  t->lat_arrived = calloc(cap, sizeof *t->lat_arrived);
  t->lat_cap = cap;
  if (sh == MAP_FAILED || t->lat_arrived == NULL) {
    rb_warn("out of memory");
    goto out;
  }
  memset(sh, 0, shsize);
  fflush(stdout);
  child = fork();
  if (child < 0) {
    rb_warn("fork: %s", strerror(errno));
    goto out;
  }
  if (child == 0)
    lat_inserter(b, sh, cap, size, rate, b->lat_s);
  rc = read_b_until(b, p, bq, t, lat_done, sh, DRAIN_S, "latency");
  if (rc != 0)
    kill(child, SIGTERM);
  waitpid(child, NULL, 0);
  if (rc != 0)
    goto out;
  if (sh->failed > 0) {
    rb_warn("latency: %llu products could not be inserted into A",
            (unsigned long long)sh->failed);
    rc = -1;
    goto out;
  }
  lat = malloc((sh->inserted + 1) * sizeof *lat);
  if (lat == NULL) {
    rc = -1;
    goto out;
  }
  for (size_t i = 0; i < sh->inserted; i++)
    if (t->lat_arrived[i] != 0)
      lat[n++] = t->lat_arrived[i] > sh->sent_us[i]
                     ? t->lat_arrived[i] - sh->sent_us[i]
                     : 0;
  r->lat_sent = sh->inserted;
  r->lat_got = n;
  r->lat_rate = (double)sh->inserted / sh->seconds;
  if (n == 0 || n != sh->inserted || t->lat_dups > 0) {
    rb_warn("latency: %zu of %llu products reached B, %llu twice: no figure", n,
            (unsigned long long)sh->inserted, (unsigned long long)t->lat_dups);
    rc = -1;
    goto out;
  }
  qsort(lat, n, sizeof *lat, cmp_u64);
  r->p50 = pct_ms(lat, n, 50);
  r->p99 = pct_ms(lat, n, 99);
  r->max = (double)lat[n - 1] / 1000.0;
  r->lat_ok = true;
out:
  free(lat);
  free(t->lat_arrived);
  t->lat_arrived = NULL;
  t->lat_cap = 0;
  if (sh != MAP_FAILED)
    munmap(sh, shsize);
  return rc;
}

/* Warm-up, throughput, latency of one path and size, on a fresh set-up. */
static void run_case(bench *b, const struct path *p, const struct size_case *c,
                     double lat_rate, struct result *r) {
  unsigned n = (unsigned)(c->n * b->mult), warm = (unsigned)(c->warm * b->mult);
  unsigned lat_n = (unsigned)(lat_rate * b->lat_s) + 16;
  uint8_t *buf = malloc(c->size);
  struct tally t = {0};
  pq_t *aq = NULL, *bq = NULL;
  pq_error err;
  pid_t reader;
  double start;

  memset(r, 0, sizeof *r);
  if (n < 2)
    n = 2;
  if (warm < 1)
    warm = 1;
  if (buf == NULL || path_up(b, p, c->size, n + warm + lat_n) != 0)
    goto out;
  if (b->verbose)
    printf("  (%s, %s: logs in %s)\n", p->name, c->name, b->run);
  if (pq_open(b->a.queue, 0, &aq, &err) != PQ_OK ||
      pq_open(b->b.queue, PQ_READONLY, &bq, &err) != PQ_OK) {
    rb_warn("cannot open a queue: %s", err.pe_msg);
    goto out;
  }
  pq_set_spin(bq, 0); /* the reader must not take CPU from the path */
  for (unsigned i = 0; i < warm; i++)
    if (rb_insert(aq, 0x5741524dull ^ c->size, FT_WARM, i, buf, c->size,
                  "WARMUP", NULL) != PQ_OK)
      goto out;
  if (read_b_until(b, p, bq, &t, warm_done, &warm, NOPROGRESS_S, "warm-up") !=
      0)
    goto out;

  reader = reader_of_a(b, p);
  if (p->kind == PATH_RELAY)
    rb_tree_signal(reader, SIGSTOP);
  else
    kill(reader, SIGSTOP);
  for (unsigned i = 0; i < n && !rb_stop; i++)
    if (rb_insert(aq, 0x42415443ull ^ c->size, FT_BATCH, i, buf, c->size,
                  "BATCH", NULL) != PQ_OK)
      goto out;
  cpu_mark(b, p, &r->m0);
  start = (double)pq_ts_to_us(pq_ts_now());
  if (p->kind == PATH_RELAY)
    rb_tree_signal(reader, SIGCONT);
  else
    kill(reader, SIGCONT);
  if (read_b_until(b, p, bq, &t, batch_done, &n, NOPROGRESS_S, "throughput") !=
      0)
    goto out;
  cpu_mark(b, p, &r->m1);
  if (t.n != n || t.last_us <= start) {
    rb_warn("throughput: %llu of %u products reached B: no figure",
            (unsigned long long)t.n, n);
    goto out;
  }
  r->rate = (double)t.n / (((double)t.last_us - start) / 1e6);
  r->mbs = (double)t.bytes / ((double)t.last_us - start);
  r->steady = r->steady_mbs = -1;
  if (t.n > 1 && t.last_us > t.first_us) {
    double sec = (double)(t.last_us - t.first_us) / 1e6;

    r->steady = (double)(t.n - 1) / sec;
    r->steady_mbs = (double)(t.n - 1) * (double)c->size / sec / 1e6;
  }
  r->thr_ok = true;
  (void)latency(b, p, bq, &t, c->size, lat_rate, r);
  if (t.strays > 0)
    rb_warn("%s, %s: %llu products in B that the bench did not insert", p->name,
            c->name, (unsigned long long)t.strays);
out:
  if (p->kind == PATH_NATS && b->pub.pid > 0)
    kill(b->pub.pid, SIGCONT);
  else if (b->a.pid > 0)
    rb_tree_signal(b->a.pid, SIGCONT);
  pq_close(aq);
  pq_close(bq);
  free(buf);
  path_down(b);
}

/* ---------------------------------------------------------------------- */
/* Report                                                                 */
/* ---------------------------------------------------------------------- */

static void run_all(bench *b) {
  printf("\nThroughput: n products put into A while the process reading A "
         "is stopped\n"
         "(SIGSTOP: ldmd A's processes; pq2nats), timed from its SIGCONT to "
         "the last\n"
         "insertion in B; steady: first to last arrival; CPU: cores used "
         "meanwhile.\n"
         "Latency: products inserted into A at a fixed rate for %.0f s, "
         "from creation (just\n"
         "before the insertion into A) to the insertion into B.\n",
         b->lat_s);
  for (unsigned s = 0; s < NSIZES && !rb_stop; s++) {
    const struct size_case *c = &sizes[s];

    if ((b->size_mask & 1u << s) == 0)
      continue;
    printf("\n%s products (%u for the throughput; latency at %.0f products/s)"
           "\n",
           c->name,
           (unsigned)(c->n * b->mult) < 2 ? 2 : (unsigned)(c->n * b->mult),
           b->lat_rate[s]);
    printf("  %-8s %-42s %9s %8s %9s %8s %8s %8s %8s\n", "path", "", "prods/s",
           "MB/s", "steady/s", "MB/s", "p50 ms", "p99 ms", "max ms");
    for (unsigned i = 0; i < NPATHS && !rb_stop; i++) {
      const struct path *p = &paths[i];
      struct result r;
      char cpu[256];

      if ((b->path_mask & 1u << i) == 0 ||
          (p->max_payload > 0 && c->size <= KIB))
        continue;
      run_case(b, p, c, b->lat_rate[s], &r);
      if (rb_stop)
        break;
      if (!r.thr_ok) {
        printf("  %-8s %-42s ERROR: no figure (see above)\n", p->name, p->what);
        b->errors++;
        continue;
      }
      printf("  %-8s %-42s %9.0f %8.1f %9.0f %8.1f", p->name, p->what, r.rate,
             r.mbs, r.steady, r.steady_mbs);
      if (r.lat_ok)
        printf(" %8.2f %8.2f %8.2f\n", r.p50, r.p99, r.max);
      else {
        printf("  latency: ERROR, no figure (see above)\n");
        b->errors++;
      }
      printf("  %-8s CPU (cores): %s\n", "",
             cpu_text(p, &r.m0, &r.m1, cpu, sizeof cpu));
      if (r.lat_ok && r.lat_rate < 0.95 * b->lat_rate[s])
        printf("  %-8s (the latency run inserted only %.0f products/s)\n", "",
               r.lat_rate);
      if (p->kind == PATH_NATS && c->size == KIB)
        printf("  %-8s target: >= %.0f products/s through JetStream with "
               "acknowledgements: %s\n",
               "", TARGET_1K_RATE, r.rate >= TARGET_1K_RATE ? "MET" : "MISSED");
      if (p->kind == PATH_NATS && c->size == MIB)
        printf("  %-8s target: >= %.0f MB/s: %s\n", "", TARGET_1M_MBS,
               r.mbs >= TARGET_1M_MBS ? "MET" : "MISSED");
      fflush(stdout);
    }
  }
}

/* ---------------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr,
          "usage: nats_bench [-p paths] [-s sizes] [-m mult] [-d seconds]\n"
          "                  [-r rate1k,rate1m] [-D dir] [-L ldmd] "
          "[-N nats-server]\n"
          "                  [-B bindir] [-a options] [-A options] [-k] "
          "[-v]\n"
          "  -p paths    relay,nats,nats-8m (all)\n"
          "  -s sizes    1k,1m (both)\n"
          "  -m mult     multiply the product counts (1)\n"
          "  -d seconds  length of each latency run (5)\n"
          "  -r rates    latency runs' products/s, 1 KiB and 1 MiB "
          "(5000,50)\n"
          "  -D dir      queues and JetStream store (/dev/shm)\n"
          "  -L ldmd     the LDM server (%s)\n"
          "  -N server   nats-server (nats-server in PATH)\n"
          "  -B bindir   where pq2nats and nats2pq are (%s)\n"
          "  -a options  more options for pq2nats (\"-m 8192\")\n"
          "  -A options  more options for nats2pq (\"-b 1024\")\n"
          "  -k          keep the run directory\n"
          "  -v          say where the logs are\n",
          LDMD_PATH, NATS_BIN_DIR);
}

/* Bits of the names in list (comma-separated) among names[0..n-1].
 * @return the mask, 0 if a name is unknown */
static unsigned parse_names(char *list, const char *const *names, unsigned n) {
  unsigned mask = 0;
  char *save, *tok;

  for (tok = strtok_r(list, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    unsigned k = 0;

    while (k < n && strcmp(tok, names[k]) != 0)
      k++;
    if (k == n)
      return 0;
    mask |= 1u << k;
  }
  return mask;
}

static int parse(int argc, char **argv, bench *b) {
  static const char *const path_names[] = {"relay", "nats", "nats-8m"};
  static const char *const size_names[] = {"1k", "1m"};
  const char *bindir = NATS_BIN_DIR;
  char *end;
  int c;

  memset(b, 0, sizeof *b);
  b->path_mask = 7;
  b->size_mask = 3;
  b->mult = 1;
  b->lat_s = 5;
  b->lat_rate[0] = 5000;
  b->lat_rate[1] = 50;
  b->base = "/dev/shm";
  b->ldmd = LDMD_PATH;
  b->nats_server = "nats-server";
  while ((c = getopt(argc, argv, "p:s:m:d:r:D:L:N:B:a:A:kvh")) != -1) {
    errno = 0;
    end = NULL;
    switch (c) {
    case 'p':
      if ((b->path_mask = parse_names(optarg, path_names, 3)) == 0) {
        fprintf(stderr, "nats_bench: bad -p (relay, nats, nats-8m)\n");
        return -1;
      }
      break;
    case 's':
      if ((b->size_mask = parse_names(optarg, size_names, 2)) == 0) {
        fprintf(stderr, "nats_bench: bad -s (1k, 1m)\n");
        return -1;
      }
      break;
    case 'm':
      b->mult = strtod(optarg, &end);
      if (b->mult <= 0)
        end = optarg;
      break;
    case 'd':
      b->lat_s = strtod(optarg, &end);
      if (b->lat_s <= 0)
        end = optarg;
      break;
    case 'r':
      b->lat_rate[0] = strtod(optarg, &end);
      if (*end == ',')
        b->lat_rate[1] = strtod(end + 1, &end);
      if (b->lat_rate[0] <= 0 || b->lat_rate[1] <= 0)
        end = optarg;
      break;
    case 'D':
      b->base = optarg;
      break;
    case 'L':
      b->ldmd = optarg;
      break;
    case 'N':
      b->nats_server = optarg;
      break;
    case 'B':
      bindir = optarg;
      break;
    case 'a':
      b->pub_args = optarg;
      break;
    case 'A':
      b->sub_args = optarg;
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
  snprintf(b->pq2nats, sizeof b->pq2nats, "%s/pq2nats", bindir);
  snprintf(b->nats2pq, sizeof b->nats2pq, "%s/nats2pq", bindir);
  return optind == argc ? 0 : -1;
}

/* A program name without a slash, found in PATH, into buf.  @return 0 */
static int find_in_path(const char *name, char *buf, size_t len) {
  const char *path = getenv("PATH");

  if (strchr(name, '/') != NULL) {
    snprintf(buf, len, "%s", name);
    return access(buf, X_OK);
  }
  while (path != NULL && *path != '\0') {
    const char *colon = strchr(path, ':');
    size_t n = colon != NULL ? (size_t)(colon - path) : strlen(path);

    snprintf(buf, len, "%.*s/%s", (int)n, path, name);
    if (access(buf, X_OK) == 0)
      return 0;
    path = colon != NULL ? colon + 1 : NULL;
  }
  return -1;
}

int main(int argc, char **argv) {
  static char nats_server[RB_RUN_MAX];
  bench b;
  double t0 = tu_now_s();
  bool nats = false;

  rb_prog = "nats_bench";
  if (parse(argc, argv, &b) != 0) {
    usage();
    return 2;
  }
  for (unsigned i = 0; i < NPATHS; i++)
    nats |= (b.path_mask & 1u << i) && paths[i].kind == PATH_NATS;
  if ((b.path_mask & 1u) && access(b.ldmd, X_OK) != 0) {
    rb_warn("cannot run %s: %s (give the server with -L)", b.ldmd,
            strerror(errno));
    return 1;
  }
  if (nats) {
    if (find_in_path(b.nats_server, nats_server, sizeof nats_server) != 0) {
      rb_warn("cannot find %s (the Debian package nats-server; or -N)",
              b.nats_server);
      return 1;
    }
    b.nats_server = nats_server;
    if (access(b.pq2nats, X_OK) != 0 || access(b.nats2pq, X_OK) != 0) {
      rb_warn("cannot run %s or %s: %s (give their directory with -B)",
              b.pq2nats, b.nats2pq, strerror(errno));
      return 1;
    }
  }
  if (rb_run_begin(b.run, b.base) != 0)
    return 1;
  printf("nats_bench: queue A -> path -> queue B over 127.0.0.1; queues%s in "
         "%s\n",
         nats ? " and the JetStream file store" : "", b.base);
  rb_print_machine();
  printf("\n");
  if (b.path_mask & 1u)
    printf("relay: %s\n", b.ldmd);
  if (nats)
    printf("nats: %s, %s, %s\n", b.nats_server, b.pq2nats, b.nats2pq);
  run_all(&b);
  if (rb_stop)
    printf("\n(interrupted)\n");
  path_down(&b);
  return rb_finish(b.run, b.keep, b.errors, t0);
}
