/*
 * mp_crash.c - the crash harness: SIGKILL writers, readers and reserving
 * writers at random instants, hundreds of times, and after every kill prove
 * that the queue is sound and that no committed product was lost or altered.
 *
 * A population of child processes works on one queue: writers (pq_insert of
 * small products, a quarter of them in batches with pq_insert_many), reservers
 * (pq_reserve, fill the space slowly, pq_commit or sometimes pq_discard) and
 * readers (pq_next and pq_wait, checking the MD5 of every product).  The
 * children are started with fork and exec, so they share nothing with the
 * parent but the queue file; each opens it itself.  A writer appends a record
 * (content seed, size, signature) to its own log file only after pq_commit
 * returned PQ_OK: a record means "committed".
 *
 * The parent keeps a read-write handle, and reopens it after a quarter of
 * the kills.  Each iteration it sleeps a random number of microseconds,
 * SIGKILLs a random child (sometimes every child, sometimes every writer
 * caught inside a change, see targeted_kill()), and then:
 *   - runs pq_check() on its handle: it must return PQ_OK, whatever state the
 *     victim was in (the check repairs a queue left dirty and reclaims dead
 *     reservations first, and says so: the totals count them);
 *   - when no child is alive: the report's pr_reserved, pq_stats' ps_nreserved
 *     must be 0 and ps_writers 1 (the parent): nothing leaked;
 *   - finds, with pq_find(), every product any writer ever logged, and
 *     compares its bytes with the regenerated contents and its MD5.
 * The queue is large, recreated after a few thousand products (or a quarter
 * full), and what each writing child may add in its life is capped, so
 * nothing is ever evicted (checked: ps_evicted stays 0) and "not found" means
 * "lost".  Killed children are replaced, so the population stays busy.
 *
 * usage: mp_crash [-n kills] [-w writers] [-v reservers] [-r readers]
 *                 [-g products_per_queue] [-t max_delay_us] [seed]
 * The seed is printed and taken back from the argument or PQ_CRASH_SEED.
 * A watchdog fails the test if pq_check(), pq_stats_get() or pq_open() does
 * not return within 20 s (the control lock held for ever), and shows where
 * each live child is blocked.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"
#include "test/mp/mp_util.h"

#define MAX_POP 16
#define REC_MAGIC 0x434f4d54u /* "COMT" */
#define CHILD_SECONDS 60      /* a child stops by itself after this */
#define WATCHDOG_S 20
/* Far more than a generation of products needs, so nothing is evicted. */
#define QUEUE_BYTES (256u << 20)
#define QUEUE_SLOTS 65536u

/* One committed product, as a writer logs it. */
struct logrec {
  uint64_t seed;
  uint32_t size;
  uint32_t magic;
  uint8_t sig[PQ_SIGLEN];
};

enum kind { K_WRITER, K_RESERVER, K_READER, K_NKINDS };
static const char *const kind_name[K_NKINDS] = {"writer", "reserver", "reader"};

/* ------------------------------------------------------------------ */
/* Children (after exec)                                              */
/* ------------------------------------------------------------------ */

static void fill_product(pq_prod_info *info, uint8_t *buf, uint64_t seed,
                         uint64_t size, uint32_t n) {
  memset(info, 0, sizeof *info);
  info->arrival = pq_ts_now();
  info->feedtype = PQ_FT_EXP;
  info->seqno = n;
  info->size = size;
  snprintf(info->origin, sizeof info->origin, "crash-%ld", (long)getpid());
  snprintf(info->ident, sizeof info->ident, "crash/%016" PRIx64, seed);
  mp_fill(buf, size, seed);
  (void)pq_md5(buf, size, info->signature);
}

static int log_commit(int fd, const pq_prod_info *info, uint64_t seed) {
  struct logrec r = {
      .seed = seed, .size = (uint32_t)info->size, .magic = REC_MAGIC};
  memcpy(r.sig, info->signature, PQ_SIGLEN);
  return write(fd, &r, sizeof r) == (ssize_t)sizeof r ? 0 : -1;
}

static int child_fail(pq_t *pq, int rc, const char *what) {
  mp_ok(rc, pq, what);
  fflush(stdout);
  return rc < 0 && rc >= PQ_ERROR_MIN ? 10 - rc : 9;
}

/* One product: insert it, or reserve, fill slowly, then commit (or
 * sometimes discard).  *logged: committed, so to be logged. */
