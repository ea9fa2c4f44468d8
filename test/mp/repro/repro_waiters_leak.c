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
 * Exit status 1 while the bug is present, 0 once fixed.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"

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

static double insert_rate(pq_t *pq, unsigned base, unsigned n) {
  static char data[1024];
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.ident, sizeof info.ident, "p%u", base + i);
    info.size = sizeof data;
    memcpy(info.signature, &(unsigned){base + i}, sizeof(unsigned));
    pq_insert(pq, &info, data);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  return n / ((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
}

int main(void) {
  char path[256];
  snprintf(path, sizeof path, "/dev/shm/repro_waiters.%ld.pq", (long)getpid());
  pq_create_opts o = {
      .pc_data_size = 64 << 20, .pc_slots = 16384, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error e;
  if (pq_create(path, &o, &pq, &e) != PQ_OK) {
    printf("create: %s\n", e.pe_msg);
    return 2;
  }
  pq_close(pq);
  pid_t kid = fork();
  if (kid == 0) {
    pq_t *r;
    if (pq_open(path, PQ_READONLY, &r, &e) != PQ_OK)
      _exit(2);
    pq_cursor_newest(r);
    pq_set_spin(r, 0);
    pq_wait(r, -1); /* sleeps, its bit set in hd_sleepers */
    _exit(0);
  }
  usleep(200000);
  kill(kid, SIGKILL);
  waitpid(kid, NULL, 0);

  if (pq_open(path, 0, &pq, &e) != PQ_OK) {
    printf("open: %s\n", e.pe_msg);
    return 2;
  }
  pq_check_report rep;
  uint64_t dropped;
  int crc = pq_check(pq, &rep);
  int rrc = pq_repair(pq, &dropped);
  int fd = open(path, O_RDONLY);
  uint32_t before = waiters(fd);
  /* The first commit finds the dead sleeper's bit, wakes nobody, and must
   * clear it; later commits then make no futex call. */
  (void)insert_rate(pq, 0, 50000); /* warm: fault the pages in */
  uint32_t w = waiters(fd);
  double rate = insert_rate(pq, 50000, 50000);
  int bug = before != 1 || w != 0;
  printf("%s: no reader alive, pq_check %s, pq_repair %s, sleeper bits %u "
         "after the kill, %u after a commit; 1 KiB inserts: %.0f/s\n",
         bug ? "BUG" : "OK", pq_errname(crc), pq_errname(rrc), before, w, rate);
  close(fd);
  pq_close(pq);
  unlink(path);
  return bug;
}
