/*
 * lock.c - the locking protocol of the queue, and its crash detection.
 *
 * THE LOCKS.  Every lock is an fcntl open-file-description lock (F_OFD_*):
 * it belongs to the open file description made by pq_open(), not to the
 * process, so two handles in one process (or two threads with a handle each)
 * exclude each other as two processes would, and closing one descriptor of
 * the file does not silently drop the locks of another.  The kernel releases
 * every lock of a process that dies, which is what makes them useful as
 * liveness tokens.  The lock bytes (format.h has the map):
 *
 *   control byte 0      Shared: read the indexes (find the next product,
 *                       look up a signature, statistics).  Exclusive: change
 *                       them (reserve, commit, discard, evict, delete,
 *                       repair; and at a writer's open, to bump its writer
 *                       generation).  Held for bounded work only: never
 *                       across a callback or a wait, and across a data copy
 *                       only for small products (pq_insert() of at most
 *                       4 KiB, pq_insert_many() runs of about 64 KiB: see
 *                       pq/insert.c).
 *   intent byte 1       Writer preference.  fcntl locks have none: readers
 *                       taking the control byte shared one after another
 *                       starve a writer waiting for it exclusive (a feeder
 *                       beside 100 feeds spent 6 of 9 s there).  A writer
 *                       that cannot take the control byte at once sets
 *                       its bit in hd_wwait (bit i: writer byte i), takes
 *                       the intent byte exclusive (waiting for a writer
 *                       ahead of it), waits for the control byte, then
 *                       drops the intent byte and clears its bit.  A
 *                       reader that sees a bit set probes the intent byte
 *                       (F_OFD_GETLK) and, if a writer holds it, waits
 *                       for it shared and drops it at once: new readers
 *                       queue behind the waiting writer, which waits only
 *                       for the readers already inside.  The probe takes
 *                       no lock, so readers never hold the intent byte
 *                       against a writer.  With no bit set a reader pays
 *                       nothing (a few loads); an uncontended writer one
 *                       system call, as before.  A handle with no writer
 *                       byte (read-only, locking only to repair) waits
 *                       without preference.
 *   writer bytes        Each read-write handle holds one byte exclusively
 *                       for its whole life.  A reservation records the byte
 *                       and that byte's generation; a reservation whose byte
 *                       is no longer locked, or whose generation moved on,
 *                       belongs to a dead writer and is reclaimed.  Counting
 *                       the locked bytes gives the number of live writers.
 *   waiter bytes        A handle that sleeps in pq_wait() for the first time
 *                       takes one byte exclusively and holds it for the rest
 *                       of its life; bit i of hd_sleepers, set while it
 *                       sleeps, is waiter byte i.  A writer whose wake-up
 *                       woke nobody probes the bytes of the bits set and
 *                       clears the bits of sleepers whose byte is free: they
 *                       died asleep (see pq/wait.c).
 *   product regions     A reader takes a shared lock on a product's region
 *                       while it holds the control lock (shared), then drops
 *                       the control lock and runs its callback.  A writer that
 *                       wants to evict a product holds the control lock
 *                       exclusively and probes the region with F_OFD_GETLK:
 *                       if a reader holds it, the writer leaves it alone.
 *                       Because readers lock products only under the control
 *                       lock, the probe cannot race with a reader.  A reader
 *                       may keep a product's lock past its callback
 *                       (pq_pin(), until pq_unpin()): the same lock, only
 *                       dropped later, so the same rules hold.
 *
 * LOCK ORDER.  intent byte, then control byte, then a product region.
 * Nobody waits for the intent byte while holding the control byte: a
 * reader repairing drops its shared lock before it takes the exclusive
 * one, and goes back to shared by converting the lock it holds.  A writer
 * byte is taken without waiting (F_OFD_SETLK) at open, before the control
 * byte; a waiter byte without waiting in pq_wait(), with no other lock
 * held.  Nothing ever
 * waits for a product lock (no one locks a product exclusively), so no
 * cycle can form.
 *
 * WHAT GUARDS WHAT.  The control lock (exclusive) guards every change of a
 * slot, the derived indexes and every header field except the wake-up words
 * hd_commit_seq and hd_sleepers, which are atomics (see pq/wait.c), and
 * hd_wwait, atomics too (set and cleared by its writer, cleared for a dead
 * one by whoever finds it); hd_head
 * is also read without it, as a hint of where the next product goes.  The
 * writer generation table is changed under the exclusive control lock.  A
 * product's bytes are written only by the writer that reserved them, before
 * the commit makes them visible, and need no lock: no one else touches a
 * reserved region.
 *
 * CRASH DETECTION.  Whoever takes the control lock exclusively to change
 * slots or indexes sets hd_dirty first (pq__mutate_begin) and clears it last
 * (pq__mutate_end), and names in the intent record the slot whose fields it
 * is rewriting, if one (a writer's generation and the MVRT statistics are
 * single words, changed without the flag).
 * The kernel drops the lock of a process that dies in between, so the next
 * process to take the control lock finds hd_dirty set and knows: it rebuilds
 * the derived indexes from the slots (pq__rebuild) before doing anything
 * else.  A reader taking the shared lock that finds the flag set upgrades to
 * exclusive to repair (dropping its shared lock first), then goes back to
 * shared.  A handle whose mapping is read-only (the process may not write
 * the file) cannot repair: its lock fails with PQ_CORRUPT until a handle
 * that can has taken the lock.
 *
 * A WRITER KILLED WHILE IT WAITS.  The kernel drops its intent and writer
 * bytes; its hd_wwait bit stays.  Nobody stalls: readers seeing the bit
 * find the intent byte free and go on.  The first reader that finds it so,
 * or the next writer that gets the control byte after waiting while other
 * bits are set, probes the writer byte of each bit set (not its own) and
 * clears the bits of bytes no handle holds.  A bit per writer byte (not a
 * count) is what makes this possible: a count could not tell a dead
 * waiter's share from a live one's, and could drift.  Until it is cleared
 * a dead waiter costs readers one F_OFD_GETLK per lock.  A bit cleared just
 * as a new handle took that writer byte and began to wait costs that one
 * wait its preference, nothing more.
 */
