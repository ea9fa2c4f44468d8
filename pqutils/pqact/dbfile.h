/*
 * dbfile.h - pqact's DBFILE action, as LDM's pqact built with gdbm (LDM's
 * html/basics/pqact.conf.html; our pqutils/pqact/pqact.1):
 *
 *   `DBFILE [-close] [-dblocksize N] path [key]` stores the product in the
 *   gdbm database at path under key, by default the product's identifier;
 *   the key is stored with its terminating NUL, and the value is the
 *   product XDR-encoded (its prod_info, then its data padded to a multiple
 *   of 4), as LDM stores it by default (DB_XPROD); a key already there is
 *   replaced;
 *   - options are known by their first two letters; -dblocksize takes the
 *     next word (default 512, used when the database is created); an
 *     unknown option is said and ignored; -close closes the database after
 *     this product (the -close of each entry counts, not only of the one
 *     that opened it, as in LDM);
 *   - the database is created with mode 0664 less the umask, its
 *     directories as FILE makes them, and it stays open, keyed by its
 *     path, among FILE's outputs (filing.h) and within their limit.
 *
 * Logs through ldmd/site/log.h; not thread-safe.
 */
#ifndef PQACT_DBFILE_H
#define PQACT_DBFILE_H

#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/pqact/filing.h"

/**
 * Do a DBFILE action for one product.
 * @param argv  the substituted arguments (argc of them)
 * @return 0, or -1 after logging what failed (the database is closed)
 */
int pqact_dbfile_action(struct pqact_outputs *outs, int argc, char **argv,
                        const pq_prod_info *info, const void *data);

/**
 * Which of DBFILE's substituted arguments is the database's path: the
 * first after its options (as pqact_dbfile_action() reads them).
 * @return its index, or -1 if there is none
 */
int pqact_dbfile_path_index(int argc, char **argv);

/**
 * The value DBFILE stores: the product XDR-encoded, as LDM's pqact stores
 * it (and XPIPE writes it).
 * @param[out] out  malloc()ed, *len bytes; free() it
 * @return 0, or -1 after logging (a product LDM cannot encode: created
 *         after 2038, larger than 4 GiB; or out of memory)
 */
int pqact_xdr_product(const pq_prod_info *info, const void *data, uint8_t **out,
                      size_t *len);

#endif /* PQACT_DBFILE_H */
