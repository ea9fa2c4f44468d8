/*
 * filing.h - pqact's FILE and STDIOFILE actions and the outputs they keep
 * open, as LDM's pqact does (LDM's html/basics/pqact.conf.html; our
 * pqutils/pqact/pqact.1):
 *
 *   - the options are the leading "-xxx" arguments, each known by its first
 *     two letters after the '-' (so "-overwrit" is -overwrite and "-cl" is
 *     -close); unknown ones are ignored; the output path is the last
 *     argument, never an option, relative to the working directory
 *     (pqact's -d);
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
 *     -close.
 *
 * Logs through ldmd/site/log.h.  One set of outputs per process; not
 * thread-safe.
 */
#ifndef PQACT_FILING_H
#define PQACT_FILING_H

#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/pqact/conf.h"

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
