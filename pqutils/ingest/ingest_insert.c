/*
 * ingest_insert.c - inserts a finished product and logs its line in LDM's
 * words (ingest_insert.h).
 */
#include "pqutils/ingest/ingest_insert.h"

#include <string.h>

#include "pqutils/ingest/feedtype_rules.h"

int np_insert(struct np_inserter *in, const struct np_product *p) {
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  info.arrival = pq_ts_now();
  memcpy(info.signature, p->sig, sizeof info.signature);
  strncpy(info.origin, in->origin, PQ_ORIGIN_MAX);
  info.feedtype = p->feedtype;
  info.seqno = p->seqno;
  size_t n = strlen(p->ident);
  if (n > PQ_IDENT_MAX) {
    np_log(in->log, NP_WARN,
           "Identifier of %zu bytes cut to %d, the queue's limit: %.*s", n,
           PQ_IDENT_MAX, PQ_IDENT_MAX, p->ident);
    n = PQ_IDENT_MAX;
  }
  memcpy(info.ident, p->ident, n);
  info.ident[n] = '\0';
  info.size = p->size;
  in->products++;
  if (p->size == 0) { /* cannot happen on the NWSTG path */
    in->failed++;
    np_log(in->log, NP_ERROR, "heapsize is invalid %zu for prod %s", p->size,
           info.ident);
    return PQ_INVAL;
  }
  int rc = pq_insert(in->pq, &info, p->data);
  if (rc == PQ_OK) {
    in->inserted++;
    np_log(in->log, NP_NOTE,
           "%s inserted %s [cat %d type %d ccb %d/%d seq %u size %zu]",
           info.ident, np_feedtype_name(p->feedtype), p->category, p->type,
           p->ccb_mode, p->ccb_submode, p->seqno, p->size);
  } else if (rc == PQ_DUP) {
    in->duplicates++;
    np_log(in->log, NP_NOTE, "%s already in queue [%u]", info.ident, p->seqno);
  } else {
    in->failed++;
    np_log(in->log, NP_ERROR, "Couldn't insert product into queue: status=%d",
           rc);
    np_log(in->log, NP_ERROR, "pqinsert failed [%d] %s", rc, info.ident);
  }
  return rc;
}
