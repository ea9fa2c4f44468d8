/*
 * sys.c - the thin layer through which the library makes its system calls.
 * Each wrapper retries EINTR, opens with O_CLOEXEC, and can be made to fail
 * once by a test (pq__sys_inject, by the wrapper's name without pq__sys_)
 * so that error paths are exercised without a full disk or a kernel out of
 * locks.  The calls that release something (close, munmap, unlink) and the
 * advice to the kernel (madvise) cannot usefully fail and take no
 * injection.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "pq/internal.h"

/* Pending injected failure of this thread: test hook only. */
struct injection {
  // cppcheck-suppress unusedStructMember
  char call[16]; /* name of the wrapper that fails next, "" for none */
  // cppcheck-suppress unusedStructMember
  int errnum; /* errno it fails with */
};
static _Thread_local struct injection injected;

/* Make the call again while it fails with EINTR; its last result in rc. */
#define RETRY_EINTR(rc, call)                                                  \
  do                                                                           \
    (rc) = (call);                                                             \
  while ((rc) < 0 && errno == EINTR)

void pq__sys_inject(const char *call, int errnum) {
  if (call == NULL) {
    injected.call[0] = '\0';
    return;
  }
  strncpy(injected.call, call, sizeof injected.call - 1);
  injected.call[sizeof injected.call - 1] = '\0';
  injected.errnum = errnum;
}

int pq__sys_injected(const char *call) {
  if (injected.call[0] == '\0' || strcmp(injected.call, call) != 0)
    return 0;
  injected.call[0] = '\0';
  errno = injected.errnum;
  return -1;
}

int pq__sys_open(const char *path, int flags, unsigned mode) {
  if (pq__sys_injected("open"))
    return -1;
  int fd;
  RETRY_EINTR(fd, open(path, flags | O_CLOEXEC, (mode_t)mode));
  return fd;
}

int pq__sys_close(int fd) {
  /* Not retried on EINTR: Linux releases the descriptor even then. */
  return close(fd);
}

int pq__sys_fstat(int fd, struct stat *st) {
  if (pq__sys_injected("fstat"))
    return -1;
  return fstat(fd, st);
}

int pq__sys_fstatfs(int fd, struct statfs *st) {
  if (pq__sys_injected("fstatfs"))
    return -1;
  int rc;
  RETRY_EINTR(rc, fstatfs(fd, st));
  return rc;
}

int pq__sys_statvfs(const char *path, struct statvfs *st) {
  if (pq__sys_injected("statvfs"))
    return -1;
  int rc;
  RETRY_EINTR(rc, statvfs(path, st));
  return rc;
}

int pq__sys_access(const char *path, int mode) {
  if (pq__sys_injected("access"))
    return -1;
  return access(path, mode);
}

int pq__sys_pread(int fd, void *buf, size_t len, uint64_t off) {
  if (pq__sys_injected("pread"))
    return -1;
  if (off > (uint64_t)INT64_MAX || len > (size_t)INT64_MAX - off) {
    errno = EINVAL;
    return -1;
  }
  uint8_t *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, p + done, len - done, (off_t)(off + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break; /* end of file */
    done += (size_t)n;
  }
  if (done < len) {
    errno = EIO; /* the file is shorter than asked */
    return -1;
  }
  return 0;
}

int pq__sys_fallocate(int fd, uint64_t off, uint64_t len, bool emulate) {
  if (pq__sys_injected("fallocate"))
    return -1;
  if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) {
    errno = EFBIG;
    return -1;
  }
  int rc;
  RETRY_EINTR(rc, fallocate(fd, 0, (off_t)off, (off_t)len));
  if (rc == 0 || errno != EOPNOTSUPP || !emulate)
    return rc;
  /* glibc's emulation reads a byte of each block and writes it back if it
   * is zero: sound only while nobody else writes the file.  It returns the
   * error instead of setting errno. */
  do
    rc = posix_fallocate(fd, (off_t)off, (off_t)len);
  while (rc == EINTR);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return 0;
}

void *pq__sys_mmap(size_t len, int prot, int fd) {
  if (pq__sys_injected("mmap"))
    return MAP_FAILED;
  return mmap(NULL, len, prot, MAP_SHARED, fd, 0);
}

void pq__sys_munmap(void *addr, size_t len) {
  /* Fails only for a range that is not a mapping: a bug, not a state. */
  (void)munmap(addr, len);
}

int pq__sys_madvise(void *addr, size_t len, int advice) {
  return madvise(addr, len, advice);
}

int pq__sys_rename(const char *from, const char *to) {
  if (pq__sys_injected("rename"))
    return -1;
  return rename(from, to);
}

int pq__sys_link(const char *from, const char *to) {
  if (pq__sys_injected("link"))
    return -1;
  return link(from, to);
}

int pq__sys_unlink(const char *path) {
  return unlink(path);
}

/* fcntl() on the byte range [start, start + len) of fd, fl filled in for
 * it; EINTR retried. */
static int range_lock(int fd, int cmd, struct flock *fl, short type,
                      uint64_t start, uint64_t len) {
  memset(fl, 0, sizeof *fl);
  fl->l_type = type;
  fl->l_whence = SEEK_SET;
  fl->l_start = (off_t)start;
  fl->l_len = (off_t)len;
  int rc;
  RETRY_EINTR(rc, fcntl(fd, cmd, fl));
  return rc;
}

int pq__sys_lock(int fd, int cmd, short type, uint64_t start, uint64_t len) {
  if (pq__sys_injected("lock"))
    return -1;
  struct flock fl;
  return range_lock(fd, cmd, &fl, type, start, len);
}

int pq__sys_lock_held(int fd, short type, uint64_t start, uint64_t len) {
  if (pq__sys_injected("lock_held"))
    return -1;
  struct flock fl;
  if (range_lock(fd, F_OFD_GETLK, &fl, type, start, len) < 0)
    return -1;
  return fl.l_type != F_UNLCK;
}

int pq__futex_wait(uint32_t *word, uint32_t expected, int timeout_ms) {
  struct timespec ts, *tsp = NULL;
  if (timeout_ms >= 0) {
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
    tsp = &ts;
  }
  /* Not FUTEX_PRIVATE: the word is in a shared file mapping. */
  long rc = syscall(SYS_futex, word, FUTEX_WAIT, expected, tsp, NULL, 0);
  return rc < 0 ? -1 : 0;
}

int pq__futex_wake(uint32_t *word) {
  long rc = syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  return rc < 0 ? -1 : (int)rc;
}
