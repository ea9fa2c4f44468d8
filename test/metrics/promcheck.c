/*
 * promcheck.c - the strict Prometheus text checker of promcheck.h: a line
 * parser, the families seen (name, type, whether their samples have
 * started and ended), every series seen (sorted at the end to find
 * duplicates) and the state of each histogram series.
 */
#include "test/metrics/promcheck.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS 32
#define NAME_MAX_LEN 256
#define VALUE_MAX_LEN 1024

enum ftype { T_UNTYPED, T_COUNTER, T_GAUGE, T_HISTOGRAM, T_SUMMARY };

typedef struct family {
  char name[NAME_MAX_LEN];
  enum ftype type;
  bool help, typed, started, ended;
} family;

typedef struct hseries {
  size_t fam;
  char key[4096]; /* labels without le, sorted */
  double last_le;
  double last_count;
  bool any, inf, sum, count;
  double inf_count, count_value;
  unsigned line;
} hseries;

typedef struct label {
  char name[NAME_MAX_LEN];
  char value[VALUE_MAX_LEN];
} label;

typedef struct checker {
  family *fam;
  size_t nfam, capfam;
  char **series;
  size_t nseries, capseries;
  hseries *hs;
  size_t nhs, caphs;
  size_t cur; /* the family of the last sample, or SIZE_MAX */
  unsigned line;
  char *err;
  size_t errlen;
} checker;

static int bad(checker *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad(checker *c, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(c->err, c->errlen, "line %u: ", c->line);

  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < c->errlen)
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size) {
  if (n < *cap)
    return p;
  *cap = *cap == 0 ? 64 : *cap * 2;
  p = realloc(p, *cap * size);
  if (p == NULL)
    abort();
  return p;
}

static bool metric_start(int ch) {
  return isalpha(ch) || ch == '_' || ch == ':';
}

static bool metric_char(int ch) {
  return isalnum(ch) || ch == '_' || ch == ':';
}

/* A metric name at *p into out.  @return 0 or -1 */
static int metric_name(const char **p, char *out) {
  size_t n = 0;

  if (!metric_start((unsigned char)**p))
    return -1;
  while (metric_char((unsigned char)**p) && n < NAME_MAX_LEN - 1)
    out[n++] = *(*p)++;
  out[n] = '\0';
  return metric_char((unsigned char)**p) ? -1 : 0;
}

static int label_name(const char **p, char *out) {
  size_t n = 0;

  if (!isalpha((unsigned char)**p) && **p != '_')
    return -1;
  while ((isalnum((unsigned char)**p) || **p == '_') && n < NAME_MAX_LEN - 1)
    out[n++] = *(*p)++;
  out[n] = '\0';
  return isalnum((unsigned char)**p) || **p == '_' ? -1 : 0;
}

/* A float as the format has them.  @return 0 or -1 */
static int parse_value(const char *s, double *v) {
  char *end;
  const char *q;

  if (strcmp(s, "+Inf") == 0 || strcmp(s, "Inf") == 0) {
    *v = INFINITY;
    return 0;
  }
  if (strcmp(s, "-Inf") == 0) {
    *v = -INFINITY;
    return 0;
  }
  if (strcmp(s, "NaN") == 0) {
    *v = NAN;
    return 0;
  }
  if (*s == '\0')
    return -1;
  for (q = s; *q != '\0'; q++)
    if (!isdigit((unsigned char)*q) && strchr(".eE+-", *q) == NULL)
      return -1;
  *v = strtod(s, &end);
  return *end == '\0' ? 0 : -1;
}

static size_t find_family(const checker *c, const char *name) {
  size_t i;

  for (i = 0; i < c->nfam; i++)
    if (strcmp(c->fam[i].name, name) == 0)
      return i;
  return SIZE_MAX;
}

static size_t add_family(checker *c, const char *name) {
  c->fam = grow(c->fam, &c->capfam, c->nfam, sizeof *c->fam);
  memset(&c->fam[c->nfam], 0, sizeof c->fam[c->nfam]);
  snprintf(c->fam[c->nfam].name, sizeof c->fam[c->nfam].name, "%s", name);
  return c->nfam++;
}

