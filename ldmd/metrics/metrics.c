/*
 * metrics.c - the metrics file's mechanics: making it (a new file renamed
 * into place), opening it for reading with its header checked, the slots'
 * life (claim, bind, release: the top process's), a child's description
 * under its sequence number, and the snapshot readers take.  The hot-path
 * counters are inline in metrics.h; the rules are there too.
 */
#include "ldmd/metrics/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/metrics/ingester.h"
#include "pq/pq.h"

#define ALIGN 64
#define DESC_TRIES 8

struct ldmm_file {
  uint8_t *base;
  size_t size;
  ldmm_header *hdr;
  bool writable;
  char path[LDMM_PATH_MAX];
  dev_t dev;
  ino_t ino;
};

static size_t round_up(size_t n) {
  return (n + ALIGN - 1) / ALIGN * ALIGN;
}

static int64_t wall_us(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void copy_text(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src != NULL ? src : "");
}

int ldmm_default_path(const char *queue, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s.metrics", queue);

  return n < 0 || (size_t)n >= len ? -1 : 0;
}

static size_t file_size(uint32_t nslots) {
  return round_up(sizeof(ldmm_header)) +
         (size_t)nslots * round_up(sizeof(ldmm_slot)) +
         LDMM_NFEEDS * round_up(sizeof(ldmm_feed)) +
         LDMM_NINGESTERS * round_up(sizeof(ldmm_ingester));
}

static void init_header(ldmm_header *h, uint32_t nslots, const char *queue,
                        const char *version) {
  static const uint64_t bounds[LDMM_NBUCKETS] = LDMM_BOUNDS_US;

  memcpy(h->magic, LDMM_MAGIC, sizeof h->magic);
  h->version = LDMM_VERSION;
  h->byte_order = LDMM_BYTE_ORDER;
  h->header_size = (uint32_t)round_up(sizeof(ldmm_header));
  h->slot_size = (uint32_t)round_up(sizeof(ldmm_slot));
  h->feed_size = (uint32_t)round_up(sizeof(ldmm_feed));
  h->nslots = nslots;
  h->nfeeds = LDMM_NFEEDS;
  h->nbuckets = LDMM_NBUCKETS;
  h->slots_off = h->header_size;
  h->feeds_off = h->slots_off + (uint64_t)nslots * h->slot_size;
  h->ingester_size = (uint32_t)round_up(sizeof(ldmm_ingester));
  h->ningesters = LDMM_NINGESTERS;
  h->ingesters_off = h->feeds_off + (uint64_t)LDMM_NFEEDS * h->feed_size;
  h->start_us = wall_us();
  h->pid = (int32_t)getpid();
  memcpy(h->bounds_us, bounds, sizeof bounds);
  copy_text(h->queue_path, sizeof h->queue_path, queue);
  copy_text(h->version_text, sizeof h->version_text, version);
}

ldmm_file *ldmm_create(const char *path, uint32_t nslots,
                       const char *queue_path, const char *version, char *err,
                       size_t errlen) {
  char tmp[LDMM_PATH_MAX + 32];
  size_t size = file_size(nslots);
  ldmm_file *f;
  struct stat st;
  int fd, rc;
  void *p;

  if (nslots == 0 || strlen(path) >= LDMM_PATH_MAX) {
    snprintf(err, errlen, "cannot make the metrics file %s: %s", path,
             nslots == 0 ? "no slots" : "path too long");
    return NULL;
  }
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(err, errlen, "cannot make the metrics file %s: open: %s", tmp,
             strerror(errno));
    return NULL;
  }
  rc = posix_fallocate(fd, 0, (off_t)size);
  if (rc != 0) {
    snprintf(err, errlen, "cannot make the metrics file %s: fallocate: %s", tmp,
             strerror(rc));
    goto fail;
  }
  p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    snprintf(err, errlen, "cannot map the metrics file %s: mmap: %s", tmp,
             strerror(errno));
    goto fail;
  }
  memset(p, 0, size);
  init_header(p, nslots, queue_path, version);
  if (fstat(fd, &st) != 0 || rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot put the metrics file in place at %s: %s",
             path, strerror(errno));
    munmap(p, size);
    goto fail;
  }
  close(fd);
  f = calloc(1, sizeof *f);
  if (f == NULL) {
    snprintf(err, errlen, "cannot make the metrics file %s: %s", path,
             strerror(ENOMEM));
    munmap(p, size);
    (void)unlink(path);
    return NULL;
  }
  f->base = p;
  f->size = size;
  f->hdr = p;
  f->writable = true;
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  copy_text(f->path, sizeof f->path, path);
  return f;
fail:
  close(fd);
  (void)unlink(tmp);
  return NULL;
}

