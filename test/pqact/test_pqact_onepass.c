/*
 * test_pqact_onepass - the one-pass matcher (pqutils/pqact/match.c with
 * its Hyperscan database, hsdb.c, and the translation, ere_hs.c) against
 * regexec() on every entry, as LDM's pqact tries them: for one table of
 * every pattern in pqact's tests (the tables the shell tests under
 * test/pqact write, and those in its unit tests' sources) and a fuzzed set
 * of EREs, the entries it offers, run with regexec() in file order, are
 * exactly the entries that match, with the same sub-matches, for real
 * identifiers (WMO headings, GRIB names, NEXRAD and CONDUIT identifiers:
 * a list of their forms here, and every quoted identifier-like string
 * found in the project's test sources and in shared/vectors when it is
 * there) and generated ones (strings each pattern describes, alone and in
 * other text, cut and changed, and random ones).  The same with a
 * database whose translations are broken on purpose: its self-test must
 * take every broken entry out, and the matcher still agrees.  The
 * translation's rules are checked on chosen patterns.  Where Hyperscan
 * cannot run (no SSSE3, a build without it) the comparison still runs on
 * the prefix index alone, and the database's checks are skipped.
 *
 * And PCRE2's sub-matches (pqutils/pqact/submatch.c): the determinism
 * analysis (ere_hs.h) accepts and refuses chosen patterns, and for every
 * pattern of the table it accepts (the tests' own, the fuzzed ones),
 * PCRE2 without the self-test agrees with regexec() on whether each
 * identifier (real and generated) matches and on every sub-match; with
 * the self-test, every accepted pattern keeps its PCRE2 matcher.  On
 * ambiguous patterns the analysis refuses, PCRE2 does differ (the
 * comparison can fail) and the self-test alone would catch it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/pqact/ere_hs.h"
#include "pqutils/pqact/match.h"
#include "pqutils/pqact/submatch.h"
#include "test/lib/tu_skip.h"

#ifndef PQ_SOURCE_DIR /* set by tests.cmake */
#define PQ_SOURCE_DIR "."
#endif

#define MAX_PATS 1024
/* Under AddressSanitizer (build/asan), whose allocator makes regexec()
 * and Hyperscan's compiler many times slower, a smaller set. */
#if defined(__SANITIZE_ADDRESS__)
#define SCALE 3
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCALE 3
#endif
#endif
#ifndef SCALE
#define SCALE 1
#endif
#define MAX_IDS (1400 / SCALE)
#define FUZZED (220 / SCALE)
#define NSUB 10

struct strs {
  char *v[MAX_IDS];
  size_t n;
};

static void add(struct strs *s, const char *p, size_t len, size_t cap) {
  if (s->n >= cap || len == 0 || len > 255)
    return;
  for (size_t i = 0; i < s->n; i++)
    if (strlen(s->v[i]) == len && memcmp(s->v[i], p, len) == 0)
      return;
  s->v[s->n] = strndup(p, len);
  assert_non_null(s->v[s->n]);
  s->n++;
}

