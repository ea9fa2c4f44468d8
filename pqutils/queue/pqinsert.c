/*
 * pqinsert - turn files (or standard input) into products and insert them,
 * as LDM's pqinsert does: ident = the path (or -p ident, ident.seqno with
 * several files), signature = MD5 of the data (or of the ident with -i),
 * creation time = now, origin = this host, feedtype EXP unless -f.
 *
 * Built to insert many small files quickly.  The queue is opened once, and
 * the work is split over two threads in a pipeline: a reader thread opens,
 * reads and hashes the next files while the main thread inserts every file
 * that is ready, up to 32 at a time (runs of small ones with
 * pq_insert_many(): one lock hold per run).  The signature has to be known
 * before the reservation (it is the duplicate check), so a file is read
 * into a reusable buffer and hashed first; a file larger than DIRECT_MIN
 * (or any file with -i, whose signature needs no data) is instead read
 * straight into its reservation.  The two threads share the hashing: when
 * few files wait to be inserted (the reader is the slower side), the reader
 * leaves the MD5 of small files to the inserting thread, which also closes
 * the files.  Products go in in command-line order.  Per file: open, fstat,
 * read, close.
 *
 * No input is read past the largest product the queue accepts
 * (pq_max_product_size()): a regular file larger than that is refused
 * from its size, anything else (a pipe, /dev/zero) once it has given one
 * byte more, and the other files still go in.  A stop (SIGTERM, SIGINT)
 * ends any wait at once, for a FIFO's writer or its next bytes included
 * (cli_io.h): the file being read is then not inserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/queue/handoff.h"
#include "pqutils/common/cli_io.h"

/* LDM's exit codes. */
enum {
  EXIT_OK = 0,
  EXIT_SYSTEM = 1, /* operating-system failure */
  EXIT_PQ_OPEN = 2,
  EXIT_INFILE = 3, /* an input file could not be used, or PQ_BIG */
  EXIT_DUP = 4,    /* a product was already in the queue */
  EXIT_MD5 = 6,    /* MD5 could not be set up */
};
/* A job given up because a stop was asked for: not an exit code. */
#define JOB_STOPPED (-1)

#define RING 64                         /* jobs in flight */
#define RING_BYTES (64u << 20)          /* buffered bytes in flight */
#define DIRECT_MIN ((uint64_t)16 << 20) /* read larger files in place */
#define CHUNK (1u << 20)                /* read/hash unit of large files */
#define DIRECT_CHUNK ((size_t)64 << 20) /* pread unit into a reservation */
#define KEEP_MAX (1u << 20)             /* larger job buffers are freed */
#define STDIN_DEFAULT 1000000u          /* LDM's -n default */

static const char usage_text[] =
    "usage: pqinsert [options] [file ...]\n"
    "options:\n"
    "  -f feedtype  feedtype of the products (default EXP)\n"
    "  -p ident     product identifier (default: the file's path, or STDIN);\n"
    "               with several files, ident.seqno\n"
    "  -s seqno     first sequence number, one more per file (default 0)\n"
    "  -i           signature = MD5 of the identifier, not of the data\n"
    "  -n size      first buffer size for standard input (default 1000000)\n"
    "  -r           accepted for LDM (files are always read)\n"
    "  -q queue     queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log each product inserted\n"
    "  -x           debug: also log signatures\n"
    "  -h           print this text\n"
    "without files, one product is read from standard input.\n"
    "exit: 0 all inserted, 1 system failure, 2 queue not opened,\n"
    "      3 input file problem or product too big, 4 duplicate\n";

struct opts {
  const pq_t *pq; /* for pq_max_product_size() only: either thread */
  uint32_t feedtype;
  const char *ident;
  uint32_t seqno;
  bool sig_from_ident;
  uint64_t stdin_size;
  char origin[PQ_ORIGIN_MAX + 1];
  char **files;
  int nfiles;
};

/* A file on its way into the queue. */
struct job {
  int status;    /* EXIT_OK, EXIT_INFILE/EXIT_SYSTEM with msg, JOB_STOPPED */
  char msg[600]; /* what went wrong */
  pq_prod_info info;
  uint8_t *buf; /* buffered data (info.size bytes), or NULL: direct */
  size_t cap;
  int fd;        /* direct: read into the reservation from here */
  int spent_fd;  /* read to the end; the inserting side closes it */
  bool hashed;   /* info.signature is set */
  uint64_t held; /* buffered bytes counted against RING_BYTES */
  const char *path;
};

