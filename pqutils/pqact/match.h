/*
 * match.h - pqact's index of its table's patterns: which entries a product
 * identifier can match, found without running every entry's regular
 * expression.  LDM's pqact runs all of them on every product; with a
 * site's table of hundreds of entries that is most of its time.
 *
 * At load time each pattern (a POSIX ERE) is read for what any identifier
 * it matches must begin with: when the ERE is anchored ("^" first, no
 * alternation outside a group), the literal characters that follow the
 * anchor (through groups that are not optional: "^(SAUS43) (K...)" gives
 * "SAUS43 K") and, when no literal follows, the set of first characters
 * of a leading bracket expression ("^[A-Z]") or alternation ("^(SA|FX)").
 * Such an entry is indexed under each of its possible first bytes, its
 * prefix checked with one compare; any other entry (unanchored, a
 * leading ".", an alternation whose branches begin otherwise, the empty
 * pattern, ^_ELSE_$, anything this reader is not sure of) is offered for
 * every identifier.  The reading is conservative: when in doubt it gives
 * less (a shorter prefix, a full set), never a wrong requirement, so the
 * entries offered always include every entry whose ERE matches
 * (test/pqact/test_pqact_match.c checks that against running every ERE).
 * Matching is that of regcomp(REG_EXTENDED) in the C locale, which pqact
 * keeps (it never calls setlocale()): bytes, case-sensitive, ranges by
 * byte value.
 *
 * The offered entries come in file order, so that the table walk (act.c)
 * fires them in the order LDM does and ^_ELSE_$ keeps its meaning.  An
 * index is read-only once built: one per table, not shared across threads
 * while being built.
 */
#ifndef PQACT_MATCH_H
#define PQACT_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest prefix kept for an entry (longer ones are cut: a shorter
 * requirement is still a true one). */
#define PQACT_PREFIX_MAX 32

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

/** Free an index (NULL: nothing). */
void pqact_match_free(struct pqact_match *m);

/* A walk over the entries offered for one identifier. */
struct pqact_offer {
  const struct pqact_match *m;
  const char *ident;
  uint64_t head; /* the identifier's first 8 bytes (0 after its end) */
  const uint32_t *a, *a_end; /* the entries offered for any identifier */
  const uint32_t *b, *b_end; /* those indexed under its first byte */
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
