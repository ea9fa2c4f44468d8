/*
 * repro_waiters_leak.c - a reader killed while it sleeps in pq_wait() leaves
 * hd_waiters counted for ever (pq/wait.c pq_wait(); pq/repair.c does not
 * reset it).
 *
 * pq_wait() adds 1 to hd_waiters before it sleeps and subtracts it when it
 * returns; a SIGKILL in between never subtracts.  Neither the crash repair,
 * pq_check() nor pq_repair() recomputes the count (they cannot: waiters hold
 * no lock), so from then on every pq_commit() makes a FUTEX_WAKE system call
 * although nobody waits: the design's "a commit with no waiter makes no
 * syscall" is lost for the life of the queue, one more leak per killed
 * reader.  A fix: make a registration a lock (a waiter lock byte, counted by
 * probes as the writer bytes are), or let pq_wait() sleep in bounded slices
 * and have the waker tolerate a stale count only for a bounded time.
 *
 * The reader is killed once its bit is set in hd_sleepers (it is inside
 * pq_wait(), registered as asleep), never after a guessed time.
 *
 * Exit status 1 while the bug is present, 0 once fixed, 2 if the
 * reproduction cannot be set up.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"
#include "test/mp/repro/repro_util.h"

/* Number of sleeper bits set in the header. */
static uint32_t waiters(int fd) {
  uint64_t bits[PQ_MAX_WAITERS / 64];
  if (pread(fd, bits, sizeof bits, offsetof(struct pq_hdr, hd_sleepers)) !=
      (ssize_t)sizeof bits)
    return 0xffffffffu;
  uint32_t n = 0;
  for (unsigned i = 0; i < PQ_MAX_WAITERS / 64; i++)
    n += (uint32_t)__builtin_popcountll(bits[i]);
  return n;
}

/* Insert n products; their rate, or -1 (said) if an insert fails. */
static double insert_rate(pq_t *pq, unsigned base, unsigned n) {
  static char data[1024];
  double t0 = tu_now_s();
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.ident, sizeof info.ident, "p%u", base + i);
    info.size = sizeof data;
    memcpy(info.signature, &(unsigned){base + i}, sizeof(unsigned));
    int rc = pq_insert(pq, &info, data);
    if (rc != PQ_OK) {
      printf("insert %u: %s\n", base + i, pq_strerror(rc));
      return -1;
    }
  }
  return n / (tu_now_s() - t0);
}

int main(void) {
  char path[256];
  repro_path(path, sizeof path, "waiters");
  pq_error e;
  pq_t *pq = repro_create(path, 64 << 20, 16384);
  if (pq == NULL)
    return 2;
  pq_close(pq);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    perror(path);
    return 2;
  }
  repro_block_sigchld();
  pid_t kid = fork();
  if (kid == 0) {
    pq_t *r;
    if (pq_open(path, PQ_READONLY, &r, &e) != PQ_OK)
      _exit(2);
    pq_cursor_newest(r);
    pq_set_spin(r, 0);
    pq_wait(r, -1); /* sleeps, its bit set in hd_sleepers */
    _exit(3);       /* woken: nobody commits, so it must not be */
  }
  /* Kill it once it sleeps: its bit is set (or once it has exited). */
  int64_t end = tu_now_ms() + 10000;
  int status = 0;
  pid_t k = kid;
  while (waiters(fd) == 0 && tu_now_ms() < end &&
         repro_reap(&k, &status, 1, 0) == 1)
    repro_pause();
  if (k == 0 || waiters(fd) != 1) {
    char txt[32];
    printf("SETUP: the reader did not go to sleep in pq_wait() within 10 s "
           "(%s; %u sleeper bits)\n",
           k == 0 ? repro_status_text(status, txt, sizeof txt) : "running",
           waiters(fd));
    if (k > 0) {
      kill(kid, SIGKILL);
      waitpid(kid, NULL, 0);
    }
    unlink(path);
    return 2;
  }
  kill(kid, SIGKILL);
  waitpid(kid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    char txt[32];
    printf("SETUP: the reader ended by itself (%s), not by SIGKILL\n",
           repro_status_text(status, txt, sizeof txt));
    unlink(path);
    return 2;
  }

  if (pq_open(path, 0, &pq, &e) != PQ_OK) {
    printf("open: %s\n", e.pe_msg);
    return 2;
  }
  pq_check_report rep;
  uint64_t dropped;
  int crc = pq_check(pq, &rep);
  int rrc = pq_repair(pq, &dropped);
  uint32_t before = waiters(fd);
  /* The first commit finds the dead sleeper's bit, wakes nobody, and must
   * clear it; later commits then make no futex call. */
  if (insert_rate(pq, 0, 50000) < 0) { /* warm: fault the pages in */
    unlink(path);
    return 2;
  }
  uint32_t w = waiters(fd);
  double rate = insert_rate(pq, 50000, 50000);
  if (rate < 0) {
    unlink(path);
    return 2;
  }
  int bug = before != 1 || w != 0;
  printf("%s: no reader alive, pq_check %s, pq_repair %s, sleeper bits %u "
         "after the kill, %u after a commit; 1 KiB inserts: %.0f/s\n",
         bug ? "BUG" : "OK", pq_errname(crc), pq_errname(rrc), before, w, rate);
  close(fd);
  pq_close(pq);
  unlink(path);
  return bug;
}
