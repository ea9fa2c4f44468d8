/*
 * subst.h - how pqact turns an entry's argument field into the arguments of
 * its action for one product, in LDM's order (LDM's pqact.conf
 * documentation, html/basics/pqact.conf.html; our pqutils/pqact/pqact.1):
 *
 *   1. the ERE's sub-matches: \0 .. \9 and \(N) (N any number of digits),
 *      & for the whole match; \\ and \& are a backslash and an ampersand;
 *      any other backslash is kept as it is (so is "\(" not followed by a
 *      digit); a group that did not take part, or past the ERE's, gives "";
 *      "\(" and digits without ')' end the substitution there (said);
 *   2. strftime(3) on the product's creation time in UTC (so a '%' copied
 *      in by step 1 is a conversion too, as in LDM);
 *   3. (DD:code) day references, DD two digits (usually \1, a WMO heading's
 *      day of month), code one of yyyy yy mm mmm dd ddd hh (either case):
 *      the creation time moved to day DD of the next month if that comes
 *      before the creation time plus 1.5 days, else of this month if that
 *      does, else of the month before (the time of day is kept, so "up to
 *      tomorrow"); DD 00 is the creation time itself;
 *   4. (seq) is the product's sequence number;
 * then the result is split into words as LDM's pqact splits it: a double
 * quote separates words, opening or closing a quote within which blanks do
 * not separate; outside quotes, blanks (spaces and tabs) separate; empty
 * words are dropped (so `a""b` is two words, `"x y"z` is "x y" and "z");
 * single quotes are ordinary characters.
 *
 * Each step writes into a buffer of PQACT_ARG_MAX bytes (POSIX's
 * _POSIX_ARG_MAX, as LDM).  Nothing here logs: problems go to the caller's
 * callback.  Thread-safe (gmtime_r, timegm).
 */
#ifndef PQACT_SUBST_H
#define PQACT_SUBST_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h"

#define PQACT_ARG_MAX 4096  /* _POSIX_ARG_MAX */
#define PQACT_NMATCH 100    /* \0 .. \(99) */
#define PQACT_MAX_ARGS 2048 /* arguments of one action: _POSIX_ARG_MAX / 2 */

/* A message about a substitution (lowercase, what went wrong). */
typedef void pqact_subst_say_fn(void *arg, const char *msg);

/**
 * Step 1: copy tmpl to out with the sub-matches of ident put in.
 * @param m  PQACT_NMATCH matches from regexec() of ident (rm_so -1: none)
 * @return 0; -1 if out (outlen bytes) is too small; -2 if "\(" and digits
 *         are not followed by ')' (said: "invalid parenthetical
 *         backreference"): out then holds what came before, which LDM's
 *         pqact goes on with
 */
int pqact_regsub(const char *tmpl, const char *ident, const regmatch_t *m,
                 char *out, size_t outlen, pqact_subst_say_fn *say, void *arg);

/* A sub-match an argument field names. */
struct pqact_ref {
  long n;         /* its number (\0 for &); PQACT_NMATCH or more: past them */
  const char *at; /* where it is named in the field */
  size_t len;     /* how many characters name it ("\(12)": 5) */
};

/**
 * The highest-numbered sub-match tmpl names, reading it as step 1 does
 * (for the check of an entry when pqact.conf is read).
 * @param[out] ref  the first place that names it; or, on -1, the "\(" and
 *                  digits that lack their ')' (n -1)
 * @return 1; 0 if tmpl names none; -1 if "\(" and digits lack their ')'
 */
int pqact_regsub_highest(const char *tmpl, struct pqact_ref *ref);

/**
 * Step 2: strftime() on creation time t (UTC).
 * @return 0, or -1 if the result does not fit in outlen bytes
 */
int pqact_strftime(const char *in, int64_t t, char *out, size_t outlen);

/**
 * Step 3: replace each (DD:code).  An unknown code is said ("unknown date
 * indicator: CODE") and dropped; a day above 31 is said ("bad day of
 * month in ident: IN") and gives the code, in lowercase, as LDM's.
 * @return 0, or -1 if out is too small
 */
int pqact_datesub(const char *in, int64_t t, char *out, size_t outlen,
                  pqact_subst_say_fn *say, void *arg);

/** Step 4: replace each (seq) with seqno.  @return 0, or -1 if too long. */
int pqact_seqsub(const char *in, uint32_t seqno, char *out, size_t outlen);

/**
 * Split a substituted line into arguments, in place (see above).
 * @param[out] argv  up to PQACT_MAX_ARGS pointers into line
 * @return the number of arguments, or -1 if there are more than
 *         PQACT_MAX_ARGS ("too many arguments")
 */
int pqact_split(char *line, char **argv);

/**
 * All four steps and the split for one product: what an action gets.
 * @param buf  PQACT_ARG_MAX bytes; argv points into it
 * @return the number of arguments, or -1 (said)
 */
int pqact_substitute(const char *tmpl, const pq_prod_info *info,
                     const regmatch_t *m, char *buf, char **argv,
                     pqact_subst_say_fn *say, void *arg);

/**
 * pqact_substitute(), and which bytes of buf came from the product: its
 * identifier's sub-matches, and what a conversion of steps 2 to 4 made of
 * them (a conversion any byte of which was the product's).
 * @param taint  PQACT_ARG_MAX bytes, parallel to buf: 1 where the byte (or
 *               the separator the split put a NUL in place of) is the
 *               product's, 0 where it is the rule's; NULL: not wanted
 */
int pqact_substitute_taint(const char *tmpl, const pq_prod_info *info,
                           const regmatch_t *m, char *buf, char *taint,
                           char **argv, pqact_subst_say_fn *say, void *arg);

/**
 * Does word (an argument in buf, from pqact_substitute_taint()) hold a
 * ".." path component that the product made: one of its dots, or the '/'
 * or word boundary on either side of it, came from the product?  A ".."
 * wholly in the rule's text is the operator's and does not count.
 */
bool pqact_product_dotdot(const char *buf, const char *taint, const char *word);

#endif /* PQACT_SUBST_H */
