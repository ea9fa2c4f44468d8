/*
 * ere_hs.h - a pqact pattern (a POSIX ERE as regcomp(REG_EXTENDED) reads
 * it in the C locale, which pqact keeps) read into a tree, for the
 * one-pass matcher (match.h): its translation into Hyperscan's syntax,
 * with the same set of identifiers matched, and identifiers it matches,
 * generated at random, for the start-up self-test and the tests.
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
 * describes, which the rules above keep.  Not thread-safe per call: none;
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
 * A string ere's tree describes, chosen at random from *rng (any seed but
 * 0): a branch of each alternation, a count of each repetition (at most a
 * few past its minimum), a byte of each set.  Anchors add nothing: the
 * caller checks the string with regexec() before relying on it.
 * @return its length (out NUL-terminated), or -1 if ere is refused, the
 *         tree has an empty set or the string does not fit in cap
 */
int pqact_ere_sample(const char *ere, uint64_t *rng, char *out, size_t cap);

#endif /* PQACT_ERE_HS_H */
