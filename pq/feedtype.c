/*
 * feedtype.c - LDM's feedtype names: the table, the expression parser of
 * ldmd.conf, pqact.conf and every -f option, and the printer used in every
 * product log line.  The names, aliases, grammar, error numbers and print
 * order are LDM's (docs/protocol.md §13), because configuration files
 * and log scrapers written for LDM depend on them.
 */
#include "pq/product.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct ft_name {
  const char *name;
  uint32_t value;
} ft_name;

/*
 * Printable names, in LDM's table order.  The printer walks this backwards
 * from "any", so a group ("wmo") is tried before its parts ("ids").
 */
static const ft_name print_names[] = {
    {"none", 0x00000000u},      {"pps", 0x00000001u},
    {"dds", 0x00000002u},       {"ddplus", 0x00000003u},
    {"hds", 0x00000004u},       {"ids", 0x00000008u},
    {"spare", 0x00000010u},     {"wmo", 0x0000000fu},
    {"uniwisc", 0x00000020u},   {"unidata", 0x0000002fu},
    {"pcws", 0x00000040u},      {"fsl2", 0x00000080u},
    {"fsl3", 0x00000100u},      {"fsl4", 0x00000200u},
    {"fsl5", 0x00000400u},      {"fsl", 0x000007c0u},
    {"gpssrc", 0x00000800u},    {"conduit", 0x00001000u},
    {"fnexrad", 0x00002000u},   {"nmc", 0x00003800u},
    {"lightning", 0x00004000u}, {"wsi", 0x00008000u},
    {"satellite", 0x00010000u}, {"faa604", 0x00020000u},
    {"gps", 0x00040000u},       {"fnmoc", 0x00080000u},
    {"gem", 0x00100000u},       {"nimage", 0x00200000u},
    {"ntext", 0x00400000u},     {"ngrid", 0x00800000u},
    {"npoint", 0x01000000u},    {"ngraph", 0x02000000u},
    {"nother", 0x04000000u},    {"nport", 0x07c00000u},
    {"nexrad3", 0x08000000u},   {"nexrad2", 0x10000000u},
    {"nxrdsrc", 0x20000000u},   {"exp", 0x40000000u},
    {"any", 0xffffffffu},
};

