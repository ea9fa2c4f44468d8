/*
 * feeds.c - the upstream database in shared memory and the rule of one
 * feed per downstream address and class (see feeds.h for the rule and why
 * it is not LDM's as it is).
 */
#include "ldmd/server/feeds.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ldmd/server/clock.h"
#include "ldmd/site/log.h"

typedef struct feed_entry {
  pid_t pid;           /* 0: free */
  char addr[64];       /* the downstream's address */
  uint64_t key;        /* the class's specs, hashed */
  int64_t replaced_ms; /* when this feed (or one it inherited) replaced
                          another of the same key; 0: never */
} feed_entry;

struct ldmd_feeds {
  pthread_mutex_t lock;
  size_t n;
  size_t map_len;
  feed_entry e[];
};

ldmd_feeds *ldmd_feeds_new(size_t n) {
  size_t len = sizeof(ldmd_feeds) + n * sizeof(feed_entry);
  pthread_mutexattr_t a;
  ldmd_feeds *t;
  int rc;

  t = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
           0);
  if (t == MAP_FAILED)
    return NULL;
  memset(t, 0, len);
  t->n = n;
  t->map_len = len;
  rc = pthread_mutexattr_init(&a);
  if (rc == 0)
    rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  if (rc == 0)
    rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  if (rc == 0)
    rc = pthread_mutex_init(&t->lock, &a);
  (void)pthread_mutexattr_destroy(&a);
  if (rc != 0) {
    munmap(t, len);
    errno = rc;
    return NULL;
  }
  return t;
}

void ldmd_feeds_free(ldmd_feeds *t) {
  if (t != NULL)
    munmap(t, t->map_len);
}

/* The lock; one left by a process that died holding it is taken over
 * (the entries are whole words written under it: still consistent). */
static void lock(ldmd_feeds *t) {
  if (pthread_mutex_lock(&t->lock) == EOWNERDEAD)
    (void)pthread_mutex_consistent(&t->lock);
}

static void unlock(ldmd_feeds *t) {
  (void)pthread_mutex_unlock(&t->lock);
}

/* FNV-1a over the specs: feedtype and pattern, in order. */
static uint64_t class_key(const pq_class *cls) {
  uint64_t h = 14695981039346656037ull;
  unsigned i;

  for (i = 0; i < cls->nspecs; i++) {
    const unsigned char *p = (const unsigned char *)cls->specs[i].pattern;
    uint32_t ft = cls->specs[i].feedtype;
    int b;

    for (b = 0; b < 4; b++, ft >>= 8)
      h = (h ^ (ft & 0xffu)) * 1099511628211ull;
    for (; *p != '\0'; p++)
      h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull; /* end of the pattern */
  }
  return h;
}

int ldmd_feeds_join(ldmd_feeds *t, const char *addr, const pq_class *cls,
                    bool anti_dos, const char *peer) {
  pid_t me = getpid(), victims[16];
  size_t i, nvictims = 0;
  uint64_t key = class_key(cls);
  int64_t now = ldmd_now_ms(), replaced = 0;
  int slot = -1;

  if (t == NULL)
    return -1;
  lock(t);
  for (i = 0; i < t->n; i++) {
    feed_entry *e = &t->e[i];

    if (e->pid == 0) {
      if (slot < 0)
        slot = (int)i;
      continue;
    }
    if (e->pid == me || e->key != key || strcmp(e->addr, addr) != 0)
      continue;
    if (!anti_dos) {
      log_info("another feed of this class to %s (process %ld) is kept: "
               "/server/enable-anti-DOS is off",
               addr, (long)e->pid);
    } else if (e->replaced_ms != 0 &&
               now - e->replaced_ms < LDMD_FEEDS_PINGPONG_MS) {
      log_warning("keeping the feed of the same class to %s of process %ld: "
                  "it replaced another %lld s ago, so two downstreams share "
                  "that address (NAT) and would replace each other",
                  addr, (long)e->pid,
                  (long long)((now - e->replaced_ms) / 1000));
      replaced = e->replaced_ms; /* and so on, within the window */
    } else if (nvictims < sizeof victims / sizeof victims[0]) {
      victims[nvictims++] = e->pid;
      replaced = now;
    }
  }
  if (slot >= 0) {
    feed_entry *e = &t->e[slot];

    e->pid = me;
    snprintf(e->addr, sizeof e->addr, "%s", addr);
    e->key = key;
    e->replaced_ms = replaced;
  }
  unlock(t);
  for (i = 0; i < nvictims; i++) {
    log_notice("terminating the redundant feed of process %ld: %s asked "
               "again for the same class (/server/enable-anti-DOS)",
               (long)victims[i], peer);
    (void)kill(victims[i], SIGTERM);
  }
  if (slot < 0)
    log_warning("the upstream table is full (%zu feeds): the feed to %s is "
                "not recorded",
                t->n, peer);
  return slot;
}

void ldmd_feeds_leave(ldmd_feeds *t, int slot) {
  if (t == NULL || slot < 0 || (size_t)slot >= t->n)
    return;
  lock(t);
  if (t->e[slot].pid == getpid())
    memset(&t->e[slot], 0, sizeof t->e[slot]);
  unlock(t);
}

void ldmd_feeds_reaped(ldmd_feeds *t, pid_t pid) {
  size_t i;

  if (t == NULL || pid <= 0)
    return;
  lock(t);
  for (i = 0; i < t->n; i++)
    if (t->e[i].pid == pid)
      memset(&t->e[i], 0, sizeof t->e[i]);
  unlock(t);
}