#include <errno.h>
#include <fcntl.h>

#include "pq/internal.h"

static int repair_locked(pq_t *pq) {
  if (!pq->map_writable)
    return PQ__FAIL(pq, PQ_CORRUPT, 0,
                    "queue %s was left mid-change by a crashed process; a "
                    "writer must open it to repair it",
                    pq->path);
  int rc = pq__rebuild(pq, NULL, NULL);
  if (rc == PQ_OK)
    pq->hdr->hd_repairs++;
  return rc;
}

/* Is a writer waiting for the exclusive control lock, or has one died
 * while it was?  One load per word, no system call. */
static bool writers_waiting(const pq_t *pq) {
  for (unsigned i = 0; i < PQ_MAX_WRITERS / 64; i++)
    if (__atomic_load_n(&pq->hdr->hd_wwait[i], __ATOMIC_SEQ_CST) != 0)
      return true;
  return false;
}

/* Clear the hd_wwait bits of writer bytes no handle holds: their writers
 * died while they waited.  Never our own bit.  A bit of a byte that a new
 * handle takes between the probe and the clear may be cleared while that
 * writer waits: it then waits as writers did without preference, once. */
static void sweep_dead_waiters(pq_t *pq) {
  if (!pq->map_writable)
    return;
  uint64_t *words = pq->hdr->hd_wwait;
  for (unsigned w = 0; w < PQ_MAX_WRITERS / 64; w++) {
    uint64_t bits = __atomic_load_n(&words[w], __ATOMIC_SEQ_CST);
    while (bits != 0) {
      unsigned b = (unsigned)__builtin_ctzll(bits);
      bits &= bits - 1;
      unsigned idx = w * 64 + b;
      if (pq->writer >= 0 && idx == (unsigned)pq->writer)
        continue;
      if (pq__sys_lock_held(pq->fd, F_WRLCK, PQ_LOCK_WRITER + idx, 1) == 0)
        __atomic_fetch_and(&words[w], ~(UINT64_C(1) << b), __ATOMIC_SEQ_CST);
    }
  }
}

/* Take the control byte shared, behind any writer waiting for it: if a
 * bit of hd_wwait is set, wait until no writer holds the intent byte (a
 * probe, and only if one does a shared lock of it, dropped at once).  The
 * probe takes no lock, so readers never hold the intent byte against a
 * writer that wants it.  0, or -1 with errno set. */
static int take_shared(pq_t *pq) {
  if (writers_waiting(pq)) {
    int held = pq__sys_lock_held(pq->fd, F_RDLCK, PQ_LOCK_INTENT, 1);
    if (held < 0)
      return -1;
    if (held) {
      if (pq__sys_lock(pq->fd, F_OFD_SETLKW, F_RDLCK, PQ_LOCK_INTENT, 1) < 0)
        return -1;
      (void)pq__sys_lock(pq->fd, F_OFD_SETLK, F_UNLCK, PQ_LOCK_INTENT, 1);
    } else {
      /* Nobody holds the intent byte: a writer about to take it, or one
       * that died counted.  Clear the bits of the dead. */
      sweep_dead_waiters(pq);
    }
  }
  return pq__sys_lock(pq->fd, F_OFD_SETLKW, F_RDLCK, PQ_LOCK_CONTROL, 1);
}

