/*
 * ere_hs.h - a pqact pattern (a POSIX ERE as regcomp(REG_EXTENDED) reads
 * it in the C locale, which pqact keeps) read into a tree, for the
 * one-pass matcher (match.h): its translation into Hyperscan's syntax,
 * with the same set of identifiers matched; for a deterministic pattern,
 * its translation into PCRE2's with the same sub-matches (submatch.h);
 * and identifiers it matches, generated at random, for the start-up
 * self-tests and the tests.
 *
 * The reader takes only what it knows to mean the same in both syntaxes,
 * and refuses the rest (the entry then keeps regexec() alone):
 *
 *   - literals: ASCII bytes other than the special ".[]()*+?{|^$\" (a
 *     lone "]" or "}" is a literal, as glibc reads it), and "\" before a
 *     non-alphanumeric ASCII character other than "<", ">", "`" and "'"
 *     (GNU's word and buffer anchors); every literal is written as
 *     itself if alphanumeric, else as "\xHH", so that nothing in it is
 *     special to Hyperscan;
 *   - "." (every byte: Hyperscan's HS_FLAG_DOTALL, as POSIX without
 *     REG_NEWLINE), "^" and "$" anywhere (anchors at the identifier's
 *     start and end: Hyperscan's "$" also before a final newline, which
 *     only adds matches);
 *   - bracket expressions read into the exact set of bytes they match
 *     (ranges by byte value, "]" first and "-" first or last literal, "\"
 *     a literal inside, [:class:] by the C locale's <ctype.h>, "[^...]"
 *     the complement) and written out as a set of "\xHH"; an equivalence
 *     class, a collating element, a byte past 127, a range next to
 *     another "-" are refused;
 *   - groups (written "(?:...)"), alternation, empty branches, and one
 *     quantifier per atom: "*", "+", "?", "{m}", "{m,}", "{m,n}" and
 *     glibc's "{,n}" (written "{0,n}"), bounds up to 32767; a quantifier
 *     after another (PCRE reads "a++" as possessive), after an anchor or
 *     with nothing before it is refused;
 *   - every other escape ("\w", "\<", back-references...), any byte past
 *     127, a "{" that does not start a bound: refused;
 *   - and a pattern that matches the empty string, which Hyperscan does
 *     not take (it matches every identifier, or with anchors the empty
 *     one).
 *
 * Matching "can this identifier match at all?" does not depend on POSIX's
 * leftmost-longest rule, only on the set of strings the expression
 * describes, which the rules above keep.
 *
 * Sub-matches do depend on it, and PCRE2's backtracking picks another
 * match than POSIX where a pattern can parse one identifier in several
 * ways ("(a|ab)", "([0-9]+)([0-9]+)").  pqact_ere_to_pcre() takes only a
 * pattern that is deterministic, conservatively:
 *
 *   - a quantifier only on a single-byte atom (a literal, a set, "."),
 *     and when its count can vary, the atom's bytes disjoint from FOLLOW,
 *     the bytes that can come next: the FIRST bytes of everything after
 *     it, through the items that can match the empty string, up to the
 *     end of the pattern (where nothing follows);
 *   - an alternation of two branches or more only when no branch can
 *     match the empty string and their FIRST sets are pairwise disjoint;
 *   - groups unquantified; "^" only as the first piece and "$" only as
 *     the last of a pattern without top-level alternation.
 *
 * Why such a pattern gets the same match and sub-matches from both
 * engines: both try the start positions left to right and take the first
 * at which the pattern matches (POSIX's leftmost rule; PCRE2's scan).  At
 * a given start, every choice point offers at most one option that takes
 * the next byte (the continuation of a quantifier or the exit from it,
 * never both, since the atom's bytes are not in FOLLOW; at most one branch
 * of an alternation), and the options that take none lead, by the one way
 * through the nullable items left, only to the end of the match.  So the
 * matches from that start all lie along one walk, each with exactly one
 * parse, and one is longer than another only by going on along it.  POSIX
 * takes the longest, whose parse is its only one, so its sub-matches are
 * fixed.  PCRE2 tries each quantifier's continuation before its exit (all
 * quantifiers are greedy), so it explores the options that take the next
 * byte first and ends the match early only when nothing longer exists:
 * its first match is the longest too, with the same (only) parse, and
 * each group, matched at most once, spans the same bytes or none.
 *
 * The translation is the one above with each group capturing, for PCRE2
 * compiled with PCRE2_DOTALL (POSIX's "." takes a newline without
 * REG_NEWLINE, which pqact does not set) and PCRE2_DOLLAR_ENDONLY ("$" only
 * at the very end), without UTF (bytes as bytes); "^" without
 * PCRE2_MULTILINE is the start only.  Not thread-safe per call: none;
 * every function is pure.
 */
#ifndef PQACT_ERE_HS_H
#define PQACT_ERE_HS_H

#include <stddef.h>
#include <stdint.h>

/**
 * Translate ere into Hyperscan's syntax (to be compiled with
 * HS_FLAG_DOTALL, without HS_FLAG_CASELESS or HS_FLAG_MULTILINE).
 * @return 0 with the translation in out (NUL-terminated); -1 if ere holds
 *         anything the rules above refuse, or the translation does not fit
 */
int pqact_ere_to_hs(const char *ere, char *out, size_t cap);

/**
 * Translate a deterministic ere (the rules above) into PCRE2's syntax, its
 * groups capturing and numbered as POSIX numbers them.
 * @return 0 with the translation in out (NUL-terminated); -1 if ere is
 *         refused, not shown deterministic, or does not fit
 */
int pqact_ere_to_pcre(const char *ere, char *out, size_t cap);

/** Tests: the same translation without the analysis (any pattern the
 *  reader takes), to show what a pattern it refuses would get wrong. */
int pqact_ere_to_pcre_unchecked(const char *ere, char *out, size_t cap);

/**
 * A string ere's tree describes, chosen at random from *rng (any seed but
 * 0): a branch of each alternation, a count of each repetition (at most a
 * few past its minimum), a byte of each set.  Anchors add nothing: the
 * caller checks the string with regexec() before relying on it.
 * @return its length (out NUL-terminated), or -1 if ere is refused, the
 *         tree has an empty set or the string does not fit in cap
 */
int pqact_ere_sample(const char *ere, uint64_t *rng, char *out, size_t cap);

/** The next number of the xorshift64 sequence in *rng (any seed but 0):
 * the generator's, for the self-tests that place its strings. */
uint64_t pqact_ere_rand(uint64_t *rng);

#endif /* PQACT_ERE_HS_H */