/* Reused MD5 context (one per thread). */
struct md5 {
  EVP_MD_CTX *ctx;
  EVP_MD *md;
};

static int md5_init(struct md5 *m) {
  m->md = EVP_MD_fetch(NULL, "MD5", NULL);
  m->ctx = EVP_MD_CTX_new();
  return m->md != NULL && m->ctx != NULL ? 0 : -1;
}

static void md5_fini(struct md5 *m) {
  EVP_MD_CTX_free(m->ctx);
  EVP_MD_free(m->md);
}

static int md5_begin(struct md5 *m) {
  return EVP_DigestInit_ex(m->ctx, m->md, NULL) == 1 ? 0 : -1;
}

static int md5_add(struct md5 *m, const void *p, size_t n) {
  return EVP_DigestUpdate(m->ctx, p, n) == 1 ? 0 : -1;
}

static int md5_end(struct md5 *m, uint8_t sig[PQ_SIGLEN]) {
  unsigned n = 0;
  return EVP_DigestFinal_ex(m->ctx, sig, &n) == 1 && n == PQ_SIGLEN ? 0 : -1;
}

static int md5_of(struct md5 *m, const void *p, size_t n,
                  uint8_t sig[PQ_SIGLEN]) {
  return md5_begin(m) == 0 && md5_add(m, p, n) == 0 && md5_end(m, sig) == 0
             ? 0
             : -1;
}

__attribute__((format(printf, 3, 4))) static int
job_fail(struct job *j, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(j->msg, sizeof j->msg, fmt, ap);
  va_end(ap);
  j->status = status;
  return status;
}

/* Room for `need` bytes: double, but not past `most` (>= need). */
static int grow(struct job *j, size_t need, size_t most) {
  if (need <= j->cap && j->buf != NULL)
    return 0;
  size_t cap = j->cap ? j->cap : 4096;
  while (cap < need)
    cap *= 2;
  if (cap > most)
    cap = most;
  uint8_t *p = realloc(j->buf, cap);
  if (p == NULL)
    return -1;
  j->buf = p;
  j->cap = cap;
  return 0;
}

static int too_big(struct job *j, uint64_t limit) {
  return job_fail(j, EXIT_INFILE,
                  "%s: larger than the largest product the queue holds "
                  "(%llu bytes)",
                  j->path, (unsigned long long)limit);
}

/* Read a whole descriptor into the job's buffer: `size` bytes of a regular
 * file (fewer if it shrank; the caller has checked size against limit),
 * or everything up to end of file of anything else, but not more than
 * limit + 1 bytes: that many is already too big.  A pipe is waited for
 * until its writer closes it or a stop comes (JOB_STOPPED). */
static int read_all(struct job *j, int fd, uint64_t size, bool regular,
                    uint64_t limit) {
  size_t most = (size_t)(regular ? size : limit + 1); /* to read at most */
  size_t have = 0;
  size_t first =
      regular ? (most > 0 ? most : 1) : (most < 65536 ? most : 65536);
  if (grow(j, first, first) != 0)
    return job_fail(j, EXIT_SYSTEM, "cannot allocate %zu bytes for %s", first,
                    j->path);
  while (have < most) {
    if (have == j->cap && grow(j, j->cap + 1, most) != 0)
      return job_fail(j, EXIT_SYSTEM, "cannot allocate %zu bytes for %s",
                      j->cap * 2 < most ? j->cap * 2 : most, j->path);
    size_t want = (j->cap < most ? j->cap : most) - have;
    ssize_t n = regular ? read(fd, j->buf + have, want)
                        : cli_io_read(fd, j->buf + have, want);
    if (n < 0 && errno == EINTR && cli_stopping())
      return j->status = JOB_STOPPED;
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return job_fail(j, EXIT_INFILE, "cannot read %s: %s", j->path,
                      strerror(errno));
    if (n == 0)
      break;
    have += (size_t)n;
  }
  j->info.size = have;
  return !regular && have > limit ? too_big(j, limit) : EXIT_OK;
}

