/*
 * match.h - pqact's one-pass matcher: which entries of its table a product
 * identifier can match, found without running every entry's regular
 * expression.  LDM's pqact runs all of them on every product; with a
 * site's table of hundreds of entries that is most of its time.
 *
 * Each entry goes to one of three places, when the table is read:
 *
 *   - the prefix index, when its pattern begins with an anchored literal
 *     of PQACT_PREFIX_MIN bytes or more ("^SAUS43 "): one compare of the
 *     identifier's start, for the entries indexed under its first byte;
 *   - else the Hyperscan database (hsdb.h), when its pattern translates
 *     (ere_hs.h) and passes the self-test: one scan of the identifier
 *     reports every such entry that can match;
 *   - else (^_ELSE_$, a back-reference, anything refused) the list of
 *     entries offered for every identifier; one with a shorter prefix or
 *     a leading set ("^[A-Z]") goes back to the prefix index.
 *
 * The prefix index reads each pattern (a POSIX ERE) for what any
 * identifier it matches must begin with: when the ERE is anchored ("^"
 * first, no alternation outside a group), the literal characters that
 * follow the anchor (through groups that are not optional: "^(SAUS43)
 * (K...)" gives "SAUS43 K") and, when no literal follows, the set of
 * first characters of a leading bracket expression ("^[A-Z]") or
 * alternation ("^(SA|FX)").  The reading is conservative: when in doubt it
 * gives less (a shorter prefix, a full set), never a wrong requirement.
 * Neither half ever leaves out an entry whose ERE matches (hsdb.h says
 * why for the database; test/pqact/test_pqact_match.c and
 * test_pqact_onepass.c check it against running every ERE).  Matching is
 * that of regcomp(REG_EXTENDED) in the C locale, which pqact keeps (it
 * never calls setlocale()): bytes, case-sensitive, ranges by byte value.
 *
 * The offered entries come in file order, so that the table walk (act.c)
 * runs regexec() on them and fires them in the order LDM does, and
 * ^_ELSE_$ keeps its meaning.  An index is built once per table; one walk
 * at a time uses it (the database's scratch space and the list of its
 * reports are the index's).
 */
#ifndef PQACT_MATCH_H
#define PQACT_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pqutils/pqact/hsdb.h"

/* The longest prefix kept for an entry (longer ones are cut: a shorter
 * requirement is still a true one). */
#define PQACT_PREFIX_MAX 32
/* The shortest prefix that keeps an entry in the prefix index rather than
 * the database: three bytes leave few entries per identifier to compare. */
#define PQACT_PREFIX_MIN 3

/* What an ERE requires of the start of anything it matches. */
struct pqact_key {
  bool indexed;                      /* false: it may match anything */
  uint8_t first[32];                 /* bit c: an identifier may begin with c */
  char prefix[PQACT_PREFIX_MAX + 1]; /* and must begin with this ("": no) */
  size_t plen;
  uint64_t head, mask; /* the prefix's first 8 bytes, for one compare */
};

/** Read what ere requires (never fails: at worst, key->indexed false). */
void pqact_ere_key(const char *ere, struct pqact_key *key);

struct pqact_match;

/**
 * Build the index of n patterns (pats[i] the ERE of entry i; always[i]
 * true for an entry to offer for every identifier, as ^_ELSE_$).
 * @return the index, or NULL if out of memory
 */
struct pqact_match *pqact_match_new(const char *const *pats, const bool *always,
                                    size_t n);

/* Options of pqact_match_build(). */
#define PQACT_MATCH_NO_HS 1u    /* the prefix index alone (as before) */
#define PQACT_MATCH_HS_BREAK 2u /* tests: a database that misses (hsdb.h) */

/** pqact_match_new() with options. */
struct pqact_match *pqact_match_build(const char *const *pats,
                                      const bool *always, size_t n,
                                      unsigned opts);

/* Where the entries went. */
struct pqact_match_stats {
  size_t entries;
  size_t prefix;                  /* in the prefix index */
  size_t hs;                      /* in the Hyperscan database */
  size_t always;                  /* offered for every identifier */
  struct pqact_hs_stats hs_build; /* what the database's build said */
};

/** Where an index put its entries. */
void pqact_match_stats(const struct pqact_match *m,
                       struct pqact_match_stats *s);

/** Free an index (NULL: nothing). */
void pqact_match_free(struct pqact_match *m);

/* A walk over the entries offered for one identifier. */
struct pqact_offer {
  const struct pqact_match *m;
  const char *ident;
  uint64_t head; /* the identifier's first 8 bytes (0 after its end) */
  const uint32_t *a, *a_end; /* the entries offered for any identifier */
  const uint32_t *b, *b_end; /* those indexed under its first byte */
  const uint32_t *h, *h_end; /* those the database reported */
};

/** Start a walk over the entries that may match ident (both must outlive
 *  the walk). */
void pqact_match_start(const struct pqact_match *m, const char *ident,
                       struct pqact_offer *o);

/**
 * The next entry offered, in file order.
 * @param[out] entry  its index in the table
 * @return false when there is none left
 */
bool pqact_match_next(struct pqact_offer *o, size_t *entry);

#endif /* PQACT_MATCH_H */
