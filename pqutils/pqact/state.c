/*
 * state.c - pqact's state file (state.h): reading it as LDM does, writing
 * it whole and atomically, keeping its record current in place with one
 * pwrite(2) per product, and the low-water mark over products whose
 * actions complete out of order (a ring of the products begun and not yet
 * passed by the mark, oldest first).
 */
#include "pqutils/pqact/state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"

/* A product begun and not yet passed by the mark. */
struct slot {
  uint64_t inserted_us;
  unsigned holds; /* parts still working on it; 0: done */
  bool failed;    /* a part's action failed */
};

struct pqact_state {
  char *path, *tmp;
  int fd;            /* the file being kept current, or -1 */
  size_t rec_len;    /* the length of its record (at offset hdr_len) */
  uint64_t mark;     /* insertion time recorded, 0 none */
  bool dirty;        /* a record written since the last fsync */
  bool write_failed; /* the last write failed (said once) */
  double synced_at;  /* monotonic time of the last fsync */
  /* the ring: products with tokens first_tok .. first_tok + n - 1 sit at
   * ring[(head + i) % cap] */
  struct slot *ring;
  size_t cap, head, n;
  uint64_t first_tok;
};

static const size_t hdr_len = sizeof PQACT_STATE_HEADER - 1;

static double monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- reading ---- */

enum pqact_state_found pqact_state_read(const char *path, uint64_t now_us,
                                        uint64_t *inserted_us) {
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return errno == ENOENT ? PQACT_STATE_ABSENT : PQACT_STATE_UNREADABLE;
  /* As LDM's: skip the lines that begin with '#', then scan the time
   * (fscanf skips blanks and newlines before it). */
  int c;
  while ((c = getc(f)) == '#') {
    while ((c = getc(f)) != EOF && c != '\n')
      ;
  }
  if (c != EOF)
    ungetc(c, f);
  long sec = 0, usec = 0;
  int got = fscanf(f, "%ld.%ld", &sec, &usec);
  int err = errno;
  bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) {
    errno = err;
    return PQACT_STATE_UNREADABLE;
  }
  if (got != 2 || usec < 0 || usec > 999999)
    return got == 2 && sec < 0 ? PQACT_STATE_NEGATIVE : PQACT_STATE_MALFORMED;
  if (sec < 0)
    return PQACT_STATE_NEGATIVE;
  if ((uint64_t)sec > (UINT64_MAX - 999999) / 1000000)
    return PQACT_STATE_FUTURE; /* past any clock */
  *inserted_us = (uint64_t)sec * 1000000 + (uint64_t)usec;
  return *inserted_us > now_us ? PQACT_STATE_FUTURE : PQACT_STATE_FOUND;
}

size_t pqact_state_format(uint64_t inserted_us, char *buf) {
  return (size_t)snprintf(buf, 32, "%" PRIu64 ".%06" PRIu64 "\n",
                          inserted_us / 1000000, inserted_us % 1000000);
}

/* ---- writing ---- */

struct pqact_state *pqact_state_new(const char *path) {
  struct pqact_state *st = calloc(1, sizeof *st);
  if (st == NULL)
    return NULL;
  size_t len = strlen(path);
  st->path = malloc(len + 1);
  st->tmp = malloc(len + sizeof ".tmp");
  st->cap = 64;
  st->ring = malloc(st->cap * sizeof *st->ring);
  if (st->path == NULL || st->tmp == NULL || st->ring == NULL) {
    pqact_state_free(st);
    return NULL;
  }
  memcpy(st->path, path, len + 1);
  memcpy(st->tmp, path, len);
  memcpy(st->tmp + len, ".tmp", sizeof ".tmp");
  st->fd = -1;
  return st;
}

void pqact_state_free(struct pqact_state *st) {
  if (st == NULL)
    return;
  if (st->fd >= 0)
    close(st->fd);
  free(st->ring);
  free(st->tmp);
  free(st->path);
  free(st);
}

/* Write all of buf at offset (retrying EINTR and short writes). */
static int pwrite_all(int fd, const char *buf, size_t len, off_t offset) {
  while (len > 0) {
    ssize_t n = pwrite(fd, buf, len, offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    buf += n;
    len -= (size_t)n;
    offset += n;
  }
  return 0;
}

/* fsync the directory that holds path, so that a rename in it is on disk. */
static int sync_dir(const char *path) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  errno = err;
  return rc;
}

/* The whole file, atomically, holding the mark; st->fd is then that file,
 * open for the records that follow.  0, or -1 with errno (what failed in
 * *what). */