/* Take the control byte exclusive.  Free: at once, one system call.  Held:
 * announce the wait (our hd_wwait bit), take the intent byte exclusive so
 * that new readers queue behind it, wait for the control byte, then drop
 * the intent byte and the bit.  A handle without a writer byte (read-only,
 * taking the lock only to repair) has no bit and waits without preference.
 * 0, or -1 with errno set. */
static int take_exclusive(pq_t *pq) {
  if (pq__sys_lock(pq->fd, F_OFD_SETLK, F_WRLCK, PQ_LOCK_CONTROL, 1) == 0)
    return 0;
  if (errno != EAGAIN && errno != EACCES)
    return -1;
  if (pq->writer < 0 || !pq->map_writable)
    return pq__sys_lock(pq->fd, F_OFD_SETLKW, F_WRLCK, PQ_LOCK_CONTROL, 1);
  uint64_t *word = &pq->hdr->hd_wwait[pq->writer / 64];
  uint64_t bit = UINT64_C(1) << (pq->writer % 64);
  __atomic_fetch_or(word, bit, __ATOMIC_SEQ_CST);
  int rc = pq__sys_lock(pq->fd, F_OFD_SETLKW, F_WRLCK, PQ_LOCK_INTENT, 1);
  if (rc == 0) {
    rc = pq__sys_lock(pq->fd, F_OFD_SETLKW, F_WRLCK, PQ_LOCK_CONTROL, 1);
    int lock_err = errno;
    (void)pq__sys_lock(pq->fd, F_OFD_SETLK, F_UNLCK, PQ_LOCK_INTENT, 1);
    errno = lock_err;
  }
  int err = errno;
  __atomic_fetch_and(word, ~bit, __ATOMIC_SEQ_CST);
  if (rc == 0 && writers_waiting(pq))
    sweep_dead_waiters(pq); /* the live ones' bytes are held: kept */
  errno = err;
  return rc;
}

int pq__ctl_take(pq_t *pq, bool exclusive) {
  return exclusive ? take_exclusive(pq) : take_shared(pq);
}

int pq__ctl_lock(pq_t *pq, bool exclusive) {
  if (pq__ctl_take(pq, exclusive) < 0)
    return PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_SETLKW) on %s",
                    pq->path);
  pq->ctl = exclusive ? PQ__EXCL : PQ__SHARED;
  if (__atomic_load_n(&pq->hdr->hd_dirty, __ATOMIC_ACQUIRE) == 0)
    return PQ_OK;
  int rc;
  if (exclusive || !pq->map_writable) {
    rc = repair_locked(pq); /* a read-only mapping only says it cannot */
  } else {
    /* Drop the shared lock, take the exclusive one, repair, go back to
     * shared.  Never upgrade in place: two readers upgrading at once would
     * each wait for the other's shared lock for ever (OFD locks get no
     * deadlock detection).  Another process may repair in between, which
     * the second look at the flag sees.  Going back to shared converts the
     * lock we hold, which waits for nobody (not for the intent byte). */
    (void)pq__sys_lock(pq->fd, F_OFD_SETLK, F_UNLCK, PQ_LOCK_CONTROL, 1);
    pq->ctl = PQ__UNLOCKED;
    if (take_exclusive(pq) < 0) {
      rc =
          PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_SETLKW) on %s", pq->path);
    } else {
      pq->ctl = PQ__EXCL;
      rc = pq->hdr->hd_dirty ? repair_locked(pq) : PQ_OK;
      if (pq__sys_lock(pq->fd, F_OFD_SETLKW, F_RDLCK, PQ_LOCK_CONTROL, 1) < 0 &&
          rc == PQ_OK)
        rc = PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_SETLKW) on %s",
                      pq->path);
      pq->ctl = PQ__SHARED;
    }
  }
  if (rc != PQ_OK)
    pq__ctl_unlock(pq);
  return rc;
}

void pq__ctl_unlock(pq_t *pq) {
  if (pq->ctl == PQ__UNLOCKED)
    return;
  /* Unlocking cannot fail on a valid descriptor and range. */
  (void)pq__sys_lock(pq->fd, F_OFD_SETLK, F_UNLCK, PQ_LOCK_CONTROL, 1);
  pq->ctl = PQ__UNLOCKED;
}

void pq__mutate_begin(pq_t *pq, enum pq_intent_op op, uint32_t slot) {
  struct pq_hdr *h = pq->hdr;
  h->hd_intent_op = op;
  h->hd_intent_slot = slot;
  /* The flag must be visible before any change it covers. */
  __atomic_store_n(&h->hd_dirty, 1, __ATOMIC_SEQ_CST);
}

