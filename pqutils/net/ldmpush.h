/*
 * ldmpush.h - the sending side of LDM's push, shared by ldmsend and
 * rtstats: HIYA(offer) and what its answer means (OK with max_hereis,
 * RECLASS with the class the server takes, DONT_SEND), whether a product
 * is wanted, sending one product (HEREIS when its size is at most
 * max_hereis, else COMINGSOON and, unless answered DONT_SEND, one BLKDATA
 * with all its data), and the final NULLPROC whose answer confirms that
 * the server has taken the one-way calls before it.
 *
 * Every call is made on a connection from ldmc_connect() (ldmclient.h)
 * and waits at most the push's timeout; a stop (cli_io.h) ends the wait,
 * as for ldmc_call().  Messages are written into the caller's buffer and
 * name the peer; nothing here logs or exits.  Not thread-safe; fork-safe.
 */
#ifndef PQUTILS_NET_LDMPUSH_H
#define PQUTILS_NET_LDMPUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "pq/product.h"
#include "pqutils/net/ldmclient.h"

/* Results beyond ldmc_call()'s. */
#define LDMC_UNWANTED 1 /* COMINGSOON was answered DONT_SEND */
#define LDMC_EANSWER                                                           \
  (-23) /* an answer that makes no sense here (HIYA or                         \
           COMINGSOON answered with another code, a                            \
           RECLASS class that cannot be used) */
#define LDMC_EPRODUCT                                                          \
  (-24) /* this product cannot be sent as it is (its                           \
           metadata do not go on the wire): nothing                            \
           was sent; the connection is still good */

/** One push session on a connection. */
struct ldmc_push {
  ldm6_io *io;
  const struct ldmc_peer *peer;
  int timeout_ms;           /* for each call that is answered */
  ldm6_errt answer;         /* HIYA's: LDM6_OK, LDM6_RECLASS, DONT_SEND */
  uint32_t max_hereis;      /* larger products go as COMINGSOON */
  ldm6_prod_class accepted; /* RECLASS: the class, as the server sent it */
  pq_class want;            /* RECLASS: that class, compiled */
};

/** Start a push on io (which the caller keeps and frees). */
void ldmc_push_init(struct ldmc_push *p, ldm6_io *io,
                    const struct ldmc_peer *peer, int timeout_ms);

/**
 * HIYA(offer): on LDM6_IO_OK, p->answer says what the server takes (and
 * p->accepted, for RECLASS, how it said it).
 * @return LDM6_IO_OK; ldmc_call()'s failures; LDMC_EANSWER.  Every
 *         failure with a message in err.
 */
int ldmc_push_hiya(struct ldmc_push *p, const ldm6_prod_class *offer, char *err,
                   size_t errlen);

/** Does the server want this product (after a successful HIYA)? */
bool ldmc_push_wanted(const struct ldmc_push *p, const pq_prod_info *info);

/**
 * Send one product, info->size bytes of data (sent from that buffer, not
 * copied).  HEREIS and BLKDATA are one-way: only ldmc_push_flush()
 * confirms that they arrived.
 * @return LDM6_IO_OK (sent); LDMC_UNWANTED (the server has it or does not
 *         want it: nothing more sent); LDMC_EPRODUCT (nothing sent; the
 *         connection is fine); LDMC_EANSWER, LDMC_STOPPED, LDMC_DENIED or
 *         rpc_io's LDM6_IO_* failures (the connection is unusable).
 *         Every result but the first two with a message in err.
 */
int ldmc_push_product(struct ldmc_push *p, const pq_prod_info *info,
                      const void *data, char *err, size_t errlen);

/** NULLPROC: its answer confirms every call before it.  @return as
 *  ldmc_call(). */
int ldmc_push_flush(struct ldmc_push *p, char *err, size_t errlen);

/** Free what the push holds (the RECLASS class); not the connection. */
void ldmc_push_free(struct ldmc_push *p);

#endif /* PQUTILS_NET_LDMPUSH_H */