static int write_whole(struct pqact_state *st, const char **what) {
  char buf[sizeof PQACT_STATE_HEADER + 32];
  memcpy(buf, PQACT_STATE_HEADER, hdr_len);
  size_t rec = pqact_state_format(st->mark, buf + hdr_len);
  *what = st->tmp;
  int fd = open(st->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return -1;
  if (pwrite_all(fd, buf, hdr_len + rec, 0) != 0 || fsync(fd) != 0) {
    int err = errno;
    close(fd);
    unlink(st->tmp);
    errno = err;
    return -1;
  }
  *what = st->path;
  if (rename(st->tmp, st->path) != 0) {
    int err = errno;
    close(fd);
    unlink(st->tmp);
    errno = err;
    return -1;
  }
  if (st->fd >= 0)
    close(st->fd);
  st->fd = fd;
  st->rec_len = rec;
  st->dirty = false;
  st->synced_at = monotonic();
  if (sync_dir(st->path) != 0) {
    *what = "its directory";
    return -1;
  }
  return 0;
}

/* Say a failed write once, and that it works again when it does. */
static void said(struct pqact_state *st, int rc, const char *what, int err) {
  if (rc != 0 && !st->write_failed)
    log_error("cannot write the state file \"%s\" (%s): %s", st->path, what,
              strerror(err));
  else if (rc == 0 && st->write_failed)
    log_notice("the state file \"%s\" is written again", st->path);
  st->write_failed = rc != 0;
}

/* Record the mark: in place if the file is open and the record keeps its
 * width, else the whole file. */
static void record(struct pqact_state *st) {
  char rec[32];
  size_t len = pqact_state_format(st->mark, rec);
  const char *what = "pwrite";
  int rc;
  if (st->fd >= 0 && len == st->rec_len) {
    rc = pwrite_all(st->fd, rec, len, (off_t)hdr_len);
    st->dirty = true;
  } else {
    rc = write_whole(st, &what);
  }
  said(st, rc, what, errno);
}

int pqact_state_save(struct pqact_state *st) {
  if (st->mark == 0)
    return 0;
  const char *what = "";
  int rc = write_whole(st, &what);
  said(st, rc, what, errno);
  return rc;
}

int pqact_state_sync(struct pqact_state *st, double min_interval_s) {
  if (st->fd < 0 || !st->dirty)
    return 0;
  double now = monotonic();
  if (now - st->synced_at < min_interval_s)
    return 0;
  int rc = fdatasync(st->fd);
  said(st, rc, "fdatasync", errno);
  if (rc == 0) {
    st->dirty = false;
    st->synced_at = now;
  }
  return rc;
}

/* ---- the low-water mark ---- */

static struct slot *slot_of(struct pqact_state *st, pqact_state_token t) {
  if (t == PQACT_STATE_NOTOKEN || t < st->first_tok ||
      t - st->first_tok >= st->n)
    return NULL;
  return &st->ring[(st->head + (size_t)(t - st->first_tok)) % st->cap];
}

/* Double the ring, keeping the order. */
static int grow(struct pqact_state *st) {
  size_t cap = st->cap * 2;
  struct slot *r = malloc(cap * sizeof *r);
  if (r == NULL)
    return -1;
  for (size_t i = 0; i < st->n; i++)
    r[i] = st->ring[(st->head + i) % st->cap];
  free(st->ring);
  st->ring = r;
  st->cap = cap;
  st->head = 0;
  return 0;
}

pqact_state_token pqact_state_begin(struct pqact_state *st,
                                    uint64_t inserted_us) {
  if (st->n == st->cap && grow(st) != 0) {
    log_error("cannot track a product for the state file: %s",
              strerror(ENOMEM));
    return PQACT_STATE_NOTOKEN;
  }
  st->ring[(st->head + st->n) % st->cap] =
      (struct slot){.inserted_us = inserted_us, .holds = 1};
  st->n++;
  return st->first_tok + st->n - 1;
}

void pqact_state_hold(struct pqact_state *st, pqact_state_token t) {
  struct slot *s = slot_of(st, t);
  if (s != NULL && s->holds > 0)
    s->holds++;
}

void pqact_state_release(struct pqact_state *st, pqact_state_token t, bool ok) {
  struct slot *s = slot_of(st, t);
  if (s == NULL || s->holds == 0)
    return;
  if (!ok)
    s->failed = true;
  if (--s->holds > 0 || t != st->first_tok)
    return;
  /* The oldest is done: pass it and every done one after it. */
  uint64_t mark = st->mark;
  while (st->n > 0 && st->ring[st->head].holds == 0) {
    const struct slot *d = &st->ring[st->head];
    if (!d->failed && d->inserted_us > mark)
      mark = d->inserted_us;
    st->head = (st->head + 1) % st->cap;
    st->n--;
    st->first_tok++;
  }
  if (mark != st->mark) {
    st->mark = mark;
    record(st);
  }
}

uint64_t pqact_state_mark(const struct pqact_state *st) {
  return st->mark;
}

size_t pqact_state_pending(const struct pqact_state *st) {
  return st->n;
}
