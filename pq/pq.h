/*
 * pq.h - the product queue: one fixed-size file shared by many processes.
 *
 * DESIGN
 * ======
 * A product queue holds data products (weather bulletins, radar volumes,
 * satellite images, model grids) between the process that receives them and
 * the processes that relay, file or decode them.  It is one file, by default
 * on /dev/shm, whose capacity is fixed at creation both in bytes and in
 * product slots.  Any number of processes and threads open it at once; they
 * coordinate only through the file itself:
 *
 *   - fcntl open-file-description byte-range locks (F_OFD_SETLK...): a control
 *     lock that guards every index change, a shared lock on the byte range of
 *     each product a reader is using, one lock byte per open writer that
 *     doubles as a liveness token (the kernel drops the locks of a dead
 *     process, so the file never needs a list of pids), and one per reader
 *     that has slept in pq_wait(), which tells a dead sleeper from a live
 *     one;
 *   - index structures inside the file, made of offsets and slot numbers, never
 *     pointers: the slot table (the truth), a skip list ordered by insertion
 *     time, a hash table of MD5 signatures that rejects duplicates, and an
 *     address-ordered list of the regions in the data area;
 *   - a futex word in the mapping on which readers at the end of the queue
 *     sleep and which a committing writer bumps.
 *
 * Products are stored contiguously as their metadata followed by their data,
 * and a reader's callback gets a pointer into the mapping: reading copies
 * nothing.  Writing is two-phase: pq_reserve() takes space (and the
 * signature, so a duplicate is refused from that moment on), the caller fills
 * the space without any queue lock held, and pq_commit() makes the product
 * visible and gives it its insertion time.  pq_insert() does all three (for
 * a product of at most 4 KiB, under one hold of the control lock: the copy
 * is shorter than taking the lock twice).
 *
 * Space is used as a ring.  New products are placed at a write head that moves
 * through the data area and wraps; the products in front of the head are
 * evicted (they are the oldest ones).  A product that a reader holds, or that a
 * live writer is still filling, is never touched: the head jumps over it.
 * When the slots run out before the bytes do, the oldest product that nobody
 * holds is evicted.  A writer never waits for a reader: it fails with
 * PQ_LOCKED when no room can be made, because what stands in the way is
 * held, and then it has evicted nothing.
 *
 * Insertion times are microseconds since the epoch, made strictly increasing
 * by the queue (a clock that steps back cannot reorder the queue), so they
 * also identify a product's place in the queue.
 *
 * CRASH SAFETY.  A process killed at any instant (SIGKILL, OOM killer) leaves
 * a queue that the next process taking the control lock repairs by itself: a
 * dirty flag and an intent record in the header say that the previous holder
 * died inside a change, and the derived indexes are rebuilt from the slot
 * table.  A committed product is never altered or lost by a crash, and a
 * reservation left by a dead process is reclaimed (its space and signature are
 * given back).  See pq/format.h for the file format and pq/lock.c for the
 * locking protocol.
 *
 * CAVEATS
 * =======
 *   - A pq_t handle belongs to the process that opened it.  After fork() the
 *     child must open its own handle: every function called with an inherited
 *     handle fails with PQ_FORKED (the parent's handle stays valid).
 *   - A handle is not thread-safe: use one handle per thread (each pq_open()
 *     makes an independent open file description, so the threads' locks do
 *     not interfere), or serialise calls on a shared handle yourself.
 *   - A read-only handle opened on a file the process may not write cannot
 *     repair a queue left dirty by a crash: such reads fail with PQ_CORRUPT
 *     until a process that may write it has taken the control lock (opening
 *     it read-write does).  Nor can it allocate the holes of a sparse queue
 *     file: pq_open() refuses one (see there).
 *   - Do not put a queue on a network file system: fcntl locks and shared
 *     mappings are not reliable there.
 *   - A file system that stores zeros compressed or deduplicated (ZFS or
 *     btrfs with compression) may allocate fewer bytes to a queue than its
 *     size even after pq_create(): every open then takes the file for one
 *     with holes (see pq_open()).  One that cannot allocate ahead at all
 *     (no fallocate) gets a queue whose blocks pq_create() wrote, and
 *     cannot protect an older sparse queue from SIGBUS.
 *   - A callback given to pq_next() or pq_find() runs while the product is
 *     read-locked; keep it short, since a held product cannot be evicted and
 *     writers jump over it.  It must not close the handle, and may not read
 *     through the same handle (pq_next() and pq_find() then fail with
 *     PQ_INVAL: a handle holds one product at a time); it may insert and
 *     delete, through the same handle or another, and read through another
 *     handle.
 *   - systemd's RemoveIPC=yes deletes files a user owns in /dev/shm when the
 *     user logs out: run the server as a system user or put the queue
 *     elsewhere.
 *
 * ERRORS
 * ======
 * Every function that can fail returns 0 (PQ_OK) or one negative code of the
 * table below (pq_next() and pq_find() also pass on a callback's non-zero
 * value); pq_strerror() gives the message of any code.  Where a system call
 * failed, pq_last_error() on the handle (or the pq_error a creating or
 * opening call fills) names the call and the errno.  The library never logs,
 * never prints and never exits: what a caller must hear of though no call
 * failed (a damaged index mended on the way) goes to the notice function
 * the program gives pq_set_notice(), which logs it as it logs the rest.
 *
 * Three failures are common to many calls and listed with each:
 *   - PQ_FORKED for a handle inherited across fork(), PQ_INVAL for a NULL
 *     handle: every call given a handle, except pq_close() (NULL: nothing
 *     to do) and the accessors that cannot fail (pq_path(),
 *     pq_cursor_set()...), which take a valid handle;
 *   - PQ_SYSTEM, PQ_NOMEM, PQ_CORRUPT from taking the control lock: the
 *     lock's fcntl failed; the lock found a queue a crash left dirty and its
 *     repair ran out of memory; or the handle's mapping is read-only (the
 *     process may not write the file), so it cannot repair such a queue.
 */
