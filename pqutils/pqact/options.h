/*
 * options.h - the options of pqact's actions, in one table: which action
 * takes each, which takes a value, and how LDM's pqact decodes an
 * action's leading "-xxx" words (LDM's html/basics/pqact.conf.html; our
 * pqutils/pqact/pqact.1):
 *
 *   - an option is known by the first two letters after its '-' (so
 *     "-overwrit" is -overwrite and "-cl" is -close); a word no option of
 *     the action starts that way is skipped;
 *   - the last word is never an option: it is FILE's path, EXEC's
 *     command...;
 *   - DBFILE's -dblocksize takes the next word as its value, whatever it is;
 *   - PIPE's -nodata implies -metadata.
 *
 * Both the actions (which decode their substituted arguments for each
 * product) and the reader of pqact.conf (which checks an entry's options
 * when it reads it, check.h) use this table, so the two cannot disagree.
 * Pure functions: no logging, thread-safe.
 */
#ifndef PQACT_OPTIONS_H
#define PQACT_OPTIONS_H

#include <stdbool.h>

#include "pqutils/pqact/conf.h"

/* Every option of every action; the bit of one is PQACT_OPT_BIT(id). */
enum pqact_option_id {
  PQACT_OPT_OVERWRITE,
  PQACT_OPT_STRIP,
  PQACT_OPT_METADATA,
  PQACT_OPT_LOG,
  PQACT_OPT_EDEX,
  PQACT_OPT_REMOVEWMO,
  PQACT_OPT_FLUSH,
  PQACT_OPT_CLOSE,
  PQACT_OPT_TRANSIENT,
  PQACT_OPT_NODATA,
  PQACT_OPT_WAIT,
  PQACT_OPT_DBLOCKSIZE,
  PQACT_NOPTIONS
};
#define PQACT_OPT_BIT(id) (1u << (id))

/**
 * Which option word is for action a: the id of the option of a whose name
 * begins with word's two letters after the '-', or -1 if a has none such.
 * @param any  if not NULL, set to whether some action has such an option
 */
int pqact_option_find(enum pqact_action a, const char *word, bool *any);

/** The option's name without its '-' ("overwrite"). */
const char *pqact_option_name(enum pqact_option_id id);

/** Does the option take the next word as its value? */
bool pqact_option_has_value(enum pqact_option_id id);

/* Told each leading "-..." word that is no option of the action. */
typedef void pqact_option_unknown_fn(void *arg, const char *word);

/**
 * The options among argv's leading "-..." words, as LDM's pqact decodes
 * them (above): unknown ones are skipped, and told to unknown if not NULL.
 * @param[out] flags   the PQACT_OPT_BIT()s of the options given (-nodata
 *                     sets -metadata's too)
 * @param[out] values  NULL, or PQACT_NOPTIONS pointers: the value of each
 *                     option given that takes one (the others are left)
 * @return the index of the first word after the options
 */
int pqact_decode_options(enum pqact_action type, int argc, char **argv,
                         unsigned *flags, const char **values,
                         pqact_option_unknown_fn *unknown, void *arg);

#endif /* PQACT_OPTIONS_H */
