/*
 * edex_ring.h - the ring of notices `pqact -e` fills for AWIPS's and
 * EDEX's edexBridge: a System V shared-memory segment of slots and a set of
 * two semaphores, laid out and used exactly as LDM's pqact lays them out
 * and uses them, so that an unmodified edexBridge reads ours (the
 * project's LDM pqact reference, "-edex": sections 1.1 "-e", 1.5 "-edex"
 * and 7 "Bridges"; LDM's public pqact/filel.h, struct edex_message;
 * edexBridge.cpp of Unidata/awips2; our pqutils/pqact/pqact.1, EDEX
 * NOTICES).
 *
 * The contract, what the reader relies on:
 *
 *   keys     the segment's is ftok(path, 'R'), the semaphores' ftok(path,
 *            'e'), with path /etc/rc.d/rc.local; whatever ftok() returns,
 *            -1 too when the file does not exist (edexBridge computes the
 *            same keys the same way, so both then meet at key 0xffffffff).
 *            AWIPS's patched pqact takes other characters (-k, -s).
 *   segment  PQACT_EDEX_SLOTS slots, each struct pqact_edex_slot: the
 *            file's path, then the product's identifier, each a C string
 *            padded with NULs (strncpy()), truncated to 4095 and 255 bytes.
 *            4352 bytes a slot, no padding; the segment 21,760,000 bytes,
 *            mode 0666.
 *   sem[0]   the number of slots (5000): the reader sizes the segment by it.
 *   sem[1]   the index of the slot last written.  The reader, polling it,
 *            takes the slots after the last index it saw up to this one,
 *            going round the end (edexBridge: once a second).
 *
 * A notice is written into the next slot, then sem[1] is set to that
 * slot's index; the next slot is the one after, 0 after the last.  The
 * writer never waits for the reader: a reader more than 5000 notices
 * behind has lost the ones written over (it cannot tell).
 *
 * Where LDM's pqact leaves a gap, and what we do (our pqact.1 says it too):
 *
 *   - the first slot.  LDM's pqact sets sem[1] to -1 to mean "nothing
 *     yet", which a System V semaphore cannot hold (semctl() fails with
 *     ERANGE), so sem[1] stays 0: a reader attached before the first
 *     notice takes the empty slot 0 at once, then never sees the first
 *     notice, written into slot 0 with sem[1] set to 0 again.  Ours leaves
 *     slot 0 empty on a new ring and writes the first notice into slot 1:
 *     every notice is seen; a reader starting on a new ring takes the
 *     empty slot 0 as it does with LDM's.
 *   - a ring that exists (pqact killed, the key left behind).  LDM's
 *     pqact writes from slot 0 again, so a reader still attached sees the
 *     ring "go round" and takes up to 5000 old notices again.  Ours goes
 *     on after the slot sem[1] names when a reader is attached, and else
 *     starts it again as a new ring (slot 0 cleared, sem[1] 0), so that a
 *     reader starting later takes no old notice.
 *   - the end.  As LDM's pqact: the segment and the semaphores are
 *     removed ("Deleting shared segment."); a reader still attached then
 *     sees nothing more, and the notices it had not yet read are gone with
 *     the ring (the files are written).  edexBridge must be restarted with
 *     pqact (ldmd does, both being its EXECs).
 *   - one writer per ring.  Two of LDM's `pqact -e` with the same keys
 *     write over each other's notices.  Ours refuses a ring whose last
 *     writer (the process that last set sem[1], which every writer does
 *     when it starts) is a pqact still running, says so, and gives no
 *     notice (-k and -s give each pqact its own ring).
 *
 * Logs through ldmd/site/log.h.  One ring per process; not thread-safe.
 */
#ifndef PQACT_EDEX_RING_H
#define PQACT_EDEX_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The file LDM's pqact and edexBridge name the ring's keys by, and the
 * characters that make the keys of the segment and of the semaphores. */
#define PQACT_EDEX_FTOK_PATH "/etc/rc.d/rc.local"
#define PQACT_EDEX_SHM_PROJ 'R'
#define PQACT_EDEX_SEM_PROJ 'e'

/* The number of slots of LDM's pqact (its queue_size). */
#define PQACT_EDEX_SLOTS 5000u

/* One slot: LDM's struct edex_message, field for field. */
struct pqact_edex_slot {
  char filename[4096];
  char ident[256];
};
_Static_assert(sizeof(struct pqact_edex_slot) == 4352,
               "edexBridge reads 4352-byte slots");
_Static_assert(offsetof(struct pqact_edex_slot, ident) == 4096,
               "edexBridge reads the identifier at byte 4096 of a slot");

struct pqact_edex;

/**
 * The ring's keys: ftok(path, shm_proj) and ftok(path, sem_proj), -1 when
 * ftok() fails (as LDM's pqact and edexBridge, which do not check).
 */
void pqact_edex_keys(const char *path, int shm_proj, int sem_proj,
                     key_t *shm_key, key_t *sem_key);

/**
 * Create the ring with the keys of path, shm_proj and sem_proj, or attach
 * to the one that exists (see above for what is kept of it), and set
 * sem[0] to the number of slots.  The segment first, then the
 * semaphores, which edexBridge waits for.
 * @return the ring, or NULL after logging why (a segment of that key too
 *         small, another pqact writing the ring, no permission, out of
 *         memory...)
 */
struct pqact_edex *pqact_edex_open(const char *path, int shm_proj,
                                   int sem_proj);

/**
 * Notify the reader that filename holds the product identified by ident:
 * the next slot, then sem[1].  A path longer than a slot holds is cut (as
 * LDM's) and warned about.
 * @return 0, or -1 after logging why (the semaphores were removed)
 */
int pqact_edex_notify(struct pqact_edex *r, const char *filename,
                      const char *ident);

/** The index of the slot the next notice goes into (for the tests). */
unsigned pqact_edex_next(const struct pqact_edex *r);

/**
 * Detach; with remove, remove the segment and the semaphores first, as
 * LDM's pqact at its exit.  NULL: nothing.
 */
void pqact_edex_close(struct pqact_edex *r, bool remove);

#endif /* PQACT_EDEX_RING_H */