#ifndef PQ_PQ_H
#define PQ_PQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/product.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The error table: X(name, value, message).  Each message starts with the
 * symbolic name so that log lines can be searched for it.
 */
#define PQ_ERROR_MAP(X)                                                        \
  X(PQ_OK, 0, "PQ_OK: success")                                                \
  X(PQ_END, -1, "PQ_END: no more products in that direction")                  \
  X(PQ_DUP, -2, "PQ_DUP: a product with that signature is already queued")     \
  X(PQ_BIG, -3, "PQ_BIG: product is larger than the queue's data area")        \
  X(PQ_SYSTEM, -4, "PQ_SYSTEM: a system call failed")                          \
  X(PQ_LOCKED, -5,                                                             \
    "PQ_LOCKED: no room: every product that could make room is in use")        \
  X(PQ_CORRUPT, -6, "PQ_CORRUPT: the queue is inconsistent")                   \
  X(PQ_NOTFOUND, -7, "PQ_NOTFOUND: no such product")                           \
  X(PQ_INVAL, -8, "PQ_INVAL: invalid argument")                                \
  X(PQ_FORMAT, -9, "PQ_FORMAT: not a product queue of this format")            \
  X(PQ_VERSION, -10, "PQ_VERSION: product queue of another format version")    \
  X(PQ_EXISTS, -11, "PQ_EXISTS: the queue file already exists")                \
  X(PQ_NOSPACE, -12, "PQ_NOSPACE: not enough free space for the queue file")   \
  X(PQ_TOOSMALL, -13, "PQ_TOOSMALL: queue size or slot count too small")       \
  X(PQ_TOOBIG, -14, "PQ_TOOBIG: queue size or slot count too large")           \
  X(PQ_NOWRITE, -15, "PQ_NOWRITE: the queue is open read-only")                \
  X(PQ_TIMEDOUT, -16, "PQ_TIMEDOUT: nothing arrived before the timeout")       \
  X(PQ_NOMEM, -17, "PQ_NOMEM: out of memory")                                  \
  X(PQ_FORKED, -18, "PQ_FORKED: queue handle used across fork()")              \
  X(PQ_WRITERS, -19, "PQ_WRITERS: too many writers have the queue open")       \
  X(PQ_BADRESV, -20, "PQ_BADRESV: not a reservation of this handle")           \
  X(PQ_DAMAGED, -21,                                                           \
    "PQ_DAMAGED: a product's bytes do not match their checksum")

enum pq_status {
#define PQ__ENUM(name, value, msg) name = (value),
  PQ_ERROR_MAP(PQ__ENUM)
#undef PQ__ENUM
      PQ_ERROR_MIN = -21
};

/**
 * Message for a pq status code.
 * @param code any value of enum pq_status; anything else gives a generic
 *        "unknown error" text.
 * @return a static string, never NULL.  Thread-safe.
 */
const char *pq_strerror(int code);

/** Symbolic name of a status code ("PQ_DUP"), or "PQ_UNKNOWN". */
const char *pq_errname(int code);

/**
 * CRC-32C (Castagnoli, the CRC of iSCSI and ext4) of len bytes: the
 * checksum the queue keeps for every product, offered so that a program
 * checksumming its own files (pqsave's snapshots) uses the same code, with
 * the processor's CRC instructions where it has them.  The usual
 * conventions: reflected, register initialised to all ones and inverted at
 * the end, so pq_crc32c(0, "123456789", 9) is 0xE3069283.
 * @param crc   0 to start; the previous result to continue over more bytes
 *              (pq_crc32c(pq_crc32c(0, a, n), b, m) is the CRC of a then b)
 * @param data  the bytes; may be NULL only when len is 0
 * @param len   the number of bytes, any size
 * @return the CRC.  Pure: thread-safe, safe after fork(), no handle needed.
 */
uint32_t pq_crc32c(uint32_t crc, const void *data, size_t len);

/** Detail of the last failure: code, errno of a failed system call (or 0),
 *  and a message that names the path or the system call. */
typedef struct pq_error {
  int pe_code;
  int pe_errno;
  char pe_msg[320];
} pq_error;

/** Opaque handle of an open queue. */
typedef struct pq pq_t;

/* ---------------------------------------------------------------------- */
/* Creating, opening and closing                                          */
/* ---------------------------------------------------------------------- */

/** Average product size LDM assumes when choosing a slot count (6.13.14+). */
#define PQ_AVG_PRODUCT_SIZE 140000u
/** Smallest data area and slot count a queue may have. */
#define PQ_MIN_DATA_SIZE 4096u
#define PQ_MIN_SLOTS 8u
/** Largest slot count (slot numbers are 32-bit in the file). */
#define PQ_MAX_SLOTS (1u << 30)
/** Most writer handles open at once on one queue. */
#define PQ_MAX_WRITERS 1024u

/* Flags of pq_create() */
#define PQ_CLOBBER 0x01u /**< replace an existing file */

/* Flags of pq_open() */
#define PQ_READONLY 0x02u /**< read only: pq_insert & co. fail PQ_NOWRITE */

typedef struct pq_create_opts {
  uint64_t pc_data_size; /**< bytes for products (rounded up to 4 KiB) */
  uint64_t pc_slots;     /**< product slots; 0: data_size / 140,000, >= 8 */
  unsigned pc_mode;      /**< permission bits before the umask; 0: 0660 */
  unsigned pc_flags;     /**< PQ_CLOBBER */
} pq_create_opts;

/**
 * Slot count pq_create() uses when pc_slots is 0: size / PQ_AVG_PRODUCT_SIZE,
 * but at least PQ_MIN_SLOTS (LDM hangs on fewer than 8; we round up instead)
 * and at most PQ_MAX_SLOTS.  Cannot fail.
 */
