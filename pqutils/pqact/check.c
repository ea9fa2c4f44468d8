/*
 * check.c - the check of an entry's arguments when pqact.conf is read
 * (check.h says what is an error and what a warning): the words the action
 * needs, its options decoded as the actions decode them (options.c), and
 * the sub-matches the arguments name against the pattern's groups, read
 * as the substitution reads them (subst.c).
 */
#include "pqutils/pqact/check.h"

#include <stdarg.h>
#include <stdio.h>

#include "pqutils/pqact/options.h"
#include "pqutils/pqact/subst.h"

struct checker {
  pqact_check_say_fn *say;
  void *arg;
  enum pqact_action action;
  unsigned nerrors;
};

__attribute__((format(printf, 3, 4))) static void
tell(struct checker *c, bool error, const char *fmt, ...) {
  char msg[PQACT_ENTRY_MAX + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (error)
    c->nerrors++;
  if (c->say != NULL)
    c->say(c->arg, error, msg);
}

/* What the action's last word is: its path or its command. */
static const char *needs(enum pqact_action a) {
  return a == PQACT_FILE || a == PQACT_STDIOFILE || a == PQACT_DBFILE
             ? "path"
             : "command";
}

/* A leading "-..." word that is no option of the action (skipped). */
static void not_an_option(struct checker *c, const char *word) {
  bool any;
  (void)pqact_option_find(c->action, word, &any);
  if (any)
    tell(c, false, "\"%s\" is not an option of %s (ignored)", word,
         pqact_action_name(c->action));
  else
    tell(c, false, "unknown option \"%s\" of %s (ignored)", word,
         pqact_action_name(c->action));
}

static void check_words(struct checker *c, const char *args) {
  char line[PQACT_ARG_MAX];
  char *words[PQACT_MAX_ARGS];
  const char *name = pqact_action_name(c->action);
  snprintf(line, sizeof line, "%s", args);
  int n = pqact_split(line, words);
  if (n < 0) {
    tell(c, true, "too many arguments");
    return;
  }
  int i = 0;
  while (i < n - 1 && words[i][0] == '-') { /* as pqact_decode_options() */
    int k = pqact_option_find(c->action, words[i++], NULL);
    if (k < 0)
      not_an_option(c, words[i - 1]);
    else if (pqact_option_has_value((enum pqact_option_id)k) && i < n)
      i++;
  }
  if (i >= n)
    tell(c, true, "%s has no %s", name, needs(c->action));
  else if (i == n - 1 && pqact_option_find(c->action, words[i], NULL) >= 0)
    tell(c, true, "%s has no %s: \"%s\" is one of its options", name,
         needs(c->action), words[i]);
}

static void check_refs(struct checker *c, const char *args, size_t ngroups) {
  struct pqact_ref ref;
  int rc = pqact_regsub_highest(args, &ref);
  if (rc < 0)
    tell(c, true, "invalid parenthetical backreference \"%.*s\"", (int)ref.len,
         ref.at);
  else if (rc > 0 && ref.n >= PQACT_NMATCH)
    tell(c, true, "\"%.*s\" names a sub-match past \\(%d), the last there is",
         (int)ref.len, ref.at, PQACT_NMATCH - 1);
  else if (rc > 0 && (size_t)ref.n > ngroups)
    tell(c, true, "\"%.*s\" names sub-match %ld, but the pattern has %zu %s",
         (int)ref.len, ref.at, ref.n, ngroups,
         ngroups == 1 ? "group" : "groups");
}

unsigned pqact_check_args(enum pqact_action action, const char *args,
                          size_t ngroups, pqact_check_say_fn *say, void *arg) {
  struct checker c = {.say = say, .arg = arg, .action = action};
  if (action == PQACT_NOOP)
    return 0; /* takes nothing, and LDM ignores what it is given */
  check_words(&c, args);
  check_refs(&c, args, ngroups);
  return c.nerrors;
}
