/*
 * transfer.c - insert a product keeping its insertion time (see
 * transfer.h): reserve (which claims the signature, so a duplicate is
 * refused before any data moves), let the caller fill the reservation with
 * no queue lock held, then commit at the original time, falling back to
 * "now" only when that instant is already taken by another product.
 */
#include "pqutils/queue/transfer.h"

int xfer_put(pq_t *pq, const pq_prod_info *info, uint64_t inserted_us,
             xfer_fill_fn *fill, void *arg, bool *retimed) {
  *retimed = false;
  pq_resv r;
  int rc = pq_reserve(pq, info, &r);
  if (rc != PQ_OK)
    return rc;
  if (fill(r.pr_data, r.pr_size, arg) != 0) {
    (void)pq_discard(pq, &r);
    return XFER_FILL_FAILED;
  }
  if (inserted_us == 0)
    return pq_commit(pq, &r);
  rc = pq_commit_at(pq, &r, inserted_us);
  if (rc == PQ_DUP) { /* the instant is taken; the reservation stays */
    *retimed = true;
    rc = pq_commit(pq, &r);
  } else if (rc == PQ_INVAL) {
    (void)pq_discard(pq, &r);
  }
  return rc;
}
