/*
 * match.c - the one-pass matcher of a pqact table's patterns (match.h):
 * reading what an anchored ERE requires of an identifier's start (its
 * literal prefix, or its leading bracket expression's set), sharing the
 * entries out between the prefix index, the Hyperscan database (hsdb.h)
 * and the list offered for every identifier, and offering, for an
 * identifier, the entries whose requirement it meets, those the database
 * reports and those that have none, merged in file order.
 *
 * The reader walks the ERE from its "^" and stops at the first thing it
 * does not fully understand; what it collected before that is what it
 * reports.  A literal counts only if no quantifier that allows zero of it
 * ("*", "?", "{", also after a "+": "a+*") follows; one followed by "+"
 * counts once, and ends the prefix.  A group is entered only if it has no
 * alternation and no such quantifier after it.  Escapes count only for the
 * special characters
 * ("\." is a literal "."); GNU's "\w", "\<", back-references and the like
 * stop the walk.
 */
#include "pqutils/pqact/match.h"

#include <stdlib.h>
#include <string.h>

static bool ere_special(char c) {
  return c != '\0' && strchr(".[]()*+?{}|^$\\", c) != NULL;
}

/* Whether the quantifiers at q may make the atom before them absent: any
 * but "+" may ("{" always counts, whatever its bounds).  A run of them is
 * read as a whole, as glibc reads "a+*" as "(a+)*": zero of it is a match
 * too. */
static bool zero_quant(const char *q) {
  while (*q == '+')
    q++;
  return *q == '*' || *q == '?' || *q == '{';
}