static int write_one(pq_t *pq, bool reserver, uint64_t *rng, uint8_t *buf,
                     pq_prod_info *info, uint64_t pseed, uint32_t n,
                     bool *logged) {
  uint64_t size =
      reserver ? mp_rand_range(rng, 1024, 65536) : mp_rand_range(rng, 32, 2048);
  fill_product(info, buf, pseed, size, n);
  *logged = false;
  if (!reserver) {
    int rc = pq_insert(pq, info, buf);
    if (rc != PQ_OK)
      return child_fail(pq, rc, "writer: pq_insert");
    *logged = true;
    return 0;
  }
  pq_resv r;
  int rc = pq_reserve(pq, info, &r);
  if (rc != PQ_OK)
    return child_fail(pq, rc, "reserver: pq_reserve");
  if (r.pr_size != size)
    return child_fail(pq, PQ_INVAL, "reserver: pr_size");
  /* Fill slowly, in pieces, so that kills land mid-reservation. */
  unsigned pieces = (unsigned)mp_rand_range(rng, 2, 8);
  for (unsigned i = 0; i < pieces; i++) {
    uint64_t from = size * i / pieces, to = size * (i + 1) / pieces;
    memcpy((uint8_t *)r.pr_data + from, buf + from, to - from);
    mp_sleep_us((int64_t)mp_rand_range(rng, 0, 300));
  }
  if (mp_rand(rng) % 8 == 0) {
    rc = pq_discard(pq, &r);
    return rc == PQ_OK ? 0 : child_fail(pq, rc, "reserver: pq_discard");
  }
  rc = pq_commit(pq, &r);
  if (rc != PQ_OK)
    return child_fail(pq, rc, "reserver: pq_commit");
  *logged = true;
  return 0;
}

/* A writer's batch: 2 to 16 small products in one pq_insert_many(), each
 * logged once the call has returned it committed.  A kill inside the call
 * can leave some committed and none logged: the check only looks for what
 * was logged. */
static int write_batch(pq_t *pq, uint64_t *rng, uint8_t *buf, int fd,
                       uint32_t n, uint32_t *count, uint64_t *bytes) {
  enum { MAX_BATCH = 16 }; /* x 2048 bytes: fits the 64 KiB buffer */
  pq_prod_info infos[MAX_BATCH];
  const pq_prod_info *ip[MAX_BATCH];
  const void *dp[MAX_BATCH];
  uint64_t seeds[MAX_BATCH];
  int rcs[MAX_BATCH];
  unsigned k = (unsigned)mp_rand_range(rng, 2, MAX_BATCH);
  size_t at = 0;
  for (unsigned i = 0; i < k; i++) {
    uint64_t size = mp_rand_range(rng, 32, 2048);
    seeds[i] = mp_rand(rng);
    fill_product(&infos[i], buf + at, seeds[i], size, n + i);
    ip[i] = &infos[i];
    dp[i] = buf + at;
    at += size;
  }
  int rc = pq_insert_many(pq, k, ip, dp, rcs);
  if (rc != PQ_OK)
    return child_fail(pq, rc, "writer: pq_insert_many");
  for (unsigned i = 0; i < k; i++) {
    if (rcs[i] != PQ_OK)
      return child_fail(pq, rcs[i], "writer: pq_insert_many, a product");
    if (log_commit(fd, &infos[i], seeds[i]) < 0) {
      perror("log write");
      return 2;
    }
    *bytes += infos[i].size;
  }
  *count = k;
  return 0;
}

