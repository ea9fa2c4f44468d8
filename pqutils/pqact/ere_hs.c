/*
 * ere_hs.c - reading a pqact pattern into a tree, writing the tree in
 * Hyperscan's syntax, deciding whether it is deterministic and writing it
 * then in PCRE2's (submatch.h), and generating strings from it (ere_hs.h
 * says which constructs are taken and why they mean the same).
 *
 * The grammar read is glibc's for REG_EXTENDED, narrowed:
 *   alt   := cat ("|" cat)*
 *   cat   := piece*
 *   piece := atom [quantifier]
 *   atom  := "(" alt ")" | "[" bracket "]" | "." | "^" | "$" | literal
 * A tree has at most as many nodes as the pattern has bytes and groups
 * (PQ_PATTERN_MAX bounds both).
 */
#include "pqutils/pqact/ere_hs.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_NODES 1024
#define MAX_DEPTH 64
#define DUP_MAX 32767 /* glibc's RE_DUP_MAX */
#define UNBOUNDED (-1)

enum kind { K_SET, K_ANY, K_BOL, K_EOL, K_CAT, K_ALT, K_REP };

struct node {
  enum kind kind;
  uint8_t set[32]; /* K_SET: the bytes matched */
  int lit;         /* K_SET of one byte: it (else -1) */
  int child;       /* K_CAT, K_ALT: the first child; K_REP: the atom */
  int next;        /* the next sibling, -1 */
  int min, max;    /* K_REP (max UNBOUNDED: none) */
  int group;       /* K_ALT read from "(...)": its number (else 0) */
};

struct tree {
  struct node n[MAX_NODES];
  int count;
  const char *p; /* the reader's place */
  unsigned depth;
  int groups; /* the groups read so far (numbered by their "(") */
};

static int new_node(struct tree *t, enum kind k) {
  if (t->count == MAX_NODES)
    return -1;
  struct node *n = &t->n[t->count];
  memset(n, 0, sizeof *n);
  n->kind = k;
  n->lit = -1;
  n->child = n->next = -1;
  return t->count++;
}