static void set_add(uint8_t set[32], unsigned c) {
  set[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static bool set_has(const uint8_t set[32], unsigned c) {
  return (set[c >> 3] >> (c & 7)) & 1u;
}

/*
 * The bracket expression at p ('['): the pointer after its ']', and if set
 * is not NULL a superset of the bytes it matches.  What this reader is
 * not sure of goes into the superset of a plain bracket ('-' near a
 * range) and stays out of what a negated one ("[^...]") leaves out, so
 * that either way the set holds every byte it matches.  NULL when it
 * holds a character class, an equivalence class or a collating element
 * ([:alpha:], [=a=], [.a.]: not read here), or does not end.
 */
static const char *bracket(const char *p, uint8_t *set) {
  uint8_t sure[32] = {0}, maybe[32] = {0};
  const char *q = p + 1;
  bool neg = *q == '^';
  if (neg)
    q++;
  if (*q == ']') { /* first: a literal ']' */
    set_add(sure, ']');
    set_add(maybe, ']');
    q++;
  }
  while (*q != '\0' && *q != ']') {
    if (q[0] == '[' && (q[1] == ':' || q[1] == '=' || q[1] == '.'))
      return NULL;
    if (q[1] == '-' && q[2] != '\0' && q[2] != ']') {
      if (q[2] == '[' && (q[3] == ':' || q[3] == '=' || q[3] == '.'))
        return NULL;
      unsigned lo = (unsigned char)q[0], hi = (unsigned char)q[2];
      for (unsigned c = lo; c <= hi; c++) {
        set_add(sure, c);
        set_add(maybe, c);
      }
      if (q[3] == '-') /* "a-c-e": however that '-' is read */
        set_add(maybe, '-');
      q += 3;
      continue;
    }
    set_add(sure, (unsigned char)*q);
    set_add(maybe, (unsigned char)*q);
    q++;
  }
  if (*q != ']')
    return NULL;
  if (set != NULL) {
    for (unsigned i = 0; i < 32; i++)
      set[i] = neg ? (uint8_t)~sure[i] : maybe[i];
    set[0] &= (uint8_t)~1u; /* no identifier holds a NUL */
  }
  return q + 1;
}

/*
 * From p just after a '(' (or at the pattern's start, with close false):
 * the pointer to its matching ')' (or the pattern's end), and in *alt
 * whether an alternation '|' lies at its own level.  NULL if the group
 * does not close, or holds what bracket() cannot read.
 */
static const char *group_end(const char *p, bool close, bool *alt) {
  unsigned depth = 0;
  *alt = false;
  while (*p != '\0') {
    switch (*p) {
    case '\\':
      if (p[1] == '\0')
        return NULL;
      p += 2;
      continue;
    case '[':
      p = bracket(p, NULL);
      if (p == NULL)
        return NULL;
      continue;
    case '(':
      depth++;
      break;
    case ')':
      if (depth == 0)
        return close ? p : NULL; /* a stray ')' at the top: not read */
      depth--;
      break;
    case '|':
      if (depth == 0)
        *alt = true;
      break;
    default:
      break;
    }
    p++;
  }
  return close ? NULL : p;
}

/*
 * The first bytes of an alternation "(b1|b2|...)" whose inside is
 * [p, end): the union of each branch's first byte (a literal, an escaped
 * special character) or bracket expression, none of them optional.  false
 * (set unspecified) if a branch is empty or begins with anything else.
 */
static bool branch_firsts(const char *p, const char *end, uint8_t set[32]) {
  memset(set, 0, 32);
  for (;;) {
    const char *next;
    if (*p == '[') {
      uint8_t b[32];
      next = bracket(p, b);
      if (next == NULL)
        return false;
      for (unsigned i = 0; i < 32; i++)
        set[i] |= b[i];
    } else if (*p == '\\' && ere_special(p[1])) {
      set_add(set, (unsigned char)p[1]);
      next = p + 2;
    } else if (*p != '\0' && !ere_special(*p)) {
      set_add(set, (unsigned char)*p);
      next = p + 1;
    } else {
      return false; /* empty, a group, '.', an anchor... */
    }
    if (zero_quant(next))
      return false;
    /* on to the next branch: the next '|' at this group's level */
    unsigned depth = 0;
    for (p = next; p < end; p++) {
      if (*p == '\\' && p + 1 < end) {
        p++;
      } else if (*p == '[') {
        p = bracket(p, NULL);
        if (p == NULL || p > end)
          return false;
        p--;
      } else if (*p == '(') {
        depth++;
      } else if (*p == ')') {
        depth--;
      } else if (*p == '|' && depth == 0) {
        break;
      }
    }
    if (p >= end)
      return true;
    p++; /* past the '|' */
  }
}

void pqact_ere_key(const char *ere, struct pqact_key *key) {
  memset(key, 0, sizeof *key);
  if (ere[0] != '^')
    return;
  bool alt;
  if (group_end(ere + 1, false, &alt) == NULL || alt)
    return;
  /* The groups entered: for each, whether the prefix ends at its ')'. */
  bool stop_at[PQACT_PREFIX_MAX + 1];
  unsigned depth = 0;
  bool have_set = false;
  const char *p = ere + 1;
  for (;;) {
    char c = *p, lit;
    const char *next;
    if (c == '(') {
      const char *e = group_end(p + 1, true, &alt);
      if (e != NULL && alt && key->plen == 0 && !zero_quant(e + 1))
        have_set = branch_firsts(p + 1, e, key->first);
      if (e == NULL || alt || zero_quant(e + 1) || depth == PQACT_PREFIX_MAX)
        break;
      stop_at[depth++] = e[1] == '+';
      p++;
      continue;
    }
    if (c == ')') {
      if (depth == 0 || stop_at[--depth])
        break;
      p++;
      continue;
    }
    if (c == '[') {
      uint8_t set[32];
      next = bracket(p, set);
      if (key->plen == 0 && next != NULL && !zero_quant(next)) {
        memcpy(key->first, set, sizeof set);
        have_set = true;
      }
      break;
    }
    if (c == '\\') {
      if (!ere_special(p[1]))
        break;
      lit = p[1];
      next = p + 2;
    } else if (c == '\0' || ere_special(c)) {
      break;
    } else {
      lit = c;
      next = p + 1;
    }
    if (zero_quant(next) || key->plen == PQACT_PREFIX_MAX)
      break;
    key->prefix[key->plen++] = lit;
    if (*next == '+')
      break;
    p = next;
  }
  key->prefix[key->plen] = '\0';
  size_t h = key->plen < 8 ? key->plen : 8;
  memcpy(&key->head, key->prefix, h);
  memset(&key->mask, 0xff, h);
  if (key->plen > 0) {
    memset(key->first, 0, sizeof key->first);
    set_add(key->first, (unsigned char)key->prefix[0]);
    key->indexed = true;
  } else if (have_set) {
    key->indexed = false;
    for (unsigned i = 0; i < 32; i++)
      if (key->first[i] != 0xff && (i != 0 || key->first[0] != 0xfe))
        key->indexed = true; /* a set that leaves something out */
  }
}

struct pqact_match {
  size_t n;
  struct pqact_key *keys;
  struct pqact_hs *hs; /* NULL: no entry in a database */
  uint32_t *hits;      /* its reports for the walk under way (room for n) */
  struct pqact_match_stats stats;
  uint32_t *always; /* entries offered for every identifier */
  size_t nalways;
  uint32_t start[257]; /* entries by first byte: items[start[c]..start[c+1]) */
  uint32_t *items;
};

void pqact_match_free(struct pqact_match *m) {
  if (m == NULL)
    return;
  free(m->keys);
  pqact_hs_free(m->hs);
  free(m->hits);
  free(m->always);
  free(m->items);
  free(m);
}

struct pqact_match *pqact_match_new(const char *const *pats, const bool *always,
                                    size_t n) {
  return pqact_match_build(pats, always, n, 0);
}

void pqact_match_stats(const struct pqact_match *m,
                       struct pqact_match_stats *s) {
  *s = m->stats;
}

/* Offer to the database the entries the prefix index serves poorly: no
 * prefix of PQACT_PREFIX_MIN bytes (and not ^_ELSE_$).  On return take[i]
 * says which it took. */
static int build_hs(struct pqact_match *m, const char *const *pats,
                    const bool *always, unsigned opts, bool *take) {
  for (size_t i = 0; i < m->n; i++)
    take[i] = !always[i] && m->keys[i].plen < PQACT_PREFIX_MIN;
  if (opts & PQACT_MATCH_NO_HS) {
    memset(take, 0, m->n * sizeof *take);
    return 0;
  }
  m->hs = pqact_hs_new(pats, take, m->n,
                       (opts & PQACT_MATCH_HS_BREAK) ? PQACT_HS_BREAK : 0,
                       &m->stats.hs_build);
  if (m->hs == NULL)
    return 0;
  m->hits = calloc(m->n, sizeof *m->hits);
  return m->hits == NULL ? -1 : 0;
}

struct pqact_match *pqact_match_build(const char *const *pats,
                                      const bool *always, size_t n,
                                      unsigned opts) {
  struct pqact_match *m = calloc(1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->n = n;
  m->stats.entries = n;
  m->keys = calloc(n ? n : 1, sizeof *m->keys);
  m->always = calloc(n ? n : 1, sizeof *m->always);
  bool *take = calloc(n ? n : 1, sizeof *take);
  uint32_t count[256] = {0};
  size_t total = 0;
  if (m->keys == NULL || m->always == NULL || take == NULL) {
    free(take);
    pqact_match_free(m);
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    pqact_ere_key(pats[i], &m->keys[i]);
  if (build_hs(m, pats, always, opts, take) != 0) {
    free(take);
    pqact_match_free(m);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (take[i]) {
      m->keys[i].indexed = false;
      m->stats.hs++;
      continue;
    }
    if (always[i])
      m->keys[i].indexed = false;
    if (!m->keys[i].indexed) {
      m->always[m->nalways++] = (uint32_t)i;
      m->stats.always++;
      continue;
    }
    m->stats.prefix++;
    for (unsigned c = 0; c < 256; c++)
      if (set_has(m->keys[i].first, c)) {
        count[c]++;
        total++;
      }
  }
  m->items = calloc(total ? total : 1, sizeof *m->items);
  if (m->items == NULL) {
    free(take);
    pqact_match_free(m);
    return NULL;
  }
  uint32_t fill[256];
  m->start[0] = 0;
  for (unsigned c = 0; c < 256; c++) {
    m->start[c + 1] = m->start[c] + count[c];
    fill[c] = m->start[c];
  }
  for (size_t i = 0; i < n; i++) {
    if (take[i] || !m->keys[i].indexed)
      continue;
    for (unsigned c = 0; c < 256; c++)
      if (set_has(m->keys[i].first, c))
        m->items[fill[c]++] = (uint32_t)i;
  }
  free(take);
  return m;
}

void pqact_match_start(const struct pqact_match *m, const char *ident,
                       struct pqact_offer *o) {
  unsigned c = (unsigned char)ident[0];
  o->m = m;
  o->ident = ident;
  o->head = 0;
  memcpy(&o->head, ident, strnlen(ident, 8));
  o->a = m->always;
  o->a_end = m->always + m->nalways;
  o->b = m->items + m->start[c];
  o->b_end = m->items + m->start[c + 1];
  o->h = o->h_end = m->hits;
  if (m->hs != NULL)
    o->h_end = m->hits + pqact_hs_scan(m->hs, ident, m->hits);
}

bool pqact_match_next(struct pqact_offer *o, size_t *entry) {
  /* Merge the three lists, each in file order (an entry is in one only);
   * an indexed entry only if the identifier begins with its prefix. */
  while (o->a < o->a_end || o->b < o->b_end || o->h < o->h_end) {
    if (o->h < o->h_end && (o->a == o->a_end || *o->h < *o->a) &&
        (o->b == o->b_end || *o->h < *o->b)) {
      *entry = *o->h++;
      return true;
    }
    if (o->b == o->b_end || (o->a < o->a_end && *o->a < *o->b)) {
      *entry = *o->a++;
      return true;
    }
    uint32_t i = *o->b++;
    const struct pqact_key *key = &o->m->keys[i];
    /* the first 8 bytes at once (past the identifier's end they are 0,
     * which no prefix holds), then the rest */
    if ((o->head & key->mask) == key->head &&
        (key->plen <= 8 ||
         strncmp(o->ident + 8, key->prefix + 8, key->plen - 8) == 0)) {
      *entry = i;
      return true;
    }
  }
  return false;
}