static int child_writer(const char *path, const char *logpath, uint64_t seed,
                        bool reserver, uint64_t max_prods, uint64_t max_bytes) {
  int fd = open(logpath, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    perror(logpath);
    return 2;
  }
  uint8_t *buf = malloc(65536);
  pq_t *pq = NULL;
  pq_error err;
  int rc = 2;
  if (buf == NULL)
    goto out;
  if (pq_open(path, 0, &pq, &err) != PQ_OK) {
    printf("%s: open: %s\n", reserver ? "reserver" : "writer", err.pe_msg);
    rc = 3;
    goto out;
  }
  int64_t end = tu_now_us() + CHILD_SECONDS * 1000000LL;
  uint64_t rng = seed;
  rc = 0;
  uint64_t bytes = 0;
  for (uint32_t n = 0;
       n < max_prods && bytes < max_bytes && tu_now_us() < end && rc == 0;
       n++) {
    if (!reserver && mp_rand(&rng) % 4 == 0) { /* a quarter go in batches */
      uint32_t k = 0;
      rc = write_batch(pq, &rng, buf, fd, n, &k, &bytes);
      n += k > 0 ? k - 1 : 0;
      continue;
    }
    uint64_t pseed = mp_rand(&rng);
    pq_prod_info info;
    bool logged;
    rc = write_one(pq, reserver, &rng, buf, &info, pseed, n, &logged);
    bytes += info.size;
    if (rc == 0 && logged && log_commit(fd, &info, pseed) < 0) {
      perror("log write");
      rc = 2;
    }
  }
out:
  pq_close(pq);
  free(buf);
  close(fd);
  return rc;
}

struct rd {
  uint64_t last;
  char why[400];
};

static int reader_check(const pq_prod_info *info, const void *data,
                        const pq_place *place, void *arg) {
  struct rd *rd = arg;
  uint8_t sig[PQ_SIGLEN];
  if (place->pp_inserted <= rd->last) {
    snprintf(rd->why, sizeof rd->why, "%s: out of order", info->ident);
    return 1;
  }
  if (pq_md5(data, info->size, sig) != 0 ||
      memcmp(sig, info->signature, PQ_SIGLEN) != 0) {
    snprintf(rd->why, sizeof rd->why, "%s: MD5 of the data differs",
             info->ident);
    return 1;
  }
  rd->last = place->pp_inserted;
  return 0;
}

static int child_reader(const char *path, uint64_t seed) {
  pq_t *pq;
  pq_error err;
  if (pq_open(path, PQ_READONLY, &pq, &err) != PQ_OK) {
    printf("reader: open: %s\n", err.pe_msg);
    return 3;
  }
  uint64_t rng = seed;
  pq_set_spin(pq, (unsigned)mp_rand_range(&rng, 0, 100));
  struct rd rd = {.last = 0};
  int64_t end = tu_now_us() + CHILD_SECONDS * 1000000LL;
  while (tu_now_us() < end) {
    int rc = pq_next(pq, PQ_FORWARD, NULL, reader_check, &rd);
    if (rc == PQ_OK)
      continue;
    if (rc == PQ_END) {
      rc = pq_wait(pq, 50);
      if (rc != PQ_OK && rc != PQ_TIMEDOUT)
        return child_fail(pq, rc, "reader: pq_wait");
      continue;
    }
    if (rc > 0) {
      printf("reader: %s\n", rd.why);
      fflush(stdout);
      return 8;
    }
    return child_fail(pq, rc, "reader: pq_next");
  }
  pq_close(pq);
  return 0;
}

static int child_main(int argc, char **argv) {
  /* mp_crash --child KIND QUEUE LOG SEED MAX_PRODUCTS MAX_BYTES */
  uint64_t seed, max_prods, max_bytes;
  if (argc != 8 || !mp_parse_u64(argv[5], &seed) ||
      !mp_parse_u64(argv[6], &max_prods) ||
      !mp_parse_u64(argv[7], &max_bytes)) {
    fprintf(stderr, "mp_crash --child: bad arguments\n");
    return 2;
  }
  if (strcmp(argv[2], "writer") == 0)
    return child_writer(argv[3], argv[4], seed, false, max_prods, max_bytes);
  if (strcmp(argv[2], "reserver") == 0)
    return child_writer(argv[3], argv[4], seed, true, max_prods, max_bytes);
  if (strcmp(argv[2], "reader") == 0)
    return child_reader(argv[3], seed);
  fprintf(stderr, "mp_crash --child: unknown kind %s\n", argv[2]);
  return 2;
}

/* ------------------------------------------------------------------ */
/* Parent                                                             */
/* ------------------------------------------------------------------ */

struct kid {
  pid_t pid; /* 0: empty place */
  enum kind kind;
  char log[560];
  off_t logoff;
};

