/*
 * edex_ring.c - the writer of the ring of EDEX notices (`pqact -e`, FILE
 * -edex): making or finding the System V segment and semaphores by their
 * ftok() keys, what is kept of a ring that exists, the slot and semaphore
 * writes of each notice, and the removal at the end.  edex_ring.h holds
 * the contract with edexBridge and where we differ from LDM's pqact.
 */
#include "pqutils/pqact/edex_ring.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <unistd.h>

#include "ldmd/site/log.h"

/* semctl()'s fourth argument, which the caller defines (semctl(2)); the
 * members the ring uses (cppcheck does not see them used through it). */
union semun {
  // cppcheck-suppress unusedStructMember
  int val;
  // cppcheck-suppress unusedStructMember
  struct semid_ds *buf;
  // cppcheck-suppress unusedStructMember
  unsigned short *array;
};

/* The semaphores of the ring. */
enum { SEM_SLOTS = 0, SEM_LAST = 1, NSEMS = 2 };

struct pqact_edex {
  key_t shm_key, sem_key;
  int shmid, semid;
  struct pqact_edex_slot *slots; /* PQACT_EDEX_SLOTS of them */
  unsigned next;                 /* the slot of the next notice */
  bool said_lost;                /* a failed semctl() was logged */
};

void pqact_edex_keys(const char *path, int shm_proj, int sem_proj,
                     key_t *shm_key, key_t *sem_key) {
  *shm_key = ftok(path, shm_proj);
  *sem_key = ftok(path, sem_proj);
}

/* The key as ipcs(1) shows it. */
static unsigned hex_key(key_t k) {
  return (unsigned)k;
}

/* get with IPC_CREAT | IPC_EXCL first, to know whether it was made now;
 * else the one that exists.  -1 with errno. */
static int get_shm(key_t key, size_t bytes, bool *made) {
  int id = shmget(key, bytes, 0666 | IPC_CREAT | IPC_EXCL);
  *made = id >= 0;
  if (id < 0 && errno == EEXIST)
    id = shmget(key, bytes, 0666);
  return id;
}

/* A new set is made write-only for its owner, so that a reader's
 * semget(key, 2, 0666) fails (EACCES; edexBridge tries again a second
 * later) until open() has set sem[0] and opened it to 0666 (open_sem()):
 * else edexBridge could read 0 slots in between.  (A reader running as
 * root passes the permissions: for it the gap is two system calls.) */
static int get_sem(key_t key, bool *made) {
  int id = semget(key, NSEMS, 0200 | IPC_CREAT | IPC_EXCL);
  *made = id >= 0;
  if (id < 0 && errno == EEXIST)
    id = semget(key, NSEMS, 0666);
  return id;
}

/* A new set, its values set: mode 0666, as LDM's.  (IPC_STAT would need
 * the read permission the set does not give yet: its owner is this
 * process's effective user and group, which made it.) */
static int open_sem(int semid) {
  struct semid_ds ds;
  memset(&ds, 0, sizeof ds);
  ds.sem_perm.uid = geteuid();
  ds.sem_perm.gid = getegid();
  ds.sem_perm.mode = 0666;
  union semun arg = {.buf = &ds};
  return semctl(semid, 0, IPC_SET, arg);
}

/* A new ring, or one no reader will miss: slot 0 empty, sem[1] 0, the
 * first notice into slot 1 (edex_ring.h, "the first slot"). */
static int start_ring(struct pqact_edex *r) {
  unsigned short vals[NSEMS] = {PQACT_EDEX_SLOTS, 0};
  union semun arg = {.array = vals};
  memset(&r->slots[0], 0, sizeof r->slots[0]);
  r->next = 1;
  return semctl(r->semid, 0, SETALL, arg);
}

/* A ring that exists and that a reader reads: on after the slot sem[1]
 * names, which is set again to the same value (the reader sees no
 * change) to make this process its last writer.  -1 if sem[1] names no
 * slot. */
