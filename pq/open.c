/*
 * open.c - the life of a handle: creating a queue file with all of its
 * space reserved, opening one (refusing anything that is not a sound queue
 * before mapping it, and reserving the space of one left sparse), closing,
 * and telling a handle inherited across fork() from one owned by this
 * process.  A shared mapping of a file with holes dies of SIGBUS when a
 * page of a hole is first touched on a full file system (LDM issue #79):
 * no queue is mapped with holes a full tmpfs could not fill.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "pq/internal.h"

/* ---- fork detection: a process-wide generation bumped in every child ---- */
static atomic_uint fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void) {
  atomic_fetch_add(&fork_gen, 1);
}

static void register_fork_handler(void) {
  (void)pthread_atfork(NULL, NULL, on_fork_child);
}

unsigned pq__fork_generation(void) {
  (void)pthread_once(&fork_once, register_fork_handler);
  return atomic_load(&fork_gen);
}

int pq__check_owner(pq_t *pq) {
  if (pq == NULL)
    return PQ_INVAL;
  if (pq->fork_gen != atomic_load(&fork_gen))
    return PQ__FAIL(pq, PQ_FORKED, 0, "handle of %s used after fork()",
                    pq->path);
  return PQ_OK;
}

int pq__check_call(pq_t *pq, bool args_ok, const char *bad_args) {
  int rc = pq__check_owner(pq);
  if (rc == PQ_OK && !args_ok)
    rc = PQ__FAIL(pq, PQ_INVAL, 0, "%s", bad_args);
  return rc;
}

int pq__check_write_call(pq_t *pq, bool args_ok, const char *bad_args) {
  int rc = pq__check_call(pq, args_ok, bad_args);
  if (rc == PQ_OK && pq->readonly)
    rc = PQ__FAIL(pq, PQ_NOWRITE, 0, "%s is open read-only", pq->path);
  return rc;
}

