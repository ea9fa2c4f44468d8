/*
 * act.c - one product through pqact's table (act.h): matching each entry's
 * feedtype and pattern (only the entries the table's index, match.h,
 * offers for the identifier), the _ELSE_ rule, substituting the arguments and
 * handing them to the action's owner, logging at -v what is done; after
 * a kill -9, only the decoders that had not taken a product (act.h).  A
 * FILE, STDIOFILE or DBFILE path in which the product put a ".." is
 * refused, so that no identifier makes pqact write outside its -d
 * directory (the operator's own ".." in the rule is kept).
 */
#include "pqutils/pqact/act.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/site/log.h"
#include "pqutils/pqact/dbfile.h"
#include "pqutils/pqact/exec.h"
#include "pqutils/pqact/subst.h"

static void say_subst(void *arg, const char *msg) {
  const struct pqact_entry *e = arg;
  log_error("entry at line %u: %s", e->line, msg);
}

static bool is_pipe(enum pqact_action a) {
  return a == PQACT_PIPE || a == PQACT_SPIPE || a == PQACT_XPIPE;
}

/* The actions whose argument is a path pqact opens. */
static bool has_path(enum pqact_action a) {
  return a == PQACT_FILE || a == PQACT_STDIOFILE || a == PQACT_DBFILE;
}

/* Is the path of e's action one the product put a ".." in?  Then say so
 * (our pqutils/pqact/pqact.1, SUBSTITUTION). */
static bool path_refused(const struct pqact_entry *e, int argc, char **argv,
                         const char *buf, const char *taint,
                         const pq_prod_info *info) {
  int i = e->action == PQACT_DBFILE ? pqact_dbfile_path_index(argc, argv)
                                    : argc - 1;
  if (i < 0 || i >= argc || !pqact_product_dotdot(buf, taint, argv[i]))
    return false; /* no path: the action says so */
  log_error("refusing %s to \"%s\" for %s (entry at line %u): the product "
            "put \"..\" in the path",
            pqact_action_name(e->action), argv[i], info->ident, e->line);
  return true;
}

/* A restart's product: had the decoder of this entry (its substituted
 * arguments) not taken it before the kill? */
static bool to_redo(const struct pqact_act *a, const struct pqact_entry *e,
                    int argc, char **argv) {
  char *key = pqact_decoder_key(e->action, argc, argv);
  if (key == NULL)
    return true; /* logged; the action fails the same way */
  const char *type = pqact_action_name(e->action);
  bool redo = false;
  for (size_t i = 0; i < a->resume->n && !redo; i++) {
    const struct cli_state_dec *d = &a->resume->decs[i];
    redo = d->from_us <= a->inserted_us && strcmp(d->type, type) == 0 &&
           strcmp(d->cmd, key) == 0;
  }
  free(key);
  return redo;
}

/* Run one entry's action for a product it matched.  0, or -1 (logged).
 * done_but_decoders: a restart's product whose actions were done before
 * but perhaps a decoder's. */
static int run_entry(struct pqact_act *a, const struct pqact_entry *e,
                     const regmatch_t *m, const pq_prod_info *info,
                     const void *data, bool done_but_decoders) {
  char buf[PQACT_ARG_MAX], taint[PQACT_ARG_MAX];
  char *argv[PQACT_MAX_ARGS];
  if (e->action == PQACT_NOOP) {
    log_debug("noop");
    return 0;
  }
  if (done_but_decoders && !is_pipe(e->action))
    return 0;
  bool path = has_path(e->action);
  int argc = pqact_substitute_taint(e->args, info, m, buf, path ? taint : NULL,
                                    argv, say_subst, (void *)e);
  if (argc < 0)
    return -1;
  if (done_but_decoders && !to_redo(a, e, argc, argv)) {
    log_debug("%s taken by its decoder before the restart",
              pqact_action_name(e->action));
    return 0;
  }
  if (ldm_log_enabled(LDM_LOG_INFO)) {
    char line[PQACT_ARG_MAX];
    size_t len = 0;
    line[0] = '\0';
    for (int i = 0; i < argc && len < sizeof line; i++)
      len += (size_t)snprintf(line + len, sizeof line - len, "%s%s",
                              i ? " " : "", argv[i]);
    log_info("%13s: %s", pqact_action_name(e->action), line);
  }
  if (path && path_refused(e, argc, argv, buf, taint, info))
    return -1;
  switch (e->action) {
  case PQACT_FILE:
  case PQACT_STDIOFILE:
    return pqact_file_action(a->outs, e->action, argc, argv, info, data);
  case PQACT_PIPE:
  case PQACT_SPIPE:
  case PQACT_XPIPE:
    return pqact_pipe_action(a->decs, e->action, argc, argv, info, data,
                             a->token, a->inserted_us);
  case PQACT_EXEC:
    return pqact_exec_action(a->kids, argc, argv);
  case PQACT_DBFILE:
    return pqact_dbfile_action(a->outs, argc, argv, info, data);
  case PQACT_NOOP: /* done above */
    break;
  }
  return 0;
}

