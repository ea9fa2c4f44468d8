/*
 * test_pqact_edex - the writer of pqact -e's ring of EDEX notices
 * (pqutils/pqact/edex_ring.c) and FILE -edex (filing.c), seen through
 * the System V objects as edexBridge sees them: the keys ftok() gives; a
 * new ring's segment (5000 slots of 4352 bytes, mode 0666) and semaphores
 * (sem[0] 5000, sem[1] 0, slot 0 empty); each notice's slot bytes (the
 * strings padded with NULs, cut at 4095 and 255 bytes) and sem[1]; the
 * wrap after slot 4999; a ring that exists, gone on with when a reader
 * is attached and started again when none is, or that names no slot; a
 * segment of the key too small refused; a second writer refused while
 * the first runs; the removal.  Then FILE -edex:
 * a notice once the file is written and closed, the path as the action
 * gives it, none for a failed write or without -edex.  Each test names
 * its ring by a file of its scratch directory whose keys no ring has, and
 * removes what has them at the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pqutils/pqact/edex_ring.h"
#include "pqutils/pqact/filing.h"

#define TU_TMPDIR_PREFIX "pqact_edex"
#include "test/lib/tu_tmpdir.h"

/* semctl()'s fourth argument, which the caller defines (semctl(2)). */
union semun {
  // cppcheck-suppress unusedStructMember
  int val;
  // cppcheck-suppress unusedStructMember
  struct semid_ds *buf;
};

#define SLOT 4352
#define RING_BYTES ((size_t)SLOT * 5000)

/* The test's ftok file and keys. */
static char keyfile[300];
static key_t shm_key, sem_key;

static void remove_ring(void) {
  int id = shmget(shm_key, 0, 0);
  if (id != -1)
    (void)shmctl(id, IPC_RMID, NULL);
  id = semget(sem_key, 0, 0);
  if (id != -1)
    (void)semctl(id, 0, IPC_RMID);
}

/* The scratch directory, and in it a file whose keys no ring has. */
static int setup(void **state) {
  if (tu_tmpdir_setup(state) != 0)
    return -1;
  for (int i = 0; i < 50; i++) {
    snprintf(keyfile, sizeof keyfile, "%s/ftok.%d", tu_dir, i);
    FILE *f = fopen(keyfile, "w");
    if (f == NULL)
      return -1;
    fclose(f);
    pqact_edex_keys(keyfile, 'R', 'e', &shm_key, &sem_key);
    if (shm_key != (key_t)-1 && shmget(shm_key, 0, 0) == -1 &&
        semget(sem_key, 0, 0) == -1)
      return 0;
  }
  return -1;
}

static int teardown(void **state) {
  remove_ring();
  return tu_tmpdir_teardown(state);
}

/* What a reader sees, as edexBridge attaches. */
struct view {
  int semid, shmid;
  const unsigned char *bytes;
};

static struct view attach(void) {
  struct view v;
  v.semid = semget(sem_key, 2, 0666);
  assert_int_not_equal(v.semid, -1);
  int size = semctl(v.semid, 0, GETVAL);
  assert_int_equal(size, 5000);
  v.shmid = shmget(shm_key, (size_t)SLOT * (size_t)size, 0666);
  assert_int_not_equal(v.shmid, -1);
  v.bytes = shmat(v.shmid, NULL, SHM_RDONLY);
  assert_true(v.bytes != (void *)-1);
  return v;
}

static int last(const struct view *v) {
  return semctl(v->semid, 1, GETVAL);
}

/* Slot i's bytes are filename and ident, each padded with NULs. */
static void assert_slot(const struct view *v, int i, const char *filename,
                        const char *ident) {
  const unsigned char *s = v->bytes + (size_t)i * SLOT;
  size_t fl = strlen(filename), il = strlen(ident);
  assert_memory_equal(s, filename, fl);
  for (size_t k = fl; k < 4096; k++)
    assert_int_equal(s[k], 0);
  assert_memory_equal(s + 4096, ident, il);
  for (size_t k = il; k < 256; k++)
    assert_int_equal(s[4096 + k], 0);
}