uint64_t pq_default_slots(uint64_t data_size);

/**
 * Bytes the file of a queue of that geometry takes (header, indexes, data),
 * which pq_create() allocates; slots 0 stands for pq_default_slots().
 * Returns 0 if the geometry is invalid (what pq_create() refuses with
 * PQ_TOOSMALL or PQ_TOOBIG).
 */
uint64_t pq_file_size(uint64_t data_size, uint64_t slots);

/**
 * Create a queue file and open it for writing.
 *
 * Every block of the file is allocated at creation (fallocate, which
 * writes nothing: about a quarter of a second per GB on tmpfs, milliseconds
 * on ext4), so that the queue cannot later die of SIGBUS when its tmpfs
 * fills up (a shared mapping of a file with holes gets SIGBUS when a page
 * of a hole is first touched and the file system has no room for it: LDM
 * issue #79).  The free space of the file system is checked first, so that
 * a queue too big for it is refused at once.  The new file is made under a
 * temporary name in the same directory and moved into place, so a
 * concurrent opener never sees a half-made queue, and a creation that fails
 * before that leaves no file (and an old queue as it was); with PQ_CLOBBER
 * the file system needs room for the new file beside the old one until the
 * old one is replaced.
 *
 * @param path   the queue file
 * @param opts   geometry, mode and flags (see pq_create_opts)
 * @param[out] pqp the new handle, open read-write (NULL on failure)
 * @param[out] err detail of a failure (may be NULL)
 * @retval PQ_OK
 * @retval PQ_INVAL    path, opts or pqp is NULL
 * @retval PQ_EXISTS   the file exists and PQ_CLOBBER was not given
 * @retval PQ_TOOSMALL data size < PQ_MIN_DATA_SIZE or slots < PQ_MIN_SLOTS
 * @retval PQ_TOOBIG   slots > PQ_MAX_SLOTS, or a data size above 2^60 bytes
 * @retval PQ_NOSPACE  the file system has not room for the whole file
 *                     (err's errno is ENOSPC or EDQUOT)
 * @retval PQ_SYSTEM   a system call failed (err names it)
 * @retval PQ_NOMEM
 * @retval any code of pq_open(), which opens the new file once it is in
 *         place (the queue then exists, whole)
 * Thread-safe; the handle is not (see CAVEATS).
 */
int pq_create(const char *path, const pq_create_opts *opts, pq_t **pqp,
              pq_error *err);

/**
 * Open an existing queue.
 *
 * The header is validated before anything else is trusted: magic number,
 * format version, layout signature, header checksum, and geometry against the
 * file's real size.  A foreign, truncated or damaged file is refused, never
 * mapped blindly.  Opening costs O(1) in the queue size, unless it finds a
 * file with holes to allocate (below) or, read-write, a queue a crash left
 * dirty to repair.  A read-write open takes one writer lock byte (see
 * pq_writer_count()) and the control lock, briefly.
 *
 * A queue file with holes (made sparse by an older build, or copied with
 * holes) would die of SIGBUS once its file system fills up: a handle that
 * can write the file (any read-write one, and a read-only one when the
 * process may write the file) allocates the holes before mapping it; one
 * that cannot is refused with PQ_NOSPACE.  A file is taken to have holes
 * when fewer bytes are allocated to it than its size.
 *
 * @param flags 0 for read-write, PQ_READONLY for read only
 * @param[out] pqp the handle (NULL on failure)
 * @param[out] err detail of a failure (may be NULL)
 * @retval PQ_OK
 * @retval PQ_INVAL   path or pqp NULL, or an unknown flag
 * @retval PQ_FORMAT  not a queue file, truncated, or header damaged
 * @retval PQ_VERSION a queue of another format version
 * @retval PQ_NOSPACE the file has holes and they cannot be allocated: no
 *                    room (err's errno ENOSPC), or the handle cannot write
 *                    the file (errno 0)
 * @retval PQ_WRITERS PQ_MAX_WRITERS writer handles are already open
 * @retval PQ_SYSTEM  open, fstat, pread, fallocate, mmap or a lock failed
 *                    (ENOENT, EACCES...)
 * @retval PQ_NOMEM   no memory for the handle, or for repairing a queue a
 *                    crash left dirty (read-write)
 */
int pq_open(const char *path, unsigned flags, pq_t **pqp, pq_error *err);

/**
 * Close a handle: ends an outstanding reservation (discarded), releases every
 * lock, unmaps and closes.  The handle is freed whatever the outcome.
 * @retval PQ_OK       (also for NULL)
 * @retval PQ_FORKED   called in a child on an inherited handle: only the
 *                     child's memory is freed, the parent's locks are
 *                     untouched
 */
int pq_close(pq_t *pq);

/**
 * The last failure recorded on this handle (code PQ_OK if none yet); a
 * success does not clear it.  Right after a call returned PQ_SYSTEM it
 * names the system call, the path and the errno.  The outcomes that are no
 * failure (PQ_END, PQ_NOTFOUND, PQ_TIMEDOUT, a callback's value), PQ_LOCKED
 * of pq_delete() and PQ_CORRUPT of pq_check() (its report says what failed)
 * leave it as it was.  Cannot fail; pq must be valid.
 */
const pq_error *pq_last_error(const pq_t *pq);

/**
 * What the library did that no call's result shows and an operator must
 * know: it found a damaged index while reading and rebuilt the indexes from
 * the slot table (pq_next()), and what that dropped.  msg is one line that
 * names the queue, what was found and what the repair did.
 */
typedef void pq_notice_fn(void *arg, const char *msg);

/**
 * Give the library a notice function for the whole process (NULL: notices
 * are dropped, the default).  Set it once at start, before threads or
 * handles; children made by fork() keep it.  It is called from inside
 * library calls, with no lock of the queue held: it may log, and must not
 * call the library on the same handle.
 */
