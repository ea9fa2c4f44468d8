/*
 * repro_util.h - what the bug reproductions of test/mp/repro/ share.  So
 * that they wait for events, never for a time: how many lock requests are
 * blocked on a file (the "->" lines of /proc/locks for its device and
 * inode: a process is inside fcntl(F_OFD_SETLKW)), polled until a count is
 * reached or a deadline passes (test/lib/tu_clock.h); and reaping
 * children, each with its exit status, until a deadline (sigtimedwait on
 * SIGCHLD, which the program blocks before it forks).  And the queue of a
 * reproduction, and a read callback that does nothing.  Header-only; exit
 * statuses of the programs: 0 fixed, 1 the bug is present, 2 the reproduction
 * could not be set up.
 */
#ifndef TEST_MP_REPRO_UTIL_H
#define TEST_MP_REPRO_UTIL_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/lib/tu_clock.h"

/* A short pause between two looks at something that sends no event. */
static inline void repro_pause(void) {
  struct timespec ts = {0, 2 * 1000 * 1000};

  nanosleep(&ts, NULL);
}

/* Lock requests blocked on path now, or -1 if /proc/locks cannot be read. */
static inline int repro_lock_waiters(const char *path) {
  struct stat st;
  char id[64], line[256];
  FILE *f;
  int n = 0;

  if (stat(path, &st) != 0 || (f = fopen("/proc/locks", "r")) == NULL)
    return -1;
  snprintf(id, sizeof id, " %02x:%02x:%llu ", major(st.st_dev),
           minor(st.st_dev), (unsigned long long)st.st_ino);
  while (fgets(line, sizeof line, f) != NULL) {
    /* "N: -> TYPE ...": blocked (indented further when it waits behind
     * another blocked request) */
    const char *p = strchr(line, ':');

    if (p == NULL)
      continue;
    p += strspn(p + 1, " ") + 1;
    if (strncmp(p, "-> ", 3) == 0 && strstr(line, id) != NULL)
      n++;
  }
  fclose(f);
  return n;
}

/* Wait until at least `want` lock requests are blocked on path.
 * @return true once they are, false at the deadline */
static inline bool repro_wait_lock_waiters(const char *path, int want,
                                           int timeout_ms) {
  int64_t end = tu_now_ms() + timeout_ms;

  for (;;) {
    int n = repro_lock_waiters(path);

    if (n >= want)
      return true;
    if (n < 0 || tu_now_ms() >= end)
      return false;
    repro_pause();
  }
}

/* Block SIGCHLD (before the forks), so that repro_reap() can wait for it. */
static inline void repro_block_sigchld(void) {
  sigset_t s;

  sigemptyset(&s);
  sigaddset(&s, SIGCHLD);
  sigprocmask(SIG_BLOCK, &s, NULL);
}

/*
 * Reap the children kid[0..n) (0: already reaped) until all are or
 * timeout_ms passes; each status goes into status[k], and kid[k] becomes
 * 0.  @return how many are left running
 */
static inline int repro_reap(pid_t *kid, int *status, int n, int timeout_ms) {
  int64_t end = tu_now_ms() + timeout_ms;
  sigset_t s;

  sigemptyset(&s);
  sigaddset(&s, SIGCHLD);
  for (;;) {
    int left = 0;

    for (int k = 0; k < n; k++)
      if (kid[k] > 0) {
        if (waitpid(kid[k], &status[k], WNOHANG) == kid[k])
          kid[k] = 0;
        else
          left++;
      }
    int64_t now = tu_now_ms();
    if (left == 0 || now >= end)
      return left;
    struct timespec ts = {(time_t)((end - now) / 1000),
                          (long)((end - now) % 1000) * 1000000L};
    if (sigtimedwait(&s, NULL, &ts) < 0 && errno != EAGAIN && errno != EINTR)
      return left;
  }
}

/* "/dev/shm/repro_<tag>.<pid>.pq" into path. */
static inline void repro_path(char *path, size_t len, const char *tag) {
  snprintf(path, len, "/dev/shm/repro_%s.%ld.pq", tag, (long)getpid());
}

/* A new queue at path, replacing any, of size bytes and slots slots.
 * @return its handle, or NULL (said on stdout: a setup failure) */
static inline pq_t *repro_create(const char *path, uint64_t size,
                                 uint64_t slots) {
  pq_create_opts o = {
      .pc_data_size = size, .pc_slots = slots, .pc_flags = PQ_CLOBBER};
  pq_t *pq = NULL;
  pq_error e;

  if (pq_create(path, &o, &pq, &e) != PQ_OK) {
    printf("create: %s\n", e.pe_msg);
    return NULL;
  }
  return pq;
}

/* A pq_next() or pq_find() callback that does nothing: the read is only
 * there to hold its product, or to walk. */
static inline int repro_noop(const pq_prod_info *info, const void *data,
                             const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  (void)place;
  (void)arg;
  return 0;
}

/* A child's status, said plainly ("exit 3", "signal 9"). */
static inline const char *repro_status_text(int status, char *buf, size_t len) {
  if (WIFEXITED(status))
    snprintf(buf, len, "exit %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(buf, len, "signal %d", WTERMSIG(status));
  else
    snprintf(buf, len, "status 0x%x", (unsigned)status);
  return buf;
}

#endif /* TEST_MP_REPRO_UTIL_H */