static void test_new_ring(void **state) {
  (void)state;
  struct pqact_edex *r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  /* the keys are ftok()'s */
  assert_int_equal(shm_key, ftok(keyfile, 'R'));
  assert_int_equal(sem_key, ftok(keyfile, 'e'));
  struct view v = attach();
  struct shmid_ds ds;
  assert_int_equal(shmctl(v.shmid, IPC_STAT, &ds), 0);
  assert_int_equal(ds.shm_segsz, RING_BYTES);
  assert_int_equal(ds.shm_perm.mode & 0777, 0666);
  struct semid_ds sds;
  union semun arg = {.buf = &sds};
  assert_int_equal(semctl(v.semid, 0, IPC_STAT, arg), 0);
  assert_int_equal(sds.sem_nsems, 2);
  assert_int_equal(sds.sem_perm.mode & 0777, 0666);
  /* opened to readers by its owner, who made it */
  assert_int_equal(sds.sem_perm.uid, geteuid());
  assert_int_equal(sds.sem_perm.gid, getegid());
  assert_int_equal(sds.sem_perm.cuid, geteuid());
  assert_int_equal(last(&v), 0);
  assert_slot(&v, 0, "", "");
  assert_int_equal(pqact_edex_next(r), 1);

  /* a notice: its slot, then sem[1] */
  assert_int_equal(pqact_edex_notify(r, "/data/a", "SAUS43 KXYZ"), 0);
  assert_slot(&v, 1, "/data/a", "SAUS43 KXYZ");
  assert_int_equal(last(&v), 1);
  /* a shorter one over a longer one: the rest is NULs again */
  for (int i = 2; i < 5000; i++)
    assert_int_equal(pqact_edex_notify(r, "x", "i"), 0);
  assert_int_equal(last(&v), 4999);
  assert_int_equal(pqact_edex_next(r), 0); /* after the last, slot 0 */
  assert_int_equal(pqact_edex_notify(r, "/data/wrap", "W"), 0);
  assert_int_equal(last(&v), 0);
  assert_slot(&v, 0, "/data/wrap", "W");
  assert_int_equal(pqact_edex_notify(r, "b", "B"), 0);
  assert_slot(&v, 1, "b", "B");
  assert_int_equal(last(&v), 1);

  /* cut as strncpy() cuts: 4095 and 255 bytes, then a NUL */
  char *longpath = malloc(5000);
  assert_non_null(longpath);
  memset(longpath, 'p', 4999);
  longpath[4999] = '\0';
  char longid[400];
  memset(longid, 'i', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  assert_int_equal(pqact_edex_notify(r, longpath, longid), 0);
  const unsigned char *s = v.bytes + 2 * SLOT;
  for (int k = 0; k < 4095; k++)
    assert_int_equal(s[k], 'p');
  assert_int_equal(s[4095], 0);
  for (int k = 0; k < 255; k++)
    assert_int_equal(s[4096 + k], 'i');
  assert_int_equal(s[4096 + 255], 0);
  free(longpath);

  /* the end: both removed; the reader's view stays until it detaches */
  pqact_edex_close(r, true);
  assert_int_equal(shmget(shm_key, 0, 0), -1);
  assert_int_equal(semget(sem_key, 0, 0), -1);
  assert_int_equal(semctl(v.semid, 1, GETVAL), -1);
  shmdt(v.bytes);
}

static void test_existing_ring(void **state) {
  (void)state;
  struct pqact_edex *r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  for (int i = 0; i < 7; i++)
    assert_int_equal(pqact_edex_notify(r, "f", "i"), 0);
  pqact_edex_close(r, false); /* as after a kill -9 */

  /* a reader attached: on after sem[1], nothing cleared */
  struct view v = attach();
  assert_int_equal(last(&v), 7);
  r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  assert_int_equal(pqact_edex_next(r), 8);
  assert_int_equal(last(&v), 7);
  assert_slot(&v, 7, "f", "i");
  assert_int_equal(pqact_edex_notify(r, "g", "j"), 0);
  assert_int_equal(last(&v), 8);
  pqact_edex_close(r, false);
  /* at the last slot: on at slot 0 */
  union semun arg = {.val = 4999};
  assert_int_equal(semctl(v.semid, 1, SETVAL, arg), 0);
  r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  assert_int_equal(pqact_edex_next(r), 0);
  pqact_edex_close(r, false);
  /* sem[0] not the ring's: set again */
  arg.val = 12;
  assert_int_equal(semctl(v.semid, 0, SETVAL, arg), 0);
  r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  assert_int_equal(semctl(v.semid, 0, GETVAL), 5000);
  pqact_edex_close(r, false);
  shmdt(v.bytes);

  /* no reader: started again, slot 0 empty, sem[1] 0 */
  v = attach();
  struct pqact_edex *w = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(w);
  assert_int_equal(pqact_edex_notify(w, "zero", "z"), 0); /* into slot 0 */
  assert_slot(&v, 0, "zero", "z");
  pqact_edex_close(w, false);
  shmdt(v.bytes);
  r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  assert_int_equal(pqact_edex_next(r), 1);
  v = attach();
  assert_int_equal(last(&v), 0);
  assert_slot(&v, 0, "", "");
  shmdt(v.bytes);
  pqact_edex_close(r, true);
}

static void test_bad_rings(void **state) {
  (void)state;
  /* a segment of the key too small for the ring: refused, left alone */
  int id = shmget(shm_key, 4096, 0600 | IPC_CREAT | IPC_EXCL);
  assert_int_not_equal(id, -1);
  assert_null(pqact_edex_open(keyfile, 'R', 'e'));
  assert_int_equal(shmget(shm_key, 0, 0), id);
  assert_int_equal(semget(sem_key, 0, 0), -1);
  assert_int_equal(shmctl(id, IPC_RMID, NULL), 0);

  /* a reader attached but sem[1] beyond the ring: started again */
  struct pqact_edex *r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  pqact_edex_close(r, false);
  struct view v = attach();
  union semun arg = {.val = 6000};
  assert_int_equal(semctl(v.semid, 1, SETVAL, arg), 0);
  r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  assert_int_equal(pqact_edex_next(r), 1);
  assert_int_equal(last(&v), 0);
  /* the semaphores removed under it: a notice fails, said */
  assert_int_equal(semctl(v.semid, 0, IPC_RMID), 0);
  assert_int_equal(pqact_edex_notify(r, "f", "i"), -1);
  assert_int_equal(pqact_edex_notify(r, "f", "i"), -1);
  shmdt(v.bytes);
  pqact_edex_close(r, true); /* logs the semaphores' removal failing */
  assert_int_equal(shmget(shm_key, 0, 0), -1);
}

/* A second writer: refused while the first, a process named pqact, runs;
 * taken once it has exited. */
static void test_two_writers(void **state) {
  (void)state;
  int ready[2], go[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(go), 0);
  pid_t pid = fork();
  assert_int_not_equal(pid, -1);
  if (pid == 0) { /* the first writer */
    char c = 0;
    (void)prctl(PR_SET_NAME, "pqact", 0, 0, 0);
    struct pqact_edex *w = pqact_edex_open(keyfile, 'R', 'e');
    if (w == NULL || write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
      _exit(1);
    _exit(0); /* as a kill -9: the ring stays */
  }
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1);
  assert_null(pqact_edex_open(keyfile, 'R', 'e'));
  assert_int_not_equal(semget(sem_key, 0, 0), -1); /* left alone */
  assert_int_equal(write(go[1], "g", 1), 1);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  struct pqact_edex *r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  pqact_edex_close(r, true);
  close(ready[0]);
  close(ready[1]);
  close(go[0]);
  close(go[1]);
}

/* FILE args of one product, ident ID. */
static int act(struct pqact_outputs *o, const char *args, const char *data) {
  static char line[512];
  char *argv[16];
  int argc = 0;
  snprintf(line, sizeof line, "%s", args);
  for (char *w = strtok(line, " "); w != NULL; w = strtok(NULL, " "))
    argv[argc++] = w;
  pq_prod_info info = {.size = strlen(data), .feedtype = PQ_FT_EXP};
  strcpy(info.ident, "ID");
  strcpy(info.origin, "o");
  return pqact_file_action(o, PQACT_FILE, argc, argv, &info, data);
}

static void test_file_edex(void **state) {
  (void)state;
  struct pqact_edex *r = pqact_edex_open(keyfile, 'R', 'e');
  assert_non_null(r);
  struct view v = attach();
  struct pqact_outputs *o = pqact_outputs_new(0);
  assert_non_null(o);
  /* without the ring: said, filed, no notice */
  assert_int_equal(act(o, "-edex -close d/a", "1"), 0);
  assert_int_equal(last(&v), 0);
  pqact_outputs_set_edex(o, r);
  /* -close: once the file is closed, the path as given */
  assert_int_equal(act(o, "-edex -close d/a", "2"), 0);
  assert_int_equal(pqact_outputs_open(o), 0);
  assert_int_equal(last(&v), 1);
  assert_slot(&v, 1, "d/a", "ID");
  /* kept open: after each write; two-letter option */
  assert_int_equal(act(o, "-ed d/kept", "3"), 0);
  assert_int_equal(act(o, "-ed d/kept", "4"), 0);
  assert_int_equal(pqact_outputs_open(o), 1);
  assert_int_equal(last(&v), 3);
  assert_slot(&v, 3, "d/kept", "ID");
  /* no -edex: no notice */
  assert_int_equal(act(o, "-close d/b", "5"), 0);
  assert_int_equal(last(&v), 3);
  /* a write that fails: no notice */
  assert_int_equal(act(o, "-edex d/kept/x", "6"), -1);
  assert_int_equal(last(&v), 3);
  pqact_outputs_free(o);
  size_t n;
  FILE *f = fopen("d/a", "rb");
  assert_non_null(f);
  char buf[8];
  n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  assert_int_equal(n, 2);
  assert_memory_equal(buf, "12", 2);
  shmdt(v.bytes);
  pqact_edex_close(r, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_new_ring, setup, teardown),
      cmocka_unit_test_setup_teardown(test_existing_ring, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_rings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_two_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_file_edex, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