/* Is the header one this build reads?  @return NULL, or what is wrong */
static const char *bad_header(const ldmm_header *h, size_t size) {
  if (size < sizeof *h || memcmp(h->magic, LDMM_MAGIC, sizeof h->magic) != 0)
    return "not a metrics file (bad magic)";
  if (h->byte_order != LDMM_BYTE_ORDER)
    return "written with another byte order";
  if (h->version != LDMM_VERSION)
    return "another version of the format";
  if (h->header_size != round_up(sizeof(ldmm_header)) ||
      h->slot_size != round_up(sizeof(ldmm_slot)) ||
      h->feed_size != round_up(sizeof(ldmm_feed)) || h->nfeeds != LDMM_NFEEDS ||
      h->nbuckets != LDMM_NBUCKETS ||
      h->ingester_size != round_up(sizeof(ldmm_ingester)) ||
      h->ningesters != LDMM_NINGESTERS)
    return "sizes of another layout";
  if (h->slots_off != h->header_size ||
      h->feeds_off != h->slots_off + (uint64_t)h->nslots * h->slot_size ||
      h->ingesters_off != h->feeds_off + (uint64_t)LDMM_NFEEDS * h->feed_size ||
      h->ingesters_off + (uint64_t)LDMM_NINGESTERS * h->ingester_size > size)
    return "offsets past the end of the file";
  return NULL;
}

ldmm_file *ldmm_open(const char *path, char *err, size_t errlen) {
  return ldmm__open(path, false, err, errlen);
}

ldmm_file *ldmm__open(const char *path, bool rw, char *err, size_t errlen) {
  struct stat st;
  ldmm_file *f;
  const char *why;
  void *p;
  int fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);

  if (fd < 0) {
    snprintf(err, errlen, "cannot open the metrics file %s: %s", path,
             strerror(errno));
    return NULL;
  }
  if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ldmm_header)) {
    snprintf(err, errlen, "cannot read the metrics file %s: %s", path,
             st.st_size < (off_t)sizeof(ldmm_header) ? "too short"
                                                     : strerror(errno));
    close(fd);
    return NULL;
  }
  p = mmap(NULL, (size_t)st.st_size, rw ? PROT_READ | PROT_WRITE : PROT_READ,
           MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    snprintf(err, errlen, "cannot map the metrics file %s: mmap: %s", path,
             strerror(errno));
    return NULL;
  }
  why = bad_header(p, (size_t)st.st_size);
  f = why == NULL ? calloc(1, sizeof *f) : NULL;
  if (f == NULL) {
    snprintf(err, errlen, "cannot read the metrics file %s: %s", path,
             why != NULL ? why : strerror(ENOMEM));
    munmap(p, (size_t)st.st_size);
    return NULL;
  }
  f->base = p;
  f->size = (size_t)st.st_size;
  f->hdr = p;
  copy_text(f->path, sizeof f->path, path);
  return f;
}

void ldmm_set_http_addr(ldmm_file *f, const char *addr) {
  if (f != NULL && f->writable)
    copy_text(f->hdr->http_addr, sizeof f->hdr->http_addr, addr);
}

void ldmm_close(ldmm_file *f, bool remove) {
  struct stat st;

  if (f == NULL)
    return;
  if (remove && f->writable && stat(f->path, &st) == 0 && st.st_dev == f->dev &&
      st.st_ino == f->ino)
    (void)unlink(f->path);
  munmap(f->base, f->size);
  free(f);
}

ldmm_slot *ldmm_slot_at(ldmm_file *f, int index) {
  if (f == NULL || index < 0 || (uint32_t)index >= f->hdr->nslots)
    return NULL;
  return (ldmm_slot *)(f->base + f->hdr->slots_off +
                       (size_t)index * f->hdr->slot_size);
}

static const ldmm_slot *slot_const(const ldmm_file *f, uint32_t index) {
  return (const ldmm_slot *)(f->base + f->hdr->slots_off +
                             (size_t)index * f->hdr->slot_size);
}

ldmm_feed *ldmm_feeds(ldmm_file *f) {
  return f == NULL ? NULL : (ldmm_feed *)(f->base + f->hdr->feeds_off);
}

