/*
 * ingester.c - the ingesters' region of the metrics file (ingester.h):
 * attaching to ldmd's file, claiming and freeing an entry, and copying the
 * live entries into a snapshot.
 */
#include "ldmd/metrics/ingester.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

ldmm_file *ldmm_attach(const char *path, char *err, size_t errlen) {
  return ldmm__open(path, true, err, errlen);
}

/* Is pid a process?  (EPERM: one of another user's, still a process.) */
static bool alive(uint32_t pid) {
  return pid != 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static void zero_entry(ldmm_ingester *e) {
  unsigned i;
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  atomic_store_explicit(&e->start_us,
                        (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
                        memory_order_relaxed);
  ldmm__own_set(&e->frames, 0);
  ldmm__own_set(&e->missed, 0);
  ldmm__own_set(&e->bytes, 0);
  ldmm__own_set(&e->fullfifo, 0);
  ldmm__own_set(&e->products, 0);
  ldmm__own_set(&e->duplicates, 0);
  ldmm__own_set(&e->failed, 0);
  for (i = 0; i < LDMM_NFEEDS; i++)
    ldmm__own_set(&e->inserted[i], 0);
  for (i = 0; i < LDMM_NRX; i++) {
    ldmm_rx *r = &e->rx[i];
    r->name[0] = '\0';
    ldmm__own_set(&r->datagrams, 0);
    ldmm__own_set(&r->bytes, 0);
    ldmm__own_set(&r->queue_max, 0);
    ldmm__own_set(&r->rcvbuf, 0);
    ldmm__own_set(&r->drops, 0);
  }
}

ldmm_ingester *ldmm_ingester_claim(ldmm_file *f, const char *channel,
                                   const char *const rx_names[], unsigned nrx) {
  uint32_t me = (uint32_t)getpid();
  unsigned i, k;

  for (i = 0;; i++) {
    ldmm_ingester *e = ldmm__ingester_at(f, i);
    uint64_t o, mine;

    if (e == NULL)
      return NULL;
    o = atomic_load_explicit(&e->owner, memory_order_acquire);
    if (alive(ldmm_owner_pid(o)))
      continue;
    mine = ldmm_owner((o >> 33) + 1, false, me);
    if (!atomic_compare_exchange_strong_explicit(
            &e->owner, &o, mine, memory_order_acq_rel, memory_order_relaxed))
      continue;
    zero_entry(e);
    snprintf(e->channel, sizeof e->channel, "%s",
             channel != NULL ? channel : "");
    if (nrx > LDMM_NRX)
      nrx = LDMM_NRX;
    for (k = 0; k < nrx; k++)
      snprintf(e->rx[k].name, sizeof e->rx[k].name, "%s",
               rx_names[k] != NULL ? rx_names[k] : "");
    atomic_store_explicit(&e->nrx, nrx, memory_order_relaxed);
    atomic_store_explicit(&e->owner, ldmm_owner((o >> 33) + 1, true, me),
                          memory_order_release);
    return e;
  }
}

void ldmm_ingester_release(ldmm_ingester *e) {
  uint64_t o;

  if (e == NULL)
    return;
  o = atomic_load_explicit(&e->owner, memory_order_relaxed);
  if (ldmm_owner_pid(o) == (uint32_t)getpid())
    atomic_store_explicit(&e->owner, ldmm_owner(o >> 33, false, 0),
                          memory_order_release);
}

static uint64_t ld(const _Atomic uint64_t *c) {
  return atomic_load_explicit(c, memory_order_relaxed);
}

/* Entry e into c.  @return 0, or -1 when it is not live, its process is
 * gone, or it changed hands during the copy. */
static int copy_entry(const ldmm_ingester *e, ldmm_ingester_copy *c) {
  uint64_t o = atomic_load_explicit(&e->owner, memory_order_acquire);
  unsigned i;

  if (!ldmm_owner_live(o) || !alive(ldmm_owner_pid(o)))
    return -1;
  c->pid = (pid_t)ldmm_owner_pid(o);
  c->start_us = atomic_load_explicit(&e->start_us, memory_order_relaxed);
  memcpy(c->channel, e->channel, sizeof c->channel);
  c->channel[sizeof c->channel - 1] = '\0';
  c->frames = ld(&e->frames);
  c->missed = ld(&e->missed);
  c->bytes = ld(&e->bytes);
  c->fullfifo = ld(&e->fullfifo);
  c->products = ld(&e->products);
  c->duplicates = ld(&e->duplicates);
  c->failed = ld(&e->failed);
  for (i = 0; i < LDMM_NFEEDS; i++)
    c->inserted[i] = ld(&e->inserted[i]);
  c->nrx = atomic_load_explicit(&e->nrx, memory_order_relaxed);
  if (c->nrx > LDMM_NRX)
    c->nrx = LDMM_NRX;
  for (i = 0; i < c->nrx; i++) {
    const ldmm_rx *r = &e->rx[i];
    memcpy(c->rx[i].name, r->name, sizeof c->rx[i].name);
    c->rx[i].name[sizeof c->rx[i].name - 1] = '\0';
    c->rx[i].datagrams = ld(&r->datagrams);
    c->rx[i].bytes = ld(&r->bytes);
    c->rx[i].queue_max = ld(&r->queue_max);
    c->rx[i].rcvbuf = ld(&r->rcvbuf);
    c->rx[i].drops = ld(&r->drops);
  }
  atomic_thread_fence(memory_order_acquire);
  return atomic_load_explicit(&e->owner, memory_order_relaxed) == o ? 0 : -1;
}

void ldmm__ingesters_copy(const uint8_t *base, uint32_t size,
                          ldmm_snapshot *snap) {
  unsigned i;

  snap->ningesters = 0;
  for (i = 0; i < LDMM_NINGESTERS; i++) {
    const ldmm_ingester *e = (const ldmm_ingester *)(base + (size_t)i * size);
    if (copy_entry(e, &snap->ingesters[snap->ningesters]) == 0)
      snap->ningesters++;
  }
}
