/*
 * options.c - the table of the options of pqact's actions and LDM's way of
 * decoding them (options.h): which action takes each option, and the
 * two-letter match of a "-xxx" word.  One table for the actions, which
 * decode their arguments product by product, and for the reader of
 * pqact.conf, which checks them once.
 */
#include "pqutils/pqact/options.h"

#include <string.h>

#define FOR(a) (1u << (a))
#define FILES (FOR(PQACT_FILE) | FOR(PQACT_STDIOFILE))

struct option {
  const char *name;
  unsigned actions; /* FOR() each action that takes it */
  bool has_value;   /* the next word is its value */
  unsigned also;    /* the bits of the options it implies */
};

/* LDM's pqact.conf documentation lists them; which action takes which is
 * in our pqact.1.  No two share their first two letters. */
static const struct option table[PQACT_NOPTIONS] = {
    [PQACT_OPT_OVERWRITE] = {"overwrite", FILES, false, 0},
    [PQACT_OPT_STRIP] = {"strip", FILES | FOR(PQACT_PIPE), false, 0},
    [PQACT_OPT_METADATA] = {"metadata", FOR(PQACT_FILE) | FOR(PQACT_PIPE),
                            false, 0},
    [PQACT_OPT_LOG] = {"log", FILES, false, 0},
    [PQACT_OPT_EDEX] = {"edex", FOR(PQACT_FILE), false, 0},
    [PQACT_OPT_REMOVEWMO] = {"removewmo", FILES | FOR(PQACT_PIPE), false, 0},
    [PQACT_OPT_FLUSH] = {"flush", FILES | FOR(PQACT_PIPE), false, 0},
    [PQACT_OPT_CLOSE] = {"close", FILES | FOR(PQACT_PIPE) | FOR(PQACT_DBFILE),
                         false, 0},
    [PQACT_OPT_TRANSIENT] = {"transient", FOR(PQACT_PIPE), false, 0},
    [PQACT_OPT_NODATA] = {"nodata", FOR(PQACT_PIPE), false,
                          PQACT_OPT_BIT(PQACT_OPT_METADATA)},
    [PQACT_OPT_WAIT] = {"wait", FOR(PQACT_EXEC), false, 0},
    [PQACT_OPT_DBLOCKSIZE] = {"dblocksize", FOR(PQACT_DBFILE), true, 0},
};

int pqact_option_find(enum pqact_action a, const char *word, bool *any) {
  int found = -1;
  if (any != NULL)
    *any = false;
  if (word[0] != '-')
    return -1;
  for (int k = 0; k < PQACT_NOPTIONS; k++) {
    if (strncmp(word + 1, table[k].name, 2) != 0)
      continue;
    if (any != NULL)
      *any = true;
    if (table[k].actions & FOR(a))
      found = k;
  }
  return found;
}

const char *pqact_option_name(enum pqact_option_id id) {
  return (unsigned)id < PQACT_NOPTIONS ? table[id].name : "?";
}

bool pqact_option_has_value(enum pqact_option_id id) {
  return (unsigned)id < PQACT_NOPTIONS && table[id].has_value;
}

int pqact_decode_options(enum pqact_action type, int argc, char **argv,
                         unsigned *flags, const char **values,
                         pqact_option_unknown_fn *unknown, void *arg) {
  int i = 0;
  *flags = 0;
  while (i < argc - 1 && argv[i][0] == '-') {
    const char *word = argv[i++];
    int k = pqact_option_find(type, word, NULL);
    if (k < 0) {
      if (unknown != NULL)
        unknown(arg, word);
      continue;
    }
    *flags |= PQACT_OPT_BIT(k) | table[k].also;
    if (table[k].has_value) { /* the next word, whatever it is */
      if (values != NULL)
        values[k] = i < argc ? argv[i] : NULL;
      if (i < argc)
        i++;
    }
  }
  return i;
}