static void strs_free(struct strs *s) {
  for (size_t i = 0; i < s->n; i++)
    free(s->v[i]);
  s->n = 0;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return NULL;
  size_t cap = 1 << 16, len = 0;
  char *b = malloc(cap);
  assert_non_null(b);
  size_t got;
  while ((got = fread(b + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (len + 1 == cap) {
      cap *= 2;
      char *grown = realloc(b, cap);
      assert_non_null(grown);
      b = grown;
    }
  }
  b[len] = '\0';
  fclose(f);
  return b;
}

/* The patterns of a shell test's tables: what stands between the first
 * two "${tab}" of a line, shell escapes undone. */
static void patterns_of_sh(const char *text, struct strs *pats) {
  for (const char *line = text; *line != '\0';) {
    const char *end = strchr(line, '\n');
    if (end == NULL)
      end = line + strlen(line);
    const char *a = strstr(line, "${tab}");
    if (a != NULL && a < end) {
      a += 6;
      const char *b = strstr(a, "${tab}");
      if (b == NULL || b > end)
        b = end;
      char pat[512];
      size_t n = 0;
      for (const char *p = a; p < b && n < sizeof pat - 1; p++) {
        if (*p == '\\' && p + 1 < b && (p[1] == '\\' || p[1] == '$'))
          p++;
        pat[n++] = *p;
      }
      add(pats, pat, n, MAX_PATS);
    }
    line = *end ? end + 1 : end;
  }
}

/* The patterns of a C test's tables: in a string literal, what stands
 * between a feedtype's "\t" and the next "\t" or "\n" escape. */
static void patterns_of_c(const char *text, struct strs *pats) {
  for (const char *p = text; (p = strstr(p, "\\t")) != NULL; p += 2) {
    const char *q = p;
    while (q > text && (q[-1] == '|' || (q[-1] >= 'A' && q[-1] <= 'Z')))
      q--;
    if (q == p || q == text || q[-1] != '"')
      continue; /* not "FEEDTYPE\t at a literal's start */
    const char *a = p + 2;
    char pat[512];
    size_t n = 0;
    for (const char *s = a; *s != '\0' && *s != '"' && n < sizeof pat - 1;
         s++) {
      if (s[0] == '\\' && (s[1] == 't' || s[1] == 'n'))
        break;
      if (s[0] == '\\' && s[1] == '\\')
        s++;
      pat[n++] = *s;
    }
    add(pats, pat, n, MAX_PATS);
  }
}

static void project_patterns(struct strs *pats) {
  DIR *d = opendir(PQ_SOURCE_DIR "/test/pqact");
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    bool sh = len > 3 && strcmp(e->d_name + len - 3, ".sh") == 0;
    bool c = len > 2 && strcmp(e->d_name + len - 2, ".c") == 0 &&
             strncmp(e->d_name, "test_pqact_", 11) == 0;
    bool conf = len > 5 && strcmp(e->d_name + len - 5, ".conf") == 0;
    if (!sh && !c && !conf)
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/test/pqact/%s", PQ_SOURCE_DIR, e->d_name);
    char *text = slurp(path);
    assert_non_null(text);
    if (sh)
      patterns_of_sh(text, pats);
    else if (c)
      patterns_of_c(text, pats);
    else
      for (char *l = strtok(text, "\n"); l != NULL; l = strtok(NULL, "\n")) {
        char *t1 = strchr(l, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (l[0] != '#' && t2 != NULL)
          add(pats, t1 + 1, (size_t)(t2 - t1 - 1), MAX_PATS);
      }
    free(text);
  }
  closedir(d);
}

/* ---- generated EREs ---- */

static uint64_t rng_state = 88172645463325252ull;
static unsigned rnd(unsigned n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state % n);
}

static void gen_ere(char *out, size_t cap, unsigned depth) {
  static const char *const atoms[] = {
      "S",
      "A",
      "U",
      "K",
      "0",
      "9",
      " ",
      "/",
      "_",
      "-",
      "x",
      "\\.",
      "\\/",
      "\\$",
      "\\(",
      ".",
      "[A-Z]",
      "[0-9]",
      "[^ ]",
      "[]a]",
      "[^]a]",
      "[a-]",
      "[-a]",
      "[.]",
      "[\\.]",
      "[[:digit:]]",
      "[[:alpha:]_]",
      "[^[:space:]]",
      "[A-Z0-9-]",
      "]",
      "}",
      "\\1",
      "\\w",
      "\\<",
      "[[=a=]]",
      "^",
      "$",
      "SAUS",
      "KWBC",
      "grib2",
      "/p",
      "NEXRAD3",
      "\\n",
      "a{,2}",
      "{",
  };
  static const char *const quants[] = {"*",    "+",    "?",  "{2}", "{1,3}",
                                       "{0,}", "{,2}", "+*", "{0}"};
  size_t len = strlen(out);
  unsigned pieces = 1 + rnd(4);
  for (unsigned i = 0; i < pieces && len < cap - 40; i++) {
    if (depth < 3 && rnd(5) == 0) {
      strcat(out, "(");
      gen_ere(out, cap - 10, depth + 1);
      if (rnd(2)) {
        strcat(out, "|");
        gen_ere(out, cap - 10, depth + 1);
      }
      strcat(out, ")");
    } else {
      const char *a = atoms[rnd(sizeof atoms / sizeof atoms[0])];
      if (strcmp(a, "\\1") == 0 && rnd(6) != 0)
        a = "x"; /* a few back-references: glibc runs them slowly */
      strcat(out, a);
    }
    if (rnd(4) == 0)
      strcat(out, quants[rnd(sizeof quants / sizeof quants[0])]);
    if (depth == 0 && rnd(12) == 0)
      strcat(out, "|");
    len = strlen(out);
  }
}

static void fuzzed_patterns(struct strs *pats, size_t count) {
  for (size_t i = 0; i < count; i++) {
    char e[200] = "";
    if (rnd(2))
      strcat(e, "^");
    gen_ere(e, sizeof e - 2, 0);
    if (rnd(4) == 0)
      strcat(e, "$");
    add(pats, e, strlen(e), MAX_PATS);
  }
}

/* ---- identifiers ---- */

/* Real identifiers' forms, as feeds send them. */
static const char *const real_ids[] = {
    "SAUS43 KXYZ 011200",
    "SAUS43 KXYZ 011200 RRA",
    "FXUS61 KBOX 311800 RRA /pAFDBOX",
    "SDUS53 KMKX 071200 /pN0RMKX",
    "SDUS83 KDMX 071158 /pDPADMX !nids/",
    "NXUS63 KMKX 071200 /pGSMMKX",
    "HTQA50 KWBC 151200 /mGFS !grib/ncep/GFS/",
    "LTPA98 KWBC 151200 !grib2/ncep/GFS/#004/",
    "grib2/ncep/GFS/#000/202612071200F003/TMPK/850 hPa PRES! 000123",
    "grib2/ncep/NAM_84/#218/202612071200F012/HGHT/500 hPa PRES",
    "data/nccf/com/gfs/prod/gfs.20261207/12/atmos/gfs.t12z.pgrb2.0p25.f003 "
    "!grib2/ncep/GFS/#000/202612071200F003/HGHT/500 hPa PRES! 000123",
    "data/nccf/com/nam/prod/nam.20261207/nam.t12z.awip3d12.tm00.grib2 "
    "!grib2/ncep/NAM_84/#000/202612071200F012/TMPK/2 m HGHT! 000007",
    "L2-BZIP2/KMKX/20261207120000/123/4/I/V06/0",
    "L2-BZIP2/KFTG/20261207115959/456/57/E/V06/0",
    "NEXRAD3/N0R/MKX/20261207/1200",
    "/pN0RMKX",
    "KMKX_SDUS53_N0RMKX_071200",
    "TIGN01 KNES 071200 /pTIGN01",
    "satz/ch1/GOES-16/ABI/CONUS/20261207/1200",
    "IUSN01 KWBC 071200 !bufr/",
    "_BEGIN_",
    "_ELSE_",
};

/* Quoted strings in a file that look like identifiers: printable, 4 to
 * 255 bytes, holding a space or a '/' and a capital or digit. */
static void ids_of_file(const char *path, struct strs *ids) {
  char *text = slurp(path);
  if (text == NULL)
    return;
  for (char *p = text; *p != '\0'; p++) {
    if (*p != '"' && *p != '\'')
      continue;
    char q = *p, *s = p + 1, *e = s;
    while (*e != '\0' && *e != q && *e != '\n' && e - s < 256)
      e++;
    if (*e != q)
      continue;
    size_t n = (size_t)(e - s);
    bool ok = n >= 4, sep = false, cap = false;
    for (size_t i = 0; i < n && ok; i++) {
      ok = s[i] >= ' ' && s[i] < 127 && s[i] != '\\' && s[i] != '$';
      sep = sep || s[i] == ' ' || s[i] == '/';
      cap = cap || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9');
    }
    if (ok && sep && cap)
      add(ids, s, n, MAX_IDS / 2);
    p = e;
  }
  free(text);
}

static void ids_of_dir(const char *dir, struct strs *ids) {
  DIR *d = opendir(dir);
  if (d == NULL)
    return; /* shared/vectors: not in every clone */
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' ||
        !((len > 2 && (strcmp(e->d_name + len - 2, ".c") == 0 ||
                       strcmp(e->d_name + len - 2, ".h") == 0)) ||
          (len > 3 && strcmp(e->d_name + len - 3, ".sh") == 0) ||
          (len > 4 && strcmp(e->d_name + len - 4, ".txt") == 0)))
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ids_of_file(path, ids);
  }
  closedir(d);
}