void pq_set_notice(pq_notice_fn *fn, void *arg);

/** Path the queue was opened with.  Cannot fail; pq must be valid. */
const char *pq_path(const pq_t *pq);

/** Geometry of an open queue.  Cannot fail; pq must be valid. */
uint64_t pq_data_size(const pq_t *pq);
uint64_t pq_slot_count(const pq_t *pq);

/**
 * The largest product, in data bytes, that pq_insert() and pq_reserve()
 * accept when its origin and identifier are origin_len and ident_len
 * characters long: one byte more fails with PQ_BIG.  Such a product fills
 * the whole data area (its record shares the area with its data), so it
 * goes in only when everything queued can be evicted, else PQ_LOCKED.
 * For a program that must bound what it reads before it inserts (pqinsert
 * reading a pipe).  Lengths above PQ_ORIGIN_MAX and PQ_IDENT_MAX count as
 * those.  O(1), takes no lock, makes no system call.
 */
uint64_t pq_max_product_size(const pq_t *pq, size_t origin_len,
                             size_t ident_len);

/* ---------------------------------------------------------------------- */
/* Writing                                                                */
/* ---------------------------------------------------------------------- */

/** An outstanding reservation (see pq_reserve()). */
typedef struct pq_resv {
  uint32_t pr_slot; /**< slot number; internal */
  uint64_t pr_key;  /**< identifies the reservation; internal */
  void *pr_data;    /**< where the caller writes info->size bytes */
  uint64_t pr_size; /**< data bytes to write (info->size) */
} pq_resv;

/**
 * Insert a whole product: reserve, copy the data, commit.  The data of a
 * product of more than 4 KiB is copied with no queue lock held; a smaller
 * one is reserved, copied and committed under one hold of the control lock.
 * The signature in info is taken as given: the queue does not hash.
 *
 * @param info metadata; info->size bytes are read from data
 * @retval PQ_OK
 * @retval PQ_DUP      a product with that signature is queued or reserved
 * @retval PQ_BIG      the product cannot fit in the data area even if empty
 * @retval PQ_LOCKED   no room: what could make room is held by readers or
 *                     being written by live writers, or no slot can be
 *                     freed (nothing was evicted)
 * @retval PQ_INVAL    NULL handle, info NULL, data NULL with info->size > 0,
 *                     origin or ident too long or not NUL-terminated, or the
 *                     creation time's microseconds outside 0 .. 999999
 * @retval PQ_NOWRITE  handle opened read-only
 * @retval PQ_BADRESV  a product of more than 4 KiB while the handle has a
 *                     reservation outstanding (pq_insert() reserves too)
 * @retval PQ_CORRUPT  the index is inconsistent (see pq_check()), or the
 *                     header's write head, free-slot stack, slot counters,
 *                     last insertion time or time-index tails disagree with
 *                     the slots ("header damaged": checked before anything
 *                     is evicted, so nothing was); the queue is left for the
 *                     next locker to rebuild
 * @retval PQ_SYSTEM, PQ_NOMEM  taking the control lock failed (see ERRORS)
 * @retval PQ_FORKED
 */
int pq_insert(pq_t *pq, const pq_prod_info *info, const void *data);

/**
 * Insert n whole products, in order, as n pq_insert() calls would, but
 * taking the control lock once for each run of small products (up to 4 KiB
 * each, 64 KiB a run): for a program that has many products at hand.
 * Readers see each product as soon as its run is committed.
 *
 * @param infos, data  the products (data[i] holds infos[i]->size bytes)
 * @param rcs          each product's outcome, as pq_insert() returns it
 * @retval PQ_OK       every product was tried: see rcs
 * @retval PQ_SYSTEM, PQ_NOMEM, PQ_CORRUPT  the failure that stopped the
 *                     batch; it is also in rcs[] of the product that met it
 *                     and of every product after it (not tried)
 * @retval PQ_INVAL    NULL handle, or a NULL array with n > 0 (rcs[] is not
 *                     written)
 * @retval PQ_FORKED   (rcs[] is not written)
 */
int pq_insert_many(pq_t *pq, size_t n, const pq_prod_info *const infos[],
                   const void *const data[], int rcs[]);

/**
 * Reserve room for a product and claim its signature: from now on another
 * insert of the same signature fails with PQ_DUP.  The metadata is written at
 * once; the caller then writes info->size bytes at resv->pr_data, with no
 * lock held, and calls pq_commit() or pq_discard().  A handle has at most one
 * outstanding reservation.  If the process dies before committing, the
 * reservation is reclaimed by the queue.
 *
 * @retval as pq_insert(), plus PQ_INVAL for a NULL resv and PQ_BADRESV if
 *         the handle already has a reservation, whatever the size.
 */
int pq_reserve(pq_t *pq, const pq_prod_info *info, pq_resv *resv);

/**
 * Make a reserved product visible to readers and give it its insertion time
 * (strictly greater than every earlier one).  Wakes waiting readers; costs no
 * system call for that when nobody waits.
 * @retval PQ_OK
 * @retval PQ_BADRESV  not this handle's outstanding reservation (or NULL)
 * @retval PQ_CORRUPT  the reservation vanished from its slot (a repair
 *                     dropped it as damaged), or the time index or the last
 *                     insertion time is damaged (the queue is left for the
 *                     next locker to rebuild); either way the handle no
 *                     longer has the reservation
 * @retval PQ_SYSTEM, PQ_NOMEM  taking the control lock failed: the
 *                     reservation is still open
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_commit(pq_t *pq, pq_resv *resv);

/**
 * Commit with a given insertion time instead of now: for copying a queue
 * (pqcopy) and restoring a snapshot, which keep products' insertion times.
 * The product takes its place in insertion order even if newer products are
 * queued; a reader whose cursor is already past that time does not see it.
 * @param inserted_us microseconds since the epoch, 1 .. 2^62
 * @retval as pq_commit(), plus PQ_INVAL for a time out of range and PQ_DUP
 *         if a queued product has that insertion time (the reservation is
 *         then still open: discard it)
 */