uint64_t pq__now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec < 0
             ? 0
             : (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- creation ---- */

static int check_room(const char *path, uint64_t need, pq_error *err) {
  char *copy = strdup(path);
  if (copy == NULL)
    return pq__fail(err, PQ_NOMEM, 0, "creating %s", path);
  struct statvfs sv;
  int rc = pq__sys_statvfs(dirname(copy), &sv);
  int saved = errno;
  free(copy);
  if (rc < 0)
    return pq__fail(err, PQ_SYSTEM, saved, "statvfs for %s", path);
  uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
  if (need > avail)
    return pq__fail(err, PQ_NOSPACE, ENOSPC,
                    "%s: the queue needs %llu bytes, the file system has "
                    "%llu free",
                    path, (unsigned long long)need, (unsigned long long)avail);
  return PQ_OK;
}

/* A code for a failure to allocate the file's blocks. */
static int space_code(int errnum) {
  return errnum == ENOSPC || errnum == EDQUOT ? PQ_NOSPACE : PQ_SYSTEM;
}

static void init_file(uint8_t *base, const struct pq__geometry *g) {
  struct pq_hdr *h = (struct pq_hdr *)base;
  h->hd_magic = PQ_MAGIC;
  h->hd_version = PQ_VERSION_NUM;
  h->hd_hdr_size = sizeof *h;
  h->hd_layout = pq__layout_signature();
  h->hd_file_size = g->file_size;
  h->hd_nslots = g->nslots;
  h->hd_levels = g->levels;
  h->hd_node_stride = g->node_stride;
  h->hd_hash_size = g->hash_size;
  h->hd_slot_off = g->slot_off;
  h->hd_node_off = g->node_off;
  h->hd_rlist_off = g->rlist_off;
  h->hd_hash_off = g->hash_off;
  h->hd_data_off = g->data_off;
  h->hd_data_size = g->data_size;
  h->hd_created_us = (int64_t)pq__now_us();
  h->hd_csum = pq__hdr_checksum(h);

  struct pq_slot *slots = (struct pq_slot *)(base + g->slot_off);
  struct pq_rlink *rl = (struct pq_rlink *)(base + g->rlist_off);
  uint32_t sent = (uint32_t)g->nslots;
  for (uint32_t i = 0; i < sent; i++) {
    pq__slot_publish(&slots[i], PQ_SLOT_FREE);
    rl[i].rl_prev = PQ_NIL;
    rl[i].rl_next = i + 1 < sent ? i + 1 : PQ_NIL; /* free stack: 0 on top */
  }
  rl[sent].rl_prev = rl[sent].rl_next = sent;
  uint32_t *head =
      (uint32_t *)(base + g->node_off + g->nslots * g->node_stride);
  for (unsigned l = 0; l <= g->levels; l++)
    head[l] = PQ_NIL;
  for (unsigned l = 0; l < PQ_MAX_LEVELS; l++)
    h->hd_tails[l] = sent;
  h->hd_intent_slot = PQ_NIL;
  h->hd_head_prev = sent;
  h->hd_free_top = 0;
  h->hd_nfree_slots = g->nslots;
  h->hd_minempty = g->nslots;
  h->hd_nfree_regions = h->hd_maxfree_regions = 1; /* all of the data area */
  h->hd_mvrt_us = -1;
}

int pq_create(const char *path, const pq_create_opts *opts, pq_t **pqp,
              pq_error *err) {
  if (path == NULL || opts == NULL || pqp == NULL)
    return pq__fail(err, PQ_INVAL, 0, "pq_create: NULL argument");
  *pqp = NULL;
  uint64_t slots =
      opts->pc_slots ? opts->pc_slots : pq_default_slots(opts->pc_data_size);
  struct pq__geometry g;
  int rc = pq__geometry(opts->pc_data_size, slots, &g);
  if (rc == PQ_TOOSMALL)
    return pq__fail(err, rc, 0,
                    "%s: %llu bytes and %llu slots is too small (at least "
                    "%u bytes and %u slots)",
                    path, (unsigned long long)opts->pc_data_size,
                    (unsigned long long)slots, PQ_MIN_DATA_SIZE, PQ_MIN_SLOTS);
  if (rc != PQ_OK)
    return pq__fail(err, rc, 0,
                    "%s: %llu bytes and %llu slots is too large (at most "
                    "%u slots)",
                    path, (unsigned long long)opts->pc_data_size,
                    (unsigned long long)slots, PQ_MAX_SLOTS);
  if (!(opts->pc_flags & PQ_CLOBBER) && pq__sys_access(path, F_OK) == 0)
    return pq__fail(err, PQ_EXISTS, 0, "%s exists (clobber not asked)", path);
  rc = check_room(path, g.file_size, err);
  if (rc != PQ_OK)
    return rc;

  /* Build the file under a temporary name, then move it into place. */
  size_t tlen = strlen(path) + 32;
  char *tmp = malloc(tlen);
  if (tmp == NULL)
    return pq__fail(err, PQ_NOMEM, 0, "creating %s", path);
  static atomic_uint serial;
  snprintf(tmp, tlen, "%s.new%ld.%u", path, (long)getpid(),
           atomic_fetch_add(&serial, 1));
  /* Owner and group only: a queue holds every product, which other local
   * users have no business reading (docs/security.md, "Abuse"). */
  unsigned mode = opts->pc_mode ? opts->pc_mode : 0660;
  int fd = pq__sys_open(tmp, O_RDWR | O_CREAT | O_EXCL, mode);
  if (fd < 0) {
    rc = pq__fail(err, PQ_SYSTEM, errno, "open %s", tmp);
    free(tmp);
    return rc;
  }
  /* Every block of the file is allocated now, so that no page of the
   * mapping can be missing later (the file is not written: fast). */
  if (pq__sys_fallocate(fd, 0, g.file_size, true) < 0) {
    int saved = errno;
    rc = pq__fail(err, space_code(saved), saved,
                  "fallocate of %llu bytes for %s",
                  (unsigned long long)g.file_size, path);
    goto fail;
  }
  uint8_t *base = pq__sys_mmap((size_t)g.data_off, PROT_READ | PROT_WRITE, fd);
  if (base == MAP_FAILED) {
    rc = pq__fail(err, PQ_SYSTEM, errno, "mmap %s", tmp);
    goto fail;
  }
  init_file(base, &g);
  pq__sys_munmap(base, (size_t)g.data_off);
  pq__sys_close(fd);
  fd = -1;
  if (opts->pc_flags & PQ_CLOBBER) {
    if (pq__sys_rename(tmp, path) < 0) {
      rc = pq__fail(err, PQ_SYSTEM, errno, "rename %s to %s", tmp, path);
      goto fail;
    }
  } else {
    if (pq__sys_link(tmp, path) < 0) {
      rc = errno == EEXIST
               ? pq__fail(err, PQ_EXISTS, 0, "%s exists (clobber not asked)",
                          path)
               : pq__fail(err, PQ_SYSTEM, errno, "link %s to %s", tmp, path);
      goto fail;
    }
    pq__sys_unlink(tmp);
  }
  free(tmp);
  return pq_open(path, 0, pqp, err);

fail:
  if (fd >= 0)
    pq__sys_close(fd);
  pq__sys_unlink(tmp);
  free(tmp);
  return rc;
}

/* ---- opening ---- */

/*
 * A queue file with holes (made sparse by an older build, or copied with
 * holes) would die of SIGBUS at the first touch of a hole once its file
 * system is full: allocate the holes now, or refuse the file if this
 * handle cannot write it.  A file system that cannot allocate ahead
 * (EOPNOTSUPP) leaves the file as it is: nothing better can be done there.
 */
static int reserve_holes(pq_t *pq, const struct stat *st, pq_error *err) {
  uint64_t size = (uint64_t)st->st_size;
  uint64_t allocated = (uint64_t)st->st_blocks * 512u;
  if (allocated >= size)
    return PQ_OK;
  if (!pq->map_writable)
    return pq__fail(err, PQ_NOSPACE, 0,
                    "%s has holes (%llu of its %llu bytes allocated) and "
                    "this process may not write it to fill them: open it "
                    "first as a user who may write it",
                    pq->path, (unsigned long long)allocated,
                    (unsigned long long)size);
  if (pq__sys_fallocate(pq->fd, 0, size, false) < 0 && errno != EOPNOTSUPP) {
    int saved = errno;
    return pq__fail(err, space_code(saved), saved,
                    "%s has holes (%llu of its %llu bytes allocated): "
                    "fallocate of the rest",
                    pq->path, (unsigned long long)allocated,
                    (unsigned long long)size);
  }
  return PQ_OK;
}

static int map_queue(pq_t *pq, pq_error *err) {
  struct stat st;
  if (pq__sys_fstat(pq->fd, &st) < 0)
    return pq__fail(err, PQ_SYSTEM, errno, "fstat %s", pq->path);
  if (!S_ISREG(st.st_mode))
    return pq__fail(err, PQ_FORMAT, 0, "%s is not a regular file", pq->path);
  if ((uint64_t)st.st_size < sizeof(struct pq_hdr))
    return pq__fail(err, PQ_FORMAT, 0,
                    "%s is %lld bytes: too small to be a product queue",
                    pq->path, (long long)st.st_size);
  struct pq_hdr h;
  if (pq__sys_pread(pq->fd, &h, sizeof h, 0) < 0)
    return pq__fail(err, PQ_SYSTEM, errno, "read header of %s", pq->path);
  pq_error local;
  int rc = pq__hdr_validate(&h, (uint64_t)st.st_size, &local);
  if (rc != PQ_OK)
    return pq__fail(err, rc, 0, "%s: %s", pq->path, local.pe_msg);
  if (h.hd_file_size > SIZE_MAX)
    return pq__fail(err, PQ_FORMAT, 0, "%s: too large to map", pq->path);
  rc = reserve_holes(pq, &st, err);
  if (rc != PQ_OK)
    return rc;
  int prot = PROT_READ | (pq->map_writable ? PROT_WRITE : 0);
  void *base = pq__sys_mmap((size_t)h.hd_file_size, prot, pq->fd);
  if (base == MAP_FAILED)
    return pq__fail(err, PQ_SYSTEM, errno, "mmap %s", pq->path);
  pq->base = base;
  pq->map_size = h.hd_file_size;
  pq->hdr = base;
  pq->wgen = (uint32_t *)(pq->base + PQ_WGEN_OFF);
  pq->slots = (struct pq_slot *)(pq->base + h.hd_slot_off);
  pq->nodes = pq->base + h.hd_node_off;
  pq->rl = (struct pq_rlink *)(pq->base + h.hd_rlist_off);
  pq->hash = (uint64_t *)(pq->base + h.hd_hash_off);
  pq->data = pq->base + h.hd_data_off;
  pq->nslots = (uint32_t)h.hd_nslots;
  pq->levels = (uint32_t)h.hd_levels;
  pq->node_stride = h.hd_node_stride;
  pq->hash_mask = h.hd_hash_size - 1;
  pq->data_off = h.hd_data_off;
  pq->data_size = h.hd_data_size;
  /* Huge pages where the file system allows them (tmpfs mounted with
   * huge=advise, or within_size/always): a process then maps the queue 2 MiB
   * per step, which a relay's new connection feels (see populate.c). */
  (void)pq__sys_madvise(pq->base, (size_t)h.hd_file_size, MADV_HUGEPAGE);
  /* The indexes are touched by every operation: fault them in now. */
  (void)pq__sys_madvise(pq->base, (size_t)h.hd_data_off, MADV_WILLNEED);
  pq__populate_init(pq);
  return PQ_OK;
}

static int open_fd(pq_t *pq, unsigned flags, pq_error *err) {
  if (!(flags & PQ_READONLY)) {
    pq->fd = pq__sys_open(pq->path, O_RDWR, 0);
    pq->map_writable = pq->fd >= 0;
  } else {
    /* A reader maps writable when it may, to sleep on the futex word and
     * repair after a crash; it never changes a product. */
    pq->fd = pq__sys_open(pq->path, O_RDWR, 0);
    pq->map_writable = pq->fd >= 0;
    if (pq->fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
      pq->fd = pq__sys_open(pq->path, O_RDONLY, 0);
  }
  if (pq->fd < 0)
    return pq__fail(err, PQ_SYSTEM, errno, "open %s", pq->path);
  return PQ_OK;
}

int pq_open(const char *path, unsigned flags, pq_t **pqp, pq_error *err) {
  if (path == NULL || pqp == NULL || (flags & ~PQ_READONLY))
    return pq__fail(err, PQ_INVAL, 0, "pq_open: bad argument");
  *pqp = NULL;
  pq_t *pq = calloc(1, sizeof *pq);
  if (pq == NULL || (pq->path = strdup(path)) == NULL) {
    free(pq);
    return pq__fail(err, PQ_NOMEM, 0, "opening %s", path);
  }
  pq->fd = -1;
  pq->writer = -1;
  pq->waiter = -1;
  pq->readonly = (flags & PQ_READONLY) != 0;
  pq->fork_gen = pq__fork_generation();
  pq->cursor_slot = PQ_NIL;
  pq->spin_us = 50;
  pq->err.pe_code = PQ_OK;
  int rc = open_fd(pq, flags, err);
  if (rc == PQ_OK)
    rc = map_queue(pq, err);
  if (rc == PQ_OK && !pq->readonly) {
    rc = pq__writer_acquire(pq);
    if (rc == PQ_OK)
      rc = pq__ctl_lock(pq, true);
    if (rc == PQ_OK) {
      pq->writer_gen = ++pq->wgen[pq->writer];
      pq__ctl_unlock(pq);
    }
    if (rc != PQ_OK)
      pq__fail(err, rc, pq->err.pe_errno, "%s", pq->err.pe_msg);
  }
  if (rc != PQ_OK) {
    pq_close(pq);
    return rc;
  }
  *pqp = pq;
  return PQ_OK;
}

int pq_close(pq_t *pq) {
  if (pq == NULL)
    return PQ_OK;
  int rc = pq__check_owner(pq);
  if (rc == PQ_OK) {
    if (pq->has_resv) {
      pq_resv r = {.pr_slot = pq->resv_slot, .pr_key = pq->resv_key};
      (void)pq_discard(pq, &r);
    }
    pq__prod_unlock(pq);
    pq__ctl_unlock(pq);
  }
  /* In a child, unmapping and closing touch only the child: the parent's
   * open file description and its locks live on. */
  if (pq->base != NULL)
    pq__sys_munmap(pq->base, (size_t)pq->map_size);
  if (pq->fd >= 0)
    pq__sys_close(pq->fd);
  pq__populate_free(pq);
  free(pq->path);
  free(pq);
  return rc;
}

const pq_error *pq_last_error(const pq_t *pq) {
  return &pq->err;
}

int pq_fd(const pq_t *pq) {
  return pq->fd;
}

const char *pq_path(const pq_t *pq) {
  return pq->path;
}

uint64_t pq_data_size(const pq_t *pq) {
  return pq->data_size;
}

uint64_t pq_slot_count(const pq_t *pq) {
  return pq->nslots;
}