static void real_identifiers(struct strs *ids) {
  ids->v[ids->n] = strdup(""); /* the empty identifier too */
  assert_non_null(ids->v[ids->n]);
  ids->n++;
  for (size_t i = 0; i < sizeof real_ids / sizeof real_ids[0]; i++)
    add(ids, real_ids[i], strlen(real_ids[i]), MAX_IDS);
  ids_of_dir(PQ_SOURCE_DIR "/test/ingest", ids);
  ids_of_dir(PQ_SOURCE_DIR "/test/vectors", ids);
  ids_of_dir(PQ_SOURCE_DIR "/test/pqact", ids);
  ids_of_dir(PQ_SOURCE_DIR "/test/pq", ids);
  ids_of_dir(PQ_SOURCE_DIR "/../shared/vectors/ldm6", ids);
  ids_of_dir("/work/shared/vectors/ldm6", ids);
}

/* Strings the patterns describe, alone, in other text, cut and changed. */
static void generated_identifiers(const struct strs *pats, struct strs *ids) {
  static const char chars[] = "SAUK0129 /_.-xaZ\n]";
  for (size_t i = 0; i < pats->n; i++) {
    uint64_t r = i + 1;
    for (unsigned k = 0; k < 2; k++) {
      char s[300];
      int n = pqact_ere_sample(pats->v[i], &r, s, 200);
      if (n < 0)
        continue;
      add(ids, s, (size_t)n, MAX_IDS);
      char w[310];
      snprintf(w, sizeof w, "%c%s%c", chars[rnd(sizeof chars - 1)], s,
               chars[rnd(sizeof chars - 1)]);
      add(ids, w, strlen(w), MAX_IDS);
      if (n > 1) {
        add(ids, s, (size_t)n - 1, MAX_IDS);
        s[rnd((unsigned)n)] = chars[rnd(sizeof chars - 1)];
        add(ids, s, (size_t)n, MAX_IDS);
      }
    }
  }
  for (unsigned k = 0; k < 400; k++) {
    char s[40];
    unsigned n = rnd(24);
    for (unsigned j = 0; j < n; j++)
      s[j] = chars[rnd(sizeof chars - 1)];
    add(ids, s, n, MAX_IDS);
  }
}

