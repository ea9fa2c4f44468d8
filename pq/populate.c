/*
 * populate.c - mapping the data area for a writer in 2 MiB steps instead of
 * a page fault per page.  A process that opens a queue starts with no page
 * of it mapped, and writing into a fresh shared mapping takes one fault per
 * 4 KiB page (about 1 us each here: half a second for the 2 GB that a relay
 * of 2,000 1 MiB products writes).  Before a handle writes a product it asks
 * the kernel to map the 2 MiB chunks under it (MADV_POPULATE_WRITE, Linux
 * 5.14), a quarter of the cost of the faults it replaces, and remembers per
 * chunk that it did, so that each chunk is populated once per handle.
 * Readers are left to page faults: the kernel maps 16 pages per read fault
 * already, and a reader (notifyme's feed, a product count) often never
 * touches the data at all.  Nothing here is needed for correctness: a
 * kernel without the advice, or any failure, leaves the work to the faults.
 *
 * On tmpfs (/dev/shm, the usual home of a queue) a page mapped for reading
 * in a shared writable mapping can be written without a further fault (no
 * dirty tracking), and read faults map 16 pages per step, so there the
 * writer asks for MADV_POPULATE_READ, which takes half the time.
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
  pq->pop_off = !pq->map_writable || pq->readonly; /* it never writes */
  if (pq->pop_off)
    return;
  uint64_t chunks = (pq->data_size + CHUNK - 1) / CHUNK;
  size_t words = (size_t)((chunks + 63) / 64);
  pq->pop_done = calloc(words ? words : 1, sizeof(uint64_t));
  pq->pop_off = pq->pop_done == NULL;
  struct statfs fs;
  pq->pop_advice =
      pq__sys_fstatfs(pq->fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC_
          ? MADV_POPULATE_READ
          : MADV_POPULATE_WRITE;
}

void pq__populate_free(pq_t *pq) {
  free(pq->pop_done);
  pq->pop_done = NULL;
}

void pq__populate(pq_t *pq, uint64_t off, uint64_t len) {
  if (pq->pop_off || len == 0 || off >= pq->data_size)
    return;
  if (len > pq->data_size - off)
    len = pq->data_size - off;
  for (uint64_t c = off / CHUNK; c <= (off + len - 1) / CHUNK; c++) {
    uint64_t bit = (uint64_t)1 << (c % 64);
    if (pq->pop_done[c / 64] & bit)
      continue;
    uint64_t start = c * CHUNK;
    uint64_t n = pq->data_size - start < CHUNK ? pq->data_size - start : CHUNK;
    if (pq__sys_madvise(pq->data + start, (size_t)n, pq->pop_advice) != 0 &&
        errno == EINVAL) {
      pq->pop_off = true; /* an older kernel: leave it to page faults */
      return;
    }
    pq->pop_done[c / 64] |= bit;
  }
}