/* "# HELP name text" or "# TYPE name type" (p after "# HELP "). */
static int meta(checker *c, const char *p, bool help) {
  static const char *const types[] = {"untyped", "counter", "gauge",
                                      "histogram", "summary"};
  char name[NAME_MAX_LEN];
  size_t f;
  unsigned t;

  if (metric_name(&p, name) != 0)
    return bad(c, "bad metric name in %s", help ? "HELP" : "TYPE");
  if (*p != ' ' && !(help && *p == '\0'))
    return bad(c, "no space after the name of %s %s", help ? "HELP" : "TYPE",
               name);
  if (*p == ' ')
    p++;
  f = find_family(c, name);
  if (f == SIZE_MAX)
    f = add_family(c, name);
  if (c->fam[f].started)
    return bad(c, "%s of %s after its samples", help ? "HELP" : "TYPE", name);
  if (help) {
    if (c->fam[f].help)
      return bad(c, "second HELP of %s", name);
    c->fam[f].help = true;
    for (; *p != '\0'; p++)
      if (*p == '\\' && p[1] != '\\' && p[1] != 'n')
        return bad(c, "bad escape \\%c in the HELP of %s", p[1], name);
      else if (*p == '\\')
        p++;
    return 0;
  }
  if (c->fam[f].typed)
    return bad(c, "second TYPE of %s", name);
  for (t = 0; t < sizeof types / sizeof types[0]; t++)
    if (strcmp(p, types[t]) == 0) {
      c->fam[f].typed = true;
      c->fam[f].type = (enum ftype)t;
      return 0;
    }
  return bad(c, "bad TYPE \"%s\" of %s", p, name);
}

/* Labels at *p (after '{'), up to and past '}'.  @return the count or -1 */
static int parse_labels(checker *c, const char **p, label *l) {
  int n = 0, i;

  while (**p != '}') {
    size_t k = 0;

    if (n == MAX_LABELS)
      return bad(c, "more than %d labels", MAX_LABELS);
    if (label_name(p, l[n].name) != 0)
      return bad(c, "bad label name");
    if (*(*p)++ != '=' || *(*p)++ != '"')
      return bad(c, "label %s: no =\"", l[n].name);
    for (; **p != '"'; (*p)++) {
      char ch = **p;

      if (ch == '\0')
        return bad(c, "label %s: value not closed", l[n].name);
      if (ch == '\\') {
        (*p)++;
        if (**p == 'n')
          ch = '\n';
        else if (**p == '\\' || **p == '"')
          ch = **p;
        else
          return bad(c, "label %s: bad escape \\%c", l[n].name, **p);
      }
      if (k == VALUE_MAX_LEN - 1)
        return bad(c, "label %s: value too long", l[n].name);
      l[n].value[k++] = ch;
    }
    l[n].value[k] = '\0';
    (*p)++;
    for (i = 0; i < n; i++)
      if (strcmp(l[i].name, l[n].name) == 0)
        return bad(c, "label %s twice", l[n].name);
    n++;
    if (**p == ',')
      (*p)++;
    else if (**p != '}')
      return bad(c, "no , or } after label %s", l[n - 1].name);
  }
  (*p)++;
  return n;
}

static int label_cmp(const void *a, const void *b) {
  return strcmp(((const label *)a)->name, ((const label *)b)->name);
}

/* name{sorted labels but skip} into key. */
static void series_key(char *key, size_t len, const char *name, label *l, int n,
                       const char *skip) {
  size_t used;
  int i;

  qsort(l, (size_t)n, sizeof *l, label_cmp);
  used = (size_t)snprintf(key, len, "%s{", name);
  for (i = 0; i < n && used < len; i++)
    if (skip == NULL || strcmp(l[i].name, skip) != 0)
      used += (size_t)snprintf(key + used, len - used, "%s=\"%s\",", l[i].name,
                               l[i].value);
  if (used < len)
    snprintf(key + used, len - used, "}");
}

/* Which family a sample of name belongs to; suffix set to "_bucket",
 * "_sum", "_count" or "". */