/* ---- the comparison ---- */

struct table {
  const char *pats[MAX_PATS];
  regex_t re[MAX_PATS];
  bool always[MAX_PATS];
  size_t n;
};

/* The table of the patterns that regcomp() takes (as pqact's reader). */
static void table_of(const struct strs *pats, struct table *t) {
  t->n = 0;
  for (size_t i = 0; i < pats->n && t->n < MAX_PATS; i++) {
    if (regcomp(&t->re[t->n], pats->v[i], REG_EXTENDED) != 0)
      continue;
    t->pats[t->n] = pats->v[i];
    t->always[t->n] = strcmp(pats->v[i], "^_ELSE_$") == 0;
    t->n++;
  }
}

static void table_free(struct table *t) {
  for (size_t i = 0; i < t->n; i++)
    regfree(&t->re[i]);
}

/* Which entries match each identifier, by regexec() on every entry (as
 * LDM's pqact tries them): computed once, for every run. */
static bool *brute; /* brute[k * MAX_PATS + i]: ids[k] matches entry i */
/* and its sub-matches: subs[hit_at[k * MAX_PATS + i]] */
static regmatch_t (*subs)[NSUB];
static uint32_t *hit_at;

static void brute_force(const struct table *t, const struct strs *ids) {
  brute = calloc(ids->n * MAX_PATS, sizeof *brute);
  hit_at = calloc(ids->n * MAX_PATS, sizeof *hit_at);
  assert_non_null(brute);
  assert_non_null(hit_at);
  size_t nsubs = 0, cap = 0;
  for (size_t k = 0; k < ids->n; k++)
    for (size_t i = 0; i < t->n; i++) {
      if (nsubs == cap) {
        cap = cap ? cap * 2 : 4096;
        regmatch_t(*grown)[NSUB] = realloc(subs, cap * sizeof *subs);
        assert_non_null(grown);
        subs = grown;
      }
      bool h = regexec(&t->re[i], ids->v[k], 0, NULL, 0) == 0 &&
               regexec(&t->re[i], ids->v[k], NSUB, subs[nsubs], 0) == 0;
      brute[k * MAX_PATS + i] = h;
      if (h)
        hit_at[k * MAX_PATS + i] = (uint32_t)nsubs++;
    }
}