static void zero_slot(ldmm_slot *s) {
  unsigned i;

  atomic_store_explicit(&s->pid, 0, memory_order_relaxed);
  atomic_store_explicit(&s->kind, LDMM_KIND_CONNECTION, memory_order_relaxed);
  atomic_store_explicit(&s->start_us, wall_us(), memory_order_relaxed);
  s->peer[0] = '\0';
  s->feed[0] = '\0';
  atomic_store_explicit(&s->products, 0, memory_order_relaxed);
  atomic_store_explicit(&s->bytes, 0, memory_order_relaxed);
  atomic_store_explicit(&s->reconnections, 0, memory_order_relaxed);
  atomic_store_explicit(&s->cursor_us, 0, memory_order_relaxed);
  for (i = 0; i < LDMM_NCAUSES; i++)
    atomic_store_explicit(&s->refused[i], 0, memory_order_relaxed);
  for (i = 0; i < LDMM_NBUCKETS; i++)
    atomic_store_explicit(&s->latency.bucket[i], 0, memory_order_relaxed);
  atomic_store_explicit(&s->latency.sum_us, 0, memory_order_relaxed);
}

int ldmm_claim(ldmm_file *f) {
  uint32_t i;

  if (f == NULL || !f->writable)
    return -1;
  for (i = 0; i < f->hdr->nslots; i++) {
    ldmm_slot *s = ldmm_slot_at(f, (int)i);

    if (atomic_load_explicit(&s->state, memory_order_relaxed) != LDMM_FREE)
      continue;
    /* Readers skip a slot whose generation moves while they copy it. */
    atomic_fetch_add_explicit(&s->gen, 1, memory_order_relaxed);
    atomic_store_explicit(&s->state, LDMM_CLAIMED, memory_order_release);
    atomic_thread_fence(memory_order_release);
    zero_slot(s);
    return (int)i;
  }
  atomic_fetch_add_explicit(&f->hdr->no_slot, 1, memory_order_relaxed);
  return -1;
}

void ldmm_bind(ldmm_file *f, int slot, pid_t pid) {
  ldmm_slot *s = ldmm_slot_at(f, slot);

  if (s == NULL)
    return;
  atomic_store_explicit(&s->pid, (int32_t)pid, memory_order_relaxed);
  atomic_store_explicit(&s->state, LDMM_LIVE, memory_order_release);
}

void ldmm_release(ldmm_file *f, int slot) {
  ldmm_slot *s = ldmm_slot_at(f, slot);

  if (s == NULL)
    return;
  atomic_store_explicit(&s->state, LDMM_FREE, memory_order_release);
  atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
}

void ldmm_describe(ldmm_slot *s, enum ldmm_kind kind, const char *peer,
                   const char *feed) {
  uint32_t seq;

  if (s == NULL)
    return;
  seq = atomic_load_explicit(&s->desc_seq, memory_order_relaxed);
  atomic_store_explicit(&s->desc_seq, seq + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&s->kind, (uint32_t)kind, memory_order_relaxed);
  if (peer != NULL)
    copy_text(s->peer, sizeof s->peer, peer);
  if (feed != NULL)
    copy_text(s->feed, sizeof s->feed, feed);
  atomic_store_explicit(&s->desc_seq, seq + 2, memory_order_release);
}

/* ---------------------------------------------------------------------- */
/* Reading                                                                */
/* ---------------------------------------------------------------------- */

static void copy_hist(const ldmm_hist *h, ldmm_hist_copy *c) {
  unsigned i;

  c->count = 0;
  for (i = 0; i < LDMM_NBUCKETS; i++) {
    c->bucket[i] = atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    c->count += c->bucket[i];
  }
  c->sum_us = atomic_load_explicit(&h->sum_us, memory_order_relaxed);
}

/* The description of s, consistent (its sequence even and unmoved); if
 * it kept changing, or its writer died while it wrote it, an empty one. */
static void copy_desc(const ldmm_slot *s, ldmm_conn_copy *c) {
  int k;

  for (k = 0; k < DESC_TRIES; k++) {
    uint32_t seq = atomic_load_explicit(&s->desc_seq, memory_order_acquire);

    if (seq & 1)
      continue;
    c->kind =
        (enum ldmm_kind)atomic_load_explicit(&s->kind, memory_order_relaxed);
    memcpy(c->peer, s->peer, sizeof c->peer);
    memcpy(c->feed, s->feed, sizeof c->feed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->desc_seq, memory_order_relaxed) == seq) {
      c->peer[sizeof c->peer - 1] = '\0';
      c->feed[sizeof c->feed - 1] = '\0';
      if (c->kind >= LDMM_NKINDS)
        c->kind = LDMM_KIND_CONNECTION;
      return;
    }
  }
  c->kind = LDMM_KIND_CONNECTION;
  c->peer[0] = '\0';
  c->feed[0] = '\0';
}

/* Slot i into c.  @return 0, or -1 when it is not live or changed hands
 * during the copy */