#define FT(n)                                                                  \
  { "ft" #n, 1u << (n) }

/* Names accepted by the parser but never printed. */
static const ft_name alias_names[] = {
    {"domestic", 0x00000002u},
    {"hrs", 0x00000004u},
    {"intnl", 0x00000008u},
    {"nps", 0x00000010u},
    {"mcidas", 0x00000020u},
    {"acars", 0x00000040u},
    {"profiler", 0x00000080u},
    {"profs", 0x000007c0u},
    {"afos", 0x00000800u},
    {"nmc1", 0x00000800u},
    {"nmc2", 0x00001000u},
    {"nceph", 0x00001000u},
    {"nmc3", 0x00002000u},
    {"nldn", 0x00004000u},
    {"difax", 0x00010000u},
    {"faa", 0x00020000u},
    {"604", 0x00020000u},
    {"nogaps", 0x00080000u},
    {"seismic", 0x00080000u},
    {"cmc", 0x00100000u},
    {"image", 0x00200000u},
    {"text", 0x00400000u},
    {"grid", 0x00800000u},
    {"point", 0x01000000u},
    {"nbufr", 0x01000000u},
    {"bufr", 0x01000000u},
    {"graph", 0x02000000u},
    {"other", 0x04000000u},
    {"nnexrad", 0x08000000u},
    {"nexrad", 0x08000000u},
    {"nexrd2", 0x10000000u},
    {"craft", 0x10000000u},
    /* clang-format off */
    FT(0),  FT(1),  FT(2),  FT(3),  FT(4),  FT(5),  FT(6),  FT(7),
    FT(8),  FT(9),  FT(10), FT(11), FT(12), FT(13), FT(14), FT(15),
    FT(16), FT(17), FT(18), FT(19), FT(20), FT(21), FT(22), FT(23),
    FT(24), FT(25), FT(26), FT(27), FT(28), FT(29), FT(30),
    /* clang-format on */
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Deeper nesting of '(' and '~' than this is refused (PQ_FT_EOTHER). */
#define MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* Parser                                                             */
/* ------------------------------------------------------------------ */

enum tok { T_END, T_NAME, T_OR, T_MINUS, T_NOT, T_LPAREN, T_RPAREN, T_BAD };

typedef struct parser {
  const char *p;    /* next character */
  const char *name; /* last T_NAME */
  size_t namelen;
  int depth;
  int err; /* first error, or PQ_FT_OK */
} parser;

/* Does the table name equal s[0..n), ignoring ASCII case? */
static bool name_eq(const char *name, const char *s, size_t n) {
  size_t i;

  for (i = 0; i < n; i++) {
    if (name[i] == '\0' || name[i] != tolower((unsigned char)s[i]))
      return false;
  }
  return name[n] == '\0';
}

static bool lookup_in(const ft_name *tab, size_t ntab, const char *s, size_t n,
                      uint32_t *out) {
  size_t i;

  for (i = 0; i < ntab; i++) {
    if (name_eq(tab[i].name, s, n)) {
      *out = tab[i].value;
      return true;
    }
  }
  return false;
}

static bool lookup(const char *s, size_t n, uint32_t *out) {
  return lookup_in(print_names, NELEM(print_names), s, n, out) ||
         lookup_in(alias_names, NELEM(alias_names), s, n, out);
}

/* Classify the next token without consuming it. */
static enum tok peek(parser *ps) {
  while (isspace((unsigned char)*ps->p))
    ps->p++;
  switch (*ps->p) {
  case '\0':
    return T_END;
  case '|':
  case '+':
    return T_OR;
  case '-':
    return T_MINUS;
  case '~':
    return T_NOT;
  case '(':
    return T_LPAREN;
  case ')':
    return T_RPAREN;
  default:
    return isalnum((unsigned char)*ps->p) ? T_NAME : T_BAD;
  }
}

static enum tok next(parser *ps) {
  enum tok t = peek(ps);

  if (t == T_NAME) {
    ps->name = ps->p;
    while (isalnum((unsigned char)*ps->p))
      ps->p++;
    ps->namelen = (size_t)(ps->p - ps->name);
  } else if (t != T_END) {
    ps->p++;
  }
  return t;
}

static uint32_t fail(parser *ps, int err) {
  if (ps->err == PQ_FT_OK)
    ps->err = err;
  return 0;
}

static uint32_t parse_exp(parser *ps);

/* feedprimary := NAME | '~' feedprimary | '(' feedexp ')' */
static uint32_t parse_primary(parser *ps) {
  uint32_t v = 0;

  if (ps->depth == MAX_DEPTH)
    return fail(ps, PQ_FT_EOTHER);
  ps->depth++;
  switch (next(ps)) {
  case T_NAME:
    if (!lookup(ps->name, ps->namelen, &v))
      fail(ps, PQ_FT_EUNKNOWN);
    break;
  case T_NOT:
    v = ~parse_primary(ps);
    break;
  case T_LPAREN:
    v = parse_exp(ps);
    if (ps->err == PQ_FT_OK && next(ps) != T_RPAREN)
      fail(ps, PQ_FT_EPAREN);
    break;
  default:
    fail(ps, PQ_FT_ESYNTAX);
    break;
  }
  ps->depth--;
  return v;
}

/* feedterm := feedprimary { '-' feedprimary } */
static uint32_t parse_term(parser *ps) {
  uint32_t v = parse_primary(ps);

  while (ps->err == PQ_FT_OK && peek(ps) == T_MINUS) {
    next(ps);
    v &= ~parse_primary(ps);
  }
  return v;
}

/* feedexp := feedterm { ('|' | '+') feedterm } */
static uint32_t parse_exp(parser *ps) {
  uint32_t v = parse_term(ps);

  while (ps->err == PQ_FT_OK && peek(ps) == T_OR) {
    next(ps);
    v |= parse_term(ps);
  }
  return v;
}

int pq_feedtype_parse(const char *expr, uint32_t *out) {
  parser ps = {expr, NULL, 0, 0, PQ_FT_OK};
  uint32_t v;

  if (expr == NULL || out == NULL)
    return PQ_FT_EOTHER;
  v = parse_exp(&ps);
  if (ps.err == PQ_FT_OK && next(&ps) != T_END)
    ps.err = PQ_FT_EGARBAGE;
  if (ps.err == PQ_FT_OK)
    *out = v;
  return ps.err;
}

const char *pq_feedtype_strerror(int code) {
  switch (code) {
  case PQ_FT_OK:
    return "no error";
  case PQ_FT_EPAREN:
    return "missing right parenthesis";
  case PQ_FT_ESYNTAX:
    return "bad syntax or incomplete expression";
  case PQ_FT_EGARBAGE:
    return "garbage after the expression";
  case PQ_FT_EUNKNOWN:
    return "unknown feedtype name";
  case PQ_FT_EOTHER:
    return "invalid feedtype expression (null or nested too deeply)";
  default:
    return "unknown feedtype parse result";
  }
}

/* ------------------------------------------------------------------ */
/* Printer                                                            */
/* ------------------------------------------------------------------ */

/* An snprintf-like sink: counts everything, stores what fits. */
typedef struct sink {
  char *buf;
  size_t len;
  size_t n;
} sink;

static void put(sink *s, const char *str, bool upper) {
  for (; *str != '\0'; str++, s->n++) {
    if (s->n + 1 < s->len)
      s->buf[s->n] = upper ? (char)toupper((unsigned char)*str) : *str;
  }
}

int pq_feedtype_format(uint32_t feedtype, char *buf, size_t len) {
  sink s = {buf, len, 0};
  uint32_t left = feedtype;

  if (feedtype == PQ_FT_NONE)
    put(&s, "NONE", false);
  /* Back from "any"; entry 0, "none", is never printed. */
  for (size_t i = NELEM(print_names) - 1; i > 0 && left != 0; i--) {
    if ((print_names[i].value & left) == print_names[i].value) {
      if (s.n > 0)
        put(&s, "|", false);
      put(&s, print_names[i].name, true);
      left &= ~print_names[i].value;
    }
  }
  if (left != 0) {
    char hex[16];

    snprintf(hex, sizeof hex, "%s0x%08x", s.n > 0 ? "|" : "", (unsigned)left);
    put(&s, hex, false);
  }
  if (len > 0)
    buf[s.n < len ? s.n : len - 1] = '\0';
  return (int)s.n;
}
