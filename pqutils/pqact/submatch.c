/*
 * submatch.c - PCRE2 matchers of deterministic pqact patterns (submatch.h):
 * translating (ere_hs.h), compiling with the JIT, the self-test against
 * regexec() on generated identifiers, and the match with its groups
 * written as regexec() writes them.
 */
#include "pqutils/pqact/submatch.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/pqact/ere_hs.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* Room for a translation (ere_hs.c writes a set byte by byte). */
#define EXPR_MAX 8192
/* The self-test: identifiers generated, and the ways each is placed. */
#define SAMPLES 16
#define PLACES 5
#define IDENT_MAX 255
/* The groups a table's arguments can name (subst.h's PQACT_NMATCH). */
#define GROUPS_MAX 100

struct pqact_submatch {
  pcre2_code *code;
  pcre2_match_data *md;
  bool jit;
};

void pqact_submatch_free(struct pqact_submatch *s) {
  if (s == NULL)
    return;
  pcre2_match_data_free(s->md);
  pcre2_code_free(s->code);
  free(s);
}

int pqact_submatch_exec(struct pqact_submatch *s, const regex_t *re,
                        const char *ident, size_t nmatch, regmatch_t *m) {
  size_t len = strlen(ident);
  int rc =
      s->jit
          ? pcre2_jit_match(s->code, (PCRE2_SPTR)ident, len, 0, 0, s->md, NULL)
          : pcre2_match(s->code, (PCRE2_SPTR)ident, len, 0, 0, s->md, NULL);
  if (rc == PCRE2_ERROR_NOMATCH)
    return REG_NOMATCH;
  if (rc < 0) /* a limit: the answer is regexec()'s */
    return regexec(re, ident, nmatch, m, 0);
  const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
  size_t pairs = pcre2_get_ovector_count(s->md);
  for (size_t k = 0; k < nmatch; k++) {
    if (k < pairs && ov[2 * k] != PCRE2_UNSET) {
      m[k].rm_so = (regoff_t)ov[2 * k];
      m[k].rm_eo = (regoff_t)ov[2 * k + 1];
    } else {
      m[k].rm_so = m[k].rm_eo = -1;
    }
  }
  return 0;
}

/* Sample s placed the k-th way: alone; after other text; before other
 * text; cut short by a byte; with one byte changed. */
static void place(char *out, const char *s, unsigned k, uint64_t *rng) {
  static const char text[] = "SAUS43 KOKX\n0123456789 _-/.abcXYZ";
  size_t n = strlen(s);
  char c = text[pqact_ere_rand(rng) % (sizeof text - 1)];
  switch (k) {
  case 1:
    out[0] = c;
    memcpy(out + 1, s, n + 1);
    return;
  case 2:
    memcpy(out, s, n);
    out[n] = c;
    out[n + 1] = '\0';
    return;
  case 3:
    memcpy(out, s, n + 1);
    if (n > 0)
      out[n - 1] = '\0';
    return;
  case 4:
    memcpy(out, s, n + 1);
    if (n > 0)
      out[pqact_ere_rand(rng) % n] = c;
    return;
  default:
    memcpy(out, s, n + 1);
  }
}

bool pqact_submatch_agrees(struct pqact_submatch *s, const regex_t *re,
                           const char *id) {
  regmatch_t a[GROUPS_MAX], b[GROUPS_MAX];
  size_t n = re->re_nsub + 1 < GROUPS_MAX ? re->re_nsub + 1 : GROUPS_MAX;
  int ra = regexec(re, id, n, a, 0);
  int rb = pqact_submatch_exec(s, re, id, n, b);
  if ((ra == 0) != (rb == 0))
    return false;
  for (size_t k = 0; ra == 0 && k < n; k++)
    if (a[k].rm_so != b[k].rm_so || a[k].rm_eo != b[k].rm_eo)
      return false;
  return true;
}

static bool self_test(struct pqact_submatch *s, const char *ere,
                      const regex_t *re) {
  char smp[IDENT_MAX + 1], id[IDENT_MAX + 3];
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (const char *p = ere; *p != '\0'; p++)
    rng = (rng ^ (unsigned char)*p) * 0x100000001b3ull;
  if (rng == 0)
    rng = 1;
  for (unsigned j = 0; j < SAMPLES; j++) {
    if (pqact_ere_sample(ere, &rng, smp, IDENT_MAX) < 0)
      continue;
    for (unsigned k = 0; k < PLACES; k++) {
      place(id, smp, k, &rng);
      if (!pqact_submatch_agrees(s, re, id))
        return false;
    }
  }
  return pqact_submatch_agrees(s, re, "");
}

struct pqact_submatch *pqact_submatch_new(const char *ere, const regex_t *re) {
  return pqact_submatch_build(ere, re, 0);
}

struct pqact_submatch *pqact_submatch_build(const char *ere, const regex_t *re,
                                            unsigned opts) {
  char *expr = malloc(EXPR_MAX);
  struct pqact_submatch *s = calloc(1, sizeof *s);
  if (expr == NULL || s == NULL)
    goto refused;
  if ((opts & PQACT_SUBMATCH_NO_ANALYSIS) != 0
          ? pqact_ere_to_pcre_unchecked(ere, expr, EXPR_MAX) != 0
          : pqact_ere_to_pcre(ere, expr, EXPR_MAX) != 0)
    goto refused;
  int err;
  PCRE2_SIZE at;
  s->code = pcre2_compile((PCRE2_SPTR)expr, PCRE2_ZERO_TERMINATED,
                          PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY |
                              PCRE2_NEVER_UTF | PCRE2_NEVER_UCP,
                          &err, &at, NULL);
  if (s->code == NULL)
    goto refused;
  uint32_t groups = 0;
  if (pcre2_pattern_info(s->code, PCRE2_INFO_CAPTURECOUNT, &groups) != 0 ||
      groups != re->re_nsub)
    goto refused; /* numbered otherwise: not the same pattern */
  s->jit = pcre2_jit_compile(s->code, PCRE2_JIT_COMPLETE) == 0;
  s->md = pcre2_match_data_create_from_pattern(s->code, NULL);
  if (s->md == NULL ||
      ((opts & PQACT_SUBMATCH_NO_SELFTEST) == 0 && !self_test(s, ere, re)))
    goto refused;
  free(expr);
  return s;
refused:
  free(expr);
  pqact_submatch_free(s);
  return NULL;
}