static int go_on(struct pqact_edex *r) {
  int last = semctl(r->semid, SEM_LAST, GETVAL);
  if (last < 0 || (unsigned)last >= PQACT_EDEX_SLOTS)
    return -1;
  union semun same = {.val = last};
  if (semctl(r->semid, SEM_LAST, SETVAL, same) != 0)
    return -1;
  if (semctl(r->semid, SEM_SLOTS, GETVAL) != (int)PQACT_EDEX_SLOTS) {
    union semun arg = {.val = PQACT_EDEX_SLOTS};
    if (semctl(r->semid, SEM_SLOTS, SETVAL, arg) != 0)
      return -1;
  }
  r->next = (unsigned)last + 1 == PQACT_EDEX_SLOTS ? 0 : (unsigned)last + 1;
  return 0;
}

/* The pid of a pqact that is alive and writes the ring of semid: the last
 * process that set sem[1] (semctl() GETPID: every writer sets it when it
 * starts and at each notice; a reader never does), if it runs and is
 * named pqact (LDM's or ours).  0 if none. */
static pid_t live_writer(int semid) {
  int pid = semctl(semid, SEM_LAST, GETPID);
  if (pid <= 0 || pid == (int)getpid() || (kill(pid, 0) != 0 && errno == ESRCH))
    return 0;
  char path[64], comm[32] = "";
  snprintf(path, sizeof path, "/proc/%d/comm", pid);
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return 0;
  if (fgets(comm, sizeof comm, f) == NULL)
    comm[0] = '\0';
  fclose(f);
  comm[strcspn(comm, "\n")] = '\0';
  return strcmp(comm, "pqact") == 0 ? (pid_t)pid : 0;
}

/* What open() made, undone after a failure. */
static void undo(struct pqact_edex *r, bool shm_made, bool sem_made) {
  if (sem_made)
    (void)semctl(r->semid, 0, IPC_RMID);
  if (r->slots != NULL)
    (void)shmdt(r->slots);
  if (shm_made)
    (void)shmctl(r->shmid, IPC_RMID, NULL);
  free(r);
}

struct pqact_edex *pqact_edex_open(const char *path, int shm_proj,
                                   int sem_proj) {
  struct pqact_edex *r = calloc(1, sizeof *r);
  if (r == NULL) {
    log_error("cannot make the EDEX ring: %s", strerror(ENOMEM));
    return NULL;
  }
  errno = 0;
  pqact_edex_keys(path, shm_proj, sem_proj, &r->shm_key, &r->sem_key);
  if (r->shm_key == (key_t)-1 || r->sem_key == (key_t)-1)
    log_warning("cannot make the EDEX ring's keys from \"%s\": %s: the key "
                "is 0xffffffff, as edexBridge makes it too",
                path, strerror(errno != 0 ? errno : ENOENT));
  const size_t bytes = sizeof(struct pqact_edex_slot) * PQACT_EDEX_SLOTS;
  bool shm_made = false, sem_made = false;
  r->shmid = get_shm(r->shm_key, bytes, &shm_made);
  if (r->shmid < 0) {
    log_error("cannot get the EDEX ring's shared memory (key 0x%08x, %zu "
              "bytes): %s",
              hex_key(r->shm_key), bytes, strerror(errno));
    free(r);
    return NULL;
  }
  struct shmid_ds ds;
  if (shmctl(r->shmid, IPC_STAT, &ds) != 0) {
    log_error("cannot read the EDEX ring's shared memory (key 0x%08x): %s",
              hex_key(r->shm_key), strerror(errno));
    undo(r, shm_made, false);
    return NULL;
  }
  const unsigned long readers = (unsigned long)ds.shm_nattch;
  void *at = shmat(r->shmid, NULL, 0);
  if (at == (void *)-1) {
    log_error("cannot attach the EDEX ring's shared memory (key 0x%08x): %s",
              hex_key(r->shm_key), strerror(errno));
    undo(r, shm_made, false);
    return NULL;
  }
  r->slots = at;
  /* the semaphores last: edexBridge waits for them, then expects the
   * segment */
  r->semid = get_sem(r->sem_key, &sem_made);
  if (r->semid < 0) {
    log_error("cannot get the EDEX ring's semaphores (key 0x%08x): %s",
              hex_key(r->sem_key), strerror(errno));
    undo(r, shm_made, false);
    return NULL;
  }
  pid_t other = sem_made ? 0 : live_writer(r->semid);
  if (other != 0) { /* its notices and ours would overwrite each other */
    log_error("another pqact (pid %ld) writes the EDEX ring (shared memory "
              "key 0x%08x, semaphores key 0x%08x): this one gives no notice; "
              "-k and -s give a ring of its own",
              (long)other, hex_key(r->shm_key), hex_key(r->sem_key));
    undo(r, shm_made, false);
    return NULL;
  }
  bool kept = false;
  if (!shm_made && !sem_made && readers > 0) {
    kept = go_on(r) == 0;
    if (!kept)
      log_warning("the EDEX ring (key 0x%08x) that exists names no slot: "
                  "starting it again",
                  hex_key(r->shm_key));
  }
  if ((!kept && start_ring(r) != 0) || (sem_made && open_sem(r->semid))) {
    log_error("cannot set the EDEX ring's semaphores (key 0x%08x): %s",
              hex_key(r->sem_key), strerror(errno));
    undo(r, shm_made, sem_made);
    return NULL;
  }
  if (kept)
    log_notice("EDEX ring: going on in the ring that exists, read by %lu "
               "reader%s, after slot %u",
               readers, readers == 1 ? "" : "s",
               r->next == 0 ? PQACT_EDEX_SLOTS - 1 : r->next - 1);
  else if (!shm_made && !sem_made && readers == 0)
    log_notice("EDEX ring: the ring that exists has no reader: started "
               "again");
  else if (shm_made != sem_made)
    log_notice("EDEX ring: its %s existed without its %s: started again",
               shm_made ? "semaphores" : "shared memory",
               shm_made ? "shared memory" : "semaphores");
  log_notice("EDEX ring: %u slots, shared memory key 0x%08x, semaphores key "
             "0x%08x",
             PQACT_EDEX_SLOTS, hex_key(r->shm_key), hex_key(r->sem_key));
  return r;
}