struct harness {
  uint64_t seed, rng;
  unsigned target_kills;
  unsigned nkind[K_NKINDS];
  uint64_t gen_limit;
  int64_t max_delay_us;
  char exe[512];
  char path[512];
  unsigned serial;
  pq_t *pq;
  struct kid kids[MAX_POP];
  unsigned npop;
  pq_stats last; /* of the last check */
  struct logrec *recs;
  size_t nrecs, caprecs;
  uint8_t *buf;
  /* totals */
  unsigned kills, kills_by_kind[K_NKINDS], quiescent, exited, generations;
  unsigned repairs, checks, reopens, dirty, targeted;
  uint64_t reclaimed, verified, committed_total, all_repairs;
  bool failed;
};

/* For the watchdog (async-signal-safe use only). */
static volatile sig_atomic_t wd_npids;
static volatile pid_t wd_pids[MAX_POP];
static const struct harness *wd_harness;

/* Async-signal-safe output for the watchdog. */
static void wd_puts(const char *str) {
  (void)!write(1, str, strlen(str));
}

static void wd_putu(unsigned long v) {
  char b[24];
  int i = (int)sizeof b;
  do
    b[--i] = (char)('0' + v % 10);
  while ((v /= 10) != 0 && i > 0);
  (void)!write(1, b + i, sizeof b - (size_t)i);
}

/* "/proc/PID/wchan" and "/proc/PID/syscall": where a child is blocked. */
static void wd_show(pid_t pid, const char *file) {
  char path[64] = "/proc/", num[24], buf[128];
  int i = (int)sizeof num;
  unsigned long v = (unsigned long)pid;
  num[--i] = '\0';
  do
    num[--i] = (char)('0' + v % 10);
  while ((v /= 10) != 0 && i > 0);
  strcat(path, num + i);
  strcat(path, "/");
  strcat(path, file);
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0)
    close(fd);
  buf[n > 0 ? n : 0] = '\0';
  char *nl = strchr(buf, '\n');
  if (nl != NULL)
    *nl = '\0';
  wd_puts(" ");
  wd_puts(file);
  wd_puts("=");
  wd_puts(buf);
}

static void on_watchdog(int sig) {
  (void)sig;
  wd_puts("FAIL watchdog: a call of the parent (pq_check, pq_stats_get, "
          "pq_find or pq_open) did not return in 20 s: the control lock is "
          "never granted.  Live children (syscall 72 is fcntl):\n");
  if (wd_harness != NULL)
    for (unsigned i = 0; i < wd_harness->npop; i++) {
      const struct kid *k = &wd_harness->kids[i];
      if (k->pid <= 0)
        continue;
      wd_puts("  ");
      wd_puts(kind_name[k->kind]);
      wd_puts(" pid ");
      wd_putu((unsigned long)k->pid);
      wd_show(k->pid, "wchan");
      wd_show(k->pid, "syscall");
      wd_puts("\n");
    }
  for (int i = 0; i < wd_npids; i++)
    if (wd_pids[i] > 0)
      kill(wd_pids[i], SIGKILL);
  if (wd_harness != NULL) {
    for (unsigned i = 0; i < wd_harness->npop; i++)
      if (wd_harness->kids[i].pid > 0 && wd_harness->kids[i].kind != K_READER)
        unlink(wd_harness->kids[i].log);
    unlink(wd_harness->path);
  }
  _exit(3);
}

static void wd_update(const struct harness *h) {
  int n = 0;
  for (unsigned i = 0; i < h->npop; i++)
    wd_pids[n++] = h->kids[i].pid;
  wd_npids = n;
}

