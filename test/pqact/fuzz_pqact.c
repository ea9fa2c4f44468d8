/*
 * fuzz_pqact.c - libFuzzer target for pqact's pqact.conf reader and its
 * argument substitutions (pqutils/pqact/conf.c, subst.c), a trust boundary:
 * a site's file, and products' identifiers from anywhere.  The input is
 * split at its first NUL byte: before it, a pqact.conf file; after it, a
 * product identifier.  A table that reads is then put to work: each entry's
 * pattern is matched against the identifier and, where it matches, its
 * arguments are substituted and split as for an action.
 *
 * Properties checked: no crash, leak or sanitizer report; a refused file
 * leaves the table empty and said at least one error; every argument of a
 * substitution lies inside the buffer it was made in; the table's index
 * (pqutils/pqact/match.c) offers, in file order, every entry whose pattern
 * matches the identifier.
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes
 * there a few tables with LDM's idioms (continuations, (DD:code), (seq),
 * strftime, quotes, _ELSE_), each with an identifier they match, and
 * exits (the test fuzz_pqact_seeds does it before the brief run).
 */
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pqutils/pqact/conf.h"
#include "pqutils/pqact/subst.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const seeds[][2] = {
    {"IDS|DDPLUS\t^(SA....) (K...) ([0-3][0-9])([0-2][0-9])\n"
     "\tFILE\t-removewmo\n#c\n\tsurface/(\\3:yyyy)(\\3:mm)\\3/\\2.txt\n",
     "SAUS43 KXYZ 011200"},
    {"ANY\t^(.*) (.*)\tFILE\t-close \"a b/\\1\" %Y%m%d_(seq)_\\(02)&\n"
     "ANY\t^_ELSE_$\tSTDIOFILE\t-st\tother/%H\n",
     "500 hPa%j PRES"},
    {"WMO\t.*x\tNOOP\n"
     "EXP\t(a|b)+c{2}\tEXEC\t-wait\tx \\(1) (31:jjj) (00:ddd)\n",
     "abcc"},
    /* anchored patterns the index reads: prefixes, brackets, branches */
    {"ANY\t^(SA|[x-z]b)+\tNOOP\nANY\t^SAUS4[0-9] K\tNOOP\n"
     "ANY\t^[^A-Z]\tNOOP\nANY\t^(a)?b\tNOOP\n",
     "SAUS43 KXYZ"},
};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir == NULL)
    return 0;
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/seed%zu", dir, i);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
      exit(1);
    fwrite(seeds[i][0], 1, strlen(seeds[i][0]) + 1, f); /* and its NUL */
    fwrite(seeds[i][1], 1, strlen(seeds[i][1]), f);
    fclose(f);
  }
  exit(0);
}

static void count_errors(void *arg, bool error, const char *msg) {
  (void)msg;
  if (error)
    (*(unsigned *)arg)++;
}

static void act(const struct pqact_conf *conf, const pq_prod_info *info) {
  static char buf[PQACT_ARG_MAX], taint[PQACT_ARG_MAX];
  char *argv[PQACT_MAX_ARGS];
  regmatch_t m[PQACT_NMATCH];
  /* What the index offers: in file order, and every entry that matches. */
  bool *offered = calloc(conf->n + 1, sizeof *offered);
  struct pqact_offer o;
  size_t e_i, prev = 0, n = 0;
  if ((conf->match == NULL) != (conf->n == 0) || offered == NULL)
    abort(); /* an index for every table but the empty one */
  if (conf->match != NULL)
    pqact_match_start(conf->match, info->ident, &o);
  while (conf->match != NULL && pqact_match_next(&o, &e_i)) {
    if (e_i >= conf->n || (n++ > 0 && e_i <= prev))
      abort();
    offered[e_i] = true;
    prev = e_i;
  }
  for (size_t i = 0; i < conf->n; i++) {
    const struct pqact_entry *e = &conf->entries[i];
    if (regexec(&e->re, info->ident, PQACT_NMATCH, m, 0) != 0)
      continue;
    if (!offered[i])
      abort();
    int argc =
        pqact_substitute_taint(e->args, info, m, buf, taint, argv, NULL, NULL);
    for (int k = 0; k < argc; k++) {
      if (argv[k] < buf || argv[k] + strlen(argv[k]) >= buf + sizeof buf)
        abort();
      (void)pqact_product_dotdot(buf, taint, argv[k]);
    }
  }
  free(offered);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, '\0', size);
  size_t conf_len = nul != NULL ? (size_t)(nul - data) : size;
  pq_prod_info info = {.seqno = 123, .feedtype = PQ_FT_ANY};
  info.arrival.sec = 1700000000 + (int64_t)(size * 86400 % 40000000);
  if (nul != NULL) {
    size_t ilen = size - conf_len - 1;
    if (ilen > PQ_IDENT_MAX)
      ilen = PQ_IDENT_MAX;
    memcpy(info.ident, nul + 1, ilen);
  }
  FILE *f = fmemopen((void *)data, conf_len, "r");
  if (f == NULL)
    return 0;
  struct pqact_conf conf = {0};
  unsigned errors = 0;
  int rc = pqact_conf_read(f, &conf, count_errors, &errors);
  fclose(f);
  if (rc != 0) {
    if (conf.entries != NULL || conf.n != 0 || errors == 0)
      abort();
    return 0;
  }
  act(&conf, &info);
  pqact_conf_free(&conf);
  return 0;
}
