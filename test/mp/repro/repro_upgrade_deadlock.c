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
 * description holds the control byte shared for a moment so that both
 * readers are inside the shared lock before either upgrades.
 *
 * Exit status 1 while the bug is present, 0 once the readers finish.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"

static int noop(const pq_prod_info *i, const void *d, const pq_place *p,
                void *a) {
  (void)i;
  (void)d;
  (void)p;
  (void)a;
  return 0;
}

int main(void) {
  char path[256];
  snprintf(path, sizeof path, "/dev/shm/repro_upgrade.%ld.pq", (long)getpid());
  pq_create_opts o = {
      .pc_data_size = 1 << 20, .pc_slots = 64, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error e;
  if (pq_create(path, &o, &pq, &e) != PQ_OK) {
    printf("create: %s\n", e.pe_msg);
    return 2;
  }
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  strcpy(info.ident, "x");
  info.size = 3;
  pq_md5("abc", 3, info.signature);
  pq_insert(pq, &info, "abc");
  pq_close(pq);

  int fd = open(path, O_RDWR);
  uint32_t one = 1; /* a writer died inside a change */
  if (fd < 0 || pwrite(fd, &one, sizeof one,
                       offsetof(struct pq_hdr, hd_dirty)) != sizeof one) {
    perror(path);
    return 2;
  }
  struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1};
  fcntl(fd, F_OFD_SETLK, &fl);

  pid_t kid[2];
  for (int k = 0; k < 2; k++)
    if ((kid[k] = fork()) == 0) {
      pq_t *r;
      if (pq_open(path, PQ_READONLY, &r, &e) != PQ_OK)
        _exit(2);
      _exit(pq_next(r, PQ_FORWARD, NULL, noop, NULL) == PQ_OK ? 0 : 3);
    }
  usleep(300000); /* both readers now hold the byte shared and upgrade */
  fl.l_type = F_UNLCK;
  fcntl(fd, F_OFD_SETLK, &fl);

  int done = 0;
  for (int t = 0; t < 50 && done < 2; t++) {
    usleep(100000);
    for (int k = 0; k < 2; k++)
      if (kid[k] > 0 && waitpid(kid[k], NULL, WNOHANG) == kid[k]) {
        kid[k] = 0;
        done++;
      }
  }
  int bug = done < 2;
  if (bug) {
    printf("BUG: %d of 2 readers still blocked upgrading the control lock "
           "after 5 s (pq/lock.c pq__ctl_lock)\n",
           2 - done);
    for (int k = 0; k < 2; k++)
      if (kid[k] > 0) {
        kill(kid[k], SIGKILL);
        waitpid(kid[k], NULL, 0);
      }
  } else {
    printf("OK: both readers repaired the queue and read on\n");
  }
  close(fd);
  unlink(path);
  return bug;
}
