/*
 * hsdb.c - the Hyperscan database of a pqact table's patterns (hsdb.h):
 * translating each offered pattern (ere_hs.h), compiling them together in
 * block mode (when that fails, each is checked alone, exact or as a
 * prefilter or refused; an expression the compiler still names is
 * compiled again in prefilter mode, then dropped; a set it cannot compile
 * as a whole is split), the self-test
 * against regexec() on generated identifiers, and the scan.
 */
#include "pqutils/pqact/hsdb.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/pqact/ere_hs.h"

#ifdef PQACT_HAVE_HS
#include <hs/hs.h>

/* Room for a translation: every byte of a 255-byte pattern a set written
 * out in full is the worst case, far past any real one; more is refused. */
#define HS_EXPR_MAX 8192
/* The self-test: identifiers generated per entry, and the ways each is
 * placed (alone; inside other text; after and before a newline). */
#define SAMPLES 6
#define PLACES 4
#define IDENT_MAX 255

/* Most tables make one database; a set Hyperscan cannot compile as a
 * whole ("resource limit exceeded") is split in halves until each half
 * compiles or is one expression, refused. */
#define MAX_DBS 64

struct pqact_hs {
  hs_database_t *db[MAX_DBS];
  size_t ndb;
  hs_scratch_t *scratch; /* big enough for every database */
  size_t n;
  bool *use; /* use[i]: entry i's report is kept */
};

struct hits {
  const bool *use;
  uint32_t *v;
  size_t n;
};

static int on_match(unsigned id, unsigned long long from, unsigned long long to,
                    unsigned flags, void *ctx) {
  (void)from;
  (void)to;
  (void)flags;
  struct hits *h = ctx;
  if (h->use[id])
    h->v[h->n++] = id;
  return 0;
}

bool pqact_hs_available(void) {
  return hs_valid_platform() == HS_SUCCESS;
}

void pqact_hs_free(struct pqact_hs *h) {
  if (h == NULL)
    return;
  hs_free_scratch(h->scratch);
  for (size_t i = 0; i < h->ndb; i++)
    hs_free_database(h->db[i]);
  free(h->use);
  free(h);
}

size_t pqact_hs_scan(struct pqact_hs *h, const char *ident, uint32_t *hits) {
  struct hits r = {.use = h->use, .v = hits};
  unsigned len = (unsigned)strlen(ident);
  for (size_t d = 0; d < h->ndb; d++)
    if (hs_scan(h->db[d], ident, len, 0, h->scratch, on_match, &r) !=
        HS_SUCCESS) {
      /* cannot happen for a valid database and scratch; if it did, the
       * table walk must not miss anything: report every entry */
      r.n = 0;
      for (size_t i = 0; i < h->n; i++)
        if (h->use[i])
          hits[r.n++] = (uint32_t)i;
      return r.n;
    }
  /* reports come by end offset: put them in file order (few, as a rule) */
  for (size_t i = 1; i < r.n; i++) {
    uint32_t v = hits[i];
    size_t j = i;
    for (; j > 0 && hits[j - 1] > v; j--)
      hits[j] = hits[j - 1];
    hits[j] = v;
  }
  return r.n;
}

/* Translate and check every offered pattern alone: its expression and
 * flags in exprs[i] and flags[i], or take[i] cleared. */
static int translate(const char *const *pats, bool *take, size_t n,
                     unsigned opts, char **exprs, unsigned *flags,
                     struct pqact_hs_stats *st) {
  char *buf = malloc(HS_EXPR_MAX);
  if (buf == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    if (!take[i])
      continue;
    if (pqact_ere_to_hs(pats[i], buf, HS_EXPR_MAX - 8) != 0) {
      take[i] = false;
      st->refused++;
      continue;
    }
    if (opts & PQACT_HS_BREAK) /* a translation that misses: tests only */
      strcat(buf, "\\x01");
    /* exact; one the compiler refuses is retried as a prefilter */
    flags[i] = HS_FLAG_DOTALL | HS_FLAG_SINGLEMATCH;
    exprs[i] = strdup(buf);
    if (exprs[i] == NULL) {
      free(buf);
      return -1;
    }
  }
  free(buf);
  return 0;
}

/* Check each taken expression of [lo, hi) alone: exact, else as a
 * prefilter, else refused.  Done only once a compile of the set has
 * failed, so that a table the compiler takes costs one compile, and one
 * with many bad expressions not one compile per bad expression. */
