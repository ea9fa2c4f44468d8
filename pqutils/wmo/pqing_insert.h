/*
 * pqing_insert.h - what pqing does with each scanner event: a message is
 * identified (wmo_message.h), signed (wmo_sig.h) and inserted into the
 * queue, or, run as feedtest, only logged; every refusal is logged in
 * LDM's words and counted for the statistics LDM prints on SIGUSR1 and at
 * exit (docs/pqing.md, "Log lines").  A message pqing cannot use never
 * stops it: only a queue that fails (not a duplicate, not a product too
 * big for it) does.
 */
#ifndef PQUTILS_WMO_PQING_INSERT_H
#define PQUTILS_WMO_PQING_INSERT_H

#include <stdbool.h>
#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/ingest/np_log.h"
#include "pqutils/wmo/wmo_frame.h"

struct pqing_out {
  pq_t *pq; /* NULL: feedtest, nothing is inserted */
  uint32_t feedtype;
  bool pil;       /* " /p" PILs */
  bool nexrad;    /* radar headings become NEXRAD3 (no -N) */
  bool whole_sig; /* -5 */
  enum wmo_framing framing;
  char origin[PQ_ORIGIN_MAX + 1];
  struct np_log log; /* to the LDM logger */
  bool failed;       /* the queue failed: stop, exit 1 */
  /* statistics, LDM's */
  unsigned long completed, sohetx_missed, bad_cksum, not_wmo, ndups;
  unsigned long inserted, too_big, lost_bytes;
  unsigned afos_seqno; /* AFOS messages seen */
  unsigned long nnnn_missed, zczc_missed, unrecognizable;
};

/** Set up: the log goes to ldmd/site/log.h's logger. */
void pqing_out_init(struct pqing_out *o, pq_t *pq, uint32_t feedtype,
                    enum wmo_framing framing);

/** The scanner's event function (wmo_emit_fn); arg is the pqing_out. */
void pqing_out_event(void *arg, const struct wmo_event *ev);

/** Log the product statistics, LDM's lines (NOTICE). */
void pqing_out_stats(const struct pqing_out *o);

#endif
