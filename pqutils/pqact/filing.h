/*
 * filing.h - pqact's FILE and STDIOFILE actions and the outputs they keep
 * open, as LDM's pqact does (LDM's html/basics/pqact.conf.html; our
 * pqutils/pqact/pqact.1):
 *
 *   - the options are the leading "-xxx" arguments, decoded as options.h
 *     says (each known by its first two letters after the '-', so
 *     "-overwrit" is -overwrite); unknown ones are ignored; the output
 *     path is the last argument, never an option, relative to the working
 *     directory (pqact's -d);
 *   - an output stays open, keyed by its action and path, until -close, an
 *     error, six idle hours, the open-file limit or the end; a later entry
 *     writing to an open output uses the options of the one that opened it;
 *   - parent directories are made as needed (mode 0777 less the umask),
 *     files are created with mode 0666 less the umask, and appended to
 *     unless -overwrite, which truncates the file when it is opened and
 *     then makes each product replace the one before;
 *   - FILE writes with write(2) and takes -overwrite -strip -removewmo
 *     -metadata -log -flush (fsync) -close -edex; STDIOFILE writes through
 *     stdio and takes -overwrite -strip -removewmo -log -flush (fflush)
 *     -close;
 *   - FILE -edex, with pqact -e's ring (edex_ring.h), writes a notice of
 *     the path as the action gives it and of the product's identifier once
 *     the product is written, and closed with -close; without the ring it
 *     logs that notification is not available, and files the product.
 *
 * The other actions share the making of directories, and keep what they
 * open in the same set (below).
 *
 * Logs through ldmd/site/log.h.  One set of outputs per process; not
 * thread-safe.
 */
#ifndef PQACT_FILING_H
#define PQACT_FILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/pqact/conf.h"
#include "pqutils/pqact/options.h"

/* The size of -metadata's header before its two strings. */
#define PQACT_META_FIXED 44

struct pqact_outputs;

/** An empty set of outputs holding at most max_open open at once (0: the
 *  limit LDM uses, the open-file limit less 7, at least 1), the least
 *  recently used closed first; when open(2) still fails with EMFILE or
 *  ENFILE (descriptors taken by something else), the least recently used
 *  are closed one at a time and the open retried, until it succeeds or
 *  none is left.  NULL if out of memory. */
struct pqact_outputs *pqact_outputs_new(unsigned max_open);

struct pqact_edex;

/** Give FILE -edex the ring of pqact -e (NULL: none, the default); the
 *  caller keeps it, and frees the outputs first. */
void pqact_outputs_set_edex(struct pqact_outputs *outs,
                            struct pqact_edex *ring);

/* A clock in seconds, for the idle close. */
typedef int64_t pqact_clock_fn(void);

/** Measure idle times with now (NULL: the default, CLOCK_MONOTONIC), so
 *  that a test can make six hours pass. */
void pqact_outputs_set_clock(struct pqact_outputs *outs, pqact_clock_fn *now);

/** Flush and close every output, then free the set (NULL: nothing). */
void pqact_outputs_free(struct pqact_outputs *outs);

/**
 * Do a FILE or STDIOFILE action for one product.
 * @param argv  the substituted arguments (argc of them)
 * @return 0, or -1 after logging what failed (the output is closed)
 */
int pqact_file_action(struct pqact_outputs *outs, enum pqact_action type,
                      int argc, char **argv, const pq_prod_info *info,
                      const void *data);

/** At the end of the queue: flush buffered outputs and close those not
 *  used for six hours or more (LDM's "inactive" entries), so that a file
 *  removed by scour does not stay open. */
void pqact_outputs_sync(struct pqact_outputs *outs);

/** How many outputs are open (for the tests and the statistics). */
size_t pqact_outputs_open(const struct pqact_outputs *outs);

/* ---- what the other actions share with these ---- */

/** mkdir -p of the directories path is in (mode 0777 less the umask).
 *  0, or -1 after logging what failed (errno kept). */
int pqact_make_parents(const char *path);

/*
 * Outputs that another part opens (DBFILE's databases) share the set: they
 * are found by their action and path, most recently used first, count
 * against the same limit, and are closed (least recently used first, idle
 * for six hours, at the end) by the function given with them.
 */
typedef int pqact_output_close_fn(void *handle, const char *path);

/** The handle of the open output of type at path, now the most recently
 *  used; NULL if none is open. */
void *pqact_outputs_get(struct pqact_outputs *outs, enum pqact_action type,
                        const char *path);
/** Close least recently used outputs until one more fits in the limit:
 *  call it before opening one. */
void pqact_outputs_make_room(struct pqact_outputs *outs);
/** Close the least recently used output (EMFILE): false if none is open. */
bool pqact_outputs_close_lru(struct pqact_outputs *outs);
/** Keep handle open as the output of type at path, the most recently used.
 *  0, or -1 after logging (out of memory: the handle is closed). */
int pqact_outputs_add(struct pqact_outputs *outs, enum pqact_action type,
                      const char *path, void *handle,
                      pqact_output_close_fn *close_fn);
/** Close the output of type at path, if open, saying why ("closed",
 *  "failed").  @return what its close function returned (0 if none) */
int pqact_outputs_close(struct pqact_outputs *outs, enum pqact_action type,
                        const char *path, const char *why);

/* ---- the data transformations, exposed for the unit tests ---- */

/**
 * -removewmo: the part of data[0..len) after the NOAAPort SBN header (and,
 * when there was one, without the last four bytes) and after the WMO
 * heading with its optional AWIPS line, found anywhere in the product as
 * LDM's parser finds it (filing.c says how).  Products under 21 bytes are
 * left alone.
 * @param[out] start, out_len  the part to write
 */
void pqact_remove_wmo(const uint8_t *data, size_t len, size_t *start,
                      size_t *out_len);

/** -strip: drop every control character but '\n', in place.
 *  @return the new length */
size_t pqact_strip(uint8_t *data, size_t len);

/**
 * -metadata's header for data_size bytes of data (what is written, after
 * -removewmo and -strip), in host byte order: total length of the header,
 * signature, data size, creation seconds (64 bits) and microseconds,
 * feedtype, sequence number, then the ident and origin, each after its
 * 32-bit length.
 * @param buf  at least PQACT_META_FIXED + 8 + PQ_IDENT_MAX + PQ_ORIGIN_MAX
 * @return the bytes written into buf
 */
size_t pqact_metadata(const pq_prod_info *info, uint32_t data_size,
                      uint8_t *buf);

#endif /* PQACT_FILING_H */
