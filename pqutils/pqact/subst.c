/*
 * subst.c - the substitutions of an action's arguments for one product, in
 * LDM's order, and the split into words (subst.h says what each step does).
 * Each step is a function of its own so that the unit tests can drive it
 * alone; pqact_substitute() chains them.
 *
 * Each step can also say which bytes of its output came from the product
 * (a "taint" byte per output byte, 1 for the product's): the sub-matches
 * are the product's, the rule's text is not, and what a conversion of
 * steps 2 to 4 gives is the product's if any byte of the conversion was.
 * pqact_product_dotdot() reads it, so that a ".." the product put in a
 * path is refused while the operator's own is kept.
 */
#include "pqutils/pqact/subst.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The window of (DD:code): a candidate before the creation time plus 1.5
 * days, which with the time of day kept means up to the next day. */
#define DATE_AHEAD_S (36 * 3600)

/* Creation times gmtime_r() surely takes (a year that fits an int: about
 * 2^56 s either way), for which step 2 fails on nothing. */
#define TIME_SAFE_S ((int64_t)1 << 55)

static void say_msg(pqact_subst_say_fn *say, void *arg, const char *msg) {
  if (say != NULL)
    say(arg, msg);
}

/* An output buffer that remembers whether anything did not fit, and,
 * if t is not NULL, which of its bytes came from the product. */
struct out {
  char *p;
  char *t; /* NULL, or cap bytes: 1 where the byte is the product's */
  size_t len, cap;
  bool full;
};

/* n bytes of s, whose taint is ts's (NULL: tv for all of them). */
static void put_t(struct out *o, const char *s, size_t n, const char *ts,
                  char tv) {
  if (o->full || o->len + n >= o->cap) {
    o->full = true;
    return;
  }
  memcpy(o->p + o->len, s, n);
  if (o->t != NULL) {
    if (ts != NULL)
      memcpy(o->t + o->len, ts, n);
    else
      memset(o->t + o->len, tv, n);
    o->t[o->len + n] = 0;
  }
  o->len += n;
  o->p[o->len] = '\0';
}

static void put(struct out *o, const char *s, size_t n) {
  put_t(o, s, n, NULL, 0);
}

/* Does any of the n bytes whose taint starts at ts come from the product? */
static char any_taint(const char *ts, size_t n) {
  return ts != NULL && memchr(ts, 1, n) != NULL;
}

static void put_match(struct out *o, const char *ident, const regmatch_t *m) {
  if (m->rm_so < 0 || m->rm_eo < m->rm_so)
    return; /* the group did not take part: "" */
  put_t(o, ident + m->rm_so, (size_t)(m->rm_eo - m->rm_so), NULL, 1);
}

/* What step 1 sees at s: a sub-match named (\N, \(N), & for \0), an
 * escaped character (\\ or \&), a "\(" and digits without their ')', or
 * a character as it is. */
enum token { TOK_CHAR, TOK_ESCAPED, TOK_REF, TOK_BAD_PAREN };

/* The token at s (not at its end): its kind, its length in *len, and for
 * TOK_REF the sub-match in *n (PQACT_NMATCH or more: past the last). */
static enum token next_token(const char *s, long *n, size_t *len) {
  *len = 1;
  if (s[0] == '&') {
    *n = 0;
    return TOK_REF;
  }
  if (s[0] != '\\')
    return TOK_CHAR;
  if (isdigit((unsigned char)s[1])) {
    *n = s[1] - '0';
    *len = 2;
    return TOK_REF;
  }
  if (s[1] == '\\' || s[1] == '&') {
    *len = 2;
    return TOK_ESCAPED;
  }
  if (s[1] != '(' || !isdigit((unsigned char)s[2]))
    return TOK_CHAR; /* any other backslash is kept */
  const char *d = s + 2;
  *n = 0;
  while (isdigit((unsigned char)*d) && *n < PQACT_NMATCH)
    *n = *n * 10 + (*d++ - '0');
  while (isdigit((unsigned char)*d))
    d++; /* a group past the last */
  if (*d != ')')
    return TOK_BAD_PAREN;
  *len = (size_t)(d + 1 - s);
  return TOK_REF;
}

/* An empty output, its taint too. */
static void out_init(struct out *o, char *p, char *t, size_t cap) {
  *o = (struct out){.p = p, .t = t, .cap = cap};
  if (cap > 0) {
    p[0] = '\0';
    if (t != NULL)
      t[0] = 0;
  }
}