/* The next entry to try (in *i): the index's next offer, or without an
 * index the next entry of the table.  false when none is left. */
static bool next_entry(const struct pqact_conf *c, struct pqact_offer *o,
                       size_t *i, bool first) {
  if (c->match != NULL)
    return pqact_match_next(o, i);
  if (!first)
    ++*i;
  return *i < c->n;
}

unsigned pqact_process(struct pqact_act *a, const pq_prod_info *info,
                       const void *data) {
  bool matched = false;
  unsigned failed = 0;
  bool done_but_decoders = a->resume != NULL && a->inserted_us <= a->resume->t1;
  regmatch_t m[PQACT_NMATCH];
  if (ldm_log_enabled(LDM_LOG_INFO)) {
    char line[600];
    pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line,
                        sizeof line);
    log_info("%s", line);
  }
  /* Only the entries the index offers: the others cannot match, and the
   * offered ones come in file order, so the same entries fire in the same
   * order as if every entry were tried.  Without an index, every one. */
  struct pqact_offer offer = {0};
  if (a->conf->match != NULL)
    pqact_match_start(a->conf->match, info->ident, &offer);
  size_t i = 0;
  for (bool more = next_entry(a->conf, &offer, &i, true); more;
       more = next_entry(a->conf, &offer, &i, false)) {
    const struct pqact_entry *e = &a->conf->entries[i];
    if ((info->feedtype & e->feedtype) == 0)
      continue;
    /* As LDM's: the pattern, or for ^_ELSE_$ no entry before having
     * fired (a fired _ELSE_ counts) and an ident not beginning with '_';
     * sub-matches by PCRE2 where they are bound to be the same (conf.h) */
    int rc = e->sm != NULL
                 ? pqact_submatch_exec(e->sm, &e->re, info->ident, e->nmatch, m)
                 : regexec(&e->re, info->ident, e->nmatch, m, 0);
    if (rc != 0) {
      if (!e->is_else || matched || info->ident[0] == '_')
        continue;
      m[0].rm_so = 0; /* & and \0: the identifier */
      m[0].rm_eo = (regoff_t)strlen(info->ident);
      for (size_t k = 1; k < PQACT_NMATCH; k++)
        m[k].rm_so = m[k].rm_eo = -1;
    } else if (e->nmatch < PQACT_NMATCH) {
      /* what the arguments cannot name, as for a group that took no part
       * (conf.h: regexec() was asked for only what they name) */
      for (size_t k = e->nmatch; k < PQACT_NMATCH; k++)
        m[k].rm_so = m[k].rm_eo = -1;
    }
    matched = true;
    if (run_entry(a, e, m, info, data, done_but_decoders) != 0)
      failed++;
  }
  return failed;
}

void pqact_begin_product(struct pqact_act *a) {
  pq_prod_info info = {.feedtype = PQ_FT_ANY};
  snprintf(info.ident, sizeof info.ident, "_BEGIN_");
  snprintf(info.origin, sizeof info.origin, "localhost");
  const struct pqact_resume *r = a->resume; /* not a queue's product */
  a->resume = NULL;
  (void)pqact_process(a, &info, "");
  a->resume = r;
}
