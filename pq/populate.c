/*
 * populate.c - mapping the data area in 2 MiB steps instead of a page fault
 * per page.  A process that opens a queue starts with no page of it mapped;
 * writing a fresh mapping takes one fault per 4 KiB page (about 1 us each
 * here: half a second for the 2 GB a relay of 2,000 1 MiB products writes),
 * reading one fault per 64 KiB (the kernel's fault-around).  Before a handle
 * touches a product's bytes it asks the kernel to map the 2 MiB chunks
 * around them with MADV_POPULATE_WRITE or _READ (Linux 5.14), which costs a
 * quarter of the faults it replaces, and remembers per chunk that it did, so
 * each chunk is populated once per handle.  Nothing here is needed for
 * correctness: a kernel without the advice, or any failure, just leaves the
 * page faults to do the work.
 *
 * On tmpfs (/dev/shm, the usual home of a queue) a page mapped for reading
 * in a shared writable mapping can be written without a further fault (no
 * dirty tracking), and the kernel maps 16 pages per step when reading, so
 * there a writer asks for _READ too, which takes half the time of _WRITE.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/vfs.h>

#include "pq/internal.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define CHUNK ((uint64_t)2 << 20)
#define TMPFS_MAGIC_ 0x01021994 /* linux/magic.h's TMPFS_MAGIC */

void pq__populate_init(pq_t *pq) {
  uint64_t chunks = (pq->data_size + CHUNK - 1) / CHUNK;
  size_t words = (size_t)((chunks + 63) / 64);
  pq->pop_done[0] = calloc(words ? words : 1, sizeof(uint64_t));
  pq->pop_done[1] = calloc(words ? words : 1, sizeof(uint64_t));
  pq->pop_off = pq->pop_done[0] == NULL || pq->pop_done[1] == NULL;
  struct statfs fs;
  pq->pop_tmpfs = fstatfs(pq->fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC_;
}

void pq__populate_free(pq_t *pq) {
  free(pq->pop_done[0]);
  free(pq->pop_done[1]);
  pq->pop_done[0] = pq->pop_done[1] = NULL;
}

void pq__populate(pq_t *pq, uint64_t off, uint64_t len, bool write) {
  if (pq->pop_off || len == 0 || off >= pq->data_size)
    return;
  if (write && !pq->map_writable)
    return;
  if (pq->pop_tmpfs)
    write = false; /* see above */
  if (len > pq->data_size - off)
    len = pq->data_size - off;
  uint64_t *done = pq->pop_done[write ? 1 : 0];
  for (uint64_t c = off / CHUNK; c <= (off + len - 1) / CHUNK; c++) {
    uint64_t bit = (uint64_t)1 << (c % 64);
    /* A chunk mapped for writing is mapped for reading too. */
    if ((done[c / 64] & bit) || (pq->pop_done[1][c / 64] & bit))
      continue;
    uint64_t start = c * CHUNK;
    uint64_t n = pq->data_size - start < CHUNK ? pq->data_size - start : CHUNK;
    if (madvise(pq->data + start, (size_t)n,
                write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) != 0 &&
        errno == EINVAL) {
      pq->pop_off = true; /* an older kernel: leave it to page faults */
      return;
    }
    done[c / 64] |= bit;
  }
}