static size_t family_of(checker *c, const char *name, const char **suffix) {
  static const char *const sfx[] = {"_bucket", "_sum", "_count"};
  size_t f = find_family(c, name), i;

  *suffix = "";
  for (i = 0; i < 3; i++) {
    size_t n = strlen(name), k = strlen(sfx[i]);
    char base[NAME_MAX_LEN];
    size_t g;

    if (n <= k || strcmp(name + n - k, sfx[i]) != 0)
      continue;
    snprintf(base, sizeof base, "%.*s", (int)(n - k), name);
    g = find_family(c, base);
    if (g != SIZE_MAX && (c->fam[g].type == T_HISTOGRAM ||
                          (c->fam[g].type == T_SUMMARY && i > 0))) {
      *suffix = sfx[i];
      return g;
    }
  }
  if (f == SIZE_MAX)
    f = add_family(c, name);
  return f;
}

static hseries *hist_series(checker *c, size_t fam, const char *key) {
  size_t i;

  for (i = 0; i < c->nhs; i++)
    if (c->hs[i].fam == fam && strcmp(c->hs[i].key, key) == 0)
      return &c->hs[i];
  c->hs = grow(c->hs, &c->caphs, c->nhs, sizeof *c->hs);
  memset(&c->hs[c->nhs], 0, sizeof c->hs[c->nhs]);
  c->hs[c->nhs].fam = fam;
  c->hs[c->nhs].line = c->line;
  c->hs[c->nhs].last_le = -INFINITY;
  snprintf(c->hs[c->nhs].key, sizeof c->hs[c->nhs].key, "%s", key);
  return &c->hs[c->nhs++];
}

static int histogram_sample(checker *c, size_t f, const char *suffix, label *l,
                            int n, double v) {
  char key[4096], lebuf[VALUE_MAX_LEN];
  const char *le = NULL;
  hseries *h;
  double bound;
  int i;

  for (i = 0; i < n; i++)
    if (strcmp(l[i].name, "le") == 0) {
      snprintf(lebuf, sizeof lebuf, "%s", l[i].value); /* l is sorted next */
      le = lebuf;
    }
  if ((le != NULL) != (strcmp(suffix, "_bucket") == 0))
    return bad(c, "%s%s: le %s", c->fam[f].name, suffix,
               le != NULL ? "on a sample that is not a bucket"
                          : "missing on a bucket");
  series_key(key, sizeof key, c->fam[f].name, l, n, "le");
  h = hist_series(c, f, key);
  if (isnan(v) || v < 0)
    return bad(c, "%s%s: negative or NaN value", c->fam[f].name, suffix);
  if (strcmp(suffix, "_sum") == 0) {
    h->sum = true;
    return 0;
  }
  if (strcmp(suffix, "_count") == 0) {
    h->count = true;
    h->count_value = v;
    return 0;
  }
  if (h->inf || h->sum || h->count)
    return bad(c, "%s: a bucket after +Inf, _sum or _count", key);
  if (parse_value(le, &bound) != 0 || isnan(bound))
    return bad(c, "%s: bad le \"%s\"", key, le);
  if (h->any && bound <= h->last_le)
    return bad(c, "%s: le %s not above the bucket before", key, le);
  if (h->any && v < h->last_count)
    return bad(c, "%s: bucket le=%s counts %g, less than the one before", key,
               le, v);
  if (v != floor(v))
    return bad(c, "%s: bucket count %g not an integer", key, v);
  h->any = true;
  h->last_le = bound;
  h->last_count = v;
  if (isinf(bound)) {
    h->inf = true;
    h->inf_count = v;
  }
  return 0;
}

