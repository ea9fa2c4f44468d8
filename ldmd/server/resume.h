/*
 * resume.h - where a requester resumes: the signature of the last product
 * it received for one REQUEST, kept in a small file so that a reconnection
 * or a restart of ldmd (even after kill -9) neither loses nor repeats
 * products (docs/protocol.md §11.4).
 *
 * WHY A FILE PER REQUEST, WRITTEN AS PRODUCTS SETTLE.  LDM saves the last
 * product's metadata in `.<hash>.info` when the requester exits, so a
 * requester killed with SIGKILL (or a machine that crashes) resumes from
 * the file of the run before, and asks again for everything since.  Here
 * the requester keeps the signature of the last product whose fate is
 * final (committed into the queue, or refused for good: see
 * ldmd_down_settled()) and writes it, with one pwrite(2) of 96 bytes to a
 * file it keeps open (no fsync), whenever it has taken every record the
 * upstream's bytes read so far hold (before it waits for the socket), and
 * at the latest every 256 products or 20 ms while products keep coming,
 * on a quiet second, and when the connection ends (requester.c): one
 * write per batch of small products read in one go, not one per product.
 * A kill at any instant thus leaves the signature of a product settled at
 * most those few products (or milliseconds) before the last.  The
 * upstream then sends the products after it once more, and the queue,
 * whose signature index holds them (they were committed moments before;
 * a queue must hold more than a few hundred products anyway), refuses
 * them as duplicates: at least once, plus duplicate detection, is exactly
 * once.  Without fsync a crash of the whole
 * machine can lose the last writes of a file on disk; the resume point is
 * then older and the products since are asked for again, and are
 * duplicates if the queue survived (on tmpfs it did not, and everything
 * since the resume point is wanted again anyway).
 *
 * THE FILE.  <dir>/<queue file name>.<32 hex>.resume, where the hex is the
 * MD5 of what LDM hashes for its .info name: the REQUEST's host as written,
 * its port as 4 native-endian bytes, then its feedtype as 4 native-endian
 * bytes and its pattern.  The directory is the registry's
 * /requester/state-dir, or by default the queue's own directory: the state
 * describes that queue's contents, and two servers with two queues never
 * share a file.  The file starts with two slots of 96 bytes, each one text
 * line "<sequence> <signature> <creation time in microseconds> <check>",
 * then comment lines naming the request.  Writes alternate between the two
 * slots and the reader takes the valid slot with the higher sequence, so a
 * write torn by a power failure costs at most the last update.  The file is
 * created whole (written to a temporary file, then linked into place, so a
 * reader never sees a half-made file and two creators never clobber each
 * other) and then only updated in place.
 *
 * ONE WRITER.  The requester holds an open-file-description write lock
 * (F_OFD_SETLK) on the file while it runs.  A second requester for the
 * same request and queue (an orphan of an ldmd killed with SIGKILL, or a
 * second ldmd on the same queue) gets LDMD_RESUME_BUSY and must wait: two
 * writers would move the resume point under each other.  The kernel drops
 * the lock of a dead process.
 *
 * Not thread-safe; an object belongs to the process that opened it.
 * Never logs: errors come back with a message in the caller's buffer.
 */
#ifndef LDMD_SERVER_RESUME_H
#define LDMD_SERVER_RESUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/product.h"

/* Results. */
#define LDMD_RESUME_OK 0
#define LDMD_RESUME_BUSY 1    /**< another process holds the file */
#define LDMD_RESUME_ESYS (-1) /**< a system call failed (message says) */

typedef struct ldmd_resume ldmd_resume;

/** What names a request's state. */
typedef struct ldmd_resume_key {
  const char *host; /**< as written in the REQUEST */
  unsigned port;
  uint32_t feedtype;
  const char *pattern; /**< as written */
} ldmd_resume_key;

/**
 * The path of a request's file.
 * @param state_dir   the directory, or NULL or "" for the queue's
 * @param queue_path  the product queue
 * @return 0, or -1 if it does not fit in len bytes
 */
int ldmd_resume_path(const char *state_dir, const char *queue_path,
                     const ldmd_resume_key *key, char *buf, size_t len);

/**
 * Open (creating it if missing) and lock a request's file, and read it.
 * @param path      from ldmd_resume_path()
 * @param describe  a line for the file's comment (the REQUEST), used only
 *                  when the file is created
 * @param out       set to the object on LDMD_RESUME_OK
 * @return LDMD_RESUME_OK; LDMD_RESUME_BUSY (another process holds it: try
 *         again later); LDMD_RESUME_ESYS with a message in err
 */
int ldmd_resume_open(const char *path, const char *describe, ldmd_resume **out,
                     char *err, size_t errlen);

/**
 * The resume point read from the file or last written.
 * @return false when there is none (a new file, or two invalid slots)
 */
bool ldmd_resume_get(const ldmd_resume *r, uint8_t sig[PQ_SIGLEN],
                     pq_timestamp *created);

/**
 * Record a new resume point: one pwrite(2) into the slot not holding the
 * current point.  @return 0, or -1 with errno set
 */
int ldmd_resume_put(ldmd_resume *r, const uint8_t sig[PQ_SIGLEN],
                    pq_timestamp created);

/** The file's path. */
const char *ldmd_resume_file(const ldmd_resume *r);

/** Close the file (which releases the lock) and free the object. */
void ldmd_resume_close(ldmd_resume *r);

#endif /* LDMD_SERVER_RESUME_H */