int pq_commit_at(pq_t *pq, pq_resv *resv, uint64_t inserted_us);

/**
 * Abandon a reservation: its space and signature are freed.
 * @retval PQ_OK       (also when a repair had already dropped it)
 * @retval PQ_BADRESV  not this handle's outstanding reservation (or NULL)
 * @retval PQ_SYSTEM, PQ_NOMEM  taking the control lock failed: the
 *                     reservation is still open
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_discard(pq_t *pq, pq_resv *resv);

/* ---------------------------------------------------------------------- */
/* Reading                                                                */
/* ---------------------------------------------------------------------- */

/** Where a product sits in the queue, given to reading callbacks. */
typedef struct pq_place {
  uint64_t pp_inserted; /**< insertion time, microseconds since the epoch */
  uint64_t pp_offset;   /**< byte offset of its region in the file */
  bool pp_oldest;       /**< it was the oldest product: the reader lags */
  /** pq_next_many(): another product of the batch comes next if this
   *  callback returns 0 (and the next passes its check).  A sender may
   *  hold this one's bytes back to go out with the next's (MSG_MORE). */
  bool pp_more;
} pq_place;

/**
 * Callback of pq_next() and pq_find().  Runs with the product read-locked;
 * data points into the shared mapping (info->size bytes) and is valid only
 * during the call.  Return 0 to go on; a non-zero value is returned by
 * pq_next(), and the cursor is left before the product, so that the next
 * pq_next() offers it again.
 */
typedef int pq_read_fn(const pq_prod_info *info, const void *data,
                       const pq_place *place, void *arg);

/* Cursor: each handle has one, in process memory, holding the insertion
 * time of the last product visited.  A new handle's cursor is before the
 * oldest product.  The functions that only set or read it cannot fail and
 * take a valid handle. */

/** Put the cursor before the oldest product. */
void pq_cursor_oldest(pq_t *pq);
/**
 * Put the cursor after the newest product: a forward read gets only what is
 * committed from now on, and pq_wait() waits for it.
 * @retval PQ_OK
 * @retval PQ_SYSTEM, PQ_NOMEM, PQ_CORRUPT  taking the control lock failed
 *         (see ERRORS); the cursor is unchanged
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_cursor_newest(pq_t *pq);
/** Cursor value that puts a backward read at the newest product. */
#define PQ_CURSOR_END UINT64_MAX
/** Put the cursor at an insertion time (microseconds): a forward read gets
 *  the first product inserted after it, a backward read the last one
 *  inserted before it (PQ_CURSOR_END: the newest). */
void pq_cursor_set(pq_t *pq, uint64_t inserted_us);
/** The cursor's insertion time (0 before the oldest). */
uint64_t pq_cursor_get(const pq_t *pq);
/**
 * Put the cursor just after the product with that signature (how a
 * downstream resumes a feed).  O(1).  sig must not be NULL.
 * @retval PQ_OK
 * @retval PQ_NOTFOUND no committed product has it (cursor unchanged)
 * @retval PQ_SYSTEM, PQ_NOMEM, PQ_CORRUPT  taking the control lock failed
 *         (see ERRORS)
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_cursor_after_signature(pq_t *pq, const uint8_t sig[PQ_SIGLEN]);

#define PQ_FORWARD 1
#define PQ_BACKWARD (-1)

/**
 * Move the cursor one product in a direction and hand the product to fn if
 * it matches the class (NULL matches everything).  Products that do not match
 * are stepped over (at most a bounded number per call, so that the control
 * lock is held briefly: then PQ_OK is returned without calling fn, with the
 * cursor advanced; call again).
 *
 * Each node of the time index the walk follows is checked against the slot
 * table (a committed slot whose checksum holds, in order, linked both ways),
 * so a damaged index fails the call instead of ending it early.  A
 * read-write handle then rebuilds the indexes from the slots, as
 * pq_repair() does, and tries once more; a read-only handle fails.
 *
 * @retval PQ_OK      fn was called and returned 0, or products were skipped
 * @retval PQ_END     nothing more in that direction (the cursor is past
 *                    the products stepped over)
 * @retval fn's value when non-zero (the product is offered again next time)
 * @retval PQ_INVAL   NULL handle or fn, a direction other than PQ_FORWARD
 *                    and PQ_BACKWARD, or called from a read callback of the
 *                    same handle
 * @retval PQ_DAMAGED verification is on (pq_set_verify) and the product's
 *                    bytes fail their checksum: fn was not called, the cursor
 *                    is past the product
 * @retval PQ_CORRUPT the time index, a slot or a record is damaged (and a
 *                    read-write handle could not mend it), or the control
 *                    lock could not repair (see ERRORS)
 * @retval PQ_SYSTEM  the control lock or the product's lock failed
 * @retval PQ_NOMEM   the control lock's repair ran out of memory
 * @retval PQ_FORKED
 */
int pq_next(pq_t *pq, int direction, const pq_class *cls, pq_read_fn *fn,
            void *arg);

/** A product kept from eviction past its read callback (pq_pin()). */
typedef struct pq_pin_t {
  uint64_t pn_off;  /**< its region: offset in the data area */
  uint64_t pn_len;  /**< its region's bytes (0: no pin) */
  uint64_t pn_data; /**< file offset of its data (info->size bytes) */
} pq_pin_t;