void pq__mutate_end(pq_t *pq) {
  struct pq_hdr *h = pq->hdr;
  __atomic_store_n(&h->hd_dirty, 0, __ATOMIC_SEQ_CST);
  h->hd_intent_op = PQ_OP_NONE;
  h->hd_intent_slot = PQ_NIL;
}

int pq__lock_free_byte(pq_t *pq, uint64_t base, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (pq__sys_lock(pq->fd, F_OFD_SETLK, F_WRLCK, base + i, 1) == 0)
      return (int)i;
    if (errno != EAGAIN && errno != EACCES)
      return -1;
  }
  errno = EAGAIN;
  return -1;
}

int pq__writer_acquire(pq_t *pq) {
  int i = pq__lock_free_byte(pq, PQ_LOCK_WRITER, PQ_MAX_WRITERS);
  if (i >= 0) {
    pq->writer = i;
    return PQ_OK;
  }
  if (errno != EAGAIN)
    return PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_SETLK) on %s", pq->path);
  return PQ__FAIL(pq, PQ_WRITERS, 0, "%s: %u writers already", pq->path,
                  PQ_MAX_WRITERS);
}

bool pq__writer_alive(pq_t *pq, uint32_t idx, uint32_t gen) {
  if (idx >= PQ_MAX_WRITERS)
    return false;
  if (pq->writer >= 0 && idx == (uint32_t)pq->writer)
    return gen == pq->writer_gen; /* F_OFD_GETLK does not see our own */
  if (pq->wgen[idx] != gen)
    return false;
  int held = pq__sys_lock_held(pq->fd, F_WRLCK, PQ_LOCK_WRITER + idx, 1);
  return held != 0; /* on a probe error, assume alive: never reclaim wrongly */
}

int pq_writer_count(pq_t *pq, unsigned *count) {
  int rc = pq__check_call(pq, count != NULL, "pq_writer_count: NULL argument");
  if (rc != PQ_OK)
    return rc;
  unsigned n = pq->writer >= 0 ? 1 : 0;
  for (unsigned i = 0; i < PQ_MAX_WRITERS; i++) {
    if (pq->writer >= 0 && i == (unsigned)pq->writer)
      continue;
    int held = pq__sys_lock_held(pq->fd, F_WRLCK, PQ_LOCK_WRITER + i, 1);
    if (held < 0)
      return PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_GETLK) on %s",
                      pq->path);
    n += (unsigned)held;
  }
  *count = n;
  return PQ_OK;
}

int pq__prod_lock(pq_t *pq, uint64_t off, uint64_t len) {
  if (pq__sys_lock(pq->fd, F_OFD_SETLKW, F_RDLCK, pq->data_off + off, len) < 0)
    return PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_SETLKW) product on %s",
                    pq->path);
  pq->holding = true;
  pq->held_off = off;
  pq->held_len = len;
  return PQ_OK;
}

void pq__prod_unlock(pq_t *pq) {
  pq->pin_ok = false;
  if (!pq->holding)
    return;
  (void)pq__sys_lock(pq->fd, F_OFD_SETLK, F_UNLCK, pq->data_off + pq->held_off,
                     pq->held_len);
  pq->holding = false;
}

int pq_pin(pq_t *pq, pq_pin_t *pin) {
  int rc = pq__check_call(pq, pin != NULL, "pq_pin: NULL argument");
  if (rc != PQ_OK)
    return rc;
  if (!pq->holding || !pq->pin_ok)
    return PQ__FAIL(pq, PQ_INVAL, 0,
                    "pq_pin: not in the read callback of one product");
  /* The callback's lock becomes the pin: its reader no longer drops it. */
  pin->pn_off = pq->held_off;
  pin->pn_len = pq->held_len;
  pin->pn_data = pq->pin_data;
  pq->holding = false;
  pq->pin_ok = false;
  pq->pins++;
  return PQ_OK;
}

void pq_unpin(pq_t *pq, const pq_pin_t *pin) {
  if (pq == NULL || pin == NULL || pin->pn_len == 0)
    return;
  /* Unlocking cannot fail on a valid descriptor and range. */
  (void)pq__sys_lock(pq->fd, F_OFD_SETLK, F_UNLCK, pq->data_off + pin->pn_off,
                     pin->pn_len);
  if (pq->pins > 0)
    pq->pins--;
}

int pq__prod_held(pq_t *pq, uint64_t off, uint64_t len) {
  if (pq->holding && off < pq->held_off + pq->held_len &&
      pq->held_off < off + len)
    return 1;
  int held = pq__sys_lock_held(pq->fd, F_WRLCK, pq->data_off + off, len);
  if (held < 0)
    return PQ__FAIL(pq, PQ_SYSTEM, errno, "fcntl(F_OFD_GETLK) on %s", pq->path);
  return held;
}
