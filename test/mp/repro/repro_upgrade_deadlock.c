/*
 * repro_upgrade_deadlock.c - two readers that find a queue left dirty by a
 * crash deadlock for ever (pq/lock.c, pq__ctl_lock(), the "upgrade" branch).
 *
 * A reader takes the control byte shared, sees hd_dirty set, and upgrades to
 * exclusive with F_OFD_SETLKW while still holding its shared lock.  Two
 * readers doing so at once each wait for the other's shared lock to go:
 * OFD locks get no deadlock detection (the kernel does not return EDEADLK
 * for them), so both sleep for ever, and every later locker queues behind
 * them: the whole queue hangs.  mp_crash meets it after some SIGKILLs of
 * writers with two readers left alive (its watchdog then shows both readers
 * in fcntl_setlk, cmd 0x26 = F_OFD_SETLKW).
 *
 * Deterministic here: the crash is the dirty flag set in the file (what a
 * writer killed just after pq__mutate_begin() leaves), and a third
 * description holds the control byte shared until both readers are
 * blocked on it (two requests waiting in /proc/locks): with the bug each
 * then holds the byte shared and wants it exclusive.  Once it is released,
 * each reader must finish its pq_next() with PQ_OK within 5 s.
 *
 * Exit status 1 while the bug is present (or a reader fails), 0 once both
 * readers finish, 2 if the reproduction cannot be set up.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"
#include "test/mp/repro/repro_util.h"

int main(void) {
  char path[256];
  repro_path(path, sizeof path, "upgrade");
  pq_error e;
  pq_t *pq = repro_create(path, 1 << 20, 64);
  if (pq == NULL)
    return 2;
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  strcpy(info.ident, "x");
  info.size = 3;
  pq_md5("abc", 3, info.signature);
  int rc = pq_insert(pq, &info, "abc");
  if (rc != PQ_OK || pq_close(pq) != PQ_OK) {
    printf("insert: %s\n", pq_strerror(rc));
    unlink(path);
    return 2;
  }

  int fd = open(path, O_RDWR);
  uint32_t one = 1; /* a writer died inside a change */
  struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1};
  if (fd < 0 ||
      pwrite(fd, &one, sizeof one, offsetof(struct pq_hdr, hd_dirty)) !=
          sizeof one ||
      fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    perror(path);
    unlink(path);
    return 2;
  }

  repro_block_sigchld();
  pid_t kid[2];
  int status[2] = {0, 0};
  for (int k = 0; k < 2; k++)
    if ((kid[k] = fork()) == 0) {
      pq_t *r;
      if (pq_open(path, PQ_READONLY, &r, &e) != PQ_OK)
        _exit(2);
      _exit(pq_next(r, PQ_FORWARD, NULL, repro_noop, NULL) == PQ_OK ? 0 : 3);
    }
  /* Both readers are inside pq_next(), blocked on our shared lock. */
  int setup = 0;
  if (!repro_wait_lock_waiters(path, 2, 10000)) {
    printf("SETUP: the two readers did not both block on the control byte "
           "within 10 s (%d waiting)\n",
           repro_lock_waiters(path));
    setup = 1;
  }
  fl.l_type = F_UNLCK;
  fcntl(fd, F_OFD_SETLK, &fl);

  int left = repro_reap(kid, status, 2, 5000);
  int failed = 0;
  for (int k = 0; k < 2; k++) {
    char txt[32];
    if (kid[k] > 0) {
      kill(kid[k], SIGKILL);
      waitpid(kid[k], NULL, 0);
    } else if (!WIFEXITED(status[k]) || WEXITSTATUS(status[k]) != 0) {
      printf("FAIL: reader %d: %s (2: pq_open failed, 3: pq_next failed)\n", k,
             repro_status_text(status[k], txt, sizeof txt));
      failed++;
    }
  }
  if (left > 0)
    printf("BUG: %d of 2 readers still blocked upgrading the control lock "
           "5 s after it was free (pq/lock.c pq__ctl_lock)\n",
           left);
  else if (failed == 0 && setup == 0)
    printf("OK: both readers repaired the queue and read on\n");
  close(fd);
  unlink(path);
  return left > 0 || failed > 0 ? 1 : setup ? 2 : 0;
}
