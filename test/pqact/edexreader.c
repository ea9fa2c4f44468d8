/*
 * edexreader - a reader of pqact -e's ring of EDEX notices for the tests,
 * that attaches and reads as AWIPS's edexBridge does (edexBridge.cpp of
 * Unidata/awips2; our pqutils/pqact/pqact.1, EDEX NOTICES), with its own
 * copy of LDM's slot layout (not pqact's header, so that the test checks
 * the bytes pqact writes, not that pqact agrees with itself):
 *
 *   edexreader [-k c] [-s c] keys PATH
 *       print the ring's two keys, ftok(PATH, c) of the segment ('R') and
 *       of the semaphores ('e'); exit 0 if neither exists, 1 if one does
 *   edexreader [-k c] [-s c] state PATH
 *       print "slots=N last=N readers=N" (sem[0], sem[1], the segment's
 *       attached processes); exit 1 if the ring does not exist
 *   edexreader [-k c] [-s c] [-i ms] read PATH OUT
 *       attach as edexBridge does: semget(semkey, 2, 0666) until it exists
 *       (edexBridge: five tries a second apart; here for up to 60 s), the
 *       number of slots from sem[0], shmget(key, slots * 4352, 0666),
 *       shmat(); then make OUT.attached and poll sem[1] every ms
 *       milliseconds (default 2; edexBridge: 1000), taking the slots after
 *       the last one seen up to sem[1], going round the end, edexBridge's
 *       way; each slot taken is a line "slot TAB filename TAB ident" of
 *       OUT, flushed after each poll.  Exits 0 on SIGTERM, 3 when the ring
 *       is removed (sem[1] can no longer be read), 1 if it cannot attach.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

/* LDM's struct edex_message (pqact/filel.h), as edexBridge includes it. */
struct edex_message {
  char filename[4096];
  char ident[256];
};

#define ATTACH_S 60

static volatile sig_atomic_t done;

static void on_term(int sig) {
  (void)sig;
  done = 1;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !done)
    ;
}

/* Slots [from, to) as lines of out. */
static void take(FILE *out, const struct edex_message *m, int from, int to) {
  for (int i = from; i < to; i++)
    fprintf(out, "%d\t%s\t%s\n", i, m[i].filename, m[i].ident);
}

static int do_read(key_t key, key_t semkey, const char *outpath, long ms) {
  int semid;
  time_t end = time(NULL) + ATTACH_S;
  while ((semid = semget(semkey, 2, 0666)) == -1) {
    if (time(NULL) > end || done) {
      fprintf(stderr, "edexreader: no semaphores (key 0x%08x): %s\n",
              (unsigned)semkey, strerror(errno));
      return 1;
    }
    nap_ms(20); /* edexBridge: sleep(1) */
  }
  int size = semctl(semid, 0, GETVAL);
  int shmid = shmget(key, sizeof(struct edex_message) * (size_t)size, 0666);
  if (size <= 0 || shmid == -1) {
    fprintf(stderr, "edexreader: no shared memory (key 0x%08x, %d slots): %s\n",
            (unsigned)key, size, strerror(errno));
    return 1;
  }
  const struct edex_message *m = shmat(shmid, NULL, 0);
  if (m == (void *)-1) {
    perror("edexreader: shmat");
    return 1;
  }
  FILE *out = fopen(outpath, "w");
  char mark[4096];
  snprintf(mark, sizeof mark, "%s.attached", outpath);
  FILE *att = fopen(mark, "w");
  if (out == NULL || att == NULL) {
    perror(outpath);
    return 1;
  }
  fprintf(att, "%d\n", size);
  fclose(att);
  int last = 0; /* edexBridge's lastQueueSize */
  while (!done) {
    int at = semctl(semid, 1, GETVAL);
    if (at < 0) {
      if (errno == EINVAL || errno == EIDRM) {
        fclose(out);
        shmdt(m);
        fprintf(stderr, "edexreader: ring removed\n");
        return 3;
      }
      nap_ms(ms); /* edexBridge: "nothing has been put on the queue yet" */
      continue;
    }
    int now = at + 1; /* its queueSize */
    if (now != last) {
      if (last > now) { /* round the end: the rest of the ring first */
        take(out, m, last, size);
        last = 0;
      }
      take(out, m, last, now);
      last = now;
      fflush(out);
    }
    nap_ms(ms);
  }
  fclose(out);
  shmdt(m);
  return 0;
}

static int do_keys(key_t key, key_t semkey) {
  printf("0x%08x 0x%08x\n", (unsigned)key, (unsigned)semkey);
  bool used = shmget(key, 0, 0) != -1 || semget(semkey, 0, 0) != -1;
  return used ? 1 : 0;
}

static int do_state(key_t key, key_t semkey) {
  int semid = semget(semkey, 0, 0);
  int shmid = shmget(key, 0, 0);
  struct shmid_ds ds;
  if (semid == -1 || shmid == -1 || shmctl(shmid, IPC_STAT, &ds) != 0) {
    printf("none\n");
    return 1;
  }
  printf("slots=%d last=%d readers=%lu\n", semctl(semid, 0, GETVAL),
         semctl(semid, 1, GETVAL), (unsigned long)ds.shm_nattch);
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: edexreader [-k c] [-s c] [-i ms] keys|state PATH\n"
                  "       edexreader [-k c] [-s c] [-i ms] read PATH OUT\n");
  return 2;
}

int main(int argc, char **argv) {
  int kc = 'R', sc = 'e', ch;
  long ms = 2;
  while ((ch = getopt(argc, argv, "k:s:i:")) != -1) {
    switch (ch) {
    case 'k':
      kc = (unsigned char)optarg[0];
      break;
    case 's':
      sc = (unsigned char)optarg[0];
      break;
    case 'i':
      ms = strtol(optarg, NULL, 10);
      break;
    default:
      return usage();
    }
  }
  if (argc - optind < 2)
    return usage();
  const char *cmd = argv[optind], *path = argv[optind + 1];
  key_t key = ftok(path, kc), semkey = ftok(path, sc);
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  if (strcmp(cmd, "keys") == 0)
    return do_keys(key, semkey);
  if (strcmp(cmd, "state") == 0)
    return do_state(key, semkey);
  if (strcmp(cmd, "read") == 0 && argc - optind == 3)
    return do_read(key, semkey, argv[optind + 2], ms);
  return usage();
}