/* For every identifier: the entries offered, then matched by regexec()
 * in file order as act.c does, are exactly those that match, with the
 * sub-matches regexec() gives on the entry alone.  *matches counts the
 * entries that matched, *offered those offered. */
static void compare(const struct table *t, const struct pqact_match *m,
                    const struct strs *ids, size_t *matches, size_t *offered) {
  for (size_t k = 0; k < ids->n; k++) {
    const char *id = ids->v[k];
    const bool *hit = &brute[k * MAX_PATS];
    struct pqact_offer o;
    pqact_match_start(m, id, &o);
    size_t e, next = 0;
    while (pqact_match_next(&o, &e)) {
      assert_true(e < t->n);
      if (e < next)
        fail_msg("\"%s\": entry %zu offered after %zu", id, e, next);
      for (; next < e; next++)
        if (hit[next])
          fail_msg("\"%s\" matches entry %zu \"%s\", not offered", id, next,
                   t->pats[next]);
      next = e + 1;
      (*offered)++;
      regmatch_t sub[NSUB];
      /* as act.c: regexec() on the entry; its sub-matches when it hits */
      bool h = regexec(&t->re[e], id, 0, NULL, 0) == 0;
      assert_int_equal(h, hit[e]);
      if (!h)
        continue;
      assert_int_equal(regexec(&t->re[e], id, NSUB, sub, 0), 0);
      (*matches)++;
      if (memcmp(sub, subs[hit_at[k * MAX_PATS + e]], sizeof sub) != 0)
        fail_msg("\"%s\", entry %zu: sub-matches differ", id, e);
    }
    for (; next < t->n; next++)
      if (hit[next])
        fail_msg("\"%s\" matches entry %zu \"%s\", not offered", id, next,
                 t->pats[next]);
  }
}

static struct strs pats, ids;
static struct table table;
static size_t project; /* pats.v[0 .. project - 1]: the tests' own */

/* Is table entry i one of the tests' own patterns (not a fuzzed one)? */
static bool from_project(size_t i) {
  for (size_t j = 0; j < project; j++)
    if (table.pats[i] == pats.v[j])
      return true;
  return false;
}