static void vet(char **exprs, unsigned *flags, bool *take, size_t lo, size_t hi,
                struct pqact_hs_stats *st) {
  for (size_t i = lo; i < hi; i++) {
    if (!take[i])
      continue;
    hs_expr_info_t *info = NULL;
    hs_compile_error_t *err = NULL;
    if (hs_expression_info(exprs[i], flags[i], &info, &err) == HS_SUCCESS) {
      free(info);
      continue;
    }
    hs_free_compile_error(err);
    err = NULL;
    flags[i] |= HS_FLAG_PREFILTER;
    if (hs_expression_info(exprs[i], flags[i], &info, &err) == HS_SUCCESS) {
      free(info);
      continue;
    }
    hs_free_compile_error(err);
    take[i] = false;
    st->refused++;
  }
}

/* Compile the taken expressions of [lo, hi) into h's databases; one the
 * compiler names is retried in prefilter mode, then dropped; a set it
 * cannot compile as a whole is split.  -1 if out of memory or databases. */
static int compile(struct pqact_hs *h, char **exprs, unsigned *flags,
                   bool *take, size_t lo, size_t hi,
                   struct pqact_hs_stats *st) {
  size_t n = hi - lo;
  const char **e = calloc(n ? n : 1, sizeof *e);
  unsigned *f = calloc(n ? n : 1, sizeof *f);
  unsigned *ids = calloc(n ? n : 1, sizeof *ids);
  int rc = -1;
  bool vetted = false;
  for (;;) {
    if (e == NULL || f == NULL || ids == NULL)
      break;
    unsigned k = 0;
    for (size_t i = lo; i < hi; i++)
      if (take[i]) {
        e[k] = exprs[i];
        f[k] = flags[i];
        ids[k++] = (unsigned)i;
      }
    if (k == 0) {
      rc = 0;
      break;
    }
    hs_database_t *db = NULL;
    hs_compile_error_t *err = NULL;
    if (hs_compile_multi(e, f, ids, k, HS_MODE_BLOCK, NULL, &db, &err) ==
        HS_SUCCESS) {
      if (h->ndb == MAX_DBS) {
        hs_free_database(db);
        break;
      }
      h->db[h->ndb++] = db;
      rc = 0;
      break;
    }
    int bad = err != NULL ? err->expression : -1;
    hs_free_compile_error(err);
    if (!vetted) {
      vet(exprs, flags, take, lo, hi, st);
      vetted = true;
      continue;
    }
    if (bad >= 0 && (unsigned)bad < k) {
      if (!(flags[ids[bad]] & HS_FLAG_PREFILTER)) {
        flags[ids[bad]] |= HS_FLAG_PREFILTER;
      } else {
        take[ids[bad]] = false;
        st->refused++;
      }
      continue;
    }
    /* not one expression's fault: halves, or refuse the one left */
    if (k == 1) {
      take[ids[0]] = false;
      st->refused++;
      continue;
    }
    size_t mid = ids[k / 2];
    rc = compile(h, exprs, flags, take, lo, mid, st) != 0 ||
                 compile(h, exprs, flags, take, mid, hi, st) != 0
             ? -1
             : 0;
    break;
  }
  free(e);
  free(f);
  free(ids);
  return rc;
}

/* Place a generated identifier s as the self-test's way k says. */
static void place(char *out, const char *s, unsigned k, uint64_t *rng) {
  char pre[9] = "", post[9] = "";
  if (k == 1) { /* inside other text */
    unsigned a = (unsigned)(pqact_ere_rand(rng) % 9),
             b = (unsigned)(pqact_ere_rand(rng) % 9);
    for (unsigned i = 0; i < a; i++)
      pre[i] = (char)(' ' + pqact_ere_rand(rng) % 95);
    pre[a] = '\0';
    for (unsigned i = 0; i < b; i++)
      post[i] = (char)(' ' + pqact_ere_rand(rng) % 95);
    post[b] = '\0';
  } else if (k == 2) {
    strcpy(post, "\n");
  } else if (k == 3) {
    strcpy(pre, "\n");
  }
  size_t a = strlen(pre), b = strlen(s), c = strlen(post);
  if (a + b + c > IDENT_MAX) /* s is shorter: cannot happen */
    b = IDENT_MAX - a - c;
  memcpy(out, pre, a);
  memcpy(out + a, s, b);
  memcpy(out + a + b, post, c + 1);
}