/* dst (size bytes) as strncpy() leaves it, the string cut to size - 1.
 * Whether it was cut. */
static bool put_string(char *dst, size_t size, const char *src) {
  size_t n = strnlen(src, size);
  bool cut = n == size;
  if (cut)
    n = size - 1;
  memcpy(dst, src, n);
  memset(dst + n, 0, size - n);
  return cut;
}

int pqact_edex_notify(struct pqact_edex *r, const char *filename,
                      const char *ident) {
  struct pqact_edex_slot *s = &r->slots[r->next];
  if (put_string(s->filename, sizeof s->filename, filename))
    log_warning("EDEX notice of %s: its path is longer than %zu bytes, cut "
                "as LDM's pqact cuts it: \"%.80s...\"",
                ident, sizeof s->filename - 1, filename);
  (void)put_string(s->ident, sizeof s->ident, ident);
  union semun arg = {.val = (int)r->next};
  if (semctl(r->semid, SEM_LAST, SETVAL, arg) != 0) {
    int e = errno;
    if (!r->said_lost)
      log_error("cannot notify EDEX of \"%s\" (semaphores key 0x%08x): "
                "semctl: %s; said once",
                filename, hex_key(r->sem_key), strerror(e));
    else
      log_debug("cannot notify EDEX of \"%s\": semctl: %s", filename,
                strerror(e));
    r->said_lost = true;
    return -1;
  }
  r->said_lost = false;
  r->next = r->next + 1 == PQACT_EDEX_SLOTS ? 0 : r->next + 1;
  return 0;
}

unsigned pqact_edex_next(const struct pqact_edex *r) {
  return r->next;
}

void pqact_edex_close(struct pqact_edex *r, bool remove) {
  if (r == NULL)
    return;
  if (remove) {
    log_notice("Deleting shared segment."); /* LDM's words */
    if (shmctl(r->shmid, IPC_RMID, NULL) != 0)
      log_error("cannot remove the EDEX ring's shared memory (key 0x%08x): "
                "%s",
                hex_key(r->shm_key), strerror(errno));
    if (semctl(r->semid, 0, IPC_RMID) != 0)
      log_error("cannot remove the EDEX ring's semaphores (key 0x%08x): %s",
                hex_key(r->sem_key), strerror(errno));
  }
  if (shmdt(r->slots) != 0)
    log_error("cannot detach the EDEX ring's shared memory: %s",
              strerror(errno));
  free(r);
}
