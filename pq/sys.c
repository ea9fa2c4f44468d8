/*
 * sys.c - the thin layer through which the library makes its system calls.
 * Each wrapper retries EINTR, opens with O_CLOEXEC, and can be made to fail
 * once by a test (pq__sys_inject) so that error paths are exercised without
 * a full disk or a kernel out of locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
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
  do
    fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

int pq__sys_ftruncate(int fd, uint64_t size) {
  if (pq__sys_injected("ftruncate"))
    return -1;
  if (size > (uint64_t)INT64_MAX) {
    errno = EFBIG;
    return -1;
  }
  int rc;
  do
    rc = ftruncate(fd, (off_t)size);
  while (rc < 0 && errno == EINTR);
  return rc;
}

int pq__sys_lock(int fd, int cmd, short type, uint64_t start, uint64_t len) {
  if (pq__sys_injected("lock"))
    return -1;
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = (off_t)start;
  fl.l_len = (off_t)len;
  int rc;
  do
    rc = fcntl(fd, cmd, &fl);
  while (rc < 0 && errno == EINTR);
  return rc;
}

int pq__sys_lock_held(int fd, short type, uint64_t start, uint64_t len) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = (off_t)start;
  fl.l_len = (off_t)len;
  int rc;
  do
    rc = fcntl(fd, F_OFD_GETLK, &fl);
  while (rc < 0 && errno == EINTR);
  if (rc < 0)
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
