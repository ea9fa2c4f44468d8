/*
 * ere.c - telling a dangerous extended regular expression before compiling
 * it.  glibc's regcomp() grows exponentially on stacked or nested
 * repetitions, so a 20-character pattern from ldmd.conf or from a peer's
 * FEEDME can take gigabytes and seconds; pq_ere_tame() estimates the size of
 * regcomp's tree from the text alone and refuses what would be too big.
 * Every pattern the project compiles from outside goes through it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "pq/product.h"

#define ERE_MAX_COST 30000 /* tree nodes regcomp may build for one ERE */
#define ERE_MAX_NEST 100   /* parentheses */
#define ERE_MAX_STACKED 4  /* repetition operators in a row */
#define ERE_MAX_EMPTY 4    /* empty alternatives ("(|a)", "a||b", "(a|)") */

/*
 * After "{" at c: an interval "m}", "m,}" or "m,n}"?  Then the position
 * after it, and in *grown the size that regcomp's tree of size last
 * becomes: a copy per repetition, and for the n-m optional copies of
 * "{m,n}" epsilon closures that grow with their square (".{1,3000}" takes
 * 70 MB, ".{1,30000}" 7 GB).  Else NULL.
 */
static const char *ere_interval(const char *c, uint64_t last, uint64_t *grown) {
  uint64_t m = 0, n = 0, copies, optional;
  bool comma = false, digits = false;

  for (c++; *c != '}'; c++) {
    if (*c >= '0' && *c <= '9') {
      uint64_t *v = comma ? &n : &m;

      *v = *v > 100000 ? *v : *v * 10 + (uint64_t)(*c - '0');
      digits = true;
    } else if (*c == ',' && !comma) {
      comma = true;
    } else {
      return NULL;
    }
  }
  if (!digits)
    return NULL;
  copies = comma && n == 0 ? m + 1 : (n > m ? n : m);
  optional = comma && n > m ? n - m : 0;
  *grown = last * (copies > 0 ? copies : 1) + optional * optional * last / 300;
  return c + 1;
}

/* After "[" at c: the position after the bracket expression. */
static const char *ere_bracket(const char *c) {
  c++;
  if (*c == '^')
    c++;
  if (*c == ']')
    c++;
  for (; *c != '\0' && *c != ']'; c++)
    if (c[0] == '[' && (c[1] == ':' || c[1] == '.' || c[1] == '=')) {
      const char *end = strchr(c + 2, c[1]);

      while (end != NULL && end[1] != ']')
        end = strchr(end + 1, c[1]);
      if (end == NULL)
        return c + strlen(c);
      c = end + 1;
    }
  return *c == ']' ? c + 1 : c;
}

static uint64_t ere_cost(const uint64_t *cost, size_t depth) {
  uint64_t sum = 0;
  size_t d;

  for (d = 0; d <= depth; d++)
    sum += cost[d];
  return sum;
}

/*
 * glibc's regcomp copies the tree of a repeated expression once per copy
 * ("X+" is X X*, "X{9}" nine X), so stacked or nested repetitions grow
 * exponentially ("a++++++++++++++++++++++++++++++" takes gigabytes).  A
 * file or a peer must not do that to a server: estimate the nodes first.
 * cost[d] is the size of the open group at depth d, last that of the latest
 * atom; all open groups count, since regcomp builds them before it finds a
 * missing ")".  pq_ere_size() is that estimate (UINT64_MAX past the
 * bounds); pq_ere_tame() is whether it is within them.
 */
uint64_t pq_ere_size(const char *ere) {
  uint64_t cost[ERE_MAX_NEST + 1], last = 0;
  const char *c = ere;
  size_t depth = 0;

  unsigned stacked = 0; /* repetition operators in a row */
  /* Empty alternatives: regcomp's epsilon closures over them grow
   * exponentially once their group is repeated (two groups of a dozen,
   * under "+?+", take seconds in a 100-byte pattern); one is all a pattern
   * needs, "(a|)" being "(a)?". */
  unsigned empty = 0;
  bool fresh = true, bar = false; /* at a branch's start; after "|" */

  cost[0] = 0;
  while (*c != '\0') {
    if (*c == '|' || *c == ')') {
      empty += (*c == '|' && fresh) || (*c == ')' && bar);
      if (empty > ERE_MAX_EMPTY)
        return UINT64_MAX;
    }
    bar = *c == '|';
    fresh = *c == '(' || *c == '|';
    uint64_t grown = 0; /* a repetition: what last becomes */
    const char *after;
    bool repeat = *c == '*' || *c == '?' || *c == '+' || *c == '{';

    /* regcomp's closures grow polynomially with stacked repetitions
     * ("a" and 64 "*" take 0.4 s, 100 take seconds): no pattern needs
     * more than a few. */
    stacked = repeat ? stacked + 1 : 0;
    if (stacked > ERE_MAX_STACKED)
      return UINT64_MAX;

    if (*c == '(') {
      if (depth == ERE_MAX_NEST)
        return UINT64_MAX;
      cost[++depth] = 0;
      last = 0;
      c++;
      continue;
    }
    if (*c == '|') {
      last = 0;
      c++;
      continue;
    }
    if (*c == ')' && depth > 0) {
      last = cost[depth--] + 1;
      cost[depth] += last;
      c++;
    } else if (*c == '*' || *c == '?' || *c == '+') {
      grown = *c++ == '+' ? 2 * last : last + 1;
    } else if (*c == '{' && (after = ere_interval(c, last, &grown)) != NULL) {
      c = after;
    } else {
      c = *c == '[' ? ere_bracket(c) : c + (c[0] == '\\' && c[1] != '\0') + 1;
      last = 1;
      cost[depth] += 1;
    }
    if (grown > 0) {
      cost[depth] += grown - last;
      last = grown;
    }
    if (ere_cost(cost, depth) > ERE_MAX_COST)
      return UINT64_MAX;
  }
  if (bar && ++empty > ERE_MAX_EMPTY)
    return UINT64_MAX;
  return ere_cost(cost, depth);
}

bool pq_ere_tame(const char *ere) {
  return pq_ere_size(ere) <= ERE_MAX_COST;
}

/*
 * A back-reference is "\" and a digit 1-9 outside a bracket expression:
 * inside one a backslash is an ordinary character ("[\1]" is a backslash
 * or a 1), "\\1" is an escaped backslash then a 1, and "\0" is the
 * character 0 to glibc.  Any other escape ("\w", "\.") is a pair to step
 * over.  With no back-reference glibc's matcher keeps sets of states (it
 * never backtracks): its cost grows with the identifier's length (at most
 * PQ_IDENT_MAX) times the states' sizes, which pq_ere_tame() bounds
 * through regcomp's tree; docs/security.md gives the figures.
 */
const char *pq_ere_backref(const char *ere) {
  const char *c = ere;

  while (*c != '\0') {
    if (*c == '[') {
      c = ere_bracket(c);
      continue;
    }
    if (c[0] == '\\' && c[1] >= '1' && c[1] <= '9')
      return c;
    c += (c[0] == '\\' && c[1] != '\0') + 1;
  }
  return NULL;
}