static int regsub_t(const char *tmpl, const char *ident, const regmatch_t *m,
                    char *out, char *tout, size_t outlen,
                    pqact_subst_say_fn *say, void *arg) {
  struct out o;
  out_init(&o, out, tout, outlen);
  if (outlen == 0)
    return -1;
  size_t len;
  for (const char *s = tmpl; *s != '\0'; s += len) {
    long n;
    switch (next_token(s, &n, &len)) {
    case TOK_REF:
      if (n < PQACT_NMATCH) /* past the last: "" */
        put_match(&o, ident, &m[n]);
      break;
    case TOK_ESCAPED:
      put(&o, s + 1, 1);
      break;
    case TOK_BAD_PAREN:
      /* as LDM's: said, and the substitution stops here */
      say_msg(say, arg, "invalid parenthetical backreference");
      return o.full ? -1 : -2;
    case TOK_CHAR: /* with the plain characters after it, at once */
      len += strcspn(s + 1, "&\\");
      put(&o, s, len);
      break;
    }
  }
  return o.full ? -1 : 0;
}

int pqact_regsub(const char *tmpl, const char *ident, const regmatch_t *m,
                 char *out, size_t outlen, pqact_subst_say_fn *say, void *arg) {
  return regsub_t(tmpl, ident, m, out, NULL, outlen, say, arg);
}

int pqact_regsub_highest(const char *tmpl, struct pqact_ref *ref) {
  int found = 0;
  size_t len;
  for (const char *s = tmpl; *s != '\0'; s += len) {
    long n;
    enum token t = next_token(s, &n, &len);
    if (t == TOK_BAD_PAREN) {
      ref->n = -1;
      ref->at = s;
      ref->len = 2 + strspn(s + 2, "0123456789");
      return -1;
    }
    if (t == TOK_REF && (!found || n > ref->n)) {
      found = 1;
      ref->n = n;
      ref->at = s;
      ref->len = len;
    }
  }
  return found;
}

