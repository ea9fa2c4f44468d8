/*
 * conf.h - pqact's pattern-action table: reading a pqact.conf file into a
 * plain array of entries, exactly as LDM's pqact reads it (LDM's public
 * pqact.conf documentation, html/basics/pqact.conf.html, and our man page
 * pqutils/pqact/pqact.1):
 *
 *   - an entry is `feedtype TAB pattern TAB action [TAB arguments]`; runs of
 *     tabs separate the fields, and the fourth field keeps any tab within
 *     it (a continuation's tab included);
 *   - a line that starts with a blank (space or tab) continues the entry
 *     before it: the newline and the leading blanks become one tab;
 *     trailing white space is dropped; a line of blanks within an entry is
 *     skipped, but an empty line ends it;
 *   - a line with '#' in column 1 is a comment, also between continuation
 *     lines; blank lines between entries are skipped; within an entry, an
 *     indented comment ("<blanks>#...") is skipped too, and the next line
 *     that is neither a comment nor empty then continues the entry
 *     whatever it starts with;
 *   - the whole entry must fit in LDM's 512-byte buffer as LDM reads it:
 *     each line arrives with its newline and trailing blanks before they
 *     are dropped, so an entry holds at most 510 characters;
 *   - the feedtype is an expression of pq_feedtype_parse(); the pattern a
 *     POSIX ERE of at most 255 characters, a leading ".*" stripped (with a
 *     warning), refused when pq_ere_tame() says its compiled form explodes;
 *     `^_ELSE_$` is the fallback entry;
 *   - the action name is case-insensitive: NOOP, FILE, STDIOFILE, DBFILE,
 *     PIPE, SPIPE, XPIPE, EXEC.
 *
 * Beyond LDM's reader, which reads only the first three fields: the
 * arguments are checked as check.h says (the path or command the action
 * needs, its options, each \N against the pattern's groups), and a
 * pattern with a back-reference (pq_ere_backref()) is warned about, since
 * one identifier can keep its matching busy for ever.
 *
 * A bad entry is reported (LDM's message, lowercased, with the line where
 * the entry starts) and the rest of the file is still read, so that one
 * run shows every error; a file with any error is refused as a whole.
 * With the table comes the index of its patterns (match.h) that lets the
 * table walk skip the entries an identifier cannot match, and, for the
 * entries whose arguments name sub-matches, PCRE2 matchers of the
 * patterns that give the same ones faster (submatch.h).
 * Nothing here logs: messages go to the caller's callback.  Not thread-safe per
 * table; tables are independent.
 */
#ifndef PQACT_CONF_H
#define PQACT_CONF_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pq/pq.h"
#include "pqutils/pqact/match.h"
#include "pqutils/pqact/subst.h"
#include "pqutils/pqact/submatch.h"

/* LDM's readPatFile() buffer: an entry and its NUL. */
#define PQACT_ENTRY_MAX 512
/* The pattern of the fallback entry. */
#define PQACT_ELSE "^_ELSE_$"

enum pqact_action {
  PQACT_NOOP,
  PQACT_FILE,
  PQACT_STDIOFILE,
  PQACT_DBFILE,
  PQACT_PIPE,
  PQACT_SPIPE,
  PQACT_XPIPE,
  PQACT_EXEC,
};

struct pqact_entry {
  unsigned line;                    /* where the entry starts in the file */
  uint32_t feedtype;                /* products sharing a bit with it */
  char pattern[PQ_PATTERN_MAX + 1]; /* as used (".*" prefix stripped) */
  bool is_else;                     /* the pattern is ^_ELSE_$ */
  regex_t re;                       /* compiled, with sub-matches */
  /* How many sub-matches regexec() must report for the arguments: 0 when
   * they name none (no '&', no backslash before a digit or before '(' and
   * a digit), 1 for only & or \0, else PQACT_NMATCH (subst.h).  Fewer is
   * much faster: glibc then skips its backward pass. */
  unsigned nmatch;
  /* When nmatch is not 0 and the pattern is deterministic: the same
   * sub-matches from PCRE2, faster (submatch.h); else NULL. */
  struct pqact_submatch *sm;
  enum pqact_action action;
  char *args; /* the fourth field, before substitution ("" if none) */
};

struct pqact_conf {
  struct pqact_entry *entries;
  size_t n;
  /* Which entries an identifier may match (match.h), built with the
   * table; NULL (no entries, or out of memory when it was built): try
   * every entry. */
  struct pqact_match *match;
};

/* What the reader says: a warning (the entry is kept) or an error (the
 * file is refused).  msg is lowercase and names the line. */
typedef void pqact_conf_say_fn(void *arg, bool error, const char *msg);

/**
 * Read a table from f.  Every bad entry is reported through say (NULL:
 * silently) and reading goes on to the end.
 * @param[out] conf  the table, on success only; free with pqact_conf_free()
 * @return 0; -1 if any entry was bad (nothing in conf); -2 if reading f or
 *         allocating failed (errno set, reported too)
 */
int pqact_conf_read(FILE *f, struct pqact_conf *conf, pqact_conf_say_fn *say,
                    void *arg);

/** Free a table (safe on a zeroed or already freed one). */
void pqact_conf_free(struct pqact_conf *conf);

/** The action's name in capitals ("FILE"). */
const char *pqact_action_name(enum pqact_action a);

#endif /* PQACT_CONF_H */