/* The self-test: every taken entry against regexec() on identifiers made
 * from its own pattern; one the scan misses is no longer used. */
static int self_test(struct pqact_hs *h, const char *const *pats, bool *take,
                     struct pqact_hs_stats *st) {
  uint32_t *hits = calloc(h->n, sizeof *hits);
  if (hits == NULL)
    return -1;
  char s[IDENT_MAX + 1], id[IDENT_MAX + 1];
  for (size_t i = 0; i < h->n; i++) {
    if (!take[i])
      continue;
    regex_t re;
    if (regcomp(&re, pats[i], REG_EXTENDED | REG_NOSUB) != 0) {
      h->use[i] = take[i] = false; /* not the caller's promise: refused */
      st->refused++;
      continue;
    }
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(i + 1) * 0x100000001b3ull;
    bool ok = true;
    for (unsigned j = 0; j < SAMPLES && ok; j++) {
      if (pqact_ere_sample(pats[i], &rng, s, IDENT_MAX - 18) < 0)
        continue;
      for (unsigned k = 0; k < PLACES && ok; k++) {
        place(id, s, k, &rng);
        if (regexec(&re, id, 0, NULL, 0) != 0)
          continue; /* not a witness */
        st->samples++;
        size_t nh = pqact_hs_scan(h, id, hits);
        bool found = false;
        for (size_t x = 0; x < nh && !found; x++)
          found = hits[x] == i;
        ok = found;
      }
    }
    regfree(&re);
    if (!ok) {
      h->use[i] = take[i] = false;
      st->disagree++;
    }
  }
  free(hits);
  return 0;
}

struct pqact_hs *pqact_hs_new(const char *const *pats, bool *take, size_t n,
                              unsigned opts, struct pqact_hs_stats *stats) {
  struct pqact_hs_stats st = {0};
  struct pqact_hs *h = NULL;
  char **exprs = NULL;
  unsigned *flags = NULL;
  for (size_t i = 0; i < n; i++)
    st.offered += take[i];
  if (st.offered == 0 || !pqact_hs_available() || n > UINT32_MAX)
    goto none;
  exprs = calloc(n, sizeof *exprs);
  flags = calloc(n, sizeof *flags);
  h = calloc(1, sizeof *h);
  if (exprs == NULL || flags == NULL || h == NULL)
    goto none;
  h->n = n;
  h->use = calloc(n, sizeof *h->use);
  if (h->use == NULL || translate(pats, take, n, opts, exprs, flags, &st) != 0)
    goto none;
  if (compile(h, exprs, flags, take, 0, n, &st) != 0 || h->ndb == 0)
    goto none;
  for (size_t d = 0; d < h->ndb; d++)
    if (hs_alloc_scratch(h->db[d], &h->scratch) != HS_SUCCESS)
      goto none;
  for (size_t i = 0; i < n; i++)
    h->use[i] = take[i];
  if (self_test(h, pats, take, &st) != 0)
    goto none;
  for (size_t i = 0; i < n; i++)
    if (take[i]) {
      st.taken++;
      st.prefilter += (flags[i] & HS_FLAG_PREFILTER) != 0;
    }
  if (st.taken == 0)
    goto none;
  goto done;
none:
  pqact_hs_free(h);
  h = NULL;
  for (size_t i = 0; i < n; i++)
    take[i] = false;
  st.taken = 0;
done:
  for (size_t i = 0; exprs != NULL && i < n; i++)
    free(exprs[i]);
  free(exprs);
  free(flags);
  if (stats != NULL)
    *stats = st;
  return h;
}

#else /* no Hyperscan in this build */

bool pqact_hs_available(void) {
  return false;
}

struct pqact_hs *pqact_hs_new(const char *const *pats, bool *take, size_t n,
                              unsigned opts, struct pqact_hs_stats *stats) {
  (void)pats;
  (void)opts;
  struct pqact_hs_stats st = {0};
  for (size_t i = 0; i < n; i++) {
    st.offered += take[i];
    take[i] = false;
  }
  if (stats != NULL)
    *stats = st;
  return NULL;
}

void pqact_hs_free(struct pqact_hs *h) {
  (void)h;
}

size_t pqact_hs_scan(struct pqact_hs *h, const char *ident, uint32_t *hits) {
  (void)h;
  (void)ident;
  (void)hits;
  return 0;
}

#endif