int pqact_strftime(const char *in, int64_t t, char *out, size_t outlen) {
  struct tm tm;
  time_t tt = (time_t)t;
  if (outlen == 0 || gmtime_r(&tt, &tm) == NULL)
    return -1;
  if (in[0] == '\0') {
    out[0] = '\0';
    return 0;
  }
  /* The format is the operator's, as in LDM: that is the point. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  size_t n = strftime(out, outlen, in, &tm);
#pragma GCC diagnostic pop
  return n == 0 ? -1 : 0;
}

/* The length of the conversion at in ('%'): flags, width, E or O, and
 * the conversion character, as strftime(3) reads them. */
static size_t conversion_len(const char *in) {
  size_t j = 1;
  while (in[j] != '\0' && strchr("_-0^#", in[j]) != NULL)
    j++;
  while (isdigit((unsigned char)in[j]))
    j++;
  if (in[j] == 'E' || in[j] == 'O')
    j++;
  return in[j] != '\0' ? j + 1 : j;
}

/* Step 2's taint: strftime() one conversion at a time, each one's output
 * the product's if any byte of it was.  When the pieces do not add up to
 * what the whole gave (out), all of it is the product's if any of in was:
 * never less than the truth. */
static void strftime_taint(const char *in, const char *tin, const struct tm *tm,
                           const char *out, char *tout) {
  char whole[PQACT_ARG_MAX], piece[PQACT_ARG_MAX], spec[64];
  struct out o;
  out_init(&o, whole, tout, sizeof whole);
  for (size_t i = 0; in[i] != '\0';) {
    size_t n = in[i] == '%' ? conversion_len(in + i) : 1;
    if (in[i] != '%' || n >= sizeof spec) {
      put_t(&o, in + i, 1, tin + i, 0);
      i++;
      continue;
    }
    memcpy(spec, in + i, n);
    spec[n] = '\0';
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    size_t got = strftime(piece, sizeof piece, spec, tm); /* 0: "" too */
#pragma GCC diagnostic pop
    put_t(&o, piece, got, NULL, any_taint(tin + i, n));
    i += n;
  }
  if (o.full || strcmp(whole, out) != 0)
    memset(tout, any_taint(tin, strlen(in)), strlen(out) + 1);
  tout[strlen(out)] = 0;
}

/* The date (DD:...) refers to (subst.h): each candidate is the creation
 * time moved to day DD of a month, its time of day kept, normalised as
 * timegm() does (February 30 is March 1 or 2). */
static void resolve_day(int64_t t, int day, struct tm *res) {
  time_t tt = (time_t)t;
  struct tm now;
  gmtime_r(&tt, &now);
  if (day == 0) {
    *res = now;
    return;
  }
  time_t cand[3]; /* next month, this month, the month before */
  for (int k = 0; k < 3; k++) {
    struct tm c = now;
    c.tm_mday = day;
    c.tm_mon += 1 - k;
    c.tm_isdst = 0;
    cand[k] = timegm(&c);
  }
  time_t pick = (int64_t)cand[0] < t + DATE_AHEAD_S   ? cand[0]
                : (int64_t)cand[1] < t + DATE_AHEAD_S ? cand[1]
                                                      : cand[2];
  gmtime_r(&pick, res);
}

static const char *const month_abbr[] = {"jan", "feb", "mar", "apr",
                                         "may", "jun", "jul", "aug",
                                         "sep", "oct", "nov", "dec"};

/* One (DD:code) into o.  A day above 31 is said and gives the code (in
 * lowercase); an unknown code is said and gives nothing. */
static void put_date(struct out *o, int day, const char *code, size_t len,
                     int64_t t, const char *in, char tv,
                     pqact_subst_say_fn *say, void *arg) {
  char c[16], v[16], msg[PQACT_ARG_MAX + 64];
  size_t n = len < sizeof c ? len : sizeof c - 1;
  for (size_t i = 0; i < n; i++)
    c[i] = (char)tolower((unsigned char)code[i]);
  c[n] = '\0';
  if (day > 31) {
    snprintf(msg, sizeof msg, "bad day of month in ident: %s", in);
    say_msg(say, arg, msg);
    put_t(o, c, strlen(c), NULL, tv);
    return;
  }
  struct tm tm;
  resolve_day(t, day, &tm);
  if (strcasecmp(c, "yyyy") == 0)
    snprintf(v, sizeof v, "%04d", tm.tm_year + 1900);
  else if (strcasecmp(c, "yy") == 0)
    snprintf(v, sizeof v, "%02d", (tm.tm_year + 1900) % 100);
  else if (strcasecmp(c, "mm") == 0)
    snprintf(v, sizeof v, "%02d", tm.tm_mon + 1);
  else if (strcasecmp(c, "mmm") == 0)
    snprintf(v, sizeof v, "%s", month_abbr[tm.tm_mon]);
  else if (strcasecmp(c, "dd") == 0)
    snprintf(v, sizeof v, "%02d", tm.tm_mday);
  else if (strcasecmp(c, "ddd") == 0)
    snprintf(v, sizeof v, "%03d", tm.tm_yday + 1);
  else if (strcasecmp(c, "hh") == 0)
    snprintf(v, sizeof v, "%02d", tm.tm_hour);
  else {
    snprintf(msg, sizeof msg, "unknown date indicator: %s", c);
    say_msg(say, arg, msg);
    return;
  }
  put_t(o, v, strlen(v), NULL, tv);
}

/* Step 3, with the taint of in (tin) and of out (tout), or both NULL. */
static int datesub_t(const char *in, const char *tin, int64_t t, char *out,
                     char *tout, size_t outlen, pqact_subst_say_fn *say,
                     void *arg) {
  struct out o;
  out_init(&o, out, tout, outlen);
  if (outlen == 0)
    return -1;
  for (const char *s = in; *s != '\0'; s++) {
    const char *close;
    size_t i = (size_t)(s - in);
    if (s[0] == '(' && isdigit((unsigned char)s[1]) &&
        isdigit((unsigned char)s[2]) && s[3] == ':' &&
        (close = strchr(s + 4, ')')) != NULL) {
      char tv = tin != NULL && any_taint(tin + i, (size_t)(close - s) + 1);
      put_date(&o, (s[1] - '0') * 10 + (s[2] - '0'), s + 4,
               (size_t)(close - (s + 4)), t, in, tv, say, arg);
      s = close;
    } else {
      put_t(&o, s, 1, tin != NULL ? tin + i : NULL, 0);
    }
  }
  return o.full ? -1 : 0;
}

int pqact_datesub(const char *in, int64_t t, char *out, size_t outlen,
                  pqact_subst_say_fn *say, void *arg) {
  return datesub_t(in, NULL, t, out, NULL, outlen, say, arg);
}

/* Step 4, with the taint of in (tin) and of out (tout), or both NULL. */
static int seqsub_t(const char *in, const char *tin, uint32_t seqno, char *out,
                    char *tout, size_t outlen) {
  struct out o;
  char num[16];
  int nlen = snprintf(num, sizeof num, "%u", (unsigned)seqno);
  out_init(&o, out, tout, outlen);
  if (outlen == 0)
    return -1;
  for (const char *s = in; *s != '\0'; s++) {
    size_t i = (size_t)(s - in);
    if (strncmp(s, "(seq)", 5) == 0) {
      put_t(&o, num, (size_t)nlen, NULL, tin != NULL && any_taint(tin + i, 5));
      s += 4;
    } else {
      put_t(&o, s, 1, tin != NULL ? tin + i : NULL, 0);
    }
  }
  return o.full ? -1 : 0;
}

int pqact_seqsub(const char *in, uint32_t seqno, char *out, size_t outlen) {
  return seqsub_t(in, NULL, seqno, out, NULL, outlen);
}

int pqact_split(char *line, char **argv) {
  int argc = 0;
  bool quoted = false;
  char *r = line;
  while (*r != '\0') {
    /* a separator: '"' always (it opens or closes a quote), a blank
     * outside quotes */
    if (*r == '"' || (!quoted && (*r == ' ' || *r == '\t'))) {
      if (*r == '"')
        quoted = !quoted;
      *r++ = '\0';
      continue;
    }
    if (argc == PQACT_MAX_ARGS)
      return -1;
    argv[argc++] = r; /* a word: up to the next separator */
    while (*r != '\0' && *r != '"' && (quoted || (*r != ' ' && *r != '\t')))
      r++;
  }
  return argc;
}

/* Step 2 with its taint (subst.c's opening): tin and tout, or both NULL. */
static int strftime_t(const char *in, const char *tin, int64_t t, char *out,
                      char *tout, size_t outlen) {
  if (pqact_strftime(in, t, out, outlen) != 0)
    return -1;
  if (tout != NULL) {
    struct tm tm;
    time_t tt = (time_t)t;
    gmtime_r(&tt, &tm);
    strftime_taint(in, tin, &tm, out, tout);
  }
  return 0;
}

int pqact_substitute_taint(const char *tmpl, const pq_prod_info *info,
                           const regmatch_t *m, char *buf, char *taint,
                           char **argv, pqact_subst_say_fn *say, void *arg) {
  char a[PQACT_ARG_MAX], b[PQACT_ARG_MAX];
  char ta[PQACT_ARG_MAX], tb[PQACT_ARG_MAX];
  char *pa = taint != NULL ? ta : NULL, *pb = taint != NULL ? tb : NULL;
  int64_t t = info->arrival.sec;
  int rc = regsub_t(tmpl, info->ident, m, a, pa, sizeof a, say, arg);
  if (rc != -1 && t >= -TIME_SAFE_S && t <= TIME_SAFE_S &&
      strpbrk(a, "%(") == NULL) {
    /* Steps 2 to 4 give back a text without '%' (strftime()'s
     * conversions) or '(' ((DD:code), (seq)) as it is, taint too (for a
     * time gmtime_r() takes): most paths, each product, skip them. */
    size_t n = strlen(a) + 1;
    memcpy(buf, a, n);
    if (taint != NULL)
      memcpy(taint, pa, n); /* pa is ta, filled by step 1 */
  } else if (rc == -1 || strftime_t(a, pa, t, b, pb, sizeof b) != 0 ||
             datesub_t(b, pb, t, a, pa, sizeof a, say, arg) != 0 ||
             seqsub_t(a, pa, info->seqno, buf, taint, PQACT_ARG_MAX) != 0) {
    say_msg(say, arg, "arguments too long after substitution");
    return -1;
  }
  int argc = pqact_split(buf, argv);
  if (argc < 0)
    say_msg(say, arg, "too many arguments");
  return argc;
}

int pqact_substitute(const char *tmpl, const pq_prod_info *info,
                     const regmatch_t *m, char *buf, char **argv,
                     pqact_subst_say_fn *say, void *arg) {
  return pqact_substitute_taint(tmpl, info, m, buf, NULL, argv, say, arg);
}

/* Is the byte at i of buf the product's?  Outside buf: no. */
static bool tainted(const char *buf, const char *taint, const char *at) {
  return at >= buf && at < buf + PQACT_ARG_MAX && taint[at - buf] != 0;
}

bool pqact_product_dotdot(const char *buf, const char *taint,
                          const char *word) {
  for (const char *c = word; *c != '\0';) {
    const char *end = strchr(c, '/');
    if (end == NULL)
      end = c + strlen(c);
    /* the component and what bounds it: the '/' or the separator */
    if (end - c == 2 && c[0] == '.' && c[1] == '.' &&
        ((c > buf && tainted(buf, taint, c - 1)) || tainted(buf, taint, c) ||
         tainted(buf, taint, c + 1) || tainted(buf, taint, end)))
      return true;
    c = *end == '/' ? end + 1 : end;
  }
  return false;
}