static int setup(void **state) {
  (void)state;
  project_patterns(&pats);
  project = pats.n;
  fuzzed_patterns(&pats, FUZZED);
  table_of(&pats, &table);
  real_identifiers(&ids);
  generated_identifiers(&pats, &ids);
  brute_force(&table, &ids);
  printf("# %zu patterns from pqact's tests, %zu in all (%zu compile); %zu "
         "identifiers\n",
         project, pats.n, table.n, ids.n);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  table_free(&table);
  free(brute);
  free(hit_at);
  free(subs);
  strs_free(&pats);
  strs_free(&ids);
  return 0;
}

static void test_inputs(void **state) {
  (void)state;
  /* the harvest found the tests' tables and real identifiers */
  assert_true(pats.n > 76 + FUZZED * 3 / 4);
  assert_true(table.n > 50 + FUZZED / 2);
  assert_true(ids.n > MAX_IDS * 2 / 3);
  bool wmo = false, grib = false, nexrad = false;
  for (size_t i = 0; i < pats.n; i++)
    wmo = wmo || strcmp(pats.v[i], "^(SAUS..) (K...) (..)(..)(..)") == 0;
  assert_true(wmo);
  for (size_t i = 0; i < ids.n; i++) {
    grib = grib || strstr(ids.v[i], "grib2/ncep") != NULL;
    nexrad = nexrad || strstr(ids.v[i], "/pN0R") != NULL;
  }
  assert_true(grib && nexrad);
}

static void run(unsigned opts, struct pqact_match_stats *st) {
  struct pqact_match *m =
      pqact_match_build(table.pats, table.always, table.n, opts);
  assert_non_null(m);
  pqact_match_stats(m, st);
  size_t matches = 0, offered = 0;
  compare(&table, m, &ids, &matches, &offered);
  printf("# opts %u: %zu prefix, %zu Hyperscan (%zu refused, %zu failed the "
         "self-test, %zu prefilter, %zu samples), %zu always; %zu matches, "
         "%zu offered\n",
         opts, st->prefix, st->hs, st->hs_build.refused, st->hs_build.disagree,
         st->hs_build.prefilter, st->hs_build.samples, st->always, matches,
         offered);
  assert_true(matches > 0);
  pqact_match_free(m);
}

static void test_prefix_index_alone(void **state) {
  (void)state;
  struct pqact_match_stats st;
  run(PQACT_MATCH_NO_HS, &st);
  assert_int_equal(st.hs, 0);
}

static void test_one_pass(void **state) {
  (void)state;
  if (!pqact_hs_available())
    tu_skip("Hyperscan cannot run here (no SSSE3, or pqact built without it)");
  struct pqact_match_stats st;
  run(0, &st);
  /* most of the table is in the database: the fuzzed patterns are */
  assert_true(st.hs > table.n / 3);
  assert_true(st.hs_build.samples > st.hs);
}

static void test_broken_database(void **state) {
  (void)state;
  if (!pqact_hs_available())
    tu_skip("Hyperscan cannot run here (no SSSE3, or pqact built without it)");
  struct pqact_match_stats st;
  run(PQACT_MATCH_HS_BREAK, &st);
  /* every broken entry with a witness was caught; and still no miss */
  assert_true(st.hs_build.disagree > table.n / 3);
}

static void expect_hs(const char *ere, const char *want) {
  char out[4096];
  int rc = pqact_ere_to_hs(ere, out, sizeof out);
  if (want == NULL) {
    if (rc == 0)
      fail_msg("\"%s\" translated to \"%s\", should be refused", ere, out);
    return;
  }
  if (rc != 0)
    fail_msg("\"%s\" refused", ere);
  if (strcmp(out, want) != 0)
    fail_msg("\"%s\": \"%s\", not \"%s\"", ere, out, want);
}

