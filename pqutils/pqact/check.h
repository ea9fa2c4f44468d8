/*
 * check.h - what pqact checks in an entry's arguments when it reads
 * pqact.conf, so that a mistake is said once, with its file and line, by
 * `pqact -q /dev/null conf` and `ldmadmin pqactcheck`, and the file
 * refused at startup and on SIGHUP, rather than read "successfully" and
 * then failing on every product.  LDM's pqact checks none of this; the
 * rules are those by which the actions use their arguments (pqact.1,
 * options.h, subst.h).
 *
 * Errors (conf.c then refuses the file):
 *   - FILE, STDIOFILE or DBFILE without a path, PIPE, SPIPE, XPIPE or
 *     EXEC without a command: no word after the options, or a last word
 *     that is one of the action's options (the last word is never taken
 *     as an option, so `EXEC -wait` would run a program "-wait" and
 *     `FILE -close` write a file "-close");
 *   - a sub-match the pattern does not have: \N or \(N) above the number
 *     of its groups (or past \(99), the last pqact gives);
 *   - "\(" and digits without their ')' (LDM's "invalid parenthetical
 *     backreference", which would cut every product's arguments there).
 * Warnings (the entry is kept, and acts as LDM's does):
 *   - a leading "-xxx" word that is no option of the action: no action
 *     has an option of its two letters, or only other actions have; it
 *     is skipped.
 *
 * The arguments are checked as written, before substitution: that a
 * sub-match or a strftime() conversion is empty for some product is that
 * product's affair.  Nothing here logs.  Thread-safe.
 */
#ifndef PQACT_CHECK_H
#define PQACT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "pqutils/pqact/conf.h"

/* A problem with an entry's arguments: an error or a warning, msg
 * lowercase, without the line (the caller adds it). */
typedef void pqact_check_say_fn(void *arg, bool error, const char *msg);

/**
 * Check an entry's arguments (above).
 * @param action   the entry's action
 * @param args     its argument field, as written
 * @param ngroups  the groups of its pattern (regex_t's re_nsub)
 * @return the number of errors said (warnings are not counted)
 */
unsigned pqact_check_args(enum pqact_action action, const char *args,
                          size_t ngroups, pqact_check_say_fn *say, void *arg);

#endif /* PQACT_CHECK_H */