static int copy_slot(const ldmm_slot *s, int i, ldmm_conn_copy *c) {
  uint32_t gen = atomic_load_explicit(&s->gen, memory_order_acquire);
  unsigned k;

  if (atomic_load_explicit(&s->state, memory_order_acquire) != LDMM_LIVE)
    return -1;
  memset(c, 0, sizeof *c);
  c->index = i;
  c->pid = (pid_t)atomic_load_explicit(&s->pid, memory_order_relaxed);
  c->start_us = atomic_load_explicit(&s->start_us, memory_order_relaxed);
  copy_desc(s, c);
  c->products = atomic_load_explicit(&s->products, memory_order_relaxed);
  c->bytes = atomic_load_explicit(&s->bytes, memory_order_relaxed);
  c->reconnections =
      atomic_load_explicit(&s->reconnections, memory_order_relaxed);
  c->cursor_us = atomic_load_explicit(&s->cursor_us, memory_order_relaxed);
  for (k = 0; k < LDMM_NCAUSES; k++)
    c->refused[k] = atomic_load_explicit(&s->refused[k], memory_order_relaxed);
  copy_hist(&s->latency, &c->latency);
  atomic_thread_fence(memory_order_acquire);
  if (atomic_load_explicit(&s->state, memory_order_relaxed) != LDMM_LIVE ||
      atomic_load_explicit(&s->gen, memory_order_relaxed) != gen)
    return -1;
  return c->pid > 0 ? 0 : -1;
}

int ldmm_snapshot_take(const ldmm_file *f, ldmm_snapshot *snap) {
  const ldmm_header *h = f->hdr;
  const ldmm_feed *feeds = (const ldmm_feed *)(f->base + h->feeds_off);
  uint32_t i;

  if (snap->cap < h->nslots) {
    ldmm_conn_copy *v = realloc(snap->conns, h->nslots * sizeof *v);

    if (v == NULL)
      return -1;
    snap->conns = v;
    snap->cap = h->nslots;
  }
  snap->start_us = h->start_us;
  snap->pid = h->pid;
  snap->no_slot = atomic_load_explicit(&h->no_slot, memory_order_relaxed);
  memcpy(snap->queue_path, h->queue_path, sizeof snap->queue_path);
  snap->queue_path[sizeof snap->queue_path - 1] = '\0';
  memcpy(snap->http_addr, h->http_addr, sizeof snap->http_addr);
  snap->http_addr[sizeof snap->http_addr - 1] = '\0';
  memcpy(snap->version, h->version_text, sizeof snap->version);
  snap->version[sizeof snap->version - 1] = '\0';
  memcpy(snap->bounds_us, h->bounds_us, sizeof snap->bounds_us);
  for (i = 0; i < LDMM_NFEEDS; i++) {
    const ldmm_feed *src = &feeds[i];
    ldmm_feed_copy *dst = &snap->feeds[i];
    unsigned k;

    dst->products = atomic_load_explicit(&src->products, memory_order_relaxed);
    dst->bytes = atomic_load_explicit(&src->bytes, memory_order_relaxed);
    for (k = 0; k < LDMM_NCAUSES; k++)
      dst->refused[k] =
          atomic_load_explicit(&src->refused[k], memory_order_relaxed);
    copy_hist(&src->latency, &dst->latency);
  }
  ldmm__ingesters_copy(f->base + h->ingesters_off, h->ingester_size, snap);
  snap->nconns = 0;
  for (i = 0; i < h->nslots; i++)
    if (copy_slot(slot_const(f, i), (int)i, &snap->conns[snap->nconns]) == 0)
      snap->nconns++;
  return 0;
}

void ldmm_snapshot_free(ldmm_snapshot *snap) {
  free(snap->conns);
  memset(snap, 0, sizeof *snap);
}

const char *ldmm_kind_name(enum ldmm_kind kind) {
  static const char *const names[LDMM_NKINDS] = {
      "connection", "upstream", "notifyme", "downstream", "requester"};

  return (unsigned)kind < LDMM_NKINDS ? names[kind] : "connection";
}

const char *ldmm_cause_name(enum ldmm_cause cause) {
  static const char *const names[LDMM_NCAUSES] = {
      "duplicate", "too_old", "too_big",   "unwanted",
      "no_room",   "invalid", "incomplete"};

  return (unsigned)cause < LDMM_NCAUSES ? names[cause] : "unknown";
}

void ldmm_feed_name(unsigned i, char *buf, size_t len) {
  if (i >= LDMM_FEED_OTHER)
    snprintf(buf, len, "OTHER");
  else
    (void)pq_feedtype_format(1u << i, buf, len);
}

ldmm_ingester *ldmm__ingester_at(ldmm_file *f, unsigned i) {
  if (f == NULL || i >= f->hdr->ningesters)
    return NULL;
  return (ldmm_ingester *)(f->base + f->hdr->ingesters_off +
                           (size_t)i * f->hdr->ingester_size);
}
