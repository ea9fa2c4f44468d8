/*
 * hsdb.h - the Hyperscan database of a pqact table's patterns: which
 * entries' patterns can match an identifier, found in one scan of it
 * (the one-pass matcher's first half; match.h merges it with the prefix
 * index, and act.c runs regexec() on what they offer).
 *
 * WHY NO ENTRY THAT MATCHES IS EVER LEFT OUT.  The database is a
 * prefilter: an entry it reports is then tried with regexec() (which
 * alone decides and gives the sub-matches), so reporting too many costs
 * time only; the one danger is an entry whose ERE matches an identifier
 * and that the scan does not report.  Three things rule that out:
 *   1. the translation (ere_hs.h) takes only constructs whose set of
 *      matched strings is the same in glibc's REG_EXTENDED in the C
 *      locale and in Hyperscan with HS_FLAG_DOTALL (or, for bytes past
 *      127 and Hyperscan's "$" before a final newline, larger in
 *      Hyperscan), and refuses everything else: "can it match?" is a
 *      property of that set alone, not of POSIX's leftmost-longest choice
 *      among matches;
 *   2. an expression that Hyperscan cannot compile exactly is compiled in
 *      HS_FLAG_PREFILTER mode, which Hyperscan documents as reporting a
 *      superset of the exact expression's matches; one it cannot compile
 *      either way is left out of the database (its entry is then offered
 *      for every identifier);
 *   3. at build time every entry is checked against regexec() on
 *      identifiers generated from its own pattern (and the same inside
 *      other text, before and after newlines): an entry that regexec()
 *      matches and the scan does not report is taken out (offered for
 *      every identifier from then on), whatever the reason.
 * With HS_FLAG_SINGLEMATCH each entry is reported at most once.
 *
 * Hyperscan needs SSSE3: on a CPU without it (hs_valid_platform()), or
 * when this build has no Hyperscan (PQACT_HAVE_HS unset: only amd64
 * requires it), pqact_hs_new() returns NULL and every entry stays with
 * the prefix index or regexec() alone.  A database is used by one thread
 * at a time (it holds its scratch space).
 */
#ifndef PQACT_HSDB_H
#define PQACT_HSDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pqact_hs;

/* What pqact_hs_new() did with the entries it was offered. */
struct pqact_hs_stats {
  size_t offered;   /* entries asked for */
  size_t taken;     /* in the database, and passed the self-test */
  size_t refused;   /* translation refused, or Hyperscan could not compile */
  size_t disagree;  /* failed the self-test */
  size_t prefilter; /* of taken: compiled in HS_FLAG_PREFILTER mode */
  size_t samples;   /* identifiers the self-test checked */
};

/* Options of pqact_hs_new(). */
#define PQACT_HS_BREAK 1u /* tests: translate wrongly, for the self-test */

/** Whether Hyperscan can run here (built with it, and the CPU has SSSE3). */
bool pqact_hs_available(void);

/**
 * A database of the entries i with take[i], pats[i] their EREs (each of
 * which regcomp(REG_EXTENDED) accepted).  On return take[i] is true only
 * for the entries the database reports reliably; the others are the
 * caller's to offer otherwise.
 * @return the database, or NULL if no entry was taken, Hyperscan is not
 *         available or memory ran out (then every take[i] is false)
 */
struct pqact_hs *pqact_hs_new(const char *const *pats, bool *take, size_t n,
                              unsigned opts, struct pqact_hs_stats *stats);

/** Free a database (NULL: nothing). */
void pqact_hs_free(struct pqact_hs *h);

/**
 * The entries whose pattern can match ident (taken entries only), in
 * ascending order, into hits (room for n, the table's size).
 * @return how many
 */
size_t pqact_hs_scan(struct pqact_hs *h, const char *ident, uint32_t *hits);

#endif /* PQACT_HSDB_H */