static int sample(checker *c, const char *p) {
  char name[NAME_MAX_LEN], key[4096], value[128];
  label l[MAX_LABELS];
  const char *suffix;
  size_t f, k = 0;
  int n = 0;
  double v;

  if (metric_name(&p, name) != 0)
    return bad(c, "bad metric name");
  if (*p == '{') {
    p++;
    n = parse_labels(c, &p, l);
    if (n < 0)
      return -1;
  }
  if (*p != ' ' && *p != '\t')
    return bad(c, "%s: no blank before the value", name);
  while (*p == ' ' || *p == '\t')
    p++;
  while (*p != '\0' && *p != ' ' && *p != '\t' && k < sizeof value - 1)
    value[k++] = *p++;
  value[k] = '\0';
  if (parse_value(value, &v) != 0)
    return bad(c, "%s: bad value \"%s\"", name, value);
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p != '\0') { /* a timestamp: an integer */
    const char *q = *p == '-' ? p + 1 : p;

    if (*q == '\0')
      return bad(c, "%s: bad timestamp", name);
    for (; *q != '\0'; q++)
      if (!isdigit((unsigned char)*q))
        return bad(c, "%s: bad timestamp \"%s\"", name, p);
  }
  f = family_of(c, name, &suffix);
  if (f != c->cur) {
    if (c->fam[f].started)
      return bad(c, "samples of %s not together", c->fam[f].name);
    if (c->cur != SIZE_MAX)
      c->fam[c->cur].ended = true;
    c->cur = f;
    c->fam[f].started = true;
  }
  if ((c->fam[f].type == T_HISTOGRAM || c->fam[f].type == T_SUMMARY) &&
      *suffix == '\0' && c->fam[f].type == T_HISTOGRAM)
    return bad(c, "histogram %s: sample without _bucket, _sum or _count", name);
  if (c->fam[f].type == T_COUNTER && (isnan(v) || v < 0))
    return bad(c, "counter %s: negative or NaN value", name);
  if (c->fam[f].type == T_HISTOGRAM &&
      histogram_sample(c, f, suffix, l, n, v) != 0)
    return -1;
  series_key(key, sizeof key, name, l, n, NULL);
  c->series = grow(c->series, &c->capseries, c->nseries, sizeof *c->series);
  c->series[c->nseries] = strdup(key);
  if (c->series[c->nseries] == NULL)
    abort();
  c->nseries++;
  return 0;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* After the last line: duplicates, and each histogram complete. */
static int finish(checker *c) {
  size_t i;

  qsort(c->series, c->nseries, sizeof *c->series, str_cmp);
  for (i = 1; i < c->nseries; i++)
    if (strcmp(c->series[i - 1], c->series[i]) == 0) {
      c->line = 0;
      return bad(c, "series %s twice", c->series[i]);
    }
  for (i = 0; i < c->nhs; i++) {
    const hseries *h = &c->hs[i];

    c->line = h->line;
    if (!h->inf)
      return bad(c, "%s: no le=\"+Inf\" bucket", h->key);
    if (!h->sum || !h->count)
      return bad(c, "%s: no _sum or no _count", h->key);
    if (h->count_value != h->inf_count)
      return bad(c, "%s: _count %g is not the +Inf bucket's %g", h->key,
                 h->count_value, h->inf_count);
  }
  return 0;
}

static void release(checker *c) {
  size_t i;

  for (i = 0; i < c->nseries; i++)
    free(c->series[i]);
  free(c->series);
  free(c->fam);
  free(c->hs);
}

int promcheck(const char *text, size_t *nsamples, char *err, size_t errlen) {
  checker c;
  const char *p = text;
  char *line = NULL;
  size_t cap = 0;
  int rc = 0;

  memset(&c, 0, sizeof c);
  c.cur = SIZE_MAX;
  c.err = err;
  c.errlen = errlen;
  if (*text != '\0' && text[strlen(text) - 1] != '\n') {
    snprintf(err, errlen, "the text does not end with a newline");
    return -1;
  }
  while (rc == 0 && *p != '\0') {
    const char *nl = strchr(p, '\n');
    size_t n = (size_t)(nl - p);

    if (n + 1 > cap) {
      cap = n + 1;
      line = realloc(line, cap);
      if (line == NULL)
        abort();
    }
    memcpy(line, p, n);
    line[n] = '\0';
    p = nl + 1;
    c.line++;
    if (strchr(line, '\r') != NULL)
      rc = bad(&c, "carriage return");
    else if (strncmp(line, "# HELP ", 7) == 0)
      rc = meta(&c, line + 7, true);
    else if (strncmp(line, "# TYPE ", 7) == 0)
      rc = meta(&c, line + 7, false);
    else if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
      continue; /* a comment, or a blank line */
    else
      rc = sample(&c, line);
  }
  free(line);
  if (rc == 0)
    rc = finish(&c);
  if (nsamples != NULL)
    *nsamples = c.nseries;
  release(&c);
  return rc;
}