static void set_add(uint8_t set[32], unsigned c) {
  set[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static bool set_has(const uint8_t set[32], unsigned c) {
  return (set[c >> 3] >> (c & 7)) & 1u;
}

/* The C locale's classes, by name. */
static int class_of(const char *name, size_t len, uint8_t set[32]) {
  static const struct {
    const char *name;
    int (*is)(int);
  } classes[] = {
      {"alpha", isalpha}, {"upper", isupper},   {"lower", islower},
      {"digit", isdigit}, {"xdigit", isxdigit}, {"space", isspace},
      {"print", isprint}, {"punct", ispunct},   {"graph", isgraph},
      {"cntrl", iscntrl}, {"blank", isblank},   {"alnum", isalnum},
  };
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
    if (strlen(classes[i].name) == len &&
        memcmp(classes[i].name, name, len) == 0) {
      for (unsigned c = 1; c < 128; c++)
        if (classes[i].is((int)c))
          set_add(set, c);
      return 0;
    }
  return -1;
}

/* One member byte of a bracket at t->p (not '[' of a class): -1 if past
 * 127 or the start of "[." or "[=". */
static int member(const char *p) {
  unsigned char c = (unsigned char)p[0];
  if (c == 0 || c > 127)
    return -1;
  if (c == '[' && (p[1] == '.' || p[1] == '=' || p[1] == ':'))
    return -1;
  return c;
}

/* A bracket expression at t->p ('['). */
static int bracket(struct tree *t) {
  uint8_t set[32] = {0};
  const char *q = t->p + 1;
  bool neg = *q == '^';
  if (neg)
    q++;
  bool first = true;
  while (*q != ']' || first) {
    if (*q == '\0')
      return -1;
    if (q[0] == '[' && q[1] == ':') {
      const char *end = strstr(q + 2, ":]");
      if (end == NULL || class_of(q + 2, (size_t)(end - (q + 2)), set) != 0)
        return -1;
      q = end + 2;
      first = false;
      continue;
    }
    int lo = member(q);
    if (lo < 0)
      return -1;
    if (q[1] == '-' && q[2] != ']' && q[2] != '\0') {
      int hi = member(q + 2);
      if (hi < 0 || hi < lo || (q[3] == '-' && q[4] != ']'))
        return -1; /* "a-c-e", "[.x.]" as an end: refused */
      for (int c = lo; c <= hi; c++)
        set_add(set, (unsigned)c);
      q += 3;
    } else {
      if (lo == '-' && !first && q[1] != ']')
        return -1; /* a '-' in the middle: refused */
      set_add(set, (unsigned)lo);
      q++;
    }
    first = false;
  }
  int id = new_node(t, K_SET);
  if (id < 0)
    return -1;
  struct node *n = &t->n[id];
  for (unsigned i = 0; i < 32; i++)
    n->set[i] = neg ? (uint8_t)~set[i] : set[i];
  n->set[0] &= (uint8_t)~1u; /* no identifier holds a NUL */
  t->p = q + 1;
  return id;
}

static int literal(struct tree *t, unsigned char c) {
  int id = new_node(t, K_SET);
  if (id < 0)
    return -1;
  set_add(t->n[id].set, c);
  t->n[id].lit = c;
  return id;
}

static int alt(struct tree *t);

static int atom(struct tree *t) {
  unsigned char c = (unsigned char)*t->p;
  switch (c) {
  case '(': {
    t->p++;
    int group = ++t->groups;
    int id = alt(t);
    if (id < 0 || *t->p != ')')
      return -1;
    t->p++;
    t->n[id].group = group;
    return id;
  }
  case '[':
    return bracket(t);
  case '.':
    t->p++;
    return new_node(t, K_ANY);
  case '^':
    t->p++;
    return new_node(t, K_BOL);
  case '$':
    t->p++;
    return new_node(t, K_EOL);
  case '\\': {
    unsigned char e = (unsigned char)t->p[1];
    if (e == 0 || e > 127 || isalnum(e) || strchr("<>`'", e) != NULL)
      return -1;
    t->p += 2;
    return literal(t, e);
  }
  default:
    if (c == 0 || c > 127 || strchr(")*+?{|", c) != NULL)
      return -1;
    t->p++;
    return literal(t, c);
  }
}

/* A bound at t->p ('{'): "{m}", "{m,}", "{m,n}", "{,n}". */
static int bound(struct tree *t, int *min, int *max) {
  const char *q = t->p + 1;
  long m = 0, n;
  bool have_m = false;
  while (isdigit((unsigned char)*q) && m <= DUP_MAX) {
    m = m * 10 + (*q++ - '0');
    have_m = true;
  }
  if (*q == '}') {
    if (!have_m)
      return -1;
    n = m;
  } else if (*q == ',') {
    q++;
    if (*q == '}') {
      if (!have_m)
        return -1;
      n = UNBOUNDED;
    } else {
      bool have_n = false;
      n = 0;
      while (isdigit((unsigned char)*q) && n <= DUP_MAX) {
        n = n * 10 + (*q++ - '0');
        have_n = true;
      }
      if (!have_n || *q != '}' || n < m)
        return -1;
    }
  } else {
    return -1;
  }
  if (m > DUP_MAX || n > DUP_MAX)
    return -1;
  *min = (int)m;
  *max = (int)n;
  t->p = q + 1;
  return 0;
}

static int piece(struct tree *t) {
  int a = atom(t);
  if (a < 0)
    return -1;
  char q = *t->p;
  if (q != '*' && q != '+' && q != '?' && q != '{')
    return a;
  enum kind k = t->n[a].kind;
  if (k == K_BOL || k == K_EOL)
    return -1;
  int min, max;
  if (q == '{') {
    if (bound(t, &min, &max) != 0)
      return -1;
  } else {
    min = q == '+' ? 1 : 0;
    max = q == '?' ? 1 : UNBOUNDED;
    t->p++;
  }
  q = *t->p;
  if (q == '*' || q == '+' || q == '?' || q == '{')
    return -1; /* a second quantifier */
  int id = new_node(t, K_REP);
  if (id < 0)
    return -1;
  t->n[id].child = a;
  t->n[id].min = min;
  t->n[id].max = max;
  return id;
}

static int cat(struct tree *t) {
  int id = new_node(t, K_CAT), last = -1;
  if (id < 0)
    return -1;
  while (*t->p != '\0' && *t->p != '|' && *t->p != ')') {
    int c = piece(t);
    if (c < 0)
      return -1;
    if (last < 0)
      t->n[id].child = c;
    else
      t->n[last].next = c;
    last = c;
  }
  return id;
}

static int alt(struct tree *t) {
  if (++t->depth > MAX_DEPTH)
    return -1;
  int id = new_node(t, K_ALT);
  if (id < 0)
    return -1;
  int last = -1;
  for (;;) {
    int c = cat(t);
    if (c < 0)
      return -1;
    if (last < 0)
      t->n[id].child = c;
    else
      t->n[last].next = c;
    last = c;
    if (*t->p != '|')
      break;
    t->p++;
  }
  t->depth--;
  return id;
}

/* Read ere into t: the root, or -1 if refused. */
static int parse(struct tree *t, const char *ere) {
  t->count = 0;
  t->depth = 0;
  t->groups = 0;
  t->p = ere;
  int root = alt(t);
  if (root < 0 || *t->p != '\0')
    return -1;
  return root;
}

/* ---- writing ---- */

struct out {
  char *s;
  size_t len, cap;
  bool full;
  bool capture; /* groups written "(...)" (PCRE2), else "(?:...)" */
};

static void put_str(struct out *o, const char *str) {
  size_t n = strlen(str);
  if (o->full || n >= o->cap - o->len) {
    o->full = true;
    return;
  }
  memcpy(o->s + o->len, str, n + 1);
  o->len += n;
}

static void put_hex(struct out *o, unsigned c) {
  char b[8];
  snprintf(b, sizeof b, "\\x%02x", c & 0xffu);
  put_str(o, b);
}

static void put_byte(struct out *o, unsigned c) {
  if (isalnum((int)c)) {
    char b[2] = {(char)c, '\0'};
    put_str(o, b);
  } else {
    put_hex(o, c);
  }
}

static void put_bound(struct out *o, int min, int max) {
  char b[32];
  if (max == UNBOUNDED)
    snprintf(b, sizeof b, "{%d,}", min);
  else
    snprintf(b, sizeof b, "{%d,%d}", min, max);
  put_str(o, b);
}

static void write_node(const struct tree *t, int id, struct out *o) {
  const struct node *n = &t->n[id];
  switch (n->kind) {
  case K_SET:
    if (n->lit >= 0) {
      put_byte(o, (unsigned)n->lit);
      break;
    }
    put_str(o, "[");
    for (unsigned c = 1; c < 256; c++) {
      if (!set_has(n->set, c))
        continue;
      unsigned e = c;
      while (e + 1 < 256 && set_has(n->set, e + 1))
        e++;
      put_hex(o, c);
      if (e != c) {
        put_str(o, "-");
        put_hex(o, e);
      }
      c = e;
    }
    put_str(o, "]");
    break;
  case K_ANY:
    put_str(o, ".");
    break;
  case K_BOL:
    put_str(o, "^");
    break;
  case K_EOL:
    put_str(o, "$");
    break;
  case K_CAT:
    for (int c = n->child; c >= 0; c = t->n[c].next)
      write_node(t, c, o);
    break;
  case K_ALT:
    put_str(o, o->capture && n->group > 0 ? "(" : "(?:");
    for (int c = n->child; c >= 0; c = t->n[c].next) {
      if (c != n->child)
        put_str(o, "|");
      write_node(t, c, o);
    }
    put_str(o, ")");
    break;
  case K_REP:
    put_str(o, "(?:");
    write_node(t, n->child, o);
    put_str(o, ")");
    put_bound(o, n->min, n->max);
    break;
  }
}

/* Whether the node matches the empty string (anchors do). */
static bool nullable(const struct tree *t, int id) {
  const struct node *n = &t->n[id];
  switch (n->kind) {
  case K_SET:
  case K_ANY:
    return false;
  case K_BOL:
  case K_EOL:
    return true;
  case K_CAT:
    for (int c = n->child; c >= 0; c = t->n[c].next)
      if (!nullable(t, c))
        return false;
    return true;
  case K_ALT:
    for (int c = n->child; c >= 0; c = t->n[c].next)
      if (nullable(t, c))
        return true;
    return false;
  case K_REP:
    return n->min == 0 || nullable(t, n->child);
  }
  return true;
}

int pqact_ere_to_hs(const char *ere, char *out, size_t cap) {
  static _Thread_local struct tree t;
  if (cap == 0)
    return -1;
  int root = parse(&t, ere);
  if (root < 0 || nullable(&t, root))
    return -1; /* Hyperscan refuses what matches the empty string */
  /* an empty set matches nothing, which Hyperscan cannot say */
  for (int i = 0; i < t.count; i++) {
    bool any = false;
    for (unsigned k = 0; k < 32 && t.n[i].kind == K_SET; k++)
      any = any || t.n[i].set[k] != 0;
    if (t.n[i].kind == K_SET && !any)
      return -1;
  }
  struct out o = {.s = out, .cap = cap};
  out[0] = '\0';
  write_node(&t, root, &o);
  return o.full ? -1 : 0;
}

/* ---- the determinism of a pattern, for PCRE2 (ere_hs.h) ---- */

static void set_or(uint8_t to[32], const uint8_t from[32]) {
  for (unsigned k = 0; k < 32; k++)
    to[k] |= from[k];
}

static bool set_meets(const uint8_t a[32], const uint8_t b[32]) {
  for (unsigned k = 0; k < 32; k++)
    if (a[k] & b[k])
      return true;
  return false;
}

/* The bytes a node's match can begin with (added to first). */
static void first_of(const struct tree *t, int id, uint8_t first[32]) {
  const struct node *n = &t->n[id];
  switch (n->kind) {
  case K_SET:
    set_or(first, n->set);
    break;
  case K_ANY:
    for (unsigned c = 1; c < 256; c++)
      set_add(first, c);
    break;
  case K_BOL:
  case K_EOL:
    break;
  case K_CAT:
    for (int c = n->child; c >= 0; c = t->n[c].next) {
      first_of(t, c, first);
      if (!nullable(t, c))
        break;
    }
    break;
  case K_ALT:
    for (int c = n->child; c >= 0; c = t->n[c].next)
      first_of(t, c, first);
    break;
  case K_REP:
    if (n->max != 0)
      first_of(t, n->child, first);
    break;
  }
}

/* What may follow sibling c and the siblings after it, given what follows
 * their parent (follow): the FIRST of the siblings after c, through the
 * nullable ones, and follow if all of them are. */
static void follow_of(const struct tree *t, int c, const uint8_t follow[32],
                      uint8_t out[32]) {
  memset(out, 0, 32);
  for (int s = t->n[c].next; s >= 0; s = t->n[s].next) {
    first_of(t, s, out);
    if (!nullable(t, s))
      return;
  }
  set_or(out, follow);
}

/* Is the node deterministic, followed by what follow holds (ere_hs.h)? */
static bool det(const struct tree *t, int id, const uint8_t follow[32]) {
  const struct node *n = &t->n[id];
  switch (n->kind) {
  case K_SET:
  case K_ANY:
  case K_BOL: /* placed by anchors_placed() */
  case K_EOL:
    return true;
  case K_CAT:
    for (int c = n->child; c >= 0; c = t->n[c].next) {
      uint8_t f[32];
      follow_of(t, c, follow, f);
      if (!det(t, c, f))
        return false;
    }
    return true;
  case K_ALT:
    if (t->n[n->child].next >= 0) { /* two branches or more */
      uint8_t seen[32] = {0};
      for (int c = n->child; c >= 0; c = t->n[c].next) {
        uint8_t f[32] = {0};
        if (nullable(t, c))
          return false;
        first_of(t, c, f);
        if (set_meets(f, seen))
          return false;
        set_or(seen, f);
      }
    }
    for (int c = n->child; c >= 0; c = t->n[c].next)
      if (!det(t, c, follow))
        return false;
    return true;
  case K_REP: {
    const struct node *a = &t->n[n->child];
    if (a->kind != K_SET && a->kind != K_ANY)
      return false; /* a quantified group */
    if (n->min == n->max)
      return true; /* a fixed count: no choice */
    uint8_t f[32] = {0};
    first_of(t, n->child, f);
    return !set_meets(f, follow);
  }
  }
  return false;
}

/* Are the anchors only where both engines read them alike: "^" as the
 * first piece of a pattern without top-level alternation, "$" as its
 * last? */
static bool anchors_placed(const struct tree *t, int root) {
  int allowed_bol = -1, allowed_eol = -1;
  const struct node *r = &t->n[root];
  if (r->next < 0 && t->n[r->child].next < 0) {
    int body = r->child, last = -1;
    for (int c = t->n[body].child; c >= 0; c = t->n[c].next)
      last = c;
    allowed_bol = t->n[body].child;
    allowed_eol = last;
  }
  for (int i = 0; i < t->count; i++) {
    if (t->n[i].kind == K_BOL && i != allowed_bol)
      return false;
    if (t->n[i].kind == K_EOL && i != allowed_eol)
      return false;
  }
  return true;
}

static int to_pcre(const char *ere, char *out, size_t cap, bool analyse) {
  static _Thread_local struct tree t;
  if (cap == 0)
    return -1;
  int root = parse(&t, ere);
  if (root < 0 || (analyse && !anchors_placed(&t, root)))
    return -1;
  for (int i = 0; i < t.count; i++) { /* "[]" would mean something else */
    bool any = false;
    for (unsigned k = 0; k < 32 && t.n[i].kind == K_SET; k++)
      any = any || t.n[i].set[k] != 0;
    if (t.n[i].kind == K_SET && !any)
      return -1;
  }
  const uint8_t end[32] = {0};
  if (analyse && !det(&t, root, end))
    return -1;
  struct out o = {.s = out, .cap = cap, .capture = true};
  out[0] = '\0';
  write_node(&t, root, &o);
  return o.full ? -1 : 0;
}

int pqact_ere_to_pcre(const char *ere, char *out, size_t cap) {
  return to_pcre(ere, out, cap, true);
}

int pqact_ere_to_pcre_unchecked(const char *ere, char *out, size_t cap) {
  return to_pcre(ere, out, cap, false);
}

/* ---- generating ---- */

uint64_t pqact_ere_rand(uint64_t *s) { /* xorshift64 */
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

static bool gen(const struct tree *t, int id, uint64_t *rng, struct out *o) {
  const struct node *n = &t->n[id];
  switch (n->kind) {
  case K_SET:
  case K_ANY: {
    unsigned members[256], count = 0;
    if (n->lit >= 0)
      members[count++] = (unsigned)n->lit;
    else
      for (unsigned c = 1; c < 256; c++)
        if (n->kind == K_ANY ? c >= ' ' && c < 127 : set_has(n->set, c))
          members[count++] = c;
    if (count == 0)
      return false;
    unsigned c = members[pqact_ere_rand(rng) % count];
    if (o->len + 1 >= o->cap)
      return false;
    o->s[o->len++] = (char)c;
    return true;
  }
  case K_BOL:
  case K_EOL:
    return true;
  case K_CAT:
    for (int c = n->child; c >= 0; c = t->n[c].next)
      if (!gen(t, c, rng, o))
        return false;
    return true;
  case K_ALT: {
    unsigned k = 0;
    for (int c = n->child; c >= 0; c = t->n[c].next)
      k++;
    unsigned pick = (unsigned)(pqact_ere_rand(rng) % k);
    int c = n->child;
    while (pick-- > 0)
      c = t->n[c].next;
    return gen(t, c, rng, o);
  }
  case K_REP: {
    int span = n->max == UNBOUNDED ? 3 : n->max - n->min;
    if (span > 3)
      span = 3;
    int count = n->min + (int)(pqact_ere_rand(rng) % (uint64_t)(span + 1));
    for (int i = 0; i < count; i++)
      if (!gen(t, n->child, rng, o))
        return false;
    return true;
  }
  }
  return false;
}

int pqact_ere_sample(const char *ere, uint64_t *rng, char *out, size_t cap) {
  static _Thread_local struct tree t;
  if (cap == 0)
    return -1;
  int root = parse(&t, ere);
  if (root < 0)
    return -1;
  struct out o = {.s = out, .cap = cap};
  if (!gen(&t, root, rng, &o))
    return -1;
  out[o.len] = '\0';
  return (int)o.len;
}