/**
 * From the callback of pq_next() or pq_find(): keep the product's read
 * lock after the callback returns, until pq_unpin().  Meanwhile the
 * product is held as during the callback (never evicted; writers jump
 * over it, and fail with PQ_LOCKED after a lap without room), and its
 * bytes stay at pin->pn_data in the file, for a reader that hands them to
 * the kernel by reference (sendfile(2) from pq_fd()) and must keep them
 * until the kernel is done with them.  The pin is an fcntl lock like any
 * other product lock: it vanishes when the handle is closed or the
 * process dies.  The callback must then return 0 (a product offered again
 * would be read again, and its read drops the lock); the same handle must
 * not read a pinned product again, for the same reason, and its own
 * writes do not see its pins (as they do not see its read locks).  A
 * reader bounds what it pins: each pin is bytes that writers cannot use.
 * While a handle holds pins, its pq_next_many() batches take only products
 * that lie side by side: a batch is locked and unlocked as one range, and
 * unlocking a range over a pinned product would drop its pin.
 * @retval PQ_OK
 * @retval PQ_INVAL not in the callback of pq_next() or pq_find() (nor in
 *                  pq_next_many()'s, unless its batch is one product), or
 *                  pin NULL
 */
int pq_pin(pq_t *pq, pq_pin_t *pin);

/** Release a pin of pq_pin() (one with pn_len 0 is ignored). */
void pq_unpin(pq_t *pq, const pq_pin_t *pin);

/** The queue file's descriptor, for sendfile(2) of pinned products: do
 *  not close it, lock it, or move its offset.  pq must be valid. */
int pq_fd(const pq_t *pq);

/* The most products one pq_next_many() call hands out. */
#define PQ_NEXT_MANY_MAX 32

/**
 * pq_next() for up to max products at once (0 or more than
 * PQ_NEXT_MANY_MAX: PQ_NEXT_MANY_MAX): the next products of the class in
 * that direction are found under one hold of the control lock, read-locked
 * together by one shared lock over the part of the data area that holds
 * them, and handed to fn one after the other, in order, after the control
 * lock is dropped.  Each is locked and valid during its call, as with
 * pq_next(), and so are the others of the batch: a batch is therefore
 * bounded, besides max, to products in one run of the data area (it ends
 * where the ring wraps) spanning at most 256 KiB and 1/32 of the data
 * area (a first product larger than that comes alone), so that writers,
 * which jump over held bytes and never wait for them, lose little room.
 * For a reader that takes many small products and acts on each quickly;
 * a callback that may block for long (a pipe to a slow decoder) holds the
 * whole batch meanwhile.
 *
 * The cursor moves past each product handed over.  A callback's non-zero
 * value ends the batch: it is returned, and the cursor is left before that
 * product, which the next call offers again (the rest of the batch too).
 * A product that fails verification ends the batch with PQ_DAMAGED, the
 * cursor past it.
 *
 * @retval as pq_next()
 */
int pq_next_many(pq_t *pq, int direction, const pq_class *cls, unsigned max,
                 pq_read_fn *fn, void *arg);

/**
 * Wait until a product may have been committed since the last pq_next() that
 * returned PQ_END (or pq_cursor_newest()), or until timeout_ms passes (-1: no
 * limit).  Spins briefly (see pq_set_spin()), then sleeps on the queue's
 * futex word, having set its bit in the header's sleeper bitmap so that a
 * committing writer wakes it; no signals.  A handle that cannot set a bit
 * (its mapping is read-only because the process may not write the file,
 * PQ_MAX_WAITERS other handles have taken a waiter lock byte, which each
 * keeps until closed, or taking one failed) is not woken by writers: it
 * sleeps in slices of 10 ms and looks at the word after each, so it sees a
 * commit up to 10 ms late.
 * @retval PQ_OK       something was committed, or a signal interrupted the
 *                     sleep (call pq_next(); check your signal flags)
 * @retval PQ_TIMEDOUT the time passed
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_wait(pq_t *pq, int timeout_ms);

/** Microseconds pq_wait() spins before it sleeps (default 50; 0 disables).
 *  Cannot fail; pq must be valid. */
void pq_set_spin(pq_t *pq, unsigned spin_us);

/** What pq_set_verify() asks of a handle. */
enum pq_verify {
  PQ_VERIFY_OFF = 0,  /**< no check (the default) */
  PQ_VERIFY_EACH = 1, /**< every product, every time (pqcat, pqcheck) */
  PQ_VERIFY_ONCE = 2, /**< a product no reader has found sound yet */
};

/**
 * Verify products before reading them (default PQ_VERIFY_OFF): pq_next(),
 * pq_next_many() and pq_find() then compute the CRC32C of each product they
 * are about to hand to the callback (its metadata record and data, as
 * stored) and compare it with the one its commit recorded.  A product that
 * differs is not handed over: the call fails with PQ_DAMAGED,
 * pq_last_error() names the product (insertion time, signature,
 * identifier), and the cursor of pq_next() and pq_next_many() is just past
 * it: the next call goes on with the product after it, so each damaged
 * product is reported once per handle and never hides a sound one.  Costs
 * one pass over each product's bytes (several GB/s), outside the control
 * lock.
 *
 * A product found sound is marked so in its slot, by any verifying handle
 * whose mapping is writable (the mark is set while the product is
 * read-locked; a product committed later in the same slot starts
 * unmarked).  PQ_VERIFY_ONCE trusts that mark and skips the pass over a
 * product another reader (or this one) has already found sound, so that N
 * readers of the same products pay for about one check, not N: damage
 * done between a product's commit and its first check is caught, damage
 * done after it is not caught by a ONCE reader (docs/security.md, "Damaged
 * products").  PQ_VERIFY_EACH ignores the mark and checks every product,
 * as the tools that look for damage must.  A damaged product is never
 * marked, so every verifying reader reports it.  true and false, as
 * passed before the modes existed, mean PQ_VERIFY_EACH and
 * PQ_VERIFY_OFF.  Cannot fail; pq must be valid.
 */
void pq_set_verify(pq_t *pq, enum pq_verify how);