static void test_translation(void **state) {
  (void)state;
  expect_hs("^SA", "(?:^SA)");
  expect_hs("a.b$", "(?:a.b$)");
  expect_hs("\\.", "(?:\\x2e)");
  expect_hs("[\\.]", "(?:[\\x2e\\x5c])"); /* '\' is a member in POSIX */
  expect_hs("[]a]", "(?:[\\x5d\\x61])");
  expect_hs("[^ ]", "(?:[\\x01-\\x1f\\x21-\\xff])");
  expect_hs("[a-]", "(?:[\\x2d\\x61])");
  expect_hs("[A-C0-1-]", "(?:[\\x2d\\x30-\\x31\\x41-\\x43])");
  expect_hs("[[:digit:]]", "(?:[\\x30-\\x39])");
  expect_hs("ba{,2}", "(?:b(?:a){0,2})");
  expect_hs("(a|)b+", "(?:(?:a|)(?:b){1,})");
  expect_hs("]}", "(?:\\x5d\\x7d)");
  /* refused: GNU's operators, back-references, what PCRE reads otherwise */
  static const char *const refused[] = {
      "\\1",
      "(a)\\1",
      "\\w",
      "\\<a",
      "a\\'",
      "\\`a",
      "\\n",
      "a++",
      "a*?",
      "a+*",
      "^*",
      "*a",
      "a|*b",
      "a{",
      "a{x}",
      "a{2,1}",
      "[[=a=]]",
      "[[.a.]]",
      "[a-c-e]",
      "[[:foo:]]",
      "(a",
      "a)",
      "\xc3\xa9",
      "[\xc3]",
      "a{99999}",
      /* what matches the empty string: Hyperscan will not have it */
      "a*",
      "^$",
      "",
      "(a|)",
      "^",
      "x?|y",
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    expect_hs(refused[i], NULL);
}

/* ---- PCRE2's sub-matches of the deterministic patterns ---- */

static void expect_det(const char *ere, const char *want) {
  char out[4096];
  int rc = pqact_ere_to_pcre(ere, out, sizeof out);
  if (want == NULL) {
    if (rc == 0)
      fail_msg("\"%s\" taken as deterministic (\"%s\")", ere, out);
    return;
  }
  if (rc != 0)
    fail_msg("\"%s\" not taken as deterministic", ere);
  if (*want != '\0' && strcmp(out, want) != 0)
    fail_msg("\"%s\": \"%s\", not \"%s\"", ere, out, want);
}

static void test_determinism(void **state) {
  (void)state;
  expect_det("^(.*)", "(?:^((?:.){0,}))");
  expect_det("^([0-9]+) ", "(?:^((?:[\\x30-\\x39]){1,})\\x20)");
  expect_det("^(SAUS..) (K...) (..)(..)(..)", "");
  expect_det("^P([0-9]+) (K...) ([0-3][0-9])([0-2][0-9])", "");
  expect_det("^([^ ]*) ([^ ]*) ([^ ]*)", "");
  expect_det("^SAUS([0-9]{2}) (K...) ", "");
  expect_det("^(SA|FX)(..)", "");
  expect_det("^([A-Z]{4})([0-9]{2}) (K[A-Z]{3}) ([0-9]{6})$", "");
  expect_det("(a|b)c*$", "");
  expect_det("^a?b?c", "");
  expect_det("^(([a-z]+)/([0-9]+))",
             "(?:^(((?:[\\x61-\\x7a]){1,})\\x2f((?:[\\x30-\\x39]){1,})))");
  expect_det("^_ELSE_$", "");
  static const char *const refused[] = {
      "^([0-9]+)([0-9]+)", /* where the first ends is a choice */
      "(a|ab)",            /* branches sharing a first byte */
      "([a-z]+)b",         /* b is in the set */
      "^(.*) ",            /* . takes the space too */
      "^a?a",              /* a may be the optional one or the next */
      "^(ab)*",            /* a quantified group */
      "^(a|b)+",
      "(a|)b",         /* a branch matching the empty string */
      "a|^b",          /* "^" not first */
      "^a$|b",         /* "$" under a top-level alternation */
      "(^a)",          /* "^" inside a group */
      "a$b",           /* "$" not last */
      "[0-9]*x?[0-9]", /* FOLLOW through a nullable item */
      "\\1",           /* what the reader refuses */
      "(a)\\1",
      "\\w",
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    expect_det(refused[i], NULL);
}

static void test_pcre_submatches(void **state) {
  (void)state;
  size_t taken = 0, project_taken = 0, compared = 0, matched = 0;
  for (size_t i = 0; i < table.n; i++) {
    char out[8192];
    if (pqact_ere_to_pcre(table.pats[i], out, sizeof out) != 0)
      continue;
    struct pqact_submatch *raw = pqact_submatch_build(
        table.pats[i], &table.re[i], PQACT_SUBMATCH_NO_SELFTEST);
    if (raw == NULL)
      fail_msg("\"%s\" (PCRE2 \"%s\") not compiled", table.pats[i], out);
    taken++;
    project_taken += from_project(i);
    for (size_t k = 0; k < ids.n; k++) {
      if (!pqact_submatch_agrees(raw, &table.re[i], ids.v[k]))
        fail_msg("\"%s\" (PCRE2 \"%s\") on \"%s\": not regexec()'s",
                 table.pats[i], out, ids.v[k]);
      compared++;
      matched += brute[k * MAX_PATS + i];
    }
    pqact_submatch_free(raw);
    /* and the self-test, which found no difference, keeps it */
    struct pqact_submatch *tested =
        pqact_submatch_new(table.pats[i], &table.re[i]);
    if (tested == NULL)
      fail_msg("\"%s\" dropped by the self-test", table.pats[i]);
    pqact_submatch_free(tested);
  }
  printf("# PCRE2: %zu of %zu patterns deterministic; %zu comparisons, %zu "
         "matches\n",
         taken, table.n, compared, matched);
  assert_true(project_taken > 10);
  assert_true(taken > table.n / 10);
  assert_true(matched > 100);
}

/* Patterns the analysis refuses, on an identifier where PCRE2's first
 * match is not regexec()'s: the comparison above sees such a difference,
 * and the self-test drops such a pattern. */
static void test_ambiguous(void **state) {
  (void)state;
  static const struct {
    const char *ere, *id;
  } cases[] = {
      {"(a|ab)", "ab"},               /* PCRE2 stops at the first branch */
      {"^a?(ab|c|)", "ab"},           /* greedy a, then the empty branch */
      {"^([0-9]|[0-9]{2}) ?", "12 "}, /* a day of one digit or two */
      {"^(x|xy)z?", "xy"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[4096];
    regex_t re;
    assert_int_equal(regcomp(&re, cases[i].ere, REG_EXTENDED), 0);
    assert_int_not_equal(pqact_ere_to_pcre(cases[i].ere, out, sizeof out), 0);
    assert_null(pqact_submatch_new(cases[i].ere, &re));
    struct pqact_submatch *raw = pqact_submatch_build(
        cases[i].ere, &re,
        PQACT_SUBMATCH_NO_ANALYSIS | PQACT_SUBMATCH_NO_SELFTEST);
    assert_non_null(raw);
    if (pqact_submatch_agrees(raw, &re, cases[i].id))
      fail_msg("\"%s\" on \"%s\": PCRE2 and regexec() agree", cases[i].ere,
               cases[i].id);
    pqact_submatch_free(raw);
    /* the self-test, without the analysis, catches it */
    struct pqact_submatch *tested =
        pqact_submatch_build(cases[i].ere, &re, PQACT_SUBMATCH_NO_ANALYSIS);
    if (tested != NULL)
      fail_msg("\"%s\": the self-test found no difference", cases[i].ere);
    regfree(&re);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_translation),
      cmocka_unit_test(test_inputs),
      cmocka_unit_test(test_prefix_index_alone),
      cmocka_unit_test(test_one_pass),
      cmocka_unit_test(test_broken_database),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_pcre_submatches),
      cmocka_unit_test(test_ambiguous),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, setup, teardown));
}