static void fail(struct harness *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(struct harness *h, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL (kill %u): ", h->kills);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  h->failed = true;
}

/* The child mp_spawn runs: this program again, argv a NULL-ended list
 * whose first word is its path.  Returns only if the exec failed. */
static int exec_argv(void *arg) {
  char **argv = arg;

  execv(argv[0], argv);
  perror("execv");
  return 127;
}

static void spawn(struct harness *h, struct kid *k, enum kind kind) {
  k->kind = kind;
  k->logoff = 0;
  snprintf(k->log, sizeof k->log, "%s.%u.log", h->path, h->serial++);
  if (kind != K_READER) {
    int fd = open(k->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
      perror(k->log);
      exit(2);
    }
    close(fd);
  }
  /* What every writing child may add in its life, together: half the
   * queue (it is recreated at a quarter), so nothing is ever evicted
   * however long an iteration takes. */
  unsigned writing = h->nkind[K_WRITER] + h->nkind[K_RESERVER];
  char seed[32], maxp[32], maxb[32];
  snprintf(seed, sizeof seed, "%" PRIu64, mp_rand(&h->rng));
  snprintf(maxp, sizeof maxp, "%u", QUEUE_SLOTS / 2 / (writing ? writing : 1));
  snprintf(maxb, sizeof maxb, "%u",
           QUEUE_BYTES / 2 / (writing ? writing : 1) - 65536);
  char *argv[] = {h->exe,  "--child", (char *)kind_name[kind],
                  h->path, k->log,    seed,
                  maxp,    maxb,      NULL};
  k->pid = mp_spawn(exec_argv, argv);
  wd_update(h);
}

static void add_rec(struct harness *h, const struct logrec *r) {
  if (h->nrecs == h->caprecs) {
    h->caprecs = h->caprecs ? 2 * h->caprecs : 4096;
    h->recs = realloc(h->recs, h->caprecs * sizeof *h->recs);
    if (h->recs == NULL) {
      perror("realloc");
      exit(2);
    }
  }
  h->recs[h->nrecs++] = *r;
}

/* Take the complete records a child logged since last time. */
static void harvest(struct harness *h, struct kid *k) {
  if (k->kind == K_READER)
    return;
  int fd = open(k->log, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  struct logrec r;
  while (pread(fd, &r, sizeof r, k->logoff) == (ssize_t)sizeof r) {
    if (r.magic != REC_MAGIC || r.size > 65536) {
      fail(h, "%s: damaged log record at %lld", k->log, (long long)k->logoff);
      break;
    }
    add_rec(h, &r);
    h->committed_total++;
    k->logoff += (off_t)sizeof r;
  }
  close(fd);
}

/* A child is gone (status from waitpid): account for it, free its place. */
static void bury(struct harness *h, struct kid *k, int status, bool killed) {
  harvest(h, k);
  if (k->kind != K_READER)
    unlink(k->log);
  if (killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
    h->kills++;
    h->kills_by_kind[k->kind]++;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    h->exited++; /* finished its bounded loop by itself */
  } else {
    char txt[64];
    mp_status_text(status, txt, sizeof txt);
    fail(h, "%s pid %ld ended with %s", kind_name[k->kind], (long)k->pid, txt);
  }
  k->pid = 0;
  wd_update(h);
}

static void kill_one(struct harness *h, struct kid *k) {
  int status;
  kill(k->pid, SIGKILL);
  while (waitpid(k->pid, &status, 0) < 0 && errno == EINTR)
    ;
  bury(h, k, status, true);
}

/* Children that ended by themselves since the last look. */
static void reap_exited(struct harness *h) {
  for (unsigned i = 0; i < h->npop; i++) {
    int status;
    if (h->kids[i].pid > 0 &&
        waitpid(h->kids[i].pid, &status, WNOHANG) == h->kids[i].pid)
      bury(h, &h->kids[i], status, false);
  }
}

static unsigned alive(const struct harness *h) {
  unsigned n = 0;
  for (unsigned i = 0; i < h->npop; i++)
    n += h->kids[i].pid > 0;
  return n;
}

static int verify_cb(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  const struct logrec *r = ((void **)arg)[0];
  uint8_t *buf = ((void **)arg)[1];
  uint8_t sig[PQ_SIGLEN];
  (void)place;
  if (info->size != r->size)
    return 1;
  if (memcmp(info->signature, r->sig, PQ_SIGLEN) != 0)
    return 2;
  mp_fill(buf, r->size, r->seed);
  if (memcmp(data, buf, r->size) != 0)
    return 3;
  if (pq_md5(data, info->size, sig) != 0 || memcmp(sig, r->sig, PQ_SIGLEN) != 0)
    return 4;
  return 0;
}

/* Every product ever logged in this queue must be there, intact. */
static void verify_committed(struct harness *h) {
  static const char *const what[] = {"", "size differs", "signature differs",
                                     "bytes differ", "MD5 differs"};
  for (size_t i = 0; i < h->nrecs && !h->failed; i++) {
    void *arg[2] = {&h->recs[i], h->buf};
    int rc = pq_find(h->pq, h->recs[i].sig, verify_cb, arg);
    if (rc == PQ_OK) {
      h->verified++;
      continue;
    }
    char hex[33];
    pq_sig_format(h->recs[i].sig, hex);
    if (rc > 0 && rc <= 4)
      fail(h, "committed product %s (seed %016" PRIx64 "): %s", hex,
           h->recs[i].seed, what[rc]);
    else if (rc == PQ_NOTFOUND)
      fail(h, "committed product %s (seed %016" PRIx64 ", %u bytes) is lost",
           hex, h->recs[i].seed, h->recs[i].size);
    else
      fail(h, "pq_find %s: %s", hex, pq_strerror(rc));
  }
}

/* Header fields read from the file (pq/format.h), only to tell how often
 * kills landed inside a change: with no process alive, is the queue marked
 * mid-change, and how many repairs did any process make?  The library is
 * not asked. */
static uint64_t hdr_field(const struct harness *h, size_t off, size_t len) {
  uint64_t v = 0;
  int fd = open(h->path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (pread(fd, &v, len, (off_t)off) != (ssize_t)len)
      v = 0;
    close(fd);
  }
  return v;
}

static bool left_dirty(const struct harness *h) {
  return hdr_field(h, offsetof(struct pq_hdr, hd_dirty), 4) != 0;
}

static uint64_t repairs_made(const struct harness *h) {
  return hdr_field(h, offsetof(struct pq_hdr, hd_repairs), 8);
}

static void check_queue_now(struct harness *h) {
  pq_check_report rep;
  int rc = pq_check(h->pq, &rep);
  h->checks++;
  if (rc != PQ_OK) {
    fail(h, "pq_check: %s: invariant %d: %s", pq_errname(rc), rep.pr_invariant,
         rep.pr_msg);
    return;
  }
  h->repairs += rep.pr_repaired;
  h->reclaimed += rep.pr_reclaimed;
  bool quiet = alive(h) == 0;
  if (quiet && rep.pr_reserved != 0)
    fail(h, "%" PRIu64 " reservations left with no writer alive",
         rep.pr_reserved);
  pq_stats st;
  rc = pq_stats_get(h->pq, &st);
  if (rc != PQ_OK) {
    mp_ok(rc, h->pq, "pq_stats_get");
    h->failed = true;
    return;
  }
  h->last = st;
  if (quiet && (st.ps_nreserved != 0 || st.ps_writers != 1))
    fail(h,
         "no child alive, yet %" PRIu64 " reservations and %u live writers "
         "(expected 0 and 1: this process)",
         st.ps_nreserved, st.ps_writers);
  if (st.ps_evicted != 0)
    fail(h, "%" PRIu64 " products evicted: the harness assumes none",
         st.ps_evicted);
  if (st.ps_nprods < h->nrecs)
    fail(h, "%" PRIu64 " products in the queue, %zu were committed",
         st.ps_nprods, h->nrecs);
  if (!h->failed)
    verify_committed(h);
}

/* The checks, under the watchdog. */
static void check_queue(struct harness *h) {
  alarm(WATCHDOG_S);
  check_queue_now(h);
  alarm(0);
}

static void new_queue(struct harness *h) {
  if (h->pq != NULL) {
    h->all_repairs += repairs_made(h);
    pq_close(h->pq);
  }
  pq_create_opts o = {.pc_data_size = QUEUE_BYTES,
                      .pc_slots = QUEUE_SLOTS,
                      .pc_flags = PQ_CLOBBER};
  pq_error err;
  if (pq_create(h->path, &o, &h->pq, &err) != PQ_OK) {
    printf("FAIL create %s: %s\n", h->path, err.pe_msg);
    exit(1);
  }
  h->nrecs = 0;
  h->generations++;
}

static void reopen(struct harness *h) {
  pq_close(h->pq);
  pq_error err;
  alarm(WATCHDOG_S);
  int rc = pq_open(h->path, 0, &h->pq, &err);
  alarm(0);
  if (rc != PQ_OK) {
    printf("FAIL reopen %s after a kill: %s\n", h->path, err.pe_msg);
    exit(1);
  }
  h->reopens++;
}

/*
 * A kill aimed inside a change: stop every child, look at the dirty flag,
 * and if some child was stopped between pq__mutate_begin and its end, kill
 * every writer and reserver (the one in the change among them) and let the
 * readers go on: they meet the crashed state first and must repair it
 * themselves, concurrently.  Else let them all run a few microseconds more
 * and look again.
 */
static void targeted_kill(struct harness *h) {
  int64_t give_up = tu_now_us() + 100000;
  for (unsigned attempt = 0; attempt < 400 && tu_now_us() < give_up;
       attempt++) {
    for (unsigned i = 0; i < h->npop; i++)
      if (h->kids[i].pid > 0)
        kill(h->kids[i].pid, SIGSTOP);
    for (unsigned i = 0; i < h->npop; i++) {
      int status;
      if (h->kids[i].pid > 0 &&
          waitpid(h->kids[i].pid, &status, WUNTRACED) == h->kids[i].pid &&
          !WIFSTOPPED(status))
        bury(h, &h->kids[i], status, false); /* ended before it stopped */
    }
    bool dirty = left_dirty(h);
    if (dirty)
      for (unsigned i = 0; i < h->npop; i++)
        if (h->kids[i].pid > 0 && h->kids[i].kind != K_READER)
          kill_one(h, &h->kids[i]);
    for (unsigned i = 0; i < h->npop; i++)
      if (h->kids[i].pid > 0)
        kill(h->kids[i].pid, SIGCONT);
    if (dirty) {
      h->targeted++;
      /* Past the readers' pq_wait() timeout: they find it first. */
      mp_sleep_us((int64_t)mp_rand_range(&h->rng, 0, 120000));
      return;
    }
    mp_sleep_us((int64_t)mp_rand_range(&h->rng, 0, 40));
  }
}

static void kill_all(struct harness *h) {
  for (unsigned i = 0; i < h->npop; i++)
    if (h->kids[i].pid > 0)
      kill_one(h, &h->kids[i]);
}

static void repopulate(struct harness *h) {
  unsigned i = 0;
  for (enum kind kd = 0; kd < K_NKINDS; kd++)
    for (unsigned j = 0; j < h->nkind[kd]; j++, i++)
      if (h->kids[i].pid == 0)
        spawn(h, &h->kids[i], kd);
}

static void usage(void) {
  fprintf(stderr, "usage: mp_crash [-n kills] [-w writers] [-v reservers] "
                  "[-r readers] [-g products_per_queue] [-t max_delay_us] "
                  "[seed]\n");
  exit(2);
}

static unsigned arg_uint(const char *s) {
  uint64_t v;
  if (!mp_parse_u64(s, &v) || v > 1000000000u)
    usage();
  return (unsigned)v;
}

/* Fills *h from the command line, exiting through usage() on a bad one. */
static void parse_args(int argc, char **argv, struct harness *h) {
  int opt;
  while ((opt = getopt(argc, argv, "n:w:v:r:g:t:")) != -1) {
    switch (opt) {
    case 'n':
      h->target_kills = arg_uint(optarg);
      break;
    case 'w':
      h->nkind[K_WRITER] = arg_uint(optarg);
      break;
    case 'v':
      h->nkind[K_RESERVER] = arg_uint(optarg);
      break;
    case 'r':
      h->nkind[K_READER] = arg_uint(optarg);
      break;
    case 'g':
      h->gen_limit = arg_uint(optarg);
      break;
    case 't':
      h->max_delay_us = arg_uint(optarg);
      break;
    default:
      usage();
    }
  }
  h->npop = h->nkind[K_WRITER] + h->nkind[K_RESERVER] + h->nkind[K_READER];
  if (h->npop == 0 || h->npop > MAX_POP || h->gen_limit == 0)
    usage();
  if (optind < argc) {
    if (!mp_parse_u64(argv[optind], &h->seed))
      usage();
  } else {
    h->seed = mp_seed_from_env("PQ_CRASH_SEED");
  }
}

/* Kills one live child picked at random, if any is alive. */
static void kill_random(struct harness *h) {
  unsigned live = alive(h);
  if (live == 0)
    return;
  unsigned pick = (unsigned)(mp_rand(&h->rng) % live);
  for (unsigned i = 0; i < h->npop; i++)
    if (h->kids[i].pid > 0 && pick-- == 0) {
      kill_one(h, &h->kids[i]);
      break;
    }
}

/* Once the generation has logged enough products or filled a quarter of the
 * queue, kills every child, checks the queue a last time and starts a new
 * one. */
static void maybe_new_generation(struct harness *h) {
  if (h->nrecs < h->gen_limit && h->last.ps_nprods < QUEUE_SLOTS / 4 &&
      h->last.ps_nbytes < QUEUE_BYTES / 4)
    return;
  kill_all(h);
  h->quiescent++;
  for (unsigned i = 0; i < h->npop; i++)
    harvest(h, &h->kids[i]);
  check_queue(h);
  if (h->failed)
    return;
  new_queue(h);
}

/* One round of the harness: wait, kill, check the queue, refill the
 * population.  Returns early, with h->failed set, on a failed check. */
static void crash_round(struct harness *h) {
  /* Some kills right away (children starting, opening), most later. */
  int64_t delay = mp_rand(&h->rng) % 4 == 0
                      ? (int64_t)mp_rand_range(&h->rng, 0, 300)
                      : (int64_t)mp_rand_range(&h->rng, 0, h->max_delay_us);
  mp_sleep_us(delay);
  reap_exited(h);
  kill_random(h);
  if (mp_rand(&h->rng) % 6 == 0)
    targeted_kill(h);
  if (mp_rand(&h->rng) % 8 == 0) {
    kill_all(h);
    h->quiescent++;
    h->dirty += left_dirty(h);
  }
  /* A quarter of the time the parent opens the queue afresh after the
   * kill, so that pq_open() itself meets the crashed state (and repairs
   * it: then pq_check() has nothing left to report as repaired). */
  if (mp_rand(&h->rng) % 4 == 0)
    reopen(h);
  for (unsigned i = 0; i < h->npop; i++)
    if (h->kids[i].pid > 0)
      harvest(h, &h->kids[i]);
  check_queue(h);
  if (h->failed)
    return;
  maybe_new_generation(h);
  if (h->failed)
    return;
  repopulate(h);
}

/* Prints the run's totals. */
static void report(const struct harness *h, double secs) {
  printf("kills: %u (writers %u, reservers %u, readers %u) in %.1f s; %u "
         "times with no child left alive, %u of them left the queue "
         "mid-change; %u kills aimed inside a change, the readers left to "
         "repair; %u children ended by themselves\n",
         h->kills, h->kills_by_kind[K_WRITER], h->kills_by_kind[K_RESERVER],
         h->kills_by_kind[K_READER], secs, h->quiescent, h->dirty, h->targeted,
         h->exited);
  printf("checks: %u pq_check() passed, %u repairs seen (pr_repaired; %" PRIu64
         " made by any process), %" PRIu64
         " dead reservations reclaimed (pr_reclaimed), %u reopens after a "
         "kill\n",
         h->checks, h->repairs, h->all_repairs, h->reclaimed, h->reopens);
  printf("products: %" PRIu64 " committed and logged over %u queues, %" PRIu64
         " pq_find() verifications byte for byte\n",
         h->committed_total, h->generations, h->verified);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--child") == 0)
    return child_main(argc, argv);

  static struct harness h = {.target_kills = 600,
                             .nkind = {2, 1, 2},
                             .gen_limit = 4000,
                             .max_delay_us = 15000};
  parse_args(argc, argv, &h);
  h.rng = h.seed;
  ssize_t n = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
  if (n <= 0) {
    perror("readlink /proc/self/exe");
    return 2;
  }
  h.exe[n] = '\0';
  h.buf = malloc(65536);
  mp_queue_path(h.path, sizeof h.path, "mp_crash");
  printf("mp_crash: seed %" PRIu64 " (PQ_CRASH_SEED=%" PRIu64
         " to repeat), %u kills, population %u writers, %u reservers, "
         "%u readers, queue %s recreated every %" PRIu64 " products\n",
         h.seed, h.seed, h.target_kills, h.nkind[K_WRITER], h.nkind[K_RESERVER],
         h.nkind[K_READER], h.path, h.gen_limit);
  fflush(stdout);
  wd_harness = &h;
  signal(SIGALRM, on_watchdog);

  int64_t t0 = tu_now_us();
  new_queue(&h);
  repopulate(&h);
  while (h.kills < h.target_kills && !h.failed)
    crash_round(&h);
  kill_all(&h);
  if (!h.failed)
    check_queue(&h);
  h.all_repairs += repairs_made(&h);
  report(&h, (double)(tu_now_us() - t0) / 1e6);
  if (!h.failed && h.kills < h.target_kills)
    fail(&h, "only %u kills", h.kills);
  pq_close(h.pq);
  unlink(h.path);
  free(h.recs);
  free(h.buf);
  printf("%s (seed %" PRIu64 ")\n", h.failed ? "FAILED" : "PASSED", h.seed);
  return h.failed ? 1 : 0;
}
