/*
 * transfer.h - putting a product that already has a history into a queue:
 * its metadata and signature as they are, and its original insertion time,
 * so that a copied or restored queue keeps its order and its ages.  Used by
 * pqcopy and pqrestore.
 */
#ifndef PQUTILS_QUEUE_TRANSFER_H
#define PQUTILS_QUEUE_TRANSFER_H

#include <stdbool.h>
#include <stdint.h>

#include "pq/pq.h"

/** Write `size` bytes of product data at dst; 0, or -1 to give up. */
typedef int xfer_fill_fn(void *dst, uint64_t size, void *arg);

/* xfer_put() results besides the pq_status codes */
#define XFER_FILL_FAILED 1 /* fill returned -1; nothing was inserted */

/**
 * Reserve room for the product, fill it, and commit it at inserted_us (0:
 * now).  If another product already has that insertion time, the product is
 * committed now instead and *retimed is set.
 * @retval PQ_OK, PQ_DUP (the signature is queued: nothing inserted),
 *         XFER_FILL_FAILED, or another pq_status of pq_reserve()/commit.
 */
int xfer_put(pq_t *pq, const pq_prod_info *info, uint64_t inserted_us,
             xfer_fill_fn *fill, void *arg, bool *retimed);

#endif /* PQUTILS_QUEUE_TRANSFER_H */