/**
 * Hand the product with that signature to fn (read-locked), in O(1).  The
 * cursor does not move.
 * @retval PQ_OK       fn returned 0
 * @retval fn's value when non-zero
 * @retval PQ_NOTFOUND no committed product has that signature
 * @retval PQ_INVAL    NULL handle, sig or fn, or called from a read callback
 *                     of the same handle
 * @retval PQ_DAMAGED  verification is on and the product fails it (fn not
 *                     called)
 * @retval PQ_CORRUPT  the product's slot or record is damaged, or the
 *                     control lock could not repair (see ERRORS)
 * @retval PQ_SYSTEM   the control lock or the product's lock failed
 * @retval PQ_NOMEM    the control lock's repair ran out of memory
 * @retval PQ_FORKED
 */
int pq_find(pq_t *pq, const uint8_t sig[PQ_SIGLEN], pq_read_fn *fn, void *arg);

/* ---------------------------------------------------------------------- */
/* Deleting                                                               */
/* ---------------------------------------------------------------------- */

/**
 * Delete the committed product with that signature.
 * @retval PQ_OK
 * @retval PQ_NOTFOUND no committed product has it (a reservation is not
 *                     deleted)
 * @retval PQ_LOCKED   a reader holds it (this handle's callback included)
 * @retval PQ_NOWRITE  handle opened read-only
 * @retval PQ_INVAL    NULL handle or sig
 * @retval PQ_SYSTEM   the control lock or the probe of the product's lock
 *                     failed
 * @retval PQ_NOMEM    the control lock's repair ran out of memory
 * @retval PQ_FORKED
 */
int pq_delete(pq_t *pq, const uint8_t sig[PQ_SIGLEN]);

/**
 * Delete every product created before `before` (creation time, not insertion
 * time) that matches cls (NULL: all).  Products held by readers are skipped
 * and counted.  The control lock is released between batches.
 * @param[out] ndeleted, nbytes, nheld  tallies (each may be NULL), also of
 *             the batches done before a failure
 * @retval PQ_OK
 * @retval PQ_NOWRITE  handle opened read-only
 * @retval PQ_CORRUPT  a product's record is damaged (see pq_check())
 * @retval PQ_SYSTEM   the control lock or the probe of a product's lock
 *                     failed
 * @retval PQ_NOMEM    the control lock's repair ran out of memory
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_expire(pq_t *pq, pq_timestamp before, const pq_class *cls,
              uint64_t *ndeleted, uint64_t *nbytes, uint64_t *nheld);

/* ---------------------------------------------------------------------- */
/* Statistics and checking                                                */
/* ---------------------------------------------------------------------- */

typedef struct pq_stats {
  /* capacity */
  uint64_t ps_data_size; /**< bytes of the data area */
  uint64_t ps_slots;     /**< product slots */
  /* now */
  uint64_t ps_nprods;    /**< committed products */
  uint64_t ps_nreserved; /**< outstanding reservations */
  uint64_t ps_nbytes;    /**< bytes used by products and reservations */
  uint64_t ps_nempty;    /**< free slots */
  uint64_t ps_nfree;     /**< free regions (gaps) in the data area */
  /* high-water marks since creation */
  uint64_t ps_maxnfree;  /**< most free regions at once (LDM's maxfree) */
  uint64_t ps_maxprods;  /**< most slots in use at once */
  uint64_t ps_maxbytes;  /**< most bytes in use at once */
  uint64_t ps_highwater; /**< highest end offset ever used in the area */
  uint64_t ps_minempty;  /**< fewest free slots seen */
  /* ages, seconds; -1 when the queue is empty */
  double ps_age_oldest;   /**< now - insertion time of the oldest */
  double ps_age_youngest; /**< now - insertion time of the newest */
  /* eviction */
  bool ps_is_full;        /**< something was evicted for room (sticky) */
  int64_t ps_mvrt_us;     /**< minimum virtual residence time, -1 none */
  uint64_t ps_mvrt_bytes; /**< ps_nbytes when the MVRT was set */
  uint64_t ps_mvrt_slots; /**< slots in use when the MVRT was set */
  uint64_t ps_evicted;    /**< products evicted for room since creation */
  uint64_t ps_last_key;   /**< newest insertion time ever assigned */
  uint64_t ps_repairs;    /**< crashed changes repaired since creation */
  unsigned ps_writers;    /**< live writer handles (see pq_writer_count) */
} pq_stats;

/**
 * Fill st under a shared control lock, in constant time, plus
 * O(PQ_MAX_WRITERS) lock probes for ps_writers: for monitoring, not for hot
 * paths.
 * @retval PQ_OK
 * @retval PQ_INVAL    NULL handle or st
 * @retval PQ_SYSTEM   the control lock or a writer-byte probe failed
 * @retval PQ_NOMEM, PQ_CORRUPT  taking the control lock failed (see ERRORS)
 * @retval PQ_FORKED
 */
int pq_stats_get(pq_t *pq, pq_stats *st);

/**
 * The largest free region of the data area, in bytes (LDM's maxext).  Walks
 * the region list under a shared control lock: O(products), about 6 ms for a
 * million here, while writers wait; which is why pq_stats_get() leaves it
 * out.
 * @retval PQ_OK
 * @retval PQ_INVAL    NULL handle or bytes
 * @retval PQ_SYSTEM, PQ_NOMEM, PQ_CORRUPT  taking the control lock failed
 *         (see ERRORS)
 * @retval PQ_FORKED
 */
int pq_stats_largest_free(pq_t *pq, uint64_t *bytes);

