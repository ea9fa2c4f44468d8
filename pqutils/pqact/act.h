/*
 * act.h - pqact's table walk: one product through every entry of the
 * pattern-action table in file order, each matching entry's arguments
 * substituted (subst.h) and its action run by the part that owns it
 * (filing.h for FILE and STDIOFILE, exec.h for EXEC, dbfile.h for DBFILE,
 * decoder.h for PIPE, SPIPE and XPIPE).  As
 * LDM's pqact: every matching entry fires; `^_ELSE_$` fires when no entry
 * before it fired and the identifier does not begin with '_'; a `_BEGIN_`
 * pseudo-product goes through the table at startup (our pqutils/pqact/pqact.1).
 *
 * After a kill -9 while decoders were behind (cli_state.h), the products up to
 * T1 go only to the decoders that had not taken them: a PIPE, SPIPE or
 * XPIPE entry whose decoder is listed with F no later than the product;
 * every other matching entry is skipped, and counts as fired for _ELSE_.
 *
 * The program (pqact.c) owns the loop over the queue and the signals;
 * this part owns what happens to one product.  Not thread-safe.
 */
#ifndef PQACT_ACT_H
#define PQACT_ACT_H

#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/pqact/children.h"
#include "pqutils/pqact/conf.h"
#include "pqutils/pqact/decoder.h"
#include "pqutils/pqact/filing.h"

/* What a restart redoes (cli_state.h): up to t1, only for the decoders
 * listed, each from its from_us on. */
struct pqact_resume {
  uint64_t t1;
  const struct cli_state_dec *decs;
  size_t n;
};

/* What acting needs: the table, the open outputs, the children and the
 * decoders. */
struct pqact_act {
  const struct pqact_conf *conf;
  struct pqact_outputs *outs;
  struct pqact_decoders *decs;
  struct pqact_children *kids; /* EXEC's and the decoders' (children.h) */
  uint64_t token; /* the product's, for actions that end later (decoders) */
  uint64_t inserted_us;              /* the product's insertion time */
  const struct pqact_resume *resume; /* NULL: no restart to finish */
  uint64_t nprods; /* products through the table, _BEGIN_ excepted */
};

/**
 * Run one product through the table.  Each failed action is logged.
 * @return how many matching entries' actions failed (0: all done)
 */
unsigned pqact_process(struct pqact_act *a, const pq_prod_info *info,
                       const void *data);

/** The `_BEGIN_` pseudo-product of LDM's pqact: size 0, feedtype ANY,
 *  origin localhost, created at the epoch. */
void pqact_begin_product(struct pqact_act *a);

#endif /* PQACT_ACT_H */
