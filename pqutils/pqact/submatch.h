/*
 * submatch.h - an entry's sub-matches found by PCRE2 rather than glibc's
 * regexec(), for the patterns where both are bound to give the same: a
 * deterministic pattern (ere_hs.h says which, and why the match and every
 * sub-match are then POSIX's leftmost-longest ones).  glibc computes
 * sub-matches with a second, backward pass that costs several times the
 * match itself (docs/pqact-file-close.md); PCRE2's JIT finds them in the
 * match.
 *
 * Each matcher is checked when it is made, as hsdb.h's database is: on
 * identifiers generated from its own pattern, placed alone, inside other
 * text and cut short, PCRE2 and regexec() must agree on whether it
 * matches and on every group's span; on any difference the entry keeps
 * regexec().  A PCRE2 error at match time (a limit) falls back to
 * regexec() for that call.  A matcher holds its own match data, so one
 * thread at a time uses it, as the table walk does (act.c).
 */
#ifndef PQACT_SUBMATCH_H
#define PQACT_SUBMATCH_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

struct pqact_submatch;

/**
 * A PCRE2 matcher of ere, compiled by regcomp(REG_EXTENDED) into re.
 * @return the matcher, or NULL if ere is not shown deterministic, PCRE2
 *         is missing or refuses it, the self-test found a difference, or
 *         memory ran out (the caller then keeps regexec())
 */
struct pqact_submatch *pqact_submatch_new(const char *ere, const regex_t *re);

/* Options of pqact_submatch_build(). */
#define PQACT_SUBMATCH_NO_SELFTEST 1u /* tests: the analysis alone */
#define PQACT_SUBMATCH_NO_ANALYSIS 2u /* tests: any pattern translated */

/** pqact_submatch_new() with options. */
struct pqact_submatch *pqact_submatch_build(const char *ere, const regex_t *re,
                                            unsigned opts);

/**
 * regexec(re, ident, nmatch, m, 0), by PCRE2: the same return value (0 or
 * REG_NOMATCH) and the same m[0..nmatch-1] (rm_so -1 for a group that
 * took no part or that the pattern lacks).
 */
int pqact_submatch_exec(struct pqact_submatch *s, const regex_t *re,
                        const char *ident, size_t nmatch, regmatch_t *m);

/** Do s and regexec(re) agree on id: both match or neither, and every
 * group (up to 100) starts and ends at the same place?  The self-test's
 * check, and the differential test's. */
bool pqact_submatch_agrees(struct pqact_submatch *s, const regex_t *re,
                           const char *id);

/** Free a matcher (NULL: nothing). */
void pqact_submatch_free(struct pqact_submatch *s);

#endif /* PQACT_SUBMATCH_H */
