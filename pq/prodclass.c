/*
 * prodclass.c - product classes: which products a reader, a downstream or a
 * utility wants.  Owns building a class (compiling each spec's ERE), freeing
 * it, and LDM's matching rule (docs/protocol.md §12): creation time inside
 * the window, then any spec sharing a feedtype bit whose ERE is found in the
 * ident.  LDM's quirks are kept on purpose: leading ".*" are stripped before
 * compiling, and the "everything" class ignores the time.
 */
#include "pq/product.h"

#include <stdio.h>
#include <string.h>

void pq_class_init(pq_class *cls, pq_timestamp from, pq_timestamp to) {
  cls->from = from;
  cls->to = to;
  cls->nspecs = 0;
}

/* LDM's re_vetSpec: drop leading ".*" while more than 2 characters remain. */
static const char *strip_dotstar(const char *pattern, size_t len) {
  while (len > 2 && pattern[0] == '.' && pattern[1] == '*') {
    pattern += 2;
    len -= 2;
  }
  return pattern;
}

int pq_class_add(pq_class *cls, uint32_t feedtype, const char *pattern,
                 char *errbuf, size_t errlen) {
  size_t len = strlen(pattern);
  pq_spec *spec;
  const char *re;
  int rc;

  if (cls->nspecs >= PQ_CLASS_MAX)
    return PQ_CLASS_EFULL;
  if (len > PQ_PATTERN_MAX)
    return PQ_CLASS_ELONG;
  /* Compile into the next slot; nspecs counts it only on success. */
  spec = &cls->specs[cls->nspecs];
  re = strip_dotstar(pattern, len);
  if (!pq_ere_tame(re)) {
    if (errbuf != NULL && errlen > 0)
      snprintf(errbuf, errlen,
               "pattern too complex (repetitions stacked or "
               "nested too deeply)");
    return PQ_CLASS_EPATTERN;
  }
  rc = regcomp(&spec->re, re, REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    if (errbuf != NULL && errlen > 0)
      regerror(rc, &spec->re, errbuf, errlen);
    return PQ_CLASS_EPATTERN;
  }
  spec->feedtype = feedtype;
  memcpy(spec->pattern, pattern, len + 1);
  spec->match_all = strcmp(re, ".*") == 0;
  spec->costly = !spec->match_all && pq_ere_size(re) > PQ_ERE_QUICK;
  cls->nspecs++;
  return 0;
}

void pq_class_free(pq_class *cls) {
  unsigned i;

  for (i = 0; i < cls->nspecs; i++)
    regfree(&cls->specs[i].re);
  cls->nspecs = 0;
}

/* LDM's PQ_CLASS_ALL: TS_ZERO .. TS_ENDT and the single spec {ANY, ".*"}. */
static bool is_all_class(const pq_class *cls) {
  return cls->nspecs == 1 && cls->specs[0].feedtype == PQ_FT_ANY &&
         cls->specs[0].match_all && pq_ts_cmp(cls->from, PQ_TS_ZERO) == 0 &&
         pq_ts_cmp(cls->to, PQ_TS_ENDT) == 0;
}

static bool in_window(const pq_class *cls, pq_timestamp t) {
  bool reversed = pq_ts_cmp(cls->from, cls->to) > 0;
  pq_timestamp lo = reversed ? cls->to : cls->from;
  pq_timestamp hi = reversed ? cls->from : cls->to;

  return pq_ts_cmp(lo, t) <= 0 && pq_ts_cmp(t, hi) <= 0;
}

static bool ident_matches(const pq_spec *spec, const char *ident) {
  if (spec->match_all)
    return true;
  /* An ident read from a damaged queue may lack its NUL: never match it. */
  if (memchr(ident, '\0', PQ_IDENT_MAX + 1) == NULL)
    return false;
  return regexec(&spec->re, ident, 0, NULL, 0) == 0;
}

bool pq_class_match(const pq_class *cls, const pq_prod_info *info) {
  unsigned i;

  if (!is_all_class(cls) && !in_window(cls, info->arrival))
    return false;
  for (i = 0; i < cls->nspecs; i++) {
    const pq_spec *spec = &cls->specs[i];

    if ((info->feedtype & spec->feedtype) != 0 &&
        ident_matches(spec, info->ident))
      return true;
  }
  return false;
}

int pq_class_simple(pq_class *cls, pq_timestamp from, pq_timestamp to,
                    uint32_t feedtype, const char *pattern, char *errbuf,
                    size_t errlen) {
  pq_class_init(cls, from, to);
  return pq_class_add(cls, feedtype, pattern, errbuf, errlen);
}