/* MD5 of a large regular file, read in chunks. */
static int hash_file(struct job *j, struct md5 *m, uint8_t *chunk, int fd) {
  if (md5_begin(m) != 0)
    return job_fail(j, EXIT_SYSTEM, "MD5 of %s failed", j->path);
  uint64_t off = 0;
  while (off < j->info.size) {
    if (cli_stopping())
      return j->status = JOB_STOPPED;
    size_t want =
        j->info.size - off < CHUNK ? (size_t)(j->info.size - off) : CHUNK;
    ssize_t n = pread(fd, chunk, want, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return job_fail(j, EXIT_INFILE, "cannot read %s: %s", j->path,
                      n < 0 ? strerror(errno) : "file shrank while read");
    if (md5_add(m, chunk, (size_t)n) != 0)
      return job_fail(j, EXIT_SYSTEM, "MD5 of %s failed", j->path);
    off += (uint64_t)n;
  }
  return md5_end(m, j->info.signature) == 0
             ? EXIT_OK
             : job_fail(j, EXIT_SYSTEM, "MD5 of %s failed", j->path);
}

/* Everything about file i except putting it in the queue, and except the
 * MD5 of a buffered file if !hash_now. */
static int prepare(struct job *j, const struct opts *o, int i, struct md5 *m,
                   uint8_t *chunk, bool hash_now) {
  j->status = EXIT_OK;
  j->fd = -1;
  j->spent_fd = -1;
  j->hashed = true;
  j->path = o->files[i];
  pq_prod_info *info = &j->info;
  info->size = 0;
  info->seqno = o->seqno + (uint32_t)i;
  info->feedtype = o->feedtype;
  memcpy(info->origin, o->origin, sizeof info->origin);
  int n;
  if (o->ident == NULL) { /* the common case, without snprintf's cost */
    size_t len = strnlen(j->path, sizeof info->ident);
    memcpy(info->ident, j->path, len < sizeof info->ident ? len + 1 : len);
    n = (int)len;
  } else if (o->nfiles > 1)
    n = snprintf(info->ident, sizeof info->ident, "%s.%u", o->ident,
                 info->seqno);
  else
    n = snprintf(info->ident, sizeof info->ident, "%s", o->ident);
  if (n < 0 || (size_t)n >= sizeof info->ident)
    return job_fail(j, EXIT_INFILE,
                    "cannot use %s: identifier longer than %d characters",
                    j->path, PQ_IDENT_MAX);

  int fd = cli_io_open_read(j->path); /* a FIFO's open does not wait */
  if (fd < 0)
    return job_fail(j, EXIT_INFILE, "cannot open %s: %s", j->path,
                    strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return job_fail(j, EXIT_INFILE, "cannot fstat %s: %s", j->path,
                    strerror(errno));
  }
  info->arrival = pq_ts_now();
  bool regular = S_ISREG(st.st_mode);
  info->size = regular ? (uint64_t)st.st_size : 0;
  uint64_t limit =
      pq_max_product_size(o->pq, strlen(info->origin), strlen(info->ident));
  if (regular && info->size > limit) {
    close(fd);
    return too_big(j, limit);
  }
  if (regular && (o->sig_from_ident || info->size > DIRECT_MIN)) {
    /* Read straight into the reservation, on the inserting side. */
    int rc =
        o->sig_from_ident
            ? (md5_of(m, info->ident, strlen(info->ident), info->signature) == 0
                   ? EXIT_OK
                   : job_fail(j, EXIT_SYSTEM, "MD5 of %s failed", j->path))
            : hash_file(j, m, chunk, fd);
    if (rc != EXIT_OK) {
      close(fd);
      return rc;
    }
    j->fd = fd;
    return EXIT_OK;
  }
  int rc = read_all(j, fd, info->size, regular, limit);
  if (rc != EXIT_OK) {
    close(fd);
    return rc;
  }
  j->spent_fd = fd;
  if (!hash_now && !o->sig_from_ident) {
    j->hashed = false;
    return EXIT_OK;
  }
  const void *p = o->sig_from_ident ? (const void *)info->ident : j->buf;
  size_t len = o->sig_from_ident ? strlen(info->ident) : (size_t)info->size;
  if (md5_of(m, p, len, info->signature) != 0)
    return job_fail(j, EXIT_SYSTEM, "MD5 of %s failed", j->path);
  return EXIT_OK;
}

/* ---- inserting ---- */

struct tally {
  size_t inserted, dups, failed;
  int code; /* worst so far: system > input > duplicate */
};

static void note(struct tally *t, int code) {
  if (code == EXIT_OK) {
    t->inserted++;
    return;
  }
  if (code == EXIT_DUP)
    t->dups++;
  else
    t->failed++;
  if (t->code == EXIT_OK || code == EXIT_SYSTEM ||
      (code == EXIT_INFILE && t->code == EXIT_DUP))
    t->code = code;
}

static int read_into(struct job *j, void *dst) {
  uint64_t off = 0;
  while (off < j->info.size) {
    if (cli_stopping())
      return j->status = JOB_STOPPED;
    uint64_t left = j->info.size - off;
    ssize_t n =
        pread(j->fd, (uint8_t *)dst + off,
              left < DIRECT_CHUNK ? (size_t)left : DIRECT_CHUNK, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return job_fail(j, EXIT_INFILE, "cannot read %s: %s", j->path,
                      n < 0 ? strerror(errno) : "file shrank while read");
    off += (uint64_t)n;
  }
  return EXIT_OK;
}

static int put(pq_t *pq, struct job *j) {
  if (j->fd < 0)
    return pq_insert(pq, &j->info, j->buf);
  if (cli_stopping()) { /* not begun: leave it */
    j->status = JOB_STOPPED;
    return PQ_OK;
  }
  pq_resv r;
  int rc = pq_reserve(pq, &j->info, &r);
  if (rc != PQ_OK)
    return rc;
  if (read_into(j, r.pr_data) != EXIT_OK) {
    (void)pq_discard(pq, &r);
    return PQ_OK; /* j->status tells */
  }
  return pq_commit(pq, &r);
}

/* Last steps before a job goes in: close its spent descriptor and compute
 * the MD5 the reader thread left to this side. */
static void finish(struct job *j, struct md5 *m) {
  if (j->spent_fd >= 0) {
    close(j->spent_fd);
    j->spent_fd = -1;
  }
  if (j->status == EXIT_OK && !j->hashed) {
    if (md5_of(m, j->buf, (size_t)j->info.size, j->info.signature) != 0)
      job_fail(j, EXIT_SYSTEM, "MD5 of %s failed", j->path);
    j->hashed = true; /* finish() may be called again: do it once */
  }
}

/* Log the outcome of putting a job in the queue; returns its exit code. */
static int outcome(pq_t *pq, struct job *j, int rc) {
  char line[600];
  if (j->status == JOB_STOPPED)
    return JOB_STOPPED; /* said once, by the caller */
  if (j->status != EXIT_OK) {
    log_error("%s", j->msg);
    return j->status;
  }
  switch (rc) {
  case PQ_OK:
    cli_log_product("", &j->info, false);
    return EXIT_OK;
  case PQ_DUP:
    pq_prod_info_format(&j->info, true, line, sizeof line);
    log_error("Product already in queue: %s", line);
    return EXIT_DUP;
  case PQ_BIG:
    pq_prod_info_format(&j->info, true, line, sizeof line);
    log_error("Product too big for queue: %s", line);
    return EXIT_INFILE;
  case PQ_INVAL:
    log_error("cannot insert %s: %s", j->path, pq_last_error(pq)->pe_msg);
    return EXIT_INFILE;
  default:
    log_error("pq_insert failed for %s: %s", j->path,
              pq_last_error(pq)->pe_msg);
    return EXIT_SYSTEM;
  }
}

/* Insert one prepared job and log the outcome; returns its exit code. */
static int insert(pq_t *pq, struct job *j, struct md5 *m) {
  finish(j, m);
  if (j->status != EXIT_OK)
    return outcome(pq, j, PQ_OK);
  int rc = put(pq, j);
  if (j->fd >= 0) {
    close(j->fd);
    j->fd = -1;
  }
  return outcome(pq, j, rc);
}

#define BATCH 32 /* jobs the inserting side takes at once */

/* Insert jobs in order: runs of buffered ones with pq_insert_many() (one
 * lock hold for many small products), the others one by one.  Exit codes
 * into codes[]. */
static void insert_batch(pq_t *pq, struct job *const js[], size_t n,
                         struct md5 *m, int codes[]) {
  const pq_prod_info *infos[BATCH];
  const void *data[BATCH];
  int rcs[BATCH];
  size_t at[BATCH], run = 0;
  for (size_t k = 0; k <= n; k++) {
    bool buffered = false;
    if (k < n) {
      finish(js[k], m);
      buffered = js[k]->status == EXIT_OK && js[k]->fd < 0;
    }
    if (buffered) {
      infos[run] = &js[k]->info;
      data[run] = js[k]->buf;
      at[run++] = k;
      continue;
    }
    if (run > 0) { /* in order: the run before this job */
      (void)pq_insert_many(pq, run, infos, data, rcs);
      for (size_t r = 0; r < run; r++)
        codes[at[r]] = outcome(pq, js[at[r]], rcs[r]);
      run = 0;
    }
    if (k < n)
      codes[k] = insert(pq, js[k], m);
  }
}

/* ---- the pipeline: a reader thread fills a ring of jobs in order ---- */

struct pipeline {
  struct handoff ho;
  struct job jobs[RING];
  const struct opts *o;
  bool md5_failed;
};

static void *reader(void *arg) {
  struct pipeline *pl = arg;
  const struct opts *o = pl->o;
  struct md5 m;
  uint8_t *chunk = malloc(CHUNK);
  if (md5_init(&m) != 0 || chunk == NULL)
    pl->md5_failed = true;
  uint64_t slot;
  for (int i = 0; i < o->nfiles && !pl->md5_failed; i++) {
    if (cli_stopping() || !handoff_wait_room(&pl->ho, &slot))
      break;
    struct job *j = &pl->jobs[slot];
    /* Hash here only if the inserting side has work queued. */
    if (prepare(j, o, i, &m, chunk, handoff_pending(&pl->ho) >= RING / 2) ==
        JOB_STOPPED)
      break; /* not published (prepare() closed its file) */
    j->held = j->fd < 0 ? j->info.size : 0;
    handoff_publish(&pl->ho, j->held);
  }
  handoff_close(&pl->ho);
  md5_fini(&m);
  free(chunk);
  return NULL;
}

static int insert_files(pq_t *pq, const struct opts *o, struct tally *t) {
  struct pipeline *pl = calloc(1, sizeof *pl);
  if (pl == NULL) {
    log_error("cannot allocate the reading pipeline: %s", strerror(errno));
    return EXIT_SYSTEM;
  }
  handoff_init(&pl->ho, RING, RING_BYTES);
  pl->o = o;
  for (int k = 0; k < RING; k++)
    pl->jobs[k].fd = pl->jobs[k].spent_fd = -1;

  /* Signals go to this thread, which acts on them between products; a
   * stop also wakes the reader's waits (cli_io.c's pipe), and the reader
   * then closes the ring, which wakes this thread if it waits for it. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t tid;
  int err = pthread_create(&tid, NULL, reader, pl);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    log_error("cannot start the reading thread: %s", strerror(err));
    handoff_destroy(&pl->ho);
    free(pl);
    return EXIT_SYSTEM;
  }
  size_t done = 0;
  uint64_t slot;
  struct md5 m;
  bool md5_ok = md5_init(&m) == 0;
  bool stop = false;
  while (md5_ok && !stop && handoff_wait_item(&pl->ho, &slot)) {
    /* This job and those behind it that are ready, in one go. */
    struct job *js[BATCH];
    int codes[BATCH];
    size_t n = 0;
    do
      js[n++] = &pl->jobs[slot];
    while (n < BATCH && handoff_peek(&pl->ho, n, &slot));
    insert_batch(pq, js, n, &m, codes);
    for (size_t k = 0; k < n; k++) {
      bool stopped = codes[k] == JOB_STOPPED;
      if (!stopped)
        note(t, codes[k]);
      uint64_t held = js[k]->held;
      if (js[k]->cap > KEEP_MAX) { /* do not hoard big buffers */
        free(js[k]->buf);
        js[k]->buf = NULL;
        js[k]->cap = 0;
      }
      handoff_release(&pl->ho, held);
      done += !stopped;
      stop |= stopped || codes[k] == EXIT_SYSTEM;
    }
    if (stop || cli_stopping()) {
      stop = true;
      handoff_stop(&pl->ho);
    }
  }
  if (!md5_ok)
    handoff_stop(&pl->ho);
  pthread_join(tid, NULL);
  md5_fini(&m);
  /* Jobs read but not inserted (after a stop) may hold descriptors. */
  for (int k = 0; k < RING; k++) {
    if (pl->jobs[k].fd >= 0)
      close(pl->jobs[k].fd);
    if (pl->jobs[k].spent_fd >= 0)
      close(pl->jobs[k].spent_fd);
    free(pl->jobs[k].buf);
  }
  bool md5_failed = pl->md5_failed || !md5_ok;
  handoff_destroy(&pl->ho);
  free(pl);
  if (md5_failed) {
    log_error("cannot set up MD5 (OpenSSL)");
    return EXIT_MD5;
  }
  if (done < (size_t)o->nfiles && t->code != EXIT_SYSTEM) {
    log_notice("interrupted: %zu of %d files done", done, o->nfiles);
    return EXIT_SYSTEM;
  }
  return t->code;
}

/* One product from standard input, read to its end (or one byte past the
 * largest product). */
static int insert_stdin(pq_t *pq, const struct opts *o, struct tally *t) {
  struct job j = {
      .fd = -1, .spent_fd = -1, .hashed = true, .path = "standard input"};
  struct md5 m;
  if (md5_init(&m) != 0) {
    md5_fini(&m);
    log_error("cannot set up MD5 (OpenSSL)");
    return EXIT_MD5;
  }
  j.info.feedtype = o->feedtype;
  j.info.seqno = o->seqno;
  memcpy(j.info.origin, o->origin, sizeof j.info.origin);
  snprintf(j.info.ident, sizeof j.info.ident, "%s",
           o->ident ? o->ident : "STDIN");
  uint64_t limit =
      pq_max_product_size(pq, strlen(j.info.origin), strlen(j.info.ident));
  size_t first =
      (size_t)(o->stdin_size < limit + 1 ? o->stdin_size : limit + 1);
  int code = grow(&j, first, first) != 0
                 ? job_fail(&j, EXIT_SYSTEM, "cannot allocate %zu bytes", first)
                 : read_all(&j, STDIN_FILENO, 0, false, limit);
  if (code == JOB_STOPPED) {
    log_notice("interrupted: standard input not inserted");
    free(j.buf);
    md5_fini(&m);
    return EXIT_SYSTEM;
  }
  if (code == EXIT_OK) {
    j.info.arrival = pq_ts_now();
    const void *p = o->sig_from_ident ? (const void *)j.info.ident : j.buf;
    size_t len = o->sig_from_ident ? strlen(j.info.ident) : (size_t)j.info.size;
    if (md5_of(&m, p, len, j.info.signature) != 0)
      job_fail(&j, EXIT_SYSTEM, "MD5 of standard input failed");
  }
  code = insert(pq, &j, &m);
  note(t, code);
  free(j.buf);
  md5_fini(&m);
  return code;
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  uint64_t v;
  switch (ch) {
  case 'i':
    o->sig_from_ident = true;
    return 0;
  case 'f':
    return cli_parse_feedtype_some(c, usage_text, arg, &o->feedtype);
  case 'n':
    if (cli_parse_uint(c, "standard-input size", arg, SIZE_MAX / 2,
                       &o->stdin_size) != 0)
      return -1;
    if (o->stdin_size == 0) {
      cli_usage_error(c, usage_text, "standard-input size is zero");
      return -1;
    }
    return 0;
  case 'r': /* LDM: read() instead of mmap(); we always read */
    return 0;
  case 's':
    if (cli_parse_uint(c, "sequence number", arg, UINT32_MAX, &v) != 0)
      return -1;
    o->seqno = (uint32_t)v;
    return 0;
  default: /* -p */
    o->ident = arg;
    return 0;
  }
}

/* The files, if any. */
static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  (void)c;
  o->files = argv + optind;
  o->nfiles = argc - optind;
  return 0;
}

static const struct cli_spec spec = {":hivxl:q:f:n:rs:p:", usage_text, option,
                                     operands};

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.feedtype = PQ_FT_EXP, .stdin_size = STDIN_DEFAULT};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  cli_signals();
  const char *path = cli_queue_path(&c);
  if (path == NULL)
    return EXIT_SYSTEM;
  cli_hostname(&c, o.origin);

  pq_t *pq = cli_open_queue(path, 0, NULL);
  if (pq == NULL)
    return EXIT_PQ_OPEN;
  o.pq = pq;
  struct tally t = {0};
  int code =
      o.nfiles == 0 ? insert_stdin(pq, &o, &t) : insert_files(pq, &o, &t);
  if (o.nfiles > 1)
    log_info("inserted %zu products; %zu duplicates, %zu failures", t.inserted,
             t.dups, t.failed);
  if (pq_close(pq) != PQ_OK && code == EXIT_OK)
    code = EXIT_SYSTEM;
  return code;
}