/**
 * How many products readers hold now: read-locked by a pq_next() or
 * pq_find() callback of any process (this handle's included), so that
 * writers cannot evict them and jump over them.  Probes the kernel's locks
 * (F_OFD_GETLK) under a shared control lock: one probe for the whole data
 * area when nothing is held, about 2 h log2(n / h) for h held products of
 * n; the region list is walked once (O(products)).  For monitoring (pqmon).
 * @retval PQ_OK
 * @retval PQ_SYSTEM, PQ_NOMEM  taking the control lock failed (see ERRORS)
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_stats_held(pq_t *pq, uint64_t *nheld);

/**
 * Clear the MVRT metrics (after an operator resized the queue).
 * @retval PQ_OK
 * @retval PQ_NOWRITE  handle opened read-only
 * @retval PQ_SYSTEM, PQ_NOMEM  taking the control lock failed (see ERRORS)
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_stats_clear_mvrt(pq_t *pq);

/**
 * Number of live writer handles, counted from the lock bytes the kernel holds
 * for them (a crashed writer is not counted: its locks died with it).  The
 * caller's own writer handle counts.  PQ_MAX_WRITERS lock probes; no
 * control lock.
 * @retval PQ_OK
 * @retval PQ_INVAL    NULL handle or count
 * @retval PQ_SYSTEM   a probe failed (*count unchanged)
 * @retval PQ_FORKED
 */
int pq_writer_count(pq_t *pq, unsigned *count);

/** Report of pq_check(). */
typedef struct pq_check_report {
  int pr_invariant;      /**< number of the first invariant that failed, 0 */
  char pr_msg[256];      /**< what failed, where */
  uint64_t pr_products;  /**< committed products seen */
  uint64_t pr_reserved;  /**< live reservations seen */
  uint64_t pr_reclaimed; /**< dead reservations reclaimed by this check */
  bool pr_repaired;      /**< the queue was dirty and was repaired first */
  /* What a crash left that the next writer repairs (read-only checks,
   * which repair nothing, report it here instead of as a failure): */
  uint64_t pr_dead_resv; /**< reservations of dead writers */
  bool pr_interrupted;   /**< a change left half done (dirty flag set) */
} pq_check_report;

/**
 * Verify every numbered invariant of the format (see pq/format.h), one by
 * one: slot checksums, region bounds and overlaps, the time index, the
 * signature index, the region list, the free-slot list, the counters, every
 * product's record and every product's CRC32C.
 *
 * A read-write handle holds the exclusive control lock for the whole check
 * (every other reader and writer waits): taking it repairs a queue left
 * dirty by a crash, as every locker does, and the check reclaims the
 * reservations of dead writers; pr_repaired and pr_reclaimed say so.
 *
 * A read-only handle (PQ_READONLY) writes nothing, not even a repair, even
 * when the process may write the file: it takes the shared lock without
 * the repair other lockers make, holds it for the whole check (writers
 * wait), and reports what a crash left for the next writer to repair,
 * which is no damage: reservations of dead writers (pr_dead_resv,
 * instead of failing invariant 12) and a change left half done
 * (pr_interrupted; the derived indexes are then not checked, since the
 * repair rebuilds them, but the slots and products it keeps are).
 * O(slots log slots + bytes queued).
 * @retval PQ_OK      every invariant holds (see pr_dead_resv, pr_interrupted)
 * @retval PQ_CORRUPT report->pr_invariant says which failed
 * @retval PQ_INVAL   NULL handle or report
 * @retval PQ_SYSTEM  the control lock failed
 * @retval PQ_NOMEM   no memory for the check, or for the repair
 * @retval PQ_FORKED
 */
int pq_check(pq_t *pq, pq_check_report *report);

/**
 * Rebuild every derived index from the slot table, reclaim dead
 * reservations and drop slots that fail their checksum, as the automatic
 * crash repair does; then drop the products whose bytes fail their CRC32C
 * (invariant 15), which the automatic repair does not look at.  For an
 * operator whose pq_check() failed.
 * @param[out] ndropped slots and products dropped as corrupt (may be NULL)
 * @retval PQ_OK
 * @retval PQ_NOWRITE  handle opened read-only, or one whose mapping is
 *                     read-only
 * @retval PQ_SYSTEM   the control lock failed
 * @retval PQ_NOMEM    no memory for the rebuild (the queue stays marked
 *                     dirty, for the next locker to rebuild)
 * @retval PQ_FORKED, PQ_INVAL (NULL handle)
 */
int pq_repair(pq_t *pq, uint64_t *ndropped);

/** A slot pq_repair_ex() dropped as damage. */
typedef struct pq_dropped {
  uint32_t pd_slot;     /**< the slot */
  bool pd_known;        /**< its record could be read: pd_info holds it */
  pq_prod_info pd_info; /**< the product (identifier...) if pd_known */
  uint64_t pd_inserted; /**< its insertion time (µs) if it was a product */
  const char *pd_why;   /**< why it was dropped */
} pq_dropped;

/** Told of each slot dropped, before it is freed; arg is the caller's. */
typedef void pq_drop_fn(const pq_dropped *dropped, void *arg);

/** What pq_repair_ex() changed: the header's roots before and after. */
typedef struct pq_repair_report {
  uint64_t rr_dropped;       /**< slots and products dropped as damage */
  uint64_t rr_products[2];   /**< product count the header said, then */
  uint64_t rr_head[2];       /**< write head (data-area offset) */
  uint32_t rr_head_prev[2];  /**< the region (slot) before it */
  uint64_t rr_last_key[2];   /**< last insertion time */
  uint64_t rr_free_slots[2]; /**< free slots the header counted */
} pq_repair_report;

/**
 * pq_repair(), telling fn (if not NULL) of each slot dropped, with the
 * product's identifier when its record can still be read and why, and
 * filling report (if not NULL) with the header's roots before ([0]) and
 * after ([1]) the repair, so that a caller can say what it changed.
 * Return values as pq_repair().
 */
int pq_repair_ex(pq_t *pq, pq_repair_report *report, pq_drop_fn *fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* PQ_PQ_H */
